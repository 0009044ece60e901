// Diagnostics of the gradient ops' verifiers. One split per diagnostic.
//
// RUN: conv3d-opt %s -split-input-file -verify-diagnostics

func.func @dgrad_rank(%dy: tensor<4x4x4x32xbf16>, %w: tensor<3x3x3x16x32xbf16>, %e: tensor<1x8x8x8x16xbf16>) {
  // expected-error @+1 {{'conv3d.conv_backward_data' op grad_output must have rank 5, got rank 4}}
  %0 = conv3d.conv_backward_data ins(%dy, %w : tensor<4x4x4x32xbf16>, tensor<3x3x3x16x32xbf16>) outs(%e : tensor<1x8x8x8x16xbf16>) -> tensor<1x8x8x8x16xbf16>
  return
}

// -----

func.func @dgrad_strides_size(%dy: tensor<1x6x6x6x32xbf16>, %w: tensor<3x3x3x16x32xbf16>, %e: tensor<1x8x8x8x16xbf16>) {
  // expected-error @+1 {{'conv3d.conv_backward_data' op strides must have 3 values, got 2}}
  %0 = conv3d.conv_backward_data ins(%dy, %w : tensor<1x6x6x6x32xbf16>, tensor<3x3x3x16x32xbf16>) outs(%e : tensor<1x8x8x8x16xbf16>) strides = [1, 1] -> tensor<1x8x8x8x16xbf16>
  return
}

// -----

func.func @dgrad_result_type(%dy: tensor<1x6x6x6x32xbf16>, %w: tensor<3x3x3x16x32xbf16>, %e: tensor<1x8x8x8x16xbf16>) {
  // expected-error @+1 {{'conv3d.conv_backward_data' op result type 'tensor<1x8x8x8x16xf32>' must be the outs type 'tensor<1x8x8x8x16xbf16>'}}
  %0 = conv3d.conv_backward_data ins(%dy, %w : tensor<1x6x6x6x32xbf16>, tensor<3x3x3x16x32xbf16>) outs(%e : tensor<1x8x8x8x16xbf16>) -> tensor<1x8x8x8x16xf32>
  return
}

// -----

func.func @dgrad_element_type(%dy: tensor<1x6x6x6x32xi8>, %w: tensor<3x3x3x16x32xi8>, %e: tensor<1x8x8x8x16xf32>) {
  // expected-error @+1 {{'conv3d.conv_backward_data' op grad_output element type must be bf16, f16 or f32, got 'i8'}}
  %0 = conv3d.conv_backward_data ins(%dy, %w : tensor<1x6x6x6x32xi8>, tensor<3x3x3x16x32xi8>) outs(%e : tensor<1x8x8x8x16xf32>) -> tensor<1x8x8x8x16xf32>
  return
}

// -----

func.func @dgrad_filter_type(%dy: tensor<1x6x6x6x32xbf16>, %w: tensor<3x3x3x16x32xf16>, %e: tensor<1x8x8x8x16xbf16>) {
  // expected-error @+1 {{'conv3d.conv_backward_data' op filter element type 'f16' must match the grad_output element type 'bf16'}}
  %0 = conv3d.conv_backward_data ins(%dy, %w : tensor<1x6x6x6x32xbf16>, tensor<3x3x3x16x32xf16>) outs(%e : tensor<1x8x8x8x16xbf16>) -> tensor<1x8x8x8x16xbf16>
  return
}

// -----

func.func @dgrad_outs_type(%dy: tensor<1x6x6x6x32xbf16>, %w: tensor<3x3x3x16x32xbf16>, %e: tensor<1x8x8x8x16xf16>) {
  // expected-error @+1 {{'conv3d.conv_backward_data' op outs element type must be f32 or the grad_output element type 'bf16', got 'f16'}}
  %0 = conv3d.conv_backward_data ins(%dy, %w : tensor<1x6x6x6x32xbf16>, tensor<3x3x3x16x32xbf16>) outs(%e : tensor<1x8x8x8x16xf16>) -> tensor<1x8x8x8x16xf16>
  return
}

// -----

func.func @dgrad_dynamic(%dy: tensor<?x6x6x6x32xbf16>, %w: tensor<3x3x3x16x32xbf16>, %e: tensor<1x8x8x8x16xbf16>) {
  // expected-error @+1 {{'conv3d.conv_backward_data' op shapes must be static (the lowering sizes its stride phases and forward convolutions from them), got ?x6x6x6x32}}
  %0 = conv3d.conv_backward_data ins(%dy, %w : tensor<?x6x6x6x32xbf16>, tensor<3x3x3x16x32xbf16>) outs(%e : tensor<1x8x8x8x16xbf16>) -> tensor<1x8x8x8x16xbf16>
  return
}

// -----

func.func @dgrad_channels(%dy: tensor<1x6x6x6x32xbf16>, %w: tensor<3x3x3x16x32xbf16>, %e: tensor<1x8x8x8x12xbf16>) {
  // expected-error @+1 {{'conv3d.conv_backward_data' op filter has 16 input channels but outs (the input gradient) has 12 (filter_layout = qrscf)}}
  %0 = conv3d.conv_backward_data ins(%dy, %w : tensor<1x6x6x6x32xbf16>, tensor<3x3x3x16x32xbf16>) outs(%e : tensor<1x8x8x8x12xbf16>) -> tensor<1x8x8x8x12xbf16>
  return
}

// -----

func.func @dgrad_invalid_forward(%dy: tensor<1x6x6x6x32xbf16>, %w: tensor<3x3x3x16x32xbf16>, %e: tensor<1x8x8x8x16xbf16>) {
  // expected-error @+1 {{'conv3d.conv_backward_data' op the forward convolution is invalid: stride along height must be positive, got 0}}
  %0 = conv3d.conv_backward_data ins(%dy, %w : tensor<1x6x6x6x32xbf16>, tensor<3x3x3x16x32xbf16>) outs(%e : tensor<1x8x8x8x16xbf16>) strides = [1, 0, 1] -> tensor<1x8x8x8x16xbf16>
  return
}

// -----

func.func @dgrad_grad_output_shape(%dy: tensor<1x4x4x4x32xbf16>, %w: tensor<3x3x3x16x32xbf16>, %e: tensor<1x8x8x8x16xbf16>) {
  // expected-error @+1 {{'conv3d.conv_backward_data' op grad_output shape 1x4x4x4x32 must be the forward's output shape 1x6x6x6x32 (from the outs (the input gradient) shape 1x8x8x8x16, the filter shape 3x3x3x16x32, strides, dilations and padding)}}
  %0 = conv3d.conv_backward_data ins(%dy, %w : tensor<1x4x4x4x32xbf16>, tensor<3x3x3x16x32xbf16>) outs(%e : tensor<1x8x8x8x16xbf16>) -> tensor<1x8x8x8x16xbf16>
  return
}

// -----

func.func @wgrad_rank(%x: tensor<1x8x8x8x16xbf16>, %dy: tensor<1x6x6x6x32xbf16>, %e: tensor<3x3x16x32xf32>) {
  // expected-error @+1 {{'conv3d.conv_backward_filter' op outs must have rank 5, got rank 4}}
  %0 = conv3d.conv_backward_filter ins(%x, %dy : tensor<1x8x8x8x16xbf16>, tensor<1x6x6x6x32xbf16>) outs(%e : tensor<3x3x16x32xf32>) -> tensor<3x3x16x32xf32>
  return
}

// -----

func.func @wgrad_grad_output_type(%x: tensor<1x8x8x8x16xbf16>, %dy: tensor<1x6x6x6x32xf32>, %e: tensor<3x3x3x16x32xf32>) {
  // expected-error @+1 {{'conv3d.conv_backward_filter' op grad_output element type 'f32' must match the input element type 'bf16'}}
  %0 = conv3d.conv_backward_filter ins(%x, %dy : tensor<1x8x8x8x16xbf16>, tensor<1x6x6x6x32xf32>) outs(%e : tensor<3x3x3x16x32xf32>) -> tensor<3x3x3x16x32xf32>
  return
}

// -----

func.func @wgrad_channels(%x: tensor<1x8x8x8x16xbf16>, %dy: tensor<1x6x6x6x32xbf16>, %e: tensor<32x3x3x3x8xf32>) {
  // expected-error @+1 {{'conv3d.conv_backward_filter' op outs (the filter gradient) has 8 input channels but input has 16 (filter_layout = fqrsc)}}
  %0 = conv3d.conv_backward_filter ins(%x, %dy : tensor<1x8x8x8x16xbf16>, tensor<1x6x6x6x32xbf16>) outs(%e : tensor<32x3x3x3x8xf32>) filter_layout = fqrsc -> tensor<32x3x3x3x8xf32>
  return
}

// -----

func.func @wgrad_grad_output_filters(%x: tensor<1x8x8x8x16xbf16>, %dy: tensor<1x6x6x6x24xbf16>, %e: tensor<3x3x3x16x32xf32>) {
  // expected-error @+1 {{'conv3d.conv_backward_filter' op grad_output shape 1x6x6x6x24 must be the forward's output shape 1x6x6x6x32 (from the input shape 1x8x8x8x16, the outs (the filter gradient) shape 3x3x3x16x32, strides, dilations and padding)}}
  %0 = conv3d.conv_backward_filter ins(%x, %dy : tensor<1x8x8x8x16xbf16>, tensor<1x6x6x6x24xbf16>) outs(%e : tensor<3x3x3x16x32xf32>) -> tensor<3x3x3x16x32xf32>
  return
}

// -----

func.func @wgrad_empty_forward(%x: tensor<1x2x8x8x16xbf16>, %dy: tensor<1x1x6x6x32xbf16>, %e: tensor<3x3x3x16x32xf32>) {
  // expected-error @+1 {{'conv3d.conv_backward_filter' op the forward convolution is invalid: empty output: the dilated window along depth spans 3 but the padded input has 2}}
  %0 = conv3d.conv_backward_filter ins(%x, %dy : tensor<1x2x8x8x16xbf16>, tensor<1x1x6x6x32xbf16>) outs(%e : tensor<3x3x3x16x32xf32>) -> tensor<3x3x3x16x32xf32>
  return
}

// -----

// The gradients work on tensors only (rewritten before bufferization).
func.func @wgrad_memref(%x: memref<1x8x8x8x16xbf16>, %dy: tensor<1x6x6x6x32xbf16>, %e: tensor<3x3x3x16x32xf32>) {
  // expected-error @+1 {{custom op 'conv3d.conv_backward_filter' invalid kind of type specified: expected builtin.tensor, but found 'memref<1x8x8x8x16xbf16>'}}
  %0 = conv3d.conv_backward_filter ins(%x, %dy : memref<1x8x8x8x16xbf16>, tensor<1x6x6x6x32xbf16>) outs(%e : tensor<3x3x3x16x32xf32>) -> tensor<3x3x3x16x32xf32>
  return
}

// -----

func.func @wgrad_memref_generic(%x: memref<1x8x8x8x16xbf16>, %dy: tensor<1x6x6x6x32xbf16>, %e: tensor<3x3x3x16x32xf32>) {
  // expected-error @+1 {{'conv3d.conv_backward_filter' op operand #0 must be ranked tensor of any type values, but got 'memref<1x8x8x8x16xbf16>'}}
  %0 = "conv3d.conv_backward_filter"(%x, %dy, %e) : (memref<1x8x8x8x16xbf16>, tensor<1x6x6x6x32xbf16>, tensor<3x3x3x16x32xf32>) -> tensor<3x3x3x16x32xf32>
  return
}

// -----

func.func @dgrad_activation_without_pre_activation(%dy: tensor<1x8x8x8x32xbf16>, %w: tensor<3x3x3x16x32xbf16>, %e: tensor<1x8x8x8x16xbf16>) {
  // expected-error @+1 {{'conv3d.conv_backward_data' op activation = relu needs pre_activation, the forward's input before the activation}}
  %0 = conv3d.conv_backward_data ins(%dy, %w : tensor<1x8x8x8x32xbf16>, tensor<3x3x3x16x32xbf16>) outs(%e : tensor<1x8x8x8x16xbf16>) padding = [1, 1, 1, 1, 1, 1] activation = relu -> tensor<1x8x8x8x16xbf16>
  return
}

// -----

func.func @dgrad_pre_activation_without_activation(%dy: tensor<1x8x8x8x32xbf16>, %w: tensor<3x3x3x16x32xbf16>, %z: tensor<1x8x8x8x16xbf16>, %e: tensor<1x8x8x8x16xbf16>) {
  // expected-error @+1 {{'conv3d.conv_backward_data' op pre_activation needs the activation whose derivative it feeds (activation = relu, silu or gelu_tanh)}}
  %0 = conv3d.conv_backward_data ins(%dy, %w : tensor<1x8x8x8x32xbf16>, tensor<3x3x3x16x32xbf16>) pre_activation(%z : tensor<1x8x8x8x16xbf16>) outs(%e : tensor<1x8x8x8x16xbf16>) padding = [1, 1, 1, 1, 1, 1] -> tensor<1x8x8x8x16xbf16>
  return
}

// -----

func.func @dgrad_derivative_activation(%dy: tensor<1x8x8x8x32xbf16>, %w: tensor<3x3x3x16x32xbf16>, %z: tensor<1x8x8x8x16xbf16>, %e: tensor<1x8x8x8x16xbf16>) {
  // expected-error @+1 {{'conv3d.conv_backward_data' op activation = silu_backward is a derivative; name the forward's activation (relu, silu or gelu_tanh)}}
  %0 = conv3d.conv_backward_data ins(%dy, %w : tensor<1x8x8x8x32xbf16>, tensor<3x3x3x16x32xbf16>) pre_activation(%z : tensor<1x8x8x8x16xbf16>) outs(%e : tensor<1x8x8x8x16xbf16>) padding = [1, 1, 1, 1, 1, 1] activation = silu_backward -> tensor<1x8x8x8x16xbf16>
  return
}

// -----

func.func @dgrad_pre_activation_shape(%dy: tensor<1x8x8x8x32xbf16>, %w: tensor<3x3x3x16x32xbf16>, %z: tensor<1x8x8x8x32xbf16>, %e: tensor<1x8x8x8x16xbf16>) {
  // expected-error @+1 {{'conv3d.conv_backward_data' op pre_activation shape 1x8x8x8x32 must be the input gradient's (outs) shape 1x8x8x8x16}}
  %0 = conv3d.conv_backward_data ins(%dy, %w : tensor<1x8x8x8x32xbf16>, tensor<3x3x3x16x32xbf16>) pre_activation(%z : tensor<1x8x8x8x32xbf16>) outs(%e : tensor<1x8x8x8x16xbf16>) padding = [1, 1, 1, 1, 1, 1] activation = gelu_tanh -> tensor<1x8x8x8x16xbf16>
  return
}

// -----

func.func @dgrad_pre_activation_type(%dy: tensor<1x8x8x8x32xbf16>, %w: tensor<3x3x3x16x32xbf16>, %z: tensor<1x8x8x8x16xi8>, %e: tensor<1x8x8x8x16xbf16>) {
  // expected-error @+1 {{'conv3d.conv_backward_data' op pre_activation element type must be bf16, f16 or f32, got 'i8'}}
  %0 = conv3d.conv_backward_data ins(%dy, %w : tensor<1x8x8x8x32xbf16>, tensor<3x3x3x16x32xbf16>) pre_activation(%z : tensor<1x8x8x8x16xi8>) outs(%e : tensor<1x8x8x8x16xbf16>) padding = [1, 1, 1, 1, 1, 1] activation = relu -> tensor<1x8x8x8x16xbf16>
  return
}
