// conv3d-lower-to-sm80: each implicit-GEMM grid loop becomes one gpu.launch
// (a block per tile of the grid, 32 * warps_m * warps_n threads, dynamic
// shared memory for the S-stage operand ring) whose kernel runs the
// software-pipelined K loop: cp.async (nvgpu.device_async_copy with
// zero-fill) or register-staged loads into an XOR-swizzled ring, ldmatrix +
// mma.sync.m16n8k16 over a ring stage, and an epilogue through an f32
// staging tile in shared memory. The inputs are memref convolutions with a
// config, tiled by conv3d-implicit-gemm=target=sm80 in the same run so they
// stay readable. The checks pin what the plan decides (thread and block
// counts, shared memory bytes, copy widths, fragment and mma counts, the
// K schedule), not every index computation. Errors:
// lower-to-sm80-invalid.mlir.
//
// RUN: conv3d-opt %s -split-input-file -conv3d-implicit-gemm=target=sm80 -conv3d-lower-to-sm80 | FileCheck %s

// A bf16 3x3x3 convolution with C = 32 (16-byte cp.async), tiled 64 x 32 x
// 32 with 3 stages and 2 x 2 warps. M = 4*8*8 = 256 rows in 4 tiles, F = 64
// in 2 tiles: 8 blocks of 128 threads. K = 27*32 = 864 is 27 K steps.
// Shared memory: 3 stages of a 64x32 A tile (4096 B) and a 32x32 B tile
// (2048 B) = 18432 B, more than the 64 x (32+4) f32 staging tile (9216 B).
// Each thread copies 2 A chunks (64*32/8 = 256 chunks over 128 threads) and
// 1 B chunk per step. A warp owns 32 x 16 of the tile: 2 x 2 mma tiles, 16
// f32 accumulators, over 2 k16 steps per stage.

// CHECK-LABEL: func.func @bf16_3x3x3
// CHECK-SAME: (%[[X:.*]]: memref<1x4x8x8x32xbf16>, %[[W:.*]]: memref<3x3x3x32x64xbf16>, %[[O:.*]]: memref<1x4x8x8x64xbf16>)
// CHECK-NOT: scf.forall
// Host side: every operand as a flat 1-D view.
// CHECK: %[[XB:.*]], %{{.*}}, %{{.*}}:5, %{{.*}}:5 = memref.extract_strided_metadata %[[X]]
// CHECK-NEXT: %[[XF:.*]] = memref.reinterpret_cast %[[XB]] to offset: [0], sizes: [8192], strides: [1] : memref<bf16> to memref<8192xbf16>
// CHECK-NEXT: %[[WB:.*]], %{{.*}}, %{{.*}}:5, %{{.*}}:5 = memref.extract_strided_metadata %[[W]]
// CHECK-NEXT: %[[WF:.*]] = memref.reinterpret_cast %[[WB]] to offset: [0], sizes: [55296], strides: [1] : memref<bf16> to memref<55296xbf16>
// CHECK-NEXT: %[[OB:.*]], %{{.*}}, %{{.*}}:5, %{{.*}}:5 = memref.extract_strided_metadata %[[O]]
// CHECK-NEXT: %[[OF:.*]] = memref.reinterpret_cast %[[OB]] to offset: [0], sizes: [16384], strides: [1] : memref<bf16> to memref<16384xbf16>
// CHECK-NEXT: %[[START:.*]] = gpu.wait async
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[SMEM:.*]] = arith.constant 18432 : i32
// CHECK-DAG: %[[BLOCKS:.*]] = arith.constant 8 : index
// CHECK-DAG: %[[THREADS:.*]] = arith.constant 128 : index
// CHECK: %[[LAUNCH:.*]] = gpu.launch async [%[[START]]] blocks(%[[BX:[^,]*]], %{{[^,]*}}, %{{[^)]*}}) in (%{{[^ ]*}} = %[[BLOCKS]], %{{[^ ]*}} = %[[ONE]], %{{[^ ]*}} = %[[ONE]]) threads(%[[TX:[^,]*]], %{{[^,]*}}, %{{[^)]*}}) in (%{{[^ ]*}} = %[[THREADS]], %{{[^ ]*}} = %[[ONE]], %{{[^ ]*}} = %[[ONE]]) dynamic_shared_memory_size %[[SMEM]] {
// Index math in i32 (every operand has fewer than 2^31 elements). The
// linear block id splits into the N tile (fastest, 2 of them) and the M tile.
// CHECK-NEXT: %[[TID:.*]] = arith.index_cast %[[TX]] : index to i32
// CHECK: %[[BID:.*]] = arith.index_cast %[[BX]] : index to i32
// CHECK-NEXT: %[[NT:.*]] = arith.constant 2 : i32
// CHECK-NEXT: %[[TN:.*]] = arith.remui %[[BID]], %[[NT]] : i32
// CHECK-NEXT: %[[NT2:.*]] = arith.constant 2 : i32
// CHECK-NEXT: %[[REST:.*]] = arith.divui %[[BID]], %[[NT2]] : i32
// CHECK-NEXT: %[[MT:.*]] = arith.constant 4 : i32
// CHECK-NEXT: %[[TM:.*]] = arith.remui %[[REST]], %[[MT]] : i32
// The rings: A (3 x 64 x 32) at byte 0, B (3 x 32 x 32) at byte 3 * 4096,
// and the staging tile (64 x 36 f32) aliasing them.
// CHECK: %[[DYN:.*]] = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
// CHECK: %[[SA:.*]] = memref.view %[[DYN]][%{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<6144xbf16, #gpu.address_space<workgroup>>
// CHECK-NEXT: %[[BOFF:.*]] = arith.constant 12288 : i32
// CHECK-NEXT: %[[BOFFI:.*]] = arith.index_cast %[[BOFF]] : i32 to index
// CHECK-NEXT: %[[SB:.*]] = memref.view %[[DYN]][%[[BOFFI]]][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<3072xbf16, #gpu.address_space<workgroup>>
// CHECK: %[[STAGING:.*]] = memref.view %[[DYN]][%{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<2304xf32, #gpu.address_space<workgroup>>
// The step count: min(0 + 27, 27) K tiles.
// CHECK: %[[NKT:.*]] = arith.constant 27 : i32
// CHECK-NEXT: %[[END:.*]] = arith.addi %{{.*}}, %[[NKT]] : i32
// CHECK-NEXT: %[[NKT2:.*]] = arith.constant 27 : i32
// CHECK-NEXT: %{{.*}} = arith.minui %[[END]], %[[NKT2]] : i32
// CHECK: arith.select
// CHECK-NEXT: %[[STEPS:.*]] = arith.subi
// C is a multiple of tile_k: per-row tap masks (a bit per tap, 27 taps) are
// built once per unit, outside the K loop.
// CHECK-COUNT-54: arith.shli
// CHECK-NOT: arith.shli
// Prologue: steps 0 and 1 into stages 0 and 1. An A access tests the bit of
// the step's tap in the row's mask; the copy is a 16-byte cp.async (.cg)
// whose source size is 0 outside the input (zero-fill).
// CHECK: %[[BITS:.*]] = arith.shrui %{{.*}}, %{{.*}} : i32
// CHECK-NEXT: %[[LOW:.*]] = arith.constant 1 : i32
// CHECK-NEXT: %[[BIT:.*]] = arith.andi %[[BITS]], %[[LOW]] : i32
// CHECK-NEXT: %[[ROWOK:.*]] = arith.andi %{{.*}}, %{{.*}} : i1
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK-NEXT: %[[TAPOK:.*]] = arith.cmpi ne, %[[BIT]], %[[ZERO]] : i32
// CHECK-NEXT: %[[VALID:.*]] = arith.andi %[[ROWOK]], %[[TAPOK]] : i1
// CHECK: %[[SRC:.*]] = arith.select %[[VALID]], %{{.*}}, %{{.*}} : i32
// CHECK-NEXT: %[[FULL:.*]] = arith.constant 8 : i32
// CHECK-NEXT: %[[NONE:.*]] = arith.constant 0 : i32
// CHECK-NEXT: %[[BYTES:.*]] = arith.select %[[VALID]], %[[FULL]], %[[NONE]] : i32
// The ring position is XOR-swizzled: a 32-wide row has 4 chunks, so the
// chunk index is XOR-ed with (row / 2) & 3.
// CHECK: %[[HALF:.*]] = arith.constant 2 : i32
// CHECK-NEXT: %[[LINE:.*]] = arith.divui %{{.*}}, %[[HALF]] : i32
// CHECK-NEXT: %[[MASK:.*]] = arith.constant 3 : i32
// CHECK-NEXT: %[[PHASE:.*]] = arith.andi %[[LINE]], %[[MASK]] : i32
// CHECK-NEXT: %{{.*}} = arith.xori %{{.*}}, %[[PHASE]] : i32
// CHECK: %[[DSTI:.*]] = arith.index_cast %{{.*}} : i32 to index
// CHECK-NEXT: %[[SRCI:.*]] = arith.index_cast %[[SRC]] : i32 to index
// CHECK-NEXT: %[[BYTESI:.*]] = arith.index_cast %[[BYTES]] : i32 to index
// CHECK-NEXT: %[[A0:.*]] = nvgpu.device_async_copy %[[XF]][%[[SRCI]]], %[[SA]][%[[DSTI]]], 8, %[[BYTESI]] {bypassL1} : memref<8192xbf16> to memref<6144xbf16, #gpu.address_space<workgroup>>
// CHECK: %[[A1:.*]] = nvgpu.device_async_copy %[[XF]][%{{.*}}], %[[SA]][%{{.*}}], 8, %{{.*}} {bypassL1}
// CHECK: %[[B0:.*]] = nvgpu.device_async_copy %[[WF]][%{{.*}}], %[[SB]][%{{.*}}], 8, %{{.*}} {bypassL1} : memref<55296xbf16> to memref<3072xbf16, #gpu.address_space<workgroup>>
// CHECK-NEXT: %[[G0:.*]] = nvgpu.device_async_create_group %[[A0]], %[[A1]], %[[B0]]{{$}}
// CHECK-COUNT-3: nvgpu.device_async_copy
// CHECK-NEXT: nvgpu.device_async_create_group %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}{{$}}
// CHECK-NOT: nvgpu.device_async_copy
// The main loop carries the 16 accumulators. Step t waits until at most
// S - 2 = 1 group is pending (step t landed), then refills stage
// (t + 2) % 3, which every warp finished reading at step t - 1.
// CHECK: %[[ACCS:.*]]:16 = scf.for %[[T:.*]] = %{{.*}} to %[[STEPS]] step %{{.*}} iter_args({{.*}}) -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)  : i32 {
// CHECK-NEXT: nvgpu.device_async_wait %[[G0]] {numGroups = 1 : i32}
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: %[[DIST:.*]] = arith.constant 2 : i32
// CHECK-NEXT: %[[AHEAD:.*]] = arith.addi %[[T]], %[[DIST]] : i32
// CHECK-NEXT: %[[S:.*]] = arith.constant 3 : i32
// CHECK-NEXT: %{{.*}} = arith.remui %[[AHEAD]], %[[S]] : i32
// No copy past the last step: the step must be below the step count.
// CHECK: arith.cmpi ult, %[[AHEAD]], %[[STEPS]] : i32
// CHECK: arith.shrui
// CHECK-COUNT-3: nvgpu.device_async_copy
// CHECK-NEXT: nvgpu.device_async_create_group %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}{{$}}
// The MMAs read stage t % 3 (A stages of 2048, B stages of 1024 elements).
// CHECK: %[[S2:.*]] = arith.constant 3 : i32
// CHECK-NEXT: %[[STAGE:.*]] = arith.remui %[[T]], %[[S2]] : i32
// CHECK-NEXT: %[[ASIZE:.*]] = arith.constant 2048 : i32
// CHECK-NEXT: %{{.*}} = arith.muli %[[STAGE]], %[[ASIZE]] : i32
// CHECK-NEXT: %[[BSIZE:.*]] = arith.constant 1024 : i32
// CHECK-NEXT: %{{.*}} = arith.muli %[[STAGE]], %[[BSIZE]] : i32
// Each k16 step: 2 A fragments (ldmatrix.x4), one B pair (ldmatrix.x4.trans
// of the [k][n] tile), bf16 pairs packed into i32, 2 x 2 mma.sync.
// CHECK-NOT: nvgpu.device_async_copy
// CHECK-COUNT-2: nvgpu.ldmatrix %[[SA]][%{{.*}}] {numTiles = 4 : i32, transpose = false} : memref<6144xbf16, #gpu.address_space<workgroup>> -> vector<4x2xbf16>
// CHECK: nvgpu.ldmatrix %[[SB]][%{{.*}}] {numTiles = 4 : i32, transpose = true} : memref<3072xbf16, #gpu.address_space<workgroup>> -> vector<4x2xbf16>
// CHECK: vector.bitcast %{{.*}} : vector<2xbf16> to vector<1xi32>
// CHECK-COUNT-4: nvvm.mma.sync A[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}]  B[%{{.*}}, %{{.*}}]  C[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}]  {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>, shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK-COUNT-2: nvgpu.ldmatrix %[[SA]]
// CHECK: nvgpu.ldmatrix %[[SB]]
// CHECK-COUNT-4: nvvm.mma.sync
// CHECK-NOT: nvgpu.ldmatrix
// CHECK-NOT: nvvm.mma.sync
// CHECK: scf.yield %{{.*}} : f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32
// CHECK-NEXT: }
// Drain, then the accumulators go to the staging tile in pairs (8 stores of
// 2 floats, padded rows of 32 + 4 floats).
// CHECK-NEXT: nvgpu.device_async_wait %[[G0]] {numGroups = 0 : i32}
// CHECK-NEXT: gpu.barrier
// CHECK: %[[PAIR:.*]] = vector.from_elements %[[ACCS]]#0, %[[ACCS]]#1 : vector<2xf32>
// CHECK-NEXT: %[[STRIDE:.*]] = arith.constant 36 : i32
// CHECK: vector.store %[[PAIR]], %[[STAGING]][%{{.*}}] {alignment = 8 : i64} : memref<2304xf32, #gpu.address_space<workgroup>>, vector<2xf32>
// CHECK-COUNT-7: vector.store %{{.*}}, %[[STAGING]]
// CHECK-NEXT: gpu.barrier
// The coalesced pass: 64 rows x 4 vectors of 8 channels, strided by the 128
// threads; rows past M and channels past F are skipped; 16-byte bf16 stores.
// CHECK-NEXT: %[[UNITS:.*]] = arith.constant 256 : i32
// CHECK-NEXT: %[[STEP:.*]] = arith.constant 128 : i32
// CHECK-NEXT: scf.for %{{.*}} = %[[TID]] to %[[UNITS]] step %[[STEP]] : i32 {
// CHECK: %[[M:.*]] = arith.constant 256 : i32
// CHECK-NEXT: %[[MOK:.*]] = arith.cmpi ult, %{{.*}}, %[[M]] : i32
// CHECK-NEXT: %[[F:.*]] = arith.constant 64 : i32
// CHECK-NEXT: %[[FOK:.*]] = arith.cmpi ult, %{{.*}}, %[[F]] : i32
// CHECK-NEXT: %[[OK:.*]] = arith.andi %[[MOK]], %[[FOK]] : i1
// CHECK-NEXT: scf.if %[[OK]] {
// CHECK: vector.load %[[STAGING]][%{{.*}}] {alignment = 16 : i64} : memref<2304xf32, #gpu.address_space<workgroup>>, vector<8xf32>
// CHECK-COUNT-8: arith.truncf %{{.*}} : f32 to bf16
// CHECK: vector.store %{{.*}}, %[[OF]][%{{.*}}] {alignment = 16 : i64} : memref<16384xbf16>, vector<8xbf16>
// CHECK: gpu.terminator
// CHECK-NEXT: }
// CHECK-NEXT: gpu.wait [%[[LAUNCH]]]
// CHECK-NEXT: return
func.func @bf16_3x3x3(%x: memref<1x4x8x8x32xbf16>, %w: memref<3x3x3x32x64xbf16>, %o: memref<1x4x8x8x64xbf16>) {
  conv3d.conv ins(%x, %w : memref<1x4x8x8x32xbf16>, memref<3x3x3x32x64xbf16>) outs(%o : memref<1x4x8x8x64xbf16>) overwrite padding = [1, 1, 1, 1, 1, 1] config = #conv3d.igemm_config<tile_m = 64, tile_n = 32, tile_k = 32, stages = 3, warps_m = 2, warps_n = 2>
  return
}

// -----

// f16 with an FQRSC filter, strides, batch 2 and no `overwrite`. M =
// 2*3*6*4 = 144 rows in 5 tiles of 32, F = 40 in 2 tiles of 32: 10 blocks of
// 2 x 1 warps. Shared memory: 2 stages of two 32x16 f16 tiles (4096 B) is
// less than the 32 x (32+4) f32 staging tile: 4608 B. B is stored [n][k]
// (K contiguous): 16-byte copies along k (k + 432 n in the filter), read
// with non-transposed ldmatrix. f16 fragments go to mma.sync as
// vector<2xf16> (no packing); the accumulating epilogue adds the old output.

// CHECK-LABEL: func.func @f16_fqrsc_accumulate
// CHECK-SAME: (%[[X:.*]]: memref<2x5x6x7x16xf16>, %[[W:.*]]: memref<40x3x3x3x16xf16>, %[[O:.*]]: memref<2x3x6x4x40xf16>)
// CHECK: %[[XF:.*]] = memref.reinterpret_cast %{{.*}} to offset: [0], sizes: [6720], strides: [1] : memref<f16> to memref<6720xf16>
// CHECK: %[[WF:.*]] = memref.reinterpret_cast %{{.*}} to offset: [0], sizes: [17280], strides: [1] : memref<f16> to memref<17280xf16>
// CHECK: %[[OF:.*]] = memref.reinterpret_cast %{{.*}} to offset: [0], sizes: [5760], strides: [1] : memref<f16> to memref<5760xf16>
// CHECK-NEXT: %[[START:.*]] = gpu.wait async
// CHECK-DAG: %[[SMEM:.*]] = arith.constant 4608 : i32
// CHECK-DAG: %[[BLOCKS:.*]] = arith.constant 10 : index
// CHECK-DAG: %[[THREADS:.*]] = arith.constant 64 : index
// CHECK: gpu.launch async [%[[START]]] blocks({{.*}}) in (%{{[^ ]*}} = %[[BLOCKS]], {{.*}}) threads({{.*}}) in (%{{[^ ]*}} = %[[THREADS]], {{.*}}) dynamic_shared_memory_size %[[SMEM]] {
// CHECK: %[[SA:.*]] = memref.view %{{.*}}[%{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<1024xf16, #gpu.address_space<workgroup>>
// CHECK: %[[SB:.*]] = memref.view %{{.*}}[%{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<1024xf16, #gpu.address_space<workgroup>>
// CHECK: %[[STAGING:.*]] = memref.view %{{.*}}[%{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<1152xf32, #gpu.address_space<workgroup>>
// CHECK: %[[A0:.*]] = nvgpu.device_async_copy %[[XF]][%{{.*}}], %[[SA]][%{{.*}}], 8, %{{.*}} {bypassL1} : memref<6720xf16> to memref<1024xf16, #gpu.address_space<workgroup>>
// CHECK: %[[FSTRIDE:.*]] = arith.constant 432 : i32
// CHECK-NEXT: %[[NOFF:.*]] = arith.muli %{{.*}}, %[[FSTRIDE]] : i32
// CHECK-NEXT: %[[BIDX:.*]] = arith.addi %{{.*}}, %[[NOFF]] : i32
// CHECK-NEXT: %{{.*}} = arith.constant 0 : i32
// CHECK-NEXT: %[[BSRC:.*]] = arith.select %{{.*}}, %[[BIDX]], %{{.*}} : i32
// CHECK: %[[BSRCI:.*]] = arith.index_cast %[[BSRC]] : i32 to index
// CHECK-NEXT: %{{.*}} = arith.index_cast %{{.*}} : i32 to index
// CHECK-NEXT: %[[B0:.*]] = nvgpu.device_async_copy %[[WF]][%[[BSRCI]]], %[[SB]][%{{.*}}], 8, %{{.*}} {bypassL1} : memref<17280xf16> to memref<1024xf16, #gpu.address_space<workgroup>>
// CHECK-NEXT: %[[G0:.*]] = nvgpu.device_async_create_group %[[A0]], %[[B0]]{{$}}
// Two stages: one group in flight before the loop, and a step waits for all.
// CHECK: %{{.*}}:16 = scf.for
// CHECK-NEXT: nvgpu.device_async_wait %[[G0]] {numGroups = 0 : i32}
// CHECK: nvgpu.ldmatrix %[[SA]][%{{.*}}] {numTiles = 4 : i32, transpose = false} : memref<1024xf16, #gpu.address_space<workgroup>> -> vector<4x2xf16>
// CHECK-NOT: vector.bitcast
// CHECK-COUNT-2: nvgpu.ldmatrix %[[SB]][%{{.*}}] {numTiles = 4 : i32, transpose = false} : memref<1024xf16, #gpu.address_space<workgroup>> -> vector<4x2xf16>
// CHECK-NOT: vector.bitcast
// CHECK-COUNT-4: nvvm.mma.sync A[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}]  B[%{{.*}}, %{{.*}}]  C[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}]  {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (vector<2xf16>, vector<2xf16>, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK-NOT: nvvm.mma.sync
// CHECK: scf.yield
// The coalesced pass reads the old output of its positions first (a guarded
// read, zeros past the tile), then computes and stores each.
// CHECK: %[[OLD:.*]] = scf.if %{{.*}} -> (vector<8xf16>) {
// CHECK: %{{.*}} = vector.load %[[OF]][%{{.*}}] {alignment = 16 : i64} : memref<5760xf16>, vector<8xf16>
// CHECK: %[[ACC:.*]] = vector.load %[[STAGING]][%{{.*}}] {alignment = 16 : i64} : memref<1152xf32, #gpu.address_space<workgroup>>, vector<8xf32>
// CHECK: %[[A0:.*]] = vector.extract %[[ACC]][0] : f32 from vector<8xf32>
// CHECK-NEXT: %[[O0:.*]] = vector.extract %[[OLD]][0] : f16 from vector<8xf16>
// CHECK-NEXT: %[[O0F:.*]] = arith.extf %[[O0]] : f16 to f32
// CHECK-NEXT: %[[SUM:.*]] = arith.addf %[[A0]], %[[O0F]] : f32
// CHECK-NEXT: %{{.*}} = arith.truncf %[[SUM]] : f32 to f16
// CHECK: vector.store %{{.*}}, %[[OF]][%{{.*}}] {alignment = 16 : i64} : memref<5760xf16>, vector<8xf16>
func.func @f16_fqrsc_accumulate(%x: memref<2x5x6x7x16xf16>, %w: memref<40x3x3x3x16xf16>, %o: memref<2x3x6x4x40xf16>) {
  conv3d.conv ins(%x, %w : memref<2x5x6x7x16xf16>, memref<40x3x3x3x16xf16>) outs(%o : memref<2x3x6x4x40xf16>) strides = [1, 1, 2] padding = [0, 0, 1, 1, 1, 1] filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 32, tile_n = 32, tile_k = 16, stages = 2, warps_m = 2, warps_n = 1>
  return
}

// -----

// C = 3 and F = 5 (RGB video): no cp.async width divides the channels, so
// both operands take the register path, element by element: a global load
// (from index 0 when the element is outside the operand), a select of zero
// there, a store into the ring.
// Each of the 64 threads owns 32*32/64 = 16 A elements and 32*8/64 = 4 B
// elements per step; step t+1 is loaded before the MMAs of step t and
// stored after them into stage (t+1) % 2. No async copies, groups or waits.
// The one 8-wide B fragment is read with ldmatrix.x2; F = 5 allows no
// vector epilogue (one channel per access). Shared memory: 2 stages of
// 32x32 and 32x8 bf16 tiles = 5120 B.

// CHECK-LABEL: func.func @narrow_c3
// CHECK-SAME: (%[[X:.*]]: memref<1x4x8x8x3xbf16>, %[[W:.*]]: memref<3x3x3x3x5xbf16>, %[[O:.*]]: memref<1x4x8x8x5xbf16>)
// CHECK-NOT: nvgpu.device_async
// CHECK: %[[XF:.*]] = memref.reinterpret_cast %{{.*}} to offset: [0], sizes: [768], strides: [1] : memref<bf16> to memref<768xbf16>
// CHECK: %[[WF:.*]] = memref.reinterpret_cast %{{.*}} to offset: [0], sizes: [405], strides: [1] : memref<bf16> to memref<405xbf16>
// CHECK: %[[OF:.*]] = memref.reinterpret_cast %{{.*}} to offset: [0], sizes: [1280], strides: [1] : memref<bf16> to memref<1280xbf16>
// CHECK-NEXT: gpu.wait async
// CHECK-DAG: %[[SMEM:.*]] = arith.constant 5120 : i32
// CHECK-DAG: %[[BLOCKS:.*]] = arith.constant 8 : index
// CHECK-DAG: %[[THREADS:.*]] = arith.constant 64 : index
// CHECK: gpu.launch async [%{{.*}}] blocks({{.*}}) in (%{{[^ ]*}} = %[[BLOCKS]], {{.*}}) threads({{.*}}) in (%{{[^ ]*}} = %[[THREADS]], {{.*}}) dynamic_shared_memory_size %[[SMEM]] {
// CHECK: %[[SA:.*]] = memref.view %{{.*}} to memref<2048xbf16, #gpu.address_space<workgroup>>
// CHECK: %[[SB:.*]] = memref.view %{{.*}} to memref<512xbf16, #gpu.address_space<workgroup>>
// CHECK: %[[STAGING:.*]] = memref.view %{{.*}} to memref<384xf32, #gpu.address_space<workgroup>>
// CHECK-NOT: nvgpu.device_async
// Prologue: step 0 through registers into stage 0.
// CHECK: %[[ZEROS:.*]] = arith.constant dense<0.000000e+00> : vector<1xbf16>
// CHECK: %[[V:.*]] = vector.load %[[XF]][%{{.*}}] {alignment = 2 : i64} : memref<768xbf16>, vector<1xbf16>
// CHECK-NEXT: %{{.*}} = arith.select %{{.*}}, %[[V]], %[[ZEROS]] : vector<1xbf16>
// CHECK-COUNT-15: vector.load %[[XF]]
// CHECK-COUNT-4: vector.load %[[WF]][%{{.*}}] {alignment = 2 : i64} : memref<405xbf16>, vector<1xbf16>
// CHECK-COUNT-16: vector.store %{{.*}}, %[[SA]][%{{.*}}] {alignment = 2 : i64} : memref<2048xbf16, #gpu.address_space<workgroup>>, vector<1xbf16>
// CHECK-COUNT-4: vector.store %{{.*}}, %[[SB]][%{{.*}}] {alignment = 2 : i64} : memref<512xbf16, #gpu.address_space<workgroup>>, vector<1xbf16>
// 1 x 1 mma tiles per warp (16 x 8), 4 accumulators, 2 k16 steps per stage.
// CHECK: %{{.*}}:4 = scf.for %[[T:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args({{.*}}) -> (f32, f32, f32, f32)  : i32 {
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1 : i32
// CHECK-NEXT: %[[NEXT:.*]] = arith.addi %[[T]], %[[ONE]] : i32
// CHECK-COUNT-16: vector.load %[[XF]]
// CHECK-COUNT-4: vector.load %[[WF]]
// CHECK: nvgpu.ldmatrix %[[SA]][%{{.*}}] {numTiles = 4 : i32, transpose = false}
// CHECK: nvgpu.ldmatrix %[[SB]][%{{.*}}] {numTiles = 2 : i32, transpose = true} : memref<512xbf16, #gpu.address_space<workgroup>> -> vector<2x2xbf16>
// CHECK: nvvm.mma.sync
// CHECK: nvgpu.ldmatrix %[[SA]]
// CHECK: nvgpu.ldmatrix %[[SB]]
// CHECK: nvvm.mma.sync
// CHECK-NOT: nvvm.mma.sync
// CHECK: %[[TWO:.*]] = arith.constant 2 : i32
// CHECK-NEXT: %{{.*}} = arith.remui %[[NEXT]], %[[TWO]] : i32
// CHECK-COUNT-16: vector.store %{{.*}}, %[[SA]]
// CHECK-COUNT-4: vector.store %{{.*}}, %[[SB]]
// CHECK-NEXT: scf.yield
// CHECK-NEXT: }
// CHECK-NEXT: gpu.barrier
// CHECK: scf.if
// CHECK: vector.load %[[STAGING]][%{{.*}}] {alignment = 4 : i64} : memref<384xf32, #gpu.address_space<workgroup>>, vector<1xf32>
// CHECK: vector.store %{{.*}}, %[[OF]][%{{.*}}] {alignment = 2 : i64} : memref<1280xbf16>, vector<1xbf16>
// CHECK-NOT: nvgpu.device_async
// CHECK: return
func.func @narrow_c3(%x: memref<1x4x8x8x3xbf16>, %w: memref<3x3x3x3x5xbf16>, %o: memref<1x4x8x8x5xbf16>) {
  conv3d.conv ins(%x, %w : memref<1x4x8x8x3xbf16>, memref<3x3x3x3x5xbf16>) outs(%o : memref<1x4x8x8x5xbf16>) overwrite padding = [1, 1, 1, 1, 1, 1] config = #conv3d.igemm_config<tile_m = 32, tile_n = 8, tile_k = 32, stages = 2, warps_m = 2, warps_n = 1>
  return
}

// -----

// C = 6: 4-byte cp.async for A (2 channels, no .cg, which needs 16 bytes),
// 16-byte copies for B (F = 16). 4 stages: 3 groups before the loop, and a
// step waits until at most 2 are pending. B has 32*16/8 = 64 chunks for 128
// threads: the chunk is copied under `tid < 64` (threads without one touch
// no shared memory), and its token stays out of the group (commit_group
// covers it). An f32 output is stored without rounding. Shared memory:
// 4 x (64x32 + 32x16) x 2 B = 20480 B.

// CHECK-LABEL: func.func @c6_four_byte_copies
// CHECK-SAME: (%[[X:.*]]: memref<1x4x8x8x6xf16>, %[[W:.*]]: memref<3x3x3x6x16xf16>, %[[O:.*]]: memref<1x4x8x8x16xf32>)
// CHECK: %[[XF:.*]] = memref.reinterpret_cast %{{.*}} to memref<1536xf16>
// CHECK: %[[WF:.*]] = memref.reinterpret_cast %{{.*}} to memref<2592xf16>
// CHECK: %[[OF:.*]] = memref.reinterpret_cast %{{.*}} to memref<4096xf32>
// CHECK-NEXT: gpu.wait async
// CHECK-DAG: %[[SMEM:.*]] = arith.constant 20480 : i32
// CHECK-DAG: %[[THREADS:.*]] = arith.constant 128 : index
// CHECK: gpu.launch {{.*}} threads({{.*}}) in (%{{[^ ]*}} = %[[THREADS]], {{.*}}) dynamic_shared_memory_size %[[SMEM]] {
// CHECK-NEXT: %[[TID:.*]] = arith.index_cast
// CHECK: %[[SA:.*]] = memref.view %{{.*}} to memref<8192xf16, #gpu.address_space<workgroup>>
// CHECK: %[[SB:.*]] = memref.view %{{.*}} to memref<2048xf16, #gpu.address_space<workgroup>>
// CHECK: %[[BUNITS:.*]] = arith.constant 64 : i32
// CHECK-NEXT: %[[HASB:.*]] = arith.cmpi ult, %{{.*}}, %[[BUNITS]] : i32
// CHECK: %[[A0:.*]] = nvgpu.device_async_copy %[[XF]][%{{.*}}], %[[SA]][%{{.*}}], 2, %{{.*}} : memref<1536xf16> to memref<8192xf16, #gpu.address_space<workgroup>>
// CHECK-COUNT-7: nvgpu.device_async_copy %[[XF]][%{{.*}}], %[[SA]][%{{.*}}], 2, %{{[^ ]*}} :
// CHECK: scf.if %[[HASB]] {
// CHECK: nvgpu.device_async_copy %[[WF]][%{{.*}}], %[[SB]][%{{.*}}], 8, %{{.*}} {bypassL1} : memref<2592xf16> to memref<2048xf16, #gpu.address_space<workgroup>>
// CHECK-NEXT: }
// CHECK-NEXT: %[[G0:.*]] = nvgpu.device_async_create_group %[[A0]], %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}{{$}}
// CHECK-COUNT-2: nvgpu.device_async_create_group
// CHECK: scf.for
// CHECK-NEXT: nvgpu.device_async_wait %[[G0]] {numGroups = 2 : i32}
// CHECK: nvgpu.device_async_create_group
// CHECK: nvgpu.device_async_wait %[[G0]] {numGroups = 0 : i32}
// CHECK: scf.for %{{.*}} = %[[TID]]
// CHECK-NOT: arith.truncf
// CHECK: vector.store %{{.*}}, %[[OF]][%{{.*}}] {alignment = 16 : i64} : memref<4096xf32>, vector<8xf32>
func.func @c6_four_byte_copies(%x: memref<1x4x8x8x6xf16>, %w: memref<3x3x3x6x16xf16>, %o: memref<1x4x8x8x16xf32>) {
  conv3d.conv ins(%x, %w : memref<1x4x8x8x6xf16>, memref<3x3x3x6x16xf16>) outs(%o : memref<1x4x8x8x16xf32>) overwrite padding = [2, 0, 1, 1, 1, 1] config = #conv3d.igemm_config<tile_m = 64, tile_n = 16, tile_k = 32, stages = 4, warps_m = 4, warps_n = 1>
  return
}

// -----

// k_order = qslice_outer on a causal conv (depth padding [2, 0]): the
// kernel runs the K steps of the depth slices [begin, end) that some row of
// its M tile reads outside the halo, ceil(R*S*C / tile_k) = ceil(144 / 64) =
// 3 steps per slice. Step t reads slice q = begin + t / 3 at
// k0 = 144 q + 64 (t % 3), with k < 144 (q + 1): the last step of a slice
// is partial. 2 x 1 warps (64 threads), each 32 x 32 (2 x 4 mma tiles, 32
// accumulators) over 4 k16 steps. Shared memory: 3 x (64x64 + 64x32) x 2 B
// = 36864 B.

// CHECK-LABEL: func.func @qslice_outer
// CHECK: gpu.wait async
// CHECK-DAG: %[[SMEM:.*]] = arith.constant 36864 : i32
// CHECK-DAG: %[[BLOCKS:.*]] = arith.constant 6 : index
// CHECK-DAG: %[[THREADS:.*]] = arith.constant 64 : index
// CHECK: gpu.launch {{.*}} in (%{{[^ ]*}} = %[[BLOCKS]], {{.*}} threads({{.*}}) in (%{{[^ ]*}} = %[[THREADS]], {{.*}} dynamic_shared_memory_size %[[SMEM]] {
// The slice range, from the last slice to the first.
// CHECK-COUNT-3: arith.maxui
// CHECK-NEXT: %[[BEGIN:.*]] = arith.index_cast %{{.*}} : index to i32
// CHECK-NEXT: %[[END:.*]] = arith.index_cast %{{.*}} : index to i32
// No active slice: the range is empty (its end clamped to its begin).
// CHECK-NEXT: %[[ANY:.*]] = arith.cmpi ult, %[[BEGIN]], %[[END]] : i32
// CHECK-NEXT: %[[CLAMPED:.*]] = arith.select %[[ANY]], %[[END]], %[[BEGIN]] : i32
// CHECK-NEXT: %[[PER:.*]] = arith.constant 3 : i32
// CHECK-NEXT: %[[FIRST:.*]] = arith.muli %[[BEGIN]], %[[PER]] : i32
// CHECK-NEXT: %[[PER0:.*]] = arith.constant 3 : i32
// CHECK-NEXT: %[[LAST:.*]] = arith.muli %[[CLAMPED]], %[[PER0]] : i32
// CHECK-NEXT: %[[STEPS:.*]] = arith.subi %[[LAST]], %[[FIRST]] : i32
// CHECK-NOT: arith.minui
// CHECK: %{{.*}}:32 = scf.for %[[T:.*]] = %{{.*}} to %[[STEPS]] step
// CHECK-NEXT: nvgpu.device_async_wait %{{.*}} {numGroups = 1 : i32}
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: %[[DIST:.*]] = arith.constant 2 : i32
// CHECK-NEXT: %[[AHEAD:.*]] = arith.addi %[[T]], %[[DIST]] : i32
// CHECK-NEXT: %[[S:.*]] = arith.constant 3 : i32
// CHECK-NEXT: %{{.*}} = arith.remui %[[AHEAD]], %[[S]] : i32
// CHECK-NEXT: %[[STEP:.*]] = arith.addi %[[FIRST]], %[[AHEAD]] : i32
// CHECK-NEXT: %[[PER1:.*]] = arith.constant 3 : i32
// CHECK-NEXT: %[[Q:.*]] = arith.divui %[[STEP]], %[[PER1]] : i32
// CHECK-NEXT: %[[SLICEK:.*]] = arith.constant 144 : i32
// CHECK-NEXT: %[[QK:.*]] = arith.muli %[[Q]], %[[SLICEK]] : i32
// CHECK-NEXT: %[[PER2:.*]] = arith.constant 3 : i32
// CHECK-NEXT: %[[WITHIN:.*]] = arith.remui %[[STEP]], %[[PER2]] : i32
// CHECK-NEXT: %[[TK:.*]] = arith.constant 64 : i32
// CHECK-NEXT: %[[WK:.*]] = arith.muli %[[WITHIN]], %[[TK]] : i32
// CHECK-NEXT: %[[K0:.*]] = arith.addi %[[QK]], %[[WK]] : i32
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1 : i32
// CHECK-NEXT: %[[QNEXT:.*]] = arith.addi %[[Q]], %[[ONE]] : i32
// CHECK-NEXT: %[[SLICEK2:.*]] = arith.constant 144 : i32
// CHECK-NEXT: %[[LIMIT:.*]] = arith.muli %[[QNEXT]], %[[SLICEK2]] : i32
// CHECK-NEXT: arith.cmpi ult, %[[AHEAD]], %[[STEPS]] : i32
// CHECK-NEXT: %[[K:.*]] = arith.addi %[[K0]], %{{.*}} : i32
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK-NEXT: %[[KV:.*]] = arith.addi %[[K]], %[[ZERO]] : i32
// CHECK-NEXT: arith.cmpi ult, %[[KV]], %[[LIMIT]] : i32
// 8 A and 4 B chunks per thread and step.
// CHECK-COUNT-12: nvgpu.device_async_copy
// CHECK-NEXT: nvgpu.device_async_create_group %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}{{$}}
// CHECK-COUNT-32: nvvm.mma.sync
// CHECK-NOT: nvvm.mma.sync
// CHECK: scf.yield
func.func @qslice_outer(%x: memref<1x6x8x8x16xbf16>, %w: memref<3x3x3x16x32xbf16>, %o: memref<1x6x8x8x32xbf16>) {
  conv3d.conv ins(%x, %w : memref<1x6x8x8x16xbf16>, memref<3x3x3x16x32xbf16>) outs(%o : memref<1x6x8x8x32xbf16>) overwrite padding = [2, 0, 1, 1, 1, 1] config = #conv3d.igemm_config<tile_m = 64, tile_n = 32, tile_k = 64, stages = 3, warps_m = 2, k_order = qslice_outer>
  return
}

// -----

// split_k = 3: the grid's split dimension becomes part of the block id (2 M
// tiles x 1 N tile x 3 splits = 6 blocks of one warp); split s runs K tiles
// [5 s, min(5 s + 5, 14)) and stores its partial sums into its slab of the
// f32 workspace (no zeroing, no atomics), without an epilogue. The bias and
// activation stay in the conv3d.epilogue after the launch, which adds the
// slabs in split order, for conv3d-lower-host-ops-to-gpu.

// CHECK-LABEL: func.func @split_k
// CHECK-SAME: (%[[X:.*]]: memref<1x4x4x4x16xbf16>, %[[W:.*]]: memref<3x3x3x16x16xbf16>, %[[B:.*]]: memref<16xf32>, %[[O:.*]]: memref<1x4x4x4x16xbf16>)
// CHECK: %[[WS:.*]] = memref.alloc() : memref<3x1x4x4x4x16xf32>
// CHECK-NOT: linalg.fill
// CHECK: %[[WSB:.*]], %{{.*}}, %{{.*}}:6, %{{.*}}:6 = memref.extract_strided_metadata %[[WS]]
// CHECK-NEXT: %[[WSF:.*]] = memref.reinterpret_cast %[[WSB]] to offset: [0], sizes: [3072], strides: [1] : memref<f32> to memref<3072xf32>
// CHECK-NEXT: %[[START:.*]] = gpu.wait async
// CHECK-DAG: %[[SMEM:.*]] = arith.constant 6144 : i32
// CHECK-DAG: %[[BLOCKS:.*]] = arith.constant 6 : index
// CHECK-DAG: %[[THREADS:.*]] = arith.constant 32 : index
// CHECK: %[[LAUNCH:.*]] = gpu.launch async [%[[START]]] blocks(%[[BX:[^,]*]], {{.*}}) in (%{{[^ ]*}} = %[[BLOCKS]], {{.*}}) threads({{.*}}) in (%{{[^ ]*}} = %[[THREADS]], {{.*}}) dynamic_shared_memory_size %[[SMEM]] {
// CHECK: %[[BID:.*]] = arith.index_cast %[[BX]] : index to i32
// CHECK-NEXT: %{{.*}} = arith.constant 0 : i32
// CHECK-NEXT: %[[MT:.*]] = arith.constant 2 : i32
// CHECK-NEXT: %{{.*}} = arith.remui %[[BID]], %[[MT]] : i32
// CHECK-NEXT: %[[MT2:.*]] = arith.constant 2 : i32
// CHECK-NEXT: %[[SPLIT:.*]] = arith.divui %[[BID]], %[[MT2]] : i32
// CHECK: %[[PER:.*]] = arith.constant 5 : i32
// CHECK-NEXT: %[[FIRST:.*]] = arith.muli %[[SPLIT]], %[[PER]] : i32
// CHECK-NEXT: %[[PER2:.*]] = arith.constant 5 : i32
// CHECK-NEXT: %[[NEXT:.*]] = arith.addi %[[FIRST]], %[[PER2]] : i32
// CHECK-NEXT: %[[NKT:.*]] = arith.constant 14 : i32
// CHECK-NEXT: %[[LAST:.*]] = arith.minui %[[NEXT]], %[[NKT]] : i32
// CHECK-NEXT: %[[ANY:.*]] = arith.cmpi ult, %[[FIRST]], %[[LAST]] : i32
// CHECK-NEXT: %[[END:.*]] = arith.select %[[ANY]], %[[LAST]], %[[FIRST]] : i32
// CHECK-NEXT: %[[STEPS:.*]] = arith.subi %[[END]], %[[FIRST]] : i32
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[STEPS]] step
// CHECK: scf.yield
// CHECK: scf.if
// CHECK: vector.load %{{.*}} : memref<640xf32, #gpu.address_space<workgroup>>, vector<8xf32>
// CHECK-NOT: vector.load
// CHECK-NOT: memref.atomic_rmw
// CHECK: vector.store %{{.*}}, %[[WSF]][%{{.*}}] {alignment = 16 : i64} : memref<3072xf32>, vector<8xf32>
// CHECK: gpu.terminator
// CHECK: gpu.wait [%[[LAUNCH]]]
// CHECK-NEXT: conv3d.epilogue ins(%[[WS]] : memref<3x1x4x4x4x16xf32>) bias(%[[B]] : memref<16xf32>) outs(%[[O]] : memref<1x4x4x4x16xbf16>) overwrite activation = relu
// CHECK-NEXT: memref.dealloc %[[WS]] : memref<3x1x4x4x4x16xf32>
func.func @split_k(%x: memref<1x4x4x4x16xbf16>, %w: memref<3x3x3x16x16xbf16>, %b: memref<16xf32>, %o: memref<1x4x4x4x16xbf16>) {
  conv3d.conv ins(%x, %w : memref<1x4x4x4x16xbf16>, memref<3x3x3x16x16xbf16>) bias(%b : memref<16xf32>) outs(%o : memref<1x4x4x4x16xbf16>) overwrite padding = [1, 1, 1, 1, 1, 1] activation = relu config = #conv3d.igemm_config<tile_m = 32, tile_n = 16, tile_k = 32, stages = 2, split_k = 3>
  return
}

// -----

// The fused epilogue: bias (f32), SiLU and a bf16 residual, 8 channels per
// access. Per channel: x = acc + bias; x / (1 + exp(-x)); + residual;
// rounded to bf16.

// CHECK-LABEL: func.func @fused_epilogue
// CHECK-SAME: (%[[X:.*]]: memref<1x4x8x8x16xbf16>, %[[W:.*]]: memref<3x3x3x16x32xbf16>, %[[B:.*]]: memref<32xf32>, %[[R:.*]]: memref<1x4x8x8x32xbf16>, %[[O:.*]]: memref<1x4x8x8x32xbf16>)
// CHECK: memref.extract_strided_metadata %[[O]]
// CHECK-NEXT: %[[OF:.*]] = memref.reinterpret_cast %{{.*}} to offset: [0], sizes: [8192], strides: [1] : memref<bf16> to memref<8192xbf16>
// CHECK-NEXT: %[[BB:.*]], %{{.*}}, %{{.*}}, %{{.*}} = memref.extract_strided_metadata %[[B]]
// CHECK-NEXT: %[[BF:.*]] = memref.reinterpret_cast %[[BB]] to offset: [0], sizes: [32], strides: [1] : memref<f32> to memref<32xf32>
// CHECK-NEXT: %[[RB:.*]], %{{.*}}, %{{.*}}:5, %{{.*}}:5 = memref.extract_strided_metadata %[[R]]
// CHECK-NEXT: %[[RF:.*]] = memref.reinterpret_cast %[[RB]] to offset: [0], sizes: [8192], strides: [1] : memref<bf16> to memref<8192xbf16>
// CHECK: gpu.launch
// CHECK: scf.yield
// The bias and residual of the thread's positions are read before any is
// computed (guarded reads, zeros past the tile).
// CHECK: %[[BIAS:.*]] = scf.if %{{.*}} -> (vector<8xf32>) {
// CHECK: %{{.*}} = vector.load %[[BF]][%{{.*}}] {alignment = 16 : i64} : memref<32xf32>, vector<8xf32>
// CHECK: %[[RES:.*]] = scf.if %{{.*}} -> (vector<8xbf16>) {
// CHECK: %{{.*}} = vector.load %[[RF]][%{{.*}}] {alignment = 16 : i64} : memref<8192xbf16>, vector<8xbf16>
// CHECK: scf.if
// CHECK: %[[ACC:.*]] = vector.load %{{.*}} : memref<2304xf32, #gpu.address_space<workgroup>>, vector<8xf32>
// CHECK: %[[A0:.*]] = vector.extract %[[ACC]][0] : f32 from vector<8xf32>
// CHECK-NEXT: %[[B0:.*]] = vector.extract %[[BIAS]][0] : f32 from vector<8xf32>
// CHECK-NEXT: %[[R0:.*]] = vector.extract %[[RES]][0] : bf16 from vector<8xbf16>
// CHECK-NEXT: %[[X0:.*]] = arith.addf %[[A0]], %[[B0]] : f32
// CHECK-NEXT: %[[NEG:.*]] = arith.negf %[[X0]] : f32
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[E:.*]] = math.exp %[[NEG]] : f32
// CHECK-NEXT: %[[DEN:.*]] = arith.addf %[[ONE]], %[[E]] : f32
// CHECK-NEXT: %[[SILU:.*]] = arith.divf %[[X0]], %[[DEN]] : f32
// CHECK-NEXT: %[[R0F:.*]] = arith.extf %[[R0]] : bf16 to f32
// CHECK-NEXT: %[[Y0:.*]] = arith.addf %[[SILU]], %[[R0F]] : f32
// CHECK-NEXT: %[[Y0B:.*]] = arith.truncf %[[Y0]] : f32 to bf16
// CHECK-NEXT: vector.insert %[[Y0B]], %{{.*}} [0] : bf16 into vector<8xbf16>
// CHECK-COUNT-7: math.exp
// CHECK-NOT: math.exp
// CHECK: vector.store %{{.*}}, %[[OF]][%{{.*}}] {alignment = 16 : i64} : memref<8192xbf16>, vector<8xbf16>
func.func @fused_epilogue(%x: memref<1x4x8x8x16xbf16>, %w: memref<3x3x3x16x32xbf16>, %b: memref<32xf32>, %r: memref<1x4x8x8x32xbf16>, %o: memref<1x4x8x8x32xbf16>) {
  conv3d.conv ins(%x, %w : memref<1x4x8x8x16xbf16>, memref<3x3x3x16x32xbf16>) bias(%b : memref<32xf32>) residual(%r : memref<1x4x8x8x32xbf16>) outs(%o : memref<1x4x8x8x32xbf16>) overwrite padding = [1, 1, 1, 1, 1, 1] activation = silu config = #conv3d.igemm_config<tile_m = 64, tile_n = 32, tile_k = 32, stages = 2, warps_m = 2, warps_n = 2>
  return
}

// -----

// NVFP4 quantization of the activations fused into the A tile load: A takes
// the register path with a unit of one 16-element block (2 loads of 8) per
// thread (64*32/16 = 128 blocks, 128 threads), so a thread can take the
// block's maximum, derive its scale from amax (global scale amax / (6 *
// 448) = amax / 2688) and quantize the 16 values before storing them. B is
// still copied with cp.async: a group holds only B's copy.

// CHECK-LABEL: func.func @nvfp4_tile_quant
// CHECK-SAME: %[[AMAX:[^:]*]]: f32
// CHECK: %[[XF:.*]] = memref.reinterpret_cast %{{.*}} to memref<8192xbf16>
// CHECK: %[[WF:.*]] = memref.reinterpret_cast %{{.*}} to memref<27648xbf16>
// CHECK: gpu.launch
// CHECK: %[[SA:.*]] = memref.view %{{.*}} to memref<4096xbf16, #gpu.address_space<workgroup>>
// CHECK: %[[SB:.*]] = memref.view %{{.*}} to memref<2048xbf16, #gpu.address_space<workgroup>>
// CHECK-NOT: nvgpu.device_async_copy %[[XF]]
// CHECK: %[[B0:.*]] = nvgpu.device_async_copy %[[WF]][%{{.*}}], %[[SB]][%{{.*}}], 8, %{{.*}} {bypassL1}
// CHECK-NEXT: %[[G0:.*]] = nvgpu.device_async_create_group %[[B0]]{{$}}
// CHECK: vector.load %[[XF]][%{{.*}}] {alignment = 16 : i64} : memref<8192xbf16>, vector<8xbf16>
// CHECK: vector.load %[[XF]][%{{.*}}] {alignment = 16 : i64} : memref<8192xbf16>, vector<8xbf16>
// CHECK-NOT: vector.load
// CHECK-COUNT-16: arith.maxnumf
// CHECK-NEXT: %[[C2688:.*]] = arith.constant 2.688000e+03 : f32
// CHECK-NEXT: %{{.*}} = arith.divf %[[AMAX]], %[[C2688]] : f32
// CHECK-COUNT-16: vector.insert
// CHECK-NOT: vector.insert
// CHECK: vector.store %{{.*}}, %[[SA]][%{{.*}}] {alignment = 16 : i64} : memref<4096xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
// CHECK-NEXT: %{{.*}} = arith.constant
// CHECK-NEXT: %{{.*}} = arith.addi
// CHECK: vector.store %{{.*}}, %[[SA]][%{{.*}}] {alignment = 16 : i64} : memref<4096xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
// The loop: B copy of step t + 1, A loads of step t + 1, the MMAs, then A's
// quantization and stores into stage (t + 1) % 2.
// CHECK: scf.for
// CHECK-NEXT: nvgpu.device_async_wait %[[G0]] {numGroups = 0 : i32}
// CHECK-NEXT: gpu.barrier
// CHECK-NOT: nvgpu.device_async_copy %[[XF]]
// CHECK: nvgpu.device_async_copy %[[WF]]
// CHECK-NEXT: nvgpu.device_async_create_group %{{[^,]*}}{{$}}
// CHECK-COUNT-2: vector.load %[[XF]]
// CHECK-COUNT-8: nvvm.mma.sync
// CHECK-COUNT-16: arith.maxnumf
// CHECK: arith.divf %[[AMAX]]
// CHECK-COUNT-2: vector.store %{{.*}}, %[[SA]]
// CHECK-NEXT: scf.yield
func.func @nvfp4_tile_quant(%x: memref<1x4x8x8x32xbf16>, %w: memref<3x3x3x32x32xbf16>, %amax: f32, %o: memref<1x4x8x8x32xbf16>) {
  conv3d.conv ins(%x, %w : memref<1x4x8x8x32xbf16>, memref<3x3x3x32x32xbf16>) quantize(#conv3d.nvfp4<block_size = 16>, %amax) outs(%o : memref<1x4x8x8x32xbf16>) overwrite padding = [1, 1, 1, 1, 1, 1] config = #conv3d.igemm_config<tile_m = 64, tile_n = 32, tile_k = 32, stages = 2, warps_m = 2, warps_n = 2>
  return
}

// -----

// Operands of 2^31 elements or more: the kernel's index math is 64-bit
// (`index`, no i32 casts). 64*1024*1024 rows in 2^20 M tiles.

// CHECK-LABEL: func.func @index_math
// CHECK: %[[XF:.*]] = memref.reinterpret_cast %{{.*}} to offset: [0], sizes: [2147483648], strides: [1] : memref<bf16> to memref<2147483648xbf16>
// CHECK: gpu.wait async
// CHECK-DAG: %[[BLOCKS:.*]] = arith.constant 1048576 : index
// CHECK: gpu.launch async [%{{.*}}] blocks(%[[BX:[^,]*]], {{.*}}) in (%{{[^ ]*}} = %[[BLOCKS]], {{.*}}) threads(%[[TX:[^,]*]], {{.*}}) in
// CHECK-NOT: arith.index_cast
// CHECK: arith.remui %[[TX]], %{{.*}} : index
// CHECK-NOT: arith.index_cast
// CHECK: arith.remui %[[BX]], %{{.*}} : index
// CHECK-NOT: arith.index_cast
// CHECK: nvgpu.device_async_copy %[[XF]][%{{.*}}], %{{.*}}[%{{.*}}], 8, %{{.*}} {bypassL1} : memref<2147483648xbf16> to memref<4096xbf16, #gpu.address_space<workgroup>>
// CHECK-NOT: arith.index_cast
// CHECK: gpu.terminator
func.func @index_math(%x: memref<1x64x1024x1024x32xbf16>, %w: memref<1x1x1x32x32xbf16>, %o: memref<1x64x1024x1024x32xbf16>) {
  conv3d.conv ins(%x, %w : memref<1x64x1024x1024x32xbf16>, memref<1x1x1x32x32xbf16>) outs(%o : memref<1x64x1024x1024x32xbf16>) overwrite config = #conv3d.igemm_config<tile_m = 64, tile_n = 32, tile_k = 32, stages = 2, warps_m = 2, warps_n = 2>
  return
}

// -----

// Operands at static offsets: the input at offset 4 (8 bytes) is copied in
// 4-element (8-byte) cp.async chunks instead of 16-byte ones; the output at
// offset 2 takes the element-wise epilogue (no 16-byte stores); the
// identity-layout filter keeps 16-byte copies.
// CHECK-LABEL: func.func @static_offsets
// CHECK-NOT: nvgpu.device_async_copy {{.*}}, 8, {{.*}} : memref<1024xbf16, strided<[1], offset: 4>>
// CHECK: nvgpu.device_async_copy %{{.*}}, 4, %{{.*}} : memref<1024xbf16, strided<[1], offset: 4>> to
// CHECK: nvgpu.device_async_copy %{{.*}}, 8, %{{.*}} {bypassL1} : memref<256xbf16> to
// CHECK-NOT: vector<8xbf16>
// CHECK: vector.store %{{.*}} {alignment = 2 : i64} : memref<1024xbf16, strided<[1], offset: 2>>, vector<1xbf16>
func.func @static_offsets(%x: memref<1x4x4x4x16xbf16, strided<[1024, 256, 64, 16, 1], offset: 4>>, %w: memref<1x1x1x16x16xbf16>, %o: memref<1x4x4x4x16xbf16, strided<[1024, 256, 64, 16, 1], offset: 2>>) {
  conv3d.conv ins(%x, %w : memref<1x4x4x4x16xbf16, strided<[1024, 256, 64, 16, 1], offset: 4>>, memref<1x1x1x16x16xbf16>) outs(%o : memref<1x4x4x4x16xbf16, strided<[1024, 256, 64, 16, 1], offset: 2>>) overwrite config = #conv3d.igemm_config<tile_m = 64, tile_n = 16, tile_k = 16, stages = 2>
  return
}
