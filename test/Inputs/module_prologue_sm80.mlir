// The CPU-target convolution of test/GPU/sm80-prologue-emulate.test.
func.func @main(%x: tensor<1x4x5x5x16xf16>, %h: tensor<1x2x5x5x16xf16>, %w: tensor<3x3x3x3x16xf16>, %g: tensor<16xf32>, %b: tensor<16xf32>) -> tensor<1x4x5x5x3xf32> {
  %e = tensor.empty() : tensor<1x4x5x5x3xf32>
  %y = conv3d.conv ins(%x, %w : tensor<1x4x5x5x16xf16>, tensor<3x3x3x3x16xf16>) history(%h : tensor<1x2x5x5x16xf16>) rms_norm(%g : tensor<16xf32>) norm_beta(%b : tensor<16xf32>) norm_eps = 1.0e-3 input_activation = silu outs(%e : tensor<1x4x5x5x3xf32>) overwrite padding = [0, 0, 1, 1, 1, 1] filter_layout = fqrsc -> tensor<1x4x5x5x3xf32>
  return %y : tensor<1x4x5x5x3xf32>
}
