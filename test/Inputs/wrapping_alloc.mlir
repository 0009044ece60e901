// A temporary whose byte count overflows int64 (2^62 x 4 f32): refused by
// conv3d-check-allocations, on its memref.alloc
// (test/Execution/errors-without-ir.test).
func.func @too_large(%i: index) -> tensor<1x4xf32> {
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4611686018427387904x4xf32>
  %f = linalg.fill ins(%one : f32) outs(%e : tensor<4611686018427387904x4xf32>) -> tensor<4611686018427387904x4xf32>
  %s = tensor.extract_slice %f[%i, 0] [1, 4] [1, 1] : tensor<4611686018427387904x4xf32> to tensor<1x4xf32>
  return %s : tensor<1x4xf32>
}
