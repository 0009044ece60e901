// Diagnostics of the conv3d.quantize and conv3d.epilogue verifiers. One split
// per diagnostic.
//
// RUN: conv3d-opt %s -split-input-file -verify-diagnostics

//===----------------------------------------------------------------------===//
// conv3d.quantize
//===----------------------------------------------------------------------===//

func.func @quantize_mixed(%x: tensor<4x32xf32>, %amax: f32, %out: memref<4x32xf32>) {
  // expected-error @+1 {{'conv3d.quantize' op operands must be all tensors or all memrefs, not a mix}}
  conv3d.quantize #conv3d.nvfp4<block_size = 16> axes = [1] ins(%x : tensor<4x32xf32>) amax(%amax) outs(%out : memref<4x32xf32>)
  return
}

// -----

func.func @quantize_tensor_no_result(%x: tensor<4x32xf32>, %amax: f32, %out: tensor<4x32xf32>) {
  // expected-error @+1 {{'conv3d.quantize' op on tensors must have exactly one result}}
  conv3d.quantize #conv3d.nvfp4<block_size = 16> axes = [1] ins(%x : tensor<4x32xf32>) amax(%amax) outs(%out : tensor<4x32xf32>)
  return
}

// -----

func.func @quantize_result_type(%x: tensor<4x32xf32>, %amax: f32, %out: tensor<4x32xf32>) {
  // expected-error @+1 {{'conv3d.quantize' op result type 'tensor<4x?xf32>' must match the outs operand type 'tensor<4x32xf32>'}}
  %0 = conv3d.quantize #conv3d.nvfp4<block_size = 16> axes = [1] ins(%x : tensor<4x32xf32>) amax(%amax) outs(%out : tensor<4x32xf32>) -> tensor<4x?xf32>
  return
}

// -----

func.func @quantize_memref_result(%x: memref<4x32xf32>, %amax: f32, %out: memref<4x32xf32>) {
  // expected-error @+1 {{'conv3d.quantize' op on memrefs must not have results}}
  %0 = conv3d.quantize #conv3d.nvfp4<block_size = 16> axes = [1] ins(%x : memref<4x32xf32>) amax(%amax) outs(%out : memref<4x32xf32>) -> tensor<4x32xf32>
  return
}

// -----

func.func @quantize_input_element_type(%x: tensor<4x32xi32>, %amax: f32, %out: tensor<4x32xi32>) {
  // expected-error @+1 {{'conv3d.quantize' op input element type must be bf16, f16 or f32, got 'i32'}}
  %0 = conv3d.quantize #conv3d.nvfp4<block_size = 16> axes = [1] ins(%x : tensor<4x32xi32>) amax(%amax) outs(%out : tensor<4x32xi32>) -> tensor<4x32xi32>
  return
}

// -----

func.func @quantize_outs_element_type(%x: tensor<4x32xbf16>, %amax: f32, %out: tensor<4x32xf32>) {
  // expected-error @+1 {{'conv3d.quantize' op outs element type 'f32' must match the input element type 'bf16'}}
  %0 = conv3d.quantize #conv3d.nvfp4<block_size = 16> axes = [1] ins(%x : tensor<4x32xbf16>) amax(%amax) outs(%out : tensor<4x32xf32>) -> tensor<4x32xf32>
  return
}

// -----

func.func @quantize_outs_shape(%x: tensor<4x32xf32>, %amax: f32, %out: tensor<4x48xf32>) {
  // expected-error @+1 {{'conv3d.quantize' op outs shape 4x48 must match the input shape 4x32}}
  %0 = conv3d.quantize #conv3d.nvfp4<block_size = 16> axes = [1] ins(%x : tensor<4x32xf32>) amax(%amax) outs(%out : tensor<4x48xf32>) -> tensor<4x48xf32>
  return
}

// -----

func.func @quantize_outs_rank(%x: memref<4x32xf32>, %amax: f32, %out: memref<4x32x1xf32>) {
  // expected-error @+1 {{'conv3d.quantize' op outs shape 4x32x1 must match the input shape 4x32}}
  conv3d.quantize #conv3d.nvfp4<block_size = 16> axes = [1] ins(%x : memref<4x32xf32>) amax(%amax) outs(%out : memref<4x32x1xf32>)
  return
}

// -----

func.func @quantize_no_block_axes(%x: tensor<4x32xf32>, %amax: f32, %out: tensor<4x32xf32>) {
  // expected-error @+1 {{'conv3d.quantize' op block_axes must name at least one dimension}}
  %0 = conv3d.quantize #conv3d.nvfp4<block_size = 16> axes = [] ins(%x : tensor<4x32xf32>) amax(%amax) outs(%out : tensor<4x32xf32>) -> tensor<4x32xf32>
  return
}

// -----

func.func @quantize_block_axis_too_large(%x: tensor<4x32xf32>, %amax: f32, %out: tensor<4x32xf32>) {
  // expected-error @+1 {{'conv3d.quantize' op block axis 2 is out of range for rank 2}}
  %0 = conv3d.quantize #conv3d.nvfp4<block_size = 16> axes = [1, 2] ins(%x : tensor<4x32xf32>) amax(%amax) outs(%out : tensor<4x32xf32>) -> tensor<4x32xf32>
  return
}

// -----

func.func @quantize_block_axis_negative(%x: tensor<4x32xf32>, %amax: f32, %out: tensor<4x32xf32>) {
  // expected-error @+1 {{'conv3d.quantize' op block axis -1 is out of range for rank 2}}
  %0 = conv3d.quantize #conv3d.nvfp4<block_size = 16> axes = [-1] ins(%x : tensor<4x32xf32>) amax(%amax) outs(%out : tensor<4x32xf32>) -> tensor<4x32xf32>
  return
}

// -----

func.func @quantize_block_axes_not_contiguous(%x: tensor<1x8x8x8x32xf32>, %amax: f32, %out: tensor<1x8x8x8x32xf32>) {
  // expected-error @+1 {{'conv3d.quantize' op block_axes must be increasing and contiguous (blocks run along their row-major flattening)}}
  %0 = conv3d.quantize #conv3d.nvfp4<block_size = 16> axes = [2, 4] ins(%x : tensor<1x8x8x8x32xf32>) amax(%amax) outs(%out : tensor<1x8x8x8x32xf32>) -> tensor<1x8x8x8x32xf32>
  return
}

// -----

func.func @quantize_block_axes_decreasing(%x: tensor<1x8x8x8x32xf32>, %amax: f32, %out: tensor<1x8x8x8x32xf32>) {
  // expected-error @+1 {{'conv3d.quantize' op block_axes must be increasing and contiguous (blocks run along their row-major flattening)}}
  %0 = conv3d.quantize #conv3d.nvfp4<block_size = 16> axes = [4, 3] ins(%x : tensor<1x8x8x8x32xf32>) amax(%amax) outs(%out : tensor<1x8x8x8x32xf32>) -> tensor<1x8x8x8x32xf32>
  return
}

// -----

func.func @quantize_block_axes_repeated(%x: tensor<1x8x8x8x32xf32>, %amax: f32, %out: tensor<1x8x8x8x32xf32>) {
  // expected-error @+1 {{'conv3d.quantize' op block_axes must be increasing and contiguous (blocks run along their row-major flattening)}}
  %0 = conv3d.quantize #conv3d.nvfp4<block_size = 16> axes = [4, 4] ins(%x : tensor<1x8x8x8x32xf32>) amax(%amax) outs(%out : tensor<1x8x8x8x32xf32>) -> tensor<1x8x8x8x32xf32>
  return
}

// -----

func.func @quantize_dynamic_block_axis(%x: tensor<?x?x32xf32>, %amax: f32, %out: tensor<?x?x32xf32>) {
  // expected-error @+1 {{'conv3d.quantize' op block axis 1 must be static}}
  %0 = conv3d.quantize #conv3d.nvfp4<block_size = 16> axes = [1, 2] ins(%x : tensor<?x?x32xf32>) amax(%amax) outs(%out : tensor<?x?x32xf32>) -> tensor<?x?x32xf32>
  return
}

// -----

// 2 x 2^62 elements overflow the supported maximum (they used to pass the
// verifier and fail later in a reshape).
func.func @quantize_too_many_elements(%x: memref<2x4611686018427387904xf32>, %amax: f32, %out: memref<2x4611686018427387904xf32>) {
  // expected-error @+1 {{'conv3d.quantize' op input of shape 2x4611686018427387904 has more than 2^62 elements, the supported maximum}}
  conv3d.quantize #conv3d.nvfp4<block_size = 16> axes = [1] ins(%x : memref<2x4611686018427387904xf32>) amax(%amax) outs(%out : memref<2x4611686018427387904xf32>)
  return
}

// -----

// 2^40 x 2^40 overflows int64 (it used to become a zero-trip loop).
func.func @quantize_overflowing_count(%x: memref<1099511627776x1099511627776xf32>, %amax: f32, %out: memref<1099511627776x1099511627776xf32>) {
  // expected-error @+1 {{'conv3d.quantize' op input of shape 1099511627776x1099511627776 has more than 2^62 elements, the supported maximum}}
  conv3d.quantize #conv3d.nvfp4<block_size = 16> axes = [1] ins(%x : memref<1099511627776x1099511627776xf32>) amax(%amax) outs(%out : memref<1099511627776x1099511627776xf32>)
  return
}

//===----------------------------------------------------------------------===//
// conv3d.epilogue
//===----------------------------------------------------------------------===//

// -----

func.func @epilogue_too_many_elements(%sum: memref<1x1073741824x1073741824x16x16xf32>, %out: memref<1x1073741824x1073741824x16x16xbf16>) {
  // expected-error @+1 {{'conv3d.epilogue' op sum of shape 1x1073741824x1073741824x16x16 has more than 2^62 elements, the supported maximum}}
  conv3d.epilogue ins(%sum : memref<1x1073741824x1073741824x16x16xf32>) outs(%out : memref<1x1073741824x1073741824x16x16xbf16>)
  return
}

// -----

func.func @epilogue_mixed(%sum: memref<1x4x4x4x16xf32>, %out: tensor<1x4x4x4x16xbf16>) {
  // expected-error @+1 {{'conv3d.epilogue' op operands must be all tensors or all memrefs, not a mix}}
  %0 = conv3d.epilogue ins(%sum : memref<1x4x4x4x16xf32>) outs(%out : tensor<1x4x4x4x16xbf16>) -> tensor<1x4x4x4x16xbf16>
  return
}

// -----

func.func @epilogue_mixed_residual(%sum: memref<1x4x4x4x16xf32>, %res: tensor<1x4x4x4x16xbf16>, %out: memref<1x4x4x4x16xbf16>) {
  // expected-error @+1 {{'conv3d.epilogue' op operands must be all tensors or all memrefs, not a mix}}
  conv3d.epilogue ins(%sum : memref<1x4x4x4x16xf32>) residual(%res : tensor<1x4x4x4x16xbf16>) outs(%out : memref<1x4x4x4x16xbf16>)
  return
}

// -----

func.func @epilogue_tensor_no_result(%sum: tensor<1x4x4x4x16xf32>, %out: tensor<1x4x4x4x16xbf16>) {
  // expected-error @+1 {{'conv3d.epilogue' op on tensors must have exactly one result}}
  conv3d.epilogue ins(%sum : tensor<1x4x4x4x16xf32>) outs(%out : tensor<1x4x4x4x16xbf16>)
  return
}

// -----

func.func @epilogue_result_type(%sum: tensor<1x4x4x4x16xf32>, %out: tensor<1x4x4x4x16xbf16>) {
  // expected-error @+1 {{'conv3d.epilogue' op result type 'tensor<1x4x4x4x16xf32>' must match the outs operand type 'tensor<1x4x4x4x16xbf16>'}}
  %0 = conv3d.epilogue ins(%sum : tensor<1x4x4x4x16xf32>) outs(%out : tensor<1x4x4x4x16xbf16>) -> tensor<1x4x4x4x16xf32>
  return
}

// -----

func.func @epilogue_memref_result(%sum: memref<1x4x4x4x16xf32>, %out: memref<1x4x4x4x16xbf16>) {
  // expected-error @+1 {{'conv3d.epilogue' op on memrefs must not have results}}
  %0 = conv3d.epilogue ins(%sum : memref<1x4x4x4x16xf32>) outs(%out : memref<1x4x4x4x16xbf16>) -> tensor<1x4x4x4x16xbf16>
  return
}

// -----

func.func @epilogue_sum_rank(%sum: tensor<64x16xf32>, %out: tensor<1x4x4x4x16xbf16>) {
  // expected-error @+1 {{'conv3d.epilogue' op sum must have rank 5, got rank 2}}
  %0 = conv3d.epilogue ins(%sum : tensor<64x16xf32>) outs(%out : tensor<1x4x4x4x16xbf16>) -> tensor<1x4x4x4x16xbf16>
  return
}

// -----

func.func @epilogue_outs_rank(%sum: tensor<1x4x4x4x16xf32>, %out: tensor<64x16xbf16>) {
  // expected-error @+1 {{'conv3d.epilogue' op outs must have rank 5, got rank 2}}
  %0 = conv3d.epilogue ins(%sum : tensor<1x4x4x4x16xf32>) outs(%out : tensor<64x16xbf16>) -> tensor<64x16xbf16>
  return
}

// -----

func.func @epilogue_sum_element_type(%sum: tensor<1x4x4x4x16xbf16>, %out: tensor<1x4x4x4x16xbf16>) {
  // expected-error @+1 {{'conv3d.epilogue' op sum element type must be f32, got 'bf16'}}
  %0 = conv3d.epilogue ins(%sum : tensor<1x4x4x4x16xbf16>) outs(%out : tensor<1x4x4x4x16xbf16>) -> tensor<1x4x4x4x16xbf16>
  return
}

// -----

func.func @epilogue_outs_element_type(%sum: tensor<1x4x4x4x16xf32>, %out: tensor<1x4x4x4x16xi8>) {
  // expected-error @+1 {{'conv3d.epilogue' op outs element type must be bf16, f16 or f32, got 'i8'}}
  %0 = conv3d.epilogue ins(%sum : tensor<1x4x4x4x16xf32>) outs(%out : tensor<1x4x4x4x16xi8>) -> tensor<1x4x4x4x16xi8>
  return
}

// -----

func.func @epilogue_outs_shape(%sum: tensor<1x4x?x4x16xf32>, %out: tensor<1x4x4x2x16xf16>) {
  // expected-error @+1 {{'conv3d.epilogue' op outs shape 1x4x4x2x16 is inconsistent with the expected 1x4x?x4x16}}
  %0 = conv3d.epilogue ins(%sum : tensor<1x4x?x4x16xf32>) outs(%out : tensor<1x4x4x2x16xf16>) -> tensor<1x4x4x2x16xf16>
  return
}

// -----

func.func @epilogue_dynamic_filters(%sum: memref<1x4x4x4x16xf32>, %out: memref<1x4x4x4x?xf32>) {
  // expected-error @+1 {{'conv3d.epilogue' op the filter dimension of outs must be static}}
  conv3d.epilogue ins(%sum : memref<1x4x4x4x16xf32>) outs(%out : memref<1x4x4x4x?xf32>)
  return
}

// -----

func.func @epilogue_bias_rank(%sum: tensor<1x4x4x4x16xf32>, %bias: tensor<f32>, %out: tensor<1x4x4x4x16xbf16>) {
  // expected-error @+1 {{'conv3d.epilogue' op bias must have rank 1, got rank 0}}
  %0 = conv3d.epilogue ins(%sum : tensor<1x4x4x4x16xf32>) bias(%bias : tensor<f32>) outs(%out : tensor<1x4x4x4x16xbf16>) -> tensor<1x4x4x4x16xbf16>
  return
}

// -----

func.func @epilogue_bias_size(%sum: tensor<1x4x4x4x16xf32>, %bias: tensor<32xf32>, %out: tensor<1x4x4x4x16xbf16>) {
  // expected-error @+1 {{'conv3d.epilogue' op bias must have 16 elements (one per filter), got 32}}
  %0 = conv3d.epilogue ins(%sum : tensor<1x4x4x4x16xf32>) bias(%bias : tensor<32xf32>) outs(%out : tensor<1x4x4x4x16xbf16>) -> tensor<1x4x4x4x16xbf16>
  return
}

// -----

func.func @epilogue_bias_element_type(%sum: tensor<1x4x4x4x16xf32>, %bias: tensor<16xf64>, %out: tensor<1x4x4x4x16xbf16>) {
  // expected-error @+1 {{'conv3d.epilogue' op bias element type must be bf16, f16 or f32, got 'f64'}}
  %0 = conv3d.epilogue ins(%sum : tensor<1x4x4x4x16xf32>) bias(%bias : tensor<16xf64>) outs(%out : tensor<1x4x4x4x16xbf16>) -> tensor<1x4x4x4x16xbf16>
  return
}

// -----

func.func @epilogue_residual_rank(%sum: tensor<1x4x4x4x16xf32>, %res: tensor<1x4x4x4x16x1xbf16>, %out: tensor<1x4x4x4x16xbf16>) {
  // expected-error @+1 {{'conv3d.epilogue' op residual must have rank 5, got rank 6}}
  %0 = conv3d.epilogue ins(%sum : tensor<1x4x4x4x16xf32>) residual(%res : tensor<1x4x4x4x16x1xbf16>) outs(%out : tensor<1x4x4x4x16xbf16>) -> tensor<1x4x4x4x16xbf16>
  return
}

// -----

func.func @epilogue_residual_shape(%sum: tensor<?x4x4x4x16xf32>, %res: tensor<2x4x4x8x16xbf16>, %out: tensor<?x4x4x4x16xbf16>) {
  // expected-error @+1 {{'conv3d.epilogue' op residual shape 2x4x4x8x16 is inconsistent with the expected ?x4x4x4x16}}
  %0 = conv3d.epilogue ins(%sum : tensor<?x4x4x4x16xf32>) residual(%res : tensor<2x4x4x8x16xbf16>) outs(%out : tensor<?x4x4x4x16xbf16>) -> tensor<?x4x4x4x16xbf16>
  return
}

// -----

func.func @epilogue_residual_element_type(%sum: tensor<1x4x4x4x16xf32>, %res: tensor<1x4x4x4x16xf64>, %out: tensor<1x4x4x4x16xbf16>) {
  // expected-error @+1 {{'conv3d.epilogue' op residual element type must be bf16, f16 or f32, got 'f64'}}
  %0 = conv3d.epilogue ins(%sum : tensor<1x4x4x4x16xf32>) residual(%res : tensor<1x4x4x4x16xf64>) outs(%out : tensor<1x4x4x4x16xbf16>) -> tensor<1x4x4x4x16xbf16>
  return
}

// -----

func.func @quantize_empty(%x: tensor<1x0x4x4x16xbf16>, %a: f32) {
  // expected-error @+1 {{input must not be empty, got shape 1x0x4x4x16}}
  %0 = conv3d.quantize #conv3d.nvfp4<block_size = 16> axes = [4] ins(%x : tensor<1x0x4x4x16xbf16>) amax(%a) outs(%x : tensor<1x0x4x4x16xbf16>) -> tensor<1x0x4x4x16xbf16>
  return
}

// -----

func.func @epilogue_empty(%s: tensor<1x0x4x4x16xf32>, %o: tensor<1x0x4x4x16xbf16>) {
  // expected-error @+1 {{outs must not be empty, got shape 1x0x4x4x16}}
  %0 = conv3d.epilogue ins(%s : tensor<1x0x4x4x16xf32>) outs(%o : tensor<1x0x4x4x16xbf16>) overwrite -> tensor<1x0x4x4x16xbf16>
  return
}

// -----

func.func @epilogue_derivative_without_residual(%sum: tensor<1x4x4x4x16xf32>, %out: tensor<1x4x4x4x16xbf16>) {
  // expected-error @+1 {{'conv3d.epilogue' op activation = gelu_tanh_backward multiplies by the derivative at the forward's pre-activation, which it reads as the residual operand; there is none}}
  %0 = conv3d.epilogue ins(%sum : tensor<1x4x4x4x16xf32>) outs(%out : tensor<1x4x4x4x16xbf16>) overwrite activation = gelu_tanh_backward -> tensor<1x4x4x4x16xbf16>
  return
}
