// A function whose result (2^40 f32, 4 TiB) no host can hold: conv3d-run
// must refuse to allocate it, naming the bytes (see
// Execution/module-mode.test).
func.func @huge(%a: tensor<4xf32>) -> tensor<1099511627776xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<1099511627776xf32>
  %filled = linalg.fill ins(%zero : f32) outs(%empty : tensor<1099511627776xf32>) -> tensor<1099511627776xf32>
  return %filled : tensor<1099511627776xf32>
}
