// A QRSCF convolution the sm90 kernel takes once its filter is FQRSC
// (test/Transforms/relayout-filter-cpu.test): bf16 operands, f32 output.
func.func @main(%x: tensor<1x4x6x5x64xbf16>, %w: tensor<3x3x3x64x24xbf16>)
    -> tensor<1x4x6x5x24xf32> {
  %e = tensor.empty() : tensor<1x4x6x5x24xf32>
  %y = conv3d.conv ins(%x, %w : tensor<1x4x6x5x64xbf16>, tensor<3x3x3x64x24xbf16>)
         outs(%e : tensor<1x4x6x5x24xf32>) overwrite
         padding = [2, 0, 1, 1, 1, 1] -> tensor<1x4x6x5x24xf32>
  return %y : tensor<1x4x6x5x24xf32>
}
