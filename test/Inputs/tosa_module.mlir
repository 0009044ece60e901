// A module using the tosa dialect, which conv3d-opt registers (all of MLIR)
// and the example host compiler does not (test/Install/install-and-consume.test).
func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tosa.abs %a : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
