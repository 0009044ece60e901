// What a front end hands over: a causally padded NDHWC convolution in linalg
// (two frames of zeros before the first along depth, one pixel around each
// frame), f32. conv3d-from-linalg folds the pad and the zero fill into one
// conv3d.conv; docs/dialect-and-passes.md runs it through conv3d-opt and
// conv3d-run --module.
func.func @conv(%x: tensor<1x6x8x8x4xf32>, %w: tensor<3x3x3x4x8xf32>)
    -> tensor<1x6x8x8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %padded = tensor.pad %x low[0, 2, 1, 1, 0] high[0, 0, 1, 1, 0] {
  ^bb0(%n: index, %d: index, %h: index, %w0: index, %c: index):
    tensor.yield %zero : f32
  } : tensor<1x6x8x8x4xf32> to tensor<1x8x10x10x4xf32>
  %empty = tensor.empty() : tensor<1x6x8x8x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<1x6x8x8x8xf32>)
      -> tensor<1x6x8x8x8xf32>
  %y = linalg.conv_3d_ndhwc_dhwcf
      {dilations = dense<1> : tensor<3xi64>, strides = dense<1> : tensor<3xi64>}
      ins(%padded, %w : tensor<1x8x10x10x4xf32>, tensor<3x3x3x4x8xf32>)
      outs(%init : tensor<1x6x8x8x8xf32>) -> tensor<1x6x8x8x8xf32>
  return %y : tensor<1x6x8x8x8xf32>
}
