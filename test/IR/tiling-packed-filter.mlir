// TilingInterface of conv3d.conv with a packed NVFP4 filter (filter_quant):
// the filter's scales are sliced along F with its codes, and the tile keeps
// filter_quant and the filter amax.
//
// RUN: conv3d-opt %s -transform-interpreter | FileCheck %s

// CHECK-LABEL: func.func @tile_packed_filter
//  CHECK-SAME:   (%[[X:.*]]: tensor<1x4x6x6x64xbf16>, %[[W:.*]]: tensor<32x3x3x3x32xi8>, %[[S:.*]]: tensor<32x3x3x3x4xi8>, %[[WA:.*]]: f32, %[[I:.*]]: tensor<1x2x4x4x32xf32>)
//       CHECK:   scf.for %[[F:[^ ]+]] = %{{.*}} to %c32 step %c16{{.*}} iter_args(%[[ACC:[^ ]+]] =
//       CHECK:     %[[WT:.*]] = tensor.extract_slice %[[W]][%[[F]], 0, 0, 0, 0] [16, 3, 3, 3, 32] [1, 1, 1, 1, 1] : tensor<32x3x3x3x32xi8> to tensor<16x3x3x3x32xi8>
//       CHECK:     %[[ST:.*]] = tensor.extract_slice %[[S]][%[[F]], 0, 0, 0, 0] [16, 3, 3, 3, 4] [1, 1, 1, 1, 1] : tensor<32x3x3x3x4xi8> to tensor<16x3x3x3x4xi8>
//       CHECK:     conv3d.conv ins(%{{.*}}, %[[WT]] : tensor<1x4x6x6x64xbf16>, tensor<16x3x3x3x32xi8>) filter_quant(#conv3d.nvfp4<block_size = 16>, %[[ST]] : tensor<16x3x3x3x4xi8>, %[[WA]]) outs(%{{.*}} : tensor<1x2x4x4x16xf32>) overwrite filter_layout = fqrsc
func.func @tile_packed_filter(%x: tensor<1x4x6x6x64xbf16>, %w: tensor<32x3x3x3x32xi8>,
                              %s: tensor<32x3x3x3x4xi8>, %wamax: f32,
                              %init: tensor<1x2x4x4x32xf32>) -> tensor<1x2x4x4x32xf32> {
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x64xbf16>, tensor<32x3x3x3x32xi8>)
         filter_quant(#conv3d.nvfp4<block_size = 16>, %s : tensor<32x3x3x3x4xi8>, %wamax)
         outs(%init : tensor<1x2x4x4x32xf32>) overwrite filter_layout = fqrsc
         -> tensor<1x2x4x4x32xf32>
  return %0 : tensor<1x2x4x4x32xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %conv = transform.structured.match ops{["conv3d.conv"]} in %root : (!transform.any_op) -> !transform.any_op
    %tiled, %loops = transform.structured.tile_using_for %conv tile_sizes [0, 0, 0, 0, 16] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}
