// Errors of the sm90 halo mainloop (mainloop = halo), one case per
// diagnostic: the operand checks of getHaloKernelProblem (made where the
// configuration is chosen) and the refusals of SM90KernelPlan::build
// (made by conv3d-lower-to-sm90). Output: sm90-halo-emit.test.
//
// RUN: conv3d-opt %s -split-input-file -conv3d-implicit-gemm=target=sm90 -conv3d-lower-to-sm90 -verify-diagnostics

// Output row i reads patch row i + r * dil_h: unit strides in H and W.
func.func @stride_w(%x: memref<1x4x8x130x64xbf16>, %w: memref<64x3x3x3x64xbf16>, %o: memref<1x4x8x65x64xbf16>) {
  // expected-error @below {{the halo mainloop needs unit strides in H and W}}
  conv3d.conv ins(%x, %w : memref<1x4x8x130x64xbf16>, memref<64x3x3x3x64xbf16>) outs(%o : memref<1x4x8x65x64xbf16>) overwrite strides = [1, 1, 2] padding = [1, 1, 1, 1, 1, 1] filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 256, tile_n = 64, tile_k = 64, stages = 4, warps_m = 8, kernel = sm90, mainloop = halo>
  return
}

// -----

func.func @narrow_channels(%x: memref<1x4x8x64x24xbf16>, %w: memref<64x3x3x3x24xbf16>, %o: memref<1x4x8x64x64xbf16>) {
  // expected-error @below {{C = 24 is not a multiple of 8 from 32 up (the halo mainloop's channel blocks)}}
  conv3d.conv ins(%x, %w : memref<1x4x8x64x24xbf16>, memref<64x3x3x3x24xbf16>) outs(%o : memref<1x4x8x64x64xbf16>) overwrite padding = [1, 1, 1, 1, 1, 1] filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 256, tile_n = 64, tile_k = 64, stages = 4, warps_m = 8, kernel = sm90, mainloop = halo>
  return
}

// -----

func.func @quantize_in_tile(%x: memref<1x4x8x64x64xbf16>, %w: memref<64x3x3x3x64xbf16>, %amax: f32, %o: memref<1x4x8x64x64xbf16>) {
  // expected-error @below {{the halo mainloop does not quantize in the tile}}
  conv3d.conv ins(%x, %w : memref<1x4x8x64x64xbf16>, memref<64x3x3x3x64xbf16>) quantize(#conv3d.nvfp4<block_size = 16>, %amax) outs(%o : memref<1x4x8x64x64xbf16>) overwrite padding = [1, 1, 1, 1, 1, 1] filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 256, tile_n = 64, tile_k = 64, stages = 4, warps_m = 8, kernel = sm90, mainloop = halo>
  return
}

// -----

func.func @pingpong(%x: memref<1x4x8x64x64xbf16>, %w: memref<64x3x3x3x64xbf16>, %o: memref<1x4x8x64x64xbf16>) {
  // expected-error @below {{mainloop = halo runs the cooperative schedule with k_order = taps_outer, split_k = 1 and cluster_m = 1}}
  conv3d.conv ins(%x, %w : memref<1x4x8x64x64xbf16>, memref<64x3x3x3x64xbf16>) outs(%o : memref<1x4x8x64x64xbf16>) overwrite padding = [1, 1, 1, 1, 1, 1] filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 4, warps_m = 4, kernel = sm90, schedule = pingpong, mainloop = halo>
  return
}

// -----

func.func @split_k(%x: memref<1x4x8x64x64xbf16>, %w: memref<64x3x3x3x64xbf16>, %o: memref<1x4x8x64x64xf32>) {
  // expected-error @below {{mainloop = halo runs the cooperative schedule with k_order = taps_outer, split_k = 1 and cluster_m = 1}}
  conv3d.conv ins(%x, %w : memref<1x4x8x64x64xbf16>, memref<64x3x3x3x64xbf16>) outs(%o : memref<1x4x8x64x64xf32>) overwrite padding = [1, 1, 1, 1, 1, 1] filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 256, tile_n = 64, tile_k = 64, stages = 4, warps_m = 8, split_k = 2, kernel = sm90, mainloop = halo>
  return
}

// -----

func.func @cluster(%x: memref<1x4x8x64x64xbf16>, %w: memref<64x3x3x3x64xbf16>, %o: memref<1x4x8x64x64xbf16>) {
  // expected-error @below {{mainloop = halo runs the cooperative schedule with k_order = taps_outer, split_k = 1 and cluster_m = 1}}
  conv3d.conv ins(%x, %w : memref<1x4x8x64x64xbf16>, memref<64x3x3x3x64xbf16>) outs(%o : memref<1x4x8x64x64xbf16>) overwrite padding = [1, 1, 1, 1, 1, 1] filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 256, tile_n = 64, tile_k = 64, stages = 4, warps_m = 8, kernel = sm90, cluster_m = 2, mainloop = halo>
  return
}

// -----

// Accumulating onto the output reads it: no TMA store.
func.func @accumulate(%x: memref<1x4x8x64x64xbf16>, %w: memref<64x3x3x3x64xbf16>, %o: memref<1x4x8x64x64xbf16>) {
  // expected-error @below {{mainloop = halo stores its tiles with TMA: it needs an overwritten dense 16-bit output without residual}}
  conv3d.conv ins(%x, %w : memref<1x4x8x64x64xbf16>, memref<64x3x3x3x64xbf16>) outs(%o : memref<1x4x8x64x64xbf16>) padding = [1, 1, 1, 1, 1, 1] filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 256, tile_n = 64, tile_k = 64, stages = 4, warps_m = 8, kernel = sm90, mainloop = halo>
  return
}

// -----

// 64 + 2 * 100 columns per patch row.
func.func @patch_too_wide(%x: memref<1x4x8x300x64xbf16>, %w: memref<64x3x3x3x64xbf16>, %o: memref<1x4x8x100x64xbf16>) {
  // expected-error @below {{mainloop = halo reads a patch of 6x264 pixels per tile; a TMA box has at most 256 per dimension}}
  conv3d.conv ins(%x, %w : memref<1x4x8x300x64xbf16>, memref<64x3x3x3x64xbf16>) outs(%o : memref<1x4x8x100x64xbf16>) overwrite dilations = [1, 1, 100] padding = [1, 1, 1, 1, 0, 0] filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 256, tile_n = 64, tile_k = 64, stages = 4, warps_m = 8, kernel = sm90, mainloop = halo>
  return
}

// -----

func.func @tile_n_40(%x: memref<1x4x8x64x64xbf16>, %w: memref<40x3x3x3x64xbf16>, %o: memref<1x4x8x64x40xbf16>) {
  // expected-error @below {{mainloop = halo stores whole boxes of 32 or 64 columns: tile_n = 40 must be a multiple of 32}}
  conv3d.conv ins(%x, %w : memref<1x4x8x64x64xbf16>, memref<40x3x3x3x64xbf16>) outs(%o : memref<1x4x8x64x40xbf16>) overwrite padding = [1, 1, 1, 1, 1, 1] filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 256, tile_n = 40, tile_k = 64, stages = 4, warps_m = 8, kernel = sm90, mainloop = halo>
  return
}

// -----

// Two 55 KiB patches, 8 filter stages of 32 KiB and a 128 KiB staging tile
// do not fit: one patch would deadlock, so the plan refuses.
func.func @no_room_for_two_patches(%x: memref<1x4x8x64x64xbf16>, %w: memref<256x3x3x3x64xbf16>, %o: memref<1x4x8x64x256xbf16>) {
  // expected-error @below {{mainloop = halo needs two patches of 55296 bytes beside 8 filter stages of 32768 and a staging tile of 131072: 504992 bytes of shared memory; an H100 block has 232448 (use fewer stages)}}
  conv3d.conv ins(%x, %w : memref<1x4x8x64x64xbf16>, memref<256x3x3x3x64xbf16>) outs(%o : memref<1x4x8x64x256xbf16>) overwrite padding = [1, 1, 1, 1, 1, 1] filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 256, tile_n = 256, tile_k = 64, stages = 8, warps_m = 8, kernel = sm90, mainloop = halo>
  return
}
