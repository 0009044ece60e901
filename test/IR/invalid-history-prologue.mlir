// Diagnostics of conv3d.conv and conv3d.load_im2col_tile for the history
// operand and the input prologue. One split per diagnostic.
//
// RUN: conv3d-opt %s -split-input-file -verify-diagnostics

func.func @history_batch(%x: tensor<1x4x6x6x8xf32>, %h: tensor<2x2x6x6x8xf32>, %w: tensor<3x3x3x8x16xf32>, %i: tensor<1x4x4x4x16xf32>) {
  // expected-error @+1 {{'conv3d.conv' op history batch (N) size 2 must match the input's 1 (history 2x2x6x6x8, input 1x4x6x6x8)}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf32>, tensor<3x3x3x8x16xf32>) history(%h : tensor<2x2x6x6x8xf32>) outs(%i : tensor<1x4x4x4x16xf32>) -> tensor<1x4x4x4x16xf32>
  return
}

// -----

func.func @history_height(%x: tensor<1x4x6x6x8xf32>, %h: tensor<1x2x5x6x8xf32>, %w: tensor<3x3x3x8x16xf32>, %i: tensor<1x4x4x4x16xf32>) {
  // expected-error @+1 {{'conv3d.conv' op history height (H) size 5 must match the input's 6}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf32>, tensor<3x3x3x8x16xf32>) history(%h : tensor<1x2x5x6x8xf32>) outs(%i : tensor<1x4x4x4x16xf32>) -> tensor<1x4x4x4x16xf32>
  return
}

// -----

func.func @history_width(%x: tensor<1x4x6x6x8xf32>, %h: tensor<1x2x6x7x8xf32>, %w: tensor<3x3x3x8x16xf32>, %i: tensor<1x4x4x4x16xf32>) {
  // expected-error @+1 {{'conv3d.conv' op history width (W) size 7 must match the input's 6}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf32>, tensor<3x3x3x8x16xf32>) history(%h : tensor<1x2x6x7x8xf32>) outs(%i : tensor<1x4x4x4x16xf32>) -> tensor<1x4x4x4x16xf32>
  return
}

// -----

func.func @history_channels(%x: tensor<1x4x6x6x8xf32>, %h: tensor<1x2x6x6x4xf32>, %w: tensor<3x3x3x8x16xf32>, %i: tensor<1x4x4x4x16xf32>) {
  // expected-error @+1 {{'conv3d.conv' op history channel (C) size 4 must match the input's 8}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf32>, tensor<3x3x3x8x16xf32>) history(%h : tensor<1x2x6x6x4xf32>) outs(%i : tensor<1x4x4x4x16xf32>) -> tensor<1x4x4x4x16xf32>
  return
}

// -----

func.func @history_type(%x: tensor<1x4x6x6x8xbf16>, %h: tensor<1x2x6x6x8xf16>, %w: tensor<3x3x3x8x16xbf16>, %i: tensor<1x4x4x4x16xf32>) {
  // expected-error @+1 {{'conv3d.conv' op history element type 'f16' must match the input element type 'bf16'}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xbf16>, tensor<3x3x3x8x16xbf16>) history(%h : tensor<1x2x6x6x8xf16>) outs(%i : tensor<1x4x4x4x16xf32>) -> tensor<1x4x4x4x16xf32>
  return
}

// -----

func.func @history_rank(%x: tensor<1x4x6x6x8xf32>, %h: tensor<2x6x6x8xf32>, %w: tensor<3x3x3x8x16xf32>, %i: tensor<1x4x4x4x16xf32>) {
  // expected-error @+1 {{'conv3d.conv' op history must have rank 5, got rank 4}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf32>, tensor<3x3x3x8x16xf32>) history(%h : tensor<2x6x6x8xf32>) outs(%i : tensor<1x4x4x4x16xf32>) -> tensor<1x4x4x4x16xf32>
  return
}

// -----

func.func @history_memref_mix(%x: tensor<1x4x6x6x8xf32>, %h: memref<1x2x6x6x8xf32>, %w: tensor<3x3x3x8x16xf32>, %i: tensor<1x4x4x4x16xf32>) {
  // expected-error @+1 {{'conv3d.conv' op operands must be all tensors or all memrefs, not a mix}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf32>, tensor<3x3x3x8x16xf32>) history(%h : memref<1x2x6x6x8xf32>) outs(%i : tensor<1x4x4x4x16xf32>) -> tensor<1x4x4x4x16xf32>
  return
}

// -----

// The output depth follows from D + Dh = 6 frames: Do = 6 - 3 + 1 = 4, not 2.
func.func @history_output_depth(%x: tensor<1x4x6x6x8xf32>, %h: tensor<1x2x6x6x8xf32>, %w: tensor<3x3x3x8x16xf32>, %i: tensor<1x2x4x4x16xf32>) {
  // expected-error @+1 {{'conv3d.conv' op outs shape 1x2x4x4x16 is inconsistent with the expected 1x4x4x4x16}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf32>, tensor<3x3x3x8x16xf32>) history(%h : tensor<1x2x6x6x8xf32>) outs(%i : tensor<1x2x4x4x16xf32>) -> tensor<1x2x4x4x16xf32>
  return
}

// -----

func.func @eps_zero(%x: tensor<1x4x6x6x8xf32>, %g: tensor<8xf32>, %w: tensor<3x3x3x8x16xf32>, %i: tensor<1x2x4x4x16xf32>) {
  // expected-error @+1 {{'conv3d.conv' op norm_eps must be finite and positive, got 0}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf32>, tensor<3x3x3x8x16xf32>) rms_norm(%g : tensor<8xf32>) norm_eps = 0.0 outs(%i : tensor<1x2x4x4x16xf32>) -> tensor<1x2x4x4x16xf32>
  return
}

// -----

func.func @eps_negative(%x: tensor<1x4x6x6x8xf32>, %g: tensor<8xf32>, %w: tensor<3x3x3x8x16xf32>, %i: tensor<1x2x4x4x16xf32>) {
  // expected-error @+1 {{'conv3d.conv' op norm_eps must be finite and positive, got -1.000000e-06}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf32>, tensor<3x3x3x8x16xf32>) rms_norm(%g : tensor<8xf32>) norm_eps = -1.0e-6 outs(%i : tensor<1x2x4x4x16xf32>) -> tensor<1x2x4x4x16xf32>
  return
}

// -----

func.func @eps_nan(%x: tensor<1x4x6x6x8xf32>, %g: tensor<8xf32>, %w: tensor<3x3x3x8x16xf32>, %i: tensor<1x2x4x4x16xf32>) {
  // expected-error @+1 {{'conv3d.conv' op norm_eps must be finite and positive, got nan}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf32>, tensor<3x3x3x8x16xf32>) rms_norm(%g : tensor<8xf32>) norm_eps = 0x7FC00000 outs(%i : tensor<1x2x4x4x16xf32>) -> tensor<1x2x4x4x16xf32>
  return
}

// -----

func.func @eps_missing(%x: tensor<1x4x6x6x8xf32>, %g: tensor<8xf32>, %w: tensor<3x3x3x8x16xf32>, %i: tensor<1x2x4x4x16xf32>) {
  // expected-error @+1 {{'conv3d.conv' op rms_norm needs norm_eps, the positive constant added to the mean square}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf32>, tensor<3x3x3x8x16xf32>) rms_norm(%g : tensor<8xf32>) outs(%i : tensor<1x2x4x4x16xf32>) -> tensor<1x2x4x4x16xf32>
  return
}

// -----

func.func @eps_without_norm(%x: tensor<1x4x6x6x8xf32>, %w: tensor<3x3x3x8x16xf32>, %i: tensor<1x2x4x4x16xf32>) {
  // expected-error @+1 {{'conv3d.conv' op norm_eps needs rms_norm (the scale gamma)}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf32>, tensor<3x3x3x8x16xf32>) norm_eps = 1.0e-6 outs(%i : tensor<1x2x4x4x16xf32>) -> tensor<1x2x4x4x16xf32>
  return
}

// -----

func.func @beta_without_norm(%x: tensor<1x4x6x6x8xf32>, %b: tensor<8xf32>, %w: tensor<3x3x3x8x16xf32>, %i: tensor<1x2x4x4x16xf32>) {
  // expected-error @+1 {{'conv3d.conv' op norm_beta needs rms_norm (the scale gamma)}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf32>, tensor<3x3x3x8x16xf32>) norm_beta(%b : tensor<8xf32>) outs(%i : tensor<1x2x4x4x16xf32>) -> tensor<1x2x4x4x16xf32>
  return
}

// -----

func.func @gamma_size(%x: tensor<1x4x6x6x8xf32>, %g: tensor<16xf32>, %w: tensor<3x3x3x8x16xf32>, %i: tensor<1x2x4x4x16xf32>) {
  // expected-error @+1 {{'conv3d.conv' op rms_norm scale must have 8 elements (one per input channel), got 16}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf32>, tensor<3x3x3x8x16xf32>) rms_norm(%g : tensor<16xf32>) norm_eps = 1.0e-6 outs(%i : tensor<1x2x4x4x16xf32>) -> tensor<1x2x4x4x16xf32>
  return
}

// -----

func.func @gamma_rank(%x: tensor<1x4x6x6x8xf32>, %g: tensor<1x8xf32>, %w: tensor<3x3x3x8x16xf32>, %i: tensor<1x2x4x4x16xf32>) {
  // expected-error @+1 {{'conv3d.conv' op rms_norm scale must have rank 1, got rank 2}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf32>, tensor<3x3x3x8x16xf32>) rms_norm(%g : tensor<1x8xf32>) norm_eps = 1.0e-6 outs(%i : tensor<1x2x4x4x16xf32>) -> tensor<1x2x4x4x16xf32>
  return
}

// -----

func.func @gamma_integer(%x: tensor<1x4x6x6x8xf32>, %g: tensor<8xi32>, %w: tensor<3x3x3x8x16xf32>, %i: tensor<1x2x4x4x16xf32>) {
  // expected-error @+1 {{'conv3d.conv' op rms_norm scale element type must be bf16, f16 or f32, got 'i32'}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf32>, tensor<3x3x3x8x16xf32>) rms_norm(%g : tensor<8xi32>) norm_eps = 1.0e-6 outs(%i : tensor<1x2x4x4x16xf32>) -> tensor<1x2x4x4x16xf32>
  return
}

// -----

func.func @beta_size(%x: tensor<1x4x6x6x8xf32>, %g: tensor<8xf32>, %b: tensor<4xf32>, %w: tensor<3x3x3x8x16xf32>, %i: tensor<1x2x4x4x16xf32>) {
  // expected-error @+1 {{'conv3d.conv' op norm_beta must have 8 elements (one per input channel), got 4}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf32>, tensor<3x3x3x8x16xf32>) rms_norm(%g : tensor<8xf32>) norm_beta(%b : tensor<4xf32>) norm_eps = 1.0e-6 outs(%i : tensor<1x2x4x4x16xf32>) -> tensor<1x2x4x4x16xf32>
  return
}

// -----

// An integer input cannot take a prologue (nor be convolved at all).
func.func @prologue_integer_input(%x: tensor<1x4x6x6x8xi8>, %w: tensor<3x3x3x8x16xi8>, %i: tensor<1x2x4x4x16xf32>) {
  // expected-error @+1 {{'conv3d.conv' op input element type must be bf16, f16 or f32, got 'i8'}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xi8>, tensor<3x3x3x8x16xi8>) input_activation = silu outs(%i : tensor<1x2x4x4x16xf32>) -> tensor<1x2x4x4x16xf32>
  return
}

// -----

func.func @prologue_quantized_input(%x: tensor<1x4x6x6x16xbf16>, %g: tensor<16xf32>, %w: tensor<3x3x3x16x16xbf16>, %amax: f32, %i: tensor<1x2x4x4x16xf32>) {
  // expected-error @+1 {{'conv3d.conv' op an input prologue (rms_norm, input_activation) cannot be combined with NVFP4 quantization of the input}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x16xbf16>, tensor<3x3x3x16x16xbf16>) rms_norm(%g : tensor<16xf32>) norm_eps = 1.0e-6 quantize(#conv3d.nvfp4<block_size = 16>, %amax) outs(%i : tensor<1x2x4x4x16xf32>) -> tensor<1x2x4x4x16xf32>
  return
}

// -----

func.func @activation_quantized_input(%x: tensor<1x4x6x6x16xbf16>, %w: tensor<3x3x3x16x16xbf16>, %amax: f32, %i: tensor<1x2x4x4x16xf32>) {
  // expected-error @+1 {{'conv3d.conv' op an input prologue (rms_norm, input_activation) cannot be combined with NVFP4 quantization of the input}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x16xbf16>, tensor<3x3x3x16x16xbf16>) input_activation = relu quantize(#conv3d.nvfp4<block_size = 16>, %amax) outs(%i : tensor<1x2x4x4x16xf32>) -> tensor<1x2x4x4x16xf32>
  return
}

// -----

func.func @input_activation_unknown(%x: tensor<1x4x6x6x8xf32>, %w: tensor<3x3x3x8x16xf32>, %i: tensor<1x2x4x4x16xf32>) {
  // expected-error @+1 {{expected one of [none, relu, silu, gelu_tanh, relu_backward, silu_backward, gelu_tanh_backward], got 'tanh'}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf32>, tensor<3x3x3x8x16xf32>) input_activation = tanh outs(%i : tensor<1x2x4x4x16xf32>) -> tensor<1x2x4x4x16xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// conv3d.load_im2col_tile
//===----------------------------------------------------------------------===//

func.func @tile_history_channels(%x: memref<1x4x6x6x8xbf16>, %h: memref<1x2x6x6x16xbf16>, %a: memref<32x32xbf16>, %i: index) {
  // expected-error @+1 {{'conv3d.load_im2col_tile' op history channel (C) size 16 must match the input's 8}}
  conv3d.load_im2col_tile %x[%i, %i] limit %i into %a history(%h : memref<1x2x6x6x16xbf16>) window = [3, 3, 3] : memref<1x4x6x6x8xbf16>, memref<32x32xbf16>
  return
}

// -----

func.func @tile_history_type(%x: memref<1x4x6x6x8xbf16>, %h: memref<1x2x6x6x8xf32>, %a: memref<32x32xbf16>, %i: index) {
  // expected-error @+1 {{'conv3d.load_im2col_tile' op history element type 'f32' must match the input element type 'bf16'}}
  conv3d.load_im2col_tile %x[%i, %i] limit %i into %a history(%h : memref<1x2x6x6x8xf32>) window = [3, 3, 3] : memref<1x4x6x6x8xbf16>, memref<32x32xbf16>
  return
}

// -----

func.func @tile_eps(%x: memref<1x4x6x6x8xbf16>, %g: memref<8xf32>, %a: memref<32x32xbf16>, %i: index) {
  // expected-error @+1 {{'conv3d.load_im2col_tile' op norm_eps must be finite and positive, got -1.000000e+00}}
  conv3d.load_im2col_tile %x[%i, %i] limit %i into %a rms_norm(%g : memref<8xf32>) norm_eps = -1.0 window = [3, 3, 3] : memref<1x4x6x6x8xbf16>, memref<32x32xbf16>
  return
}

// -----

func.func @tile_gamma_size(%x: memref<1x4x6x6x8xbf16>, %g: memref<4xf32>, %a: memref<32x32xbf16>, %i: index) {
  // expected-error @+1 {{'conv3d.load_im2col_tile' op rms_norm scale must have 8 elements (one per input channel), got 4}}
  conv3d.load_im2col_tile %x[%i, %i] limit %i into %a rms_norm(%g : memref<4xf32>) norm_eps = 1.0e-6 window = [3, 3, 3] : memref<1x4x6x6x8xbf16>, memref<32x32xbf16>
  return
}

// -----

func.func @tile_prologue_quantized(%x: memref<1x4x6x6x16xbf16>, %a: memref<32x32xbf16>, %amax: f32, %i: index) {
  // expected-error @+1 {{'conv3d.load_im2col_tile' op an input prologue (rms_norm, input_activation) cannot be combined with NVFP4 quantization of the input}}
  conv3d.load_im2col_tile %x[%i, %i] limit %i into %a input_activation = silu quantize(#conv3d.nvfp4<block_size = 16>, %amax) window = [3, 3, 3] : memref<1x4x6x6x16xbf16>, memref<32x32xbf16>
  return
}

// -----

func.func @tile_scale_without_norm(%x: memref<1x4x6x6x8xbf16>, %s: memref<1x4x6x6xf32>, %a: memref<32x32xbf16>, %i: index) {
  // expected-error @+1 {{'conv3d.load_im2col_tile' op norm_scale needs rms_norm (it holds the norm's per-voxel statistic)}}
  conv3d.load_im2col_tile %x[%i, %i] limit %i into %a norm_scale(%s : memref<1x4x6x6xf32>) input_activation = silu window = [3, 3, 3] : memref<1x4x6x6x8xbf16>, memref<32x32xbf16>
  return
}

// -----

func.func @tile_scale_shape(%x: memref<1x4x6x6x8xbf16>, %g: memref<8xf32>, %s: memref<1x4x6x6x8xf32>, %a: memref<32x32xbf16>, %i: index) {
  // expected-error @+1 {{'conv3d.load_im2col_tile' op norm_scale must be an f32 memref of the input's voxels (1x4x6x6), got 'memref<1x4x6x6x8xf32>'}}
  conv3d.load_im2col_tile %x[%i, %i] limit %i into %a rms_norm(%g : memref<8xf32>) norm_scale(%s : memref<1x4x6x6x8xf32>) norm_eps = 1.0e-6 window = [3, 3, 3] : memref<1x4x6x6x8xbf16>, memref<32x32xbf16>
  return
}

// -----

//===----------------------------------------------------------------------===//
// conv3d.voxel_rms_scale
//===----------------------------------------------------------------------===//

func.func @prepass_rank(%x: memref<4x6x6x8xbf16>, %s: memref<4x6x6xf32>) {
  // expected-error @+1 {{'conv3d.voxel_rms_scale' op input must have rank 5}}
  conv3d.voxel_rms_scale %x into %s eps = 1.0e-6 : memref<4x6x6x8xbf16>, memref<4x6x6xf32>
  return
}

// -----

func.func @prepass_type(%x: memref<1x4x6x6x8xi8>, %s: memref<1x4x6x6xf32>) {
  // expected-error @+1 {{'conv3d.voxel_rms_scale' op input element type must be bf16, f16 or f32, got 'i8'}}
  conv3d.voxel_rms_scale %x into %s eps = 1.0e-6 : memref<1x4x6x6x8xi8>, memref<1x4x6x6xf32>
  return
}

// -----

func.func @prepass_scale_type(%x: memref<1x4x6x6x8xbf16>, %s: memref<1x4x6x6xbf16>) {
  // expected-error @+1 {{'conv3d.voxel_rms_scale' op scale must be an f32 memref of the input's voxels (1x4x6x6), got 'memref<1x4x6x6xbf16>'}}
  conv3d.voxel_rms_scale %x into %s eps = 1.0e-6 : memref<1x4x6x6x8xbf16>, memref<1x4x6x6xbf16>
  return
}

// -----

func.func @prepass_eps(%x: memref<1x4x6x6x8xbf16>, %s: memref<1x4x6x6xf32>) {
  // expected-error @+1 {{'conv3d.voxel_rms_scale' op eps must be finite and positive, got 0.000000e+00}}
  conv3d.voxel_rms_scale %x into %s eps = 0.0 : memref<1x4x6x6x8xbf16>, memref<1x4x6x6xf32>
  return
}

// -----

func.func @derivative_input_activation(%x: tensor<1x4x6x6x8xbf16>, %w: tensor<3x3x3x8x16xbf16>, %i: tensor<1x2x4x4x16xf32>) {
  // expected-error @+1 {{'conv3d.conv' op input_activation = silu_backward is a derivative epilogue, not an activation of the input (relu, silu or gelu_tanh)}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xbf16>, tensor<3x3x3x8x16xbf16>) input_activation = silu_backward outs(%i : tensor<1x2x4x4x16xf32>) -> tensor<1x2x4x4x16xf32>
  return
}
