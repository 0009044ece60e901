// Errors of conv3d-lower-to-sm80, one case per diagnostic (and per reason of
// the "cannot lower ... to sm80" one), plus the error of
// conv3d-implicit-gemm=target=sm80 that IR can reach. Grids that
// conv3d-implicit-gemm never produces are written out and lowered directly;
// convolutions go through conv3d-implicit-gemm=target=sm80 in the same run
// (the grid loop carries the conv's location). Output: lower-to-sm80.mlir.
//
// RUN: split-file %s %t
// RUN: conv3d-opt %t/grids.mlir -split-input-file -conv3d-lower-to-sm80 -verify-diagnostics
// RUN: conv3d-opt %t/convs.mlir -split-input-file -conv3d-implicit-gemm=target=sm80 -conv3d-lower-to-sm80 -verify-diagnostics

//--- grids.mlir

// "not an implicit-GEMM grid loop": the conv3d.igemm_config attribute is not
// a tile configuration.
func.func @config_not_a_config(%x: memref<1x4x4x4x16xbf16>, %w: memref<1x1x1x16x16xbf16>, %o: memref<1x4x4x4x16xbf16>) {
  // expected-error @below {{conv3d-lower-to-sm80: not an implicit-GEMM grid loop produced by conv3d-implicit-gemm}}
  scf.forall (%tm, %tn) in (1, 1) {
  } {conv3d.igemm_config = 1 : i64}
  return
}

// -----

// "not an implicit-GEMM grid loop": a grid without tile ops.
func.func @grid_without_tile_ops() {
  // expected-error @below {{conv3d-lower-to-sm80: not an implicit-GEMM grid loop produced by conv3d-implicit-gemm}}
  scf.forall (%tm, %tn) in (1, 1) {
  } {conv3d.igemm_config = #conv3d.igemm_config<tile_m = 64, tile_n = 16, tile_k = 16, stages = 2>}
  return
}

// -----

// "not an implicit-GEMM grid loop": no conv3d.store_output_tile.
func.func @grid_without_store(%x: memref<1x4x4x4x16xbf16>, %w: memref<1x1x1x16x16xbf16>) {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  // expected-error @below {{conv3d-lower-to-sm80: not an implicit-GEMM grid loop produced by conv3d-implicit-gemm}}
  scf.forall (%tm, %tn) in (1, 1) {
    %a = memref.alloc() : memref<64x16xbf16>
    %b = memref.alloc() : memref<16x16xbf16>
    conv3d.load_im2col_tile %x[%c0, %c0] limit %c16 into %a window = [1, 1, 1] : memref<1x4x4x4x16xbf16>, memref<64x16xbf16>
    conv3d.load_filter_tile %w[%c0, %c0] limit %c16 into %b : memref<1x1x1x16x16xbf16>, memref<16x16xbf16>
  } {conv3d.igemm_config = #conv3d.igemm_config<tile_m = 64, tile_n = 16, tile_k = 16, stages = 2>}
  return
}

// -----

// "not an implicit-GEMM grid loop": two output stores.
func.func @grid_with_two_stores(%x: memref<1x4x4x4x16xbf16>, %w: memref<1x1x1x16x16xbf16>, %o: memref<1x4x4x4x16xbf16>) {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  // expected-error @below {{conv3d-lower-to-sm80: not an implicit-GEMM grid loop produced by conv3d-implicit-gemm}}
  scf.forall (%tm, %tn) in (1, 1) {
    %a = memref.alloc() : memref<64x16xbf16>
    %b = memref.alloc() : memref<16x16xbf16>
    %acc = memref.alloc() : memref<64x16xf32>
    conv3d.load_im2col_tile %x[%c0, %c0] limit %c16 into %a window = [1, 1, 1] : memref<1x4x4x4x16xbf16>, memref<64x16xbf16>
    conv3d.load_filter_tile %w[%c0, %c0] limit %c16 into %b : memref<1x1x1x16x16xbf16>, memref<16x16xbf16>
    conv3d.tile_mma %a, %b, %acc : memref<64x16xbf16>, memref<16x16xbf16>, memref<64x16xf32>
    conv3d.store_output_tile %acc into %o[%c0, %c0] mode = overwrite : memref<64x16xf32>, memref<1x4x4x4x16xbf16>
    conv3d.store_output_tile %acc into %o[%c0, %c0] mode = overwrite : memref<64x16xf32>, memref<1x4x4x4x16xbf16>
  } {conv3d.igemm_config = #conv3d.igemm_config<tile_m = 64, tile_n = 16, tile_k = 16, stages = 2>}
  return
}

// -----

// "not an implicit-GEMM grid loop": the im2col loads of the grid (one per
// Q-slice loop) read different inputs.
func.func @grid_with_two_inputs(%x: memref<1x4x4x4x16xbf16>, %x2: memref<1x4x4x4x16xbf16>, %w: memref<1x1x1x16x16xbf16>, %o: memref<1x4x4x4x16xbf16>) {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  // expected-error @below {{conv3d-lower-to-sm80: not an implicit-GEMM grid loop produced by conv3d-implicit-gemm}}
  scf.forall (%tm, %tn) in (1, 1) {
    %a = memref.alloc() : memref<64x16xbf16>
    %b = memref.alloc() : memref<16x16xbf16>
    %acc = memref.alloc() : memref<64x16xf32>
    conv3d.load_im2col_tile %x[%c0, %c0] limit %c16 into %a window = [1, 1, 1] : memref<1x4x4x4x16xbf16>, memref<64x16xbf16>
    conv3d.load_filter_tile %w[%c0, %c0] limit %c16 into %b : memref<1x1x1x16x16xbf16>, memref<16x16xbf16>
    conv3d.tile_mma %a, %b, %acc : memref<64x16xbf16>, memref<16x16xbf16>, memref<64x16xf32>
    conv3d.load_im2col_tile %x2[%c0, %c0] limit %c16 into %a window = [1, 1, 1] : memref<1x4x4x4x16xbf16>, memref<64x16xbf16>
    conv3d.load_filter_tile %w[%c0, %c0] limit %c16 into %b : memref<1x1x1x16x16xbf16>, memref<16x16xbf16>
    conv3d.tile_mma %a, %b, %acc : memref<64x16xbf16>, memref<16x16xbf16>, memref<64x16xf32>
    conv3d.store_output_tile %acc into %o[%c0, %c0] mode = overwrite : memref<64x16xf32>, memref<1x4x4x4x16xbf16>
  } {conv3d.igemm_config = #conv3d.igemm_config<tile_m = 64, tile_n = 16, tile_k = 16, stages = 2>}
  return
}

// -----

// "not an implicit-GEMM grid loop": the im2col loads agree on the input but
// only one of them quantizes it.
func.func @grid_with_two_quantizations(%x: memref<1x4x4x4x16xbf16>, %w: memref<1x1x1x16x16xbf16>, %amax: f32, %o: memref<1x4x4x4x16xbf16>) {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  // expected-error @below {{conv3d-lower-to-sm80: not an implicit-GEMM grid loop produced by conv3d-implicit-gemm}}
  scf.forall (%tm, %tn) in (1, 1) {
    %a = memref.alloc() : memref<64x16xbf16>
    %b = memref.alloc() : memref<16x16xbf16>
    %acc = memref.alloc() : memref<64x16xf32>
    conv3d.load_im2col_tile %x[%c0, %c0] limit %c16 into %a quantize(#conv3d.nvfp4<block_size = 16>, %amax) window = [1, 1, 1] : memref<1x4x4x4x16xbf16>, memref<64x16xbf16>
    conv3d.load_im2col_tile %x[%c0, %c0] limit %c16 into %a window = [1, 1, 1] : memref<1x4x4x4x16xbf16>, memref<64x16xbf16>
    conv3d.load_filter_tile %w[%c0, %c0] limit %c16 into %b : memref<1x1x1x16x16xbf16>, memref<16x16xbf16>
    conv3d.tile_mma %a, %b, %acc : memref<64x16xbf16>, memref<16x16xbf16>, memref<64x16xf32>
    conv3d.store_output_tile %acc into %o[%c0, %c0] mode = overwrite : memref<64x16xf32>, memref<1x4x4x4x16xbf16>
  } {conv3d.igemm_config = #conv3d.igemm_config<tile_m = 64, tile_n = 16, tile_k = 16, stages = 2>}
  return
}

// -----

// "not an implicit-GEMM grid loop": the filter loads read different filters.
func.func @grid_with_two_filters(%x: memref<1x4x4x4x16xbf16>, %w: memref<1x1x1x16x16xbf16>, %w2: memref<1x1x1x16x16xbf16>, %o: memref<1x4x4x4x16xbf16>) {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  // expected-error @below {{conv3d-lower-to-sm80: not an implicit-GEMM grid loop produced by conv3d-implicit-gemm}}
  scf.forall (%tm, %tn) in (1, 1) {
    %a = memref.alloc() : memref<64x16xbf16>
    %b = memref.alloc() : memref<16x16xbf16>
    %acc = memref.alloc() : memref<64x16xf32>
    conv3d.load_im2col_tile %x[%c0, %c0] limit %c16 into %a window = [1, 1, 1] : memref<1x4x4x4x16xbf16>, memref<64x16xbf16>
    conv3d.load_filter_tile %w[%c0, %c0] limit %c16 into %b : memref<1x1x1x16x16xbf16>, memref<16x16xbf16>
    conv3d.load_filter_tile %w2[%c0, %c0] limit %c16 into %b : memref<1x1x1x16x16xbf16>, memref<16x16xbf16>
    conv3d.tile_mma %a, %b, %acc : memref<64x16xbf16>, memref<16x16xbf16>, memref<64x16xf32>
    conv3d.store_output_tile %acc into %o[%c0, %c0] mode = overwrite : memref<64x16xf32>, memref<1x4x4x4x16xbf16>
  } {conv3d.igemm_config = #conv3d.igemm_config<tile_m = 64, tile_n = 16, tile_k = 16, stages = 2>}
  return
}

// -----

// The filter's element type differs from the input's (the grid has no
// conv3d.tile_mma, whose verifier would also object).
func.func @filter_type_mismatch(%x: memref<1x4x4x4x16xbf16>, %w: memref<1x1x1x16x16xf16>, %o: memref<1x4x4x4x16xbf16>) {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  // expected-error @below {{sm80 needs the filter's element type ('f16') to be the input's ('bf16')}}
  scf.forall (%tm, %tn) in (1, 1) {
    %a = memref.alloc() : memref<64x16xbf16>
    %b = memref.alloc() : memref<16x16xf16>
    %acc = memref.alloc() : memref<64x16xf32>
    conv3d.load_im2col_tile %x[%c0, %c0] limit %c16 into %a window = [1, 1, 1] : memref<1x4x4x4x16xbf16>, memref<64x16xbf16>
    conv3d.load_filter_tile %w[%c0, %c0] limit %c16 into %b : memref<1x1x1x16x16xf16>, memref<16x16xf16>
    conv3d.store_output_tile %acc into %o[%c0, %c0] mode = overwrite : memref<64x16xf32>, memref<1x4x4x4x16xbf16>
  } {conv3d.igemm_config = #conv3d.igemm_config<tile_m = 64, tile_n = 16, tile_k = 16, stages = 2>}
  return
}

// -----

// "cannot lower": split_k with Q slices outermost (conv3d-implicit-gemm
// never builds it; the kernel would add every split's full sum).
func.func @split_k_qslice_outer(%x: memref<1x4x4x4x16xbf16>, %w: memref<1x1x1x16x16xbf16>, %o: memref<2x1x4x4x4x16xf32>) {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  // expected-error @below {{cannot lower #conv3d.igemm_config<tile_m = 64, tile_n = 16, tile_k = 16, stages = 2, k_order = qslice_outer, split_k = 2> to sm80: split_k = 2 needs k_order = taps_outer}}
  scf.forall (%tm, %tn, %s) in (1, 1, 2) {
    %a = memref.alloc() : memref<64x16xbf16>
    %b = memref.alloc() : memref<16x16xbf16>
    %acc = memref.alloc() : memref<64x16xf32>
    conv3d.load_im2col_tile %x[%c0, %c0] limit %c16 into %a window = [1, 1, 1] : memref<1x4x4x4x16xbf16>, memref<64x16xbf16>
    conv3d.load_filter_tile %w[%c0, %c0] limit %c16 into %b : memref<1x1x1x16x16xbf16>, memref<16x16xbf16>
    conv3d.tile_mma %a, %b, %acc : memref<64x16xbf16>, memref<16x16xbf16>, memref<64x16xf32>
    conv3d.store_output_tile %acc into %o[%c0, %c0] split(%s) mode = partial : memref<64x16xf32>, memref<2x1x4x4x4x16xf32>
  } {conv3d.igemm_config = #conv3d.igemm_config<tile_m = 64, tile_n = 16, tile_k = 16, stages = 2, k_order = qslice_outer, split_k = 2>}
  return
}

// -----

// "cannot lower": NVFP4 blocks of 32 do not fit a K tile of 16 (each unit
// of the quantizing load is one whole block).
func.func @quant_block_larger_than_tile_k(%x: memref<1x4x4x4x32xbf16>, %w: memref<1x1x1x32x16xbf16>, %amax: f32, %o: memref<1x4x4x4x16xbf16>) {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  // expected-error @below {{cannot lower #conv3d.igemm_config<tile_m = 64, tile_n = 16, tile_k = 16, stages = 2> to sm80: sm80 needs tile_k (16) to be a multiple of the NVFP4 block size (32)}}
  scf.forall (%tm, %tn) in (1, 1) {
    %a = memref.alloc() : memref<64x32xbf16>
    %b = memref.alloc() : memref<32x16xbf16>
    %acc = memref.alloc() : memref<64x16xf32>
    conv3d.load_im2col_tile %x[%c0, %c0] limit %c32 into %a quantize(#conv3d.nvfp4<block_size = 32>, %amax) window = [1, 1, 1] : memref<1x4x4x4x32xbf16>, memref<64x32xbf16>
    conv3d.load_filter_tile %w[%c0, %c0] limit %c32 into %b : memref<1x1x1x32x16xbf16>, memref<32x16xbf16>
    conv3d.tile_mma %a, %b, %acc : memref<64x32xbf16>, memref<32x16xbf16>, memref<64x16xf32>
    conv3d.store_output_tile %acc into %o[%c0, %c0] mode = overwrite : memref<64x16xf32>, memref<1x4x4x4x16xbf16>
  } {conv3d.igemm_config = #conv3d.igemm_config<tile_m = 64, tile_n = 16, tile_k = 16, stages = 2>}
  return
}

// -----

// "cannot lower": Q slices outermost with NVFP4 blocks of 32 across slices
// of R*S*C = 16 channels.
func.func @quant_blocks_across_slices(%x: memref<1x4x4x4x16xbf16>, %w: memref<3x1x1x16x16xbf16>, %amax: f32, %o: memref<1x2x4x4x16xbf16>) {
  %c0 = arith.constant 0 : index
  %c48 = arith.constant 48 : index
  // expected-error @below {{cannot lower #conv3d.igemm_config<tile_m = 64, tile_n = 16, tile_k = 32, stages = 2, k_order = qslice_outer> to sm80: qslice_outer splits NVFP4 blocks of 32 at the slice boundaries (R*S*C = 16)}}
  scf.forall (%tm, %tn) in (1, 1) {
    %a = memref.alloc() : memref<64x32xbf16>
    %b = memref.alloc() : memref<32x16xbf16>
    %acc = memref.alloc() : memref<64x16xf32>
    conv3d.load_im2col_tile %x[%c0, %c0] limit %c48 into %a quantize(#conv3d.nvfp4<block_size = 32>, %amax) window = [3, 1, 1] : memref<1x4x4x4x16xbf16>, memref<64x32xbf16>
    conv3d.load_filter_tile %w[%c0, %c0] limit %c48 into %b : memref<3x1x1x16x16xbf16>, memref<32x16xbf16>
    conv3d.tile_mma %a, %b, %acc : memref<64x32xbf16>, memref<32x16xbf16>, memref<64x16xf32>
    conv3d.store_output_tile %acc into %o[%c0, %c0] mode = overwrite : memref<64x16xf32>, memref<1x2x4x4x16xbf16>
  } {conv3d.igemm_config = #conv3d.igemm_config<tile_m = 64, tile_n = 16, tile_k = 32, stages = 2, k_order = qslice_outer>}
  return
}

// -----

// A grid of 2 groups whose input view is computed from the M tile's
// induction variable, not the group's: the kernel computes only a group's
// views.
func.func @group_view_of_the_m_tile(%x: memref<1x4x4x4x32xbf16>, %w: memref<1x1x1x16x32xbf16>, %o: memref<1x4x4x4x32xbf16>) {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  // expected-error @below {{conv3d-lower-to-sm80: the tile ops of a grid of 2 groups must read views computed from the group's induction variable alone (conv3d-implicit-gemm's group views)}}
  scf.forall (%g, %tm, %tn) in (2, 1, 1) {
    %c = arith.muli %tm, %c16 : index
    %f = arith.muli %g, %c16 : index
    %xg = memref.subview %x[0, 0, 0, 0, %c] [1, 4, 4, 4, 16] [1, 1, 1, 1, 1] : memref<1x4x4x4x32xbf16> to memref<1x4x4x4x16xbf16, strided<[2048, 512, 128, 32, 1], offset: ?>>
    %wg = memref.subview %w[0, 0, 0, 0, %f] [1, 1, 1, 16, 16] [1, 1, 1, 1, 1] : memref<1x1x1x16x32xbf16> to memref<1x1x1x16x16xbf16, strided<[512, 512, 512, 32, 1], offset: ?>>
    %og = memref.subview %o[0, 0, 0, 0, %f] [1, 4, 4, 4, 16] [1, 1, 1, 1, 1] : memref<1x4x4x4x32xbf16> to memref<1x4x4x4x16xbf16, strided<[2048, 512, 128, 32, 1], offset: ?>>
    %a = memref.alloc() : memref<64x16xbf16>
    %b = memref.alloc() : memref<16x16xbf16>
    %acc = memref.alloc() : memref<64x16xf32>
    conv3d.load_im2col_tile %xg[%c0, %c0] limit %c16 into %a window = [1, 1, 1] : memref<1x4x4x4x16xbf16, strided<[2048, 512, 128, 32, 1], offset: ?>>, memref<64x16xbf16>
    conv3d.load_filter_tile %wg[%c0, %c0] limit %c16 into %b : memref<1x1x1x16x16xbf16, strided<[512, 512, 512, 32, 1], offset: ?>>, memref<16x16xbf16>
    conv3d.tile_mma %a, %b, %acc : memref<64x16xbf16>, memref<16x16xbf16>, memref<64x16xf32>
    conv3d.store_output_tile %acc into %og[%c0, %c0] mode = overwrite : memref<64x16xf32>, memref<1x4x4x4x16xbf16, strided<[2048, 512, 128, 32, 1], offset: ?>>
  } {conv3d.igemm_config = #conv3d.igemm_config<tile_m = 64, tile_n = 16, tile_k = 16, stages = 2>}
  return
}

//--- convs.mlir

// A config for the sm90 kernel (conv3d-select-config's on target=sm90) is
// for conv3d-lower-to-sm90, and one for the sm100 kernel for
// conv3d-lower-to-sm100.
func.func @sm90_kernel(%x: memref<1x4x8x8x64xbf16>, %w: memref<64x3x3x3x64xbf16>, %o: memref<1x4x8x8x64xbf16>) {
  // expected-error @below {{conv3d-lower-to-sm80: #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 4, warps_m = 8, kernel = sm90> is for the sm90 kernel; run conv3d-lower-to-sm90}}
  conv3d.conv ins(%x, %w : memref<1x4x8x8x64xbf16>, memref<64x3x3x3x64xbf16>) outs(%o : memref<1x4x8x8x64xbf16>) overwrite padding = [1, 1, 1, 1, 1, 1] filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 4, warps_m = 8, kernel = sm90>
  return
}

// -----

func.func @sm100_kernel(%x: memref<1x4x8x8x64xbf16>, %w: memref<64x3x3x3x64xbf16>, %o: memref<1x4x8x8x64xbf16>) {
  // expected-error @below {{conv3d-lower-to-sm80: #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 6, warps_m = 4, kernel = sm100> is for the sm100 kernel; run conv3d-lower-to-sm100}}
  conv3d.conv ins(%x, %w : memref<1x4x8x8x64xbf16>, memref<64x3x3x3x64xbf16>) outs(%o : memref<1x4x8x8x64xbf16>) overwrite padding = [1, 1, 1, 1, 1, 1] filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 6, warps_m = 4, kernel = sm100>
  return
}

// -----

// A config that names the sm80 kernel is for this lowering (the sm90
// fallback's).
func.func @sm80_kernel_ok(%x: memref<1x4x4x4x16xbf16>, %w: memref<1x1x1x16x16xbf16>, %o: memref<1x4x4x4x16xbf16>) {
  conv3d.conv ins(%x, %w : memref<1x4x4x4x16xbf16>, memref<1x1x1x16x16xbf16>) outs(%o : memref<1x4x4x4x16xbf16>) overwrite config = #conv3d.igemm_config<tile_m = 64, tile_n = 16, tile_k = 16, stages = 2, kernel = sm80>
  return
}

// -----

// f32 convolutions have no mma.sync path.
func.func @f32_input(%x: memref<1x4x4x4x16xf32>, %w: memref<1x1x1x16x16xf32>, %o: memref<1x4x4x4x16xf32>) {
  // expected-error @below {{sm80 computes bf16 and f16 convolutions on the tensor cores; 'f32' inputs run on the CPU target}}
  conv3d.conv ins(%x, %w : memref<1x4x4x4x16xf32>, memref<1x1x1x16x16xf32>) outs(%o : memref<1x4x4x4x16xf32>) overwrite config = #conv3d.igemm_config<tile_m = 64, tile_n = 16, tile_k = 16, stages = 2>
  return
}

// -----

// "cannot lower": tile_m is not a multiple of 16 * warps_m.
func.func @tile_m_vs_warps(%x: memref<1x4x4x4x16xbf16>, %w: memref<1x1x1x16x16xbf16>, %o: memref<1x4x4x4x16xbf16>) {
  // expected-error @below {{cannot lower #conv3d.igemm_config<tile_m = 48, tile_n = 16, tile_k = 16, stages = 2, warps_m = 2> to sm80: sm80 needs tile_m (48) to be a multiple of 16 * warps_m (32)}}
  conv3d.conv ins(%x, %w : memref<1x4x4x4x16xbf16>, memref<1x1x1x16x16xbf16>) outs(%o : memref<1x4x4x4x16xbf16>) overwrite config = #conv3d.igemm_config<tile_m = 48, tile_n = 16, tile_k = 16, stages = 2, warps_m = 2>
  return
}

// -----

// "cannot lower": tile_n is not a multiple of 8 * warps_n.
func.func @tile_n_vs_warps(%x: memref<1x4x4x4x16xbf16>, %w: memref<1x1x1x16x16xbf16>, %o: memref<1x4x4x4x16xbf16>) {
  // expected-error @below {{cannot lower #conv3d.igemm_config<tile_m = 64, tile_n = 24, tile_k = 16, stages = 2, warps_n = 2> to sm80: sm80 needs tile_n (24) to be a multiple of 8 * warps_n (16)}}
  conv3d.conv ins(%x, %w : memref<1x4x4x4x16xbf16>, memref<1x1x1x16x16xbf16>) outs(%o : memref<1x4x4x4x16xbf16>) overwrite config = #conv3d.igemm_config<tile_m = 64, tile_n = 24, tile_k = 16, stages = 2, warps_n = 2>
  return
}

// -----

// "cannot lower": tile_k is not a multiple of the mma depth 16.
func.func @tile_k_not_multiple_of_16(%x: memref<1x4x4x4x16xbf16>, %w: memref<1x1x1x16x16xbf16>, %o: memref<1x4x4x4x16xbf16>) {
  // expected-error @below {{cannot lower #conv3d.igemm_config<tile_m = 64, tile_n = 16, tile_k = 24, stages = 2> to sm80: sm80 needs tile_k (24) to be a multiple of 16}}
  conv3d.conv ins(%x, %w : memref<1x4x4x4x16xbf16>, memref<1x1x1x16x16xbf16>) outs(%o : memref<1x4x4x4x16xbf16>) overwrite config = #conv3d.igemm_config<tile_m = 64, tile_n = 16, tile_k = 24, stages = 2>
  return
}

// -----

// "cannot lower": one stage (the attribute's default) cannot overlap copies
// with MMAs.
func.func @one_stage(%x: memref<1x4x4x4x16xbf16>, %w: memref<1x1x1x16x16xbf16>, %o: memref<1x4x4x4x16xbf16>) {
  // expected-error @below {{cannot lower #conv3d.igemm_config<tile_m = 64, tile_n = 16, tile_k = 16> to sm80: sm80 needs at least 2 pipeline stages, got 1}}
  conv3d.conv ins(%x, %w : memref<1x4x4x4x16xbf16>, memref<1x1x1x16x16xbf16>) outs(%o : memref<1x4x4x4x16xbf16>) overwrite config = #conv3d.igemm_config<tile_m = 64, tile_n = 16, tile_k = 16>
  return
}

// -----

// "cannot lower": 8 x 8 warps are more than the 1024 threads of a block.
func.func @too_many_warps(%x: memref<1x4x4x4x16xbf16>, %w: memref<1x1x1x16x64xbf16>, %o: memref<1x4x4x4x64xbf16>) {
  // expected-error @below {{cannot lower #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 16, stages = 2, warps_m = 8, warps_n = 8> to sm80: sm80 blocks hold at most 32 warps, the warp layout asks for 64}}
  conv3d.conv ins(%x, %w : memref<1x4x4x4x16xbf16>, memref<1x1x1x16x64xbf16>) outs(%o : memref<1x4x4x4x64xbf16>) overwrite config = #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 16, stages = 2, warps_m = 8, warps_n = 8>
  return
}

// -----

// "cannot lower": one warp for a 128 x 64 tile would hold 8 x 8 mma tiles
// of 4 accumulators per thread.
func.func @too_many_accumulators(%x: memref<1x4x4x4x16xbf16>, %w: memref<1x1x1x16x64xbf16>, %o: memref<1x4x4x4x64xbf16>) {
  // expected-error @below {{cannot lower #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 16, stages = 2> to sm80: a 128x64 warp tile needs 256 accumulator registers per thread (at most 128): use more warps or a smaller tile}}
  conv3d.conv ins(%x, %w : memref<1x4x4x4x16xbf16>, memref<1x1x1x16x64xbf16>) outs(%o : memref<1x4x4x4x64xbf16>) overwrite config = #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 16, stages = 2>
  return
}

// -----

// "cannot lower": the operand ring needs 4 x (128x64 + 64x256) x 2 B =
// 196608 B of shared memory.
func.func @too_much_shared_memory(%x: memref<1x4x8x8x64xbf16>, %w: memref<1x1x1x64x256xbf16>, %o: memref<1x4x8x8x256xbf16>) {
  // expected-error @below {{cannot lower #conv3d.igemm_config<tile_m = 128, tile_n = 256, tile_k = 64, stages = 4, warps_m = 4, warps_n = 4> to sm80: the kernel needs 196608 bytes of shared memory (4 stages of 128x64 and 64x256 tiles), more than an sm_80 block has (166912)}}
  conv3d.conv ins(%x, %w : memref<1x4x8x8x64xbf16>, memref<1x1x1x64x256xbf16>) outs(%o : memref<1x4x8x8x256xbf16>) overwrite config = #conv3d.igemm_config<tile_m = 128, tile_n = 256, tile_k = 64, stages = 4, warps_m = 4, warps_n = 4>
  return
}

// -----

// "cannot lower", shared memory again: here the f32 epilogue staging tile,
// 256 x (256 + 4) x 4 B = 266240 B, is what does not fit (the ring needs
// only 2 x (256x16 + 16x256) x 2 B = 32768 B), and the message says so.
func.func @staging_too_large(%x: memref<1x4x8x8x16xbf16>, %w: memref<1x1x1x16x256xbf16>, %o: memref<1x4x8x8x256xbf16>) {
  // expected-error @below {{cannot lower #conv3d.igemm_config<tile_m = 256, tile_n = 256, tile_k = 16, stages = 2, warps_m = 8, warps_n = 4> to sm80: the epilogue's f32 staging tile of 256x260 (padded rows) needs 266240 bytes of shared memory, more than an sm_80 block has (166912)}}
  conv3d.conv ins(%x, %w : memref<1x4x8x8x16xbf16>, memref<1x1x1x16x256xbf16>) outs(%o : memref<1x4x8x8x256xbf16>) overwrite config = #conv3d.igemm_config<tile_m = 256, tile_n = 256, tile_k = 16, stages = 2, warps_m = 8, warps_n = 4>
  return
}

// -----

// Static strides, but the filter's (q, r, s, c) dimensions do not collapse
// into one K dimension (s has stride 1024 instead of C * F = 512).
func.func @filter_not_contiguous(%x: memref<1x4x4x4x16xbf16>, %w: memref<3x3x3x16x32xbf16, strided<[9216, 3072, 1024, 32, 1]>>, %o: memref<1x2x2x2x32xbf16>) {
  // expected-error @below {{sm80 needs operands with static strides and a filter whose (q, r, s, c) dimensions are contiguous}}
  conv3d.conv ins(%x, %w : memref<1x4x4x4x16xbf16>, memref<3x3x3x16x32xbf16, strided<[9216, 3072, 1024, 32, 1]>>) outs(%o : memref<1x2x2x2x32xbf16>) overwrite config = #conv3d.igemm_config<tile_m = 16, tile_n = 32, tile_k = 16, stages = 2>
  return
}

// -----

// An input with dynamic strides cannot be addressed as a flat view.
func.func @input_dynamic_strides(%x: memref<1x4x4x4x16xbf16, strided<[?, ?, ?, ?, 1]>>, %w: memref<1x1x1x16x16xbf16>, %o: memref<1x4x4x4x16xbf16>) {
  // expected-error @below {{sm80 needs operands with static strides and a filter whose (q, r, s, c) dimensions are contiguous}}
  conv3d.conv ins(%x, %w : memref<1x4x4x4x16xbf16, strided<[?, ?, ?, ?, 1]>>, memref<1x1x1x16x16xbf16>) outs(%o : memref<1x4x4x4x16xbf16>) overwrite config = #conv3d.igemm_config<tile_m = 64, tile_n = 16, tile_k = 16, stages = 2>
  return
}

// -----

// conv3d-implicit-gemm=target=sm80: split-K partial sums need the flat K
// order (the conv verifier accepts the combination).
func.func @split_k_with_qslice_outer(%x: memref<1x6x4x4x16xbf16>, %w: memref<3x1x1x16x16xbf16>, %o: memref<1x4x4x4x16xbf16>) {
  // expected-error @below {{conv3d-implicit-gemm cannot tile this convolution: split_k > 1 needs k_order = taps_outer}}
  conv3d.conv ins(%x, %w : memref<1x6x4x4x16xbf16>, memref<3x1x1x16x16xbf16>) outs(%o : memref<1x4x4x4x16xbf16>) overwrite config = #conv3d.igemm_config<tile_m = 64, tile_n = 16, tile_k = 16, stages = 2, k_order = qslice_outer, split_k = 2>
  return
}

// -----

// Vector copies run along the filter's contiguous axis (F for QRSCF): a
// stride of 2 there is refused, not copied as if contiguous.
func.func @filter_f_stride_2(%x: memref<1x4x4x4x16xbf16>, %w: memref<1x1x1x16x16xbf16, strided<[512, 512, 512, 32, 2]>>, %o: memref<1x4x4x4x16xbf16>) {
  // expected-error @below {{sm80 needs a unit stride along the filter's innermost dimension, got 'memref<1x1x1x16x16xbf16, strided<[512, 512, 512, 32, 2]>>'}}
  conv3d.conv ins(%x, %w : memref<1x4x4x4x16xbf16>, memref<1x1x1x16x16xbf16, strided<[512, 512, 512, 32, 2]>>) outs(%o : memref<1x4x4x4x16xbf16>) overwrite config = #conv3d.igemm_config<tile_m = 64, tile_n = 16, tile_k = 16, stages = 2>
  return
}

// -----

// The same for the input's channels.
func.func @input_c_stride_2(%x: memref<1x4x4x4x16xbf16, strided<[2048, 512, 128, 32, 2]>>, %w: memref<1x1x1x16x16xbf16>, %o: memref<1x4x4x4x16xbf16>) {
  // expected-error @below {{sm80 needs a unit stride along the input's innermost dimension}}
  conv3d.conv ins(%x, %w : memref<1x4x4x4x16xbf16, strided<[2048, 512, 128, 32, 2]>>, memref<1x1x1x16x16xbf16>) outs(%o : memref<1x4x4x4x16xbf16>) overwrite config = #conv3d.igemm_config<tile_m = 64, tile_n = 16, tile_k = 16, stages = 2>
  return
}

// -----

// "cannot lower": 2^35 output rows in M tiles of 16 need 2^31 thread blocks,
// one more than a one-dimensional CUDA grid allows.
func.func @grid_too_large(%x: memref<1x32768x1024x1024x8xbf16>, %w: memref<1x1x1x8x8xbf16>, %o: memref<1x32768x1024x1024x8xbf16>) {
  // expected-error @below {{cannot lower #conv3d.igemm_config<tile_m = 16, tile_n = 8, tile_k = 16, stages = 2> to sm80: 2147483648 thread blocks exceed the grid limit of 2^31 - 1; use larger tiles}}
  conv3d.conv ins(%x, %w : memref<1x32768x1024x1024x8xbf16>, memref<1x1x1x8x8xbf16>) outs(%o : memref<1x32768x1024x1024x8xbf16>) overwrite config = #conv3d.igemm_config<tile_m = 16, tile_n = 8, tile_k = 16, stages = 2>
  return
}

// -----

// cluster_m is an sm90 option.
func.func @cluster_m(%x: memref<1x4x8x8x64xbf16>, %w: memref<64x3x3x3x64xbf16>, %o: memref<1x4x8x8x64xbf16>) {
  // expected-error @below {{conv3d-lower-to-sm80: #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 32, stages = 3, warps_m = 4, cluster_m = 2>: cluster_m is an sm90 option (the sm80 kernel runs without clusters)}}
  conv3d.conv ins(%x, %w : memref<1x4x8x8x64xbf16>, memref<64x3x3x3x64xbf16>) outs(%o : memref<1x4x8x8x64xbf16>) overwrite padding = [1, 1, 1, 1, 1, 1] filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 32, stages = 3, warps_m = 4, cluster_m = 2>
  return
}

// -----

// mainloop = halo is an sm90 option.
func.func @mainloop_halo(%x: memref<1x4x8x8x64xbf16>, %w: memref<64x3x3x3x64xbf16>, %o: memref<1x4x8x8x64xbf16>) {
  // expected-error @below {{conv3d-lower-to-sm80: #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 32, stages = 3, warps_m = 4, mainloop = halo>: mainloop = halo is an sm90 option (the sm80 kernel gathers its tiles with cp.async)}}
  conv3d.conv ins(%x, %w : memref<1x4x8x8x64xbf16>, memref<64x3x3x3x64xbf16>) outs(%o : memref<1x4x8x8x64xbf16>) overwrite padding = [1, 1, 1, 1, 1, 1] filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 32, stages = 3, warps_m = 4, mainloop = halo>
  return
}

// -----

// A grouped convolution whose groups have 8 channels but 4 filters: the
// sm80 kernel's grouped GEMM needs whole 16-byte vectors of each group's
// filters (the GPU pipelines give it to the depthwise kernel).
func.func @grouped_4_filters(%x: memref<1x4x4x4x16xbf16>, %w: memref<3x3x3x8x8xbf16>, %o: memref<1x4x4x4x8xbf16>) {
  // expected-error @below {{conv3d-implicit-gemm cannot tile this convolution: the sm80 kernel cannot take it: it is a grouped convolution (groups = 2) of 4 filters per group, and the sm80 kernel takes groups of a multiple of 8 filters (16-byte vectors of each group's slice; the depthwise kernel takes the others)}}
  conv3d.conv ins(%x, %w : memref<1x4x4x4x16xbf16>, memref<3x3x3x8x8xbf16>) outs(%o : memref<1x4x4x4x8xbf16>) overwrite padding = [1, 1, 1, 1, 1, 1] groups = 2
  return
}

