// conv3d-select-config=target=sm100: the sm100 kernel's heuristic (FQRSC
// filters, bf16/f16, C >= 64; configs with kernel = sm100, tile_m = 128 (one
// cta_group::1 tcgen05.mma, a TMEM lane per row), tile_n a multiple of 16,
// tile_k = 64, warps_m = 4 (the epilogue warps), and as many stages, up to
// 6, as SM100KernelPlan fits beside the epilogue's staging tile), and the
// fallback: a convolution the sm100 kernel cannot take gets a remark naming
// why and the sm80 heuristic's config with kernel = sm80 (the reasons are
// getTmaKernelProblem's, shared with sm90: select-config-sm90.mlir has one
// case each; here the ones whose wording names the target, and two more).
// A forced sm100 config on such a convolution is an error.
// A convolution with a packed NVFP4 filter (nvfp4-mode=real) gets no
// heuristic config (the block-scaled kernel chooses its tile) but takes a
// forced one, for the kernel to use or refuse (lower-block-scaled-to-
// sm100.mlir).
//
// RUN: split-file %s %t
// RUN: conv3d-opt %t/packed.mlir -conv3d-select-config=target=sm100 | FileCheck %s --check-prefix=PACKED
// RUN: conv3d-opt %t/packed.mlir --conv3d-select-config="target=sm100 config=tile_m=128,tile_n=48,tile_k=64,stages=3,warps_m=4,warps_n=1" | FileCheck %s --check-prefix=PACKED-FORCED
// PACKED-LABEL: func.func @packed
//  PACKED-NOT: config
// PACKED-FORCED-LABEL: func.func @packed
//       PACKED-FORCED: config = #conv3d.igemm_config<tile_m = 128, tile_n = 48, tile_k = 64, stages = 3, warps_m = 4, kernel = sm100>
// RUN: conv3d-opt %t/heuristic.mlir -conv3d-select-config=target=sm100 | FileCheck %s
// RUN: conv3d-opt %t/fallback.mlir -conv3d-select-config=target=sm100 -verify-diagnostics | FileCheck %s --check-prefix=FALLBACK
// RUN: not conv3d-opt %t/fallback.mlir --conv3d-select-config="target=sm100 config=tile_m=128,tile_n=96,tile_k=64" 2>&1 | FileCheck %s --check-prefix=FORCED
//
// Shared memory (SM100KernelPlan): a stage is (128 + tile_n) x 128 bytes;
// the f32 staging tile is 128 x (tile_n / c + 4) x 4 bytes for the fewest
// column chunks c that fit; barriers, the TMEM slot and 1024 bytes of
// alignment slack; 232448 bytes in all.

//--- heuristic.mlir

// F = 96: 28672 B per stage; 6 stages beside whole staging rows (51200 B).
// CHECK-LABEL: func.func @f96
// CHECK: config = #conv3d.igemm_config<tile_m = 128, tile_n = 96, tile_k = 64, stages = 6, warps_m = 4, kernel = sm100> ->
func.func @f96(%x: tensor<1x8x48x48x64xbf16>, %w: tensor<96x1x1x1x64xbf16>, %i: tensor<1x8x48x48x96xbf16>) -> tensor<1x8x48x48x96xbf16> {
  %0 = conv3d.conv ins(%x, %w : tensor<1x8x48x48x64xbf16>, tensor<96x1x1x1x64xbf16>) outs(%i : tensor<1x8x48x48x96xbf16>) overwrite filter_layout = fqrsc -> tensor<1x8x48x48x96xbf16>
  return %0 : tensor<1x8x48x48x96xbf16>
}

// F = 192: 40960 B per stage; 5 stages with 24-column staging chunks.
// CHECK-LABEL: func.func @f192
// CHECK: config = #conv3d.igemm_config<tile_m = 128, tile_n = 192, tile_k = 64, stages = 5, warps_m = 4, kernel = sm100> ->
func.func @f192(%x: tensor<1x8x48x48x64xbf16>, %w: tensor<192x1x1x1x64xbf16>, %i: tensor<1x8x48x48x192xbf16>) -> tensor<1x8x48x48x192xbf16> {
  %0 = conv3d.conv ins(%x, %w : tensor<1x8x48x48x64xbf16>, tensor<192x1x1x1x64xbf16>) outs(%i : tensor<1x8x48x48x192xbf16>) overwrite filter_layout = fqrsc -> tensor<1x8x48x48x192xbf16>
  return %0 : tensor<1x8x48x48x192xbf16>
}

// F = 256, the widest MMA: 49152 B per stage, 4 stages.
// CHECK-LABEL: func.func @f256
// CHECK: config = #conv3d.igemm_config<tile_m = 128, tile_n = 256, tile_k = 64, stages = 4, warps_m = 4, kernel = sm100> ->
func.func @f256(%x: tensor<1x8x48x48x64xbf16>, %w: tensor<256x1x1x1x64xbf16>, %i: tensor<1x8x48x48x256xbf16>) -> tensor<1x8x48x48x256xbf16> {
  %0 = conv3d.conv ins(%x, %w : tensor<1x8x48x48x64xbf16>, tensor<256x1x1x1x64xbf16>) outs(%i : tensor<1x8x48x48x256xbf16>) overwrite filter_layout = fqrsc -> tensor<1x8x48x48x256xbf16>
  return %0 : tensor<1x8x48x48x256xbf16>
}

// F = 384 > 256: the largest multiple of 32 up to 256 that divides it, 192.
// CHECK-LABEL: func.func @f384
// CHECK: config = #conv3d.igemm_config<tile_m = 128, tile_n = 192, tile_k = 64, stages = 5, warps_m = 4, kernel = sm100> ->
func.func @f384(%x: tensor<1x8x48x48x64xbf16>, %w: tensor<384x1x1x1x64xbf16>, %i: tensor<1x8x48x48x384xbf16>) -> tensor<1x8x48x48x384xbf16> {
  %0 = conv3d.conv ins(%x, %w : tensor<1x8x48x48x64xbf16>, tensor<384x1x1x1x64xbf16>) outs(%i : tensor<1x8x48x48x384xbf16>) overwrite filter_layout = fqrsc -> tensor<1x8x48x48x384xbf16>
  return %0 : tensor<1x8x48x48x384xbf16>
}

// F = 20 rounds up to the M = 128 MMA's N granularity of 16: 32.
// CHECK-LABEL: func.func @f20
// CHECK: config = #conv3d.igemm_config<tile_m = 128, tile_n = 32, tile_k = 64, stages = 6, warps_m = 4, kernel = sm100> ->
func.func @f20(%x: tensor<1x8x48x48x64xbf16>, %w: tensor<20x1x1x1x64xbf16>, %i: tensor<1x8x48x48x20xbf16>) -> tensor<1x8x48x48x20xbf16> {
  %0 = conv3d.conv ins(%x, %w : tensor<1x8x48x48x64xbf16>, tensor<20x1x1x1x64xbf16>) outs(%i : tensor<1x8x48x48x20xbf16>) overwrite filter_layout = fqrsc -> tensor<1x8x48x48x20xbf16>
  return %0 : tensor<1x8x48x48x20xbf16>
}

// f16, F = 128: 32768 B per stage; 6 stages with staging in 32-column
// chunks (18432 B).
// CHECK-LABEL: func.func @f16_f128
// CHECK: config = #conv3d.igemm_config<tile_m = 128, tile_n = 128, tile_k = 64, stages = 6, warps_m = 4, kernel = sm100> ->
func.func @f16_f128(%x: tensor<1x10x18x18x96xf16>, %w: tensor<128x3x3x3x96xf16>, %i: tensor<1x8x16x16x128xf16>) -> tensor<1x8x16x16x128xf16> {
  %0 = conv3d.conv ins(%x, %w : tensor<1x10x18x18x96xf16>, tensor<128x3x3x3x96xf16>) outs(%i : tensor<1x8x16x16x128xf16>) overwrite filter_layout = fqrsc -> tensor<1x8x16x16x128xf16>
  return %0 : tensor<1x8x16x16x128xf16>
}

//--- fallback.mlir

// Each gets the sm80 heuristic's config (see select-config.mlir) with
// kernel = sm80.

// f32 operands (the first convolution: the forced config stops here).
// FORCED: error: cannot use tile configuration #conv3d.igemm_config<tile_m = 128, tile_n = 96, tile_k = 64, kernel = sm100>: the sm100 kernel cannot take this convolution (tcgen05.mma kind::f16 takes bf16 or f16 operands here); force an sm80 configuration with kernel=sm80
// FALLBACK-LABEL: func.func @f32
// FALLBACK: config = #conv3d.igemm_config<tile_m = 64, tile_n = 64, tile_k = 32, stages = 4, warps_m = 2, warps_n = 2, kernel = sm80> ->
func.func @f32(%x: tensor<1x8x48x48x64xf32>, %w: tensor<64x1x1x1x64xf32>, %i: tensor<1x8x48x48x64xf32>) -> tensor<1x8x48x48x64xf32> {
  // expected-remark @below {{conv3d: the sm100 kernel cannot take this convolution (tcgen05.mma kind::f16 takes bf16 or f16 operands here); it runs on the sm80 kernel}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x8x48x48x64xf32>, tensor<64x1x1x1x64xf32>) outs(%i : tensor<1x8x48x48x64xf32>) overwrite filter_layout = fqrsc -> tensor<1x8x48x48x64xf32>
  return %0 : tensor<1x8x48x48x64xf32>
}

// A QRSCF filter (the default layout).
// FALLBACK-LABEL: func.func @qrscf
// FALLBACK: config = #conv3d.igemm_config<tile_m = 64, tile_n = 128, tile_k = 64, stages = 3, warps_m = 2, warps_n = 2, kernel = sm80> ->
func.func @qrscf(%x: tensor<1x8x48x48x64xbf16>, %w: tensor<1x1x1x64x96xbf16>, %i: tensor<1x8x48x48x96xbf16>) -> tensor<1x8x48x48x96xbf16> {
  // expected-remark @below {{conv3d: the sm100 kernel cannot take this convolution (the filter is QRSCF; the TMA filter tiles are K-major (FQRSC)); it runs on the sm80 kernel}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x8x48x48x64xbf16>, tensor<1x1x1x64x96xbf16>) outs(%i : tensor<1x8x48x48x96xbf16>) overwrite -> tensor<1x8x48x48x96xbf16>
  return %0 : tensor<1x8x48x48x96xbf16>
}

// NVFP4 quantization in the tile load; the sm80 config's tile_k is
// rounded up to the block size (32 -> 64).
// FALLBACK-LABEL: func.func @quantize_in_tile
// FALLBACK: config = #conv3d.igemm_config<tile_m = 64, tile_n = 64, tile_k = 64, stages = 4, warps_m = 2, warps_n = 2, kernel = sm80> ->
func.func @quantize_in_tile(%x: tensor<1x8x48x48x64xbf16>, %w: tensor<64x1x1x1x64xbf16>, %amax: f32, %i: tensor<1x8x48x48x64xbf16>) -> tensor<1x8x48x48x64xbf16> {
  // expected-remark @below {{conv3d: the sm100 kernel cannot take this convolution (NVFP4 quantization in the tile load runs in the sm80 kernel (the prepass placement feeds sm100)); it runs on the sm80 kernel}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x8x48x48x64xbf16>, tensor<64x1x1x1x64xbf16>) quantize(#conv3d.nvfp4<block_size = 64>, %amax) outs(%i : tensor<1x8x48x48x64xbf16>) overwrite filter_layout = fqrsc -> tensor<1x8x48x48x64xbf16>
  return %0 : tensor<1x8x48x48x64xbf16>
}

// C = 16, under one 64-channel TMA box.
// FALLBACK-LABEL: func.func @c16
// FALLBACK: config = #conv3d.igemm_config<tile_m = 64, tile_n = 128, tile_k = 32, stages = 4, warps_m = 2, warps_n = 2, kernel = sm80> ->
func.func @c16(%x: tensor<1x8x34x34x16xbf16>, %w: tensor<96x3x3x3x16xbf16>, %i: tensor<1x6x32x32x96xbf16>) -> tensor<1x6x32x32x96xbf16> {
  // expected-remark @below {{conv3d: the sm100 kernel cannot take this convolution (C = 16 is under one 64-channel TMA box; the sm80 kernel reads narrow channels without padding them); it runs on the sm80 kernel}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x8x34x34x16xbf16>, tensor<96x3x3x3x16xbf16>) outs(%i : tensor<1x6x32x32x96xbf16>) overwrite filter_layout = fqrsc -> tensor<1x6x32x32x96xbf16>
  return %0 : tensor<1x6x32x32x96xbf16>
}

// Depth padding 17: the im2col lower corner -17 is outside [-16, 15], and
// the per-depth-slice (rank-4) form that takes it on sm90 is not in sm100's
// kernel.
// FALLBACK-LABEL: func.func @padding_17
// FALLBACK: kernel = sm80> ->
func.func @padding_17(%x: tensor<1x4x8x8x64xbf16>, %w: tensor<64x1x1x1x64xbf16>, %i: tensor<1x21x8x8x64xbf16>) -> tensor<1x21x8x8x64xbf16> {
  // expected-remark @below {{conv3d: the sm100 kernel cannot take this convolution (the depth padding (17, 0) and window put a TMA im2col corner outside [-16, 15] (per-depth-slice descriptors are implemented for the sm90 kernel only)); it runs on the sm80 kernel}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x8x8x64xbf16>, tensor<64x1x1x1x64xbf16>) outs(%i : tensor<1x21x8x8x64xbf16>) overwrite padding = [17, 0, 0, 0, 0, 0] filter_layout = fqrsc -> tensor<1x21x8x8x64xbf16>
  return %0 : tensor<1x21x8x8x64xbf16>
}

//--- packed.mlir
func.func @packed(%x: tensor<1x4x6x6x256xbf16>, %w: tensor<32x3x3x3x128xi8>, %s: tensor<32x3x3x3x16xi8>, %amax: f32, %wamax: f32, %init: tensor<1x2x4x4x32xf32>) -> tensor<1x2x4x4x32xf32> {
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x256xbf16>, tensor<32x3x3x3x128xi8>) quantize(#conv3d.nvfp4<block_size = 16>, %amax) filter_quant(#conv3d.nvfp4<block_size = 16>, %s : tensor<32x3x3x3x16xi8>, %wamax) outs(%init : tensor<1x2x4x4x32xf32>) overwrite filter_layout = fqrsc -> tensor<1x2x4x4x32xf32>
  return %0 : tensor<1x2x4x4x32xf32>
}
