// A temporary of 2^62 x 4 f32 elements: 2^66 bytes, more than int64 holds.
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4611686018427387904x4xf32>
  %x2 = tensor.expand_shape %x [[0, 1]] output_shape [1, 4] : tensor<4xf32> into tensor<1x4xf32>
  %f = tensor.insert_slice %x2 into %e[0, 0] [1, 4] [1, 1] : tensor<1x4xf32> into tensor<4611686018427387904x4xf32>
  %s = tensor.extract_slice %f[1, 0] [1, 4] [1, 1] : tensor<4611686018427387904x4xf32> to tensor<1x4xf32>
  %r = tensor.collapse_shape %s [[0, 1]] : tensor<1x4xf32> into tensor<4xf32>
  return %r : tensor<4xf32>
}
