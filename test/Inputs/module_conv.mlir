// Functions for the module-mode tests of conv3d-run (test/Execution/
// module-mode.test).

// A causal 3x3x3 convolution, f32, overwriting a fresh destination.
func.func @main(%x: tensor<1x4x6x5x8xf32>, %w: tensor<3x3x3x8x6xf32>)
    -> tensor<1x4x6x5x6xf32> {
  %e = tensor.empty() : tensor<1x4x6x5x6xf32>
  %y = conv3d.conv ins(%x, %w : tensor<1x4x6x5x8xf32>, tensor<3x3x3x8x6xf32>)
         outs(%e : tensor<1x4x6x5x6xf32>) overwrite
         padding = [2, 0, 1, 1, 1, 1] -> tensor<1x4x6x5x6xf32>
  return %y : tensor<1x4x6x5x6xf32>
}

// Two results: a strided, dilated FQRSC convolution, and the same plus a
// scalar (a splat bias) after a ReLU.
// D: (4+1+1 - 3)/2 + 1 = 2; H: (6+0+2 - 5)/1 + 1 = 4; W: (5 - 3)/1 + 1 = 3.
func.func @two_results(%x: tensor<1x4x6x5x8xf32>, %w: tensor<6x3x3x3x8xf32>,
                       %s: f32) -> (tensor<1x2x4x3x6xf32>, tensor<1x2x4x3x6xf32>) {
  %e = tensor.empty() : tensor<1x2x4x3x6xf32>
  %y = conv3d.conv ins(%x, %w : tensor<1x4x6x5x8xf32>, tensor<6x3x3x3x8xf32>)
         outs(%e : tensor<1x2x4x3x6xf32>) overwrite
         strides = [2, 1, 1] dilations = [1, 2, 1] padding = [1, 1, 0, 2, 0, 0]
         filter_layout = fqrsc -> tensor<1x2x4x3x6xf32>
  %b = tensor.splat %s : tensor<6xf32>
  %e2 = tensor.empty() : tensor<1x2x4x3x6xf32>
  %z = conv3d.epilogue ins(%y : tensor<1x2x4x3x6xf32>) bias(%b : tensor<6xf32>)
         outs(%e2 : tensor<1x2x4x3x6xf32>) overwrite activation = relu
         -> tensor<1x2x4x3x6xf32>
  return %y, %z : tensor<1x2x4x3x6xf32>, tensor<1x2x4x3x6xf32>
}
