// Errors of conv3d-lower-to-sm100, one case per diagnostic (and per reason
// of the "cannot lower ... to the sm100 kernel" one that is the sm100
// kernel's own: SM100KernelPlan::build, the schedule, the TMA alignment and
// the 31-bit tile indices; getTmaKernelProblem's reasons are shared with
// sm90 and each tested in lower-to-sm90-invalid.mlir, here the ones whose
// wording names the target). Grids that conv3d-implicit-gemm never produces
// are written out and lowered directly; convolutions go through
// conv3d-implicit-gemm=target=sm100 in the same run. Output:
// lower-to-sm100.mlir.
//
// Not reachable from conv3d-opt, so not here: "conv3d-lower-to-sm100 needs
// an enclosing module", and getTmaKernelProblem's "tcgen05.mma kind::f16
// takes bf16 or f16 operands here" (f32 is refused first by the GPU operand
// check, below; select-config-sm100.mlir shows it).
//
// RUN: split-file %s %t
// RUN: conv3d-opt %t/grids.mlir -split-input-file -conv3d-lower-to-sm100 -verify-diagnostics
// RUN: conv3d-opt %t/convs.mlir -split-input-file -conv3d-implicit-gemm=target=sm100 -conv3d-lower-to-sm100 -verify-diagnostics

//--- grids.mlir

// "not an implicit-GEMM grid loop": a grid without tile ops.
func.func @grid_without_tile_ops() {
  // expected-error @below {{conv3d-lower-to-sm100: not an implicit-GEMM grid loop produced by conv3d-implicit-gemm}}
  scf.forall (%tm, %tn) in (1, 1) {
  } {conv3d.igemm_config = #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 4, warps_m = 4, kernel = sm100>}
  return
}

// -----

// "cannot lower": split_k with Q slices outermost (conv3d-implicit-gemm
// never builds it).
func.func @split_k_qslice_outer(%x: memref<1x4x8x8x64xbf16>, %w: memref<64x3x1x1x64xbf16>, %o: memref<2x1x2x8x8x64xf32>) {
  %c0 = arith.constant 0 : index
  %c192 = arith.constant 192 : index
  // expected-error @below {{cannot lower #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 4, warps_m = 4, k_order = qslice_outer, split_k = 2, kernel = sm100> to the sm100 kernel: split_k > 1 needs k_order = taps_outer}}
  scf.forall (%tm, %tn, %s) in (1, 1, 2) {
    %a = memref.alloc() : memref<128x64xbf16>
    %b = memref.alloc() : memref<64x64xbf16>
    %acc = memref.alloc() : memref<128x64xf32>
    conv3d.load_im2col_tile %x[%c0, %c0] limit %c192 into %a window = [3, 1, 1] : memref<1x4x8x8x64xbf16>, memref<128x64xbf16>
    conv3d.load_filter_tile %w[%c0, %c0] limit %c192 into %b filter_layout = fqrsc : memref<64x3x1x1x64xbf16>, memref<64x64xbf16>
    conv3d.tile_mma %a, %b, %acc : memref<128x64xbf16>, memref<64x64xbf16>, memref<128x64xf32>
    conv3d.store_output_tile %acc into %o[%c0, %c0] split(%s) mode = partial : memref<128x64xf32>, memref<2x1x2x8x8x64xf32>
  } {conv3d.igemm_config = #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 4, warps_m = 4, k_order = qslice_outer, split_k = 2, kernel = sm100>}
  return
}

//--- convs.mlir

// A config for the sm90 kernel.
func.func @sm90_kernel(%x: memref<1x4x8x8x64xbf16>, %w: memref<64x3x3x3x64xbf16>, %o: memref<1x4x8x8x64xbf16>) {
  // expected-error @below {{conv3d-lower-to-sm100: #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 4, warps_m = 8, kernel = sm90> is for the sm90 kernel}}
  conv3d.conv ins(%x, %w : memref<1x4x8x8x64xbf16>, memref<64x3x3x3x64xbf16>) outs(%o : memref<1x4x8x8x64xbf16>) overwrite padding = [1, 1, 1, 1, 1, 1] filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 4, warps_m = 8, kernel = sm90>
  return
}

// -----

// f32 convolutions have no tensor-core path here.
func.func @f32_input(%x: memref<1x4x8x8x64xf32>, %w: memref<64x1x1x1x64xf32>, %o: memref<1x4x8x8x64xf32>) {
  // expected-error @below {{sm100 computes bf16 and f16 convolutions on the tensor cores; 'f32' inputs run on the CPU target}}
  conv3d.conv ins(%x, %w : memref<1x4x8x8x64xf32>, memref<64x1x1x1x64xf32>) outs(%o : memref<1x4x8x8x64xf32>) overwrite filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 4, warps_m = 4, kernel = sm100>
  return
}

// -----

// "cannot lower": NVFP4 quantization in the tile load.
func.func @quantize_in_tile(%x: memref<1x4x8x8x64xbf16>, %w: memref<64x1x1x1x64xbf16>, %amax: f32, %o: memref<1x4x8x8x64xbf16>) {
  // expected-error @below {{cannot lower #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 4, warps_m = 4, kernel = sm100> to the sm100 kernel: NVFP4 quantization in the tile load runs in the sm80 kernel (the prepass placement feeds sm100)}}
  conv3d.conv ins(%x, %w : memref<1x4x8x8x64xbf16>, memref<64x1x1x1x64xbf16>) quantize(#conv3d.nvfp4<block_size = 16>, %amax) outs(%o : memref<1x4x8x8x64xbf16>) overwrite filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 4, warps_m = 4, kernel = sm100>
  return
}

// -----

// "cannot lower": the input starts 4 elements (8 bytes) into its buffer;
// TMA reads from 16-byte-aligned addresses.
func.func @misaligned_input(%x: memref<1x4x8x8x64xbf16, strided<[16384, 4096, 512, 64, 1], offset: 4>>, %w: memref<64x1x1x1x64xbf16>, %o: memref<1x4x8x8x64xbf16>) {
  // expected-error @below {{cannot lower #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 4, warps_m = 4, kernel = sm100> to the sm100 kernel: TMA needs the input's and the filter's offsets and strides in multiples of 16 bytes}}
  conv3d.conv ins(%x, %w : memref<1x4x8x8x64xbf16, strided<[16384, 4096, 512, 64, 1], offset: 4>>, memref<64x1x1x1x64xbf16>) outs(%o : memref<1x4x8x8x64xbf16>) overwrite filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 4, warps_m = 4, kernel = sm100>
  return
}

// -----

// "cannot lower": tile_k must be one 64-channel TMA row.
func.func @tile_k_32(%x: memref<1x4x8x8x64xbf16>, %w: memref<64x1x1x1x64xbf16>, %o: memref<1x4x8x8x64xbf16>) {
  // expected-error @below {{cannot lower #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 32, stages = 4, warps_m = 4, kernel = sm100> to the sm100 kernel: tile_k must be 64 (one 128-byte TMA row of channels), got 32}}
  conv3d.conv ins(%x, %w : memref<1x4x8x8x64xbf16>, memref<64x1x1x1x64xbf16>) outs(%o : memref<1x4x8x8x64xbf16>) overwrite filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 32, stages = 4, warps_m = 4, kernel = sm100>
  return
}

// -----

// "cannot lower": the epilogue is four warps (one per 32 TMEM lanes).
func.func @warps_m_8(%x: memref<1x4x8x8x64xbf16>, %w: memref<64x1x1x1x64xbf16>, %o: memref<1x4x8x8x64xbf16>) {
  // expected-error @below {{cannot lower #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 4, warps_m = 8, kernel = sm100> to the sm100 kernel: the warp layout must be 4x1 (the four epilogue warps, one per 32 TMEM lanes), got 8x1}}
  conv3d.conv ins(%x, %w : memref<1x4x8x8x64xbf16>, memref<64x1x1x1x64xbf16>) outs(%o : memref<1x4x8x8x64xbf16>) overwrite filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 4, warps_m = 8, kernel = sm100>
  return
}

// -----

// "cannot lower": a cta_group::1 MMA of 128 rows (a TMEM lane each) or a
// cta_group::2 one of 256 over a CTA pair.
func.func @tile_m_64(%x: memref<1x4x8x8x64xbf16>, %w: memref<64x1x1x1x64xbf16>, %o: memref<1x4x8x8x64xbf16>) {
  // expected-error @below {{cannot lower #conv3d.igemm_config<tile_m = 64, tile_n = 64, tile_k = 64, stages = 4, warps_m = 4, kernel = sm100> to the sm100 kernel: tile_m must be 128 (one cta_group::1 tcgen05.mma, a row per TMEM lane) or 256 (cta_group::2 over a pair of CTAs), got 64}}
  conv3d.conv ins(%x, %w : memref<1x4x8x8x64xbf16>, memref<64x1x1x1x64xbf16>) outs(%o : memref<1x4x8x8x64xbf16>) overwrite filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 64, tile_n = 64, tile_k = 64, stages = 4, warps_m = 4, kernel = sm100>
  return
}

// -----

// "cannot lower": N = 24 is not an M = 128 tcgen05.mma shape.
func.func @tile_n_24(%x: memref<1x4x8x8x64xbf16>, %w: memref<24x1x1x1x64xbf16>, %o: memref<1x4x8x8x24xbf16>) {
  // expected-error @below {{cannot lower #conv3d.igemm_config<tile_m = 128, tile_n = 24, tile_k = 64, stages = 4, warps_m = 4, kernel = sm100> to the sm100 kernel: tile_n = 24: N = 24 is not a tcgen05.mma shape for M = 128 (a multiple of 16 from 16 to 256)}}
  conv3d.conv ins(%x, %w : memref<1x4x8x8x64xbf16>, memref<24x1x1x1x64xbf16>) outs(%o : memref<1x4x8x8x24xbf16>) overwrite filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 128, tile_n = 24, tile_k = 64, stages = 4, warps_m = 4, kernel = sm100>
  return
}

// -----

// "cannot lower": one stage (the attribute's default) is no ring.
func.func @one_stage(%x: memref<1x4x8x8x64xbf16>, %w: memref<64x1x1x1x64xbf16>, %o: memref<1x4x8x8x64xbf16>) {
  // expected-error @below {{cannot lower #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, warps_m = 4, kernel = sm100> to the sm100 kernel: needs at least 2 stages, got 1}}
  conv3d.conv ins(%x, %w : memref<1x4x8x8x64xbf16>, memref<64x1x1x1x64xbf16>) outs(%o : memref<1x4x8x8x64xbf16>) overwrite filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, warps_m = 4, kernel = sm100>
  return
}

// -----

// "cannot lower": 5 stages of 128x64 and 256x64 bf16 tiles are 245760
// bytes before the staging (its narrowest chunks, 8 columns: 128 x 12 x 4
// = 6144 bytes), 14 mbarriers, the TMEM slot and the alignment slack.
func.func @too_much_shared_memory(%x: memref<1x4x8x8x64xbf16>, %w: memref<256x1x1x1x64xbf16>, %o: memref<1x4x8x8x256xbf16>) {
  // expected-error @below {{cannot lower #conv3d.igemm_config<tile_m = 128, tile_n = 256, tile_k = 64, stages = 5, warps_m = 4, kernel = sm100> to the sm100 kernel: 5 stages of 128x64 and 256x64 tiles (245760 bytes) and the epilogue's staging (6144 bytes) need 253048 bytes of shared memory; a block has 232448}}
  conv3d.conv ins(%x, %w : memref<1x4x8x8x64xbf16>, memref<256x1x1x1x64xbf16>) outs(%o : memref<1x4x8x8x256xbf16>) overwrite filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 128, tile_n = 256, tile_k = 64, stages = 5, warps_m = 4, kernel = sm100>
  return
}

// -----

// "cannot lower": ping-pong is an sm90 schedule.
func.func @pingpong(%x: memref<1x4x8x8x64xbf16>, %w: memref<64x1x1x1x64xbf16>, %o: memref<1x4x8x8x64xbf16>) {
  // expected-error @below {{cannot lower #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 4, warps_m = 4, kernel = sm100, schedule = pingpong> to the sm100 kernel: schedule = pingpong is an sm90 schedule (the sm100 kernel overlaps epilogues through double-buffered TMEM accumulators)}}
  conv3d.conv ins(%x, %w : memref<1x4x8x8x64xbf16>, memref<64x1x1x1x64xbf16>) outs(%o : memref<1x4x8x8x64xbf16>) overwrite filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 4, warps_m = 4, kernel = sm100, schedule = pingpong>
  return
}

// -----

// The output's strides must be static (the epilogue addresses it as a flat
// view).
func.func @output_dynamic_strides(%x: memref<1x4x8x8x64xbf16>, %w: memref<64x1x1x1x64xbf16>, %o: memref<1x4x8x8x64xbf16, strided<[?, ?, ?, ?, 1]>>) {
  // expected-error @below {{sm100 needs operands with static strides}}
  conv3d.conv ins(%x, %w : memref<1x4x8x8x64xbf16>, memref<64x1x1x1x64xbf16>) outs(%o : memref<1x4x8x8x64xbf16, strided<[?, ?, ?, ?, 1]>>) overwrite filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 4, warps_m = 4, kernel = sm100>
  return
}

// -----

// "cannot lower": M = 2^31 output rows do not fit the kernel's i32 rows.
func.func @rows_too_many(%x: memref<1x2048x1024x1024x64xbf16>, %w: memref<64x1x1x1x64xbf16>, %o: memref<1x2048x1024x1024x64xbf16>) {
  // expected-error @below {{cannot lower #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 4, warps_m = 4, kernel = sm100> to the sm100 kernel: 16777216 tiles or M = 2147483648 do not fit 31 bits}}
  conv3d.conv ins(%x, %w : memref<1x2048x1024x1024x64xbf16>, memref<64x1x1x1x64xbf16>) outs(%o : memref<1x2048x1024x1024x64xbf16>) overwrite filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 4, warps_m = 4, kernel = sm100>
  return
}

// -----

// "cannot lower": cluster_m is an sm90 option.
func.func @cluster_m(%x: memref<1x4x8x8x64xbf16>, %w: memref<64x1x1x1x64xbf16>, %o: memref<1x4x8x8x64xbf16>) {
  // expected-error @below {{cannot lower #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 4, warps_m = 4, kernel = sm100, cluster_m = 2> to the sm100 kernel: cluster_m is an sm90 option (the sm100 kernel pairs blocks through tile_m = 256, cta_group::2)}}
  conv3d.conv ins(%x, %w : memref<1x4x8x8x64xbf16>, memref<64x1x1x1x64xbf16>) outs(%o : memref<1x4x8x8x64xbf16>) overwrite filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 4, warps_m = 4, kernel = sm100, cluster_m = 2>
  return
}

// -----

// "cannot lower": mainloop = halo is an sm90 option.
func.func @mainloop_halo(%x: memref<1x4x8x8x64xbf16>, %w: memref<64x1x1x1x64xbf16>, %o: memref<1x4x8x8x64xbf16>) {
  // expected-error @below {{cannot lower #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 4, warps_m = 4, kernel = sm100, mainloop = halo> to the sm100 kernel: mainloop = halo is an sm90 option}}
  conv3d.conv ins(%x, %w : memref<1x4x8x8x64xbf16>, memref<64x1x1x1x64xbf16>) outs(%o : memref<1x4x8x8x64xbf16>) overwrite filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 4, warps_m = 4, kernel = sm100, mainloop = halo>
  return
}
