// conv3d-select-config=target=sm90: where the heuristic picks the halo
// mainloop (SM90HaloFamily::select): F up to 96 or C under 128, a window
// that reuses rows (R * S > 1), unit strides in H and W, C from 32 up, an
// overwritten 16-bit output without residual, at least 48 tiles of 256 rows
// and output rows filling at least half of the 64-column tile rows. Its
// config: tile_m = 256, tile_n = F rounded up to 32 up to 128 (else 128, 96
// or 64, the widest dividing F), and the deepest filter ring up to 8 that
// leaves room for two patches (SM90KernelPlan). Everything else keeps the
// im2col mainloop (or the sm80 fallback), as does a forced fused Q-slice
// strategy (qslice=fused: K slice by slice, which the halo mainloop cannot
// run).
//
// RUN: conv3d-opt %s -conv3d-select-config="target=sm90 selection=heuristic" -verify-diagnostics | FileCheck %s
// RUN: conv3d-opt %s -conv3d-select-config="target=sm90 selection=heuristic qslice=fused" 2>/dev/null | FileCheck %s --check-prefix=FUSED --implicit-check-not="mainloop = halo"
// FUSED-LABEL: func.func @video_f64
// FUSED: config = #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 6, warps_m = 8, kernel = sm90> ->

// F = 64, C = 64: 8 x 16 x 14 x 1 = 1792 tiles of 4 rows x 64 columns.
// Patches of 6 x 72 pixels x 128 bytes (55296 B), 8 filter stages of
// 64 x 128 B, a 256 x 64 x 2 B staging tile: two patches fit.
// CHECK-LABEL: func.func @video_f64
// CHECK: config = #conv3d.igemm_config<tile_m = 256, tile_n = 64, tile_k = 64, stages = 8, warps_m = 8, kernel = sm90, mainloop = halo> ->
func.func @video_f64(%x: tensor<8x16x56x56x64xbf16>, %w: tensor<64x3x3x3x64xbf16>, %i: tensor<8x16x56x56x64xbf16>) -> tensor<8x16x56x56x64xbf16> {
  %0 = conv3d.conv ins(%x, %w : tensor<8x16x56x56x64xbf16>, tensor<64x3x3x3x64xbf16>) outs(%i : tensor<8x16x56x56x64xbf16>) overwrite padding = [1, 1, 1, 1, 1, 1] filter_layout = fqrsc -> tensor<8x16x56x56x64xbf16>
  return %0 : tensor<8x16x56x56x64xbf16>
}

// C = F = 96 (channel blocks of 32), the causal WAN decoder layer.
// CHECK-LABEL: func.func @wan_f96
// CHECK: config = #conv3d.igemm_config<tile_m = 256, tile_n = 96, tile_k = 64, stages = 8, warps_m = 8, kernel = sm90, mainloop = halo> ->
func.func @wan_f96(%x: tensor<1x6x120x208x96xbf16>, %w: tensor<96x3x3x3x96xbf16>, %i: tensor<1x4x120x208x96xbf16>) -> tensor<1x4x120x208x96xbf16> {
  %0 = conv3d.conv ins(%x, %w : tensor<1x6x120x208x96xbf16>, tensor<96x3x3x3x96xbf16>) outs(%i : tensor<1x4x120x208x96xbf16>) overwrite padding = [0, 0, 1, 1, 1, 1] filter_layout = fqrsc -> tensor<1x4x120x208x96xbf16>
  return %0 : tensor<1x4x120x208x96xbf16>
}

// C = 32 (under one 64-channel im2col box): the halo mainloop takes it, so
// no sm80 fallback.
// CHECK-LABEL: func.func @unet_c32
// CHECK: config = #conv3d.igemm_config<tile_m = 256, tile_n = 32, tile_k = 64, stages = 8, warps_m = 8, kernel = sm90, mainloop = halo> ->
func.func @unet_c32(%x: tensor<1x16x64x128x32xf16>, %w: tensor<32x3x3x3x32xf16>, %i: tensor<1x16x64x128x32xf16>) -> tensor<1x16x64x128x32xf16> {
  %0 = conv3d.conv ins(%x, %w : tensor<1x16x64x128x32xf16>, tensor<32x3x3x3x32xf16>) outs(%i : tensor<1x16x64x128x32xf16>) overwrite padding = [1, 1, 1, 1, 1, 1] filter_layout = fqrsc -> tensor<1x16x64x128x32xf16>
  return %0 : tensor<1x16x64x128x32xf16>
}

// C = 96 under 128 channels: the halo mainloop at F = 288 too, in three
// N tiles of 96 columns (128-column tiles would pad F to 384).
// CHECK-LABEL: func.func @c96_f288
// CHECK: config = #conv3d.igemm_config<tile_m = 256, tile_n = 96, tile_k = 64, stages = 8, warps_m = 8, kernel = sm90, mainloop = halo> ->
func.func @c96_f288(%x: tensor<2x8x60x60x96xbf16>, %w: tensor<288x3x3x3x96xbf16>, %i: tensor<2x8x60x60x288xbf16>) -> tensor<2x8x60x60x288xbf16> {
  %0 = conv3d.conv ins(%x, %w : tensor<2x8x60x60x96xbf16>, tensor<288x3x3x3x96xbf16>) outs(%i : tensor<2x8x60x60x288xbf16>) overwrite padding = [1, 1, 1, 1, 1, 1] filter_layout = fqrsc -> tensor<2x8x60x60x288xbf16>
  return %0 : tensor<2x8x60x60x288xbf16>
}

// C = F = 128: the im2col mainloop.
// CHECK-LABEL: func.func @c128_f128
// CHECK-NOT: mainloop = halo
// CHECK: return
func.func @c128_f128(%x: tensor<2x8x60x60x128xbf16>, %w: tensor<128x3x3x3x128xbf16>, %i: tensor<2x8x60x60x128xbf16>) -> tensor<2x8x60x60x128xbf16> {
  %0 = conv3d.conv ins(%x, %w : tensor<2x8x60x60x128xbf16>, tensor<128x3x3x3x128xbf16>) outs(%i : tensor<2x8x60x60x128xbf16>) overwrite padding = [1, 1, 1, 1, 1, 1] filter_layout = fqrsc -> tensor<2x8x60x60x128xbf16>
  return %0 : tensor<2x8x60x60x128xbf16>
}

// Wo = 28 fills 44% of a 64-column tile row: the im2col mainloop, however
// many tiles (8 x 16 x 7 = 896).
// CHECK-LABEL: func.func @narrow_w
// CHECK-NOT: mainloop = halo
// CHECK: return
func.func @narrow_w(%x: tensor<8x16x28x28x64xbf16>, %w: tensor<64x3x3x3x64xbf16>, %i: tensor<8x16x28x28x64xbf16>) -> tensor<8x16x28x28x64xbf16> {
  %0 = conv3d.conv ins(%x, %w : tensor<8x16x28x28x64xbf16>, tensor<64x3x3x3x64xbf16>) outs(%i : tensor<8x16x28x28x64xbf16>) overwrite padding = [1, 1, 1, 1, 1, 1] filter_layout = fqrsc -> tensor<8x16x28x28x64xbf16>
  return %0 : tensor<8x16x28x28x64xbf16>
}

// F = 192: the im2col mainloop.
// CHECK-LABEL: func.func @f192
// CHECK-NOT: mainloop = halo
// CHECK: return
func.func @f192(%x: tensor<1x6x120x208x192xbf16>, %w: tensor<192x3x3x3x192xbf16>, %i: tensor<1x4x120x208x192xbf16>) -> tensor<1x4x120x208x192xbf16> {
  %0 = conv3d.conv ins(%x, %w : tensor<1x6x120x208x192xbf16>, tensor<192x3x3x3x192xbf16>) outs(%i : tensor<1x4x120x208x192xbf16>) overwrite padding = [0, 0, 1, 1, 1, 1] filter_layout = fqrsc -> tensor<1x4x120x208x192xbf16>
  return %0 : tensor<1x4x120x208x192xbf16>
}

// Stride 2 in H and W.
// CHECK-LABEL: func.func @strided
// CHECK-NOT: mainloop = halo
// CHECK: return
func.func @strided(%x: tensor<8x16x112x112x64xbf16>, %w: tensor<64x3x3x3x64xbf16>, %i: tensor<8x16x56x56x64xbf16>) -> tensor<8x16x56x56x64xbf16> {
  %0 = conv3d.conv ins(%x, %w : tensor<8x16x112x112x64xbf16>, tensor<64x3x3x3x64xbf16>) outs(%i : tensor<8x16x56x56x64xbf16>) overwrite strides = [1, 2, 2] padding = [1, 1, 1, 1, 1, 1] filter_layout = fqrsc -> tensor<8x16x56x56x64xbf16>
  return %0 : tensor<8x16x56x56x64xbf16>
}

// A residual (the TMA-store epilogue does not read one).
// CHECK-LABEL: func.func @residual
// CHECK-NOT: mainloop = halo
// CHECK: return
func.func @residual(%x: tensor<8x16x56x56x64xbf16>, %w: tensor<64x3x3x3x64xbf16>, %r: tensor<8x16x56x56x64xbf16>, %i: tensor<8x16x56x56x64xbf16>) -> tensor<8x16x56x56x64xbf16> {
  %0 = conv3d.conv ins(%x, %w : tensor<8x16x56x56x64xbf16>, tensor<64x3x3x3x64xbf16>) residual(%r : tensor<8x16x56x56x64xbf16>) outs(%i : tensor<8x16x56x56x64xbf16>) overwrite padding = [1, 1, 1, 1, 1, 1] filter_layout = fqrsc -> tensor<8x16x56x56x64xbf16>
  return %0 : tensor<8x16x56x56x64xbf16>
}

// A 1x1 window in H and W reuses no rows.
// CHECK-LABEL: func.func @temporal_only
// CHECK-NOT: mainloop = halo
// CHECK: return
func.func @temporal_only(%x: tensor<8x16x56x56x64xbf16>, %w: tensor<64x3x1x1x64xbf16>, %i: tensor<8x14x56x56x64xbf16>) -> tensor<8x14x56x56x64xbf16> {
  %0 = conv3d.conv ins(%x, %w : tensor<8x16x56x56x64xbf16>, tensor<64x3x1x1x64xbf16>) outs(%i : tensor<8x14x56x56x64xbf16>) overwrite filter_layout = fqrsc -> tensor<8x14x56x56x64xbf16>
  return %0 : tensor<8x14x56x56x64xbf16>
}

// Too few tiles (1 x 4 x 2 x 1 = 8; Wo = 8 fills an eighth of a tile row).
// CHECK-LABEL: func.func @small
// CHECK-NOT: mainloop = halo
// CHECK: return
func.func @small(%x: tensor<1x4x8x8x64xbf16>, %w: tensor<64x3x3x3x64xbf16>, %i: tensor<1x4x8x8x64xbf16>) -> tensor<1x4x8x8x64xbf16> {
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x8x8x64xbf16>, tensor<64x3x3x3x64xbf16>) outs(%i : tensor<1x4x8x8x64xbf16>) overwrite padding = [1, 1, 1, 1, 1, 1] filter_layout = fqrsc -> tensor<1x4x8x8x64xbf16>
  return %0 : tensor<1x4x8x8x64xbf16>
}
