// Forms the reference lowering does not handle are reported, not skipped
// silently: input quantization with dynamic shapes (the im2col matrix needs
// a static size), on tensors or, through their tensor form, on memrefs
// (to-linalg-memref.mlir has the memref forms it lowers).
//
// RUN: conv3d-opt %s -conv3d-to-linalg -split-input-file -verify-diagnostics

func.func @quantized_dynamic_batch(%x: tensor<?x4x6x6x16xf32>, %w: tensor<3x3x3x16x16xf32>,
                                   %amax: f32, %init: tensor<?x2x4x4x16xf32>) -> tensor<?x2x4x4x16xf32> {
  // expected-error @+1 {{conv3d-to-linalg needs static shapes to lower input quantization}}
  %0 = conv3d.conv ins(%x, %w : tensor<?x4x6x6x16xf32>, tensor<3x3x3x16x16xf32>)
         quantize(#conv3d.nvfp4<block_size = 16>, %amax)
         outs(%init : tensor<?x2x4x4x16xf32>) overwrite -> tensor<?x2x4x4x16xf32>
  return %0 : tensor<?x2x4x4x16xf32>
}

// -----

func.func @quantized_dynamic_batch_memref(%x: memref<?x4x6x6x16xf32>, %w: memref<3x3x3x16x16xf32>,
                                          %amax: f32, %init: memref<?x2x4x4x16xf32>) {
  // expected-error @+1 {{conv3d-to-linalg needs static shapes to lower input quantization}}
  conv3d.conv ins(%x, %w : memref<?x4x6x6x16xf32>, memref<3x3x3x16x16xf32>)
    quantize(#conv3d.nvfp4<block_size = 16>, %amax)
    outs(%init : memref<?x2x4x4x16xf32>) overwrite
  return
}
