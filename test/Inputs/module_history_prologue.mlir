// A convolution over cached frames and a normalized, activated input, for
// history-prologue-numpy.test: @step reads concat(history, input) along
// depth (2 cached frames, no depth padding) with an RMS norm (gamma, beta)
// and SiLU on the input voxels; @first is the first chunk of a causal
// stream (no history, causal depth padding) with the same prologue.
func.func @step(%x: tensor<1x3x5x4x8xf32>, %h: tensor<1x2x5x4x8xf32>,
                %w: tensor<3x3x3x8x6xf32>, %g: tensor<8xf32>,
                %b: tensor<8xf32>) -> tensor<1x3x5x4x6xf32> {
  %e = tensor.empty() : tensor<1x3x5x4x6xf32>
  %y = conv3d.conv ins(%x, %w : tensor<1x3x5x4x8xf32>, tensor<3x3x3x8x6xf32>)
         history(%h : tensor<1x2x5x4x8xf32>)
         rms_norm(%g : tensor<8xf32>) norm_beta(%b : tensor<8xf32>) norm_eps = 1.0e-6
         input_activation = silu
         outs(%e : tensor<1x3x5x4x6xf32>) overwrite
         padding = [0, 0, 1, 1, 1, 1] -> tensor<1x3x5x4x6xf32>
  return %y : tensor<1x3x5x4x6xf32>
}

func.func @first(%x: tensor<1x3x5x4x8xf32>, %w: tensor<3x3x3x8x6xf32>,
                 %g: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<1x3x5x4x6xf32> {
  %e = tensor.empty() : tensor<1x3x5x4x6xf32>
  %y = conv3d.conv ins(%x, %w : tensor<1x3x5x4x8xf32>, tensor<3x3x3x8x6xf32>)
         rms_norm(%g : tensor<8xf32>) norm_beta(%b : tensor<8xf32>) norm_eps = 1.0e-6
         input_activation = silu
         outs(%e : tensor<1x3x5x4x6xf32>) overwrite
         padding = [2, 0, 1, 1, 1, 1] -> tensor<1x3x5x4x6xf32>
  return %y : tensor<1x3x5x4x6xf32>
}
