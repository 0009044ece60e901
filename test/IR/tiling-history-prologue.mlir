// TilingInterface of conv3d.conv with an input prologue or a history
// operand. A tile convolves a zero-padded slice of the input without
// padding, so the prologue sees the halo: it is carried where it maps a zero
// voxel to zero (no norm_beta, or no padding) and refused otherwise; a
// history operand is refused (a tile's window may straddle both sources);
// upstream's tiling driver adds its own two errors (spelling included).
//
// RUN: split-file %s %t
// RUN: conv3d-opt %t/carried.mlir -transform-interpreter | FileCheck %s
// RUN: conv3d-opt %t/refused.mlir -transform-interpreter -split-input-file -verify-diagnostics

//--- carried.mlir

// CHECK-LABEL: func.func @tile_prologue_no_beta
//  CHECK-SAME:   (%[[X:[^:]+]]: tensor<1x4x8x8x16xbf16>, %[[W:[^:]+]]: tensor<3x3x3x16x32xbf16>, %[[G:[^:]+]]: tensor<16xf32>, %{{.*}}: tensor<1x4x8x8x32xbf16>)
//       CHECK:   tensor.pad
//       CHECK:   conv3d.conv ins(%{{.*}}, %{{.*}} : tensor<1x4x6x6x16xbf16>, tensor<3x3x3x16x16xbf16>) rms_norm(%[[G]] : tensor<16xf32>) norm_eps = 9.99999997E-7 input_activation = silu outs(%{{.*}} : tensor<1x2x4x4x16xbf16>) overwrite -> tensor<1x2x4x4x16xbf16>{{$}}
func.func @tile_prologue_no_beta(%x: tensor<1x4x8x8x16xbf16>, %w: tensor<3x3x3x16x32xbf16>, %g: tensor<16xf32>, %init: tensor<1x4x8x8x32xbf16>) -> tensor<1x4x8x8x32xbf16> {
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x8x8x16xbf16>, tensor<3x3x3x16x32xbf16>) rms_norm(%g : tensor<16xf32>) norm_eps = 1.0e-6 input_activation = silu outs(%init : tensor<1x4x8x8x32xbf16>) overwrite padding = [2, 0, 1, 1, 1, 1] -> tensor<1x4x8x8x32xbf16>
  return %0 : tensor<1x4x8x8x32xbf16>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %conv = transform.structured.match ops{["conv3d.conv"]} in %root : (!transform.any_op) -> !transform.any_op
    %tiled, %loops:5 = transform.structured.tile_using_for %conv tile_sizes [1, 2, 4, 4, 16] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.yield
  }
}

//--- refused.mlir

func.func @tile_history(%x: tensor<1x4x8x8x16xbf16>, %h: tensor<1x2x8x8x16xbf16>, %w: tensor<3x3x3x16x32xbf16>, %init: tensor<1x4x8x8x32xbf16>) -> tensor<1x4x8x8x32xbf16> {
  // expected-error @below {{'conv3d.conv' op tiling a convolution with a history operand is not supported}}
  // expected-error @below {{faild to tile operation}}
  // expected-error @below {{failed to generate tiling loops}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x8x8x16xbf16>, tensor<3x3x3x16x32xbf16>) history(%h : tensor<1x2x8x8x16xbf16>) outs(%init : tensor<1x4x8x8x32xbf16>) overwrite padding = [0, 0, 1, 1, 1, 1] -> tensor<1x4x8x8x32xbf16>
  return %0 : tensor<1x4x8x8x32xbf16>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %conv = transform.structured.match ops{["conv3d.conv"]} in %root : (!transform.any_op) -> !transform.any_op
    %tiled, %loops:5 = transform.structured.tile_using_for %conv tile_sizes [1, 2, 4, 4, 16] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

func.func @tile_beta_padded(%x: tensor<1x4x8x8x16xbf16>, %g: tensor<16xf32>, %b: tensor<16xf32>, %w: tensor<3x3x3x16x32xbf16>, %init: tensor<1x4x8x8x32xbf16>) -> tensor<1x4x8x8x32xbf16> {
  // expected-error @below {{'conv3d.conv' op tiling a padded convolution whose input prologue has norm_beta is not supported (the prologue would transform the halo)}}
  // expected-error @below {{faild to tile operation}}
  // expected-error @below {{failed to generate tiling loops}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x8x8x16xbf16>, tensor<3x3x3x16x32xbf16>) rms_norm(%g : tensor<16xf32>) norm_beta(%b : tensor<16xf32>) norm_eps = 1.0e-6 outs(%init : tensor<1x4x8x8x32xbf16>) overwrite padding = [2, 0, 1, 1, 1, 1] -> tensor<1x4x8x8x32xbf16>
  return %0 : tensor<1x4x8x8x32xbf16>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %conv = transform.structured.match ops{["conv3d.conv"]} in %root : (!transform.any_op) -> !transform.any_op
    %tiled, %loops:5 = transform.structured.tile_using_for %conv tile_sizes [1, 2, 4, 4, 16] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.yield
  }
}
