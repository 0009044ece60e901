// Errors of conv3d-implicit-gemm.
//
// RUN: split-file %s %t
// RUN: not conv3d-opt %t/bad-target.mlir -conv3d-implicit-gemm=target=sm70 2>&1 | FileCheck %s --check-prefix=BAD-TARGET
// An unknown target is a command-line error that names the value:
// BAD-TARGET: for the --target option: Cannot find option named 'sm70'
// RUN: conv3d-opt %t/convs.mlir -split-input-file -conv3d-implicit-gemm -verify-diagnostics

//--- bad-target.mlir
module {
}

//--- convs.mlir
func.func @tensor_form(%x: tensor<1x4x4x4x16xf32>, %w: tensor<1x1x1x16x8xf32>, %i: tensor<1x4x4x4x8xf32>) -> tensor<1x4x4x4x8xf32> {
  // expected-error @below {{conv3d-implicit-gemm works on the memref form; bufferize first}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x4x4x16xf32>, tensor<1x1x1x16x8xf32>) outs(%i : tensor<1x4x4x4x8xf32>) overwrite -> tensor<1x4x4x4x8xf32>
  return %0 : tensor<1x4x4x4x8xf32>
}

// -----

func.func @dynamic_batch(%x: memref<?x4x4x4x16xf32>, %w: memref<1x1x1x16x8xf32>, %o: memref<?x4x4x4x8xf32>) {
  // expected-error @below {{conv3d-implicit-gemm needs static shapes}}
  conv3d.conv ins(%x, %w : memref<?x4x4x4x16xf32>, memref<1x1x1x16x8xf32>) outs(%o : memref<?x4x4x4x8xf32>)
  return
}

// -----

// A config on the op does not make dynamic shapes tileable.
func.func @dynamic_depth_with_config(%x: memref<1x?x4x4x16xf32>, %w: memref<1x1x1x16x8xf32>, %o: memref<1x?x4x4x8xf32>) {
  // expected-error @below {{conv3d-implicit-gemm needs static shapes}}
  conv3d.conv ins(%x, %w : memref<1x?x4x4x16xf32>, memref<1x1x1x16x8xf32>) outs(%o : memref<1x?x4x4x8xf32>) config = #conv3d.igemm_config<tile_m = 8, tile_n = 8, tile_k = 16>
  return
}

// -----

// The verifier accepts split_k > 1 with k_order = qslice_outer; the tiling
// does not.
func.func @split_k_with_qslice_outer(%x: memref<1x6x4x4x16xf32>, %w: memref<3x1x1x16x8xf32>, %o: memref<1x4x4x4x8xf32>) {
  // expected-error @below {{conv3d-implicit-gemm cannot tile this convolution: split_k > 1 needs k_order = taps_outer}}
  conv3d.conv ins(%x, %w : memref<1x6x4x4x16xf32>, memref<3x1x1x16x8xf32>) outs(%o : memref<1x4x4x4x8xf32>) config = #conv3d.igemm_config<tile_m = 8, tile_n = 8, tile_k = 16, k_order = qslice_outer, split_k = 2>
  return
}
