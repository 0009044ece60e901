// Convolutions in memref form inside functions on tensors (the form a
// module written after bufferization has): conv3d-run's module mode reads
// their results back. memref-form-numpy.test runs them on both CPU
// lowerings.

// Overwritten, strided and padded.
func.func @conv(%x: tensor<1x5x6x6x8xf32>, %w: tensor<3x3x3x8x16xf32>) -> tensor<1x3x6x3x16xf32> {
  %xm = bufferization.to_buffer %x read_only : tensor<1x5x6x6x8xf32> to memref<1x5x6x6x8xf32>
  %wm = bufferization.to_buffer %w read_only : tensor<3x3x3x8x16xf32> to memref<3x3x3x8x16xf32>
  %o = memref.alloc() : memref<1x3x6x3x16xf32>
  conv3d.conv ins(%xm, %wm : memref<1x5x6x6x8xf32>, memref<3x3x3x8x16xf32>) outs(%o : memref<1x3x6x3x16xf32>) overwrite strides = [2, 1, 2] padding = [2, 0, 1, 1, 1, 1]
  %r = bufferization.to_tensor %o restrict : memref<1x3x6x3x16xf32> to tensor<1x3x6x3x16xf32>
  return %r : tensor<1x3x6x3x16xf32>
}

// Accumulated onto the output's contents, with bias and ReLU.
func.func @accumulate(%x: tensor<1x4x6x6x8xf32>, %w: tensor<3x3x3x8x16xf32>, %b: tensor<16xf32>, %init: tensor<1x4x6x6x16xf32>) -> tensor<1x4x6x6x16xf32> {
  %xm = bufferization.to_buffer %x read_only : tensor<1x4x6x6x8xf32> to memref<1x4x6x6x8xf32>
  %wm = bufferization.to_buffer %w read_only : tensor<3x3x3x8x16xf32> to memref<3x3x3x8x16xf32>
  %bm = bufferization.to_buffer %b read_only : tensor<16xf32> to memref<16xf32>
  %im = bufferization.to_buffer %init read_only : tensor<1x4x6x6x16xf32> to memref<1x4x6x6x16xf32>
  %o = memref.alloc() : memref<1x4x6x6x16xf32>
  memref.copy %im, %o : memref<1x4x6x6x16xf32> to memref<1x4x6x6x16xf32>
  conv3d.conv ins(%xm, %wm : memref<1x4x6x6x8xf32>, memref<3x3x3x8x16xf32>) bias(%bm : memref<16xf32>) outs(%o : memref<1x4x6x6x16xf32>) padding = [1, 1, 1, 1, 1, 1] activation = relu
  %r = bufferization.to_tensor %o restrict : memref<1x4x6x6x16xf32> to tensor<1x4x6x6x16xf32>
  return %r : tensor<1x4x6x6x16xf32>
}
