// One-shot bufferization of conv3d.conv with a history operand and an input
// prologue: the memref form keeps every operand and attribute; the history
// and the norm vectors are only read (no copies).
//
// RUN: conv3d-opt %s -one-shot-bufferize="bufferize-function-boundaries" | FileCheck %s

// CHECK-LABEL: func.func @conv_history_prologue
//  CHECK-SAME:   (%[[X:[^:]+]]: memref<1x4x6x6x8xbf16{{.*}}>, %[[H:[^:]+]]: memref<1x2x6x6x8xbf16{{.*}}>, %[[W:[^:]+]]: memref<3x3x3x8x16xbf16{{.*}}>, %[[G:[^:]+]]: memref<8xf32{{.*}}>, %[[B:[^:]+]]: memref<8xf32{{.*}}>)
//   CHECK-NOT:   memref.copy
//       CHECK:   %[[ALLOC:.*]] = memref.alloc() {{.*}}: memref<1x4x6x6x16xbf16>
//   CHECK-NOT:   memref.copy
//       CHECK:   conv3d.conv ins(%[[X]], %[[W]] : {{.*}}) history(%[[H]] : {{.*}}) rms_norm(%[[G]] : {{.*}}) norm_beta(%[[B]] : {{.*}}) norm_eps = 9.99999997E-7 input_activation = silu outs(%[[ALLOC]] : memref<1x4x6x6x16xbf16>) overwrite padding = [0, 0, 1, 1, 1, 1]{{$}}
//       CHECK:   return %[[ALLOC]]
func.func @conv_history_prologue(%x: tensor<1x4x6x6x8xbf16>, %h: tensor<1x2x6x6x8xbf16>, %w: tensor<3x3x3x8x16xbf16>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<1x4x6x6x16xbf16> {
  %e = tensor.empty() : tensor<1x4x6x6x16xbf16>
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xbf16>, tensor<3x3x3x8x16xbf16>) history(%h : tensor<1x2x6x6x8xbf16>) rms_norm(%g : tensor<8xf32>) norm_beta(%b : tensor<8xf32>) norm_eps = 1.0e-6 input_activation = silu outs(%e : tensor<1x4x6x6x16xbf16>) overwrite padding = [0, 0, 1, 1, 1, 1] -> tensor<1x4x6x6x16xbf16>
  return %0 : tensor<1x4x6x6x16xbf16>
}
