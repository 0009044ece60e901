// conv3d-lower-host-ops-to-gpu: the buffer work a GPU pipeline leaves in
// host code runs on the device. Every outermost host parallel loop (from a
// linalg op, from conv3d.epilogue via linalg, or left by
// conv3d-quantize-to-loops) is collapsed to one dimension and tiled into
// (blocks) x (block-size threads) with a bounds guard, ready for
// gpu-map-parallel-loops; allocations, deallocations and copies become
// stream-ordered gpu ops. Code inside kernels is left alone. The kernels
// this produces run in the GPU tests (test/GPU/sm80-run.test: prepass,
// separate Q-slices, split-K).
//
// RUN: conv3d-opt %s -split-input-file -conv3d-quantize-to-loops -conv3d-lower-host-ops-to-gpu=block-size=128 | FileCheck %s
// RUN: conv3d-opt %s -split-input-file -conv3d-lower-host-ops-to-gpu | FileCheck %s --check-prefix=DEFAULT

// The NVFP4 prepass: 192 blocks of 16 channels, a thread per block, 128
// threads per GPU block; the temporary is device memory.
// CHECK-LABEL: func.func @prepass
// CHECK: %[[C192:.*]] = arith.constant 192 : index
// CHECK: %[[W0:.*]] = gpu.wait async
// CHECK-NEXT: %[[T:.*]], %[[TOK:.*]] = gpu.alloc async [%[[W0]]] () : memref<2x3x4x4x32xbf16>
// CHECK-NEXT: gpu.wait [%[[TOK]]]
// CHECK: %[[C128:.*]] = arith.constant 128 : index
// CHECK-NEXT: %[[STEP:.*]] = arith.muli %{{.*}}, %[[C128]] : index
// CHECK: scf.parallel (%[[B:.*]]) = (%{{.*}}) to (%[[C192]]) step (%[[STEP]]) {
// CHECK-NEXT: scf.parallel (%[[TH:.*]]) = (%{{.*}}) to (%[[STEP]]) step (%{{.*}}) {
// CHECK: %[[IN:.*]] = arith.cmpi ult, %{{.*}}, %[[C192]] : index
// CHECK: scf.if %{{.*}} {
// CHECK: vector.load
// CHECK: vector.store
// CHECK: %[[W1:.*]] = gpu.wait async
// CHECK-NEXT: %[[CP:.*]] = gpu.memcpy async [%[[W1]]] %{{.*}}, %[[T]]
// CHECK-NEXT: gpu.wait [%[[CP]]]
// CHECK: %[[W2:.*]] = gpu.wait async
// CHECK-NEXT: %[[D:.*]] = gpu.dealloc async [%[[W2]]] %[[T]]
// CHECK-NEXT: gpu.wait [%[[D]]]
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.copy
// CHECK-NOT: memref.dealloc
// DEFAULT-LABEL: func.func @prepass
// DEFAULT: gpu.alloc async
func.func @prepass(%x: memref<2x3x4x4x32xbf16>, %amax: f32) {
  %t = memref.alloc() : memref<2x3x4x4x32xbf16>
  conv3d.quantize #conv3d.nvfp4<block_size = 16> axes = [4] ins(%x : memref<2x3x4x4x32xbf16>) amax(%amax) outs(%t : memref<2x3x4x4x32xbf16>)
  memref.copy %t, %x : memref<2x3x4x4x32xbf16> to memref<2x3x4x4x32xbf16>
  memref.dealloc %t : memref<2x3x4x4x32xbf16>
  return
}

// -----

// Split-K's epilogue: conv3d.epilogue on memrefs becomes a linalg.generic,
// then one 1-D loop over the 2*4*4*4*8 = 1024 output elements (default 256
// threads per block), delinearized inside.
// CHECK-LABEL: func.func @epilogue
// DEFAULT-LABEL: func.func @epilogue
// DEFAULT: %[[C256:.*]] = arith.constant 256 : index
// DEFAULT-NEXT: %[[STEP:.*]] = arith.muli %{{.*}}, %[[C256]] : index
// DEFAULT: scf.parallel (%{{.*}}) = (%{{.*}}) to (%[[TOTAL:.*]]) step (%[[STEP]]) {
// DEFAULT-NEXT: scf.parallel (%{{.*}}) = (%{{.*}}) to (%[[STEP]]) step (%{{.*}}) {
// DEFAULT: arith.cmpi ult, %{{.*}}, %[[TOTAL]] : index
// DEFAULT: scf.if
// DEFAULT: memref.load %{{.*}} : memref<2x4x4x4x8xf32>
// DEFAULT: memref.load %{{.*}} : memref<8xf32>
// DEFAULT: arith.maximumf
// DEFAULT: memref.store %{{.*}} : memref<2x4x4x4x8xbf16>
// DEFAULT-NOT: conv3d.epilogue
// DEFAULT-NOT: linalg.generic
func.func @epilogue(%s: memref<2x4x4x4x8xf32>, %b: memref<8xf32>, %o: memref<2x4x4x4x8xbf16>) {
  conv3d.epilogue ins(%s : memref<2x4x4x4x8xf32>) bias(%b : memref<8xf32>) outs(%o : memref<2x4x4x4x8xbf16>) overwrite activation = relu
  return
}

// -----

// Past 16 split-K slabs the epilogue reads the workspace stack in a loop,
// slab 0 first, instead of one input (one kernel parameter) per slab: 20
// slabs here. The kernel gets the stack, the bias and the output alone.
// DEFAULT-LABEL: func.func @epilogue_many_slabs
// DEFAULT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// DEFAULT: scf.parallel
// DEFAULT: %[[SUM:.*]] = scf.for %[[S:.*]] = %{{.*}} to %c20 step %{{.*}} iter_args(%[[ACC:.*]] = %[[ZERO]]) -> (f32) {
// DEFAULT: %[[V:.*]] = memref.load %{{.*}}[%[[S]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : memref<20x2x4x4x4x8xf32>
// DEFAULT: %[[ADD:.*]] = arith.addf %[[ACC]], %[[V]] : f32
// DEFAULT: scf.yield %[[ADD]] : f32
// DEFAULT: arith.addf %[[SUM]], %{{.*}} : f32
// DEFAULT: arith.maximumf
// DEFAULT: memref.store %{{.*}} : memref<2x4x4x4x8xbf16>
// DEFAULT-NOT: memref.subview
func.func @epilogue_many_slabs(%s: memref<20x2x4x4x4x8xf32>, %b: memref<8xf32>, %o: memref<2x4x4x4x8xbf16>) {
  conv3d.epilogue ins(%s : memref<20x2x4x4x4x8xf32>) bias(%b : memref<8xf32>) outs(%o : memref<2x4x4x4x8xbf16>) overwrite activation = relu
  return
}

// -----

// A linalg op (the separate Q-slices' f32 accumulator fill) becomes device
// loops too.
// DEFAULT-LABEL: func.func @fill
// DEFAULT: scf.parallel
// DEFAULT-NEXT: scf.parallel
// DEFAULT: memref.store %{{.*}} : memref<4x8x16xf32>
// DEFAULT-NOT: linalg.fill
func.func @fill(%m: memref<4x8x16xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%m : memref<4x8x16xf32>)
  return
}

// -----

// Buffer ops inside a kernel are the kernel's own: untouched.
// DEFAULT-LABEL: func.func @in_kernel
// DEFAULT: gpu.launch
// DEFAULT-NEXT: memref.alloc() : memref<4xf32>
// DEFAULT-NEXT: memref.dealloc %{{.*}} : memref<4xf32>
// DEFAULT-NOT: gpu.alloc
func.func @in_kernel() {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %a = memref.alloc() : memref<4xf32>
    memref.dealloc %a : memref<4xf32>
    gpu.terminator
  }
  return
}

// -----

// A copy into the channel window of a wider buffer (conv3d-relayout-filter's
// padding of 230 channels to 232 for TMA) moves two channels per access over
// (voxels) x (C / 2) threads where the operand's address allows it; a
// misaligned operand takes the element-wise copy.
// DEFAULT-LABEL: func.func @channel_window
// DEFAULT: %[[ADDR:.*]] = memref.extract_aligned_pointer_as_index %[[X:.*]] : memref<2x3x4x230xbf16>
// DEFAULT: %[[REM:.*]] = arith.remui %[[ADDR]], %{{.*}} : index
// DEFAULT: %[[OK:.*]] = arith.cmpi eq, %[[REM]]
// DEFAULT: scf.if %[[OK]] {
// DEFAULT: %[[XF:.*]] = memref.collapse_shape %[[X]] {{\[\[}}0, 1, 2], [3]] : memref<2x3x4x230xbf16> into memref<24x230xbf16>
// DEFAULT: %[[BF:.*]] = memref.collapse_shape %{{.*}} {{\[\[}}0, 1, 2], [3]] : memref<2x3x4x232xbf16> into memref<24x232xbf16>
// DEFAULT: scf.parallel
// DEFAULT: %[[V:.*]] = vector.load %[[XF]][%{{.*}}, %{{.*}}] {alignment = 4 : i64} : memref<24x230xbf16>, vector<2xbf16>
// DEFAULT: vector.store %[[V]], %[[BF]][%{{.*}}, %{{.*}}] {alignment = 4 : i64} : memref<24x232xbf16>, vector<2xbf16>
// DEFAULT: } else {
// DEFAULT: scf.parallel
// DEFAULT: memref.load %[[X]]
// DEFAULT-NOT: memref.copy
func.func @channel_window(%x: memref<2x3x4x230xbf16>, %buffer: memref<2x3x4x232xbf16>) {
  %window = memref.subview %buffer[0, 0, 0, 0] [2, 3, 4, 230] [1, 1, 1, 1] : memref<2x3x4x232xbf16> to memref<2x3x4x230xbf16, strided<[2784, 928, 232, 1]>>
  memref.copy %x, %window : memref<2x3x4x230xbf16> to memref<2x3x4x230xbf16, strided<[2784, 928, 232, 1]>>
  return
}

// -----

// An odd channel count (921) has no wider access: the element-wise copy.
// DEFAULT-LABEL: func.func @channel_window_odd
// DEFAULT-NOT: vector.load
// DEFAULT-NOT: extract_aligned_pointer
// DEFAULT: memref.load
func.func @channel_window_odd(%x: memref<2x921xbf16>, %buffer: memref<2x928xbf16>) {
  %window = memref.subview %buffer[0, 0] [2, 921] [1, 1] : memref<2x928xbf16> to memref<2x921xbf16, strided<[928, 1]>>
  memref.copy %x, %window : memref<2x921xbf16> to memref<2x921xbf16, strided<[928, 1]>>
  return
}

// -----

// The fill of the added channels before such a copy (the order
// conv3d-relayout-filter's padding bufferizes to) joins the vector loop: the
// loop runs over all 116 chunks of 232 channels, the last one the fill's;
// the element-wise path keeps fill and copy.
// DEFAULT-LABEL: func.func @channel_window_fill
// DEFAULT-NOT: linalg.fill
// DEFAULT: scf.if
// DEFAULT: %[[N:.*]] = arith.constant 115 : index
// DEFAULT: scf.parallel
// DEFAULT: %[[IN:.*]] = arith.cmpi ult, %{{.*}}, %[[N]] : index
// DEFAULT: %[[V:.*]] = scf.if %[[IN]] -> (vector<2xbf16>) {
// DEFAULT: vector.load {{.*}} : memref<24x230xbf16>, vector<2xbf16>
// DEFAULT: } else {
// DEFAULT: vector.broadcast %{{.*}} : bf16 to vector<2xbf16>
// DEFAULT: vector.store %[[V]], {{.*}} : memref<24x232xbf16>, vector<2xbf16>
// DEFAULT: } else {
// DEFAULT-COUNT-2: scf.parallel
// DEFAULT: memref.store
// DEFAULT: scf.parallel
// DEFAULT: memref.load
func.func @channel_window_fill(%x: memref<2x3x4x230xbf16>, %buffer: memref<2x3x4x232xbf16>) {
  %zero = arith.constant 0.0 : bf16
  %added = memref.subview %buffer[0, 0, 0, 230] [2, 3, 4, 2] [1, 1, 1, 1] : memref<2x3x4x232xbf16> to memref<2x3x4x2xbf16, strided<[2784, 928, 232, 1], offset: 230>>
  linalg.fill ins(%zero : bf16) outs(%added : memref<2x3x4x2xbf16, strided<[2784, 928, 232, 1], offset: 230>>)
  %window = memref.subview %buffer[0, 0, 0, 0] [2, 3, 4, 230] [1, 1, 1, 1] : memref<2x3x4x232xbf16> to memref<2x3x4x230xbf16, strided<[2784, 928, 232, 1]>>
  memref.copy %x, %window : memref<2x3x4x230xbf16> to memref<2x3x4x230xbf16, strided<[2784, 928, 232, 1]>>
  return
}

// -----

// A copy into every other voxel (a data gradient's stride phase inserted
// into the input gradient): the channel runs are contiguous on both sides
// and every stride and offset is a multiple of 8 elements, so behind a
// check of both base pointers' 16-byte alignment it moves 8 bf16 a thread:
// (2 x 4 x 4 positions) x (64 / 8 chunks); the element-wise copy else.
// DEFAULT-LABEL: func.func @strided_phase
// DEFAULT: %[[SRC:.*]] = memref.extract_aligned_pointer_as_index %arg0
// DEFAULT: arith.remui %[[SRC]], %c16
// DEFAULT: %[[DST:.*]] = memref.extract_aligned_pointer_as_index %[[VIEW:.*]] :
// DEFAULT: arith.remui %[[DST]], %c16
// DEFAULT: scf.if
// DEFAULT: scf.parallel
// DEFAULT: %[[V:.*]] = vector.load %arg0[{{.*}}] {alignment = 16 : i64} : memref<2x4x4x64xbf16>, vector<8xbf16>
// DEFAULT: vector.store %[[V]], %[[VIEW]][{{.*}}] {alignment = 16 : i64} : memref<2x4x4x64xbf16, strided<[4096, 1024, 128, 1], offset: 576>>, vector<8xbf16>
// DEFAULT: } else {
// DEFAULT: scf.parallel
// DEFAULT: memref.load %arg0
// DEFAULT-NOT: memref.copy
func.func @strided_phase(%x: memref<2x4x4x64xbf16>, %dx: memref<2x8x8x64xbf16>) {
  %phase = memref.subview %dx[0, 1, 1, 0] [2, 4, 4, 64] [1, 2, 2, 1] : memref<2x8x8x64xbf16> to memref<2x4x4x64xbf16, strided<[4096, 1024, 128, 1], offset: 576>>
  memref.copy %x, %phase : memref<2x4x4x64xbf16> to memref<2x4x4x64xbf16, strided<[4096, 1024, 128, 1], offset: 576>>
  return
}

// -----

// Not vectorized: a strided innermost dimension, and runs of 3 channels.
// DEFAULT-LABEL: func.func @strided_not_vectorized
// DEFAULT-NOT: vector.load
// DEFAULT-NOT: extract_aligned_pointer
// DEFAULT: return
func.func @strided_not_vectorized(%x: memref<2x32xbf16>, %y: memref<2x64xbf16>, %z: memref<4x3xbf16>, %w: memref<8x3xbf16>) {
  %every_other = memref.subview %y[0, 0] [2, 32] [1, 2] : memref<2x64xbf16> to memref<2x32xbf16, strided<[64, 2]>>
  memref.copy %x, %every_other : memref<2x32xbf16> to memref<2x32xbf16, strided<[64, 2]>>
  %rows = memref.subview %w[0, 0] [4, 3] [2, 1] : memref<8x3xbf16> to memref<4x3xbf16, strided<[6, 1]>>
  memref.copy %z, %rows : memref<4x3xbf16> to memref<4x3xbf16, strided<[6, 1]>>
  return
}

// -----

// An element-wise generic (identity maps, a side-effect-free scalar body:
// a data gradient's separate activation derivative) over contiguous runs:
// behind a check of every base pointer's alignment, 4 elements a thread
// (16 bytes of the widest type, f32; 8 of the bf16 ones), the body applied
// to each lane; the generic itself else.
// DEFAULT-LABEL: func.func @elementwise_vectorized
// DEFAULT-COUNT-3: memref.extract_aligned_pointer_as_index
// DEFAULT: scf.if
// DEFAULT: scf.parallel
// DEFAULT: %[[Z:.*]] = vector.load %arg0[{{.*}}] {alignment = 8 : i64} : memref<2x4x4x16xbf16>, vector<4xbf16>
// DEFAULT: %[[D:.*]] = vector.load %arg1[{{.*}}] {alignment = 16 : i64} : memref<2x4x4x16xf32>, vector<4xf32>
// DEFAULT-NOT: vector.load %arg2
// DEFAULT-COUNT-4: arith.mulf
// DEFAULT: vector.store %{{.*}}, %arg2[{{.*}}] {alignment = 8 : i64} : memref<2x4x4x16xbf16>, vector<4xbf16>
// DEFAULT: } else {
// DEFAULT: scf.parallel
// DEFAULT: memref.load %arg0
func.func @elementwise_vectorized(%z: memref<2x4x4x16xbf16>, %dx: memref<2x4x4x16xf32>, %out: memref<2x4x4x16xbf16>) {
  linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (a, b, c, d)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%z, %dx : memref<2x4x4x16xbf16>, memref<2x4x4x16xf32>) outs(%out : memref<2x4x4x16xbf16>) {
  ^bb0(%zi: bf16, %di: f32, %unused: bf16):
    %zf = arith.extf %zi : bf16 to f32
    %p = arith.mulf %zf, %di : f32
    %r = arith.truncf %p : f32 to bf16
    linalg.yield %r : bf16
  }
  return
}

// -----

// Not vectorized: a generic reading its indices, and runs of 3 channels.
// DEFAULT-LABEL: func.func @elementwise_not_vectorized
// DEFAULT-NOT: vector.load
// DEFAULT-NOT: extract_aligned_pointer
// DEFAULT: return
func.func @elementwise_not_vectorized(%x: memref<4x16xf32>, %y: memref<4x3xf32>) {
  linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>], iterator_types = ["parallel", "parallel"]} outs(%x : memref<4x16xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 1 : index
    %ii = arith.index_cast %i : index to i32
    %f = arith.sitofp %ii : i32 to f32
    linalg.yield %f : f32
  }
  linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>], iterator_types = ["parallel", "parallel"]} outs(%y : memref<4x3xf32>) {
  ^bb0(%o: f32):
    %two = arith.constant 2.0 : f32
    %r = arith.mulf %o, %two : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A generic marked conv3d.gpu_transpose_dims = [a, b] (reads contiguous
// along a, the output's innermost b) runs as a shared-memory transpose:
// 32 x 32 tiles of (a, b) = (0, 2) as blocks x and y (2 x 1 here), the
// other dimensions (4) as block z, 32 x 8 threads; the body computed with
// thread x along a, stored to a 32 x 33 workgroup tile, a barrier, then
// written with thread x along b. Ordered on the stream like the others.
// CHECK-LABEL: func.func @staged_transpose
// CHECK: %[[W:.*]] = gpu.wait async
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[C32:.*]] = arith.constant 32 : index
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
// CHECK: %[[L:.*]] = gpu.launch async [%[[W]]] blocks(%[[BX:.*]], %[[BY:.*]], %[[BZ:.*]]) in (%{{.*}} = %[[C2]], %{{.*}} = %[[C1]], %{{.*}} = %[[C4]]) threads(%[[TX:.*]], %[[TY:.*]], %{{.*}}) in (%{{.*}} = %[[C32]], %{{.*}} = %[[C8]], %{{.*}} = %{{.*}}) workgroup(%[[TILE:.*]] : memref<32x33xf32, #gpu.address_space<workgroup>>)
// CHECK: scf.if
// CHECK: %[[V:.*]] = memref.load %arg0[
// CHECK: memref.store %[[V]], %[[TILE]][%{{.*}}, %[[TX]]]
// CHECK: gpu.barrier
// CHECK: scf.if
// CHECK: %[[T:.*]] = memref.load %[[TILE]][%[[TX]], %{{.*}}]
// CHECK: memref.store %[[T]], %arg1[
// CHECK: gpu.terminator
// CHECK: gpu.wait [%[[L]]]
// CHECK-NOT: scf.parallel
func.func @staged_transpose(%src: memref<40x4x20xf32>, %dst: memref<20x4x40xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      outs(%dst : memref<20x4x40xf32>) attrs = {conv3d.gpu_transpose_dims = array<i64: 0, 2>} {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %k = linalg.index 2 : index
    %v = memref.load %src[%k, %j, %i] : memref<40x4x20xf32>
    linalg.yield %v : f32
  }
  return
}

// -----

// Not staged (the element-wise kernel instead): a generic that reads the
// output's old value, one with an input operand, and one whose
// read-contiguous dimension (2 channels) is under 8 (most of a tile's
// threads would idle).
// CHECK-LABEL: func.func @not_staged
// CHECK-NOT: workgroup(
// CHECK: scf.parallel
// CHECK-NOT: workgroup(
// CHECK: return
func.func @not_staged(%src: memref<8x8xf32>, %dst: memref<8x8xf32>,
                      %wide: memref<64x2xf32>, %narrow: memref<2x64xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      outs(%dst : memref<8x8xf32>) attrs = {conv3d.gpu_transpose_dims = array<i64: 0, 1>} {
  ^bb0(%out: f32):
    %s = arith.addf %out, %out : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%src : memref<8x8xf32>) outs(%dst : memref<8x8xf32>) attrs = {conv3d.gpu_transpose_dims = array<i64: 0, 1>} {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      outs(%narrow : memref<2x64xf32>) attrs = {conv3d.gpu_transpose_dims = array<i64: 0, 1>} {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %v = memref.load %wide[%j, %i] : memref<64x2xf32>
    linalg.yield %v : f32
  }
  return
}
