// How the passes treat a convolution with a history operand or an input
// prologue: conv3d-implicit-gemm passes both to the A-tile load, with the
// RMS norm's per-voxel statistic from a conv3d.voxel_rms_scale prepass; the
// sm90 kernel reads a history through per-depth-slice descriptors (one for
// the history, one for the input), sm100 and every prologue fall back to
// the sm80 kernel with a remark; the sm80 loaders read a history and apply
// a prologue, the TMA kernels refuse a forced configuration they cannot
// honor (never a silently dropped operand); the separate Q-slice strategy
// refuses them;
// conv3d-fuse-quant does not fold a quantization into such a conv, and the
// prepass placement quantizes the history like the input.
//
// RUN: split-file %s %t
// RUN: conv3d-opt %t/igemm.mlir -conv3d-implicit-gemm | FileCheck %s --check-prefix=IGEMM
// RUN: conv3d-opt %t/select.mlir -conv3d-select-config=target=sm90 -verify-diagnostics | FileCheck %s --check-prefix=SM90
// RUN: conv3d-opt %t/select-sm100.mlir -conv3d-select-config=target=sm100 -verify-diagnostics | FileCheck %s --check-prefix=SM100
// RUN: conv3d-opt %t/gpu.mlir -split-input-file -conv3d-implicit-gemm=target=sm90 -conv3d-lower-to-sm90 -verify-diagnostics
// RUN: conv3d-opt %t/gpu-sm100.mlir -conv3d-implicit-gemm=target=sm100 -conv3d-lower-to-sm100 -verify-diagnostics
// RUN: conv3d-opt %t/sm90-history.mlir -conv3d-implicit-gemm=target=sm90 -conv3d-lower-to-sm90 | FileCheck %s --check-prefix=SM90HIST
// RUN: conv3d-opt %t/sm80-history.mlir -conv3d-implicit-gemm=target=sm80 -conv3d-lower-to-sm80 | FileCheck %s --check-prefix=SM80HIST
// RUN: conv3d-opt %t/sm80-prologue.mlir -conv3d-implicit-gemm=target=sm80 -conv3d-lower-to-sm80 | FileCheck %s --check-prefix=SM80PRO
// RUN: conv3d-opt %t/sm80-prologue-reg.mlir -conv3d-implicit-gemm=target=sm80 -conv3d-lower-to-sm80 | FileCheck %s --check-prefix=ASYNC
// RUN: conv3d-opt %t/sm80-prologue.mlir -conv3d-implicit-gemm=target=sm80 -conv3d-lower-to-sm80 -conv3d-lower-host-ops-to-gpu | FileCheck %s --check-prefix=PREPASS-GPU
// RUN: conv3d-opt %t/sm80-no-scale.mlir -conv3d-lower-to-sm80 -verify-diagnostics
// RUN: conv3d-opt %t/qslice.mlir -conv3d-qslice=strategy=separate -verify-diagnostics
// RUN: conv3d-opt %t/qslice-fused.mlir -conv3d-qslice=strategy=fused | FileCheck %s --check-prefix=FUSED
// RUN: conv3d-opt %t/fuse-quant.mlir -conv3d-fuse-quant=placement=tile | FileCheck %s --check-prefix=NOFOLD
// RUN: conv3d-opt %t/prepass.mlir -conv3d-fuse-quant=placement=prepass | FileCheck %s --check-prefix=PREPASS

//--- igemm.mlir

// IGEMM-LABEL: func.func @igemm
//  IGEMM-SAME:   (%[[X:[^:]+]]: memref<1x4x6x6x8xbf16>, %[[H:[^:]+]]: memref<1x2x6x6x8xbf16>, %[[W:[^:]+]]: memref<3x3x3x8x16xbf16>, %[[G:[^:]+]]: memref<8xf32>, %[[B:[^:]+]]: memref<8xf32>, %{{.*}}: memref<1x4x6x6x16xbf16>)
//       IGEMM:   %[[S:.*]] = memref.alloc() : memref<1x4x6x6xf32>
//       IGEMM:   conv3d.voxel_rms_scale %[[X]] into %[[S]] eps = 9.99999997E-7 : memref<1x4x6x6x8xbf16>, memref<1x4x6x6xf32>
//       IGEMM:   scf.forall
//       IGEMM:   conv3d.load_im2col_tile %[[X]][%{{.*}}, %{{.*}}] limit %{{.*}} into %{{.*}} history(%[[H]] : memref<1x2x6x6x8xbf16>) rms_norm(%[[G]] : memref<8xf32>) norm_beta(%[[B]] : memref<8xf32>) norm_scale(%[[S]] : memref<1x4x6x6xf32>) norm_eps = 9.99999997E-7 input_activation = silu window = [3, 3, 3] padding = [0, 0, 1, 1, 1, 1] : memref<1x4x6x6x8xbf16>
//       IGEMM:   } {conv3d.igemm_config
//       IGEMM:   memref.dealloc %[[S]]
func.func @igemm(%x: memref<1x4x6x6x8xbf16>, %h: memref<1x2x6x6x8xbf16>, %w: memref<3x3x3x8x16xbf16>, %g: memref<8xf32>, %b: memref<8xf32>, %o: memref<1x4x6x6x16xbf16>) {
  conv3d.conv ins(%x, %w : memref<1x4x6x6x8xbf16>, memref<3x3x3x8x16xbf16>) history(%h : memref<1x2x6x6x8xbf16>) rms_norm(%g : memref<8xf32>) norm_beta(%b : memref<8xf32>) norm_eps = 1.0e-6 input_activation = silu outs(%o : memref<1x4x6x6x16xbf16>) overwrite padding = [0, 0, 1, 1, 1, 1]
  return
}

//--- select.mlir

// SM90-LABEL: func.func @select
//       SM90:   kernel = sm90
func.func @select(%x: tensor<1x4x16x16x64xbf16>, %h: tensor<1x2x16x16x64xbf16>, %w: tensor<64x3x3x3x64xbf16>, %o: tensor<1x4x16x16x64xbf16>) -> tensor<1x4x16x16x64xbf16> {
  // expected-remark @below {{the sm90 kernel reads this input through per-depth-slice (rank-4) TMA im2col descriptors (a history operand is read one depth slice at a time)}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x16x16x64xbf16>, tensor<64x3x3x3x64xbf16>) history(%h : tensor<1x2x16x16x64xbf16>) outs(%o : tensor<1x4x16x16x64xbf16>) overwrite padding = [0, 0, 1, 1, 1, 1] filter_layout = fqrsc -> tensor<1x4x16x16x64xbf16>
  return %0 : tensor<1x4x16x16x64xbf16>
}

// SM90-LABEL: func.func @select_prologue
//       SM90:   kernel = sm80
func.func @select_prologue(%x: tensor<1x4x16x16x64xbf16>, %w: tensor<64x3x3x3x64xbf16>, %o: tensor<1x4x16x16x64xbf16>) -> tensor<1x4x16x16x64xbf16> {
  // expected-remark @below {{kernel cannot take this convolution (the TMA kernels do not apply an input prologue); it runs on the sm80 kernel}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x16x16x64xbf16>, tensor<64x3x3x3x64xbf16>) input_activation = silu outs(%o : tensor<1x4x16x16x64xbf16>) overwrite padding = [2, 0, 1, 1, 1, 1] filter_layout = fqrsc -> tensor<1x4x16x16x64xbf16>
  return %0 : tensor<1x4x16x16x64xbf16>
}

//--- select-sm100.mlir

// SM100-LABEL: func.func @select_sm100
//       SM100:   kernel = sm80
func.func @select_sm100(%x: tensor<1x4x16x16x64xbf16>, %h: tensor<1x2x16x16x64xbf16>, %w: tensor<64x3x3x3x64xbf16>, %o: tensor<1x4x16x16x64xbf16>) -> tensor<1x4x16x16x64xbf16> {
  // expected-remark @below {{the sm100 kernel cannot take this convolution (a history operand is read one depth slice at a time (per-depth-slice descriptors are implemented for the sm90 kernel only)); it runs on the sm80 kernel}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x16x16x64xbf16>, tensor<64x3x3x3x64xbf16>) history(%h : tensor<1x2x16x16x64xbf16>) outs(%o : tensor<1x4x16x16x64xbf16>) overwrite padding = [0, 0, 1, 1, 1, 1] filter_layout = fqrsc -> tensor<1x4x16x16x64xbf16>
  return %0 : tensor<1x4x16x16x64xbf16>
}

//--- gpu.mlir

// A forced TMA configuration cannot drop the prologue or the history.
func.func @gpu_prologue_sm90(%x: memref<1x4x16x16x64xbf16>, %w: memref<64x3x3x3x64xbf16>, %o: memref<1x4x16x16x64xbf16>) {
  // expected-error @below {{sm90 does not apply an input prologue; its convolutions run on the sm80 kernel}}
  conv3d.conv ins(%x, %w : memref<1x4x16x16x64xbf16>, memref<64x3x3x3x64xbf16>) input_activation = relu outs(%o : memref<1x4x16x16x64xbf16>) overwrite padding = [2, 0, 1, 1, 1, 1] filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 4, warps_m = 8, kernel = sm90>
  return
}

// -----

// The halo mainloop's tiled boxes would straddle the two sources.
func.func @gpu_history_halo(%x: memref<1x4x16x64x64xbf16>, %h: memref<1x2x16x64x64xbf16>, %w: memref<64x3x3x3x64xbf16>, %o: memref<1x4x16x64x64xbf16>) {
  // expected-error @below {{to the sm90 kernel: the halo mainloop does not read a history operand}}
  conv3d.conv ins(%x, %w : memref<1x4x16x64x64xbf16>, memref<64x3x3x3x64xbf16>) history(%h : memref<1x2x16x64x64xbf16>) outs(%o : memref<1x4x16x64x64xbf16>) overwrite padding = [0, 0, 1, 1, 1, 1] filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 256, tile_n = 64, tile_k = 64, stages = 4, warps_m = 8, kernel = sm90, mainloop = halo>
  return
}

// -----

// Image n's history frames must lie a whole number of depth strides, at
// least Dh, after image n - 1's: here the batch stride is one frame.
func.func @gpu_history_batch_stride(%x: memref<2x4x16x16x64xbf16>, %h: memref<2x2x16x16x64xbf16, strided<[16384, 16384, 1024, 64, 1]>>, %w: memref<64x3x3x3x64xbf16>, %o: memref<2x4x16x16x64xbf16>) {
  // expected-error @below {{to the sm90 kernel: per-depth-slice TMA descriptors need an input (and a history) whose batch stride is a multiple of its depth stride, at least its depth times it}}
  conv3d.conv ins(%x, %w : memref<2x4x16x16x64xbf16>, memref<64x3x3x3x64xbf16>) history(%h : memref<2x2x16x16x64xbf16, strided<[16384, 16384, 1024, 64, 1]>>) outs(%o : memref<2x4x16x16x64xbf16>) overwrite padding = [0, 0, 1, 1, 1, 1] filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 4, warps_m = 8, kernel = sm90>
  return
}

//--- gpu-sm100.mlir

func.func @gpu_history_sm100(%x: memref<1x4x16x16x64xbf16>, %h: memref<1x2x16x16x64xbf16>, %w: memref<64x3x3x3x64xbf16>, %o: memref<1x4x16x16x64xbf16>) {
  // expected-error @below {{sm100 does not read a history operand; its convolutions run on the sm80 kernel}}
  conv3d.conv ins(%x, %w : memref<1x4x16x16x64xbf16>, memref<64x3x3x3x64xbf16>) history(%h : memref<1x2x16x16x64xbf16>) outs(%o : memref<1x4x16x16x64xbf16>) overwrite padding = [0, 0, 1, 1, 1, 1] filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 4, warps_m = 4, kernel = sm100>
  return
}

//--- sm90-history.mlir

// The sm90 kernel reads the history through its own per-depth-slice
// descriptor (2 slices; the input's has 4), and the producer chooses, per K
// step, the descriptor and the slice (n * Dh + d from the history where
// d < Dh, else n * D + d - Dh from the input); test/GPU/sm90-history-run.test
// runs it.
// SM90HIST-LABEL: func.func @gpu_history
//       SM90HIST:   call @conv3dTmaIm2colSliceDescriptor(%{{.*}}, %c9_i64{{[_0-9]*}}, %c4_i64{{[_0-9]*}},
//       SM90HIST:   call @conv3dTmaIm2colSliceDescriptor(%{{.*}}, %c9_i64{{[_0-9]*}}, %c2_i64{{[_0-9]*}},
//       SM90HIST:   gpu.launch
//       SM90HIST:   %[[HIST:.*]] = arith.cmpi ult, %{{.*}}, %c2_i32{{[_0-9]*}} : i32
//       SM90HIST:   %[[SLICE:.*]] = arith.select %[[HIST]], %{{.*}}, %{{.*}} : i32
//       SM90HIST:   %[[DESC:.*]] = arith.select %[[HIST]], %{{.*}}, %{{.*}} : !llvm.ptr
//       SM90HIST:   nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[DESC]], %{{.*}}, box[%{{.*}}, %{{.*}}, %{{.*}}, %[[SLICE]]] im2col
func.func @gpu_history(%x: memref<1x4x16x16x64xbf16>, %h: memref<1x2x16x16x64xbf16>, %w: memref<64x3x3x3x64xbf16>, %o: memref<1x4x16x16x64xbf16>) {
  conv3d.conv ins(%x, %w : memref<1x4x16x16x64xbf16>, memref<64x3x3x3x64xbf16>) history(%h : memref<1x2x16x16x64xbf16>) outs(%o : memref<1x4x16x16x64xbf16>) overwrite padding = [0, 0, 1, 1, 1, 1] filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 4, warps_m = 8, kernel = sm90>
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

//--- sm80-prologue.mlir

// The sm80 kernel applies the prologue: the prepass stays on the host side
// of the launch. With 3+ stages (here 4) the A tile keeps its cp.async ring
// and, after the step's MMAs, each thread reads back the chunks it copied
// for the next step, with the voxel's statistic computes x * rs * gamma +
// beta, SiLU and the rounding per element, and stores them in place,
// history frames and the halo kept as loaded. (REG: 2 stages, the
// register-staged path: only the filter uses cp.async.)
// SM80PRO-LABEL: func.func @gpu_prologue
//       SM80PRO:   conv3d.voxel_rms_scale
//       SM80PRO:   gpu.launch
//       SM80PRO:   nvgpu.device_async_copy %{{.*}} : memref<?xbf16, strided<[1], offset: ?>>
//       SM80PRO:   scf.for
//       SM80PRO:     nvvm.mma.sync
//       SM80PRO:     scf.if
//       SM80PRO:       %[[XV:.*]] = vector.load %{{.*}} : memref<{{[0-9]+}}xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
//       SM80PRO:       %[[RS:.*]] = memref.load %{{.*}} : memref<144xf32>
//       SM80PRO:       vector.load %{{.*}} : memref<16xf32>, vector<8xf32>
//       SM80PRO:       vector.load %{{.*}} : memref<16xf32>, vector<8xf32>
//       SM80PRO:       arith.mulf %{{.*}}, %[[RS]] : f32
//       SM80PRO:       math.exp
//       SM80PRO:       %[[Y:.*]] = vector.from_elements {{.*}} : vector<8xbf16>
//       SM80PRO:       %[[OUT:.*]] = arith.select %{{.*}}, %[[Y]], %[[XV]] : vector<8xbf16>
//       SM80PRO:       vector.store %[[OUT]], %{{.*}} : memref<{{[0-9]+}}xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
// REG: only the filter (6912 elements) is copied with cp.async, never the
// input (2304) or the history (1152).
//   ASYNC-NOT:   nvgpu.device_async_copy {{.*}} : memref<{{(2304|1152|\?)}}xbf16
//       ASYNC:   nvgpu.device_async_copy {{.*}} : memref<6912xbf16>
//   ASYNC-NOT:   nvgpu.device_async_copy {{.*}} : memref<{{(2304|1152|\?)}}xbf16
// The prepass as a device loop of the GPU pipeline, its buffer on the device.
// PREPASS-GPU-LABEL: func.func @gpu_prologue
//       PREPASS-GPU:   gpu.alloc async {{.*}} : memref<1x4x6x6xf32>
//       PREPASS-GPU:   scf.parallel
//       PREPASS-GPU:     scf.parallel
//       PREPASS-GPU:       scf.for %{{.*}} = %c0 to %c16 step %c1 iter_args
//       PREPASS-GPU:       math.rsqrt
//       PREPASS-GPU:   gpu.launch
//       PREPASS-GPU:   gpu.dealloc async
func.func @gpu_prologue(%x: memref<1x4x6x6x16xbf16>, %h: memref<1x2x6x6x16xbf16>, %w: memref<3x3x3x16x16xbf16>, %g: memref<16xf32>, %b: memref<16xf32>, %o: memref<1x4x6x6x16xbf16>) {
  conv3d.conv ins(%x, %w : memref<1x4x6x6x16xbf16>, memref<3x3x3x16x16xbf16>) history(%h : memref<1x2x6x6x16xbf16>) rms_norm(%g : memref<16xf32>) norm_beta(%b : memref<16xf32>) norm_eps = 1.0e-6 input_activation = silu outs(%o : memref<1x4x6x6x16xbf16>) overwrite padding = [0, 0, 1, 1, 1, 1]
  return
}

//--- sm80-prologue-reg.mlir

func.func @gpu_prologue_registers(%x: memref<1x4x6x6x16xbf16>, %h: memref<1x2x6x6x16xbf16>, %w: memref<3x3x3x16x16xbf16>, %g: memref<16xf32>, %o: memref<1x4x6x6x16xbf16>) {
  conv3d.conv ins(%x, %w : memref<1x4x6x6x16xbf16>, memref<3x3x3x16x16xbf16>) history(%h : memref<1x2x6x6x16xbf16>) rms_norm(%g : memref<16xf32>) norm_eps = 1.0e-6 input_activation = silu outs(%o : memref<1x4x6x6x16xbf16>) overwrite padding = [0, 0, 1, 1, 1, 1] config = #conv3d.igemm_config<tile_m = 64, tile_n = 16, tile_k = 32, stages = 2, warps_m = 2>
  return
}

//--- sm80-no-scale.mlir

// A tile load with rms_norm but without the prepass's statistic (written
// by hand; conv3d-implicit-gemm always adds it).
func.func @no_scale(%arg0: memref<1x4x6x6x16xbf16>, %arg1: memref<3x3x3x16x16xbf16>, %arg2: memref<16xf32>, %arg3: memref<1x4x6x6x16xbf16>) {
  %c1 = arith.constant 1 : index
  %c432 = arith.constant 432 : index
  %c27 = arith.constant 27 : index
  %c0 = arith.constant 0 : index
  %cst = arith.constant 0.000000e+00 : f32
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  // expected-error @below {{sm80 applies rms_norm with the per-voxel statistic of the conv3d.voxel_rms_scale prepass (norm_scale), which this load_im2col_tile does not have; run conv3d-implicit-gemm to tile the convolution}}
  scf.forall (%arg4) in (3) {
    %0 = arith.muli %arg4, %c64 : index
    %alloc_0 = memref.alloc() : memref<64x16xbf16>
    %alloc_1 = memref.alloc() : memref<16x16xbf16>
    %alloc_2 = memref.alloc() : memref<64x16xf32>
    linalg.fill ins(%cst : f32) outs(%alloc_2 : memref<64x16xf32>)
    scf.for %arg5 = %c0 to %c27 step %c1 {
      %1 = arith.muli %arg5, %c16 : index
      conv3d.load_im2col_tile %arg0[%0, %1] limit %c432 into %alloc_0 rms_norm(%arg2 : memref<16xf32>) norm_eps = 9.99999997E-7 window = [3, 3, 3] padding = [2, 0, 1, 1, 1, 1] : memref<1x4x6x6x16xbf16>, memref<64x16xbf16>
      conv3d.load_filter_tile %arg1[%1, %c0] limit %c432 into %alloc_1 : memref<3x3x3x16x16xbf16>, memref<16x16xbf16>
      conv3d.tile_mma %alloc_0, %alloc_1, %alloc_2 : memref<64x16xbf16>, memref<16x16xbf16>, memref<64x16xf32>
    }
    conv3d.store_output_tile %alloc_2 into %arg3[%0, %c0] mode = overwrite : memref<64x16xf32>, memref<1x4x6x6x16xbf16>
    memref.dealloc %alloc_0 : memref<64x16xbf16>
    memref.dealloc %alloc_1 : memref<16x16xbf16>
    memref.dealloc %alloc_2 : memref<64x16xf32>
  } {conv3d.igemm_config = #conv3d.igemm_config<tile_m = 64, tile_n = 16, tile_k = 16, stages = 2, warps_m = 2>}
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
