// conv3d-place-prologue: with placement=prepass (the default) a
// convolution's prologue moves into a conv3d.prologue over its input, and
// the history operand (already transformed frames) stays on the
// convolution; with placement=fused nothing changes. The GPU pipeline then
// sends the prologue-free convolution to the sm90 kernel. An unknown
// placement is an error.
//
// RUN: conv3d-opt %s -conv3d-place-prologue | FileCheck %s --check-prefix=PREPASS
// RUN: conv3d-opt %s -conv3d-place-prologue=placement=fused | FileCheck %s --check-prefix=FUSED
// RUN: conv3d-opt %s -conv3d-place-prologue -conv3d-select-config=target=sm90 2>&1 | FileCheck %s --check-prefix=SM90
// RUN: conv3d-opt %s -conv3d-place-prologue=placement=fused -conv3d-select-config=target=sm90 2>&1 | FileCheck %s --check-prefix=SM90FUSED
// RUN: not conv3d-opt %s -conv3d-place-prologue=placement=tile 2>&1 | FileCheck %s --check-prefix=BAD

// PREPASS-LABEL: func.func @wan_step
//  PREPASS-SAME: (%[[X:.*]]: tensor<1x4x8x8x64xbf16>, %[[H:.*]]: tensor<1x2x8x8x64xbf16>, %[[W:.*]]: tensor<64x3x3x3x64xbf16>, %[[G:.*]]: tensor<64xf32>, %[[B:.*]]: tensor<64xbf16>
//       PREPASS:   %[[E:.*]] = tensor.empty() : tensor<1x4x8x8x64xbf16>
//       PREPASS:   %[[T:.*]] = conv3d.prologue ins(%[[X]] : tensor<1x4x8x8x64xbf16>) rms_norm(%[[G]] : tensor<64xf32>) norm_beta(%[[B]] : tensor<64xbf16>) norm_eps = 9.99999997E-7 input_activation = silu outs(%[[E]] : tensor<1x4x8x8x64xbf16>)
//       PREPASS:   conv3d.conv ins(%[[T]], %[[W]] : {{.*}}) history(%[[H]] : tensor<1x2x8x8x64xbf16>) outs(
//   PREPASS-NOT:   rms_norm
//   PREPASS-NOT:   input_activation
//       PREPASS:   return
// FUSED-LABEL: func.func @wan_step
//   FUSED-NOT:   conv3d.prologue
//       FUSED:   conv3d.conv {{.*}} history({{.*}}) rms_norm({{.*}}) norm_beta({{.*}}) norm_eps = 9.99999997E-7 input_activation = silu
//   SM90-NOT: sm80 kernel
//       SM90: remark: conv3d: the sm90 kernel reads this input through per-depth-slice
//  SM90FUSED: remark: conv3d: the sm90 kernel cannot take this convolution (the TMA kernels do not apply an input prologue); it runs on the sm80 kernel
// BAD: for the --placement option: Cannot find option named 'tile'
func.func @wan_step(%x: tensor<1x4x8x8x64xbf16>, %h: tensor<1x2x8x8x64xbf16>, %w: tensor<64x3x3x3x64xbf16>, %g: tensor<64xf32>, %b: tensor<64xbf16>, %i: tensor<1x4x8x8x64xbf16>) -> tensor<1x4x8x8x64xbf16> {
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x8x8x64xbf16>, tensor<64x3x3x3x64xbf16>) history(%h : tensor<1x2x8x8x64xbf16>) rms_norm(%g : tensor<64xf32>) norm_beta(%b : tensor<64xbf16>) norm_eps = 1.0e-6 input_activation = silu outs(%i : tensor<1x4x8x8x64xbf16>) overwrite padding = [0, 0, 1, 1, 1, 1] filter_layout = fqrsc -> tensor<1x4x8x8x64xbf16>
  return %0 : tensor<1x4x8x8x64xbf16>
}

// An activation alone, dynamic batch and depth: the empty tensor takes the
// input's sizes.
// PREPASS-LABEL: func.func @activation_dynamic
//       PREPASS:   %[[N:.*]] = tensor.dim %{{.*}}, %c0
//       PREPASS:   %[[D:.*]] = tensor.dim %{{.*}}, %c1
//       PREPASS:   tensor.empty(%[[N]], %[[D]]) : tensor<?x?x6x6x8xf32>
//       PREPASS:   conv3d.prologue ins({{.*}}) input_activation = relu outs(
//       PREPASS:   conv3d.conv
//   PREPASS-NOT:   input_activation
func.func @activation_dynamic(%x: tensor<?x?x6x6x8xf32>, %w: tensor<3x3x3x8x16xf32>, %i: tensor<?x?x4x4x16xf32>) -> tensor<?x?x4x4x16xf32> {
  %0 = conv3d.conv ins(%x, %w : tensor<?x?x6x6x8xf32>, tensor<3x3x3x8x16xf32>) input_activation = relu outs(%i : tensor<?x?x4x4x16xf32>) overwrite -> tensor<?x?x4x4x16xf32>
  return %0 : tensor<?x?x4x4x16xf32>
}

// Memref forms (after bufferization) are left alone.
// PREPASS-LABEL: func.func @memref_form
//   PREPASS-NOT:   conv3d.prologue
//       PREPASS:   conv3d.conv {{.*}} input_activation = relu
func.func @memref_form(%x: memref<1x4x6x6x8xf32>, %w: memref<3x3x3x8x16xf32>, %o: memref<1x2x4x4x16xf32>) {
  conv3d.conv ins(%x, %w : memref<1x4x6x6x8xf32>, memref<3x3x3x8x16xf32>) input_activation = relu outs(%o : memref<1x2x4x4x16xf32>) overwrite
  return
}
