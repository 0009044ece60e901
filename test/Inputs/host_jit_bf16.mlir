// examples/host-compiler/conv.mlir in bf16: host-jit runs f32 convolutions and
// refuses it (test/Install/install-and-consume.test).
func.func @conv(%x: tensor<1x6x8x8x4xbf16>, %w: tensor<3x3x3x4x8xbf16>)
    -> tensor<1x6x8x8x8xbf16> {
  %zero = arith.constant 0.0 : bf16
  %padded = tensor.pad %x low[0, 2, 1, 1, 0] high[0, 0, 1, 1, 0] {
  ^bb0(%n: index, %d: index, %h: index, %w0: index, %c: index):
    tensor.yield %zero : bf16
  } : tensor<1x6x8x8x4xbf16> to tensor<1x8x10x10x4xbf16>
  %empty = tensor.empty() : tensor<1x6x8x8x8xbf16>
  %init = linalg.fill ins(%zero : bf16) outs(%empty : tensor<1x6x8x8x8xbf16>)
      -> tensor<1x6x8x8x8xbf16>
  %y = linalg.conv_3d_ndhwc_dhwcf
      {dilations = dense<1> : tensor<3xi64>, strides = dense<1> : tensor<3xi64>}
      ins(%padded, %w : tensor<1x8x10x10x4xbf16>, tensor<3x3x3x4x8xbf16>)
      outs(%init : tensor<1x6x8x8x8xbf16>) -> tensor<1x6x8x8x8xbf16>
  return %y : tensor<1x6x8x8x8xbf16>
}
