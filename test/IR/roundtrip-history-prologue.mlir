// Parse/print round trips of conv3d.conv and conv3d.load_im2col_tile with a
// history operand and an input prologue (RMS norm with gamma and beta, eps,
// an input activation), in the custom form and through the generic form and
// bytecode.
//
// RUN: conv3d-opt %s | conv3d-opt | FileCheck %s
// RUN: conv3d-opt %s --mlir-print-op-generic | conv3d-opt | FileCheck %s
// RUN: conv3d-opt %s -emit-bytecode | conv3d-opt | FileCheck %s
// RUN: conv3d-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// A causal 3-tap conv over 2 cached frames + 4 new ones: padding [0, 0] in
// depth since the history supplies the past, so Do = 2 + 4 - 3 + 1 = 4.
// CHECK-LABEL: func.func @conv_history_prologue
//  CHECK-SAME:   (%[[X:[^:]+]]: tensor<1x4x6x6x8xbf16>, %[[H:[^:]+]]: tensor<1x2x6x6x8xbf16>, %[[W:[^:]+]]: tensor<3x3x3x8x16xbf16>, %[[G:[^:]+]]: tensor<8xf32>, %[[B:[^:]+]]: tensor<8xbf16>, %[[I:[^:]+]]: tensor<1x4x6x6x16xbf16>)
//       CHECK:   conv3d.conv ins(%[[X]], %[[W]] : tensor<1x4x6x6x8xbf16>, tensor<3x3x3x8x16xbf16>) history(%[[H]] : tensor<1x2x6x6x8xbf16>) rms_norm(%[[G]] : tensor<8xf32>) norm_beta(%[[B]] : tensor<8xbf16>) norm_eps = 9.99999997E-7 input_activation = silu outs(%[[I]] : tensor<1x4x6x6x16xbf16>) overwrite padding = [0, 0, 1, 1, 1, 1] activation = relu -> tensor<1x4x6x6x16xbf16>{{$}}
// GENERIC-LABEL: sym_name = "conv_history_prologue"
//       GENERIC: "conv3d.conv"({{.*}}) <{activation = #conv3d<activation relu>, {{.*}}input_activation = #conv3d<activation silu>, norm_eps = 9.99999997E-7 : f32, operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 1, 1, 1, 1, 0, 0>, overwrite, padding = array<i64: 0, 0, 1, 1, 1, 1>{{.*}}}>
func.func @conv_history_prologue(%x: tensor<1x4x6x6x8xbf16>, %h: tensor<1x2x6x6x8xbf16>,
                                 %w: tensor<3x3x3x8x16xbf16>, %g: tensor<8xf32>,
                                 %b: tensor<8xbf16>, %init: tensor<1x4x6x6x16xbf16>) -> tensor<1x4x6x6x16xbf16> {
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xbf16>, tensor<3x3x3x8x16xbf16>)
         history(%h : tensor<1x2x6x6x8xbf16>)
         rms_norm(%g : tensor<8xf32>) norm_beta(%b : tensor<8xbf16>) norm_eps = 1.0e-6
         input_activation = silu
         outs(%init : tensor<1x4x6x6x16xbf16>) overwrite
         padding = [0, 0, 1, 1, 1, 1] activation = relu -> tensor<1x4x6x6x16xbf16>
  return %0 : tensor<1x4x6x6x16xbf16>
}

// Each part alone: an empty history (Dh = 0), a norm without beta, an
// activation without a norm; memref form.
// CHECK-LABEL: func.func @conv_parts_memref
//       CHECK:   conv3d.conv ins(%{{.*}}, %{{.*}} : memref<1x4x6x6x8xf32>, memref<1x3x3x8x16xf32>) history(%{{.*}} : memref<1x0x6x6x8xf32>) outs(%{{.*}} : memref<1x4x4x4x16xf32>){{$}}
//       CHECK:   conv3d.conv ins(%{{.*}}, %{{.*}} : memref<1x4x6x6x8xf32>, memref<1x3x3x8x16xf32>) rms_norm(%{{.*}} : memref<8xf32>) norm_eps = 6.250000e-02 outs(%{{.*}} : memref<1x4x4x4x16xf32>){{$}}
//       CHECK:   conv3d.conv ins(%{{.*}}, %{{.*}} : memref<1x4x6x6x8xf32>, memref<1x3x3x8x16xf32>) input_activation = gelu_tanh outs(%{{.*}} : memref<1x4x4x4x16xf32>){{$}}
func.func @conv_parts_memref(%x: memref<1x4x6x6x8xf32>, %h: memref<1x0x6x6x8xf32>,
                             %w: memref<1x3x3x8x16xf32>, %g: memref<8xf32>,
                             %o: memref<1x4x4x4x16xf32>) {
  conv3d.conv ins(%x, %w : memref<1x4x6x6x8xf32>, memref<1x3x3x8x16xf32>)
    history(%h : memref<1x0x6x6x8xf32>) outs(%o : memref<1x4x4x4x16xf32>)
  conv3d.conv ins(%x, %w : memref<1x4x6x6x8xf32>, memref<1x3x3x8x16xf32>)
    rms_norm(%g : memref<8xf32>) norm_eps = 0.0625 outs(%o : memref<1x4x4x4x16xf32>)
  conv3d.conv ins(%x, %w : memref<1x4x6x6x8xf32>, memref<1x3x3x8x16xf32>)
    input_activation = gelu_tanh outs(%o : memref<1x4x4x4x16xf32>)
  return
}

// Dynamic depths: the output depth follows from D + Dh when both are known,
// and is unchecked otherwise.
// CHECK-LABEL: func.func @conv_dynamic_history
//       CHECK:   history(%{{.*}} : tensor<1x?x6x6x8xf32>)
func.func @conv_dynamic_history(%x: tensor<1x4x6x6x8xf32>, %h: tensor<1x?x6x6x8xf32>,
                                %w: tensor<3x3x3x8x16xf32>, %init: tensor<1x?x4x4x16xf32>) -> tensor<1x?x4x4x16xf32> {
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf32>, tensor<3x3x3x8x16xf32>)
         history(%h : tensor<1x?x6x6x8xf32>) outs(%init : tensor<1x?x4x4x16xf32>) -> tensor<1x?x4x4x16xf32>
  return %0 : tensor<1x?x4x4x16xf32>
}

// CHECK-LABEL: func.func @im2col_history_prologue
//       CHECK:   conv3d.load_im2col_tile %{{.*}}[%{{.*}}, %{{.*}}] limit %{{.*}} into %{{.*}} history(%{{.*}} : memref<1x2x6x6x8xbf16>) rms_norm(%{{.*}} : memref<8xf32>) norm_beta(%{{.*}} : memref<8xf32>) norm_eps = 1.250000e-01 input_activation = relu window = [3, 3, 3] padding = [0, 0, 1, 1, 1, 1] : memref<1x4x6x6x8xbf16>, memref<32x32xbf16>{{$}}
func.func @im2col_history_prologue(%x: memref<1x4x6x6x8xbf16>, %h: memref<1x2x6x6x8xbf16>,
                                   %g: memref<8xf32>, %b: memref<8xf32>, %a: memref<32x32xbf16>,
                                   %m0: index, %k0: index, %k: index) {
  conv3d.load_im2col_tile %x[%m0, %k0] limit %k into %a history(%h : memref<1x2x6x6x8xbf16>)
      rms_norm(%g : memref<8xf32>) norm_beta(%b : memref<8xf32>) norm_eps = 0.125
      input_activation = relu window = [3, 3, 3] padding = [0, 0, 1, 1, 1, 1]
      : memref<1x4x6x6x8xbf16>, memref<32x32xbf16>
  return
}

// The RMS norm prepass and a tile load reading its per-voxel statistic.
// CHECK-LABEL: func.func @prepass_norm_scale
//       CHECK:   conv3d.voxel_rms_scale %[[X:.*]] into %[[S:.*]] eps = 1.250000e-01 : memref<1x4x6x6x8xbf16>, memref<1x4x6x6xf32>
//       CHECK:   conv3d.load_im2col_tile %[[X]][%{{.*}}, %{{.*}}] limit %{{.*}} into %{{.*}} rms_norm(%{{.*}} : memref<8xf32>) norm_scale(%[[S]] : memref<1x4x6x6xf32>) norm_eps = 1.250000e-01 input_activation = silu window = [3, 3, 3] : memref<1x4x6x6x8xbf16>, memref<32x32xbf16>{{$}}
func.func @prepass_norm_scale(%x: memref<1x4x6x6x8xbf16>, %s: memref<1x4x6x6xf32>,
                              %g: memref<8xf32>, %a: memref<32x32xbf16>,
                              %m0: index, %k0: index, %k: index) {
  conv3d.voxel_rms_scale %x into %s eps = 0.125 : memref<1x4x6x6x8xbf16>, memref<1x4x6x6xf32>
  conv3d.load_im2col_tile %x[%m0, %k0] limit %k into %a rms_norm(%g : memref<8xf32>)
      norm_scale(%s : memref<1x4x6x6xf32>) norm_eps = 0.125 input_activation = silu
      window = [3, 3, 3] : memref<1x4x6x6x8xbf16>, memref<32x32xbf16>
  return
}
