// conv3d-lower-block-scaled-to-sm100: a memref convolution with a packed
// NVFP4 filter and fused input quantization becomes the packing prepass of
// its input, the four UINT8 TMA descriptors of SM100BlockScaledTma.h and
// one launch of the block-scaled kernel; every convolution the kernel
// cannot take is an error naming why. The kernel is generated here and
// assembled by sm100-block-scaled-emit.test; no sm_100 GPU has run it.
//
// RUN: split-file %s %t
// RUN: conv3d-opt %t/kernel.mlir --conv3d-lower-block-scaled-to-sm100 | FileCheck %s
// RUN: conv3d-opt %t/wide.mlir --conv3d-lower-block-scaled-to-sm100='tile-n=256 stages=2' | FileCheck %s --check-prefix=WIDE
// RUN: conv3d-opt %t/plain.mlir --conv3d-lower-block-scaled-to-sm100 | FileCheck %s --check-prefix=PLAIN
// RUN: conv3d-opt %t/config.mlir --conv3d-lower-block-scaled-to-sm100 | FileCheck %s --check-prefix=CONFIG
// RUN: conv3d-opt %t/padded.mlir --conv3d-lower-block-scaled-to-sm100 | FileCheck %s --check-prefix=PADDED
// RUN: conv3d-opt %t/reasons.mlir -split-input-file --conv3d-lower-block-scaled-to-sm100 -verify-diagnostics
// RUN: not conv3d-opt %t/options.mlir --conv3d-lower-block-scaled-to-sm100='tile-n=120' 2>&1 | FileCheck %s --check-prefix=TILE120
// RUN: not conv3d-opt %t/options.mlir --conv3d-lower-block-scaled-to-sm100='stages=1' 2>&1 | FileCheck %s --check-prefix=STAGES1
// RUN: not conv3d-opt %t/options.mlir --conv3d-lower-block-scaled-to-sm100='tile-n=256 stages=5' 2>&1 | FileCheck %s --check-prefix=SHARED
// TILE120: error: cannot lower to the block-scaled sm100 kernel: tile_n = 120 is not a kind::mxf4nvf4 shape for M = 128 (a multiple of 16 from 16 to 256)
// STAGES1: error: cannot lower to the block-scaled sm100 kernel: needs at least 2 stages, got 1
// SHARED: error: cannot lower to the block-scaled sm100 kernel: 5 stages of packed FP4 tiles and scale atoms (276480 bytes) and the epilogue's staging (6144 bytes) need 283752 bytes of shared memory; a block has 232448

// C = 256, F = 64, 3x3x3, padding 1: tile 128 x 64, 6 stages, two
// accumulator buffers (128 TMEM columns) and the scales from column 128
// (256 allocated).
// CHECK-LABEL: func.func @conv
//       CHECK:   %[[CODES:.*]] = memref.alloc() {alignment = 128 : i64} : memref<1x6x8x8x128xi8>
//       CHECK:   %[[SCALES:.*]] = memref.alloc() {alignment = 128 : i64} : memref<1x6x8x8x16xi8>
//       CHECK:   conv3d.pack_nvfp4 #conv3d.nvfp4<block_size = 16> ins(%arg0 : memref<1x6x8x8x256xbf16>) amax(%arg3) outs(%[[CODES]] : memref<1x6x8x8x128xi8>, %[[SCALES]] : memref<1x6x8x8x16xi8>)
// The activation's codes: UINT8 (0) im2col over [1][6][8][8][128 bytes],
// 128 bytes x 128 pixels a box, 128-byte swizzle (3); its scales: 16
// bytes x 128 pixels, no swizzle; the filter's codes and scales: tiled
// over [64][27][128] and [64][27][16] bytes, boxes of 64 filters.
//       CHECK:   memref.extract_strided_metadata %[[CODES]]
//       CHECK:   %[[DA:.*]] = call @conv3dTmaIm2colDescriptor(%{{[0-9]+}}, %c0_i64{{[_0-9]*}}, %c1_i64{{[_0-9]*}}, %c6_i64{{[_0-9]*}}, %c8_i64{{[_0-9]*}}, %c8_i64{{[_0-9]*}}, %c128_i64{{[_0-9]*}}, %c49152_i64{{[_0-9]*}}, %c8192_i64{{[_0-9]*}}, %c1024_i64{{[_0-9]*}}, %c128_i64{{[_0-9]*}}, %c-1_i64{{[_0-9]*}}, %c-1_i64{{[_0-9]*}}, %c-1_i64{{[_0-9]*}}, %c-1_i64{{[_0-9]*}}, %c-1_i64{{[_0-9]*}}, %c-1_i64{{[_0-9]*}}, %c1_i64{{[_0-9]*}}, %c1_i64{{[_0-9]*}}, %c1_i64{{[_0-9]*}}, %c128_i64{{[_0-9]*}}, %c128_i64{{[_0-9]*}}, %c3_i64{{[_0-9]*}})
//       CHECK:   memref.extract_strided_metadata %[[SCALES]]
//       CHECK:   %[[DAS:.*]] = call @conv3dTmaIm2colDescriptor(%{{[0-9]+}}, %c0_i64{{[_0-9]*}}, %c1_i64{{[_0-9]*}}, %c6_i64{{[_0-9]*}}, %c8_i64{{[_0-9]*}}, %c8_i64{{[_0-9]*}}, %c16_i64{{[_0-9]*}}, %c6144_i64{{[_0-9]*}}, %c1024_i64{{[_0-9]*}}, %c128_i64{{[_0-9]*}}, %c16_i64{{[_0-9]*}}, %c-1_i64{{[_0-9]*}}, %c-1_i64{{[_0-9]*}}, %c-1_i64{{[_0-9]*}}, %c-1_i64{{[_0-9]*}}, %c-1_i64{{[_0-9]*}}, %c-1_i64{{[_0-9]*}}, %c1_i64{{[_0-9]*}}, %c1_i64{{[_0-9]*}}, %c1_i64{{[_0-9]*}}, %c16_i64{{[_0-9]*}}, %c128_i64{{[_0-9]*}}, %c0_i64{{[_0-9]*}})
//       CHECK:   memref.extract_strided_metadata %arg1
//       CHECK:   %[[DB:.*]] = call @conv3dTmaTiledDescriptor(%{{[0-9]+}}, %c0_i64{{[_0-9]*}}, %c128_i64{{[_0-9]*}}, %c27_i64{{[_0-9]*}}, %c64_i64{{[_0-9]*}}, %c128_i64{{[_0-9]*}}, %c3456_i64{{[_0-9]*}}, %c128_i64{{[_0-9]*}}, %c1_i64{{[_0-9]*}}, %c64_i64{{[_0-9]*}}, %c3_i64{{[_0-9]*}})
//       CHECK:   memref.extract_strided_metadata %arg2
//       CHECK:   %[[DBS:.*]] = call @conv3dTmaTiledDescriptor(%{{[0-9]+}}, %c0_i64{{[_0-9]*}}, %c16_i64{{[_0-9]*}}, %c27_i64{{[_0-9]*}}, %c64_i64{{[_0-9]*}}, %c16_i64{{[_0-9]*}}, %c432_i64{{[_0-9]*}}, %c16_i64{{[_0-9]*}}, %c1_i64{{[_0-9]*}}, %c64_i64{{[_0-9]*}}, %c0_i64{{[_0-9]*}})
// gsA * gsB, each amax / 2688.
//       CHECK:   %[[GSA:.*]] = arith.divf %arg3, %[[D:.*]] : f32
//       CHECK:   %[[GSB:.*]] = arith.divf %arg4, %[[D]] : f32
//       CHECK:   %[[GS:.*]] = arith.mulf %[[GSA]], %[[GSB]] : f32
// No launch unless the driver encoded all four descriptors.
//       CHECK:   arith.cmpi ne, %[[DA]]
//       CHECK:   arith.cmpi ne, %[[DAS]]
//       CHECK:   arith.cmpi ne, %[[DB]]
//       CHECK:   arith.cmpi ne, %[[DBS]]
//       CHECK:   gpu.launch async {{.*}} threads({{.*}}) in ({{.*}} = %c192{{.*}}) dynamic_shared_memory_size %c208008_i32
// Setup: 6 x (full, empty) + 2 x (accumulator full, empty) barriers, the
// four maps prefetched, 256 TMEM columns.
// CHECK-COUNT-16:  nvvm.mbarrier.init
//       CHECK:     nvvm.fence.mbarrier.init
// CHECK-COUNT-4:   nvvm.prefetch tensormap
//       CHECK:     nvvm.tcgen05.alloc %[[SLOT:.*]], %c256_i32
//  CHECK-NEXT:     nvvm.tcgen05.relinquish_alloc_permit
//       CHECK:     %[[TMEM:.*]] = llvm.load %[[SLOT]] : !llvm.ptr<3> -> i32
// The producer: per step expect_tx of the four boxes' bytes ((128 + 64) x
// (128 + 16) = 27648), then the two im2col loads and the two tiled ones.
//       CHECK:     nvvm.mbarrier.try_wait.parity
//       CHECK:     nvvm.mbarrier.arrive.expect_tx %[[FULL:[^,]*]], %c27648_i32
//       CHECK:     nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %{{.*}}, %[[FULL]], box[{{.*}}] im2col[{{.*}}] {mode = #nvvm.tma_load_mode<im2col>}
//       CHECK:     nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %{{.*}}, %[[FULL]], box[{{.*}}] im2col[{{.*}}] {mode = #nvvm.tma_load_mode<im2col>}
//       CHECK:     nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %{{.*}}, %[[FULL]], box[{{[^]]*}}] :
//       CHECK:     nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %{{.*}}, %[[FULL]], box[{{[^]]*}}] :
// The MMA warp: the accumulator buffer's empty barrier, then per step the
// full barrier; every lane reads 4 + 2 scale rows, the warp syncs, writes
// their 24 words into the atoms, fences the async proxy and syncs; the
// elected thread copies 4 x (1 + 1) atoms to TMEM and issues the 4 MMAs
// (instruction descriptor 0x08100480: E2M1 x E2M1, UE4M3 scales, M = 128,
// N = 64), then commits the stage and, after the tile, the accumulator.
//       CHECK:     nvvm.elect.sync
//       CHECK:     nvvm.mbarrier.try_wait.parity
//       CHECK:     nvvm.tcgen05.fence <after>
//       CHECK:     nvvm.mbarrier.try_wait.parity
// CHECK-COUNT-6:   llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<4xi32>
//       CHECK:     nvvm.bar.warp.sync
// CHECK-COUNT-24:  llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : i32, !llvm.ptr<3>
//       CHECK:     nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
//  CHECK-NEXT:     nvvm.bar.warp.sync
// MMA kk's atoms (512 kk bytes into each scale area, through the atom
// descriptor 0x400800200000 | address >> 4: no swizzle, SBO 128, LBO
// 512) to TMEM columns 128 + 8 kk (A) and 132 + 8 kk (B).
//       CHECK:     arith.addi %[[TMEM]], %c128_i32
//       CHECK:     arith.ori %c70403106013184_i64
//  CHECK-NEXT:     nvvm.tcgen05.cp %{{.*}}, %{{.*}} {multicast = #nvvm.tcgen05_cp_multicast<warpx4>, shape = #nvvm.tcgen05_cp_shape<shape_32x128b>}
//       CHECK:     arith.addi %[[TMEM]], %c132_i32
//       CHECK:     arith.ori %c70403106013184_i64
//  CHECK-NEXT:     nvvm.tcgen05.cp %{{.*}}, %{{.*}} {multicast = #nvvm.tcgen05_cp_multicast<warpx4>, shape = #nvvm.tcgen05_cp_shape<shape_32x128b>}
//       CHECK:     arith.addi %[[TMEM]], %c136_i32
//       CHECK:     arith.ori %c70403106013184_i64
//  CHECK-NEXT:     nvvm.tcgen05.cp %{{.*}}, %{{.*}} {multicast = #nvvm.tcgen05_cp_multicast<warpx4>, shape = #nvvm.tcgen05_cp_shape<shape_32x128b>}
//       CHECK:     arith.addi %[[TMEM]], %c140_i32
//       CHECK:     arith.ori %c70403106013184_i64
//  CHECK-NEXT:     nvvm.tcgen05.cp %{{.*}}, %{{.*}} {multicast = #nvvm.tcgen05_cp_multicast<warpx4>, shape = #nvvm.tcgen05_cp_shape<shape_32x128b>}
//       CHECK:     arith.addi %[[TMEM]], %c144_i32
//       CHECK:     arith.ori %c70403106013184_i64
//  CHECK-NEXT:     nvvm.tcgen05.cp %{{.*}}, %{{.*}} {multicast = #nvvm.tcgen05_cp_multicast<warpx4>, shape = #nvvm.tcgen05_cp_shape<shape_32x128b>}
//       CHECK:     arith.addi %[[TMEM]], %c148_i32
//       CHECK:     arith.ori %c70403106013184_i64
//  CHECK-NEXT:     nvvm.tcgen05.cp %{{.*}}, %{{.*}} {multicast = #nvvm.tcgen05_cp_multicast<warpx4>, shape = #nvvm.tcgen05_cp_shape<shape_32x128b>}
//       CHECK:     arith.addi %[[TMEM]], %c152_i32
//       CHECK:     arith.ori %c70403106013184_i64
//  CHECK-NEXT:     nvvm.tcgen05.cp %{{.*}}, %{{.*}} {multicast = #nvvm.tcgen05_cp_multicast<warpx4>, shape = #nvvm.tcgen05_cp_shape<shape_32x128b>}
//       CHECK:     arith.addi %[[TMEM]], %c156_i32
//       CHECK:     arith.ori %c70403106013184_i64
//  CHECK-NEXT:     nvvm.tcgen05.cp %{{.*}}, %{{.*}} {multicast = #nvvm.tcgen05_cp_multicast<warpx4>, shape = #nvvm.tcgen05_cp_shape<shape_32x128b>}
// CHECK-COUNT-4:   nvvm.tcgen05.mma.block_scale %{{.*}}, %{{.*}}, %{{.*}}, %c135267456_i32, %{{.*}}, %{{.*}}, %{{.*}} {blockScale = #nvvm.tcgen05_mma_block_scale<block16>, ctaGroup = #nvvm.cta_group<cta_1>, kind = #nvvm.block_scale_kind<mxf4nvf4>}
//   CHECK-NOT:     nvvm.tcgen05.mma
//       CHECK:     nvvm.tcgen05.commit
//       CHECK:     nvvm.tcgen05.commit
// The epilogue: each accumulator read from TMEM (its registers passed
// through an empty volatile asm after the wait, so that nothing reads them
// before it) times gsA * gsB.
//       CHECK:     %[[WORDS:.*]] = nvvm.tcgen05.ld
//  CHECK-NEXT:     nvvm.tcgen05.wait <load>
//  CHECK-NEXT:     vector.extract %[[WORDS]][0]
//       CHECK:     llvm.inline_asm has_side_effects "", "=r,{{.*}},0,1,2,{{.*}},31"
//       CHECK:     arith.mulf %{{.*}}, %[[GS]] : f32
//       CHECK:     nvvm.tcgen05.dealloc %{{.*}}, %c256_i32
//       CHECK:   memref.dealloc %[[CODES]]
//       CHECK:   memref.dealloc %[[SCALES]]
//   CHECK-NOT:   conv3d.conv

// tile_n = 256: two B scale atoms per MMA (4 x (1 + 2) copies, the B
// scales 4 TMEM columns apart), 4 + 8 scale rows a lane, one accumulator
// buffer (256 columns + 48 of scales: 512 allocated), N = 256 in the
// instruction descriptor (0x08400480).
// WIDE-LABEL: func.func @wide
//       WIDE:   nvvm.tcgen05.alloc %{{.*}}, %c512_i32
//       WIDE:   nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c55296_i32
// WIDE-COUNT-12: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<4xi32>
// WIDE-COUNT-48: llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : i32, !llvm.ptr<3>
// WIDE-COUNT-12: nvvm.tcgen05.cp
// WIDE-COUNT-4: nvvm.tcgen05.mma.block_scale %{{.*}}, %{{.*}}, %{{.*}}, %c138413184_i32,

// Without a packed filter the pass leaves a convolution alone.
// PLAIN: conv3d.conv

// The convolution's tile configuration (config=, conv3d-select-config)
// chooses tile_n and stages: 48 columns and 3 stages give 3 x 2 + 2 x 2
// barriers, 128 TMEM columns, (128 + 48) x (128 + 16) = 25344 bytes a step
// and the instruction descriptor 0x080C0480 (N = 48).
// CONFIG-LABEL: func.func @configured
// CONFIG-COUNT-10: nvvm.mbarrier.init
//   CONFIG-NOT: nvvm.mbarrier.init
//       CONFIG: nvvm.tcgen05.alloc %{{.*}}, %c128_i32
//       CONFIG: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c25344_i32
// CONFIG-COUNT-4: nvvm.tcgen05.mma.block_scale %{{.*}}, %{{.*}}, %{{.*}}, %c135005312_i32,

//--- kernel.mlir
func.func @conv(%x: memref<1x6x8x8x256xbf16>, %w: memref<64x3x3x3x128xi8>, %s: memref<64x3x3x3x16xi8>, %amax: f32, %wamax: f32, %out: memref<1x6x8x8x64xbf16>) {
  conv3d.conv ins(%x, %w : memref<1x6x8x8x256xbf16>, memref<64x3x3x3x128xi8>) quantize(#conv3d.nvfp4<block_size = 16>, %amax) filter_quant(#conv3d.nvfp4<block_size = 16>, %s : memref<64x3x3x3x16xi8>, %wamax) outs(%out : memref<1x6x8x8x64xbf16>) overwrite padding = [1, 1, 1, 1, 1, 1] filter_layout = fqrsc
  return
}

//--- wide.mlir
func.func @wide(%x: memref<1x4x6x6x512xbf16>, %w: memref<256x1x1x1x256xi8>, %s: memref<256x1x1x1x32xi8>, %amax: f32, %wamax: f32, %bias: memref<256xf32>, %out: memref<1x4x6x6x256xf32>) {
  conv3d.conv ins(%x, %w : memref<1x4x6x6x512xbf16>, memref<256x1x1x1x256xi8>) bias(%bias : memref<256xf32>) quantize(#conv3d.nvfp4<block_size = 16>, %amax) filter_quant(#conv3d.nvfp4<block_size = 16>, %s : memref<256x1x1x1x32xi8>, %wamax) outs(%out : memref<1x4x6x6x256xf32>) filter_layout = fqrsc activation = silu
  return
}

//--- config.mlir
func.func @configured(%x: memref<1x6x8x8x256xbf16>, %w: memref<64x3x3x3x128xi8>, %s: memref<64x3x3x3x16xi8>, %amax: f32, %wamax: f32, %out: memref<1x6x8x8x64xbf16>) {
  conv3d.conv ins(%x, %w : memref<1x6x8x8x256xbf16>, memref<64x3x3x3x128xi8>) quantize(#conv3d.nvfp4<block_size = 16>, %amax) filter_quant(#conv3d.nvfp4<block_size = 16>, %s : memref<64x3x3x3x16xi8>, %wamax) outs(%out : memref<1x6x8x8x64xbf16>) overwrite padding = [1, 1, 1, 1, 1, 1] filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 128, tile_n = 48, tile_k = 64, stages = 3, warps_m = 4, kernel = sm100>
  return
}

//--- padded.mlir
// C = 96, not a multiple of 256: a voxel's 6 scales are read from rows
// padded to 16 bytes (TMA's global strides), the input's written so by its
// packing prepass, the packed filter's dense rows copied into padded ones
// (a parallel loop over the 16-byte rows: the scale or a zero); the scale
// maps' row strides are 16 bytes, the codes' 48.
// PADDED-LABEL: func.func @padded
//       PADDED:   %[[CODES:.*]] = memref.alloc() {alignment = 128 : i64} : memref<1x4x6x6x48xi8>
//       PADDED:   %[[SCALES:.*]] = memref.alloc() {alignment = 128 : i64} : memref<1x4x6x6x16xi8>
//       PADDED:   conv3d.pack_nvfp4 #conv3d.nvfp4<block_size = 16> ins(%arg0 : memref<1x4x6x6x96xbf16>) amax(%arg3) outs(%[[CODES]] : memref<1x4x6x6x48xi8>, %[[SCALES]] : memref<1x4x6x6x16xi8>)
//       PADDED:   %[[FS:.*]] = memref.alloc() {alignment = 128 : i64} : memref<32x3x3x3x16xi8>
//       PADDED:   scf.parallel (%{{.*}}) = (%{{.*}}) to (%c13824) step
//       PADDED:     scf.if %{{.*}} -> (i8) {
//       PADDED:       memref.load %arg2[{{.*}}] : memref<32x3x3x3x6xi8>
//       PADDED:     memref.store %{{.*}}, %[[FS]][{{.*}}] : memref<32x3x3x3x16xi8>
//       PADDED:   call @conv3dTmaIm2colDescriptor(%{{[0-9]+}}, %c0_i64{{[_0-9]*}}, %c1_i64{{[_0-9]*}}, %c4_i64{{[_0-9]*}}, %c6_i64{{[_0-9]*}}, %c6_i64{{[_0-9]*}}, %c48_i64{{[_0-9]*}}, %c6912_i64
//       PADDED:   memref.extract_strided_metadata %[[SCALES]]
//       PADDED:   call @conv3dTmaIm2colDescriptor(%{{[0-9]+}}, %c0_i64{{[_0-9]*}}, %c1_i64{{[_0-9]*}}, %c4_i64{{[_0-9]*}}, %c6_i64{{[_0-9]*}}, %c6_i64{{[_0-9]*}}, %c16_i64{{[_0-9]*}}, %c2304_i64{{[_0-9]*}}, %c576_i64{{[_0-9]*}}, %c96_i64{{[_0-9]*}}, %c16_i64
//       PADDED:   call @conv3dTmaTiledDescriptor(%{{[0-9]+}}, %c0_i64{{[_0-9]*}}, %c48_i64{{[_0-9]*}}, %c27_i64{{[_0-9]*}}, %c32_i64{{[_0-9]*}}, %c48_i64{{[_0-9]*}}, %c1296_i64
//       PADDED:   memref.extract_strided_metadata %[[FS]]
//       PADDED:   call @conv3dTmaTiledDescriptor(%{{[0-9]+}}, %c0_i64{{[_0-9]*}}, %c16_i64{{[_0-9]*}}, %c27_i64{{[_0-9]*}}, %c32_i64{{[_0-9]*}}, %c16_i64{{[_0-9]*}}, %c432_i64
//       PADDED:   gpu.launch async
//       PADDED:   memref.dealloc %[[CODES]]
//       PADDED:   memref.dealloc %[[SCALES]]
//       PADDED:   memref.dealloc %[[FS]]
func.func @padded(%x: memref<1x4x6x6x96xbf16>, %w: memref<32x3x3x3x48xi8>, %s: memref<32x3x3x3x6xi8>, %amax: f32, %wamax: f32, %out: memref<1x2x4x4x32xf32>) {
  conv3d.conv ins(%x, %w : memref<1x4x6x6x96xbf16>, memref<32x3x3x3x48xi8>) quantize(#conv3d.nvfp4<block_size = 16>, %amax) filter_quant(#conv3d.nvfp4<block_size = 16>, %s : memref<32x3x3x3x6xi8>, %wamax) outs(%out : memref<1x2x4x4x32xf32>) overwrite filter_layout = fqrsc
  return
}

//--- plain.mlir
func.func @plain(%x: memref<1x4x6x6x64xbf16>, %w: memref<3x3x3x64x32xbf16>, %out: memref<1x2x4x4x32xf32>) {
  conv3d.conv ins(%x, %w : memref<1x4x6x6x64xbf16>, memref<3x3x3x64x32xbf16>) outs(%out : memref<1x2x4x4x32xf32>) overwrite
  return
}

//--- options.mlir
func.func @options(%x: memref<1x4x6x6x256xbf16>, %w: memref<32x3x3x3x128xi8>, %s: memref<32x3x3x3x16xi8>, %amax: f32, %wamax: f32, %out: memref<1x2x4x4x32xf32>) {
  conv3d.conv ins(%x, %w : memref<1x4x6x6x256xbf16>, memref<32x3x3x3x128xi8>) quantize(#conv3d.nvfp4<block_size = 16>, %amax) filter_quant(#conv3d.nvfp4<block_size = 16>, %s : memref<32x3x3x3x16xi8>, %wamax) outs(%out : memref<1x2x4x4x32xf32>) overwrite filter_layout = fqrsc
  return
}

//--- reasons.mlir
func.func @tensor_form(%x: tensor<1x4x6x6x256xbf16>, %w: tensor<32x3x3x3x128xi8>, %s: tensor<32x3x3x3x16xi8>, %amax: f32, %wamax: f32, %init: tensor<1x2x4x4x32xf32>) -> tensor<1x2x4x4x32xf32> {
  // expected-error @+1 {{conv3d-lower-block-scaled-to-sm100 works on the memref form; bufferize first}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x256xbf16>, tensor<32x3x3x3x128xi8>) quantize(#conv3d.nvfp4<block_size = 16>, %amax) filter_quant(#conv3d.nvfp4<block_size = 16>, %s : tensor<32x3x3x3x16xi8>, %wamax) outs(%init : tensor<1x2x4x4x32xf32>) overwrite filter_layout = fqrsc -> tensor<1x2x4x4x32xf32>
  return %0 : tensor<1x2x4x4x32xf32>
}

// -----

func.func @input_not_fused(%x: memref<1x4x6x6x256xbf16>, %w: memref<32x3x3x3x128xi8>, %s: memref<32x3x3x3x16xi8>, %wamax: f32, %out: memref<1x2x4x4x32xf32>) {
  // expected-error @+1 {{cannot lower to the block-scaled sm100 kernel: the input's NVFP4 quantization must be fused into the convolution (quantize(...), as conv3d-apply-nvfp4-mode leaves it in real mode): the kernel packs the input itself}}
  conv3d.conv ins(%x, %w : memref<1x4x6x6x256xbf16>, memref<32x3x3x3x128xi8>) filter_quant(#conv3d.nvfp4<block_size = 16>, %s : memref<32x3x3x3x16xi8>, %wamax) outs(%out : memref<1x2x4x4x32xf32>) overwrite filter_layout = fqrsc
  return
}

// -----

func.func @input_block_32(%x: memref<1x4x6x6x256xbf16>, %w: memref<32x3x3x3x128xi8>, %s: memref<32x3x3x3x16xi8>, %amax: f32, %wamax: f32, %out: memref<1x2x4x4x32xf32>) {
  // expected-error @+1 {{cannot lower to the block-scaled sm100 kernel: the input's NVFP4 block size is 32; the block-scaled MMA (kind::mxf4nvf4 block16) takes 16}}
  conv3d.conv ins(%x, %w : memref<1x4x6x6x256xbf16>, memref<32x3x3x3x128xi8>) quantize(#conv3d.nvfp4<block_size = 32>, %amax) filter_quant(#conv3d.nvfp4<block_size = 16>, %s : memref<32x3x3x3x16xi8>, %wamax) outs(%out : memref<1x2x4x4x32xf32>) overwrite filter_layout = fqrsc
  return
}

// -----

func.func @history(%x: memref<1x4x6x6x256xbf16>, %h: memref<1x2x6x6x256xbf16>, %w: memref<32x3x3x3x128xi8>, %s: memref<32x3x3x3x16xi8>, %amax: f32, %wamax: f32, %out: memref<1x4x4x4x32xf32>) {
  // expected-error @+1 {{cannot lower to the block-scaled sm100 kernel: the block-scaled kernel does not read a history operand}}
  conv3d.conv ins(%x, %w : memref<1x4x6x6x256xbf16>, memref<32x3x3x3x128xi8>) history(%h : memref<1x2x6x6x256xbf16>) quantize(#conv3d.nvfp4<block_size = 16>, %amax) filter_quant(#conv3d.nvfp4<block_size = 16>, %s : memref<32x3x3x3x16xi8>, %wamax) outs(%out : memref<1x4x4x4x32xf32>) overwrite filter_layout = fqrsc
  return
}

// -----

func.func @dynamic(%x: memref<?x4x6x6x256xbf16>, %w: memref<32x3x3x3x128xi8>, %s: memref<32x3x3x3x16xi8>, %amax: f32, %wamax: f32, %out: memref<?x2x4x4x32xf32>) {
  // expected-error @+1 {{cannot lower to the block-scaled sm100 kernel: the block-scaled kernel needs static shapes}}
  conv3d.conv ins(%x, %w : memref<?x4x6x6x256xbf16>, memref<32x3x3x3x128xi8>) quantize(#conv3d.nvfp4<block_size = 16>, %amax) filter_quant(#conv3d.nvfp4<block_size = 16>, %s : memref<32x3x3x3x16xi8>, %wamax) outs(%out : memref<?x2x4x4x32xf32>) overwrite filter_layout = fqrsc
  return
}

// -----

// The filter's codes are a view into wider rows.
func.func @strided_codes(%x: memref<1x4x6x6x256xbf16>, %w: memref<32x3x3x3x128xi8, strided<[6912, 2304, 768, 256, 1]>>, %s: memref<32x3x3x3x16xi8>, %amax: f32, %wamax: f32, %out: memref<1x2x4x4x32xf32>) {
  // expected-error @+1 {{cannot lower to the block-scaled sm100 kernel: the packed filter's codes must be a dense buffer starting at a multiple of 16 bytes (the TMA maps view them as [F][taps][bytes])}}
  conv3d.conv ins(%x, %w : memref<1x4x6x6x256xbf16>, memref<32x3x3x3x128xi8, strided<[6912, 2304, 768, 256, 1]>>) quantize(#conv3d.nvfp4<block_size = 16>, %amax) filter_quant(#conv3d.nvfp4<block_size = 16>, %s : memref<32x3x3x3x16xi8>, %wamax) outs(%out : memref<1x2x4x4x32xf32>) overwrite filter_layout = fqrsc
  return
}

// -----

// The filter's scales start 8 bytes into a buffer.
func.func @misaligned_scales(%x: memref<1x4x6x6x256xbf16>, %w: memref<32x3x3x3x128xi8>, %s: memref<32x3x3x3x16xi8, strided<[432, 144, 48, 16, 1], offset: 8>>, %amax: f32, %wamax: f32, %out: memref<1x2x4x4x32xf32>) {
  // expected-error @+1 {{cannot lower to the block-scaled sm100 kernel: the packed filter's scales must be a dense buffer starting at a multiple of 16 bytes (the TMA maps view them as [F][taps][bytes])}}
  conv3d.conv ins(%x, %w : memref<1x4x6x6x256xbf16>, memref<32x3x3x3x128xi8>) quantize(#conv3d.nvfp4<block_size = 16>, %amax) filter_quant(#conv3d.nvfp4<block_size = 16>, %s : memref<32x3x3x3x16xi8, strided<[432, 144, 48, 16, 1], offset: 8>>, %wamax) outs(%out : memref<1x2x4x4x32xf32>) overwrite filter_layout = fqrsc
  return
}

// -----

func.func @channels_48(%x: memref<1x4x6x6x48xbf16>, %w: memref<32x3x3x3x24xi8>, %s: memref<32x3x3x3x3xi8>, %amax: f32, %wamax: f32, %out: memref<1x2x4x4x32xf32>) {
  // expected-error @+1 {{cannot lower to the block-scaled sm100 kernel: C = 48 is not a multiple of 32: rows of packed FP4 codes must be multiples of 16 bytes for TMA}}
  conv3d.conv ins(%x, %w : memref<1x4x6x6x48xbf16>, memref<32x3x3x3x24xi8>) quantize(#conv3d.nvfp4<block_size = 16>, %amax) filter_quant(#conv3d.nvfp4<block_size = 16>, %s : memref<32x3x3x3x3xi8>, %wamax) outs(%out : memref<1x2x4x4x32xf32>) overwrite filter_layout = fqrsc
  return
}

// -----

func.func @padding_20(%x: memref<1x4x6x6x256xbf16>, %w: memref<32x1x3x3x128xi8>, %s: memref<32x1x3x3x16xi8>, %amax: f32, %wamax: f32, %out: memref<1x4x44x4x32xf32>) {
  // expected-error @+1 {{cannot lower to the block-scaled sm100 kernel: the height padding (20, 20) and window put a TMA im2col corner outside [-16, 15]}}
  conv3d.conv ins(%x, %w : memref<1x4x6x6x256xbf16>, memref<32x1x3x3x128xi8>) quantize(#conv3d.nvfp4<block_size = 16>, %amax) filter_quant(#conv3d.nvfp4<block_size = 16>, %s : memref<32x1x3x3x16xi8>, %wamax) outs(%out : memref<1x4x44x4x32xf32>) overwrite padding = [0, 0, 20, 20, 0, 0] filter_layout = fqrsc
  return
}

// -----

func.func @dynamic_output_strides(%x: memref<1x4x6x6x256xbf16>, %w: memref<32x3x3x3x128xi8>, %s: memref<32x3x3x3x16xi8>, %amax: f32, %wamax: f32, %out: memref<1x2x4x4x32xf32, strided<[?, ?, ?, ?, 1]>>) {
  // expected-error @+1 {{cannot lower to the block-scaled sm100 kernel: the operands need static strides}}
  conv3d.conv ins(%x, %w : memref<1x4x6x6x256xbf16>, memref<32x3x3x3x128xi8>) quantize(#conv3d.nvfp4<block_size = 16>, %amax) filter_quant(#conv3d.nvfp4<block_size = 16>, %s : memref<32x3x3x3x16xi8>, %wamax) outs(%out : memref<1x2x4x4x32xf32, strided<[?, ?, ?, ?, 1]>>) overwrite filter_layout = fqrsc
  return
}

// -----

// M = 2^31 rows (1 x 1 x 2048 x 2^20) do not fit the kernel's i32 rows.
func.func @huge(%x: memref<1x1x2048x1048576x256xbf16>, %w: memref<32x1x1x1x128xi8>, %s: memref<32x1x1x1x16xi8>, %amax: f32, %wamax: f32, %out: memref<1x1x2048x1048576x32xf32>) {
  // expected-error @+1 {{cannot lower to the block-scaled sm100 kernel: 16777216 tiles or M = 2147483648 do not fit 31 bits}}
  conv3d.conv ins(%x, %w : memref<1x1x2048x1048576x256xbf16>, memref<32x1x1x1x128xi8>) quantize(#conv3d.nvfp4<block_size = 16>, %amax) filter_quant(#conv3d.nvfp4<block_size = 16>, %s : memref<32x1x1x1x16xi8>, %wamax) outs(%out : memref<1x1x2048x1048576x32xf32>) overwrite filter_layout = fqrsc
  return
}

// -----

func.func @config_cta_group_2(%x: memref<1x4x6x6x256xbf16>, %w: memref<32x3x3x3x128xi8>, %s: memref<32x3x3x3x16xi8>, %amax: f32, %wamax: f32, %out: memref<1x2x4x4x32xf32>) {
  // expected-error @+1 {{cannot lower to the block-scaled sm100 kernel: tile configuration #conv3d.igemm_config<tile_m = 256, tile_n = 64, tile_k = 64, stages = 3, warps_m = 4, kernel = sm100>: tile_m must be 128 (cta_group::1; cta_group::2 is not implemented for the block-scaled kernel)}}
  conv3d.conv ins(%x, %w : memref<1x4x6x6x256xbf16>, memref<32x3x3x3x128xi8>) quantize(#conv3d.nvfp4<block_size = 16>, %amax) filter_quant(#conv3d.nvfp4<block_size = 16>, %s : memref<32x3x3x3x16xi8>, %wamax) outs(%out : memref<1x2x4x4x32xf32>) overwrite filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 256, tile_n = 64, tile_k = 64, stages = 3, warps_m = 4, kernel = sm100>
  return
}

// -----

func.func @config_split_k(%x: memref<1x4x6x6x256xbf16>, %w: memref<32x3x3x3x128xi8>, %s: memref<32x3x3x3x16xi8>, %amax: f32, %wamax: f32, %out: memref<1x2x4x4x32xf32>) {
  // expected-error @+1 {{cannot lower to the block-scaled sm100 kernel: tile configuration #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 3, warps_m = 4, split_k = 2, kernel = sm100>: split-K is not implemented for the block-scaled kernel}}
  conv3d.conv ins(%x, %w : memref<1x4x6x6x256xbf16>, memref<32x3x3x3x128xi8>) quantize(#conv3d.nvfp4<block_size = 16>, %amax) filter_quant(#conv3d.nvfp4<block_size = 16>, %s : memref<32x3x3x3x16xi8>, %wamax) outs(%out : memref<1x2x4x4x32xf32>) overwrite filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 3, warps_m = 4, split_k = 2, kernel = sm100>
  return
}

// -----

func.func @config_qslice_outer(%x: memref<1x4x6x6x256xbf16>, %w: memref<32x3x3x3x128xi8>, %s: memref<32x3x3x3x16xi8>, %amax: f32, %wamax: f32, %out: memref<1x2x4x4x32xf32>) {
  // expected-error @+1 {{cannot lower to the block-scaled sm100 kernel: tile configuration #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 3, warps_m = 4, k_order = qslice_outer, kernel = sm100>: k_order = qslice_outer is not implemented for the block-scaled kernel}}
  conv3d.conv ins(%x, %w : memref<1x4x6x6x256xbf16>, memref<32x3x3x3x128xi8>) quantize(#conv3d.nvfp4<block_size = 16>, %amax) filter_quant(#conv3d.nvfp4<block_size = 16>, %s : memref<32x3x3x3x16xi8>, %wamax) outs(%out : memref<1x2x4x4x32xf32>) overwrite filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 3, warps_m = 4, k_order = qslice_outer, kernel = sm100>
  return
}

// -----

func.func @config_sm80_kernel(%x: memref<1x4x6x6x256xbf16>, %w: memref<32x3x3x3x128xi8>, %s: memref<32x3x3x3x16xi8>, %amax: f32, %wamax: f32, %out: memref<1x2x4x4x32xf32>) {
  // expected-error @+1 {{cannot lower to the block-scaled sm100 kernel: tile configuration #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 3, warps_m = 4, kernel = sm80>: names the sm80 kernel; a packed NVFP4 filter is multiplied by the block-scaled sm100 kernel only}}
  conv3d.conv ins(%x, %w : memref<1x4x6x6x256xbf16>, memref<32x3x3x3x128xi8>) quantize(#conv3d.nvfp4<block_size = 16>, %amax) filter_quant(#conv3d.nvfp4<block_size = 16>, %s : memref<32x3x3x3x16xi8>, %wamax) outs(%out : memref<1x2x4x4x32xf32>) overwrite filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 3, warps_m = 4, kernel = sm80>
  return
}

// -----

func.func @config_tile_k(%x: memref<1x4x6x6x256xbf16>, %w: memref<32x3x3x3x128xi8>, %s: memref<32x3x3x3x16xi8>, %amax: f32, %wamax: f32, %out: memref<1x2x4x4x32xf32>) {
  // expected-error @+1 {{cannot lower to the block-scaled sm100 kernel: tile configuration #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 32, stages = 3, warps_m = 4, kernel = sm100>: tile_k must be 64 (the K of one MMA; a K step is four of them)}}
  conv3d.conv ins(%x, %w : memref<1x4x6x6x256xbf16>, memref<32x3x3x3x128xi8>) quantize(#conv3d.nvfp4<block_size = 16>, %amax) filter_quant(#conv3d.nvfp4<block_size = 16>, %s : memref<32x3x3x3x16xi8>, %wamax) outs(%out : memref<1x2x4x4x32xf32>) overwrite filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 32, stages = 3, warps_m = 4, kernel = sm100>
  return
}

// -----

func.func @config_warps(%x: memref<1x4x6x6x256xbf16>, %w: memref<32x3x3x3x128xi8>, %s: memref<32x3x3x3x16xi8>, %amax: f32, %wamax: f32, %out: memref<1x2x4x4x32xf32>) {
  // expected-error @+1 {{cannot lower to the block-scaled sm100 kernel: tile configuration #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 3, warps_m = 2, warps_n = 2, kernel = sm100>: the warp layout must be 4x1 (the epilogue warps)}}
  conv3d.conv ins(%x, %w : memref<1x4x6x6x256xbf16>, memref<32x3x3x3x128xi8>) quantize(#conv3d.nvfp4<block_size = 16>, %amax) filter_quant(#conv3d.nvfp4<block_size = 16>, %s : memref<32x3x3x3x16xi8>, %wamax) outs(%out : memref<1x2x4x4x32xf32>) overwrite filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 3, warps_m = 2, warps_n = 2, kernel = sm100>
  return
}

// -----

func.func @config_tile_n_120(%x: memref<1x4x6x6x256xbf16>, %w: memref<32x3x3x3x128xi8>, %s: memref<32x3x3x3x16xi8>, %amax: f32, %wamax: f32, %out: memref<1x2x4x4x32xf32>) {
  // expected-error @+1 {{cannot lower to the block-scaled sm100 kernel: tile_n = 120 is not a kind::mxf4nvf4 shape for M = 128 (a multiple of 16 from 16 to 256)}}
  conv3d.conv ins(%x, %w : memref<1x4x6x6x256xbf16>, memref<32x3x3x3x128xi8>) quantize(#conv3d.nvfp4<block_size = 16>, %amax) filter_quant(#conv3d.nvfp4<block_size = 16>, %s : memref<32x3x3x3x16xi8>, %wamax) outs(%out : memref<1x2x4x4x32xf32>) overwrite filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 128, tile_n = 120, tile_k = 64, stages = 3, warps_m = 4, kernel = sm100>
  return
}
