// Forms the reference lowering does not handle are reported, not skipped
// silently: buffers (the pass runs before bufferization) and input
// quantization with dynamic shapes (the im2col matrix needs a static size).
//
// RUN: conv3d-opt %s -conv3d-to-linalg -split-input-file -verify-diagnostics

func.func @conv_memref(%x: memref<1x4x6x6x8xf32>, %w: memref<3x3x3x8x16xf32>,
                       %init: memref<1x2x4x4x16xf32>) {
  // expected-error @+1 {{conv3d-to-linalg lowers the tensor form only; run it before bufferization}}
  conv3d.conv ins(%x, %w : memref<1x4x6x6x8xf32>, memref<3x3x3x8x16xf32>)
    outs(%init : memref<1x2x4x4x16xf32>) overwrite
  return
}

// -----

func.func @quantize_memref(%x: memref<1x2x2x2x16xbf16>, %amax: f32,
                           %e: memref<1x2x2x2x16xbf16>) {
  // expected-error @+1 {{conv3d-to-linalg lowers the tensor form only; run it before bufferization}}
  conv3d.quantize #conv3d.nvfp4<block_size = 16> axes = [4]
    ins(%x : memref<1x2x2x2x16xbf16>) amax(%amax) outs(%e : memref<1x2x2x2x16xbf16>)
  return
}

// -----

func.func @epilogue_memref(%sum: memref<1x2x2x2x4xf32>, %o: memref<1x2x2x2x4xf32>) {
  // expected-error @+1 {{conv3d-to-linalg lowers the tensor form only; run it before bufferization}}
  conv3d.epilogue ins(%sum : memref<1x2x2x2x4xf32>) outs(%o : memref<1x2x2x2x4xf32>) overwrite
  return
}

// -----

func.func @quantized_dynamic_batch(%x: tensor<?x4x6x6x16xf32>, %w: tensor<3x3x3x16x16xf32>,
                                   %amax: f32, %init: tensor<?x2x4x4x16xf32>) -> tensor<?x2x4x4x16xf32> {
  // expected-error @+1 {{conv3d-to-linalg needs static shapes to lower input quantization}}
  %0 = conv3d.conv ins(%x, %w : tensor<?x4x6x6x16xf32>, tensor<3x3x3x16x16xf32>)
         quantize(#conv3d.nvfp4<block_size = 16>, %amax)
         outs(%init : tensor<?x2x4x4x16xf32>) overwrite -> tensor<?x2x4x4x16xf32>
  return %0 : tensor<?x2x4x4x16xf32>
}
