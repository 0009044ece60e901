// conv3d-implicit-gemm: memref convolutions become an scf.forall grid of
// (M tile, N tile) (and split-K) iterations whose body loops over K tiles
// with the tile ops. Errors: implicit-gemm-invalid.mlir.
//
// RUN: conv3d-opt %s -split-input-file -conv3d-implicit-gemm | FileCheck %s
// RUN: conv3d-opt %s -split-input-file -conv3d-implicit-gemm=target=sm80 | FileCheck %s --check-prefix=SM80

// A causal bf16 3x3x3 convolution with bias, residual and silu, tiled by the
// config on the op: M = 6*8*8 = 384 rows in 6 tiles of 64, F = 32 in 2 tiles
// of 16, K = 27*16 = 432 in 14 tiles of 32 (the last one partial, cut by
// `limit`).

// CHECK-LABEL: func.func @causal_bf16
// CHECK-SAME: (%[[X:.*]]: memref<1x6x8x8x16xbf16>, %[[W:.*]]: memref<3x3x3x16x32xbf16>, %[[B:.*]]: memref<32xf32>, %[[R:.*]]: memref<1x6x8x8x32xbf16>, %[[O:.*]]: memref<1x6x8x8x32xbf16>)
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C14:.*]] = arith.constant 14 : index
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : index
// CHECK-DAG: %[[C32:.*]] = arith.constant 32 : index
// CHECK-DAG: %[[C64:.*]] = arith.constant 64 : index
// CHECK-DAG: %[[K:.*]] = arith.constant 432 : index
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: scf.forall (%[[TM:.*]], %[[TN:.*]]) in (6, 2) {
// CHECK-NEXT: %[[M0:.*]] = arith.muli %[[TM]], %[[C64]] : index
// CHECK-NEXT: %[[N0:.*]] = arith.muli %[[TN]], %[[C16]] : index
// CHECK-NEXT: %[[A:.*]] = memref.alloc() : memref<64x32xbf16>
// CHECK-NEXT: %[[BT:.*]] = memref.alloc() : memref<32x16xbf16>
// CHECK-NEXT: %[[ACC:.*]] = memref.alloc() : memref<64x16xf32>
// CHECK-NEXT: linalg.fill ins(%[[ZERO]] : f32) outs(%[[ACC]] : memref<64x16xf32>)
// CHECK-NEXT: scf.for %[[KT:.*]] = %[[C0]] to %[[C14]] step %[[C1]] {
// CHECK-NEXT: %[[K0:.*]] = arith.muli %[[KT]], %[[C32]] : index
// CHECK-NEXT: conv3d.load_im2col_tile %[[X]][%[[M0]], %[[K0]]] limit %[[K]] into %[[A]] window = [3, 3, 3] padding = [2, 0, 1, 1, 1, 1] : memref<1x6x8x8x16xbf16>, memref<64x32xbf16>
// CHECK-NEXT: conv3d.load_filter_tile %[[W]][%[[K0]], %[[N0]]] limit %[[K]] into %[[BT]] : memref<3x3x3x16x32xbf16>, memref<32x16xbf16>
// CHECK-NEXT: conv3d.tile_mma %[[A]], %[[BT]], %[[ACC]] : memref<64x32xbf16>, memref<32x16xbf16>, memref<64x16xf32>
// CHECK-NEXT: }
// CHECK-NEXT: conv3d.store_output_tile %[[ACC]] into %[[O]][%[[M0]], %[[N0]]] bias(%[[B]] : memref<32xf32>) residual(%[[R]] : memref<1x6x8x8x32xbf16>) mode = overwrite activation = silu : memref<64x16xf32>, memref<1x6x8x8x32xbf16>
// CHECK-NEXT: memref.dealloc %[[A]] : memref<64x32xbf16>
// CHECK-NEXT: memref.dealloc %[[BT]] : memref<32x16xbf16>
// CHECK-NEXT: memref.dealloc %[[ACC]] : memref<64x16xf32>
// CHECK-NEXT: } {conv3d.igemm_config = #conv3d.igemm_config<tile_m = 64, tile_n = 16, tile_k = 32>}
// CHECK-NOT: conv3d.conv
// CHECK: return
// The config on the op wins over the target's heuristic.
// SM80-LABEL: func.func @causal_bf16
// SM80: scf.forall ({{.*}}) in (6, 2)
// SM80: } {conv3d.igemm_config = #conv3d.igemm_config<tile_m = 64, tile_n = 16, tile_k = 32>}
func.func @causal_bf16(%x: memref<1x6x8x8x16xbf16>, %w: memref<3x3x3x16x32xbf16>, %b: memref<32xf32>, %r: memref<1x6x8x8x32xbf16>, %o: memref<1x6x8x8x32xbf16>) {
  conv3d.conv ins(%x, %w : memref<1x6x8x8x16xbf16>, memref<3x3x3x16x32xbf16>) bias(%b : memref<32xf32>) residual(%r : memref<1x6x8x8x32xbf16>) outs(%o : memref<1x6x8x8x32xbf16>) overwrite padding = [2, 0, 1, 1, 1, 1] activation = silu config = #conv3d.igemm_config<tile_m = 64, tile_n = 16, tile_k = 32>
  return
}

// -----

// Without a config the target's heuristic picks one (CPU: 64 x 16 x 64; sm80:
// 64 x 16 x 32). A conv without `overwrite` accumulates onto its
// destination. Strides, dilations, padding and the FQRSC layout reach the
// tile loads. M = 2*4*3*3 = 72, K = 27*8 = 216.

// CHECK-LABEL: func.func @accumulate_strided_fqrsc
// CHECK-SAME: (%[[X:.*]]: memref<2x9x9x9x8xf32>, %[[W:.*]]: memref<16x3x3x3x8xf32>, %[[O:.*]]: memref<2x4x3x3x16xf32>)
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[K:.*]] = arith.constant 216 : index
// CHECK: scf.forall (%{{.*}}, %{{.*}}) in (2, 1) {
// CHECK: memref.alloc() : memref<64x64xf32>
// CHECK: memref.alloc() : memref<64x16xf32>
// CHECK: memref.alloc() : memref<64x16xf32>
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[C4]] step
// CHECK: conv3d.load_im2col_tile %[[X]][%{{.*}}, %{{.*}}] limit %[[K]] into %{{.*}} window = [3, 3, 3] strides = [2, 3, 3] dilations = [1, 2, 2] padding = [1, 0, 1, 1, 1, 1] : memref<2x9x9x9x8xf32>, memref<64x64xf32>
// CHECK: conv3d.load_filter_tile %[[W]][%{{.*}}, %{{.*}}] limit %[[K]] into %{{.*}} filter_layout = fqrsc : memref<16x3x3x3x8xf32>, memref<64x16xf32>
// CHECK: conv3d.store_output_tile %{{.*}} into %[[O]][%{{.*}}, %{{.*}}] mode = accumulate : memref<64x16xf32>, memref<2x4x3x3x16xf32>
// CHECK: } {conv3d.igemm_config = #conv3d.igemm_config<tile_m = 64, tile_n = 16, tile_k = 64>}
// SM80-LABEL: func.func @accumulate_strided_fqrsc
// SM80: scf.forall ({{.*}}) in (2, 1)
// SM80: memref.alloc() : memref<64x32xf32>
// SM80: } {conv3d.igemm_config = #conv3d.igemm_config<tile_m = 64, tile_n = 16, tile_k = 32, stages = 4, warps_m = 2>}
func.func @accumulate_strided_fqrsc(%x: memref<2x9x9x9x8xf32>, %w: memref<16x3x3x3x8xf32>, %o: memref<2x4x3x3x16xf32>) {
  conv3d.conv ins(%x, %w : memref<2x9x9x9x8xf32>, memref<16x3x3x3x8xf32>) outs(%o : memref<2x4x3x3x16xf32>) strides = [2, 3, 3] dilations = [1, 2, 2] padding = [1, 0, 1, 1, 1, 1] filter_layout = fqrsc
  return
}

// -----

// A quantized conv: the im2col tile load quantizes its rows.

// CHECK-LABEL: func.func @quantized
// CHECK-SAME: %[[AMAX:[^:]*]]: f32
// CHECK: conv3d.load_im2col_tile %{{.*}}[%{{.*}}, %{{.*}}] limit %{{.*}} into %{{.*}} quantize(#conv3d.nvfp4<block_size = 16>, %[[AMAX]]) window = [1, 1, 1] : memref<1x4x4x4x16xbf16>, memref<64x16xbf16>
// CHECK: conv3d.load_filter_tile
// CHECK-NOT: quantize
// CHECK: conv3d.store_output_tile
func.func @quantized(%x: memref<1x4x4x4x16xbf16>, %w: memref<1x1x1x16x8xbf16>, %amax: f32, %o: memref<1x4x4x4x8xf32>) {
  conv3d.conv ins(%x, %w : memref<1x4x4x4x16xbf16>, memref<1x1x1x16x8xbf16>) quantize(#conv3d.nvfp4<block_size = 16>, %amax) outs(%o : memref<1x4x4x4x8xf32>)
  return
}

// -----

// k_order = qslice_outer: one K loop per depth slice q, over the slice's
// R*S*C = 16 columns [16q, 16q + 16), guarded by whether the M tile has an
// output depth in the slice's valid range. Depth padding 3 over 2 input
// depths: slice 0 reads only the halo and is not emitted; slice 1 covers
// output depths [2, 3), slice 2 [1, 3).

// CHECK-LABEL: func.func @qslice_outer
// CHECK-SAME: (%[[X:.*]]: memref<1x2x4x4x16xf32>, %[[W:.*]]: memref<3x1x1x16x8xf32>, %[[O:.*]]: memref<1x3x4x4x8xf32>)
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[C3:.*]] = arith.constant 3 : index
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : index
// CHECK-DAG: %[[C32:.*]] = arith.constant 32 : index
// CHECK-DAG: %[[C48:.*]] = arith.constant 48 : index
// CHECK: scf.forall (%[[TM:.*]], %{{.*}}) in (3, 1) {
// CHECK: %[[M0:.*]] = arith.muli %[[TM]], %[[C16]] : index
// CHECK: linalg.fill
// Slice 1: some row of the tile has an output depth in [2, 3).
// CHECK: %[[FIRST_BEFORE_END1:.*]] = arith.cmpi ult, %{{.*}}, %[[C3]] : index
// CHECK-NEXT: %[[LAST_AFTER_START1:.*]] = arith.cmpi uge, %{{.*}}, %[[C2]] : index
// CHECK-NEXT: %[[OVERLAP1:.*]] = arith.andi %[[FIRST_BEFORE_END1]], %[[LAST_AFTER_START1]] : i1
// CHECK-NEXT: %[[ACTIVE1:.*]] = arith.ori %{{.*}}, %[[OVERLAP1]] : i1
// CHECK-NEXT: scf.if %[[ACTIVE1]] {
// CHECK-NEXT: scf.for %[[KT1:.*]] = %[[C0]] to %[[C1]] step %[[C1]] {
// CHECK-NEXT: %[[KK1:.*]] = arith.muli %[[KT1]], %[[C16]] : index
// CHECK-NEXT: %[[K01:.*]] = arith.addi %[[KK1]], %[[C16]] : index
// CHECK-NEXT: conv3d.load_im2col_tile %[[X]][%[[M0]], %[[K01]]] limit %[[C32]] into %{{.*}} window = [3, 1, 1] padding = [3, 0, 0, 0, 0, 0]
// CHECK-NEXT: conv3d.load_filter_tile %[[W]][%[[K01]], %{{.*}}] limit %[[C32]]
// CHECK-NEXT: conv3d.tile_mma
// CHECK-NEXT: }
// CHECK-NEXT: }
// Slice 2: output depths [1, 3).
// CHECK: %[[FIRST_BEFORE_END2:.*]] = arith.cmpi ult, %{{.*}}, %[[C3]] : index
// CHECK-NEXT: %[[LAST_AFTER_START2:.*]] = arith.cmpi uge, %{{.*}}, %[[C1]] : index
// CHECK-NEXT: %[[OVERLAP2:.*]] = arith.andi %[[FIRST_BEFORE_END2]], %[[LAST_AFTER_START2]] : i1
// CHECK-NEXT: %[[ACTIVE2:.*]] = arith.ori %{{.*}}, %[[OVERLAP2]] : i1
// CHECK-NEXT: scf.if %[[ACTIVE2]] {
// CHECK-NEXT: scf.for %[[KT2:.*]] = %[[C0]] to %[[C1]] step %[[C1]] {
// CHECK-NEXT: %[[KK2:.*]] = arith.muli %[[KT2]], %[[C16]] : index
// CHECK-NEXT: %[[K02:.*]] = arith.addi %[[KK2]], %[[C32]] : index
// CHECK-NEXT: conv3d.load_im2col_tile %[[X]][%[[M0]], %[[K02]]] limit %[[C48]] into
// CHECK-NEXT: conv3d.load_filter_tile %[[W]][%[[K02]], %{{.*}}] limit %[[C48]]
// CHECK-NEXT: conv3d.tile_mma
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NOT: scf.if
// CHECK: conv3d.store_output_tile %{{.*}} into %[[O]][%[[M0]], %{{.*}}] mode = accumulate
// CHECK: } {conv3d.igemm_config = #conv3d.igemm_config<tile_m = 16, tile_n = 8, tile_k = 16, k_order = qslice_outer>}
func.func @qslice_outer(%x: memref<1x2x4x4x16xf32>, %w: memref<3x1x1x16x8xf32>, %o: memref<1x3x4x4x8xf32>) {
  conv3d.conv ins(%x, %w : memref<1x2x4x4x16xf32>, memref<3x1x1x16x8xf32>) outs(%o : memref<1x3x4x4x8xf32>) padding = [3, 0, 0, 0, 0, 0] config = #conv3d.igemm_config<tile_m = 16, tile_n = 8, tile_k = 16, k_order = qslice_outer>
  return
}

// -----

// qslice_outer on a causal conv where every slice contributes: three guarded
// loops, each over ceil(R*S*C / tile_k) = ceil(144 / 64) = 3 K tiles.

// CHECK-LABEL: func.func @qslice_outer_all_slices
// CHECK-DAG: %[[C3:.*]] = arith.constant 3 : index
// CHECK-DAG: %[[C144:.*]] = arith.constant 144 : index
// CHECK-DAG: %[[C288:.*]] = arith.constant 288 : index
// CHECK-DAG: %[[C432:.*]] = arith.constant 432 : index
// CHECK: scf.forall
// CHECK-COUNT-3: scf.if
// CHECK-NOT: scf.if
// CHECK: conv3d.store_output_tile
// CHECK: scf.forall
// CHECK: scf.if
// CHECK-NEXT: scf.for %{{.*}} = %{{.*}} to %[[C3]]
// CHECK: conv3d.load_im2col_tile {{.*}} limit %[[C144]]
// CHECK: scf.if
// CHECK-NEXT: scf.for %{{.*}} = %{{.*}} to %[[C3]]
// CHECK: conv3d.load_im2col_tile {{.*}} limit %[[C288]]
// CHECK: scf.if
// CHECK-NEXT: scf.for %{{.*}} = %{{.*}} to %[[C3]]
// CHECK: conv3d.load_im2col_tile {{.*}} limit %[[C432]]
func.func @qslice_outer_all_slices(%x: memref<1x6x8x8x16xbf16>, %w: memref<3x3x3x16x32xbf16>, %o: memref<1x6x8x8x32xbf16>) {
  conv3d.conv ins(%x, %w : memref<1x6x8x8x16xbf16>, memref<3x3x3x16x32xbf16>) outs(%o : memref<1x6x8x8x32xbf16>) overwrite padding = [2, 0, 1, 1, 1, 1] config = #conv3d.igemm_config<tile_m = 64, tile_n = 32, tile_k = 64, k_order = qslice_outer>
  // The same conv twice: the checks count the guarded loops of the first
  // grid, then look at each slice of the second.
  conv3d.conv ins(%x, %w : memref<1x6x8x8x16xbf16>, memref<3x3x3x16x32xbf16>) outs(%o : memref<1x6x8x8x32xbf16>) overwrite padding = [2, 0, 1, 1, 1, 1] config = #conv3d.igemm_config<tile_m = 64, tile_n = 32, tile_k = 64, k_order = qslice_outer>
  return
}

// -----

// qslice_outer where every tap of every output depth reads depth padding
// (2 input depths, dilation 3, padding 4 on both sides): no slice has a
// valid range, so the kernel keeps one flat K loop over all of K = 48 (the
// loads read zeros) instead of a grid without tile ops.

// CHECK-LABEL: func.func @qslice_outer_only_halo
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C3:.*]] = arith.constant 3 : index
// CHECK-DAG: %[[C48:.*]] = arith.constant 48 : index
// CHECK: scf.forall
// CHECK-NOT: scf.if
// CHECK: scf.for %{{.*}} = %[[C0]] to %[[C3]]
// CHECK: conv3d.load_im2col_tile {{.*}} limit %[[C48]]
// CHECK: conv3d.tile_mma
// CHECK: conv3d.store_output_tile
func.func @qslice_outer_only_halo(%x: memref<1x2x4x4x16xf32>, %w: memref<3x1x1x16x8xf32>, %o: memref<1x2x4x4x8xf32>) {
  conv3d.conv ins(%x, %w : memref<1x2x4x4x16xf32>, memref<3x1x1x16x8xf32>) outs(%o : memref<1x2x4x4x8xf32>) overwrite strides = [3, 1, 1] dilations = [3, 1, 1] padding = [4, 4, 0, 0, 0, 0] config = #conv3d.igemm_config<tile_m = 16, tile_n = 8, tile_k = 16, k_order = qslice_outer>
  return
}

// -----

// split_k = 2: a third grid dimension for the split, each split's partial
// sums stored into its own slab of an f32 workspace (no zeroing, no
// atomics), and one conv3d.epilogue after the grid that adds the slabs in
// order and applies the bias and activation. K = 27*16 = 432 is 7 tiles of
// 64; split s takes tiles [4s, min(4s + 4, 7)).

// CHECK-LABEL: func.func @split_k
// CHECK-SAME: (%[[X:.*]]: memref<1x4x4x4x16xbf16>, %[[W:.*]]: memref<3x3x3x16x8xbf16>, %[[B:.*]]: memref<8xf32>, %[[O:.*]]: memref<1x2x2x2x8xbf16>)
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[C7:.*]] = arith.constant 7 : index
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[WS:.*]] = memref.alloc() : memref<2x1x2x2x2x8xf32>
// CHECK-NOT: linalg.fill {{.*}}outs(%[[WS]]
// CHECK: scf.forall (%[[S:.*]], %[[TM:.*]], %[[TN:.*]]) in (2, 1, 1) {
// CHECK: %[[BEGIN:.*]] = arith.muli %[[S]], %[[C4]] : index
// CHECK-NEXT: %[[NEXT:.*]] = arith.addi %[[BEGIN]], %[[C4]] : index
// CHECK-NEXT: %[[END:.*]] = arith.minui %[[NEXT]], %[[C7]] : index
// CHECK-NEXT: scf.for %{{.*}} = %[[BEGIN]] to %[[END]] step
// CHECK: conv3d.store_output_tile %{{.*}} into %[[WS]][%{{.*}}, %{{.*}}] split(%[[S]]) mode = partial : memref<8x8xf32>, memref<2x1x2x2x2x8xf32>
// CHECK: } {conv3d.igemm_config = #conv3d.igemm_config<tile_m = 8, tile_n = 8, tile_k = 64, split_k = 2>}
// CHECK-NEXT: conv3d.epilogue ins(%[[WS]] : memref<2x1x2x2x2x8xf32>) bias(%[[B]] : memref<8xf32>) outs(%[[O]] : memref<1x2x2x2x8xbf16>) overwrite activation = relu
// CHECK-NEXT: memref.dealloc %[[WS]] : memref<2x1x2x2x2x8xf32>
func.func @split_k(%x: memref<1x4x4x4x16xbf16>, %w: memref<3x3x3x16x8xbf16>, %b: memref<8xf32>, %o: memref<1x2x2x2x8xbf16>) {
  conv3d.conv ins(%x, %w : memref<1x4x4x4x16xbf16>, memref<3x3x3x16x8xbf16>) bias(%b : memref<8xf32>) outs(%o : memref<1x2x2x2x8xbf16>) overwrite activation = relu config = #conv3d.igemm_config<tile_m = 8, tile_n = 8, tile_k = 64, split_k = 2>
  return
}

// -----

// split_k on an accumulating conv with a residual: the epilogue after the
// grid accumulates onto the destination (no `overwrite`).

// CHECK-LABEL: func.func @split_k_accumulate
// CHECK-SAME: %[[R:[^:]*]]: memref<1x2x2x2x8xf32>, %[[O:[^:]*]]: memref<1x2x2x2x8xf32>)
// CHECK: %[[WS:.*]] = memref.alloc() : memref<3x1x2x2x2x8xf32>
// CHECK: scf.forall ({{.*}}) in (3, 1, 1)
// CHECK: conv3d.store_output_tile %{{.*}} into %[[WS]][{{.*}}] split({{.*}}) mode = partial :
// CHECK: conv3d.epilogue ins(%[[WS]] : memref<3x1x2x2x2x8xf32>) residual(%[[R]] : memref<1x2x2x2x8xf32>) outs(%[[O]] : memref<1x2x2x2x8xf32>){{$}}
func.func @split_k_accumulate(%x: memref<1x4x4x4x16xbf16>, %w: memref<3x3x3x16x8xbf16>, %r: memref<1x2x2x2x8xf32>, %o: memref<1x2x2x2x8xf32>) {
  conv3d.conv ins(%x, %w : memref<1x4x4x4x16xbf16>, memref<3x3x3x16x8xbf16>) residual(%r : memref<1x2x2x2x8xf32>) outs(%o : memref<1x2x2x2x8xf32>) config = #conv3d.igemm_config<tile_m = 8, tile_n = 8, tile_k = 64, split_k = 3>
  return
}

// -----

// split_k larger than the number of K tiles is clamped to it: with one K
// tile there is no split at all (2-D grid, no workspace, fused epilogue).

// CHECK-LABEL: func.func @split_k_clamped
// CHECK-NOT: memref.alloc() : memref<1x4x4x4x8xf32>
// CHECK: scf.forall (%{{.*}}, %{{.*}}) in (2, 1) {
// CHECK: conv3d.store_output_tile {{.*}} mode = overwrite activation = relu
// CHECK-NOT: conv3d.epilogue
func.func @split_k_clamped(%x: memref<1x4x4x4x16xf32>, %w: memref<1x1x1x16x8xf32>, %o: memref<1x4x4x4x8xf32>) {
  conv3d.conv ins(%x, %w : memref<1x4x4x4x16xf32>, memref<1x1x1x16x8xf32>) outs(%o : memref<1x4x4x4x8xf32>) overwrite activation = relu config = #conv3d.igemm_config<tile_m = 32, tile_n = 8, tile_k = 16, split_k = 4>
  return
}

// -----

// Several memref convolutions in one function each get their grid.

// CHECK-LABEL: func.func @two_convs
// CHECK-COUNT-2: scf.forall
// CHECK-NOT: conv3d.conv
func.func @two_convs(%x: memref<1x4x4x4x16xf32>, %w: memref<1x1x1x16x8xf32>, %o: memref<1x4x4x4x8xf32>, %o2: memref<1x4x4x4x8xf32>) {
  conv3d.conv ins(%x, %w : memref<1x4x4x4x16xf32>, memref<1x1x1x16x8xf32>) outs(%o : memref<1x4x4x4x8xf32>) overwrite
  conv3d.conv ins(%x, %w : memref<1x4x4x4x16xf32>, memref<1x1x1x16x8xf32>) outs(%o2 : memref<1x4x4x4x8xf32>)
  return
}
