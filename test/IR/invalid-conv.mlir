// Diagnostics of the conv3d.conv verifier, including the geometry checks of
// ConvGeometry::validate(). One split per diagnostic.
//
// RUN: conv3d-opt %s -split-input-file -verify-diagnostics

//===----------------------------------------------------------------------===//
// Tensor / memref form
//===----------------------------------------------------------------------===//

func.func @mixed_tensor_input_memref_init(%x: tensor<1x4x6x6x8xf32>, %w: tensor<1x3x3x8x16xf32>, %init: memref<1x4x4x4x16xf32>) {
  // expected-error @+1 {{'conv3d.conv' op operands must be all tensors or all memrefs, not a mix}}
  conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf32>, tensor<1x3x3x8x16xf32>) outs(%init : memref<1x4x4x4x16xf32>)
  return
}

// -----

func.func @mixed_memref_input_tensor_init(%x: memref<1x4x6x6x8xf32>, %w: memref<1x3x3x8x16xf32>, %init: tensor<1x4x4x4x16xf32>) {
  // expected-error @+1 {{'conv3d.conv' op operands must be all tensors or all memrefs, not a mix}}
  %0 = conv3d.conv ins(%x, %w : memref<1x4x6x6x8xf32>, memref<1x3x3x8x16xf32>) outs(%init : tensor<1x4x4x4x16xf32>) -> tensor<1x4x4x4x16xf32>
  return
}

// -----

func.func @mixed_memref_bias(%x: tensor<1x4x6x6x8xf32>, %w: tensor<1x3x3x8x16xf32>, %b: memref<16xf32>, %init: tensor<1x4x4x4x16xf32>) {
  // expected-error @+1 {{'conv3d.conv' op operands must be all tensors or all memrefs, not a mix}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf32>, tensor<1x3x3x8x16xf32>) bias(%b : memref<16xf32>) outs(%init : tensor<1x4x4x4x16xf32>) -> tensor<1x4x4x4x16xf32>
  return
}

// -----

func.func @tensor_no_result(%x: tensor<1x4x6x6x8xf32>, %w: tensor<1x3x3x8x16xf32>, %init: tensor<1x4x4x4x16xf32>) {
  // expected-error @+1 {{'conv3d.conv' op on tensors must have exactly one result}}
  conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf32>, tensor<1x3x3x8x16xf32>) outs(%init : tensor<1x4x4x4x16xf32>)
  return
}

// -----

func.func @tensor_two_results(%x: tensor<1x4x6x6x8xf32>, %w: tensor<1x3x3x8x16xf32>, %init: tensor<1x4x4x4x16xf32>) {
  // expected-error @+1 {{'conv3d.conv' op on tensors must have exactly one result}}
  %0:2 = "conv3d.conv"(%x, %w, %init) <{operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0>}> : (tensor<1x4x6x6x8xf32>, tensor<1x3x3x8x16xf32>, tensor<1x4x4x4x16xf32>) -> (tensor<1x4x4x4x16xf32>, tensor<1x4x4x4x16xf32>)
  return
}

// -----

func.func @result_type_mismatch(%x: tensor<1x4x6x6x8xf32>, %w: tensor<1x3x3x8x16xf32>, %init: tensor<1x4x4x4x16xf32>) {
  // expected-error @+1 {{'conv3d.conv' op result type 'tensor<1x4x4x4x16xbf16>' must match the outs operand type 'tensor<1x4x4x4x16xf32>'}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf32>, tensor<1x3x3x8x16xf32>) outs(%init : tensor<1x4x4x4x16xf32>) -> tensor<1x4x4x4x16xbf16>
  return
}

// -----

func.func @memref_with_result(%x: memref<1x4x6x6x8xf32>, %w: memref<1x3x3x8x16xf32>, %init: memref<1x4x4x4x16xf32>) {
  // expected-error @+1 {{'conv3d.conv' op on memrefs must not have results}}
  %0 = conv3d.conv ins(%x, %w : memref<1x4x6x6x8xf32>, memref<1x3x3x8x16xf32>) outs(%init : memref<1x4x4x4x16xf32>) -> tensor<1x4x4x4x16xf32>
  return
}

//===----------------------------------------------------------------------===//
// Ranks and attribute array sizes
//===----------------------------------------------------------------------===//

// -----

func.func @input_rank(%x: tensor<4x6x6x8xf32>, %w: tensor<1x3x3x8x16xf32>, %init: tensor<1x4x4x4x16xf32>) {
  // expected-error @+1 {{'conv3d.conv' op input must have rank 5, got rank 4}}
  %0 = conv3d.conv ins(%x, %w : tensor<4x6x6x8xf32>, tensor<1x3x3x8x16xf32>) outs(%init : tensor<1x4x4x4x16xf32>) -> tensor<1x4x4x4x16xf32>
  return
}

// -----

func.func @filter_rank(%x: tensor<1x4x6x6x8xf32>, %w: tensor<3x3x8x16xf32>, %init: tensor<1x4x4x4x16xf32>) {
  // expected-error @+1 {{'conv3d.conv' op filter must have rank 5, got rank 4}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf32>, tensor<3x3x8x16xf32>) outs(%init : tensor<1x4x4x4x16xf32>) -> tensor<1x4x4x4x16xf32>
  return
}

// -----

func.func @outs_rank(%x: memref<1x4x6x6x8xf32>, %w: memref<1x3x3x8x16xf32>, %init: memref<1x4x4x4x16x1xf32>) {
  // expected-error @+1 {{'conv3d.conv' op outs must have rank 5, got rank 6}}
  conv3d.conv ins(%x, %w : memref<1x4x6x6x8xf32>, memref<1x3x3x8x16xf32>) outs(%init : memref<1x4x4x4x16x1xf32>)
  return
}

// -----

func.func @strides_size(%x: tensor<1x4x6x6x8xf32>, %w: tensor<1x3x3x8x16xf32>, %init: tensor<1x4x4x4x16xf32>) {
  // expected-error @+1 {{'conv3d.conv' op strides must have 3 values, got 2}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf32>, tensor<1x3x3x8x16xf32>) outs(%init : tensor<1x4x4x4x16xf32>) strides = [1, 1] -> tensor<1x4x4x4x16xf32>
  return
}

// -----

func.func @dilations_size(%x: tensor<1x4x6x6x8xf32>, %w: tensor<1x3x3x8x16xf32>, %init: tensor<1x4x4x4x16xf32>) {
  // expected-error @+1 {{'conv3d.conv' op dilations must have 3 values, got 4}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf32>, tensor<1x3x3x8x16xf32>) outs(%init : tensor<1x4x4x4x16xf32>) dilations = [1, 1, 1, 1] -> tensor<1x4x4x4x16xf32>
  return
}

// -----

func.func @padding_size(%x: tensor<1x4x6x6x8xf32>, %w: tensor<1x3x3x8x16xf32>, %init: tensor<1x4x4x4x16xf32>) {
  // expected-error @+1 {{'conv3d.conv' op padding must have 6 values, got 3}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf32>, tensor<1x3x3x8x16xf32>) outs(%init : tensor<1x4x4x4x16xf32>) padding = [0, 0, 0] -> tensor<1x4x4x4x16xf32>
  return
}

//===----------------------------------------------------------------------===//
// Element types
//===----------------------------------------------------------------------===//

// -----

func.func @input_element_type(%x: tensor<1x4x6x6x8xi8>, %w: tensor<1x3x3x8x16xi8>, %init: tensor<1x4x4x4x16xf32>) {
  // expected-error @+1 {{'conv3d.conv' op input element type must be bf16, f16 or f32, got 'i8'}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xi8>, tensor<1x3x3x8x16xi8>) outs(%init : tensor<1x4x4x4x16xf32>) -> tensor<1x4x4x4x16xf32>
  return
}

// -----

func.func @input_element_type_f64(%x: tensor<1x4x6x6x8xf64>, %w: tensor<1x3x3x8x16xf64>, %init: tensor<1x4x4x4x16xf64>) {
  // expected-error @+1 {{'conv3d.conv' op input element type must be bf16, f16 or f32, got 'f64'}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf64>, tensor<1x3x3x8x16xf64>) outs(%init : tensor<1x4x4x4x16xf64>) -> tensor<1x4x4x4x16xf64>
  return
}

// -----

func.func @filter_element_type(%x: tensor<1x4x6x6x8xbf16>, %w: tensor<1x3x3x8x16xf16>, %init: tensor<1x4x4x4x16xf32>) {
  // expected-error @+1 {{'conv3d.conv' op filter element type 'f16' must match the input element type 'bf16'}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xbf16>, tensor<1x3x3x8x16xf16>) outs(%init : tensor<1x4x4x4x16xf32>) -> tensor<1x4x4x4x16xf32>
  return
}

// -----

func.func @outs_element_type(%x: tensor<1x4x6x6x8xbf16>, %w: tensor<1x3x3x8x16xbf16>, %init: tensor<1x4x4x4x16xf16>) {
  // expected-error @+1 {{'conv3d.conv' op outs element type must be f32 or the input element type 'bf16', got 'f16'}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xbf16>, tensor<1x3x3x8x16xbf16>) outs(%init : tensor<1x4x4x4x16xf16>) -> tensor<1x4x4x4x16xf16>
  return
}

//===----------------------------------------------------------------------===//
// Channels
//===----------------------------------------------------------------------===//

// -----

func.func @channel_mismatch_qrscf(%x: tensor<1x4x6x6x8xf32>, %w: tensor<1x3x3x16x16xf32>, %init: tensor<1x4x4x4x16xf32>) {
  // expected-error @+1 {{'conv3d.conv' op filter has 16 input channels but the input has 8 (filter_layout = qrscf)}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf32>, tensor<1x3x3x16x16xf32>) outs(%init : tensor<1x4x4x4x16xf32>) -> tensor<1x4x4x4x16xf32>
  return
}

// -----

// A QRSCF filter read as FQRSC: its last dimension (F = 16) is taken for C.
func.func @channel_mismatch_fqrsc(%x: tensor<1x4x6x6x8xf32>, %w: tensor<1x3x3x8x16xf32>, %init: tensor<1x4x4x4x16xf32>) {
  // expected-error @+1 {{'conv3d.conv' op filter has 16 input channels but the input has 8 (filter_layout = fqrsc)}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf32>, tensor<1x3x3x8x16xf32>) outs(%init : tensor<1x4x4x4x16xf32>) filter_layout = fqrsc -> tensor<1x4x4x4x16xf32>
  return
}

// -----

func.func @dynamic_filter_channels(%x: tensor<1x4x6x6x8xf32>, %w: tensor<1x3x3x?x16xf32>, %init: tensor<1x4x4x4x16xf32>) {
  // expected-error @+1 {{'conv3d.conv' op channel, filter and window sizes must be static}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf32>, tensor<1x3x3x?x16xf32>) outs(%init : tensor<1x4x4x4x16xf32>) -> tensor<1x4x4x4x16xf32>
  return
}

// -----

func.func @dynamic_filter_channels_fqrsc(%x: tensor<1x4x6x6x8xf32>, %w: tensor<16x1x3x3x?xf32>, %init: tensor<1x4x4x4x16xf32>) {
  // expected-error @+1 {{'conv3d.conv' op channel, filter and window sizes must be static}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf32>, tensor<16x1x3x3x?xf32>) outs(%init : tensor<1x4x4x4x16xf32>) filter_layout = fqrsc -> tensor<1x4x4x4x16xf32>
  return
}

//===----------------------------------------------------------------------===//
// Geometry (ConvGeometry::validate)
//===----------------------------------------------------------------------===//

// -----

func.func @dynamic_input_channels(%x: tensor<1x4x6x6x?xf32>, %w: tensor<1x3x3x8x16xf32>, %init: tensor<1x4x4x4x16xf32>) {
  // expected-error @+1 {{'conv3d.conv' op channel, filter and window sizes must be static}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x?xf32>, tensor<1x3x3x8x16xf32>) outs(%init : tensor<1x4x4x4x16xf32>) -> tensor<1x4x4x4x16xf32>
  return
}

// -----

func.func @dynamic_filters(%x: tensor<1x4x6x6x8xf32>, %w: tensor<1x3x3x8x?xf32>, %init: tensor<1x4x4x4x16xf32>) {
  // expected-error @+1 {{'conv3d.conv' op channel, filter and window sizes must be static}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf32>, tensor<1x3x3x8x?xf32>) outs(%init : tensor<1x4x4x4x16xf32>) -> tensor<1x4x4x4x16xf32>
  return
}

// -----

func.func @dynamic_window(%x: tensor<1x4x6x6x8xf32>, %w: tensor<1x?x3x8x16xf32>, %init: tensor<1x4x4x4x16xf32>) {
  // expected-error @+1 {{'conv3d.conv' op channel, filter and window sizes must be static}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf32>, tensor<1x?x3x8x16xf32>) outs(%init : tensor<1x4x4x4x16xf32>) -> tensor<1x4x4x4x16xf32>
  return
}

// -----

func.func @zero_channels(%x: tensor<1x4x6x6x0xf32>, %w: tensor<1x3x3x0x16xf32>, %init: tensor<1x4x4x4x16xf32>) {
  // expected-error @+1 {{'conv3d.conv' op channel count must be positive, got 0}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x0xf32>, tensor<1x3x3x0x16xf32>) outs(%init : tensor<1x4x4x4x16xf32>) -> tensor<1x4x4x4x16xf32>
  return
}

// -----

func.func @zero_filters(%x: tensor<1x4x6x6x8xf32>, %w: tensor<0x1x3x3x8xf32>, %init: tensor<1x4x4x4x0xf32>) {
  // expected-error @+1 {{'conv3d.conv' op filter count must be positive, got 0}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf32>, tensor<0x1x3x3x8xf32>) outs(%init : tensor<1x4x4x4x0xf32>) filter_layout = fqrsc -> tensor<1x4x4x4x0xf32>
  return
}

// -----

func.func @zero_batch(%x: tensor<0x4x6x6x8xf32>, %w: tensor<1x3x3x8x16xf32>, %init: tensor<0x4x4x4x16xf32>) {
  // expected-error @+1 {{'conv3d.conv' op batch size must be positive, got 0}}
  %0 = conv3d.conv ins(%x, %w : tensor<0x4x6x6x8xf32>, tensor<1x3x3x8x16xf32>) outs(%init : tensor<0x4x4x4x16xf32>) -> tensor<0x4x4x4x16xf32>
  return
}

// -----

func.func @zero_window(%x: tensor<1x4x6x6x8xf32>, %w: tensor<0x3x3x8x16xf32>, %init: tensor<1x4x4x4x16xf32>) {
  // expected-error @+1 {{'conv3d.conv' op filter window along depth must be positive, got 0}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf32>, tensor<0x3x3x8x16xf32>) outs(%init : tensor<1x4x4x4x16xf32>) -> tensor<1x4x4x4x16xf32>
  return
}

// -----

func.func @zero_stride(%x: tensor<1x4x6x6x8xf32>, %w: tensor<1x3x3x8x16xf32>, %init: tensor<1x4x4x4x16xf32>) {
  // expected-error @+1 {{'conv3d.conv' op stride along height must be positive, got 0}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf32>, tensor<1x3x3x8x16xf32>) outs(%init : tensor<1x4x4x4x16xf32>) strides = [1, 0, 1] -> tensor<1x4x4x4x16xf32>
  return
}

// -----

func.func @negative_stride(%x: tensor<1x4x6x6x8xf32>, %w: tensor<1x3x3x8x16xf32>, %init: tensor<1x4x4x4x16xf32>) {
  // expected-error @+1 {{'conv3d.conv' op stride along width must be positive, got -2}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf32>, tensor<1x3x3x8x16xf32>) outs(%init : tensor<1x4x4x4x16xf32>) strides = [1, 1, -2] -> tensor<1x4x4x4x16xf32>
  return
}

// -----

func.func @zero_dilation(%x: tensor<1x4x6x6x8xf32>, %w: tensor<1x3x3x8x16xf32>, %init: tensor<1x4x4x4x16xf32>) {
  // expected-error @+1 {{'conv3d.conv' op dilation along depth must be positive, got 0}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf32>, tensor<1x3x3x8x16xf32>) outs(%init : tensor<1x4x4x4x16xf32>) dilations = [0, 1, 1] -> tensor<1x4x4x4x16xf32>
  return
}

// -----

func.func @negative_dilation(%x: tensor<1x4x6x6x8xf32>, %w: tensor<1x3x3x8x16xf32>, %init: tensor<1x4x4x4x16xf32>) {
  // expected-error @+1 {{'conv3d.conv' op dilation along width must be positive, got -1}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf32>, tensor<1x3x3x8x16xf32>) outs(%init : tensor<1x4x4x4x16xf32>) dilations = [1, 1, -1] -> tensor<1x4x4x4x16xf32>
  return
}

// -----

func.func @negative_padding_low(%x: tensor<1x4x6x6x8xf32>, %w: tensor<1x3x3x8x16xf32>, %init: tensor<1x4x4x4x16xf32>) {
  // expected-error @+1 {{'conv3d.conv' op padding along depth must be non-negative, got [-1, 0]}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf32>, tensor<1x3x3x8x16xf32>) outs(%init : tensor<1x4x4x4x16xf32>) padding = [-1, 0, 0, 0, 0, 0] -> tensor<1x4x4x4x16xf32>
  return
}

// -----

func.func @negative_padding_high(%x: tensor<1x4x6x6x8xf32>, %w: tensor<1x3x3x8x16xf32>, %init: tensor<1x4x4x4x16xf32>) {
  // expected-error @+1 {{'conv3d.conv' op padding along width must be non-negative, got [1, -1]}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf32>, tensor<1x3x3x8x16xf32>) outs(%init : tensor<1x4x4x4x16xf32>) padding = [0, 0, 0, 0, 1, -1] -> tensor<1x4x4x4x16xf32>
  return
}

// -----

func.func @zero_input_size(%x: tensor<1x4x0x6x8xf32>, %w: tensor<1x3x3x8x16xf32>, %init: tensor<1x4x4x4x16xf32>) {
  // expected-error @+1 {{'conv3d.conv' op input height must be positive, got 0}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x0x6x8xf32>, tensor<1x3x3x8x16xf32>) outs(%init : tensor<1x4x4x4x16xf32>) -> tensor<1x4x4x4x16xf32>
  return
}

// -----

func.func @empty_output(%x: tensor<1x4x6x2x8xf32>, %w: tensor<1x3x3x8x16xf32>, %init: tensor<1x4x4x1x16xf32>) {
  // expected-error @+1 {{'conv3d.conv' op empty output: the dilated window along width spans 3 but the padded input has 2}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x2x8xf32>, tensor<1x3x3x8x16xf32>) outs(%init : tensor<1x4x4x1x16xf32>) -> tensor<1x4x4x1x16xf32>
  return
}

// -----

// Dilation 3 spreads a 3-tap window over 7 positions; padding counts.
func.func @empty_output_dilated(%x: tensor<1x4x6x6x8xf32>, %w: tensor<3x3x3x8x16xf32>, %init: tensor<1x1x4x4x16xf32>) {
  // expected-error @+1 {{'conv3d.conv' op empty output: the dilated window along depth spans 7 but the padded input has 6}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf32>, tensor<3x3x3x8x16xf32>) outs(%init : tensor<1x1x4x4x16xf32>) dilations = [3, 1, 1] padding = [2, 0, 0, 0, 0, 0] -> tensor<1x1x4x4x16xf32>
  return
}

//===----------------------------------------------------------------------===//
// Destination shape
//===----------------------------------------------------------------------===//

// -----

// The expected output size is unknown (dynamic input), but 0 is never valid.
func.func @empty_outs(%x: tensor<?x4x6x6x8xf32>, %w: tensor<1x3x3x8x16xf32>, %init: tensor<0x4x4x4x16xf32>) {
  // expected-error @+1 {{'conv3d.conv' op outs must not be empty, got shape 0x4x4x4x16}}
  %0 = conv3d.conv ins(%x, %w : tensor<?x4x6x6x8xf32>, tensor<1x3x3x8x16xf32>) outs(%init : tensor<0x4x4x4x16xf32>) -> tensor<0x4x4x4x16xf32>
  return
}

// -----

func.func @outs_shape(%x: tensor<1x4x6x6x8xf32>, %w: tensor<1x3x3x8x16xf32>, %init: tensor<1x4x4x4x8xf32>) {
  // expected-error @+1 {{'conv3d.conv' op outs shape 1x4x4x4x8 is inconsistent with the expected 1x4x4x4x16}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf32>, tensor<1x3x3x8x16xf32>) outs(%init : tensor<1x4x4x4x8xf32>) -> tensor<1x4x4x4x8xf32>
  return
}

// -----

// Strides, dilations and padding all enter the expected shape:
// depth (4 + 2 - 3) / 1 + 1 = 4, height (6 + 2 - 5) / 2 + 1 = 2,
// width (6 - 3) / 3 + 1 = 2.
func.func @outs_shape_strided(%x: tensor<2x4x6x6x8xf32>, %w: tensor<3x3x3x8x16xf32>, %init: tensor<2x4x3x2x16xf32>) {
  // expected-error @+1 {{'conv3d.conv' op outs shape 2x4x3x2x16 is inconsistent with the expected 2x4x2x2x16}}
  %0 = conv3d.conv ins(%x, %w : tensor<2x4x6x6x8xf32>, tensor<3x3x3x8x16xf32>) outs(%init : tensor<2x4x3x2x16xf32>) strides = [1, 2, 3] dilations = [1, 2, 1] padding = [2, 0, 1, 1, 0, 0] -> tensor<2x4x3x2x16xf32>
  return
}

// -----

// Dynamic input sizes stay dynamic in the expected shape.
func.func @outs_shape_dynamic(%x: memref<?x?x6x6x8xf32>, %w: memref<1x3x3x8x16xf32>, %init: memref<?x?x4x5x16xf32>) {
  // expected-error @+1 {{'conv3d.conv' op outs shape ?x?x4x5x16 is inconsistent with the expected ?x?x4x4x16}}
  conv3d.conv ins(%x, %w : memref<?x?x6x6x8xf32>, memref<1x3x3x8x16xf32>) outs(%init : memref<?x?x4x5x16xf32>)
  return
}

//===----------------------------------------------------------------------===//
// Bias and residual
//===----------------------------------------------------------------------===//

// -----

func.func @bias_rank(%x: tensor<1x4x6x6x8xf32>, %w: tensor<1x3x3x8x16xf32>, %b: tensor<1x16xf32>, %init: tensor<1x4x4x4x16xf32>) {
  // expected-error @+1 {{'conv3d.conv' op bias must have rank 1, got rank 2}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf32>, tensor<1x3x3x8x16xf32>) bias(%b : tensor<1x16xf32>) outs(%init : tensor<1x4x4x4x16xf32>) -> tensor<1x4x4x4x16xf32>
  return
}

// -----

func.func @bias_size(%x: tensor<1x4x6x6x8xf32>, %w: tensor<1x3x3x8x16xf32>, %b: tensor<8xf32>, %init: tensor<1x4x4x4x16xf32>) {
  // expected-error @+1 {{'conv3d.conv' op bias must have 16 elements (one per filter), got 8}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf32>, tensor<1x3x3x8x16xf32>) bias(%b : tensor<8xf32>) outs(%init : tensor<1x4x4x4x16xf32>) -> tensor<1x4x4x4x16xf32>
  return
}

// -----

func.func @bias_element_type(%x: tensor<1x4x6x6x8xbf16>, %w: tensor<1x3x3x8x16xbf16>, %b: tensor<16xf64>, %init: tensor<1x4x4x4x16xbf16>) {
  // expected-error @+1 {{'conv3d.conv' op bias element type must be bf16, f16 or f32, got 'f64'}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xbf16>, tensor<1x3x3x8x16xbf16>) bias(%b : tensor<16xf64>) outs(%init : tensor<1x4x4x4x16xbf16>) -> tensor<1x4x4x4x16xbf16>
  return
}

// -----

// The bias is added to the f32 accumulator of an f32 destination: a bf16
// bias is neither f32 nor the output element type.
func.func @bias_element_type_f32_outs(%x: tensor<1x4x6x6x8xbf16>, %w: tensor<1x3x3x8x16xbf16>, %b: tensor<16xf64>, %init: tensor<1x4x4x4x16xf32>) {
  // expected-error @+1 {{'conv3d.conv' op bias element type must be bf16, f16 or f32, got 'f64'}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xbf16>, tensor<1x3x3x8x16xbf16>) bias(%b : tensor<16xf64>) outs(%init : tensor<1x4x4x4x16xf32>) -> tensor<1x4x4x4x16xf32>
  return
}

// -----

func.func @residual_rank(%x: tensor<1x4x6x6x8xf32>, %w: tensor<1x3x3x8x16xf32>, %r: tensor<4x4x4x16xf32>, %init: tensor<1x4x4x4x16xf32>) {
  // expected-error @+1 {{'conv3d.conv' op residual must have rank 5, got rank 4}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf32>, tensor<1x3x3x8x16xf32>) residual(%r : tensor<4x4x4x16xf32>) outs(%init : tensor<1x4x4x4x16xf32>) -> tensor<1x4x4x4x16xf32>
  return
}

// -----

func.func @residual_shape(%x: tensor<1x4x6x6x8xf32>, %w: tensor<1x3x3x8x16xf32>, %r: tensor<1x4x4x?x8xf32>, %init: tensor<1x4x4x4x16xf32>) {
  // expected-error @+1 {{'conv3d.conv' op residual shape 1x4x4x?x8 is inconsistent with the expected 1x4x4x4x16}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf32>, tensor<1x3x3x8x16xf32>) residual(%r : tensor<1x4x4x?x8xf32>) outs(%init : tensor<1x4x4x4x16xf32>) -> tensor<1x4x4x4x16xf32>
  return
}

// -----

func.func @residual_element_type(%x: tensor<1x4x6x6x8xf16>, %w: tensor<1x3x3x8x16xf16>, %r: tensor<1x4x4x4x16xf64>, %init: tensor<1x4x4x4x16xf16>) {
  // expected-error @+1 {{'conv3d.conv' op residual element type must be bf16, f16 or f32, got 'f64'}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf16>, tensor<1x3x3x8x16xf16>) residual(%r : tensor<1x4x4x4x16xf64>) outs(%init : tensor<1x4x4x4x16xf16>) -> tensor<1x4x4x4x16xf16>
  return
}

//===----------------------------------------------------------------------===//
// Input quantization and tile configuration
//===----------------------------------------------------------------------===//

// -----

// The custom syntax always carries both; the generic form can drop one.
func.func @quant_without_amax(%x: tensor<1x4x6x6x16xf32>, %w: tensor<1x3x3x16x16xf32>, %init: tensor<1x4x4x4x16xf32>) {
  // expected-error @+1 {{'conv3d.conv' op input quantization needs both an NVFP4 attribute and an amax operand}}
  %0 = "conv3d.conv"(%x, %w, %init) <{input_quant = #conv3d.nvfp4<block_size = 16>, operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0>}> : (tensor<1x4x6x6x16xf32>, tensor<1x3x3x16x16xf32>, tensor<1x4x4x4x16xf32>) -> tensor<1x4x4x4x16xf32>
  return
}

// -----

func.func @amax_without_quant(%x: tensor<1x4x6x6x16xf32>, %w: tensor<1x3x3x16x16xf32>, %amax: f32, %init: tensor<1x4x4x4x16xf32>) {
  // expected-error @+1 {{'conv3d.conv' op input quantization needs both an NVFP4 attribute and an amax operand}}
  %0 = "conv3d.conv"(%x, %w, %amax, %init) <{operandSegmentSizes = array<i32: 1, 1, 0, 0, 1, 1, 0, 0, 0, 0, 0>}> : (tensor<1x4x6x6x16xf32>, tensor<1x3x3x16x16xf32>, f32, tensor<1x4x4x4x16xf32>) -> tensor<1x4x4x4x16xf32>
  return
}

// -----

func.func @config_tile_k_vs_block_size(%x: tensor<1x4x6x6x16xf32>, %w: tensor<1x3x3x16x16xf32>, %amax: f32, %init: tensor<1x4x4x4x16xf32>) {
  // expected-error @+1 {{'conv3d.conv' op config tile_k = 48 must be a multiple of the NVFP4 block size 32 (tile loads quantize whole blocks)}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x16xf32>, tensor<1x3x3x16x16xf32>) quantize(#conv3d.nvfp4<block_size = 32>, %amax) outs(%init : tensor<1x4x4x4x16xf32>) config = #conv3d.igemm_config<tile_m = 64, tile_n = 16, tile_k = 48> -> tensor<1x4x4x4x16xf32>
  return
}

// -----

// R*S*C = 3*3*8 = 72 is not a multiple of 16: the blocks of a depth slice
// would straddle two slices.
func.func @qslice_outer_splits_blocks(%x: tensor<1x4x6x6x8xf32>, %w: tensor<3x3x3x8x16xf32>, %amax: f32, %init: tensor<1x2x4x4x16xf32>) {
  // expected-error @+1 {{'conv3d.conv' op k_order = qslice_outer splits NVFP4 blocks: R*S*C = 72 is not a multiple of the block size 16}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf32>, tensor<3x3x3x8x16xf32>) quantize(#conv3d.nvfp4<block_size = 16>, %amax) outs(%init : tensor<1x2x4x4x16xf32>) config = #conv3d.igemm_config<tile_m = 64, tile_n = 16, tile_k = 32, k_order = qslice_outer> -> tensor<1x2x4x4x16xf32>
  return
}

// -----

// The same op is valid with the default k_order = taps_outer; with
// qslice_outer, the FQRSC layout gives the same R*S*C.
func.func @qslice_outer_splits_blocks_fqrsc(%x: tensor<1x4x6x6x8xf32>, %w: tensor<16x3x3x3x8xf32>, %amax: f32, %init: tensor<1x2x4x4x16xf32>) {
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf32>, tensor<16x3x3x3x8xf32>) quantize(#conv3d.nvfp4<block_size = 16>, %amax) outs(%init : tensor<1x2x4x4x16xf32>) filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 64, tile_n = 16, tile_k = 32> -> tensor<1x2x4x4x16xf32>
  // expected-error @+1 {{'conv3d.conv' op k_order = qslice_outer splits NVFP4 blocks: R*S*C = 72 is not a multiple of the block size 16}}
  %1 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf32>, tensor<16x3x3x3x8xf32>) quantize(#conv3d.nvfp4<block_size = 16>, %amax) outs(%0 : tensor<1x2x4x4x16xf32>) filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 64, tile_n = 16, tile_k = 32, k_order = qslice_outer> -> tensor<1x2x4x4x16xf32>
  return
}

// -----

func.func @conv_huge_dilation(%x: tensor<1x8x8x8x4xf32>, %w: tensor<3x3x3x4x8xf32>, %o: tensor<1x6x6x6x8xf32>) {
  // expected-error @+1 {{dilation along height 4611686018427387904 exceeds the supported maximum 1048576}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x8x8x8x4xf32>, tensor<3x3x3x4x8xf32>) outs(%o : tensor<1x6x6x6x8xf32>) dilations = [1, 4611686018427387904, 1] -> tensor<1x6x6x6x8xf32>
  return
}

// -----

func.func @conv_huge_padding(%x: tensor<1x8x8x8x4xf32>, %w: tensor<3x3x3x4x8xf32>, %o: tensor<1x6x6x6x8xf32>) {
  // expected-error @+1 {{padding along depth 9223372036854775807 exceeds the supported maximum 1048576}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x8x8x8x4xf32>, tensor<3x3x3x4x8xf32>) outs(%o : tensor<1x6x6x6x8xf32>) padding = [9223372036854775807, 0, 0, 0, 0, 0] -> tensor<1x6x6x6x8xf32>
  return
}

// -----

func.func @conv_too_many_elements(%x: tensor<2147483648x2147483648x1x1x4xf32>, %w: tensor<1x1x1x4x8xf32>, %o: tensor<2147483648x2147483648x1x1x8xf32>) {
  // expected-error @+1 {{the input has 1.844674e+19 elements, more than supported}}
  %0 = conv3d.conv ins(%x, %w : tensor<2147483648x2147483648x1x1x4xf32>, tensor<1x1x1x4x8xf32>) outs(%o : tensor<2147483648x2147483648x1x1x8xf32>) -> tensor<2147483648x2147483648x1x1x8xf32>
  return
}

// -----

func.func @derivative_epilogue_without_residual(%x: tensor<1x4x6x6x8xf32>, %w: tensor<1x3x3x8x16xf32>, %init: tensor<1x4x4x4x16xf32>) {
  // expected-error @+1 {{'conv3d.conv' op activation = relu_backward multiplies by the derivative at the forward's pre-activation, which it reads as the residual operand; there is none}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf32>, tensor<1x3x3x8x16xf32>) outs(%init : tensor<1x4x4x4x16xf32>) activation = relu_backward -> tensor<1x4x4x4x16xf32>
  return
}
