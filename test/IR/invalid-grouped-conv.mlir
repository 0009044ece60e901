// Diagnostics of conv3d.conv's `groups`: one split per diagnostic.
//
// RUN: conv3d-opt %s -split-input-file -verify-diagnostics

func.func @zero_groups(%x: tensor<1x4x6x6x8xf32>, %w: tensor<1x3x3x8x8xf32>, %o: tensor<1x4x4x4x8xf32>) -> tensor<1x4x4x4x8xf32> {
  // expected-error @+1 {{'conv3d.conv' op groups must be positive, got 0}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf32>, tensor<1x3x3x8x8xf32>) outs(%o : tensor<1x4x4x4x8xf32>) groups = 0 -> tensor<1x4x4x4x8xf32>
  return %0 : tensor<1x4x4x4x8xf32>
}

// -----

func.func @negative_groups(%x: tensor<1x4x6x6x8xf32>, %w: tensor<1x3x3x8x8xf32>, %o: tensor<1x4x4x4x8xf32>) -> tensor<1x4x4x4x8xf32> {
  // expected-error @+1 {{'conv3d.conv' op groups must be positive, got -2}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf32>, tensor<1x3x3x8x8xf32>) outs(%o : tensor<1x4x4x4x8xf32>) groups = -2 -> tensor<1x4x4x4x8xf32>
  return %0 : tensor<1x4x4x4x8xf32>
}

// -----

func.func @channels_not_divisible(%x: tensor<1x4x6x6x9xf32>, %w: tensor<1x3x3x2x8xf32>, %o: tensor<1x4x4x4x8xf32>) -> tensor<1x4x4x4x8xf32> {
  // expected-error @+1 {{'conv3d.conv' op the 9 input channels do not split into 4 groups (C must be a multiple of groups)}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x9xf32>, tensor<1x3x3x2x8xf32>) outs(%o : tensor<1x4x4x4x8xf32>) groups = 4 -> tensor<1x4x4x4x8xf32>
  return %0 : tensor<1x4x4x4x8xf32>
}

// -----

func.func @filters_not_divisible(%x: tensor<1x4x6x6x8xf32>, %w: tensor<1x3x3x2x6xf32>, %o: tensor<1x4x4x4x6xf32>) -> tensor<1x4x4x4x6xf32> {
  // expected-error @+1 {{'conv3d.conv' op the 6 filters do not split into 4 groups (F must be a multiple of groups)}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf32>, tensor<1x3x3x2x6xf32>) outs(%o : tensor<1x4x4x4x6xf32>) groups = 4 -> tensor<1x4x4x4x6xf32>
  return %0 : tensor<1x4x4x4x6xf32>
}

// -----

// The filter holds C/groups channels (PyTorch's weight), not C.
func.func @filter_has_all_channels(%x: tensor<1x4x6x6x8xf32>, %w: tensor<1x3x3x8x8xf32>, %o: tensor<1x4x4x4x8xf32>) -> tensor<1x4x4x4x8xf32> {
  // expected-error @+1 {{'conv3d.conv' op filter has 8 input channels but a group of the input has 2 (C = 8, groups = 4, filter_layout = qrscf)}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf32>, tensor<1x3x3x8x8xf32>) outs(%o : tensor<1x4x4x4x8xf32>) groups = 4 -> tensor<1x4x4x4x8xf32>
  return %0 : tensor<1x4x4x4x8xf32>
}

// -----

func.func @quantized(%x: tensor<1x4x6x6x32xbf16>, %w: tensor<1x3x3x16x32xbf16>, %o: tensor<1x4x4x4x32xbf16>, %amax: f32) -> tensor<1x4x4x4x32xbf16> {
  // expected-error @+1 {{'conv3d.conv' op input quantization (quantize) of a grouped convolution is not supported: NVFP4 blocks run along the dense K order}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x32xbf16>, tensor<1x3x3x16x32xbf16>) quantize(#conv3d.nvfp4<block_size = 16>, %amax) outs(%o : tensor<1x4x4x4x32xbf16>) groups = 2 -> tensor<1x4x4x4x32xbf16>
  return %0 : tensor<1x4x4x4x32xbf16>
}

// -----

func.func @dynamic_channels(%x: tensor<1x4x6x6x?xf32>, %w: tensor<1x3x3x2x8xf32>, %o: tensor<1x4x4x4x8xf32>) -> tensor<1x4x4x4x8xf32> {
  // expected-error @+1 {{'conv3d.conv' op a grouped convolution needs a static channel count}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x?xf32>, tensor<1x3x3x2x8xf32>) outs(%o : tensor<1x4x4x4x8xf32>) groups = 4 -> tensor<1x4x4x4x8xf32>
  return %0 : tensor<1x4x4x4x8xf32>
}

// -----

func.func @groups_twice(%x: tensor<1x4x6x6x8xf32>, %w: tensor<1x3x3x2x8xf32>, %o: tensor<1x4x4x4x8xf32>) -> tensor<1x4x4x4x8xf32> {
  // expected-error @+1 {{'groups' is given twice}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf32>, tensor<1x3x3x2x8xf32>) outs(%o : tensor<1x4x4x4x8xf32>) groups = 4 groups = 4 -> tensor<1x4x4x4x8xf32>
  return %0 : tensor<1x4x4x4x8xf32>
}

// -----

func.func @packed_filter(%x: memref<1x4x6x6x32xf16>, %w: memref<16x1x3x3x8xi8>, %s: memref<16x1x3x3x1xi8>, %wamax: f32, %o: memref<1x4x4x4x16xf32>) {
  // expected-error @+1 {{'conv3d.conv' op a packed NVFP4 filter (filter_quant) takes groups = 1 only}}
  conv3d.conv ins(%x, %w : memref<1x4x6x6x32xf16>, memref<16x1x3x3x8xi8>) filter_quant(#conv3d.nvfp4<block_size = 16>, %s : memref<16x1x3x3x1xi8>, %wamax) outs(%o : memref<1x4x4x4x16xf32>) filter_layout = fqrsc groups = 2
  return
}

// -----

// A huge group count is divided into C, never multiplied (no overflow).
func.func @huge_groups(%x: tensor<1x4x6x6x8xf32>, %w: tensor<1x3x3x2x8xf32>, %o: tensor<1x4x4x4x8xf32>) -> tensor<1x4x4x4x8xf32> {
  // expected-error @+1 {{'conv3d.conv' op the 8 input channels do not split into 4611686018427387904 groups (C must be a multiple of groups)}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf32>, tensor<1x3x3x2x8xf32>) outs(%o : tensor<1x4x4x4x8xf32>) groups = 4611686018427387904 -> tensor<1x4x4x4x8xf32>
  return %0 : tensor<1x4x4x4x8xf32>
}
