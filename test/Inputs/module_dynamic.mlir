// Functions of dynamic shape for conv3d-run --module, compiled for the
// shapes of the .npy arguments (test/Execution/module-dynamic-shapes.test).

// A dynamic batch and depth, as IREE and torch-mlir hand them over: the
// result's sizes follow from the input's.
func.func @conv(%x: tensor<?x?x8x8x16xbf16>, %w: tensor<3x3x3x16x8xbf16>)
    -> tensor<?x?x6x6x8xbf16> {
  %zero = arith.constant 0.0 : bf16
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %n = tensor.dim %x, %c0 : tensor<?x?x8x8x16xbf16>
  %d = tensor.dim %x, %c1 : tensor<?x?x8x8x16xbf16>
  %do = arith.subi %d, %c2 : index
  %empty = tensor.empty(%n, %do) : tensor<?x?x6x6x8xbf16>
  %init = linalg.fill ins(%zero : bf16) outs(%empty : tensor<?x?x6x6x8xbf16>)
      -> tensor<?x?x6x6x8xbf16>
  %y = linalg.conv_3d_ndhwc_dhwcf
      {dilations = dense<1> : tensor<3xi64>, strides = dense<1> : tensor<3xi64>}
      ins(%x, %w : tensor<?x?x8x8x16xbf16>, tensor<3x3x3x16x8xbf16>)
      outs(%init : tensor<?x?x6x6x8xbf16>) -> tensor<?x?x6x6x8xbf16>
  return %y : tensor<?x?x6x6x8xbf16>
}

// Memref form: the destination is an argument too.
func.func @conv_buffers(%x: memref<?x6x8x8x16xf32>, %w: memref<3x3x3x16x8xf32>,
                        %y: memref<?x4x6x6x8xf32>) {
  conv3d.conv ins(%x, %w : memref<?x6x8x8x16xf32>, memref<3x3x3x16x8xf32>)
      outs(%y : memref<?x4x6x6x8xf32>) overwrite
  return
}
