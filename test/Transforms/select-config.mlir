// conv3d-select-config: the per-target heuristic of SelectConfig.cpp, the
// precedence of a config already on the op, and the NVFP4 rounding of tile_k.
// The `config=` option: select-config-forced.mlir; errors:
// select-config-invalid.mlir.
//
// RUN: conv3d-opt %s -conv3d-select-config | FileCheck %s --check-prefix=CPU
// RUN: conv3d-opt %s -conv3d-select-config=target=cpu | FileCheck %s --check-prefix=CPU
// RUN: conv3d-opt %s -conv3d-select-config=target=sm80 | FileCheck %s --check-prefix=SM80
// RUN: conv3d-opt %s -conv3d-select-config=target=sm90 2>/dev/null | FileCheck %s --check-prefix=SM90
// RUN: conv3d-opt %s -conv3d-select-config=target=sm100 2>/dev/null | FileCheck %s --check-prefix=SM90
//
// The filters here are QRSCF, which the sm90 and sm100 kernels do not take
// (their TMA filter tiles are K-major): on both targets every convolution
// gets the sm80 heuristic's config with kernel = sm80 (and a remark,
// checked in select-config-sm90.mlir and select-config-sm100.mlir with
// those kernels' own heuristics on FQRSC filters). The asynchronous
// kernels' configs name their kernel.
//
// Large M (1 x 8 x 48 x 48 = 18432 rows): sm80 weighs the last wave: with
// one N tile, 144 blocks of 128 rows leave 12 SMs with two, 288 of 64 rows
// balance better (tile_m = 64); with three N tiles (F = 384) 128 stays.
// 1x1x1 windows over C = 64, so K = 64.

// F = 96: sm80 takes a 128-wide N tile (measured faster than a 96-wide one
// despite the idle quarter), and with C >= 64 a 64-deep K tile in 3 stages.
// CPU-LABEL: func.func @f96
// CPU: config = #conv3d.igemm_config<tile_m = 64, tile_n = 64, tile_k = 64> ->
// SM80-LABEL: func.func @f96
// SM80: config = #conv3d.igemm_config<tile_m = 64, tile_n = 128, tile_k = 64, stages = 3, warps_m = 2, warps_n = 2> ->
// SM90-LABEL: func.func @f96
// SM90: config = #conv3d.igemm_config<tile_m = 64, tile_n = 128, tile_k = 64, stages = 3, warps_m = 2, warps_n = 2, kernel = sm80> ->
func.func @f96(%x: tensor<1x8x48x48x64xbf16>, %w: tensor<1x1x1x64x96xbf16>, %i: tensor<1x8x48x48x96xbf16>) -> tensor<1x8x48x48x96xbf16> {
  %0 = conv3d.conv ins(%x, %w : tensor<1x8x48x48x64xbf16>, tensor<1x1x1x64x96xbf16>) outs(%i : tensor<1x8x48x48x96xbf16>) overwrite -> tensor<1x8x48x48x96xbf16>
  return %0 : tensor<1x8x48x48x96xbf16>
}

// F = 192: sm80 covers it with three 64-wide N tiles of 256 rows (four
// 64 x 64 warp tiles, three stages to fit shared memory).
// CPU-LABEL: func.func @f192
// CPU: config = #conv3d.igemm_config<tile_m = 64, tile_n = 64, tile_k = 64> ->
// SM80-LABEL: func.func @f192
// SM80: config = #conv3d.igemm_config<tile_m = 256, tile_n = 64, tile_k = 32, stages = 3, warps_m = 4> ->
// SM90-LABEL: func.func @f192
// SM90: config = #conv3d.igemm_config<tile_m = 256, tile_n = 64, tile_k = 32, stages = 3, warps_m = 4, kernel = sm80> ->
func.func @f192(%x: tensor<1x8x48x48x64xbf16>, %w: tensor<1x1x1x64x192xbf16>, %i: tensor<1x8x48x48x192xbf16>) -> tensor<1x8x48x48x192xbf16> {
  %0 = conv3d.conv ins(%x, %w : tensor<1x8x48x48x64xbf16>, tensor<1x1x1x64x192xbf16>) outs(%i : tensor<1x8x48x48x192xbf16>) overwrite -> tensor<1x8x48x48x192xbf16>
  return %0 : tensor<1x8x48x48x192xbf16>
}

// F = 384: 128 divides it on sm80.
// CPU-LABEL: func.func @f384
// CPU: config = #conv3d.igemm_config<tile_m = 64, tile_n = 64, tile_k = 64> ->
// SM80-LABEL: func.func @f384
// SM80: config = #conv3d.igemm_config<tile_m = 128, tile_n = 128, tile_k = 64, stages = 3, warps_m = 2, warps_n = 2> ->
// SM90-LABEL: func.func @f384
// SM90: config = #conv3d.igemm_config<tile_m = 128, tile_n = 128, tile_k = 64, stages = 3, warps_m = 2, warps_n = 2, kernel = sm80> ->
func.func @f384(%x: tensor<1x8x48x48x64xbf16>, %w: tensor<1x1x1x64x384xbf16>, %i: tensor<1x8x48x48x384xbf16>) -> tensor<1x8x48x48x384xbf16> {
  %0 = conv3d.conv ins(%x, %w : tensor<1x8x48x48x64xbf16>, tensor<1x1x1x64x384xbf16>) outs(%i : tensor<1x8x48x48x384xbf16>) overwrite -> tensor<1x8x48x48x384xbf16>
  return %0 : tensor<1x8x48x48x384xbf16>
}

// C = 32 < 64 under a 128-wide N tile: sm80 keeps tile_k = 32 in 4 stages.
// SM80-LABEL: func.func @f128_c32
// SM80: config = #conv3d.igemm_config<tile_m = 64, tile_n = 128, tile_k = 32, stages = 4, warps_m = 2, warps_n = 2> ->
func.func @f128_c32(%x: tensor<1x8x48x48x32xbf16>, %w: tensor<1x1x1x32x128xbf16>, %i: tensor<1x8x48x48x128xbf16>) -> tensor<1x8x48x48x128xbf16> {
  %0 = conv3d.conv ins(%x, %w : tensor<1x8x48x48x32xbf16>, tensor<1x1x1x32x128xbf16>) outs(%i : tensor<1x8x48x48x128xbf16>) overwrite -> tensor<1x8x48x48x128xbf16>
  return %0 : tensor<1x8x48x48x128xbf16>
}

// F = 16: a 16-wide N tile (one warp column on sm80).
// CPU-LABEL: func.func @f16
// CPU: config = #conv3d.igemm_config<tile_m = 64, tile_n = 16, tile_k = 64> ->
// SM80-LABEL: func.func @f16
// SM80: config = #conv3d.igemm_config<tile_m = 64, tile_n = 16, tile_k = 32, stages = 4, warps_m = 2> ->
// SM90-LABEL: func.func @f16
// SM90: config = #conv3d.igemm_config<tile_m = 64, tile_n = 16, tile_k = 32, stages = 4, warps_m = 2, kernel = sm80> ->
func.func @f16(%x: tensor<1x8x48x48x64xbf16>, %w: tensor<1x1x1x64x16xbf16>, %i: tensor<1x8x48x48x16xbf16>) -> tensor<1x8x48x48x16xbf16> {
  %0 = conv3d.conv ins(%x, %w : tensor<1x8x48x48x64xbf16>, tensor<1x1x1x64x16xbf16>) outs(%i : tensor<1x8x48x48x16xbf16>) overwrite -> tensor<1x8x48x48x16xbf16>
  return %0 : tensor<1x8x48x48x16xbf16>
}

// F = 20 is rounded up to the MMA's N granularity of 8 on the GPU targets.
// CPU-LABEL: func.func @f20
// CPU: config = #conv3d.igemm_config<tile_m = 64, tile_n = 20, tile_k = 64> ->
// SM80-LABEL: func.func @f20
// SM80: config = #conv3d.igemm_config<tile_m = 64, tile_n = 24, tile_k = 32, stages = 4, warps_m = 2> ->
// SM90-LABEL: func.func @f20
// SM90: config = #conv3d.igemm_config<tile_m = 64, tile_n = 24, tile_k = 32, stages = 4, warps_m = 2, kernel = sm80> ->
func.func @f20(%x: tensor<1x8x48x48x64xbf16>, %w: tensor<1x1x1x64x20xbf16>, %i: tensor<1x8x48x48x20xbf16>) -> tensor<1x8x48x48x20xbf16> {
  %0 = conv3d.conv ins(%x, %w : tensor<1x8x48x48x64xbf16>, tensor<1x1x1x64x20xbf16>) outs(%i : tensor<1x8x48x48x20xbf16>) overwrite -> tensor<1x8x48x48x20xbf16>
  return %0 : tensor<1x8x48x48x20xbf16>
}

// Small M (1 x 8 x 16 x 16 = 2048 rows, 16 M tiles of 128 on one N tile):
// sm80 halves tile_m to 64 (and stops there).
// CPU-LABEL: func.func @small_m
// CPU: config = #conv3d.igemm_config<tile_m = 64, tile_n = 64, tile_k = 64> ->
// SM80-LABEL: func.func @small_m
// SM80: config = #conv3d.igemm_config<tile_m = 64, tile_n = 128, tile_k = 64, stages = 3, warps_m = 2, warps_n = 2> ->
// SM90-LABEL: func.func @small_m
// SM90: config = #conv3d.igemm_config<tile_m = 64, tile_n = 128, tile_k = 64, stages = 3, warps_m = 2, warps_n = 2, kernel = sm80> ->
func.func @small_m(%x: tensor<1x10x18x18x96xbf16>, %w: tensor<3x3x3x96x96xbf16>, %i: tensor<1x8x16x16x96xbf16>) -> tensor<1x8x16x16x96xbf16> {
  %0 = conv3d.conv ins(%x, %w : tensor<1x10x18x18x96xbf16>, tensor<3x3x3x96x96xbf16>) outs(%i : tensor<1x8x16x16x96xbf16>) overwrite -> tensor<1x8x16x16x96xbf16>
  return %0 : tensor<1x8x16x16x96xbf16>
}

// Tiny M = 6: the CPU tile_m is M rounded up to 4, tile_k is K = 8.
// CPU-LABEL: func.func @tiny_m
// CPU: config = #conv3d.igemm_config<tile_m = 8, tile_n = 32, tile_k = 8> ->
func.func @tiny_m(%x: tensor<1x1x2x3x8xf32>, %w: tensor<1x1x1x8x32xf32>, %i: tensor<1x1x2x3x32xf32>) -> tensor<1x1x2x3x32xf32> {
  %0 = conv3d.conv ins(%x, %w : tensor<1x1x2x3x8xf32>, tensor<1x1x1x8x32xf32>) outs(%i : tensor<1x1x2x3x32xf32>) overwrite -> tensor<1x1x2x3x32xf32>
  return %0 : tensor<1x1x2x3x32xf32>
}

// A config already on the op wins over the heuristic.
// CPU-LABEL: func.func @existing_config
// CPU: config = #conv3d.igemm_config<tile_m = 16, tile_n = 8, tile_k = 8, split_k = 2> ->
// SM80-LABEL: func.func @existing_config
// SM80: config = #conv3d.igemm_config<tile_m = 16, tile_n = 8, tile_k = 8, split_k = 2> ->
// SM90-LABEL: func.func @existing_config
// SM90: config = #conv3d.igemm_config<tile_m = 16, tile_n = 8, tile_k = 8, split_k = 2> ->
func.func @existing_config(%x: tensor<1x8x48x48x64xbf16>, %w: tensor<1x1x1x64x96xbf16>, %i: tensor<1x8x48x48x96xbf16>) -> tensor<1x8x48x48x96xbf16> {
  %0 = conv3d.conv ins(%x, %w : tensor<1x8x48x48x64xbf16>, tensor<1x1x1x64x96xbf16>) outs(%i : tensor<1x8x48x48x96xbf16>) overwrite config = #conv3d.igemm_config<tile_m = 16, tile_n = 8, tile_k = 8, split_k = 2> -> tensor<1x8x48x48x96xbf16>
  return %0 : tensor<1x8x48x48x96xbf16>
}

// With NVFP4 input quantization, tile_k is rounded up to the block size:
// the CPU's K = 16 becomes 32 (block 32), sm80's 32 becomes 64 (block 64).
// CPU-LABEL: func.func @quant_block32
// CPU: quantize(#conv3d.nvfp4<block_size = 32>, %{{.*}}) {{.*}} config = #conv3d.igemm_config<tile_m = 64, tile_n = 64, tile_k = 32> ->
// SM80-LABEL: func.func @quant_block32
// SM80: config = #conv3d.igemm_config<tile_m = 64, tile_n = 64, tile_k = 32, stages = 4, warps_m = 2, warps_n = 2> ->
func.func @quant_block32(%x: tensor<1x8x48x48x16xbf16>, %w: tensor<1x1x1x16x64xbf16>, %amax: f32, %i: tensor<1x8x48x48x64xbf16>) -> tensor<1x8x48x48x64xbf16> {
  %0 = conv3d.conv ins(%x, %w : tensor<1x8x48x48x16xbf16>, tensor<1x1x1x16x64xbf16>) quantize(#conv3d.nvfp4<block_size = 32>, %amax) outs(%i : tensor<1x8x48x48x64xbf16>) overwrite -> tensor<1x8x48x48x64xbf16>
  return %0 : tensor<1x8x48x48x64xbf16>
}

// CPU-LABEL: func.func @quant_block64
// CPU: config = #conv3d.igemm_config<tile_m = 64, tile_n = 64, tile_k = 64> ->
// SM80-LABEL: func.func @quant_block64
// SM80: config = #conv3d.igemm_config<tile_m = 64, tile_n = 64, tile_k = 64, stages = 4, warps_m = 2, warps_n = 2> ->
// SM90-LABEL: func.func @quant_block64
// SM90: config = #conv3d.igemm_config<tile_m = 64, tile_n = 64, tile_k = 64, stages = 4, warps_m = 2, warps_n = 2, kernel = sm80> ->
func.func @quant_block64(%x: tensor<1x8x48x48x64xbf16>, %w: tensor<1x1x1x64x64xbf16>, %amax: f32, %i: tensor<1x8x48x48x64xbf16>) -> tensor<1x8x48x48x64xbf16> {
  %0 = conv3d.conv ins(%x, %w : tensor<1x8x48x48x64xbf16>, tensor<1x1x1x64x64xbf16>) quantize(#conv3d.nvfp4<block_size = 64>, %amax) outs(%i : tensor<1x8x48x48x64xbf16>) overwrite -> tensor<1x8x48x48x64xbf16>
  return %0 : tensor<1x8x48x48x64xbf16>
}

// Dynamic shapes get no config (the heuristic needs M).
// CPU-LABEL: func.func @dynamic_batch
// CPU-NOT: config
// CPU: return
func.func @dynamic_batch(%x: tensor<?x8x8x8x16xf32>, %w: tensor<1x1x1x16x16xf32>, %i: tensor<?x8x8x8x16xf32>) -> tensor<?x8x8x8x16xf32> {
  %0 = conv3d.conv ins(%x, %w : tensor<?x8x8x8x16xf32>, tensor<1x1x1x16x16xf32>) outs(%i : tensor<?x8x8x8x16xf32>) overwrite -> tensor<?x8x8x8x16xf32>
  return %0 : tensor<?x8x8x8x16xf32>
}

// Memref convolutions get a config too.
// CPU-LABEL: func.func @memref_conv
// CPU: conv3d.conv {{.*}} config = #conv3d.igemm_config<tile_m = 64, tile_n = 16, tile_k = 16>{{$}}
func.func @memref_conv(%x: memref<1x8x8x8x16xf32>, %w: memref<1x1x1x16x16xf32>, %i: memref<1x8x8x8x16xf32>) {
  conv3d.conv ins(%x, %w : memref<1x8x8x8x16xf32>, memref<1x1x1x16x16xf32>) outs(%i : memref<1x8x8x8x16xf32>) overwrite
  return
}
