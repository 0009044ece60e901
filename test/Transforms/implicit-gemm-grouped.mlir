// conv3d-implicit-gemm on a grouped convolution: the grid gains a group
// dimension (after split-K's); each iteration's tile ops read views of its
// group's input channels and filters and write its group's output columns
// (bias and residual sliced along F with them), i.e. a dense convolution of
// C/G channels and F/G filters. On GPU targets the sm80 kernel takes groups
// of multiples of 8 channels and filters (lower-to-sm80-grouped.mlir) and
// refuses others with its reason.
//
// RUN: conv3d-opt %s -split-input-file -conv3d-implicit-gemm | FileCheck %s
// RUN: not conv3d-opt %s -split-input-file -conv3d-implicit-gemm=target=sm80 2>&1 | FileCheck %s --check-prefix=SM80

// 4 groups of 2 channels and 3 filters: K = 27*2 = 54 per group in 4 tiles
// of 16, M = 144 in 5 tiles of 32, N = 3 in one tile.
// CHECK-LABEL: func.func @grouped
// CHECK-SAME: (%[[X:.*]]: memref<1x4x6x6x8xbf16>, %[[W:.*]]: memref<3x3x3x2x12xbf16>, %[[B:.*]]: memref<12xf32>, %[[O:.*]]: memref<1x4x6x6x12xbf16>)
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[C3:.*]] = arith.constant 3 : index
// CHECK-DAG: %[[K:.*]] = arith.constant 54 : index
// CHECK: scf.forall (%[[G:.*]], %[[TM:.*]], %[[TN:.*]]) in (4, 5, 1) {
// CHECK-NEXT: %[[C0:.*]] = arith.muli %[[G]], %[[C2]] : index
// CHECK-NEXT: %[[F0:.*]] = arith.muli %[[G]], %[[C3]] : index
// CHECK-NEXT: %[[XG:.*]] = memref.subview %[[X]][0, 0, 0, 0, %[[C0]]] [1, 4, 6, 6, 2] [1, 1, 1, 1, 1]
// CHECK-NEXT: %[[WG:.*]] = memref.subview %[[W]][0, 0, 0, 0, %[[F0]]] [3, 3, 3, 2, 3] [1, 1, 1, 1, 1]
// CHECK-NEXT: %[[BG:.*]] = memref.subview %[[B]][%[[F0]]] [3] [1]
// CHECK-NEXT: %[[OG:.*]] = memref.subview %[[O]][0, 0, 0, 0, %[[F0]]] [1, 4, 6, 6, 3] [1, 1, 1, 1, 1]
// CHECK: conv3d.load_im2col_tile %[[XG]][%{{.*}}, %{{.*}}] limit %[[K]] into
// CHECK: conv3d.load_filter_tile %[[WG]][%{{.*}}, %{{.*}}] limit %[[K]] into
// CHECK: conv3d.store_output_tile %{{.*}} into %[[OG]][%{{.*}}, %{{.*}}] bias(%[[BG]] : memref<3xf32, strided<[1], offset: ?>>) mode = overwrite
// CHECK: } {conv3d.igemm_config = #conv3d.igemm_config<tile_m = 32, tile_n = 3, tile_k = 16>}
// SM80: error: conv3d-implicit-gemm cannot tile this convolution: the sm80 kernel cannot take it: it is a grouped convolution (groups = 4) of 2 input channels per group, and the sm80 kernel takes groups of a multiple of 8 input channels (16-byte vectors of each group's slice; the depthwise kernel takes the others)
func.func @grouped(%x: memref<1x4x6x6x8xbf16>, %w: memref<3x3x3x2x12xbf16>, %b: memref<12xf32>, %o: memref<1x4x6x6x12xbf16>) {
  conv3d.conv ins(%x, %w : memref<1x4x6x6x8xbf16>, memref<3x3x3x2x12xbf16>) bias(%b : memref<12xf32>) outs(%o : memref<1x4x6x6x12xbf16>) overwrite padding = [1, 1, 1, 1, 1, 1] groups = 4 config = #conv3d.igemm_config<tile_m = 32, tile_n = 3, tile_k = 16>
  return
}

// -----

// Split-K: the grid is (split, group, M tile, N tile); each split writes its
// group's columns of its workspace slab, and one conv3d.epilogue adds them.
// CHECK-LABEL: func.func @grouped_split
// CHECK: %[[WS:.*]] = memref.alloc() : memref<2x1x4x4x4x4xf32>
// CHECK: scf.forall (%[[S:.*]], %[[G:.*]], %{{.*}}, %{{.*}}) in (2, 2, 2, 1) {
// CHECK: memref.subview %[[WS]][0, 0, 0, 0, 0, %{{.*}}] [2, 1, 4, 4, 4, 2] [1, 1, 1, 1, 1, 1]
// CHECK: conv3d.store_output_tile %{{.*}} split(%[[S]]) mode = partial
// CHECK: conv3d.epilogue ins(%[[WS]] : memref<2x1x4x4x4x4xf32>)
// SM80: error: conv3d-implicit-gemm cannot tile this convolution: the sm80 kernel cannot take it: it is a grouped convolution (groups = 2) of 2 input channels per group
func.func @grouped_split(%x: memref<1x4x4x4x4xf32>, %w: memref<3x3x3x2x4xf32>, %o: memref<1x4x4x4x4xf32>) {
  conv3d.conv ins(%x, %w : memref<1x4x4x4x4xf32>, memref<3x3x3x2x4xf32>) outs(%o : memref<1x4x4x4x4xf32>) overwrite padding = [1, 1, 1, 1, 1, 1] groups = 2 config = #conv3d.igemm_config<tile_m = 32, tile_n = 2, tile_k = 16, split_k = 2>
  return
}
