// The GPU pipelines on convolutions of dynamic shape: the kernels tile static
// shapes, so such a convolution takes the reference lowering (device loops)
// with a remark (issue 26, item 8; the CPU pipeline:
// pipeline-dynamic-shapes.mlir). They import linalg convolutions and refuse
// one they cannot import (issue 26, item 7), and a module lowered before
// (item 12), as the CPU pipeline does.
// REQUIRES: ptxas
//
// RUN: conv3d-opt %s -split-input-file '--conv3d-gpu-pipeline=target=sm80 gpu-binary-format=isa' -verify-diagnostics | FileCheck %s
// RUN: conv3d-opt %s -split-input-file '--conv3d-gpu-pipeline=target=sm90 gpu-binary-format=isa' -verify-diagnostics | FileCheck %s

// CHECK-LABEL: llvm.func @dynamic_batch
// CHECK: gpu.binary
func.func @dynamic_batch(%x: tensor<?x6x8x8x16xbf16>, %w: tensor<3x3x3x16x16xbf16>)
    -> tensor<?x4x6x6x16xbf16> {
  %zero = arith.constant 0.0 : bf16
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x6x8x8x16xbf16>
  %empty = tensor.empty(%n) : tensor<?x4x6x6x16xbf16>
  %init = linalg.fill ins(%zero : bf16) outs(%empty : tensor<?x4x6x6x16xbf16>)
      -> tensor<?x4x6x6x16xbf16>
  // expected-remark @below {{takes the reference lowering (direct loops) instead}}
  %y = linalg.conv_3d_ndhwc_dhwcf
      {dilations = dense<1> : tensor<3xi64>, strides = dense<1> : tensor<3xi64>}
      ins(%x, %w : tensor<?x6x8x8x16xbf16>, tensor<3x3x3x16x16xbf16>)
      outs(%init : tensor<?x4x6x6x16xbf16>) -> tensor<?x4x6x6x16xbf16>
  return %y : tensor<?x4x6x6x16xbf16>
}

// -----

func.func @integer_types(%x: tensor<1x6x6x6x4xi8>, %w: tensor<3x3x3x4x8xi8>,
                         %o: tensor<1x4x4x4x8xi32>) -> tensor<1x4x4x4x8xi32> {
  // expected-error @below {{cannot import this convolution into conv3d: conv3d computes bf16, f16 and f32 convolutions}}
  %0 = linalg.conv_3d_ndhwc_dhwcf
         ins(%x, %w : tensor<1x6x6x6x4xi8>, tensor<3x3x3x4x8xi8>)
         outs(%o : tensor<1x4x4x4x8xi32>) -> tensor<1x4x4x4x8xi32>
  return %0 : tensor<1x4x4x4x8xi32>
}

// -----

// A module lowered before (it frees its buffers) is refused with what the
// pipelines take, not upstream's deallocation error.
func.func @lowered(%x: memref<4xf32>) {
  %a = memref.alloc() : memref<4xf32>
  memref.copy %x, %a : memref<4xf32> to memref<4xf32>
  // expected-error @below {{this module already frees its buffers (memref.dealloc): it was bufferized and lowered before}}
  memref.dealloc %a : memref<4xf32>
  return
}
