// The implicit-GEMM pipelines tile convolutions of static shape; one with a
// dynamic batch or depth (as IREE and torch-mlir hand them over) takes the
// reference lowering with a remark instead of failing (issue 26, item 8).
// conv3d-run --module compiles such functions for their arguments' shapes
// instead (test/Execution/module-dynamic-shapes.test). The GPU pipelines:
// gpu-pipeline-dynamic-shapes.mlir.
//
// RUN: conv3d-opt %s -split-input-file --conv3d-cpu-pipeline -verify-diagnostics | FileCheck %s
// RUN: conv3d-opt %s -split-input-file --conv3d-graph-pipeline | FileCheck %s --check-prefix=GRAPH
// RUN: conv3d-opt %s -split-input-file --conv3d-to-linalg=lower-conv=0 | FileCheck %s --check-prefix=KEEP
// RUN: conv3d-opt %s -split-input-file '--conv3d-to-linalg=lower-conv=0 lower-dynamic-conv=1' 2>/dev/null | FileCheck %s --check-prefix=LOWERED

// CHECK-LABEL: llvm.func @dynamic_batch
// GRAPH-LABEL: func.func @dynamic_batch
// GRAPH: conv3d.conv {{.*}} -> tensor<?x4x6x6x16xbf16>
func.func @dynamic_batch(%x: tensor<?x6x8x8x16xbf16>, %w: tensor<3x3x3x16x16xbf16>)
    -> tensor<?x4x6x6x16xbf16> {
  %zero = arith.constant 0.0 : bf16
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x6x8x8x16xbf16>
  %empty = tensor.empty(%n) : tensor<?x4x6x6x16xbf16>
  %init = linalg.fill ins(%zero : bf16) outs(%empty : tensor<?x4x6x6x16xbf16>)
      -> tensor<?x4x6x6x16xbf16>
  // expected-remark @below {{conv3d-implicit-gemm tiles convolutions of static shape: this one (input 'tensor<?x6x8x8x16xbf16>') takes the reference lowering (direct loops) instead}}
  %y = linalg.conv_3d_ndhwc_dhwcf
      {dilations = dense<1> : tensor<3xi64>, strides = dense<1> : tensor<3xi64>}
      ins(%x, %w : tensor<?x6x8x8x16xbf16>, tensor<3x3x3x16x16xbf16>)
      outs(%init : tensor<?x4x6x6x16xbf16>) -> tensor<?x4x6x6x16xbf16>
  return %y : tensor<?x4x6x6x16xbf16>
}

// -----

// A dynamic depth in conv3d's own dialect; a static convolution beside it
// keeps the implicit GEMM (no remark).
// CHECK-LABEL: llvm.func @dynamic_depth
// KEEP-LABEL: func.func @dynamic_depth
// KEEP: conv3d.conv
// KEEP: conv3d.conv
// LOWERED-LABEL: func.func @dynamic_depth
// LOWERED: linalg.generic
// LOWERED: conv3d.conv {{.*}} -> tensor<1x4x6x6x16xf32>
func.func @dynamic_depth(%x: tensor<1x?x8x8x16xf32>, %w: tensor<3x3x3x16x16xf32>,
                         %init: tensor<1x?x6x6x16xf32>, %xs: tensor<1x6x8x8x16xf32>,
                         %inits: tensor<1x4x6x6x16xf32>)
    -> (tensor<1x?x6x6x16xf32>, tensor<1x4x6x6x16xf32>) {
  // expected-remark @below {{takes the reference lowering (direct loops) instead}}
  %y = conv3d.conv ins(%x, %w : tensor<1x?x8x8x16xf32>, tensor<3x3x3x16x16xf32>)
      outs(%init : tensor<1x?x6x6x16xf32>) overwrite -> tensor<1x?x6x6x16xf32>
  %s = conv3d.conv ins(%xs, %w : tensor<1x6x8x8x16xf32>, tensor<3x3x3x16x16xf32>)
      outs(%inits : tensor<1x4x6x6x16xf32>) overwrite -> tensor<1x4x6x6x16xf32>
  return %y, %s : tensor<1x?x6x6x16xf32>, tensor<1x4x6x6x16xf32>
}
