// conv3d-lower-conv-gradients of a data gradient through an activation:
// every phase's forward convolution multiplies by the activation's
// derivative in its epilogue (activation = *_backward, the pre-activation
// at the phase's positions as its residual operand). Positions no phase
// reaches are zero (overwrite) or, accumulating, outs times the factor.
// test/Execution/conv3d-run-dgrad-activation.test runs the same cases.
//
// RUN: conv3d-opt --conv3d-lower-conv-gradients %s | FileCheck %s
// RUN: conv3d-opt --conv3d-lower-conv-gradients="target=sm90 dgrad-activation=fused" %s | FileCheck %s
// RUN: conv3d-opt --conv3d-lower-conv-gradients="target=sm90" %s | FileCheck %s --check-prefix=SM90
// RUN: conv3d-opt --conv3d-lower-conv-gradients="dgrad-activation=separate" %s | FileCheck %s --check-prefix=SEPARATE
// RUN: not conv3d-opt --conv3d-lower-conv-gradients="dgrad-activation=inline" %s 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: for the --dgrad-activation option: Cannot find option named 'inline'!

// On a GPU target (dgrad-activation=auto) the unstrided, overwritten
// 16-bit gradient is its plain phase (TMA-stored) and one element-wise
// pass; the strided one and the f32, accumulated one keep the fused
// epilogue. `separate` does the pass for every one.
// SM90-LABEL: func.func @dgrad_silu
// SM90-SAME: %[[Z:[a-z0-9]+]]: tensor<1x6x6x6x8xbf16>
// SM90: %[[DX:.*]] = conv3d.conv ins({{.*}}) outs({{.*}}) overwrite padding = [1, 1, 1, 1, 1, 1] -> tensor<1x6x6x6x8xbf16>
// SM90: linalg.generic {{.*}} ins(%[[Z]] : tensor<1x6x6x6x8xbf16>) outs(%[[DX]] : tensor<1x6x6x6x8xbf16>)
// SM90: math.exp
// SM90-LABEL: func.func @dgrad_relu_strided
// SM90-COUNT-8: activation = relu_backward
// SM90-LABEL: func.func @dgrad_gelu_shortcut_accumulate
// SM90: activation = gelu_tanh_backward
// SEPARATE-LABEL: func.func @dgrad_relu_strided
// SEPARATE-COUNT-8: conv3d.conv ins({{.*}}) outs({{.*}}) overwrite
// SEPARATE: linalg.generic
// SEPARATE: arith.cmpf ogt
// SEPARATE-LABEL: func.func @dgrad_gelu_shortcut_accumulate
// SEPARATE-NOT: _backward
// SEPARATE: %[[C:.*]] = conv3d.conv ins({{.*}}) outs({{.*}}) -> tensor<2x2x2x2x8xf32>
// SEPARATE: %[[ALL:.*]] = tensor.insert_slice %[[C]]
// SEPARATE: linalg.generic {{.*}} outs(%[[ALL]] : tensor<2x4x4x4x8xf32>)
// SEPARATE: math.tanh

// Stride 1: one convolution writes the whole gradient; the pre-activation
// is its residual as it is.
// CHECK-LABEL: func.func @dgrad_silu
// CHECK-SAME: %[[Z:[a-z0-9]+]]: tensor<1x6x6x6x8xbf16>
// CHECK-NOT: conv3d.conv_backward_data
// CHECK: conv3d.conv ins(%{{.*}}, %{{.*}} : tensor<1x6x6x6x16xbf16>, tensor<3x3x3x16x8xbf16>) residual(%[[Z]] : tensor<1x6x6x6x8xbf16>) outs(%{{.*}} : tensor<1x6x6x6x8xbf16>) overwrite padding = [1, 1, 1, 1, 1, 1] activation = silu_backward
// CHECK-NOT: conv3d.conv
// CHECK: return
func.func @dgrad_silu(%dy: tensor<1x6x6x6x16xbf16>, %w: tensor<3x3x3x8x16xbf16>,
                      %z: tensor<1x6x6x6x8xbf16>) -> tensor<1x6x6x6x8xbf16> {
  %e = tensor.empty() : tensor<1x6x6x6x8xbf16>
  %dx = conv3d.conv_backward_data ins(%dy, %w : tensor<1x6x6x6x16xbf16>,
                                                tensor<3x3x3x8x16xbf16>)
          pre_activation(%z : tensor<1x6x6x6x8xbf16>)
          outs(%e : tensor<1x6x6x6x8xbf16>) overwrite
          padding = [1, 1, 1, 1, 1, 1] activation = silu
          -> tensor<1x6x6x6x8xbf16>
  return %dx : tensor<1x6x6x6x8xbf16>
}

// Stride 2 (8 phases): a residual means no TMA store, so each phase reads
// its strided positions of the pre-activation and writes those of the
// gradient in place (strided views, no dense blocks or copies).
// CHECK-LABEL: func.func @dgrad_relu_strided
// CHECK-SAME: %[[Z:[a-z0-9]+]]: tensor<1x8x8x8x8xbf16>
// CHECK-NOT: alloc_tensor
// CHECK: %[[OUT:.*]] = tensor.extract_slice %{{.*}}[0, 0, 0, 0, 0] [1, 4, 4, 4, 8] [1, 2, 2, 2, 1]
// CHECK: %[[ZS:.*]] = tensor.extract_slice %[[Z]][0, 0, 0, 0, 0] [1, 4, 4, 4, 8] [1, 2, 2, 2, 1]
// CHECK: conv3d.conv ins({{.*}}) residual(%[[ZS]] : tensor<1x4x4x4x8xbf16>) outs(%[[OUT]] : tensor<1x4x4x4x8xbf16>) overwrite activation = relu_backward
// CHECK-COUNT-7: activation = relu_backward
// CHECK-NOT: conv3d.conv
// CHECK-NOT: alloc_tensor
// CHECK: return
func.func @dgrad_relu_strided(%dy: tensor<1x4x4x4x16xbf16>,
                              %w: tensor<3x3x3x8x16xbf16>,
                              %z: tensor<1x8x8x8x8xbf16>)
    -> tensor<1x8x8x8x8xbf16> {
  %e = tensor.empty() : tensor<1x8x8x8x8xbf16>
  %dx = conv3d.conv_backward_data ins(%dy, %w : tensor<1x4x4x4x16xbf16>,
                                                tensor<3x3x3x8x16xbf16>)
          pre_activation(%z : tensor<1x8x8x8x8xbf16>)
          outs(%e : tensor<1x8x8x8x8xbf16>) overwrite
          strides = [2, 2, 2] padding = [1, 1, 1, 1, 1, 1] activation = relu
          -> tensor<1x8x8x8x8xbf16>
  return %dx : tensor<1x8x8x8x8xbf16>
}

// A 1x1x1 stride-2 shortcut, accumulating onto another path's gradient:
// only the even positions are a phase. The others keep outs times the
// factor (one elementwise generic updating outs, computing the derivative
// with math.tanh); the phase starts from the original outs.
// CHECK-LABEL: func.func @dgrad_gelu_shortcut_accumulate
// CHECK-SAME: %[[Z:[a-z0-9]+]]: tensor<2x4x4x4x8xf32>, %[[E:[a-z0-9]+]]: tensor<2x4x4x4x8xf32>
// CHECK: %[[SCALED:.*]] = linalg.generic {{.*}} ins(%[[Z]] : tensor<2x4x4x4x8xf32>) outs(%[[E]] : tensor<2x4x4x4x8xf32>)
// CHECK: math.tanh
// CHECK: %[[INIT:.*]] = tensor.extract_slice %[[E]][0, 0, 0, 0, 0] [2, 2, 2, 2, 8] [1, 2, 2, 2, 1]
// CHECK: %[[ZS:.*]] = tensor.extract_slice %[[Z]][0, 0, 0, 0, 0] [2, 2, 2, 2, 8] [1, 2, 2, 2, 1]
// CHECK: %[[C:.*]] = conv3d.conv ins({{.*}}) residual(%[[ZS]] : tensor<2x2x2x2x8xf32>) outs(%[[INIT]] : tensor<2x2x2x2x8xf32>) activation = gelu_tanh_backward
// CHECK: tensor.insert_slice %[[C]] into %[[SCALED]][0, 0, 0, 0, 0] [2, 2, 2, 2, 8] [1, 2, 2, 2, 1]
// CHECK-NOT: conv3d.conv
// CHECK: return
func.func @dgrad_gelu_shortcut_accumulate(%dy: tensor<2x2x2x2x16xf32>,
                                          %w: tensor<1x1x1x8x16xf32>,
                                          %z: tensor<2x4x4x4x8xf32>,
                                          %e: tensor<2x4x4x4x8xf32>)
    -> tensor<2x4x4x4x8xf32> {
  %dx = conv3d.conv_backward_data ins(%dy, %w : tensor<2x2x2x2x16xf32>,
                                                tensor<1x1x1x8x16xf32>)
          pre_activation(%z : tensor<2x4x4x4x8xf32>)
          outs(%e : tensor<2x4x4x4x8xf32>)
          strides = [2, 2, 2] activation = gelu_tanh
          -> tensor<2x4x4x4x8xf32>
  return %dx : tensor<2x4x4x4x8xf32>
}
