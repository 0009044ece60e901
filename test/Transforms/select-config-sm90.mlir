// conv3d-select-config=target=sm90: the sm90 kernel's heuristic (FQRSC
// filters, bf16/f16, C >= 64; configs with kernel = sm90, tile_k = 64,
// warps_m = 8 for two consumer warpgroups or 4 for one, warps_n = 1, and as
// many stages, up to 6, as fit beside the epilogue's staging tile), and the
// fallback: a convolution the sm90 kernel cannot take gets a remark naming
// why and the sm80 heuristic's config with kernel = sm80 (one case per
// reason of getTmaKernelProblem); and convolutions past the rank-5 TMA
// im2col limits that per-depth-slice (rank-4) descriptors take, with a
// remark. The other targets: select-config.mlir.
//
// RUN: split-file %s %t
// RUN: conv3d-opt %t/heuristic.mlir -conv3d-select-config="target=sm90 selection=heuristic" -verify-diagnostics | FileCheck %s
// RUN: conv3d-opt %t/fallback.mlir -conv3d-select-config="target=sm90 selection=heuristic" -verify-diagnostics | FileCheck %s --check-prefix=FALLBACK
// RUN: conv3d-opt %t/slices.mlir -conv3d-select-config="target=sm90 selection=heuristic" -verify-diagnostics | FileCheck %s --check-prefix=SLICES
//
// Shared memory (SM90KernelPlan): a stage is (tile_m + tile_n) x 128 bytes
// (64 bf16 channels per row); the f32 staging tile is tile_m x (tile_n / c
// + 4) x 4 bytes for c = 1, 2 or 4 column chunks (more chunks only while
// fewer than 4 stages fit); the budget is 232448 - 2048 bytes.

//--- heuristic.mlir

// F = 96, M = 8 x 48 x 48 = 18432: tile_n = F; 128 rows (two consumer
// warpgroups): 72 tiles of 256 rows would be too few for 256-row tiles
// (those need at least 2 x 132). (128 + 96) x 128 = 28672 B per stage
// beside 128 x 100 x 4 = 51200 B of staging: 6 stages.
// CHECK-LABEL: func.func @f96
// CHECK: config = #conv3d.igemm_config<tile_m = 128, tile_n = 96, tile_k = 64, stages = 6, warps_m = 8, kernel = sm90> ->
func.func @f96(%x: tensor<1x8x48x48x64xbf16>, %w: tensor<96x1x1x1x64xbf16>, %i: tensor<1x8x48x48x96xbf16>) -> tensor<1x8x48x48x96xbf16> {
  %0 = conv3d.conv ins(%x, %w : tensor<1x8x48x48x64xbf16>, tensor<96x1x1x1x64xbf16>) outs(%i : tensor<1x8x48x48x96xbf16>) overwrite filter_layout = fqrsc -> tensor<1x8x48x48x96xbf16>
  return %0 : tensor<1x8x48x48x96xbf16>
}

// F = 96 over M = 8 x 96 x 96 = 73728 rows, a 3x3 window in H and W:
// the halo mainloop (select-config-sm90-halo.mlir has its cases).
// CHECK-LABEL: func.func @wan_up_96
// CHECK: config = #conv3d.igemm_config<tile_m = 256, tile_n = 96, tile_k = 64, stages = 8, warps_m = 8, kernel = sm90, mainloop = halo> ->
func.func @wan_up_96(%x: tensor<1x10x98x98x96xbf16>, %w: tensor<96x3x3x3x96xbf16>, %i: tensor<1x8x96x96x96xbf16>) -> tensor<1x8x96x96x96xbf16> {
  %0 = conv3d.conv ins(%x, %w : tensor<1x10x98x98x96xbf16>, tensor<96x3x3x3x96xbf16>) outs(%i : tensor<1x8x96x96x96xbf16>) overwrite filter_layout = fqrsc -> tensor<1x8x96x96x96xbf16>
  return %0 : tensor<1x8x96x96x96xbf16>
}

// The same M with F = 64: the halo mainloop too.
// CHECK-LABEL: func.func @f64
// CHECK: config = #conv3d.igemm_config<tile_m = 256, tile_n = 64, tile_k = 64, stages = 8, warps_m = 8, kernel = sm90, mainloop = halo> ->
func.func @f64(%x: tensor<1x10x98x98x64xbf16>, %w: tensor<64x3x3x3x64xbf16>, %i: tensor<1x8x96x96x64xbf16>) -> tensor<1x8x96x96x64xbf16> {
  %0 = conv3d.conv ins(%x, %w : tensor<1x10x98x98x64xbf16>, tensor<64x3x3x3x64xbf16>) outs(%i : tensor<1x8x96x96x64xbf16>) overwrite filter_layout = fqrsc -> tensor<1x8x96x96x64xbf16>
  return %0 : tensor<1x8x96x96x64xbf16>
}

// F = 192 fits one wgmma: 40960 B per stage; whole staging rows (100352 B)
// leave 3 stages, column halves (51200 B) 4.
// CHECK-LABEL: func.func @f192
// CHECK: config = #conv3d.igemm_config<tile_m = 128, tile_n = 192, tile_k = 64, stages = 4, warps_m = 8, kernel = sm90> ->
func.func @f192(%x: tensor<1x8x48x48x64xbf16>, %w: tensor<192x1x1x1x64xbf16>, %i: tensor<1x8x48x48x192xbf16>) -> tensor<1x8x48x48x192xbf16> {
  %0 = conv3d.conv ins(%x, %w : tensor<1x8x48x48x64xbf16>, tensor<192x1x1x1x64xbf16>) outs(%i : tensor<1x8x48x48x192xbf16>) overwrite filter_layout = fqrsc -> tensor<1x8x48x48x192xbf16>
  return %0 : tensor<1x8x48x48x192xbf16>
}

// F = 256, the widest N tile: 49152 B per stage; even quarter staging rows
// leave 3 stages.
// CHECK-LABEL: func.func @f256
// CHECK: config = #conv3d.igemm_config<tile_m = 128, tile_n = 256, tile_k = 64, stages = 3, warps_m = 8, kernel = sm90> ->
func.func @f256(%x: tensor<1x8x48x48x64xbf16>, %w: tensor<256x1x1x1x64xbf16>, %i: tensor<1x8x48x48x256xbf16>) -> tensor<1x8x48x48x256xbf16> {
  %0 = conv3d.conv ins(%x, %w : tensor<1x8x48x48x64xbf16>, tensor<256x1x1x1x64xbf16>) outs(%i : tensor<1x8x48x48x256xbf16>) overwrite filter_layout = fqrsc -> tensor<1x8x48x48x256xbf16>
  return %0 : tensor<1x8x48x48x256xbf16>
}

// F = 384 > 256: the largest multiple of 32 up to 256 that divides it, 192.
// CHECK-LABEL: func.func @f384
// CHECK: config = #conv3d.igemm_config<tile_m = 128, tile_n = 192, tile_k = 64, stages = 4, warps_m = 8, kernel = sm90> ->
func.func @f384(%x: tensor<1x8x48x48x64xbf16>, %w: tensor<384x1x1x1x64xbf16>, %i: tensor<1x8x48x48x384xbf16>) -> tensor<1x8x48x48x384xbf16> {
  %0 = conv3d.conv ins(%x, %w : tensor<1x8x48x48x64xbf16>, tensor<384x1x1x1x64xbf16>) outs(%i : tensor<1x8x48x48x384xbf16>) overwrite filter_layout = fqrsc -> tensor<1x8x48x48x384xbf16>
  return %0 : tensor<1x8x48x48x384xbf16>
}

// F = 20 rounds up to wgmma's N granularity of 8.
// CHECK-LABEL: func.func @f20
// CHECK: config = #conv3d.igemm_config<tile_m = 128, tile_n = 24, tile_k = 64, stages = 6, warps_m = 8, kernel = sm90> ->
func.func @f20(%x: tensor<1x8x48x48x64xbf16>, %w: tensor<20x1x1x1x64xbf16>, %i: tensor<1x8x48x48x20xbf16>) -> tensor<1x8x48x48x20xbf16> {
  %0 = conv3d.conv ins(%x, %w : tensor<1x8x48x48x64xbf16>, tensor<20x1x1x1x64xbf16>) outs(%i : tensor<1x8x48x48x20xbf16>) overwrite filter_layout = fqrsc -> tensor<1x8x48x48x20xbf16>
  return %0 : tensor<1x8x48x48x20xbf16>
}

// f16, small M (2048 rows, 16 tiles): still 128 rows.
// CHECK-LABEL: func.func @f16_small_m
// CHECK: config = #conv3d.igemm_config<tile_m = 128, tile_n = 96, tile_k = 64, stages = 6, warps_m = 8, kernel = sm90> ->
func.func @f16_small_m(%x: tensor<1x10x18x18x96xf16>, %w: tensor<96x3x3x3x96xf16>, %i: tensor<1x8x16x16x96xf16>) -> tensor<1x8x16x16x96xf16> {
  %0 = conv3d.conv ins(%x, %w : tensor<1x10x18x18x96xf16>, tensor<96x3x3x3x96xf16>) outs(%i : tensor<1x8x16x16x96xf16>) overwrite filter_layout = fqrsc -> tensor<1x8x16x16x96xf16>
  return %0 : tensor<1x8x16x16x96xf16>
}

// M = 64: one m64 tile, one consumer warpgroup.
// CHECK-LABEL: func.func @m64
// CHECK: config = #conv3d.igemm_config<tile_m = 64, tile_n = 128, tile_k = 64, stages = 6, warps_m = 4, kernel = sm90> ->
func.func @m64(%x: tensor<1x1x8x8x64xbf16>, %w: tensor<128x1x1x1x64xbf16>, %i: tensor<1x1x8x8x128xbf16>) -> tensor<1x1x8x8x128xbf16> {
  %0 = conv3d.conv ins(%x, %w : tensor<1x1x8x8x64xbf16>, tensor<128x1x1x1x64xbf16>) outs(%i : tensor<1x1x8x8x128xbf16>) overwrite filter_layout = fqrsc -> tensor<1x1x8x8x128xbf16>
  return %0 : tensor<1x1x8x8x128xbf16>
}

// M = 65: 128 rows again; 32768 B per stage beside 67584 B of staging: 4.
// CHECK-LABEL: func.func @m65
// CHECK: config = #conv3d.igemm_config<tile_m = 128, tile_n = 128, tile_k = 64, stages = 4, warps_m = 8, kernel = sm90> ->
func.func @m65(%x: tensor<1x1x5x13x64xbf16>, %w: tensor<128x1x1x1x64xbf16>, %i: tensor<1x1x5x13x128xbf16>) -> tensor<1x1x5x13x128xbf16> {
  %0 = conv3d.conv ins(%x, %w : tensor<1x1x5x13x64xbf16>, tensor<128x1x1x1x64xbf16>) outs(%i : tensor<1x1x5x13x128xbf16>) overwrite filter_layout = fqrsc -> tensor<1x1x5x13x128xbf16>
  return %0 : tensor<1x1x5x13x128xbf16>
}

// The limits of TMA im2col, just inside: depth padding 16 (lower corner
// -16), a width window dilated to span 31 pixels with high padding 14
// (upper corner 14 - 30 = -16), stride 8, C = 72 (144 bytes).
// CHECK-LABEL: func.func @tma_limits
// CHECK: config = #conv3d.igemm_config<{{.*}}kernel = sm90> ->
func.func @tma_limits(%x: tensor<1x4x40x40x72xbf16>, %w: tensor<64x1x1x2x72xbf16>, %i: tensor<1x20x40x3x64xbf16>) -> tensor<1x20x40x3x64xbf16> {
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x40x40x72xbf16>, tensor<64x1x1x2x72xbf16>) outs(%i : tensor<1x20x40x3x64xbf16>) overwrite strides = [1, 1, 8] dilations = [1, 1, 30] padding = [16, 0, 0, 0, 0, 14] filter_layout = fqrsc -> tensor<1x20x40x3x64xbf16>
  return %0 : tensor<1x20x40x3x64xbf16>
}

// A config already on the op is kept as it is: no kernel added, no remark.
// CHECK-LABEL: func.func @existing_config
// CHECK: config = #conv3d.igemm_config<tile_m = 64, tile_n = 32, tile_k = 32, stages = 3> ->
func.func @existing_config(%x: tensor<1x8x8x8x16xf32>, %w: tensor<3x3x3x16x32xf32>, %i: tensor<1x6x6x6x32xf32>) -> tensor<1x6x6x6x32xf32> {
  %0 = conv3d.conv ins(%x, %w : tensor<1x8x8x8x16xf32>, tensor<3x3x3x16x32xf32>) outs(%i : tensor<1x6x6x6x32xf32>) overwrite config = #conv3d.igemm_config<tile_m = 64, tile_n = 32, tile_k = 32, stages = 3> -> tensor<1x6x6x6x32xf32>
  return %0 : tensor<1x6x6x6x32xf32>
}

// NVFP4 quantization in the tile with blocks of 16, 32 or 64 dividing C
// (here 64 = one whole K step row): the sm90 kernel quantizes the landed
// tile itself; its config is the plain heuristic's (tile_k = 64 holds
// whole blocks).
// CHECK-LABEL: func.func @quantize_in_tile
// CHECK: config = #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 6, warps_m = 8, kernel = sm90> ->
func.func @quantize_in_tile(%x: tensor<1x8x48x48x64xbf16>, %w: tensor<64x1x1x1x64xbf16>, %amax: f32, %i: tensor<1x8x48x48x64xbf16>) -> tensor<1x8x48x48x64xbf16> {
  %0 = conv3d.conv ins(%x, %w : tensor<1x8x48x48x64xbf16>, tensor<64x1x1x1x64xbf16>) quantize(#conv3d.nvfp4<block_size = 64>, %amax) outs(%i : tensor<1x8x48x48x64xbf16>) overwrite filter_layout = fqrsc -> tensor<1x8x48x48x64xbf16>
  return %0 : tensor<1x8x48x48x64xbf16>
}

// Dynamic shapes get no config and no remark.
// CHECK-LABEL: func.func @dynamic_batch
// CHECK-NOT: config
// CHECK: return
func.func @dynamic_batch(%x: tensor<?x8x8x8x16xf32>, %w: tensor<1x1x1x16x16xf32>, %i: tensor<?x8x8x8x16xf32>) -> tensor<?x8x8x8x16xf32> {
  %0 = conv3d.conv ins(%x, %w : tensor<?x8x8x8x16xf32>, tensor<1x1x1x16x16xf32>) outs(%i : tensor<?x8x8x8x16xf32>) overwrite -> tensor<?x8x8x8x16xf32>
  return %0 : tensor<?x8x8x8x16xf32>
}

//--- fallback.mlir

// The fallbacks, in the order getTmaKernelProblem checks. Each gets the
// sm80 heuristic's config (see select-config.mlir) with kernel = sm80.

// f32 operands.
// FALLBACK-LABEL: func.func @f32
// FALLBACK: config = #conv3d.igemm_config<tile_m = 64, tile_n = 64, tile_k = 32, stages = 4, warps_m = 2, warps_n = 2, kernel = sm80> ->
func.func @f32(%x: tensor<1x8x48x48x64xf32>, %w: tensor<64x1x1x1x64xf32>, %i: tensor<1x8x48x48x64xf32>) -> tensor<1x8x48x48x64xf32> {
  // expected-remark @below {{conv3d: the sm90 kernel cannot take this convolution (wgmma takes bf16 or f16 operands here); it runs on the sm80 kernel}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x8x48x48x64xf32>, tensor<64x1x1x1x64xf32>) outs(%i : tensor<1x8x48x48x64xf32>) overwrite filter_layout = fqrsc -> tensor<1x8x48x48x64xf32>
  return %0 : tensor<1x8x48x48x64xf32>
}

// A QRSCF filter (the default layout).
// FALLBACK-LABEL: func.func @qrscf
// FALLBACK: config = #conv3d.igemm_config<tile_m = 64, tile_n = 128, tile_k = 64, stages = 3, warps_m = 2, warps_n = 2, kernel = sm80> ->
func.func @qrscf(%x: tensor<1x8x48x48x64xbf16>, %w: tensor<1x1x1x64x96xbf16>, %i: tensor<1x8x48x48x96xbf16>) -> tensor<1x8x48x48x96xbf16> {
  // expected-remark @below {{conv3d: the sm90 kernel cannot take this convolution (the filter is QRSCF; the TMA filter tiles are K-major (FQRSC)); it runs on the sm80 kernel}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x8x48x48x64xbf16>, tensor<1x1x1x64x96xbf16>) outs(%i : tensor<1x8x48x48x96xbf16>) overwrite -> tensor<1x8x48x48x96xbf16>
  return %0 : tensor<1x8x48x48x96xbf16>
}

// NVFP4 quantization in the tile load with blocks the sm90 kernel cannot
// quantize in its K steps (one tap x 64 channels): blocks of 128 span two
// steps; with C = 80 a block of 32 straddles two taps. The sm80 config's
// tile_k is rounded up to the block size (32 -> 128).
// FALLBACK-LABEL: func.func @quantize_block_128
// FALLBACK: config = #conv3d.igemm_config<tile_m = 64, tile_n = 64, tile_k = 128, stages = 4, warps_m = 2, warps_n = 2, kernel = sm80> ->
func.func @quantize_block_128(%x: tensor<1x8x48x48x128xbf16>, %w: tensor<64x1x1x1x128xbf16>, %amax: f32, %i: tensor<1x8x48x48x64xbf16>) -> tensor<1x8x48x48x64xbf16> {
  // expected-remark @below {{conv3d: the sm90 kernel cannot take this convolution (NVFP4 blocks of 128 span several 64-channel K steps; the sm90 kernel quantizes blocks of 16, 32 or 64 in the tile); it runs on the sm80 kernel}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x8x48x48x128xbf16>, tensor<64x1x1x1x128xbf16>) quantize(#conv3d.nvfp4<block_size = 128>, %amax) outs(%i : tensor<1x8x48x48x64xbf16>) overwrite filter_layout = fqrsc -> tensor<1x8x48x48x64xbf16>
  return %0 : tensor<1x8x48x48x64xbf16>
}

// FALLBACK-LABEL: func.func @quantize_straddling_taps
// FALLBACK: config = #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 32, stages = 4, warps_m = 2, warps_n = 2, kernel = sm80> ->
func.func @quantize_straddling_taps(%x: tensor<1x8x48x48x80xbf16>, %w: tensor<64x3x3x3x80xbf16>, %amax: f32, %i: tensor<1x6x46x46x64xbf16>) -> tensor<1x6x46x46x64xbf16> {
  // expected-remark @below {{conv3d: the sm90 kernel cannot take this convolution (C = 80 is not a multiple of the NVFP4 block size 32: blocks straddle filter taps, which the sm90 kernel's K steps (one tap x 64 channels) keep apart); it runs on the sm80 kernel}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x8x48x48x80xbf16>, tensor<64x3x3x3x80xbf16>) quantize(#conv3d.nvfp4<block_size = 32>, %amax) outs(%i : tensor<1x6x46x46x64xbf16>) overwrite filter_layout = fqrsc -> tensor<1x6x46x46x64xbf16>
  return %0 : tensor<1x6x46x46x64xbf16>
}

// C = 16, under one 64-channel TMA box.
// FALLBACK-LABEL: func.func @c16
// FALLBACK: config = #conv3d.igemm_config<tile_m = 64, tile_n = 128, tile_k = 32, stages = 4, warps_m = 2, warps_n = 2, kernel = sm80> ->
func.func @c16(%x: tensor<1x8x34x34x16xbf16>, %w: tensor<96x3x3x3x16xbf16>, %i: tensor<1x6x32x32x96xbf16>) -> tensor<1x6x32x32x96xbf16> {
  // expected-remark @below {{conv3d: the sm90 kernel cannot take this convolution (C = 16 is under one 64-channel TMA box; the sm80 kernel reads narrow channels without padding them); it runs on the sm80 kernel}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x8x34x34x16xbf16>, tensor<96x3x3x3x16xbf16>) outs(%i : tensor<1x6x32x32x96xbf16>) overwrite filter_layout = fqrsc -> tensor<1x6x32x32x96xbf16>
  return %0 : tensor<1x6x32x32x96xbf16>
}

// Height padding 129: outside both forms' corners; the remark names the
// rank-5 and the per-depth-slice problem.
// FALLBACK-LABEL: func.func @padding_129
// FALLBACK: kernel = sm80> ->
func.func @padding_129(%x: tensor<1x4x8x8x64xbf16>, %w: tensor<64x1x1x1x64xbf16>, %i: tensor<1x4x137x8x64xbf16>) -> tensor<1x4x137x8x64xbf16> {
  // expected-remark @below {{conv3d: the sm90 kernel cannot take this convolution (the height padding (129, 0) and window put a TMA im2col corner outside [-16, 15]; per-depth-slice descriptors: the height padding (129, 0) and window put a TMA im2col corner outside [-128, 127]); it runs on the sm80 kernel}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x8x8x64xbf16>, tensor<64x1x1x1x64xbf16>) outs(%i : tensor<1x4x137x8x64xbf16>) overwrite padding = [0, 0, 129, 0, 0, 0] filter_layout = fqrsc -> tensor<1x4x137x8x64xbf16>
  return %0 : tensor<1x4x137x8x64xbf16>
}

// A width window dilated to span 257 pixels (high padding 256 keeps the
// corners at 0): past both forms' im2col offsets (31 and 255).
// FALLBACK-LABEL: func.func @dilated_window_257
// FALLBACK: kernel = sm80> ->
func.func @dilated_window_257(%x: tensor<1x4x8x20x64xbf16>, %w: tensor<64x1x1x3x64xbf16>, %i: tensor<1x4x8x20x64xbf16>) -> tensor<1x4x8x20x64xbf16> {
  // expected-remark @below {{conv3d: the sm90 kernel cannot take this convolution (the dilated width window spans 257 pixels; TMA im2col offsets reach 31; per-depth-slice descriptors: the dilated width window spans 257 pixels; TMA im2col offsets reach 255); it runs on the sm80 kernel}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x8x20x64xbf16>, tensor<64x1x1x3x64xbf16>) outs(%i : tensor<1x4x8x20x64xbf16>) overwrite dilations = [1, 1, 128] padding = [0, 0, 0, 0, 0, 256] filter_layout = fqrsc -> tensor<1x4x8x20x64xbf16>
  return %0 : tensor<1x4x8x20x64xbf16>
}

// Stride 9 along the height.
// FALLBACK-LABEL: func.func @stride_9
// FALLBACK: kernel = sm80> ->
func.func @stride_9(%x: tensor<1x4x19x8x64xbf16>, %w: tensor<64x1x1x1x64xbf16>, %i: tensor<1x4x3x8x64xbf16>) -> tensor<1x4x3x8x64xbf16> {
  // expected-remark @below {{conv3d: the sm90 kernel cannot take this convolution (the height stride 9 exceeds TMA's element stride limit of 8); it runs on the sm80 kernel}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x19x8x64xbf16>, tensor<64x1x1x1x64xbf16>) outs(%i : tensor<1x4x3x8x64xbf16>) overwrite strides = [1, 9, 1] filter_layout = fqrsc -> tensor<1x4x3x8x64xbf16>
  return %0 : tensor<1x4x3x8x64xbf16>
}

// C = 100 f16 channels: 200 bytes per pixel, not a multiple of 16.
// FALLBACK-LABEL: func.func @c100
// FALLBACK: config = #conv3d.igemm_config<{{.*}}kernel = sm80> ->
func.func @c100(%x: tensor<1x4x8x8x100xf16>, %w: tensor<64x1x1x1x100xf16>, %i: tensor<1x4x8x8x64xf16>) -> tensor<1x4x8x8x64xf16> {
  // expected-remark @below {{conv3d: the sm90 kernel cannot take this convolution (a pixel's 100 channels are not a multiple of 16 bytes (TMA's global stride granularity)); it runs on the sm80 kernel}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x8x8x100xf16>, tensor<64x1x1x1x100xf16>) outs(%i : tensor<1x4x8x8x64xf16>) overwrite filter_layout = fqrsc -> tensor<1x4x8x8x64xf16>
  return %0 : tensor<1x4x8x8x64xf16>
}

// A memref convolution falls back the same way.
// FALLBACK-LABEL: func.func @memref_c32
// FALLBACK: conv3d.conv {{.*}} config = #conv3d.igemm_config<{{.*}}kernel = sm80>{{$}}
func.func @memref_c32(%x: memref<1x8x8x8x32xbf16>, %w: memref<64x1x1x1x32xbf16>, %i: memref<1x8x8x8x64xbf16>) {
  // expected-remark @below {{conv3d: the sm90 kernel cannot take this convolution (C = 32 is under one 64-channel TMA box; the sm80 kernel reads narrow channels without padding them); it runs on the sm80 kernel}}
  conv3d.conv ins(%x, %w : memref<1x8x8x8x32xbf16>, memref<64x1x1x1x32xbf16>) outs(%i : memref<1x8x8x8x64xbf16>) overwrite filter_layout = fqrsc
  return
}

//--- slices.mlir

// Past rank 5's limits and within rank 4's: the sm90 kernel reads the input
// through per-depth-slice descriptors; a remark says so and why.

// Depth padding 17: the im2col lower corner -17 is outside [-16, 15].
// A depth slice is 8 x 8 = 64 rows: the heuristic's tiles have 64 rows
// (one consumer warpgroup), not 128 (half of them past the slice's end).
// SLICES-LABEL: func.func @padding_17
// SLICES: config = #conv3d.igemm_config<tile_m = 64, tile_n = 64, tile_k = 64, stages = {{[0-9]+}}, warps_m = 4, kernel = sm90> ->
func.func @padding_17(%x: tensor<1x4x8x8x64xbf16>, %w: tensor<64x1x1x1x64xbf16>, %i: tensor<1x21x8x8x64xbf16>) -> tensor<1x21x8x8x64xbf16> {
  // expected-remark @below {{conv3d: the sm90 kernel reads this input through per-depth-slice (rank-4) TMA im2col descriptors (the depth padding (17, 0) and window put a TMA im2col corner outside [-16, 15])}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x8x8x64xbf16>, tensor<64x1x1x1x64xbf16>) outs(%i : tensor<1x21x8x8x64xbf16>) overwrite padding = [17, 0, 0, 0, 0, 0] filter_layout = fqrsc -> tensor<1x21x8x8x64xbf16>
  return %0 : tensor<1x21x8x8x64xbf16>
}

// High padding 16 on a 1-wide height window: upper corner 16 > 15.
// SLICES-LABEL: func.func @high_padding_16
// SLICES: config = #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = {{[0-9]+}}, warps_m = 8, kernel = sm90> ->
func.func @high_padding_16(%x: tensor<1x4x8x8x64xbf16>, %w: tensor<64x1x1x1x64xbf16>, %i: tensor<1x4x24x8x64xbf16>) -> tensor<1x4x24x8x64xbf16> {
  // expected-remark @below {{conv3d: the sm90 kernel reads this input through per-depth-slice (rank-4) TMA im2col descriptors (the height padding (0, 16) and window put a TMA im2col corner outside [-16, 15])}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x8x8x64xbf16>, tensor<64x1x1x1x64xbf16>) outs(%i : tensor<1x4x24x8x64xbf16>) overwrite padding = [0, 0, 0, 16, 0, 0] filter_layout = fqrsc -> tensor<1x4x24x8x64xbf16>
  return %0 : tensor<1x4x24x8x64xbf16>
}

// A width window dilated to span 33 pixels (high padding 16 keeps the
// corners in range): im2col offsets reach 31.
// SLICES-LABEL: func.func @dilated_window
// SLICES: kernel = sm90> ->
func.func @dilated_window(%x: tensor<1x4x8x20x64xbf16>, %w: tensor<64x1x1x3x64xbf16>, %i: tensor<1x4x8x4x64xbf16>) -> tensor<1x4x8x4x64xbf16> {
  // expected-remark @below {{conv3d: the sm90 kernel reads this input through per-depth-slice (rank-4) TMA im2col descriptors (the dilated width window spans 33 pixels; TMA im2col offsets reach 31)}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x8x20x64xbf16>, tensor<64x1x1x3x64xbf16>) outs(%i : tensor<1x4x8x4x64xbf16>) overwrite dilations = [1, 1, 16] padding = [0, 0, 0, 0, 0, 16] filter_layout = fqrsc -> tensor<1x4x8x4x64xbf16>
  return %0 : tensor<1x4x8x4x64xbf16>
}

// Depth stride 9, depth dilation 20 with Q = 3 (offsets 40): depth is a
// coordinate of the per-slice loads, never an element stride or offset.
// SLICES-LABEL: func.func @depth_stride_9_dilation_20
// SLICES: kernel = sm90> ->
func.func @depth_stride_9_dilation_20(%x: tensor<1x60x8x8x64xbf16>, %w: tensor<64x3x1x1x64xbf16>, %i: tensor<1x3x8x8x64xbf16>) -> tensor<1x3x8x8x64xbf16> {
  // expected-remark @below {{conv3d: the sm90 kernel reads this input through per-depth-slice (rank-4) TMA im2col descriptors (the depth padding (0, 0) and window put a TMA im2col corner outside [-16, 15])}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x60x8x8x64xbf16>, tensor<64x3x1x1x64xbf16>) outs(%i : tensor<1x3x8x8x64xbf16>) overwrite strides = [9, 1, 1] dilations = [20, 1, 1] filter_layout = fqrsc -> tensor<1x3x8x8x64xbf16>
  return %0 : tensor<1x3x8x8x64xbf16>
}

// Height padding 127 (lower corner -127): rank 4's corner range.
// SLICES-LABEL: func.func @padding_127
// SLICES: kernel = sm90> ->
func.func @padding_127(%x: tensor<1x4x8x8x64xbf16>, %w: tensor<64x1x1x1x64xbf16>, %i: tensor<1x4x135x8x64xbf16>) -> tensor<1x4x135x8x64xbf16> {
  // expected-remark @below {{conv3d: the sm90 kernel reads this input through per-depth-slice (rank-4) TMA im2col descriptors (the height padding (127, 0) and window put a TMA im2col corner outside [-16, 15])}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x8x8x64xbf16>, tensor<64x1x1x1x64xbf16>) outs(%i : tensor<1x4x135x8x64xbf16>) overwrite padding = [0, 0, 127, 0, 0, 0] filter_layout = fqrsc -> tensor<1x4x135x8x64xbf16>
  return %0 : tensor<1x4x135x8x64xbf16>
}
