// Parse/print round trips of the gradient ops, in the custom form and
// through the generic form and bytecode. Default-valued attributes are
// elided when printed.
//
// RUN: conv3d-opt %s | conv3d-opt | FileCheck %s
// RUN: conv3d-opt %s --mlir-print-op-generic | conv3d-opt | FileCheck %s
// RUN: conv3d-opt %s -emit-bytecode | conv3d-opt | FileCheck %s

// CHECK-LABEL: func @dgrad
// CHECK: conv3d.conv_backward_data ins(%{{.*}}, %{{.*}} : tensor<1x4x4x4x32xbf16>, tensor<3x3x3x16x32xbf16>) outs(%{{.*}} : tensor<1x8x8x8x16xbf16>) overwrite strides = [2, 2, 2] padding = [1, 1, 1, 1, 1, 1] -> tensor<1x8x8x8x16xbf16>
func.func @dgrad(%dy: tensor<1x4x4x4x32xbf16>, %w: tensor<3x3x3x16x32xbf16>,
                 %e: tensor<1x8x8x8x16xbf16>) -> tensor<1x8x8x8x16xbf16> {
  %dx = conv3d.conv_backward_data ins(%dy, %w : tensor<1x4x4x4x32xbf16>,
                                                tensor<3x3x3x16x32xbf16>)
          outs(%e : tensor<1x8x8x8x16xbf16>) overwrite
          strides = [2, 2, 2] padding = [1, 1, 1, 1, 1, 1]
          -> tensor<1x8x8x8x16xbf16>
  return %dx : tensor<1x8x8x8x16xbf16>
}

// CHECK-LABEL: func @dgrad_fqrsc_accumulate
// CHECK: conv3d.conv_backward_data ins({{.*}}) outs(%{{.*}} : tensor<1x5x5x5x4xf32>) dilations = [2, 1, 1] filter_layout = fqrsc -> tensor<1x5x5x5x4xf32>
func.func @dgrad_fqrsc_accumulate(%dy: tensor<1x3x3x3x8xf16>, %w: tensor<8x2x3x3x4xf16>,
                                  %e: tensor<1x5x5x5x4xf32>) -> tensor<1x5x5x5x4xf32> {
  %dx = conv3d.conv_backward_data ins(%dy, %w : tensor<1x3x3x3x8xf16>,
                                                tensor<8x2x3x3x4xf16>)
          outs(%e : tensor<1x5x5x5x4xf32>) dilations = [2, 1, 1]
          filter_layout = fqrsc -> tensor<1x5x5x5x4xf32>
  return %dx : tensor<1x5x5x5x4xf32>
}

// CHECK-LABEL: func @wgrad
// CHECK: conv3d.conv_backward_filter ins(%{{.*}}, %{{.*}} : tensor<1x8x8x8x16xbf16>, tensor<1x4x4x4x32xbf16>) outs(%{{.*}} : tensor<3x3x3x16x32xf32>) overwrite strides = [2, 2, 2] padding = [1, 1, 1, 1, 1, 1] -> tensor<3x3x3x16x32xf32>
func.func @wgrad(%x: tensor<1x8x8x8x16xbf16>, %dy: tensor<1x4x4x4x32xbf16>,
                 %e: tensor<3x3x3x16x32xf32>) -> tensor<3x3x3x16x32xf32> {
  %dw = conv3d.conv_backward_filter ins(%x, %dy : tensor<1x8x8x8x16xbf16>,
                                                  tensor<1x4x4x4x32xbf16>)
          outs(%e : tensor<3x3x3x16x32xf32>) overwrite
          strides = [2, 2, 2] padding = [1, 1, 1, 1, 1, 1]
          -> tensor<3x3x3x16x32xf32>
  return %dw : tensor<3x3x3x16x32xf32>
}

// CHECK-LABEL: func @dgrad_through_activation
// CHECK: conv3d.conv_backward_data ins(%{{.*}}, %{{.*}} : tensor<1x8x8x8x32xbf16>, tensor<3x3x3x16x32xbf16>) pre_activation(%{{.*}} : tensor<1x8x8x8x16xbf16>) outs(%{{.*}} : tensor<1x8x8x8x16xbf16>) overwrite padding = [1, 1, 1, 1, 1, 1] activation = silu -> tensor<1x8x8x8x16xbf16>
func.func @dgrad_through_activation(%dy: tensor<1x8x8x8x32xbf16>,
                                    %w: tensor<3x3x3x16x32xbf16>,
                                    %z: tensor<1x8x8x8x16xbf16>,
                                    %e: tensor<1x8x8x8x16xbf16>)
    -> tensor<1x8x8x8x16xbf16> {
  %dx = conv3d.conv_backward_data ins(%dy, %w : tensor<1x8x8x8x32xbf16>,
                                                tensor<3x3x3x16x32xbf16>)
          pre_activation(%z : tensor<1x8x8x8x16xbf16>)
          outs(%e : tensor<1x8x8x8x16xbf16>) overwrite
          padding = [1, 1, 1, 1, 1, 1] activation = silu
          -> tensor<1x8x8x8x16xbf16>
  return %dx : tensor<1x8x8x8x16xbf16>
}

// The derivative epilogue of conv3d.conv (what the data gradient lowers
// to): the residual operand is the pre-activation.
// CHECK-LABEL: func @conv_derivative_epilogue
// CHECK: conv3d.conv ins(%{{.*}}, %{{.*}} : tensor<1x8x8x8x32xbf16>, tensor<3x3x3x32x16xbf16>) residual(%{{.*}} : tensor<1x8x8x8x16xbf16>) outs(%{{.*}} : tensor<1x8x8x8x16xf32>) overwrite padding = [1, 1, 1, 1, 1, 1] activation = gelu_tanh_backward -> tensor<1x8x8x8x16xf32>
func.func @conv_derivative_epilogue(%x: tensor<1x8x8x8x32xbf16>,
                                    %w: tensor<3x3x3x32x16xbf16>,
                                    %z: tensor<1x8x8x8x16xbf16>,
                                    %e: tensor<1x8x8x8x16xf32>)
    -> tensor<1x8x8x8x16xf32> {
  %y = conv3d.conv ins(%x, %w : tensor<1x8x8x8x32xbf16>,
                                tensor<3x3x3x32x16xbf16>)
         residual(%z : tensor<1x8x8x8x16xbf16>)
         outs(%e : tensor<1x8x8x8x16xf32>) overwrite
         padding = [1, 1, 1, 1, 1, 1] activation = gelu_tanh_backward
         -> tensor<1x8x8x8x16xf32>
  return %y : tensor<1x8x8x8x16xf32>
}
