// conv3d-lower-to-sm100: each implicit-GEMM grid loop whose config is for the
// sm100 kernel becomes a persistent, warp-specialized tcgen05 kernel (192
// threads; the host side, TMA descriptors and persistent launch, is the
// sm90 kernel's: lower-to-sm90.mlir checks it):
//   setup     thread 0 initializes per stage a full and an empty mbarrier
//             (1 arrival each: the producer's expect_tx, the MMA warp's
//             tcgen05.commit) and per accumulator buffer a full (1: a
//             commit) and an empty one (128: every epilogue thread); the
//             MMA warp (warp 1) allocates the TMEM columns into a shared
//             slot and relinquishes the allocation permit; tcgen05.fence
//             before and after the CTA barrier that publishes the address;
//   warp 0    thread 0 runs the shared TMA producer;
//   warp 1    one elected thread: per tile, wait for the accumulator
//             buffer to be empty (phase one ahead), fence after; per step,
//             wait for the stage, 4 tcgen05.mma kind::f16 (the first of the
//             tile with enable-input-d = step != 0, the others true) and a
//             commit to the stage's empty barrier; after the steps a commit
//             to the buffer's full barrier;
//   warps 2-5 per tile: wait for the buffer's full barrier, fence after;
//             per chunk, tcgen05.ld 32x32b and tcgen05.wait::ld; after the
//             last read a fence before the arrival on the buffer's empty
//             barrier; the staged epilogue between named barriers (id 1,
//             128 threads);
//   teardown  fence before a CTA barrier, then warp 1 frees the same
//             columns (fence after).
// Errors: lower-to-sm100-invalid.mlir.
//
// RUN: conv3d-opt %s -split-input-file -conv3d-implicit-gemm=target=sm100 -conv3d-lower-to-sm100 | FileCheck %s

// A causal bf16 3x3x3 convolution, C = 64 (27 K steps), F = 96, M = 256 (2
// tiles of 128 x 96), 4 stages. Shared memory: 4 stages of 16384 + 12288 B
// (114688 B); the 128 x (96 + 4) f32 staging tile (51200 B) at 114688; the
// barriers at 165888 (full), 165920 (empty), 165952 (accumulator full, 2
// buffers), 165968 (accumulator empty); the TMEM slot at 165984; 8 bytes
// and 1024 B of slack: 167016. Two 96-column accumulators: 256 columns.
// The instruction descriptor: f32 D (0x10), bf16 A and B (0x80 | 0x400),
// N >> 3 = 12 at bit 17, M >> 4 = 8 at bit 24: 0x08180490 = 135791760. The
// shared-memory descriptor template (tcgen05: bits 16, 38, 46 and 62):
// 0x4000404000010000 = 4611756662049538048.

// CHECK-LABEL: func.func @bf16_causal_3x3x3
// CHECK: gpu.launch async {{.*}} threads({{.*}}) in (%{{.*}} = %c192, {{.*}} dynamic_shared_memory_size %c167016_i32
// CHECK: %[[WARP:.*]] = arith.divui %[[TID:.*]], %c32_i32 : i32
// CHECK: %[[THREAD0:.*]] = arith.cmpi eq, %[[TID]], %c0_i32 : i32
// CHECK: scf.if %[[THREAD0]] {
// CHECK: %c165888_i32 = arith.constant 165888
// CHECK: nvvm.mbarrier.init %{{.*}}, %c1_i32{{.*}} : !llvm.ptr<3>, i32
// CHECK: %c165920_i32 = arith.constant 165920
// CHECK: nvvm.mbarrier.init %{{.*}}, %c1_i32{{.*}} : !llvm.ptr<3>, i32
// CHECK-COUNT-6: nvvm.mbarrier.init %{{.*}}, %c1_i32{{.*}} : !llvm.ptr<3>, i32
// CHECK: %c165952_i32 = arith.constant 165952
// CHECK: nvvm.mbarrier.init %{{.*}}, %c1_i32{{.*}} : !llvm.ptr<3>, i32
// CHECK: %c165968_i32 = arith.constant 165968
// CHECK: nvvm.mbarrier.init %{{.*}}, %c128_i32 : !llvm.ptr<3>, i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c1_i32{{.*}} : !llvm.ptr<3>, i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c128_i32{{.*}} : !llvm.ptr<3>, i32
// CHECK-NEXT: nvvm.fence.mbarrier.init
// CHECK-NOT: nvvm.mbarrier.init
// CHECK: %c165984_i32 = arith.constant 165984 : i32
// CHECK: %[[SLOTADDR:.*]] = arith.addi %{{.*}}, %c165984_i32 : i32
// CHECK: %[[SLOT:.*]] = llvm.inttoptr %[[SLOTADDR]] : i32 to !llvm.ptr<3>
// CHECK: %[[COLUMNS:.*]] = arith.constant 256 : i32
// CHECK: %[[ISMMA:.*]] = arith.cmpi eq, %[[WARP]], %c1_i32 : i32
// CHECK: scf.if %[[ISMMA]] {
// CHECK-NEXT: nvvm.tcgen05.alloc %[[SLOT]], %[[COLUMNS]] : !llvm.ptr<3>, i32
// CHECK-NEXT: nvvm.tcgen05.relinquish_alloc_permit
// CHECK-NEXT: }
// CHECK-NEXT: nvvm.tcgen05.fence <before>
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: nvvm.tcgen05.fence <after>
// CHECK-NEXT: %[[TMEM:.*]] = llvm.load %[[SLOT]] : !llvm.ptr<3> -> i32
//
// The producer warp: thread 0 issues the TMA loads (28672 bytes a step).
// CHECK: %[[ISPRODUCER:.*]] = arith.cmpi eq, %[[WARP]], %c0_i32{{.*}} : i32
// CHECK: scf.if %[[ISPRODUCER]] {
// CHECK-NEXT: scf.if %[[THREAD0]] {
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c28672_i32
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global {{.*}} im2col
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK: } else {
//
// The MMA warp.
// CHECK: scf.if
// CHECK-NEXT: %[[LEADER:.*]] = nvvm.elect.sync -> i1
// CHECK-NEXT: %[[IDESC:.*]] = arith.constant 135791760 : i32
// CHECK-NEXT: %[[TEMPLATE:.*]] = arith.constant 4611756662049538048 : i64
// CHECK: scf.for %{{.*}} = %{{.*}} to %c2_i32 step %{{.*}} iter_args(%[[DONE:.*]] = %{{.*}}, %[[LOCAL:.*]] = %{{.*}}) -> (i32, i32)
// CHECK: %[[BUFFER:.*]] = arith.remui %[[LOCAL]], %c2_i32{{.*}} : i32
// CHECK: %[[USES:.*]] = arith.divui %[[LOCAL]], %c2_i32{{.*}} : i32
// CHECK: %[[ACCPHASE:.*]] = arith.andi %[[USES]], %c1_i32{{.*}} : i32
// CHECK: arith.constant 165968 : i32
// CHECK: %[[ACCEMPTY:.*]] = llvm.inttoptr
// CHECK: %[[AHEAD:.*]] = arith.xori %[[ACCPHASE]], %c1_i32{{.*}} : i32
// CHECK: nvvm.mbarrier.try_wait.parity %[[ACCEMPTY]], %[[AHEAD]]
// CHECK-NEXT: nvvm.tcgen05.fence <after>
// CHECK: %[[COLUMN:.*]] = arith.muli %[[BUFFER]], %c96_i32{{.*}} : i32
// CHECK-NEXT: %[[DADDR:.*]] = arith.addi %[[TMEM]], %[[COLUMN]] : i32
// CHECK-NEXT: %[[D:.*]] = llvm.inttoptr %[[DADDR]] : i32 to !llvm.ptr<6>
// CHECK: scf.for %[[T:.*]] = %c0_i32{{.*}} to
// CHECK: %[[STAGE:.*]] = arith.remui %{{.*}}, %c4_i32
// CHECK: arith.constant 165888 : i32
// CHECK: %[[FULL:.*]] = llvm.inttoptr
// CHECK: nvvm.mbarrier.try_wait.parity %[[FULL]], %[[PHASE:.*]], %{{.*}}
// CHECK-NEXT: scf.if %[[LEADER]] {
// CHECK: %[[ACCUMULATE:.*]] = arith.cmpi ne, %[[T]], %c0_i32{{.*}} : i32
// CHECK: %[[DESCA:.*]] = arith.ori %[[TEMPLATE]], %{{.*}} : i64
// CHECK: %[[DESCB:.*]] = arith.ori %[[TEMPLATE]], %{{.*}} : i64
// CHECK-NEXT: nvvm.tcgen05.mma %[[D]], %[[DESCA]], %[[DESCB]], %[[IDESC]], %[[ACCUMULATE]] {ctaGroup = #nvvm.cta_group<cta_1>, kind = #nvvm.tcgen05_mma_kind<f16>}
// CHECK-COUNT-3: nvvm.tcgen05.mma %[[D]], %{{.*}}, %{{.*}}, %[[IDESC]], %true {ctaGroup = #nvvm.cta_group<cta_1>, kind = #nvvm.tcgen05_mma_kind<f16>}
// CHECK-NEXT: arith.constant 165920 : i32
// CHECK-NEXT: arith.constant 8 : i32
// CHECK-NEXT: arith.muli %[[STAGE]], %{{.*}} : i32
// CHECK-NEXT: arith.addi
// CHECK-NEXT: arith.addi
// CHECK-NEXT: %[[EMPTY:.*]] = llvm.inttoptr
// CHECK-NEXT: nvvm.tcgen05.commit %[[EMPTY]] : !llvm.ptr<3>
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: scf.if %[[LEADER]] {
// CHECK-NEXT: arith.constant 165952 : i32
// CHECK-NEXT: arith.constant 8 : i32
// CHECK-NEXT: arith.muli %[[BUFFER]], %{{.*}} : i32
// CHECK-NEXT: arith.addi
// CHECK-NEXT: arith.addi
// CHECK-NEXT: %[[ACCFULL:.*]] = llvm.inttoptr
// CHECK-NEXT: nvvm.tcgen05.commit %[[ACCFULL]] : !llvm.ptr<3>
// CHECK-NEXT: }
// CHECK-NOT: nvvm.tcgen05.mma
// CHECK: } else {
//
// The epilogue warps: warp % 4 picks the 32 TMEM lanes (lane field << 16).
// CHECK: %[[QUARTER:.*]] = arith.remui %[[WARP]], %c4_i32{{.*}} : i32
// CHECK-NEXT: arith.constant 32 : i32
// CHECK-NEXT: %[[LANEBASE:.*]] = arith.muli %[[QUARTER]], %{{.*}} : i32
// CHECK: memref.view {{.*}} to memref<12800xf32, #gpu.address_space<workgroup>>
// CHECK: %[[LANEFIELD:.*]] = arith.muli %[[LANEBASE]], %c65536_i32 : i32
// CHECK-NEXT: %[[LANEADDR:.*]] = arith.addi %[[TMEM]], %[[LANEFIELD]] : i32
// CHECK: scf.for
// CHECK: arith.constant 165952 : i32
// CHECK: %[[EACCFULL:.*]] = llvm.inttoptr
// CHECK: nvvm.mbarrier.try_wait.parity %[[EACCFULL]], %[[EPHASE:.*]], %{{.*}}
// CHECK-NEXT: nvvm.tcgen05.fence <after>
// CHECK: nvvm.barrier id = %c1_i32{{.*}} number_of_threads = %c128_i32
// CHECK-COUNT-2: nvvm.tcgen05.ld %{{.*}} {shape = #nvvm.tcgen05_ldst_shape<shape_32x32b>} : vector<32xi32>
// CHECK: nvvm.tcgen05.ld %{{.*}} {shape = #nvvm.tcgen05_ldst_shape<shape_32x32b>} : vector<32xi32>
// CHECK-NEXT: nvvm.tcgen05.wait <load>
// The words are read again after the wait (wordsAfterWait).
// CHECK: llvm.inline_asm has_side_effects "", "=r,{{.*}},31"
// CHECK-NOT: nvvm.tcgen05.ld
// CHECK: nvvm.tcgen05.fence <before>
// CHECK-NEXT: arith.constant 165968 : i32
// CHECK: %[[EACCEMPTY:.*]] = llvm.inttoptr
// CHECK-NEXT: nvvm.mbarrier.arrive %[[EACCEMPTY]] : !llvm.ptr<3>
// CHECK-NOT: nvvm.tcgen05.ld
// CHECK: nvvm.barrier id = %c1_i32{{.*}} number_of_threads = %c128_i32
// CHECK: vector.load {{.*}} vector<8xf32>
// CHECK: vector.store {{.*}} vector<8xbf16>
//
// Teardown.
// CHECK: nvvm.tcgen05.fence <before>
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: arith.constant 1 : i32
// CHECK-NEXT: %[[ISMMA2:.*]] = arith.cmpi eq, %[[WARP]], %{{.*}} : i32
// CHECK-NEXT: scf.if %[[ISMMA2]] {
// CHECK-NEXT: nvvm.tcgen05.fence <after>
// CHECK-NEXT: %[[TMEMPTR:.*]] = llvm.inttoptr %[[TMEM]] : i32 to !llvm.ptr<6>
// CHECK-NEXT: nvvm.tcgen05.dealloc %[[TMEMPTR]], %[[COLUMNS]] : !llvm.ptr<6>, i32
// CHECK-NEXT: }
// CHECK-NEXT: gpu.terminator
func.func @bf16_causal_3x3x3(%x: memref<1x6x8x8x64xbf16>, %w: memref<96x3x3x3x64xbf16>, %o: memref<1x4x8x8x96xbf16>) {
  conv3d.conv ins(%x, %w : memref<1x6x8x8x64xbf16>, memref<96x3x3x3x64xbf16>) outs(%o : memref<1x4x8x8x96xbf16>) overwrite padding = [0, 0, 1, 1, 1, 1] filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 128, tile_n = 96, tile_k = 64, stages = 4, warps_m = 4, kernel = sm100>
  return
}

// -----

// f16, F = 256: one accumulator buffer of 256 columns would leave half of
// TMEM unused; two fill all 512. 4 stages of 16384 + 32768 B; the staging
// in 8 chunks of 32 columns (128 x 36 x 4 = 18432 B), one tcgen05.ld
// 32x32b.x32 per chunk. The instruction descriptor: f16 A and B (0), N >> 3
// = 32: 0x08400010 = 138412048.
// CHECK-LABEL: func.func @f16_wide
// CHECK: nvvm.tcgen05.alloc %{{.*}}, %c512_i32
// CHECK: arith.constant 138412048 : i32
// CHECK-COUNT-4: nvvm.tcgen05.mma
// CHECK-NOT: nvvm.tcgen05.mma
// CHECK: memref<4608xf32, #gpu.address_space<workgroup>>
// CHECK-COUNT-8: nvvm.tcgen05.ld %{{.*}} {shape = #nvvm.tcgen05_ldst_shape<shape_32x32b>} : vector<32xi32>
// CHECK-NOT: nvvm.tcgen05.ld
// CHECK: nvvm.tcgen05.dealloc %{{.*}}, %c512_i32
func.func @f16_wide(%x: memref<1x4x8x8x64xf16>, %w: memref<256x1x1x1x64xf16>, %o: memref<1x4x8x8x256xf16>) {
  conv3d.conv ins(%x, %w : memref<1x4x8x8x64xf16>, memref<256x1x1x1x64xf16>) outs(%o : memref<1x4x8x8x256xf16>) overwrite filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 128, tile_n = 256, tile_k = 64, stages = 4, warps_m = 4, kernel = sm100>
  return
}

// -----

// Split-K over 3 ranges of 27 steps: a tile whose range is empty still hands
// its accumulator over (the commit arrives at once) and the epilogue stores
// zeros (selected on the step count) into its workspace slab; no atomics.
// CHECK-LABEL: func.func @split_k
// CHECK: nvvm.tcgen05.commit
// CHECK: nvvm.tcgen05.commit
// CHECK: %[[HASSTEPS:.*]] = arith.cmpi ugt, %{{.*}}, %c0_i32{{.*}} : i32
// CHECK: nvvm.tcgen05.ld
// CHECK: arith.select %[[HASSTEPS]], %{{.*}}, %{{.*}} : f32
// CHECK-NOT: memref.atomic_rmw
// CHECK: vector.store %{{.*}} : memref<27648xf32>, vector<8xf32>
// CHECK: conv3d.epilogue ins(%{{.*}} : memref<3x1x4x6x6x64xf32>)
func.func @split_k(%x: memref<1x4x6x6x64xbf16>, %w: memref<64x3x3x3x64xbf16>, %o: memref<1x4x6x6x64xf32>) {
  conv3d.conv ins(%x, %w : memref<1x4x6x6x64xbf16>, memref<64x3x3x3x64xbf16>) outs(%o : memref<1x4x6x6x64xf32>) padding = [1, 1, 1, 1, 1, 1] filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 4, warps_m = 4, split_k = 3, kernel = sm100>
  return
}

// -----

// A grid configured for the sm80 kernel (conv3d-select-config's fallback)
// gets the sm80 kernel: no tcgen05.
// CHECK-LABEL: func.func @sm80_fallback
// CHECK-NOT: nvvm.tcgen05
// CHECK: nvvm.mma.sync
// CHECK-NOT: nvvm.tcgen05
func.func @sm80_fallback(%x: memref<1x6x16x16x16xbf16>, %w: memref<32x3x3x3x16xbf16>, %o: memref<1x4x14x14x32xbf16>) {
  conv3d.conv ins(%x, %w : memref<1x6x16x16x16xbf16>, memref<32x3x3x3x16xbf16>) outs(%o : memref<1x4x14x14x32xbf16>) overwrite filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 64, tile_n = 32, tile_k = 16, stages = 4, warps_m = 2, kernel = sm80>
  return
}

// -----

// tile_m = 256: cta_group::2 over 2-CTA clusters. Each CTA loads 128 rows
// of A and 48 of B's 96 a step (16384 + 6144 B a stage, 4 stages: 90112;
// staging 128 x 100 x 4 = 51200 at 90112; barriers at 141312; the TMEM
// slot at 141408; 142440 B). The launch: clusters of 2, blocks = 2 x
// min(multiprocessors / 2, tiles); the persistent loop walks clusters
// (block id / 2). The accumulator-empty barriers count both CTAs'
// epilogue threads (256). TMEM allocation, relinquish and dealloc in both
// CTAs with cta_group::2, between cluster barriers (every barrier of the
// pair is initialized before any remote signal, and both CTAs outlive the
// last one). The producer: this CTA's rows (rank x 128 of A, rank x 48 of
// B), the loads completing on the even CTA's full barrier (the address
// with bit 24 cleared), which alone expects both CTAs' bytes (45056). The
// even CTA's MMA warp alone issues M = 256 MMAs (16 << 24 in the
// instruction descriptor: 0x10180490 = 270009488) and commits with the
// multicast mask 0b11 (both CTAs' barriers). The epilogue: this CTA's rows
// (m0 + rank x 128), the hand-back arriving on the even CTA's barrier
// (mapa to rank 0, cluster scope).
// CHECK-LABEL: func.func @cta_pair
// CHECK: %[[SMS:.*]] = arith.divui %{{.*}}, %c2
// CHECK: %[[PAIRS:.*]] = arith.minui %[[SMS]], %c1{{.*}} : index
// CHECK: %[[BLOCKS:.*]] = arith.muli %[[PAIRS]], %c2
// CHECK: gpu.launch async {{.*}} clusters({{.*}}) in (%{{.*}} = %c2{{.*}}, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) blocks({{.*}}) in (%{{.*}} = %[[BLOCKS]], {{.*}} threads({{.*}}) in (%{{.*}} = %c192, {{.*}} dynamic_shared_memory_size %c142440_i32
// CHECK: %[[RANK:.*]] = nvvm.read.ptx.sreg.cluster.ctarank : i32
// CHECK: arith.divui %{{.*}}, %c2_i32 : i32
// CHECK: %[[LEADER:.*]] = arith.cmpi eq, %[[RANK]], %c0_i32{{.*}} : i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c256_i32{{.*}} : !llvm.ptr<3>, i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c256_i32{{.*}} : !llvm.ptr<3>, i32
// CHECK: nvvm.fence.mbarrier.init
// CHECK: nvvm.tcgen05.alloc %{{.*}}, %[[COLUMNS:.*]] {group = #nvvm.cta_group<cta_2>}
// CHECK-NEXT: nvvm.tcgen05.relinquish_alloc_permit {group = #nvvm.cta_group<cta_2>}
// CHECK-NEXT: }
// CHECK-NEXT: nvvm.tcgen05.fence <before>
// CHECK-NEXT: nvvm.cluster.arrive {aligned}
// CHECK-NEXT: nvvm.cluster.wait {aligned}
// CHECK-NEXT: nvvm.tcgen05.fence <after>
// Producer.
// CHECK: arith.muli %[[RANK]], %c128_i32
// CHECK: arith.muli %[[RANK]], %c48_i32
// CHECK: %[[MASKED:.*]] = arith.andi %{{.*}}, %c-16777217_i32 : i32
// CHECK-NEXT: %[[FULL:.*]] = llvm.inttoptr %[[MASKED]] : i32 to !llvm.ptr<3>
// CHECK-NEXT: arith.constant 0 : i32
// CHECK-NEXT: %[[PLEADER:.*]] = arith.cmpi eq, %[[RANK]], %{{.*}} : i32
// CHECK-NEXT: scf.if %[[PLEADER]] {
// CHECK-NEXT: arith.constant 45056 : i32
// CHECK-NEXT: nvvm.mbarrier.arrive.expect_tx %[[FULL]], %{{.*}} : !llvm.ptr<3>, i32
// CHECK-NEXT: }
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %{{.*}}, %[[FULL]], box[{{.*}}] im2col[{{.*}}] {group = #nvvm.cta_group<cta_2>, mode = #nvvm.tma_load_mode<im2col>}
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %{{.*}}, %[[FULL]], box[{{.*}}] {group = #nvvm.cta_group<cta_2>}
// MMA warp: the even CTA only.
// CHECK: scf.if %[[LEADER]] {
// CHECK-NEXT: nvvm.elect.sync
// CHECK-NEXT: arith.constant 270009488 : i32
// CHECK-COUNT-4: nvvm.tcgen05.mma {{.*}} {ctaGroup = #nvvm.cta_group<cta_2>, kind = #nvvm.tcgen05_mma_kind<f16>}
// CHECK: nvvm.tcgen05.commit %{{.*}}, multicast_mask = %[[MASK:.*]] {group = #nvvm.cta_group<cta_2>} : !llvm.ptr<3>, i16
// CHECK: nvvm.tcgen05.commit %{{.*}}, multicast_mask = %[[MASK]] {group = #nvvm.cta_group<cta_2>} : !llvm.ptr<3>, i16
// Epilogue.
// CHECK: %[[ROWS:.*]] = arith.muli %[[RANK]], %c128_i32{{.*}} : i32
// CHECK: arith.addi %{{.*}}, %[[ROWS]] : i32
// CHECK: nvvm.tcgen05.fence <before>
// CHECK: %[[REMOTE:.*]] = nvvm.mapa %{{.*}}, %c0_i32{{.*}} : !llvm.ptr<3> -> !llvm.ptr<7>
// CHECK-NEXT: nvvm.mbarrier.arrive %[[REMOTE]] {scope = #nvvm.mem_scope<cluster>} : !llvm.ptr<7>
// Teardown.
// CHECK: nvvm.tcgen05.fence <before>
// CHECK-NEXT: nvvm.cluster.arrive {aligned}
// CHECK-NEXT: nvvm.cluster.wait {aligned}
// CHECK: nvvm.tcgen05.fence <after>
// CHECK: nvvm.tcgen05.dealloc %{{.*}}, %[[COLUMNS]] {group = #nvvm.cta_group<cta_2>}
func.func @cta_pair(%x: memref<1x6x8x8x64xbf16>, %w: memref<96x3x3x3x64xbf16>, %o: memref<1x4x8x8x96xbf16>) {
  conv3d.conv ins(%x, %w : memref<1x6x8x8x64xbf16>, memref<96x3x3x3x64xbf16>) outs(%o : memref<1x4x8x8x96xbf16>) overwrite padding = [0, 0, 1, 1, 1, 1] filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 256, tile_n = 96, tile_k = 64, stages = 4, warps_m = 4, kernel = sm100>
  return
}

// -----

// 2^32 input elements: the kernel's epilogue indexes in 64 bits, the i32
// rows and columns widened with index_castui (arith.extui cannot produce an
// index).
// CHECK-LABEL: func.func @wide_indices
// CHECK: nvvm.tcgen05.ld
// CHECK: arith.index_castui %{{.*}} : i32 to index
// CHECK-NOT: arith.extui %{{.*}} : i32 to index
func.func @wide_indices(%x: memref<1x64x512x512x256xbf16>, %w: memref<64x1x1x1x256xbf16>, %o: memref<1x64x512x512x64xbf16>) {
  conv3d.conv ins(%x, %w : memref<1x64x512x512x256xbf16>, memref<64x1x1x1x256xbf16>) outs(%o : memref<1x64x512x512x64xbf16>) overwrite filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 4, warps_m = 4, kernel = sm100>
  return
}
