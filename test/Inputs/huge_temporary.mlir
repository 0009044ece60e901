// A temporary of 4e12 bytes inside a function whose arguments are small.
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<1000000000000xf32>
  %f = tensor.insert_slice %x into %e[0] [4] [1] : tensor<4xf32> into tensor<1000000000000xf32>
  %s = tensor.extract_slice %f[1] [4] [1] : tensor<1000000000000xf32> to tensor<4xf32>
  return %s : tensor<4xf32>
}
