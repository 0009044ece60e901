// The TilingInterface of conv3d.conv is implemented for the tensor form
// only: tiling a memref conv fails with a diagnostic (and no crash).
//
// RUN: not conv3d-opt %s -transform-interpreter 2>&1 | FileCheck %s

// CHECK: error: 'conv3d.conv' op tiling is implemented for the tensor form only
func.func @tile_memref(%x: memref<2x10x10x10x16xf32>, %w: memref<3x3x3x16x32xf32>, %init: memref<2x8x8x8x32xf32>) {
  conv3d.conv ins(%x, %w : memref<2x10x10x10x16xf32>, memref<3x3x3x16x32xf32>) outs(%init : memref<2x8x8x8x32xf32>)
  return
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %conv = transform.structured.match ops{["conv3d.conv"]} in %root : (!transform.any_op) -> !transform.any_op
    %tiled, %loops:5 = transform.structured.tile_using_for %conv tile_sizes [1, 2, 4, 4, 16] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.yield
  }
}
