// Functions for the CPU execution test of the gradient ops
// (test/Execution/conv-gradients-cpu.test), checked against the NumPy
// gradients of %inputs/np_conv3d_grad.py.

// Stride 2: eight phases. H = 8 leaves one row past the last window
// (a transposed convolution's output padding of 1).
func.func @dgrad_strided(%dy: tensor<1x4x4x3x6xf32>, %w: tensor<3x3x3x8x6xf32>)
    -> tensor<1x7x8x6x8xf32> {
  %e = tensor.empty() : tensor<1x7x8x6x8xf32>
  %dx = conv3d.conv_backward_data ins(%dy, %w : tensor<1x4x4x3x6xf32>,
                                                tensor<3x3x3x8x6xf32>)
          outs(%e : tensor<1x7x8x6x8xf32>) overwrite
          strides = [2, 2, 2] padding = [1, 1, 1, 1, 1, 1]
          -> tensor<1x7x8x6x8xf32>
  return %dx : tensor<1x7x8x6x8xf32>
}

// Per-axis strides and dilations, asymmetric padding, FQRSC, accumulated
// onto %init.
func.func @dgrad_accumulate(%dy: tensor<2x6x2x4x5xf32>, %w: tensor<5x2x3x2x4xf32>,
                            %init: tensor<2x6x5x9x4xf32>) -> tensor<2x6x5x9x4xf32> {
  %dx = conv3d.conv_backward_data ins(%dy, %w : tensor<2x6x2x4x5xf32>,
                                                tensor<5x2x3x2x4xf32>)
          outs(%init : tensor<2x6x5x9x4xf32>)
          strides = [1, 2, 3] dilations = [2, 1, 2] padding = [2, 0, 0, 1, 3, 1]
          filter_layout = fqrsc -> tensor<2x6x5x9x4xf32>
  return %dx : tensor<2x6x5x9x4xf32>
}

// Stride 2 with dilation 2 along depth: the odd depth phase is reached by
// no tap and must come out zero.
func.func @dgrad_zero_phase(%dy: tensor<1x2x2x3x4xf32>, %w: tensor<2x2x2x3x4xf32>)
    -> tensor<1x6x5x4x3xf32> {
  %e = tensor.empty() : tensor<1x6x5x4x3xf32>
  %dx = conv3d.conv_backward_data ins(%dy, %w : tensor<1x2x2x3x4xf32>,
                                                tensor<2x2x2x3x4xf32>)
          outs(%e : tensor<1x6x5x4x3xf32>) overwrite
          strides = [2, 2, 1] dilations = [2, 1, 1] -> tensor<1x6x5x4x3xf32>
  return %dx : tensor<1x6x5x4x3xf32>
}

func.func @wgrad_strided(%x: tensor<1x7x8x6x8xf32>, %dy: tensor<1x4x4x3x6xf32>)
    -> tensor<3x3x3x8x6xf32> {
  %e = tensor.empty() : tensor<3x3x3x8x6xf32>
  %dw = conv3d.conv_backward_filter ins(%x, %dy : tensor<1x7x8x6x8xf32>,
                                                  tensor<1x4x4x3x6xf32>)
          outs(%e : tensor<3x3x3x8x6xf32>) overwrite
          strides = [2, 2, 2] padding = [1, 1, 1, 1, 1, 1]
          -> tensor<3x3x3x8x6xf32>
  return %dw : tensor<3x3x3x8x6xf32>
}

func.func @wgrad_accumulate(%x: tensor<2x6x5x9x4xf32>, %dy: tensor<2x6x2x4x5xf32>,
                            %init: tensor<5x2x3x2x4xf32>) -> tensor<5x2x3x2x4xf32> {
  %dw = conv3d.conv_backward_filter ins(%x, %dy : tensor<2x6x5x9x4xf32>,
                                                  tensor<2x6x2x4x5xf32>)
          outs(%init : tensor<5x2x3x2x4xf32>)
          strides = [1, 2, 3] dilations = [2, 1, 2] padding = [2, 0, 0, 1, 3, 1]
          filter_layout = fqrsc -> tensor<5x2x3x2x4xf32>
  return %dw : tensor<5x2x3x2x4xf32>
}
