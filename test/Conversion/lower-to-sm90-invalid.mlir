// Errors of conv3d-lower-to-sm90, one case per diagnostic (and per reason
// of the "cannot lower ... to the sm90 kernel" one: SM90KernelPlan::build,
// getTmaKernelProblem, the TMA alignment and the 31-bit tile indices).
// Grids that conv3d-implicit-gemm never produces are written out and
// lowered directly; convolutions go through conv3d-implicit-gemm=target=sm90
// in the same run (the grid loop carries the conv's location). Output:
// lower-to-sm90.mlir.
//
// Not reachable from conv3d-opt, so not here: "conv3d-lower-to-sm90 needs an
// enclosing module" (conv3d-opt's top-level operation is always one), and
// getTmaKernelProblem's "wgmma takes bf16 or f16 operands here" (f32 is
// refused first by the GPU operand check, below; the remark of
// conv3d-select-config shows it: select-config-sm90.mlir), and
// SM90KernelPlan's "NVFP4 blocks of N do not tile a 64-channel K step" (the
// block size check above comes first; SM90KernelPlanTest). A config that
// names no kernel (kernel = cpu) is lowered like kernel = sm90.
//
// RUN: split-file %s %t
// RUN: conv3d-opt %t/grids.mlir -split-input-file -conv3d-lower-to-sm90 -verify-diagnostics
// RUN: conv3d-opt %t/convs.mlir -split-input-file -conv3d-implicit-gemm=target=sm90 -conv3d-lower-to-sm90 -verify-diagnostics

//--- grids.mlir

// "not an implicit-GEMM grid loop": a grid without tile ops.
func.func @grid_without_tile_ops() {
  // expected-error @below {{conv3d-lower-to-sm90: not an implicit-GEMM grid loop produced by conv3d-implicit-gemm}}
  scf.forall (%tm, %tn) in (1, 1) {
  } {conv3d.igemm_config = #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 4, warps_m = 8, kernel = sm90>}
  return
}

// -----

// "not an implicit-GEMM grid loop": the conv3d.igemm_config attribute is not
// a tile configuration.
func.func @config_not_a_config() {
  // expected-error @below {{conv3d-lower-to-sm90: not an implicit-GEMM grid loop produced by conv3d-implicit-gemm}}
  scf.forall (%tm, %tn) in (1, 1) {
  } {conv3d.igemm_config = 1 : i64}
  return
}

// -----

// The filter's element type differs from the input's (the grid has no
// conv3d.tile_mma, whose verifier would also object).
func.func @filter_type_mismatch(%x: memref<1x4x8x8x64xbf16>, %w: memref<64x1x1x1x64xf16>, %o: memref<1x4x8x8x64xbf16>) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  // expected-error @below {{sm90 needs the filter's element type ('f16') to be the input's ('bf16')}}
  scf.forall (%tm, %tn) in (2, 1) {
    %a = memref.alloc() : memref<128x64xbf16>
    %b = memref.alloc() : memref<64x64xf16>
    %acc = memref.alloc() : memref<128x64xf32>
    conv3d.load_im2col_tile %x[%c0, %c0] limit %c64 into %a window = [1, 1, 1] : memref<1x4x8x8x64xbf16>, memref<128x64xbf16>
    conv3d.load_filter_tile %w[%c0, %c0] limit %c64 into %b filter_layout = fqrsc : memref<64x1x1x1x64xf16>, memref<64x64xf16>
    conv3d.store_output_tile %acc into %o[%c0, %c0] mode = overwrite : memref<128x64xf32>, memref<1x4x8x8x64xbf16>
  } {conv3d.igemm_config = #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 4, warps_m = 8, kernel = sm90>}
  return
}

// -----

// "cannot lower": split_k with Q slices outermost (conv3d-implicit-gemm
// never builds it: see split_k_with_qslice_outer in convs.mlir).
func.func @split_k_qslice_outer(%x: memref<1x4x8x8x64xbf16>, %w: memref<64x3x1x1x64xbf16>, %o: memref<2x1x2x8x8x64xf32>) {
  %c0 = arith.constant 0 : index
  %c192 = arith.constant 192 : index
  // expected-error @below {{cannot lower #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 4, warps_m = 8, k_order = qslice_outer, split_k = 2, kernel = sm90> to the sm90 kernel: split_k > 1 needs k_order = taps_outer}}
  scf.forall (%tm, %tn, %s) in (1, 1, 2) {
    %a = memref.alloc() : memref<128x64xbf16>
    %b = memref.alloc() : memref<64x64xbf16>
    %acc = memref.alloc() : memref<128x64xf32>
    conv3d.load_im2col_tile %x[%c0, %c0] limit %c192 into %a window = [3, 1, 1] : memref<1x4x8x8x64xbf16>, memref<128x64xbf16>
    conv3d.load_filter_tile %w[%c0, %c0] limit %c192 into %b filter_layout = fqrsc : memref<64x3x1x1x64xbf16>, memref<64x64xbf16>
    conv3d.tile_mma %a, %b, %acc : memref<128x64xbf16>, memref<64x64xbf16>, memref<128x64xf32>
    conv3d.store_output_tile %acc into %o[%c0, %c0] split(%s) mode = partial : memref<128x64xf32>, memref<2x1x2x8x8x64xf32>
  } {conv3d.igemm_config = #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 4, warps_m = 8, k_order = qslice_outer, split_k = 2, kernel = sm90>}
  return
}

// -----

// A grouped convolution's grid (conv3d-implicit-gemm's group dimension) for
// the sm90 kernel, which computes dense convolutions only.
func.func @grouped_grid(%x: memref<1x4x8x8x128xbf16>, %w: memref<64x1x1x1x64xbf16>, %o: memref<1x4x8x8x128xbf16>) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  // expected-error @below {{conv3d-lower-to-sm90: the sm90 kernel does not compute grouped convolutions (a grid of 2 groups); conv3d-select-config gives them to the sm80 kernel}}
  scf.forall (%g, %tm, %tn) in (2, 2, 1) {
    %c = arith.muli %g, %c64 : index
    %xg = memref.subview %x[0, 0, 0, 0, %c] [1, 4, 8, 8, 64] [1, 1, 1, 1, 1] : memref<1x4x8x8x128xbf16> to memref<1x4x8x8x64xbf16, strided<[32768, 8192, 1024, 128, 1], offset: ?>>
    %og = memref.subview %o[0, 0, 0, 0, %c] [1, 4, 8, 8, 64] [1, 1, 1, 1, 1] : memref<1x4x8x8x128xbf16> to memref<1x4x8x8x64xbf16, strided<[32768, 8192, 1024, 128, 1], offset: ?>>
    %a = memref.alloc() : memref<128x64xbf16>
    %b = memref.alloc() : memref<64x64xbf16>
    %acc = memref.alloc() : memref<128x64xf32>
    conv3d.load_im2col_tile %xg[%c0, %c0] limit %c64 into %a window = [1, 1, 1] : memref<1x4x8x8x64xbf16, strided<[32768, 8192, 1024, 128, 1], offset: ?>>, memref<128x64xbf16>
    conv3d.load_filter_tile %w[%c0, %c0] limit %c64 into %b filter_layout = fqrsc : memref<64x1x1x1x64xbf16>, memref<64x64xbf16>
    conv3d.tile_mma %a, %b, %acc : memref<128x64xbf16>, memref<64x64xbf16>, memref<128x64xf32>
    conv3d.store_output_tile %acc into %og[%c0, %c0] mode = overwrite : memref<128x64xf32>, memref<1x4x8x8x64xbf16, strided<[32768, 8192, 1024, 128, 1], offset: ?>>
  } {conv3d.igemm_config = #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 4, warps_m = 8, kernel = sm90>}
  return
}

//--- convs.mlir

// A config for the sm100 kernel (conv3d-lower-to-sm100 lowers it).
func.func @sm100_kernel(%x: memref<1x4x8x8x64xbf16>, %w: memref<64x3x3x3x64xbf16>, %o: memref<1x4x8x8x64xbf16>) {
  // expected-error @below {{conv3d-lower-to-sm90: #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 6, warps_m = 4, kernel = sm100> is for the sm100 kernel}}
  conv3d.conv ins(%x, %w : memref<1x4x8x8x64xbf16>, memref<64x3x3x3x64xbf16>) outs(%o : memref<1x4x8x8x64xbf16>) overwrite padding = [1, 1, 1, 1, 1, 1] filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 6, warps_m = 4, kernel = sm100>
  return
}

// -----

// f32 convolutions have no wgmma path here (checked before the kernel's
// own list of problems).
func.func @f32_input(%x: memref<1x4x8x8x64xf32>, %w: memref<64x1x1x1x64xf32>, %o: memref<1x4x8x8x64xf32>) {
  // expected-error @below {{sm90 computes bf16 and f16 convolutions on the tensor cores; 'f32' inputs run on the CPU target}}
  conv3d.conv ins(%x, %w : memref<1x4x8x8x64xf32>, memref<64x1x1x1x64xf32>) outs(%o : memref<1x4x8x8x64xf32>) overwrite filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 4, warps_m = 8, kernel = sm90>
  return
}

// -----

// TMA and the vector epilogue run along the channels: a stride of 2 along
// the input's C is refused.
func.func @input_c_stride_2(%x: memref<1x4x8x8x64xbf16, strided<[8192, 2048, 256, 128, 2]>>, %w: memref<64x1x1x1x64xbf16>, %o: memref<1x4x8x8x64xbf16>) {
  // expected-error @below {{sm90 needs a unit stride along the input's innermost dimension, got 'memref<1x4x8x8x64xbf16, strided<[8192, 2048, 256, 128, 2]>>'}}
  conv3d.conv ins(%x, %w : memref<1x4x8x8x64xbf16, strided<[8192, 2048, 256, 128, 2]>>, memref<64x1x1x1x64xbf16>) outs(%o : memref<1x4x8x8x64xbf16>) overwrite filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 4, warps_m = 8, kernel = sm90>
  return
}

// -----

// "cannot lower": a QRSCF filter (conv3d-select-config would have chosen
// the sm80 kernel for it).
func.func @qrscf_filter(%x: memref<1x4x8x8x64xbf16>, %w: memref<3x3x3x64x64xbf16>, %o: memref<1x4x8x8x64xbf16>) {
  // expected-error @below {{cannot lower #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 4, warps_m = 8, kernel = sm90> to the sm90 kernel: the filter is QRSCF; the TMA filter tiles are K-major (FQRSC)}}
  conv3d.conv ins(%x, %w : memref<1x4x8x8x64xbf16>, memref<3x3x3x64x64xbf16>) outs(%o : memref<1x4x8x8x64xbf16>) overwrite padding = [1, 1, 1, 1, 1, 1] config = #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 4, warps_m = 8, kernel = sm90>
  return
}

// -----

// "cannot lower": NVFP4 quantization in the tile load with blocks that
// straddle filter taps (C = 72, blocks of 16), which the sm90 kernel's K
// steps keep apart; and blocks of 128, which span two of them (the conv
// verifier asks for tile_k = 128 first; the check comes before the plan's
// tile_k = 64).
func.func @quantize_straddling_taps(%x: memref<1x4x8x8x72xbf16>, %w: memref<64x3x3x3x72xbf16>, %amax: f32, %o: memref<1x4x8x8x64xbf16>) {
  // expected-error @below {{cannot lower #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 4, warps_m = 8, kernel = sm90> to the sm90 kernel: C = 72 is not a multiple of the NVFP4 block size 16: blocks straddle filter taps, which the sm90 kernel's K steps (one tap x 64 channels) keep apart}}
  conv3d.conv ins(%x, %w : memref<1x4x8x8x72xbf16>, memref<64x3x3x3x72xbf16>) quantize(#conv3d.nvfp4<block_size = 16>, %amax) outs(%o : memref<1x4x8x8x64xbf16>) overwrite padding = [1, 1, 1, 1, 1, 1] filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 4, warps_m = 8, kernel = sm90>
  return
}

// -----

func.func @quantize_block_128(%x: memref<1x4x8x8x128xbf16>, %w: memref<64x1x1x1x128xbf16>, %amax: f32, %o: memref<1x4x8x8x64xbf16>) {
  // expected-error @below {{cannot lower #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 128, stages = 4, warps_m = 8, kernel = sm90> to the sm90 kernel: NVFP4 blocks of 128 span several 64-channel K steps; the sm90 kernel quantizes blocks of 16, 32 or 64 in the tile}}
  conv3d.conv ins(%x, %w : memref<1x4x8x8x128xbf16>, memref<64x1x1x1x128xbf16>) quantize(#conv3d.nvfp4<block_size = 128>, %amax) outs(%o : memref<1x4x8x8x64xbf16>) overwrite filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 128, stages = 4, warps_m = 8, kernel = sm90>
  return
}

// -----

// "cannot lower": C = 32 is under one 64-channel TMA box.
func.func @narrow_channels(%x: memref<1x4x8x8x32xbf16>, %w: memref<64x1x1x1x32xbf16>, %o: memref<1x4x8x8x64xbf16>) {
  // expected-error @below {{cannot lower #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 4, warps_m = 8, kernel = sm90> to the sm90 kernel: C = 32 is under one 64-channel TMA box; the sm80 kernel reads narrow channels without padding them}}
  conv3d.conv ins(%x, %w : memref<1x4x8x8x32xbf16>, memref<64x1x1x1x32xbf16>) outs(%o : memref<1x4x8x8x64xbf16>) overwrite filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 4, warps_m = 8, kernel = sm90>
  return
}

// -----

// "cannot lower": height padding 129 puts the im2col lower corner at -129,
// outside rank 5's [-16, 15] and the per-depth-slice descriptors'
// [-128, 127]. (Depth padding 20, a 3-wide window dilated by 9 and other
// geometries past rank 5's limits that rank 4 takes: lower-to-sm90.mlir.)
func.func @padding_129(%x: memref<1x4x8x8x64xbf16>, %w: memref<64x1x1x1x64xbf16>, %o: memref<1x4x137x8x64xbf16>) {
  // expected-error @below {{cannot lower #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 4, warps_m = 8, kernel = sm90> to the sm90 kernel: the height padding (129, 0) and window put a TMA im2col corner outside [-16, 15]; per-depth-slice descriptors: the height padding (129, 0) and window put a TMA im2col corner outside [-128, 127]}}
  conv3d.conv ins(%x, %w : memref<1x4x8x8x64xbf16>, memref<64x1x1x1x64xbf16>) outs(%o : memref<1x4x137x8x64xbf16>) overwrite padding = [0, 0, 129, 0, 0, 0] filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 4, warps_m = 8, kernel = sm90>
  return
}

// -----

// "cannot lower": a width window dilated to span 257 pixels (corners at 0
// thanks to high padding 256) needs an im2col offset of 256: rank 5's
// offsets reach 31, rank 4's 255.
func.func @dilated_window_too_wide(%x: memref<1x4x8x20x64xbf16>, %w: memref<64x1x1x3x64xbf16>, %o: memref<1x4x8x20x64xbf16>) {
  // expected-error @below {{cannot lower #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 4, warps_m = 8, kernel = sm90> to the sm90 kernel: the dilated width window spans 257 pixels; TMA im2col offsets reach 31; per-depth-slice descriptors: the dilated width window spans 257 pixels; TMA im2col offsets reach 255}}
  conv3d.conv ins(%x, %w : memref<1x4x8x20x64xbf16>, memref<64x1x1x3x64xbf16>) outs(%o : memref<1x4x8x20x64xbf16>) overwrite dilations = [1, 1, 128] padding = [0, 0, 0, 0, 0, 256] filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 4, warps_m = 8, kernel = sm90>
  return
}

// -----

// "cannot lower": per-depth-slice descriptors (depth padding 20) view the
// input's depth slices as the images of a rank-4 tensor, image n's slice d
// at n * (batch stride / depth stride) + d; a batch stride of 4.5 depth
// strides has no such view.
func.func @slices_of_strided_batch(%x: memref<2x4x8x8x64xbf16, strided<[18432, 4096, 512, 64, 1]>>, %w: memref<64x1x1x1x64xbf16>, %o: memref<2x24x8x8x64xbf16>) {
  // expected-error @below {{cannot lower #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 4, warps_m = 8, kernel = sm90> to the sm90 kernel: per-depth-slice TMA descriptors need an input (and a history) whose batch stride is a multiple of its depth stride, at least its depth times it}}
  conv3d.conv ins(%x, %w : memref<2x4x8x8x64xbf16, strided<[18432, 4096, 512, 64, 1]>>, memref<64x1x1x1x64xbf16>) outs(%o : memref<2x24x8x8x64xbf16>) overwrite padding = [20, 0, 0, 0, 0, 0] filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 4, warps_m = 8, kernel = sm90>
  return
}

// -----

// "cannot lower": a stride of 9 (TMA's element strides go up to 8).
func.func @stride_9(%x: memref<1x4x8x18x64xbf16>, %w: memref<64x1x1x1x64xbf16>, %o: memref<1x4x8x2x64xbf16>) {
  // expected-error @below {{cannot lower #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 4, warps_m = 8, kernel = sm90> to the sm90 kernel: the width stride 9 exceeds TMA's element stride limit of 8}}
  conv3d.conv ins(%x, %w : memref<1x4x8x18x64xbf16>, memref<64x1x1x1x64xbf16>) outs(%o : memref<1x4x8x2x64xbf16>) overwrite strides = [1, 1, 9] filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 4, warps_m = 8, kernel = sm90>
  return
}

// -----

// "cannot lower": C = 68 bf16 channels are 136 bytes per pixel, not a
// multiple of TMA's 16-byte global stride granularity.
func.func @channels_not_16_bytes(%x: memref<1x4x8x8x68xbf16>, %w: memref<64x1x1x1x68xbf16>, %o: memref<1x4x8x8x64xbf16>) {
  // expected-error @below {{cannot lower #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 4, warps_m = 8, kernel = sm90> to the sm90 kernel: a pixel's 68 channels are not a multiple of 16 bytes (TMA's global stride granularity)}}
  conv3d.conv ins(%x, %w : memref<1x4x8x8x68xbf16>, memref<64x1x1x1x68xbf16>) outs(%o : memref<1x4x8x8x64xbf16>) overwrite filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 4, warps_m = 8, kernel = sm90>
  return
}

// -----

// "cannot lower": the input starts 4 elements (8 bytes) into its buffer;
// TMA reads from 16-byte-aligned addresses.
func.func @misaligned_input(%x: memref<1x4x8x8x64xbf16, strided<[16384, 4096, 512, 64, 1], offset: 4>>, %w: memref<64x1x1x1x64xbf16>, %o: memref<1x4x8x8x64xbf16>) {
  // expected-error @below {{cannot lower #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 4, warps_m = 8, kernel = sm90> to the sm90 kernel: TMA needs the input's and the filter's offsets and strides in multiples of 16 bytes}}
  conv3d.conv ins(%x, %w : memref<1x4x8x8x64xbf16, strided<[16384, 4096, 512, 64, 1], offset: 4>>, memref<64x1x1x1x64xbf16>) outs(%o : memref<1x4x8x8x64xbf16>) overwrite filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 4, warps_m = 8, kernel = sm90>
  return
}

// -----

// The same for the filter: rows of 68 elements (136 bytes).
func.func @misaligned_filter(%x: memref<1x4x8x8x64xbf16>, %w: memref<64x1x1x1x64xbf16, strided<[68, 68, 68, 68, 1]>>, %o: memref<1x4x8x8x64xbf16>) {
  // expected-error @below {{cannot lower #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 4, warps_m = 8, kernel = sm90> to the sm90 kernel: TMA needs the input's and the filter's offsets and strides in multiples of 16 bytes}}
  conv3d.conv ins(%x, %w : memref<1x4x8x8x64xbf16>, memref<64x1x1x1x64xbf16, strided<[68, 68, 68, 68, 1]>>) outs(%o : memref<1x4x8x8x64xbf16>) overwrite filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 4, warps_m = 8, kernel = sm90>
  return
}

// -----

// "cannot lower": tile_k must be one 64-channel TMA row.
func.func @tile_k_32(%x: memref<1x4x8x8x64xbf16>, %w: memref<64x1x1x1x64xbf16>, %o: memref<1x4x8x8x64xbf16>) {
  // expected-error @below {{cannot lower #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 32, stages = 4, warps_m = 8, kernel = sm90> to the sm90 kernel: tile_k must be 64 (one 128-byte TMA row of channels), got 32}}
  conv3d.conv ins(%x, %w : memref<1x4x8x8x64xbf16>, memref<64x1x1x1x64xbf16>) outs(%o : memref<1x4x8x8x64xbf16>) overwrite filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 32, stages = 4, warps_m = 8, kernel = sm90>
  return
}

// -----

// "cannot lower": two warp columns (wgmma covers the whole N tile).
func.func @warps_n_2(%x: memref<1x4x8x8x64xbf16>, %w: memref<64x1x1x1x64xbf16>, %o: memref<1x4x8x8x64xbf16>) {
  // expected-error @below {{cannot lower #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 4, warps_m = 4, warps_n = 2, kernel = sm90> to the sm90 kernel: the warp layout must be 4x1 or 8x1 (one or two consumer warpgroups), got 4x2}}
  conv3d.conv ins(%x, %w : memref<1x4x8x8x64xbf16>, memref<64x1x1x1x64xbf16>) outs(%o : memref<1x4x8x8x64xbf16>) overwrite filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 4, warps_m = 4, warps_n = 2, kernel = sm90>
  return
}

// -----

// "cannot lower": 2 warps are not a warpgroup.
func.func @warps_m_2(%x: memref<1x4x8x8x64xbf16>, %w: memref<64x1x1x1x64xbf16>, %o: memref<1x4x8x8x64xbf16>) {
  // expected-error @below {{cannot lower #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 4, warps_m = 2, kernel = sm90> to the sm90 kernel: the warp layout must be 4x1 or 8x1 (one or two consumer warpgroups), got 2x1}}
  conv3d.conv ins(%x, %w : memref<1x4x8x8x64xbf16>, memref<64x1x1x1x64xbf16>) outs(%o : memref<1x4x8x8x64xbf16>) overwrite filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 4, warps_m = 2, kernel = sm90>
  return
}

// -----

// "cannot lower": two consumer warpgroups need 128-row multiples.
func.func @tile_m_64_two_groups(%x: memref<1x4x8x8x64xbf16>, %w: memref<64x1x1x1x64xbf16>, %o: memref<1x4x8x8x64xbf16>) {
  // expected-error @below {{cannot lower #conv3d.igemm_config<tile_m = 64, tile_n = 64, tile_k = 64, stages = 4, warps_m = 8, kernel = sm90> to the sm90 kernel: tile_m = 64 must be a multiple of 128 (64 rows per wgmma per consumer warpgroup) and at most 256 (a TMA im2col box)}}
  conv3d.conv ins(%x, %w : memref<1x4x8x8x64xbf16>, memref<64x1x1x1x64xbf16>) outs(%o : memref<1x4x8x8x64xbf16>) overwrite filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 64, tile_n = 64, tile_k = 64, stages = 4, warps_m = 8, kernel = sm90>
  return
}

// -----

// "cannot lower": a 320-row tile is more than one TMA im2col box.
func.func @tile_m_320(%x: memref<1x4x8x8x64xbf16>, %w: memref<64x1x1x1x64xbf16>, %o: memref<1x4x8x8x64xbf16>) {
  // expected-error @below {{cannot lower #conv3d.igemm_config<tile_m = 320, tile_n = 64, tile_k = 64, stages = 4, warps_m = 4, kernel = sm90> to the sm90 kernel: tile_m = 320 must be a multiple of 64 (64 rows per wgmma per consumer warpgroup) and at most 256 (a TMA im2col box)}}
  conv3d.conv ins(%x, %w : memref<1x4x8x8x64xbf16>, memref<64x1x1x1x64xbf16>) outs(%o : memref<1x4x8x8x64xbf16>) overwrite filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 320, tile_n = 64, tile_k = 64, stages = 4, warps_m = 4, kernel = sm90>
  return
}

// -----

// "cannot lower": the ping-pong schedule gives a tile to one warpgroup of 4
// warps (two would be the cooperative schedule)...
func.func @pingpong_warps_m_8(%x: memref<1x4x8x8x64xbf16>, %w: memref<64x1x1x1x64xbf16>, %o: memref<1x4x8x8x64xbf16>) {
  // expected-error @below {{cannot lower #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 4, warps_m = 8, kernel = sm90, schedule = pingpong> to the sm90 kernel: the ping-pong schedule gives each tile one warpgroup: warps_m must be 4 and tile_m at most 128, got 8 and 128}}
  conv3d.conv ins(%x, %w : memref<1x4x8x8x64xbf16>, memref<64x1x1x1x64xbf16>) outs(%o : memref<1x4x8x8x64xbf16>) overwrite filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 4, warps_m = 8, kernel = sm90, schedule = pingpong>
  return
}

// -----

// ... of at most 128 rows (two m64 wgmmas).
func.func @pingpong_tile_m_256(%x: memref<1x4x8x8x64xbf16>, %w: memref<64x1x1x1x64xbf16>, %o: memref<1x4x8x8x64xbf16>) {
  // expected-error @below {{cannot lower #conv3d.igemm_config<tile_m = 256, tile_n = 64, tile_k = 64, stages = 3, warps_m = 4, kernel = sm90, schedule = pingpong> to the sm90 kernel: the ping-pong schedule gives each tile one warpgroup: warps_m must be 4 and tile_m at most 128, got 4 and 256}}
  conv3d.conv ins(%x, %w : memref<1x4x8x8x64xbf16>, memref<64x1x1x1x64xbf16>) outs(%o : memref<1x4x8x8x64xbf16>) overwrite filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 256, tile_n = 64, tile_k = 64, stages = 3, warps_m = 4, kernel = sm90, schedule = pingpong>
  return
}

// -----

// ... and not with split-K, whose kernel ptxas serializes (C7520).
func.func @pingpong_split_k(%x: memref<1x4x8x8x64xbf16>, %w: memref<64x3x3x3x64xbf16>, %o: memref<1x4x8x8x64xf32>) {
  // expected-error @below {{cannot lower #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 4, warps_m = 4, split_k = 2, kernel = sm90, schedule = pingpong> to the sm90 kernel: split_k > 1 with the ping-pong schedule: ptxas serializes the wgmmas of that kernel (C7520); use the cooperative schedule for split-K}}
  conv3d.conv ins(%x, %w : memref<1x4x8x8x64xbf16>, memref<64x3x3x3x64xbf16>) outs(%o : memref<1x4x8x8x64xf32>) overwrite padding = [1, 1, 1, 1, 1, 1] filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 4, warps_m = 4, split_k = 2, kernel = sm90, schedule = pingpong>
  return
}

// -----

// "cannot lower": tile_n = 20 is not a multiple of wgmma's N granularity 8.
func.func @tile_n_20(%x: memref<1x4x8x8x64xbf16>, %w: memref<20x1x1x1x64xbf16>, %o: memref<1x4x8x8x20xbf16>) {
  // expected-error @below {{cannot lower #conv3d.igemm_config<tile_m = 128, tile_n = 20, tile_k = 64, stages = 4, warps_m = 8, kernel = sm90> to the sm90 kernel: tile_n = 20 must be a multiple of 8 up to 256 (one wgmma covers the N tile)}}
  conv3d.conv ins(%x, %w : memref<1x4x8x8x64xbf16>, memref<20x1x1x1x64xbf16>) outs(%o : memref<1x4x8x8x20xbf16>) overwrite filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 128, tile_n = 20, tile_k = 64, stages = 4, warps_m = 8, kernel = sm90>
  return
}

// -----

// "cannot lower": tile_n = 264 is wider than one wgmma (256).
func.func @tile_n_264(%x: memref<1x4x8x8x64xbf16>, %w: memref<264x1x1x1x64xbf16>, %o: memref<1x4x8x8x264xbf16>) {
  // expected-error @below {{cannot lower #conv3d.igemm_config<tile_m = 128, tile_n = 264, tile_k = 64, stages = 2, warps_m = 8, kernel = sm90> to the sm90 kernel: tile_n = 264 must be a multiple of 8 up to 256 (one wgmma covers the N tile)}}
  conv3d.conv ins(%x, %w : memref<1x4x8x8x64xbf16>, memref<264x1x1x1x64xbf16>) outs(%o : memref<1x4x8x8x264xbf16>) overwrite filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 128, tile_n = 264, tile_k = 64, stages = 2, warps_m = 8, kernel = sm90>
  return
}

// -----

// "cannot lower": one stage (the attribute's default) is no ring.
func.func @one_stage(%x: memref<1x4x8x8x64xbf16>, %w: memref<64x1x1x1x64xbf16>, %o: memref<1x4x8x8x64xbf16>) {
  // expected-error @below {{cannot lower #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, warps_m = 8, kernel = sm90> to the sm90 kernel: needs at least 2 stages, got 1}}
  conv3d.conv ins(%x, %w : memref<1x4x8x8x64xbf16>, memref<64x1x1x1x64xbf16>) outs(%o : memref<1x4x8x8x64xbf16>) overwrite filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, warps_m = 8, kernel = sm90>
  return
}

// -----

// "cannot lower": 6 stages of 256x64 + 256x64 bf16 tiles are 393216 bytes
// before the staging (in four 64-column chunks, 256 x 68 x 4 = 69632
// bytes), the 12 mbarriers and the alignment slack: 463968 bytes.
func.func @too_much_shared_memory(%x: memref<1x4x8x8x64xbf16>, %w: memref<256x1x1x1x64xbf16>, %o: memref<1x4x8x8x256xbf16>) {
  // expected-error @below {{cannot lower #conv3d.igemm_config<tile_m = 256, tile_n = 256, tile_k = 64, stages = 6, warps_m = 8, kernel = sm90> to the sm90 kernel: 6 stages of 256x64 and 256x64 tiles (393216 bytes) and the epilogue's staging (69632 bytes) need 463968 bytes of shared memory; an H100 block has 232448}}
  conv3d.conv ins(%x, %w : memref<1x4x8x8x64xbf16>, memref<256x1x1x1x64xbf16>) outs(%o : memref<1x4x8x8x256xbf16>) overwrite filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 256, tile_n = 256, tile_k = 64, stages = 6, warps_m = 8, kernel = sm90>
  return
}

// -----

// The output's strides must be static (the epilogue addresses it as a flat
// view).
func.func @output_dynamic_strides(%x: memref<1x4x8x8x64xbf16>, %w: memref<64x1x1x1x64xbf16>, %o: memref<1x4x8x8x64xbf16, strided<[?, ?, ?, ?, 1]>>) {
  // expected-error @below {{sm90 needs operands with static strides}}
  conv3d.conv ins(%x, %w : memref<1x4x8x8x64xbf16>, memref<64x1x1x1x64xbf16>) outs(%o : memref<1x4x8x8x64xbf16, strided<[?, ?, ?, ?, 1]>>) overwrite filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 4, warps_m = 8, kernel = sm90>
  return
}

// -----

// The same when the filter's (q, r, s, c) dimensions do not collapse into
// one K dimension (r has stride 256 instead of S * C = 192).
func.func @filter_not_contiguous(%x: memref<1x4x8x8x64xbf16>, %w: memref<64x1x3x3x64xbf16, strided<[768, 768, 256, 64, 1]>>, %o: memref<1x4x6x6x64xbf16>) {
  // expected-error @below {{sm90 needs operands with static strides}}
  conv3d.conv ins(%x, %w : memref<1x4x8x8x64xbf16>, memref<64x1x3x3x64xbf16, strided<[768, 768, 256, 64, 1]>>) outs(%o : memref<1x4x6x6x64xbf16>) overwrite filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 4, warps_m = 8, kernel = sm90>
  return
}

// -----

// "cannot lower": M = 2^31 output rows do not fit the kernel's i32 rows.
func.func @rows_too_many(%x: memref<1x2048x1024x1024x64xbf16>, %w: memref<64x1x1x1x64xbf16>, %o: memref<1x2048x1024x1024x64xbf16>) {
  // expected-error @below {{cannot lower #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 4, warps_m = 8, kernel = sm90> to the sm90 kernel: 16777216 tiles or M = 2147483648 do not fit 31 bits}}
  conv3d.conv ins(%x, %w : memref<1x2048x1024x1024x64xbf16>, memref<64x1x1x1x64xbf16>) outs(%o : memref<1x2048x1024x1024x64xbf16>) overwrite filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 4, warps_m = 8, kernel = sm90>
  return
}

// -----

// conv3d-implicit-gemm=target=sm90: split-K partial sums need the flat K
// order (the conv verifier accepts the combination).
func.func @split_k_with_qslice_outer(%x: memref<1x6x8x8x64xbf16>, %w: memref<64x3x1x1x64xbf16>, %o: memref<1x4x8x8x64xbf16>) {
  // expected-error @below {{conv3d-implicit-gemm cannot tile this convolution: split_k > 1 needs k_order = taps_outer}}
  conv3d.conv ins(%x, %w : memref<1x6x8x8x64xbf16>, memref<64x3x1x1x64xbf16>) outs(%o : memref<1x4x8x8x64xbf16>) overwrite filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 4, warps_m = 8, k_order = qslice_outer, split_k = 2, kernel = sm90>
  return
}

// -----

// "cannot lower": a cluster's two blocks take halves of the filter tile,
// each of whole 8-row swizzle atoms.
func.func @cluster_tile_n(%x: memref<1x4x8x8x64xbf16>, %w: memref<40x3x3x3x64xbf16>, %o: memref<1x4x8x8x40xbf16>) {
  // expected-error @below {{cannot lower #conv3d.igemm_config<tile_m = 128, tile_n = 40, tile_k = 64, stages = 4, warps_m = 8, kernel = sm90, cluster_m = 2> to the sm90 kernel: cluster_m = 2 splits the filter tile in two halves of whole 8-row swizzle atoms: tile_n = 40 must be a multiple of 16}}
  conv3d.conv ins(%x, %w : memref<1x4x8x8x64xbf16>, memref<40x3x3x3x64xbf16>) outs(%o : memref<1x4x8x8x40xbf16>) overwrite padding = [1, 1, 1, 1, 1, 1] filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 128, tile_n = 40, tile_k = 64, stages = 4, warps_m = 8, kernel = sm90, cluster_m = 2>
  return
}

// -----

// "cannot lower": both blocks of a cluster run the same K steps, which
// qslice_outer's halo skipping makes depend on the M tile.
func.func @cluster_qslice_outer(%x: memref<1x6x8x8x64xbf16>, %w: memref<64x3x3x3x64xbf16>, %o: memref<1x6x8x8x64xbf16>) {
  // expected-error @below {{cannot lower #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 4, warps_m = 8, k_order = qslice_outer, kernel = sm90, cluster_m = 2> to the sm90 kernel: cluster_m = 2 needs k_order = taps_outer (both blocks of a cluster run the same K steps)}}
  conv3d.conv ins(%x, %w : memref<1x6x8x8x64xbf16>, memref<64x3x3x3x64xbf16>) outs(%o : memref<1x6x8x8x64xbf16>) overwrite padding = [2, 0, 1, 1, 1, 1] filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 4, warps_m = 8, k_order = qslice_outer, kernel = sm90, cluster_m = 2>
  return
}
