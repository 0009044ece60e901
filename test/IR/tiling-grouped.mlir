// TilingInterface of a grouped conv3d.conv: an F tile holds whole groups
// and reads only its groups' input channels (tile f0 of size t reads
// channels [f0 / (F/G) * C/G, + t / (F/G) * C/G) with t / (F/G) groups);
// F tiles that would split a group are refused, as is splitting the
// channels an RMS norm reads.
//
// RUN: conv3d-opt %s -transform-interpreter -split-input-file -verify-diagnostics | FileCheck %s

// 4 groups of 2 channels and 3 filters; F tiles of 6 = 2 groups.
// CHECK-LABEL: func.func @tile_groups
//  CHECK-SAME:   (%[[X:.*]]: tensor<1x4x6x6x8xf32>, %[[W:.*]]: tensor<1x3x3x2x12xf32>, %[[I:.*]]: tensor<1x4x4x4x12xf32>)
//       CHECK:   scf.for %[[F:[^ ]+]] = %{{.*}} to %c12 step %c6{{.*}} iter_args(%[[ACC:[^ ]+]] = %[[I]])
//       CHECK:     %[[C0:.*]] = affine.apply #{{.*}}(%[[F]])
//       CHECK:     %[[XT:.*]] = tensor.extract_slice %[[X]][0, 0, 0, 0, %[[C0]]] [1, 4, 6, 6, 4] [1, 1, 1, 1, 1] : tensor<1x4x6x6x8xf32> to tensor<1x4x6x6x4xf32>
//       CHECK:     %[[WT:.*]] = tensor.extract_slice %[[W]][0, 0, 0, 0, %[[F]]] [1, 3, 3, 2, 6] [1, 1, 1, 1, 1] : tensor<1x3x3x2x12xf32> to tensor<1x3x3x2x6xf32>
//       CHECK:     conv3d.conv ins(%[[XT]], %[[WT]] : tensor<1x4x6x6x4xf32>, tensor<1x3x3x2x6xf32>) outs(%{{.*}} : tensor<1x4x4x4x6xf32>) groups = 2 -> tensor<1x4x4x4x6xf32>
func.func @tile_groups(%x: tensor<1x4x6x6x8xf32>, %w: tensor<1x3x3x2x12xf32>, %init: tensor<1x4x4x4x12xf32>) -> tensor<1x4x4x4x12xf32> {
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf32>, tensor<1x3x3x2x12xf32>) outs(%init : tensor<1x4x4x4x12xf32>) groups = 4 -> tensor<1x4x4x4x12xf32>
  return %0 : tensor<1x4x4x4x12xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %conv = transform.structured.match ops{["conv3d.conv"]} in %root : (!transform.any_op) -> !transform.any_op
    %tiled, %loops = transform.structured.tile_using_for %conv tile_sizes [0, 0, 0, 0, 6] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// Tiles over the output positions only keep every group.
// CHECK-LABEL: func.func @tile_positions
//       CHECK:   conv3d.conv ins(%{{.*}}, %{{.*}} : tensor<1x2x6x6x8xf32>, tensor<1x3x3x1x8xf32>) outs(%{{.*}} : tensor<1x2x4x4x8xf32>) groups = 8 -> tensor<1x2x4x4x8xf32>
func.func @tile_positions(%x: tensor<1x4x6x6x8xf32>, %w: tensor<1x3x3x1x8xf32>, %init: tensor<1x4x4x4x8xf32>) -> tensor<1x4x4x4x8xf32> {
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf32>, tensor<1x3x3x1x8xf32>) outs(%init : tensor<1x4x4x4x8xf32>) groups = 8 -> tensor<1x4x4x4x8xf32>
  return %0 : tensor<1x4x4x4x8xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %conv = transform.structured.match ops{["conv3d.conv"]} in %root : (!transform.any_op) -> !transform.any_op
    %tiled, %loops = transform.structured.tile_using_for %conv tile_sizes [0, 2] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

func.func @split_group(%x: tensor<1x4x6x6x8xf32>, %w: tensor<1x3x3x2x12xf32>, %init: tensor<1x4x4x4x12xf32>) -> tensor<1x4x4x4x12xf32> {
  // expected-error @below {{faild to tile operation}}
  // expected-error @below {{failed to generate tiling loops}}
  // expected-error @below {{'conv3d.conv' op tiling a grouped convolution along F needs static tiles of whole groups (multiples of F/groups = 3)}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf32>, tensor<1x3x3x2x12xf32>) outs(%init : tensor<1x4x4x4x12xf32>) groups = 4 -> tensor<1x4x4x4x12xf32>
  return %0 : tensor<1x4x4x4x12xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %conv = transform.structured.match ops{["conv3d.conv"]} in %root : (!transform.any_op) -> !transform.any_op
    %tiled, %loops = transform.structured.tile_using_for %conv tile_sizes [0, 0, 0, 0, 4] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

func.func @split_norm(%x: tensor<1x4x6x6x8xf32>, %w: tensor<1x3x3x2x12xf32>, %g: tensor<8xf32>, %init: tensor<1x4x4x4x12xf32>) -> tensor<1x4x4x4x12xf32> {
  // expected-error @below {{faild to tile operation}}
  // expected-error @below {{failed to generate tiling loops}}
  // expected-error @below {{'conv3d.conv' op tiling a grouped convolution with rms_norm along F is not supported (the norm reads every channel)}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf32>, tensor<1x3x3x2x12xf32>) rms_norm(%g : tensor<8xf32>) norm_eps = 1.0e-06 outs(%init : tensor<1x4x4x4x12xf32>) groups = 4 -> tensor<1x4x4x4x12xf32>
  return %0 : tensor<1x4x4x4x12xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %conv = transform.structured.match ops{["conv3d.conv"]} in %root : (!transform.any_op) -> !transform.any_op
    %tiled, %loops = transform.structured.tile_using_for %conv tile_sizes [0, 0, 0, 0, 6] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}
