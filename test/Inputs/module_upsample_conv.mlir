// Nearest-neighbour upsampling feeding a convolution, for
// test/Execution/fold-upsample.test: conv3d-fold-upsample rewrites each
// into a data gradient of the low-resolution input.
#up_hw = affine_map<(n, d, h, w, c) -> (n, d, h floordiv 2, w floordiv 2, c)>
#up_dhw = affine_map<(n, d, h, w, c) -> (n, d floordiv 2, h floordiv 2, w floordiv 2, c)>
#id = affine_map<(n, d, h, w, c) -> (n, d, h, w, c)>

// H and W upsampled, then linalg's convolution (imported; no padding).
func.func @linalg_hw(%x: tensor<1x4x3x5x8xf32>, %w: tensor<3x3x3x8x6xf32>) -> tensor<1x2x4x8x6xf32> {
  %e = tensor.empty() : tensor<1x4x6x10x8xf32>
  %u = linalg.generic {indexing_maps = [#up_hw, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<1x4x3x5x8xf32>) outs(%e : tensor<1x4x6x10x8xf32>) {
    ^bb0(%a: f32, %b: f32):
      linalg.yield %a : f32
  } -> tensor<1x4x6x10x8xf32>
  %zero = arith.constant 0.0 : f32
  %o = tensor.empty() : tensor<1x2x4x8x6xf32>
  %z = linalg.fill ins(%zero : f32) outs(%o : tensor<1x2x4x8x6xf32>) -> tensor<1x2x4x8x6xf32>
  %y = linalg.conv_3d_ndhwc_dhwcf {dilations = dense<1> : tensor<3xi64>, strides = dense<1> : tensor<3xi64>}
      ins(%u, %w : tensor<1x4x6x10x8xf32>, tensor<3x3x3x8x6xf32>) outs(%z : tensor<1x2x4x8x6xf32>) -> tensor<1x2x4x8x6xf32>
  return %y : tensor<1x2x4x8x6xf32>
}

// D, H and W upsampled, then a conv3d.conv with asymmetric padding and an
// FQRSC filter.
func.func @conv_dhw(%x: tensor<2x2x3x4x5xf32>, %w: tensor<6x3x2x3x5xf32>) -> tensor<2x5x7x8x6xf32> {
  %e = tensor.empty() : tensor<2x4x6x8x5xf32>
  %u = linalg.generic {indexing_maps = [#up_dhw, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<2x2x3x4x5xf32>) outs(%e : tensor<2x4x6x8x5xf32>) {
    ^bb0(%a: f32, %b: f32):
      linalg.yield %a : f32
  } -> tensor<2x4x6x8x5xf32>
  %o = tensor.empty() : tensor<2x5x7x8x6xf32>
  %y = conv3d.conv ins(%u, %w : tensor<2x4x6x8x5xf32>, tensor<6x3x2x3x5xf32>) outs(%o : tensor<2x5x7x8x6xf32>) overwrite padding = [2, 1, 1, 1, 0, 2] filter_layout = fqrsc -> tensor<2x5x7x8x6xf32>
  return %y : tensor<2x5x7x8x6xf32>
}
