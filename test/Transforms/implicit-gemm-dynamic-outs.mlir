// A memref conv with static input and filter but a dynamic destination is
// reported as needing static shapes.
//
// RUN: conv3d-opt %s -conv3d-implicit-gemm -verify-diagnostics

func.func @dynamic_outs_only(%x: memref<1x4x4x4x16xf32>, %w: memref<1x1x1x16x8xf32>, %o: memref<?x4x4x4x8xf32>) {
  // expected-error @below {{conv3d-implicit-gemm needs static shapes}}
  conv3d.conv ins(%x, %w : memref<1x4x4x4x16xf32>, memref<1x1x1x16x8xf32>) outs(%o : memref<?x4x4x4x8xf32>)
  return
}
