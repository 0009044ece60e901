// How the passes treat a convolution with a history operand or an input
// prologue: conv3d-implicit-gemm passes both to the A-tile load; the sm90
// and sm100 configurations fall back to the sm80 kernel with a remark; the
// sm80 loaders read a history and refuse a prologue (never a silently
// dropped operand); the separate Q-slice strategy refuses them;
// conv3d-fuse-quant does not fold a quantization into such a conv, and the
// prepass placement quantizes the history like the input.
//
// RUN: split-file %s %t
// RUN: conv3d-opt %t/igemm.mlir -conv3d-implicit-gemm | FileCheck %s --check-prefix=IGEMM
// RUN: conv3d-opt %t/select.mlir -conv3d-select-config=target=sm90 -verify-diagnostics | FileCheck %s --check-prefix=SM90
// RUN: conv3d-opt %t/select.mlir -conv3d-select-config=target=sm100 -verify-diagnostics | FileCheck %s --check-prefix=SM90
// RUN: conv3d-opt %t/gpu.mlir -split-input-file -conv3d-implicit-gemm=target=sm80 -conv3d-lower-to-sm80 -verify-diagnostics
// RUN: conv3d-opt %t/sm80-history.mlir -conv3d-implicit-gemm=target=sm80 -conv3d-lower-to-sm80 | FileCheck %s --check-prefix=SM80HIST
// RUN: conv3d-opt %t/qslice.mlir -conv3d-qslice=strategy=separate -verify-diagnostics
// RUN: conv3d-opt %t/qslice-fused.mlir -conv3d-qslice=strategy=fused | FileCheck %s --check-prefix=FUSED
// RUN: conv3d-opt %t/fuse-quant.mlir -conv3d-fuse-quant=placement=tile | FileCheck %s --check-prefix=NOFOLD
// RUN: conv3d-opt %t/prepass.mlir -conv3d-fuse-quant=placement=prepass | FileCheck %s --check-prefix=PREPASS

//--- igemm.mlir

// IGEMM-LABEL: func.func @igemm
//  IGEMM-SAME:   (%[[X:[^:]+]]: memref<1x4x6x6x8xbf16>, %[[H:[^:]+]]: memref<1x2x6x6x8xbf16>, %[[W:[^:]+]]: memref<3x3x3x8x16xbf16>, %[[G:[^:]+]]: memref<8xf32>, %[[B:[^:]+]]: memref<8xf32>, %{{.*}}: memref<1x4x6x6x16xbf16>)
//       IGEMM:   conv3d.load_im2col_tile %[[X]][%{{.*}}, %{{.*}}] limit %{{.*}} into %{{.*}} history(%[[H]] : memref<1x2x6x6x8xbf16>) rms_norm(%[[G]] : memref<8xf32>) norm_beta(%[[B]] : memref<8xf32>) norm_eps = 9.99999997E-7 input_activation = silu window = [3, 3, 3] padding = [0, 0, 1, 1, 1, 1] : memref<1x4x6x6x8xbf16>
func.func @igemm(%x: memref<1x4x6x6x8xbf16>, %h: memref<1x2x6x6x8xbf16>, %w: memref<3x3x3x8x16xbf16>, %g: memref<8xf32>, %b: memref<8xf32>, %o: memref<1x4x6x6x16xbf16>) {
  conv3d.conv ins(%x, %w : memref<1x4x6x6x8xbf16>, memref<3x3x3x8x16xbf16>) history(%h : memref<1x2x6x6x8xbf16>) rms_norm(%g : memref<8xf32>) norm_beta(%b : memref<8xf32>) norm_eps = 1.0e-6 input_activation = silu outs(%o : memref<1x4x6x6x16xbf16>) overwrite padding = [0, 0, 1, 1, 1, 1]
  return
}

//--- select.mlir

// SM90-LABEL: func.func @select
//       SM90:   kernel = sm80
func.func @select(%x: tensor<1x4x16x16x64xbf16>, %h: tensor<1x2x16x16x64xbf16>, %w: tensor<64x3x3x3x64xbf16>, %o: tensor<1x4x16x16x64xbf16>) -> tensor<1x4x16x16x64xbf16> {
  // expected-remark @below {{kernel cannot take this convolution (the TMA kernels do not read a history operand or apply an input prologue); it runs on the sm80 kernel}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x16x16x64xbf16>, tensor<64x3x3x3x64xbf16>) history(%h : tensor<1x2x16x16x64xbf16>) outs(%o : tensor<1x4x16x16x64xbf16>) overwrite padding = [0, 0, 1, 1, 1, 1] filter_layout = fqrsc -> tensor<1x4x16x16x64xbf16>
  return %0 : tensor<1x4x16x16x64xbf16>
}

//--- gpu.mlir

func.func @gpu_prologue(%x: memref<1x4x6x6x16xbf16>, %w: memref<3x3x3x16x16xbf16>, %o: memref<1x4x6x6x16xbf16>) {
  // expected-error @below {{sm80 does not apply an input prologue yet; compile this convolution for the CPU target}}
  conv3d.conv ins(%x, %w : memref<1x4x6x6x16xbf16>, memref<3x3x3x16x16xbf16>) input_activation = relu outs(%o : memref<1x4x6x6x16xbf16>) overwrite padding = [2, 0, 1, 1, 1, 1]
  return
}

// -----

func.func @gpu_history_prologue(%x: memref<1x4x6x6x16xbf16>, %h: memref<1x2x6x6x16xbf16>, %w: memref<3x3x3x16x16xbf16>, %g: memref<16xf32>, %o: memref<1x4x6x6x16xbf16>) {
  // expected-error @below {{sm80 does not apply an input prologue yet; compile this convolution for the CPU target}}
  conv3d.conv ins(%x, %w : memref<1x4x6x6x16xbf16>, memref<3x3x3x16x16xbf16>) history(%h : memref<1x2x6x6x16xbf16>) rms_norm(%g : memref<16xf32>) norm_eps = 1.0e-6 outs(%o : memref<1x4x6x6x16xbf16>) overwrite padding = [0, 0, 1, 1, 1, 1]
  return
}

//--- sm80-history.mlir

// The sm80 loaders read the history: each cp.async's source is a select of
// the two flat memrefs by depth (test/GPU/sm80-history-emulate.test runs
// the PTX).
// SM80HIST-LABEL: func.func @gpu_history
//       SM80HIST:   gpu.launch
//       SM80HIST:   %[[IN:.*]] = memref.cast %{{.*}} : memref<2304xbf16> to memref<?xbf16, strided<[1], offset: ?>>
//       SM80HIST:   %[[HIST:.*]] = memref.cast %{{.*}} : memref<1152xbf16> to memref<?xbf16, strided<[1], offset: ?>>
//       SM80HIST:   %[[SRC:.*]] = arith.select %{{.*}}, %[[HIST]], %[[IN]] : memref<?xbf16, strided<[1], offset: ?>>
//       SM80HIST:   nvgpu.device_async_copy %[[SRC]][
func.func @gpu_history(%x: memref<1x4x6x6x16xbf16>, %h: memref<1x2x6x6x16xbf16>, %w: memref<3x3x3x16x16xbf16>, %o: memref<1x4x6x6x16xbf16>) {
  conv3d.conv ins(%x, %w : memref<1x4x6x6x16xbf16>, memref<3x3x3x16x16xbf16>) history(%h : memref<1x2x6x6x16xbf16>) outs(%o : memref<1x4x6x6x16xbf16>) overwrite padding = [0, 0, 1, 1, 1, 1]
  return
}

//--- qslice.mlir

func.func @qslice_separate(%x: tensor<1x4x6x6x8xbf16>, %h: tensor<1x2x6x6x8xbf16>, %w: tensor<3x3x3x8x16xbf16>, %o: tensor<1x4x6x6x16xbf16>) -> tensor<1x4x6x6x16xbf16> {
  // expected-error @below {{cannot apply the separate Q-slice strategy to a convolution with a history operand or an input prologue (the fused strategy takes them)}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xbf16>, tensor<3x3x3x8x16xbf16>) history(%h : tensor<1x2x6x6x8xbf16>) outs(%o : tensor<1x4x6x6x16xbf16>) overwrite padding = [0, 0, 1, 1, 1, 1] -> tensor<1x4x6x6x16xbf16>
  return %0 : tensor<1x4x6x6x16xbf16>
}

//--- qslice-fused.mlir

// The fused strategy only reorders the K loop; the operands stay.
// FUSED-LABEL: func.func @qslice_fused
//       FUSED:   conv3d.conv {{.*}} history(%{{.*}} : tensor<1x1x6x6x8xbf16>) input_activation = silu {{.*}} k_order = qslice_outer
func.func @qslice_fused(%x: tensor<1x4x6x6x8xbf16>, %h: tensor<1x1x6x6x8xbf16>, %w: tensor<3x3x3x8x16xbf16>, %o: tensor<1x3x6x6x16xbf16>) -> tensor<1x3x6x6x16xbf16> {
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xbf16>, tensor<3x3x3x8x16xbf16>) history(%h : tensor<1x1x6x6x8xbf16>) input_activation = silu outs(%o : tensor<1x3x6x6x16xbf16>) overwrite padding = [0, 0, 1, 1, 1, 1] -> tensor<1x3x6x6x16xbf16>
  return %0 : tensor<1x3x6x6x16xbf16>
}

//--- fuse-quant.mlir

// NOFOLD-LABEL: func.func @no_fold
//       NOFOLD:   %[[Q:.*]] = conv3d.quantize
//       NOFOLD:   conv3d.conv ins(%[[Q]], %{{.*}} : {{.*}}) history(
//   NOFOLD-NOT:   quantize(
func.func @no_fold(%x: tensor<1x4x6x6x16xbf16>, %h: tensor<1x2x6x6x16xbf16>, %w: tensor<3x3x3x16x16xbf16>, %amax: f32, %o: tensor<1x4x6x6x16xbf16>) -> tensor<1x4x6x6x16xbf16> {
  %e = tensor.empty() : tensor<1x4x6x6x16xbf16>
  %q = conv3d.quantize #conv3d.nvfp4<block_size = 16> axes = [4] ins(%x : tensor<1x4x6x6x16xbf16>) amax(%amax) outs(%e : tensor<1x4x6x6x16xbf16>) -> tensor<1x4x6x6x16xbf16>
  %0 = conv3d.conv ins(%q, %w : tensor<1x4x6x6x16xbf16>, tensor<3x3x3x16x16xbf16>) history(%h : tensor<1x2x6x6x16xbf16>) outs(%o : tensor<1x4x6x6x16xbf16>) overwrite padding = [0, 0, 1, 1, 1, 1] -> tensor<1x4x6x6x16xbf16>
  return %0 : tensor<1x4x6x6x16xbf16>
}

//--- prepass.mlir

// PREPASS-LABEL: func.func @prepass
//  PREPASS-SAME:   (%[[X:[^:]+]]: tensor<1x4x6x6x16xbf16>, %[[H:[^:]+]]: tensor<1x2x6x6x16xbf16>, %{{.*}}: tensor<3x3x3x16x16xbf16>, %[[AMAX:[^:]+]]: f32
//   PREPASS-DAG:   %[[QX:.*]] = conv3d.quantize #conv3d.nvfp4<block_size = 16> axes = [4] ins(%[[X]] : tensor<1x4x6x6x16xbf16>) amax(%[[AMAX]])
//   PREPASS-DAG:   %[[QH:.*]] = conv3d.quantize #conv3d.nvfp4<block_size = 16> axes = [4] ins(%[[H]] : tensor<1x2x6x6x16xbf16>) amax(%[[AMAX]])
//       PREPASS:   conv3d.conv ins(%[[QX]], %{{.*}} : {{.*}}) history(%[[QH]] : tensor<1x2x6x6x16xbf16>) outs(
//   PREPASS-NOT:   quantize(
func.func @prepass(%x: tensor<1x4x6x6x16xbf16>, %h: tensor<1x2x6x6x16xbf16>, %w: tensor<3x3x3x16x16xbf16>, %amax: f32, %o: tensor<1x4x6x6x16xbf16>) -> tensor<1x4x6x6x16xbf16> {
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x16xbf16>, tensor<3x3x3x16x16xbf16>) history(%h : tensor<1x2x6x6x16xbf16>) quantize(#conv3d.nvfp4<block_size = 16>, %amax) outs(%o : tensor<1x4x6x6x16xbf16>) overwrite padding = [0, 0, 1, 1, 1, 1] -> tensor<1x4x6x6x16xbf16>
  return %0 : tensor<1x4x6x6x16xbf16>
}
