// TilingInterface of conv3d.conv (tensor form): tiles over the output
// dimensions (n, do, ho, wo, f). The input tile is a slice of the input
// (unpadded convs) or a tensor.pad of a slice of the input (padded convs,
// whose tiles then convolve without padding); filter, bias, residual and the
// destination are sliced along the matching dimensions.
//
// RUN: conv3d-opt %s -transform-interpreter -split-input-file | FileCheck %s

// Unpadded: output [d, d + 2) x [h, h + 4) x [w, w + 4) reads input
// [d, d + 4) x [h, h + 6) x [w, w + 6) of a 3x3x3 window.
// CHECK-LABEL: func.func @tile_unpadded
//  CHECK-SAME:   (%[[X:.*]]: tensor<2x10x10x10x16xf32>, %[[W:.*]]: tensor<3x3x3x16x32xf32>, %[[I:.*]]: tensor<2x8x8x8x32xf32>)
//       CHECK:   %[[R:.*]] = scf.for %[[N:[^ ]+]] = %{{.*}} to %c2 step %c1 iter_args(%[[A0:[^ ]+]] = %[[I]])
//       CHECK:     scf.for %[[D:[^ ]+]] = %{{.*}} to %c8 step %c2{{.*}} iter_args(%[[A1:[^ ]+]] = %[[A0]])
//       CHECK:       scf.for %[[H:[^ ]+]] = %{{.*}} to %c8{{.*}} step %c4{{.*}} iter_args(%[[A2:[^ ]+]] = %[[A1]])
//       CHECK:         scf.for %[[WO:[^ ]+]] = %{{.*}} to %c8{{.*}} step %c4{{.*}} iter_args(%[[A3:[^ ]+]] = %[[A2]])
//       CHECK:           scf.for %[[F:[^ ]+]] = %{{.*}} to %c32 step %c16{{.*}} iter_args(%[[ACC:[^ ]+]] = %[[A3]])
//   CHECK-NOT:             tensor.pad
//       CHECK:             %[[XT:.*]] = tensor.extract_slice %[[X]][%[[N]], %[[D]], %[[H]], %[[WO]], 0] [1, 4, 6, 6, 16] [1, 1, 1, 1, 1] : tensor<2x10x10x10x16xf32> to tensor<1x4x6x6x16xf32>
//       CHECK:             %[[WT:.*]] = tensor.extract_slice %[[W]][0, 0, 0, 0, %[[F]]] [3, 3, 3, 16, 16] [1, 1, 1, 1, 1] : tensor<3x3x3x16x32xf32> to tensor<3x3x3x16x16xf32>
//       CHECK:             %[[IT:.*]] = tensor.extract_slice %[[ACC]][%[[N]], %[[D]], %[[H]], %[[WO]], %[[F]]] [1, 2, 4, 4, 16] [1, 1, 1, 1, 1] : tensor<2x8x8x8x32xf32> to tensor<1x2x4x4x16xf32>
//       CHECK:             %[[CT:.*]] = conv3d.conv ins(%[[XT]], %[[WT]] : tensor<1x4x6x6x16xf32>, tensor<3x3x3x16x16xf32>) outs(%[[IT]] : tensor<1x2x4x4x16xf32>) -> tensor<1x2x4x4x16xf32>{{$}}
//       CHECK:             %[[INS:.*]] = tensor.insert_slice %[[CT]] into %[[ACC]][%[[N]], %[[D]], %[[H]], %[[WO]], %[[F]]] [1, 2, 4, 4, 16] [1, 1, 1, 1, 1]
//       CHECK:             scf.yield %[[INS]]
//       CHECK:   return %[[R]]
func.func @tile_unpadded(%x: tensor<2x10x10x10x16xf32>, %w: tensor<3x3x3x16x32xf32>, %init: tensor<2x8x8x8x32xf32>) -> tensor<2x8x8x8x32xf32> {
  %0 = conv3d.conv ins(%x, %w : tensor<2x10x10x10x16xf32>, tensor<3x3x3x16x32xf32>) outs(%init : tensor<2x8x8x8x32xf32>) -> tensor<2x8x8x8x32xf32>
  return %0 : tensor<2x8x8x8x32xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %conv = transform.structured.match ops{["conv3d.conv"]} in %root : (!transform.any_op) -> !transform.any_op
    %tiled, %loops:5 = transform.structured.tile_using_for %conv tile_sizes [1, 2, 4, 4, 16] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// Padded and strided: output [h, h + 4) with stride 2 reads padded rows
// [2h, 2h + 9); the tile pads a slice of the input by what falls into the
// halo and convolves it without padding (strides, bias, overwrite and the
// activation are kept).
// CHECK-LABEL: func.func @tile_padded_strided
//  CHECK-SAME:   (%[[X:.*]]: tensor<2x8x16x16x16xbf16>, %[[W:.*]]: tensor<3x3x3x16x32xbf16>, %[[B:.*]]: tensor<32xf32>, %[[I:.*]]: tensor<2x8x8x8x32xbf16>)
//       CHECK:   scf.for %[[N:[^ ]+]] =
//       CHECK:     scf.for %[[D:[^ ]+]] =
//       CHECK:       scf.for %[[H:[^ ]+]] =
//       CHECK:         scf.for %[[WO:[^ ]+]] =
//       CHECK:           scf.for %[[F:[^ ]+]] = {{.*}} iter_args(%[[ACC:[^ ]+]] =
//       CHECK:             %[[ZERO:.*]] = arith.constant 0.000000e+00 : bf16
//       CHECK:             %[[XT:.*]] = scf.if %{{.*}} -> (tensor<1x4x9x9x16xbf16>) {
//       CHECK:               tensor.generate
//       CHECK:             } else {
//       CHECK:               %[[SLICE:.*]] = tensor.extract_slice %[[X]][%[[N]], %{{.*}}, %{{.*}}, %{{.*}}, 0] [1, %{{.*}}, %{{.*}}, %{{.*}}, 16] [1, 1, 1, 1, 1] : tensor<2x8x16x16x16xbf16> to tensor<1x?x?x?x16xbf16>
//       CHECK:               %[[PAD:.*]] = tensor.pad %[[SLICE]] low[0, %{{.*}}, %{{.*}}, %{{.*}}, 0] high[0, 0, %{{.*}}, %{{.*}}, 0]
//       CHECK:                 tensor.yield %[[ZERO]] : bf16
//       CHECK:               %[[CAST:.*]] = tensor.cast %[[PAD]] : tensor<1x?x?x?x16xbf16> to tensor<1x4x9x9x16xbf16>
//       CHECK:               scf.yield %[[CAST]]
//       CHECK:             }
//       CHECK:             %[[WT:.*]] = tensor.extract_slice %[[W]][0, 0, 0, 0, %[[F]]] [3, 3, 3, 16, 16] [1, 1, 1, 1, 1]
//       CHECK:             %[[BT:.*]] = tensor.extract_slice %[[B]][%[[F]]] [16] [1] : tensor<32xf32> to tensor<16xf32>
//       CHECK:             %[[IT:.*]] = tensor.extract_slice %[[ACC]][%[[N]], %[[D]], %[[H]], %[[WO]], %[[F]]] [1, 2, 4, 4, 16] [1, 1, 1, 1, 1]
//       CHECK:             conv3d.conv ins(%[[XT]], %[[WT]] : tensor<1x4x9x9x16xbf16>, tensor<3x3x3x16x16xbf16>) bias(%[[BT]] : tensor<16xf32>) outs(%[[IT]] : tensor<1x2x4x4x16xbf16>) overwrite strides = [1, 2, 2] activation = relu -> tensor<1x2x4x4x16xbf16>{{$}}
//       CHECK:             tensor.insert_slice
func.func @tile_padded_strided(%x: tensor<2x8x16x16x16xbf16>, %w: tensor<3x3x3x16x32xbf16>, %b: tensor<32xf32>, %init: tensor<2x8x8x8x32xbf16>) -> tensor<2x8x8x8x32xbf16> {
  %0 = conv3d.conv ins(%x, %w : tensor<2x8x16x16x16xbf16>, tensor<3x3x3x16x32xbf16>) bias(%b : tensor<32xf32>) outs(%init : tensor<2x8x8x8x32xbf16>) overwrite strides = [1, 2, 2] padding = [2, 0, 1, 1, 1, 1] activation = relu -> tensor<2x8x8x8x32xbf16>
  return %0 : tensor<2x8x8x8x32xbf16>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %conv = transform.structured.match ops{["conv3d.conv"]} in %root : (!transform.any_op) -> !transform.any_op
    %tiled, %loops:5 = transform.structured.tile_using_for %conv tile_sizes [1, 2, 4, 4, 16] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// scf.forall with partial tiles (8 = 3 + 3 + 2 along depth) and untiled
// dimensions: the tiles have dynamic sizes, the FQRSC filter is sliced along
// its first dimension, the residual like the destination. The untiled height
// and width read 17 of the 18 padded rows and columns.
// CHECK-LABEL: func.func @tile_forall_partial
//  CHECK-SAME:   (%[[X:.*]]: tensor<2x8x16x16x16xbf16>, %[[W:.*]]: tensor<32x3x3x3x16xbf16>, %[[RES:.*]]: tensor<2x8x8x8x32xbf16>, %[[I:.*]]: tensor<2x8x8x8x32xbf16>)
//       CHECK:   scf.forall (%[[TD:[^ ]+]], %[[TF:[^ ]+]]) in (3, 2) shared_outs(%[[ACC:[^ ]+]] = %[[I]])
//       CHECK:     %[[XT:.*]] = scf.if %{{.*}} -> (tensor<2x?x17x17x16xbf16>) {
//       CHECK:     } else {
//       CHECK:       tensor.extract_slice %[[X]][0, %{{.*}}, 0, 0, 0] [2, %{{.*}}, 16, 16, 16] [1, 1, 1, 1, 1] : tensor<2x8x16x16x16xbf16> to tensor<2x?x16x16x16xbf16>
//       CHECK:       tensor.pad %{{.*}} low[0, %{{.*}}, 1, 1, 0] high[0, 0, 0, 0, 0]
//       CHECK:     }
//       CHECK:     %[[WT:.*]] = tensor.extract_slice %[[W]][%[[F:[^ ]+]], 0, 0, 0, 0] [16, 3, 3, 3, 16] [1, 1, 1, 1, 1] : tensor<32x3x3x3x16xbf16> to tensor<16x3x3x3x16xbf16>
//       CHECK:     %[[RT:.*]] = tensor.extract_slice %[[RES]][0, %[[D:[^ ]+]], 0, 0, %[[F]]] [2, %[[SZ:[^ ]+]], 8, 8, 16] [1, 1, 1, 1, 1] : tensor<2x8x8x8x32xbf16> to tensor<2x?x8x8x16xbf16>
//       CHECK:     %[[IT:.*]] = tensor.extract_slice %[[ACC]][0, %[[D]], 0, 0, %[[F]]] [2, %[[SZ]], 8, 8, 16] [1, 1, 1, 1, 1] : tensor<2x8x8x8x32xbf16> to tensor<2x?x8x8x16xbf16>
//       CHECK:     %[[CT:.*]] = conv3d.conv ins(%[[XT]], %[[WT]] : tensor<2x?x17x17x16xbf16>, tensor<16x3x3x3x16xbf16>) residual(%[[RT]] : tensor<2x?x8x8x16xbf16>) outs(%[[IT]] : tensor<2x?x8x8x16xbf16>) strides = [1, 2, 2] dilations = [2, 1, 1] filter_layout = fqrsc -> tensor<2x?x8x8x16xbf16>{{$}}
//       CHECK:     scf.forall.in_parallel
//       CHECK:       tensor.parallel_insert_slice %[[CT]] into %[[ACC]][0, %[[D]], 0, 0, %[[F]]] [2, %[[SZ]], 8, 8, 16] [1, 1, 1, 1, 1]
func.func @tile_forall_partial(%x: tensor<2x8x16x16x16xbf16>, %w: tensor<32x3x3x3x16xbf16>, %r: tensor<2x8x8x8x32xbf16>, %init: tensor<2x8x8x8x32xbf16>) -> tensor<2x8x8x8x32xbf16> {
  %0 = conv3d.conv ins(%x, %w : tensor<2x8x16x16x16xbf16>, tensor<32x3x3x3x16xbf16>) residual(%r : tensor<2x8x8x8x32xbf16>) outs(%init : tensor<2x8x8x8x32xbf16>) strides = [1, 2, 2] dilations = [2, 1, 1] padding = [4, 0, 1, 1, 1, 1] filter_layout = fqrsc -> tensor<2x8x8x8x32xbf16>
  return %0 : tensor<2x8x8x8x32xbf16>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %conv = transform.structured.match ops{["conv3d.conv"]} in %root : (!transform.any_op) -> !transform.any_op
    %tiled, %forall = transform.structured.tile_using_forall %conv tile_sizes [0, 3, 0, 0, 16] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}
