// A tile op with dynamic sizes is reported as needing static shapes (not
// with advice about tiling convolutions).
//
// RUN: conv3d-opt %s -conv3d-lower-to-cpu -verify-diagnostics

func.func @im2col_dynamic_batch(%x: memref<?x4x4x4x16xbf16>, %t: memref<8x16xbf16>, %m0: index, %k0: index, %k1: index) {
  // expected-error @below {{static}}
  conv3d.load_im2col_tile %x[%m0, %k0] limit %k1 into %t window = [1, 1, 1] : memref<?x4x4x4x16xbf16>, memref<8x16xbf16>
  return
}
