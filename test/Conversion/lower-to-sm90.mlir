// conv3d-lower-to-sm90: each implicit-GEMM grid loop whose config is for the
// sm90 kernel becomes a persistent, warp-specialized kernel:
//   host      the input's rank-5 TMA im2col descriptor and the FQRSC
//             filter's tiled one (runtime wrappers, declared private), and
//             a launch under scf.if (both descriptors nonzero) of
//             min(multiprocessors, tiles) blocks;
//   setup     thread 0 initializes a full (1 arrival) and an empty (4 per
//             consumer warpgroup) mbarrier per stage;
//   producer  warpgroup 0 gives registers back (setmaxnreg 40); its thread
//             0, per K step (a filter tap x 64 channels): waits for the
//             stage's empty barrier, expects the step's bytes on its full
//             barrier, issues the TMA im2col load (5 coordinates and 3 i16
//             im2col offsets) and the filter's tiled TMA load (3
//             coordinates);
//   consumers take registers (setmaxnreg 232); per step: wait full, fence,
//             4 k16 wgmmas per m64 tile of the warpgroup, commit, wait
//             until one group is pending, release the previous step's
//             stage (one arrival per warp); the epilogue stages the
//             accumulators in shared memory between named barriers (id 1,
//             the consumer threads only).
// Grids whose config says kernel = sm80 (conv3d-select-config's fallback)
// get the sm80 kernel. The inputs are memref convolutions with a config,
// tiled by conv3d-implicit-gemm=target=sm90 in the same run. The checks pin
// the structure and what the plan decides (threads, blocks, shared memory
// bytes, barrier offsets, transaction bytes, wgmma shapes and counts), not
// every index computation. Constants are not folded by the pass: the
// checks name them by value (%c<value>_<type>, with a suffix when the
// value repeats). Errors: lower-to-sm90-invalid.mlir.
//
// RUN: conv3d-opt %s -split-input-file -conv3d-implicit-gemm=target=sm90 -conv3d-lower-to-sm90 | FileCheck %s

// A causal bf16 3x3x3 convolution, C = 64 (one channel block: 27 K steps),
// F = 96, accumulated onto the output (so the staged epilogue, which reads
// it; an overwritten output would be stored by TMA, see @tma_store),
// tiled 128 x 96 with two consumer warpgroups (warps_m = 8) and 4
// stages. M = 4*8*8 = 256 rows: 2 tiles. Shared memory: 4 stages of
// 128x64 + 96x64 bf16 (16384 + 12288 = 28672 B per step, 114688 B), the
// 128 x (96 + 4) f32 staging tile (51200 B) at 114688, 8 mbarriers at
// 165888 (full) and 165920 (empty), and 1024 B of alignment slack: 166976.

// CHECK-LABEL: func.func @bf16_causal_3x3x3
// CHECK-SAME: (%[[X:.*]]: memref<1x4x8x8x64xbf16>, %[[W:.*]]: memref<96x3x3x3x64xbf16>, %[[O:.*]]: memref<1x4x8x8x96xbf16>)
// CHECK-NOT: scf.forall
// Host: every operand as a flat 1-D view (for the epilogue), the input's
// address (its offset applied, in bytes) and the im2col
// descriptor: bf16 (9), N, D, H, W, C, the element strides of N, D, H, W,
// the lower corner (-2, -1, -1: the causal depth padding and the H/W
// halo), the upper corner, the strides, 64 channels per row, 128 rows per
// box, 128-byte swizzle (3): 23 i64 arguments.
// CHECK: memref.extract_strided_metadata %[[X]]
// CHECK-NEXT: memref.reinterpret_cast {{.*}} to memref<16384xbf16>
// CHECK-NEXT: memref.extract_strided_metadata %[[W]]
// CHECK-NEXT: memref.reinterpret_cast {{.*}} to memref<165888xbf16>
// CHECK-NEXT: memref.extract_strided_metadata %[[O]]
// CHECK-NEXT: %[[OF:.*]] = memref.reinterpret_cast {{.*}} to memref<24576xbf16>
// CHECK-NEXT: %[[XMETA:.*]], %[[XOFF:.*]], %{{.*}}:5, %{{.*}}:5 = memref.extract_strided_metadata %[[X]]
// CHECK-NEXT: %[[XPTR:.*]] = memref.extract_aligned_pointer_as_index %[[XMETA]]
// CHECK-NEXT: %[[TWO:.*]] = arith.constant 2 : index
// CHECK-NEXT: %[[XOFFB:.*]] = arith.muli %[[XOFF]], %[[TWO]] : index
// CHECK-NEXT: %[[XA:.*]] = arith.addi %[[XPTR]], %[[XOFFB]] : index
// CHECK-NEXT: %[[XADDR:.*]] = arith.index_cast %[[XA]] : index to i64
// CHECK: %[[DESCA:.*]] = call @conv3dTmaIm2colDescriptor(%[[XADDR]], %c9_i64, %c1_i64, %c4_i64, %c8_i64, %c8_i64_{{[0-9]+}}, %c64_i64, %c16384_i64, %c4096_i64, %c512_i64, %c64_i64_{{[0-9]+}}, %c-2_i64, %c-1_i64, %c-1_i64_{{[0-9]+}}, %c-2_i64_{{[0-9]+}}, %c-1_i64_{{[0-9]+}}, %c-1_i64_{{[0-9]+}}, %c1_i64_{{[0-9]+}}, %c1_i64_{{[0-9]+}}, %c1_i64_{{[0-9]+}}, %c64_i64_{{[0-9]+}}, %c128_i64, %c3_i64) : ({{i64(, i64){22}[)]}} -> i64
// The filter's tiled descriptor: bf16, [C = 64][taps = 27][F = 96] with
// row pitches 64 and 1728 elements, a box of 64 channels x 1 tap x 96
// filters, 128-byte swizzle: 11 i64 arguments.
// CHECK: %[[WMETA:.*]], %{{.*}}, %{{.*}}:5, %{{.*}}:5 = memref.extract_strided_metadata %[[W]]
// CHECK: %[[WADDR:.*]] = arith.index_cast %{{.*}} : index to i64
// CHECK: %[[DESCB:.*]] = call @conv3dTmaTiledDescriptor(%[[WADDR]], %c9_i64_{{[0-9]+}}, %c64_i64_{{[0-9]+}}, %c27_i64, %c96_i64, %c64_i64_{{[0-9]+}}, %c1728_i64, %c64_i64_{{[0-9]+}}, %c1_i64_{{[0-9]+}}, %c96_i64_{{[0-9]+}}, %c3_i64_{{[0-9]+}}) : ({{i64(, i64){10}[)]}} -> i64
// No launch when the runtime refused either descriptor.
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK-NEXT: %[[AOK:.*]] = arith.cmpi ne, %[[DESCA]], %[[ZERO]] : i64
// CHECK-NEXT: %[[BOK:.*]] = arith.cmpi ne, %[[DESCB]], %[[ZERO]] : i64
// CHECK-NEXT: %[[OK:.*]] = arith.andi %[[AOK]], %[[BOK]] : i1
// CHECK-NEXT: scf.if %[[OK]] {
// Persistent: min(multiprocessors, 2 tiles) blocks of 3 x 128 threads.
// CHECK-NEXT: %[[SMS:.*]] = func.call @conv3dMultiprocessorCount() : () -> i64
// CHECK-NEXT: %[[SMSX:.*]] = arith.index_cast %[[SMS]] : i64 to index
// CHECK-NEXT: %[[TILES:.*]] = arith.constant 2 : index
// CHECK-NEXT: %[[BLOCKS:.*]] = arith.minui %[[SMSX]], %[[TILES]] : index
// CHECK-NEXT: %[[START:.*]] = gpu.wait async
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[SMEM:.*]] = arith.constant 166976 : i32
// CHECK-NEXT: %[[THREADS:.*]] = arith.constant 384 : index
// CHECK-NEXT: %[[LAUNCH:.*]] = gpu.launch async [%[[START]]] blocks(%[[BX:[^,]*]], %{{[^,]*}}, %{{[^)]*}}) in (%[[GRID:[^ ]*]] = %[[BLOCKS]], %{{[^ ]*}} = %[[ONE]], %{{[^ ]*}} = %[[ONE]]) threads(%[[TX:[^,]*]], %{{[^,]*}}, %{{[^)]*}}) in (%{{[^ ]*}} = %[[THREADS]], %{{[^ ]*}} = %[[ONE]], %{{[^ ]*}} = %[[ONE]]) dynamic_shared_memory_size %[[SMEM]] {
// CHECK-NEXT: %[[TID:.*]] = arith.index_cast %[[TX]] : index to i32
// CHECK-NEXT: %[[BID:.*]] = arith.index_cast %[[BX]] : index to i32
// CHECK-NEXT: %[[NBLOCKS:.*]] = arith.index_cast %[[GRID]] : index to i32
// The shared base, aligned up to 1024 bytes (the 128-byte swizzle atom).
// CHECK-NEXT: %[[DYN:.*]] = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
// CHECK-NEXT: %[[RAWP:.*]] = memref.extract_aligned_pointer_as_index %[[DYN]]
// CHECK-NEXT: %[[RAW:.*]] = arith.index_cast %[[RAWP]] : index to i32
// CHECK-NEXT: %[[C1023:.*]] = arith.constant 1023 : i32
// CHECK-NEXT: %[[UP:.*]] = arith.addi %[[RAW]], %[[C1023]] : i32
// CHECK-NEXT: %[[MASK:.*]] = arith.constant -1024 : i32
// CHECK-NEXT: %[[BASE:.*]] = arith.andi %[[UP]], %[[MASK]] : i32
// CHECK-NEXT: %[[SHIFT:.*]] = arith.subi %[[BASE]], %[[RAW]] : i32
// CHECK-NEXT: %[[TMAPA:.*]] = llvm.inttoptr %[[DESCA]] : i64 to !llvm.ptr
// CHECK-NEXT: %[[TMAPB:.*]] = llvm.inttoptr %[[DESCB]] : i64 to !llvm.ptr
// Thread 0 initializes the barriers: full[s] at 165888 + 8s (1 arrival:
// the producer's arrive.expect_tx), empty[s] at 165920 + 8s (4 warps x 2
// consumer warpgroups).
// CHECK: %[[IS0:.*]] = arith.cmpi eq, %[[TID]], %{{.*}} : i32
// CHECK-NEXT: scf.if %[[IS0]] {
// CHECK: %[[F0OFF:.*]] = arith.addi %c165888_i32, %{{.*}} : i32
// CHECK-NEXT: %[[F0ADDR:.*]] = arith.addi %[[BASE]], %[[F0OFF]] : i32
// CHECK-NEXT: %[[F0:.*]] = llvm.inttoptr %[[F0ADDR]] : i32 to !llvm.ptr<3>
// CHECK-NEXT: %[[FCOUNT:.*]] = arith.constant 1 : i32
// CHECK-NEXT: nvvm.mbarrier.init %[[F0]], %[[FCOUNT]] : !llvm.ptr<3>, i32
// CHECK: %[[E0OFF:.*]] = arith.addi %c165920_i32, %{{.*}} : i32
// CHECK-NEXT: %[[E0ADDR:.*]] = arith.addi %[[BASE]], %[[E0OFF]] : i32
// CHECK-NEXT: %[[E0:.*]] = llvm.inttoptr %[[E0ADDR]] : i32 to !llvm.ptr<3>
// CHECK-NEXT: %[[ECOUNT:.*]] = arith.constant 8 : i32
// CHECK-NEXT: nvvm.mbarrier.init %[[E0]], %[[ECOUNT]] : !llvm.ptr<3>, i32
// CHECK-COUNT-6: nvvm.mbarrier.init %{{.*}}, %c{{1|8}}_i32_{{[0-9]+}} : !llvm.ptr<3>, i32
// CHECK-NEXT: nvvm.fence.mbarrier.init
// CHECK-NEXT: nvvm.prefetch tensormap, %[[TMAPA]] : !llvm.ptr
// CHECK-NEXT: nvvm.prefetch tensormap, %[[TMAPB]] : !llvm.ptr
// CHECK-NEXT: }
// CHECK-NEXT: gpu.barrier
// Warpgroup 0 produces; its thread 0 walks the block's tiles (from the
// block id, by the grid size; carrying the ring position and the
// block-local tile index) and their K steps.
// CHECK-NEXT: %[[WG:.*]] = arith.constant 128 : i32
// CHECK-NEXT: %[[ISPROD:.*]] = arith.cmpi ult, %[[TID]], %[[WG]] : i32
// CHECK-NEXT: scf.if %[[ISPROD]] {
// CHECK-NEXT: nvvm.setmaxregister decrease 40
// CHECK-NEXT: scf.if %[[IS0]] {
// CHECK: %{{.*}}:2 = scf.for %[[PTILE:.*]] = %[[BID]] to %c2_i32{{[_0-9]*}} step %[[NBLOCKS]] iter_args(%[[PDONE:.*]] = %{{.*}}, %{{.*}} = %{{.*}}) -> (i32, i32) : i32 {
// The tile's step range [0, 27): no split, taps_outer.
// CHECK: %[[PEND:.*]] = arith.minui %{{.*}}, %c27_i32{{[_0-9]*}} : i32
// CHECK: %[[PSTEPS:.*]] = arith.subi
// CHECK: scf.for %[[T:.*]] = %{{.*}} to %[[PSTEPS]] step %{{.*}} : i32 {
// The ring position: stage (done + t) % 4, phase ((done + t) / 4) & 1.
// CHECK-NEXT: %[[POS:.*]] = arith.addi %[[PDONE]], %[[T]] : i32
// CHECK: %[[STAGE:.*]] = arith.remui %[[POS]], %c4_i32{{[_0-9]*}} : i32
// CHECK: %[[ROUND:.*]] = arith.divui %[[POS]], %c4_i32{{[_0-9]*}} : i32
// CHECK: %[[PHASE:.*]] = arith.andi %[[ROUND]], %c1_i32{{[_0-9]*}} : i32
// Wait until the consumers released the stage: parity phase ^ 1 (the
// first round passes at once).
// CHECK: %[[EOFF:.*]] = arith.addi %c165920_i32{{[_0-9]*}}, %{{.*}} : i32
// CHECK-NEXT: %[[EADDR:.*]] = arith.addi %[[BASE]], %[[EOFF]] : i32
// CHECK-NEXT: %[[EMPTY:.*]] = llvm.inttoptr %[[EADDR]] : i32 to !llvm.ptr<3>
// CHECK: %[[NOTPHASE:.*]] = arith.xori %[[PHASE]], %c1_i32{{[_0-9]*}} : i32
// CHECK: nvvm.mbarrier.try_wait.parity %[[EMPTY]], %[[NOTPHASE]], %{{.*}} : !llvm.ptr<3>, i32, i32
// The full barrier expects the step's 28672 bytes.
// CHECK: %[[FOFF:.*]] = arith.addi %c165888_i32{{[_0-9]*}}, %{{.*}} : i32
// CHECK-NEXT: %[[FADDR:.*]] = arith.addi %[[BASE]], %[[FOFF]] : i32
// CHECK-NEXT: %[[FULL:.*]] = llvm.inttoptr %[[FADDR]] : i32 to !llvm.ptr<3>
// CHECK-NEXT: %[[BYTES:.*]] = arith.constant 28672 : i32
// CHECK-NEXT: nvvm.mbarrier.arrive.expect_tx %[[FULL]], %[[BYTES]] : !llvm.ptr<3>, i32
// The tap (q, r, s) of the step gives the im2col offsets (s, r, q as i16,
// innermost first; dilation 1).
// CHECK: %[[OS:.*]] = arith.trunci %{{.*}} : i32 to i16
// CHECK-NEXT: %[[OR:.*]] = arith.trunci %{{.*}} : i32 to i16
// CHECK-NEXT: %[[OQ:.*]] = arith.trunci %{{.*}} : i32 to i16
// A stage: 128 rows x 128 bytes at 16384 * stage.
// CHECK: %[[AOFF:.*]] = arith.muli %[[STAGE]], %c16384_i32{{[_0-9]*}} : i32
// CHECK-NEXT: %[[AADDR:.*]] = arith.addi %[[BASE]], %[[AOFF]] : i32
// CHECK-NEXT: %[[APTR:.*]] = llvm.inttoptr %[[AADDR]] : i32 to !llvm.ptr<3>
// CHECK-NEXT: %[[ADST:.*]] = llvm.addrspacecast %[[APTR]] : !llvm.ptr<3> to !llvm.ptr<7>
// CHECK-NEXT: nvvm.cp.async.bulk.tensor.shared.cluster.global %[[ADST]], %[[TMAPA]], %[[FULL]], box[%{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^]]*}}] im2col[%[[OS]], %[[OR]], %[[OQ]]] {mode = #nvvm.tma_load_mode<im2col>} : !llvm.ptr<7>, !llvm.ptr
// B stage: 96 rows x 128 bytes at 4 * 16384 + 12288 * stage, a tiled load
// of (channel 0, tap, filter 0).
// CHECK: %[[BOFF:.*]] = arith.muli %[[STAGE]], %c12288_i32{{[_0-9]*}} : i32
// CHECK-NEXT: %[[BOFF2:.*]] = arith.addi %c65536_i32{{[_0-9]*}}, %[[BOFF]] : i32
// CHECK-NEXT: %[[BADDR:.*]] = arith.addi %[[BASE]], %[[BOFF2]] : i32
// CHECK-NEXT: %[[BPTR:.*]] = llvm.inttoptr %[[BADDR]] : i32 to !llvm.ptr<3>
// CHECK-NEXT: %[[BDST:.*]] = llvm.addrspacecast %[[BPTR]] : !llvm.ptr<3> to !llvm.ptr<7>
// CHECK-NEXT: nvvm.cp.async.bulk.tensor.shared.cluster.global %[[BDST]], %[[TMAPB]], %[[FULL]], box[%{{[^,]*}}, %{{[^,]*}}, %{{[^]]*}}] : !llvm.ptr<7>, !llvm.ptr
// CHECK-NEXT: }
// CHECK-NOT: nvvm.cp.async.bulk.tensor
// Consumers: more registers, the f32 staging view (128 x 100) at 114688.
// CHECK: } else {
// CHECK-NEXT: nvvm.setmaxregister increase 232
// CHECK: %[[STOFF:.*]] = arith.addi %[[SHIFT]], %c114688_i32 : i32
// CHECK: %[[STAGING:.*]] = memref.view %[[DYN]][%{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<12800xf32, #gpu.address_space<workgroup>>
// CHECK: scf.for %{{.*}} = %[[BID]] to %c2_i32{{[_0-9]*}} step %[[NBLOCKS]] iter_args(%[[CDONE:.*]] = %{{.*}}, %{{.*}} = %{{.*}}) -> (i32, i32) : i32 {
// CHECK: %[[ZEROACC:.*]] = llvm.mlir.zero : !llvm.struct<({{f32(, f32){47}[)]}}>
// CHECK: %[[ACCS:.*]] = scf.for %[[CT:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[ZEROACC]]) -> (!llvm.struct<({{f32(, f32){47}[)]}}>) : i32 {
// CHECK-NEXT: %[[CPOS:.*]] = arith.addi %[[CDONE]], %[[CT]] : i32
// CHECK: %[[CSTAGE:.*]] = arith.remui %[[CPOS]], %c4_i32{{[_0-9]*}} : i32
// CHECK: %[[CPHASE:.*]] = arith.andi %{{.*}}, %c1_i32{{[_0-9]*}} : i32
// CHECK: %[[CFOFF:.*]] = arith.addi %c165888_i32{{[_0-9]*}}, %{{.*}} : i32
// CHECK-NEXT: %[[CFADDR:.*]] = arith.addi %[[BASE]], %[[CFOFF]] : i32
// CHECK-NEXT: %[[CFULL:.*]] = llvm.inttoptr %[[CFADDR]] : i32 to !llvm.ptr<3>
// CHECK: nvvm.mbarrier.try_wait.parity %[[CFULL]], %[[CPHASE]], %{{.*}} : !llvm.ptr<3>, i32, i32
// CHECK-NEXT: nvvm.wgmma.fence.aligned
// One m64 tile per consumer warpgroup: 4 k16 wgmmas m64n96k16 per step,
// chained through the accumulator, each from 128-byte-swizzle descriptors
// (the template's bits | address / 16).
// CHECK: %[[DB0:.*]] = arith.ori %c4611686293305360384_i64, %{{.*}} : i64
// CHECK: %[[DA0:.*]] = arith.ori %c4611686293305360384_i64, %{{.*}} : i64
// CHECK-NEXT: %[[W0:.*]] = nvvm.wgmma.mma_async %[[DA0]], %[[DB0]], %[[ACC]], <m = 64, n = 96, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK: %[[W1:.*]] = nvvm.wgmma.mma_async %{{.*}}, %{{.*}}, %[[W0]], <m = 64, n = 96, k = 16>
// CHECK: %[[W2:.*]] = nvvm.wgmma.mma_async %{{.*}}, %{{.*}}, %[[W1]], <m = 64, n = 96, k = 16>
// CHECK: %[[W3:.*]] = nvvm.wgmma.mma_async %{{.*}}, %{{.*}}, %[[W2]], <m = 64, n = 96, k = 16>
// CHECK-NEXT: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 1
// Step t - 1's wgmmas are done: lane 0 of each warp releases its stage
// (not at t = 0).
// CHECK: %[[NOTFIRST:.*]] = arith.cmpi ugt, %[[CT]], %{{.*}} : i32
// CHECK-NEXT: %[[REL:.*]] = arith.andi %[[NOTFIRST]], %{{.*}} : i1
// CHECK: %[[PREV:.*]] = arith.subi %[[CPOS]], %{{.*}} : i32
// CHECK-NEXT: scf.if %[[REL]] {
// CHECK: %[[REOFF:.*]] = arith.addi %c165920_i32{{[_0-9]*}}, %{{.*}} : i32
// CHECK-NEXT: %[[READDR:.*]] = arith.addi %[[BASE]], %[[REOFF]] : i32
// CHECK-NEXT: %[[RELEMPTY:.*]] = llvm.inttoptr %[[READDR]] : i32 to !llvm.ptr<3>
// CHECK-NEXT: nvvm.mbarrier.arrive %[[RELEMPTY]] : !llvm.ptr<3>
// CHECK-NEXT: }
// CHECK-NEXT: scf.yield %[[W3]]
// CHECK-NEXT: }
// After the loop: all groups done, the last step's stage released.
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: scf.if
// CHECK: nvvm.mbarrier.arrive
// The epilogue: the 256 consumer threads meet at named barrier 1 before
// and after writing the accumulators to the staging tile.
// CHECK: nvvm.barrier id = %c1_i32{{[_0-9]*}} number_of_threads = %[[CONSUMERS:c256_i32[_0-9]*]]
// CHECK: llvm.extractvalue %[[ACCS]][0]
// CHECK: vector.store %{{.*}}, %[[STAGING]][%{{.*}}] {alignment = 8 : i64} : memref<12800xf32, #gpu.address_space<workgroup>>, vector<2xf32>
// CHECK: llvm.extractvalue %[[ACCS]][47]
// CHECK: nvvm.barrier id = %c1_i32{{[_0-9]*}} number_of_threads = %[[CONSUMERS]]
// Then 8 outputs per access (F = 96), rounded to bf16.
// CHECK: vector.load %[[STAGING]][%{{.*}}] {alignment = 16 : i64} : memref<12800xf32, #gpu.address_space<workgroup>>, vector<8xf32>
// CHECK: vector.store %{{.*}}, %[[OF]][%{{.*}}] {alignment = 16 : i64} : memref<24576xbf16>, vector<8xbf16>
// CHECK: gpu.terminator
// CHECK-NEXT: }
// CHECK-NEXT: gpu.wait [%[[LAUNCH]]]
// CHECK-NEXT: }
// CHECK-NEXT: return
// The runtime's wrappers, declared once per module.
// CHECK: func.func private @conv3dTmaIm2colDescriptor({{i64(, i64){22}[)]}} -> i64
// CHECK-NEXT: func.func private @conv3dTmaTiledDescriptor({{i64(, i64){10}[)]}} -> i64
// CHECK-NEXT: func.func private @conv3dMultiprocessorCount() -> i64
func.func @bf16_causal_3x3x3(%x: memref<1x4x8x8x64xbf16>, %w: memref<96x3x3x3x64xbf16>, %o: memref<1x4x8x8x96xbf16>) {
  conv3d.conv ins(%x, %w : memref<1x4x8x8x64xbf16>, memref<96x3x3x3x64xbf16>) outs(%o : memref<1x4x8x8x96xbf16>) padding = [2, 0, 1, 1, 1, 1] filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 128, tile_n = 96, tile_k = 64, stages = 4, warps_m = 8, warps_n = 1, kernel = sm90>
  return
}

// -----

// A 256-row tile: two m64 wgmmas per consumer warpgroup and k16, so 8 per
// step (1x1x1, C = 128: 2 steps per tile; 2048 rows: 8 tiles). The output
// is accumulated onto, so the epilogue is the staged one (an overwritten
// output would be stored by TMA, see @tma_store). Shared
// memory: 3 stages of 256x64 + 128x64 (49152 B per step, 147456 B); the
// whole 256 x 132 f32 staging tile (135168 B) would not fit beside them, so
// the epilogue runs in two 64-column chunks (256 x 68 floats, 69632 B):
// 147456 + 69632 + 48 + 1024 = 218160 B.

// CHECK-LABEL: func.func @tile_m_256
// CHECK: %[[TILES:.*]] = arith.constant 8 : index
// CHECK-NEXT: %[[BLOCKS:.*]] = arith.minui %{{.*}}, %[[TILES]] : index
// CHECK: %[[SMEM:.*]] = arith.constant 218160 : i32
// CHECK-NEXT: %[[THREADS:.*]] = arith.constant 384 : index
// CHECK: gpu.launch async {{.*}} in (%{{[^ ]*}} = %[[BLOCKS]], {{.*}} in (%{{[^ ]*}} = %[[THREADS]], {{.*}} dynamic_shared_memory_size %[[SMEM]]
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c49152_i32 : !llvm.ptr<3>, i32
// CHECK: nvvm.setmaxregister increase 232
// CHECK: memref.view {{.*}} to memref<17408xf32, #gpu.address_space<workgroup>>
// The two m64 tiles of a warpgroup start 64 rows (8192 bytes) apart.
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK: = arith.addi %{{.*}}, %c8192_i32{{[_0-9]*}} : i32
// CHECK-COUNT-7: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK-NOT: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 1
// Two column chunks: two pairs of named barriers around the staging.
// CHECK-COUNT-4: nvvm.barrier id = %c1_i32{{[_0-9]*}} number_of_threads = %c256_i32
// CHECK-NOT: nvvm.barrier id
// CHECK: gpu.terminator
func.func @tile_m_256(%x: memref<1x8x16x16x128xbf16>, %w: memref<128x1x1x1x128xbf16>, %o: memref<1x8x16x16x128xbf16>) {
  conv3d.conv ins(%x, %w : memref<1x8x16x16x128xbf16>, memref<128x1x1x1x128xbf16>) outs(%o : memref<1x8x16x16x128xbf16>) filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 256, tile_n = 128, tile_k = 64, stages = 3, warps_m = 8, warps_n = 1, kernel = sm90>
  return
}

// -----

// f16 with H/W dilation 2 and a fused epilogue (bias, residual, SiLU); one
// consumer warpgroup (warps_m = 4) for a 64 x 64 tile: 256 threads, 4
// wgmmas m64n64k16 of f16 per step, named barriers of 128 threads. The
// im2col offsets are the tap's (s, r, q) times the dilations (2, 2, 1).
// M = 6*10*10 = 600 rows: 10 tiles.

// CHECK-LABEL: func.func @f16_dilated_epilogue
// The im2col descriptor of an f16 input (6) with lower corner (-2, -2, -2).
// CHECK: call @conv3dTmaIm2colDescriptor(%{{[^,]*}}, %c6_i64, %c1_i64, %c6_i64_{{[0-9]+}}, %c10_i64, %c10_i64_{{[0-9]+}}, %c64_i64, %c38400_i64, %c6400_i64, %c640_i64, %c64_i64_{{[0-9]+}}, %c-2_i64, %c-2_i64_{{[0-9]+}}, %c-2_i64_{{[0-9]+}},
// CHECK: call @conv3dTmaTiledDescriptor(%{{[^,]*}}, %c6_i64_{{[0-9]+}},
// CHECK: %[[TILES:.*]] = arith.constant 10 : index
// CHECK-NEXT: %[[BLOCKS:.*]] = arith.minui %{{.*}}, %[[TILES]] : index
// CHECK: %[[THREADS:.*]] = arith.constant 256 : index
// CHECK: gpu.launch async {{.*}} in (%{{[^ ]*}} = %[[BLOCKS]], {{.*}} in (%{{[^ ]*}} = %[[THREADS]], {{.*}} dynamic_shared_memory_size %c84032_i32
// Full barriers count 1 arrival, empty ones 4 (one consumer warpgroup).
// CHECK: nvvm.mbarrier.init %{{.*}}, %c1_i32 :
// CHECK: nvvm.mbarrier.init %{{.*}}, %c4_i32{{[_0-9]*}} :
// CHECK: nvvm.setmaxregister decrease 40
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c16384_i32 : !llvm.ptr<3>, i32
// CHECK: %[[SD:.*]] = arith.muli %{{.*}}, %c2_i32{{[_0-9]*}} : i32
// CHECK: %[[RD:.*]] = arith.muli %{{.*}}, %c2_i32{{[_0-9]*}} : i32
// CHECK: %[[OS:.*]] = arith.trunci %[[SD]] : i32 to i16
// CHECK-NEXT: %[[OR:.*]] = arith.trunci %[[RD]] : i32 to i16
// CHECK-NEXT: %[[OQ:.*]] = arith.trunci %{{.*}} : i32 to i16
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global {{.*}} im2col[%[[OS]], %[[OR]], %[[OQ]]] {mode = #nvvm.tma_load_mode<im2col>}
// CHECK: nvvm.setmaxregister increase 232
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 16>, D[<f32>, <one>], A[<f16>, <one>, <row>], B[<f16>, <one>, <col>]
// CHECK-NOT: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: nvvm.barrier id = %c1_i32{{[_0-9]*}} number_of_threads = %c128_i32
// CHECK: nvvm.barrier id = %c1_i32{{[_0-9]*}} number_of_threads = %c128_i32
// The staged epilogue: bias, residual, SiLU (x / (1 + exp(-x))), f16.
// CHECK: vector.load %{{.*}} : memref<64xf32>, vector<8xf32>
// CHECK: vector.load %{{.*}} : memref<38400xf16>, vector<8xf16>
// CHECK: math.exp
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK: vector.store %{{.*}} : memref<38400xf16>, vector<8xf16>
func.func @f16_dilated_epilogue(%x: memref<1x6x10x10x64xf16>, %w: memref<64x3x3x3x64xf16>, %b: memref<64xf32>, %r: memref<1x6x10x10x64xf16>, %o: memref<1x6x10x10x64xf16>) {
  conv3d.conv ins(%x, %w : memref<1x6x10x10x64xf16>, memref<64x3x3x3x64xf16>) bias(%b : memref<64xf32>) residual(%r : memref<1x6x10x10x64xf16>) outs(%o : memref<1x6x10x10x64xf16>) overwrite dilations = [1, 2, 2] padding = [2, 0, 2, 2, 2, 2] filter_layout = fqrsc activation = silu config = #conv3d.igemm_config<tile_m = 64, tile_n = 64, tile_k = 64, stages = 4, warps_m = 4, warps_n = 1, kernel = sm90>
  return
}

// -----

// split_k = 2, reduced in a cluster (SplitClusterReduction.cpp): the two
// splits of a tile are the two blocks of a cluster, the persistent loop
// walks the 2 x 1 tiles per cluster, a block's split is its rank, and a
// split's steps are [14 * split, min(14 * split + 14, 27)). The partial sums
// meet in distributed shared memory (mapa + loads from the other block's
// staging, in split order) behind the ready/free mbarriers; the epilogue
// runs in the kernel and the workspace and conv3d.epilogue are gone.

// CHECK-LABEL: func.func @split_k
// CHECK-NOT: memref.alloc() : memref<2x1x4x8x8x64xf32>
// Clusters of two blocks, as many as the multiprocessors hold, at most one
// per tile (2).
// CHECK: %[[SMS:.*]] = arith.index_cast %{{.*}} : i64 to index
// CHECK-NEXT: %[[PAIR:.*]] = arith.constant 2 : index
// CHECK-NEXT: %[[CLUSTERS:.*]] = arith.divui %[[SMS]], %[[PAIR]] : index
// CHECK-NEXT: %[[TILES:.*]] = arith.constant 2 : index
// CHECK-NEXT: arith.minui %[[CLUSTERS]], %[[TILES]] : index
// CHECK: gpu.launch async [%{{.*}}] clusters(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c2{{[_0-9]*}}, %{{.*}} = %c1{{[_0-9]*}}, %{{.*}} = %c1{{[_0-9]*}})
// CHECK: %[[RANK:.*]] = nvvm.read.ptx.sreg.cluster.ctarank : i32
// The ready and free barriers expect one arrival per block.
// CHECK: nvvm.mbarrier.init %{{.*}}, %c2_i32{{[_0-9]*}} : !llvm.ptr<3>, i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c2_i32{{[_0-9]*}} : !llvm.ptr<3>, i32
// CHECK-NEXT: nvvm.fence.mbarrier.init
// CHECK: nvvm.cluster.arrive {aligned}
// CHECK-NEXT: nvvm.cluster.wait {aligned}
// The producer's step range of its tile's split, the block's rank.
// CHECK: nvvm.setmaxregister decrease 40
// CHECK: %[[PER:.*]] = arith.constant 14 : i32
// CHECK-NEXT: %[[FIRST:.*]] = arith.muli %[[RANK]], %[[PER]] : i32
// CHECK: %[[LAST:.*]] = arith.addi %[[FIRST]], %c14_i32{{[_0-9]*}} : i32
// CHECK: arith.minui %[[LAST]], %c27_i32{{[_0-9]*}} : i32
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global {{.*}} im2col
// CHECK: nvvm.setmaxregister increase 232
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 16>
// Staged: every block hears of it (the ready barrier), then this block adds
// its rows from both blocks' staging, split 0 first.
// CHECK: nvvm.mapa %{{.*}}, %c0_i32{{[_0-9]*}} : !llvm.ptr<3> -> !llvm.ptr<7>
// CHECK-NEXT: nvvm.mbarrier.arrive %{{.*}} {scope = #nvvm.mem_scope<cluster>} : !llvm.ptr<7>
// CHECK: nvvm.mapa %{{.*}}, %c1_i32{{[_0-9]*}} : !llvm.ptr<3> -> !llvm.ptr<7>
// CHECK-NEXT: nvvm.mbarrier.arrive %{{.*}} {scope = #nvvm.mem_scope<cluster>} : !llvm.ptr<7>
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK-NEXT: nvvm.fence.sc.cluster
// CHECK: %[[P0:.*]] = nvvm.mapa %[[LOCAL:.*]], %c0_i32{{[_0-9]*}} : !llvm.ptr<3> -> !llvm.ptr<7>
// CHECK-NEXT: %[[S0:.*]] = llvm.load %[[P0]] {alignment = 16 : i64} : !llvm.ptr<7> -> vector<4xf32>
// CHECK: %[[P1:.*]] = nvvm.mapa %[[LOCAL]], %c1_i32{{[_0-9]*}} : !llvm.ptr<3> -> !llvm.ptr<7>
// CHECK-NEXT: %[[S1:.*]] = llvm.load %[[P1]] {alignment = 16 : i64} : !llvm.ptr<7> -> vector<4xf32>
// CHECK-NEXT: %[[SUM:.*]] = arith.addf %[[S0]], %[[S1]] : vector<4xf32>
// CHECK-NEXT: llvm.store %[[SUM]], %[[LOCAL]] {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<3>
// CHECK-NOT: memref.atomic_rmw
// CHECK: gpu.terminator
// CHECK-NOT: conv3d.epilogue
func.func @split_k(%x: memref<1x4x8x8x64xbf16>, %w: memref<64x3x3x3x64xbf16>, %o: memref<1x4x8x8x64xf32>) {
  conv3d.conv ins(%x, %w : memref<1x4x8x8x64xbf16>, memref<64x3x3x3x64xbf16>) outs(%o : memref<1x4x8x8x64xf32>) overwrite padding = [1, 1, 1, 1, 1, 1] filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 4, warps_m = 8, warps_n = 1, split_k = 2, kernel = sm90>
  return
}

// -----

// split_k = 9, over the most blocks a cluster reduces (4): the tiles are
// (split, M tile, N tile) triples, 9 x 2 x 1 = 18; each split stores its
// partial sums into its slab of the f32 workspace (plain stores, no
// atomics) and conv3d.epilogue adds the slabs after the launch.

// CHECK-LABEL: func.func @split_k_workspace
// CHECK: %[[WS:.*]] = memref.alloc() : memref<9x1x4x8x8x64xf32>
// CHECK-NOT: linalg.fill
// CHECK: %[[TILES:.*]] = arith.constant 18 : index
// CHECK-NEXT: arith.minui %{{.*}}, %[[TILES]] : index
// CHECK: nvvm.setmaxregister increase 232
// CHECK-NOT: memref.atomic_rmw
// CHECK: vector.store %{{.*}} : memref<147456xf32>, vector<8xf32>
// CHECK: gpu.terminator
// CHECK: conv3d.epilogue ins(%[[WS]] : memref<9x1x4x8x8x64xf32>) outs(%{{.*}} : memref<1x4x8x8x64xf32>) overwrite
func.func @split_k_workspace(%x: memref<1x4x8x8x64xbf16>, %w: memref<64x3x3x3x64xbf16>, %o: memref<1x4x8x8x64xf32>) {
  conv3d.conv ins(%x, %w : memref<1x4x8x8x64xbf16>, memref<64x3x3x3x64xbf16>) outs(%o : memref<1x4x8x8x64xf32>) overwrite padding = [1, 1, 1, 1, 1, 1] filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 4, warps_m = 8, warps_n = 1, split_k = 9, kernel = sm90>
  return
}

// -----

// The sm80 fallback: a grid whose config says kernel = sm80 (C = 16 and a
// QRSCF filter, which the sm90 kernel does not take) gets the sm80 kernel
// (cp.async ring, ldmatrix, mma.sync): no TMA, no wgmma, no descriptors.

// CHECK-LABEL: func.func @sm80_fallback
// CHECK-NOT: call @conv3dTma
// CHECK: gpu.launch async
// CHECK-SAME: dynamic_shared_memory_size
// CHECK: nvgpu.device_async_copy
// CHECK: nvgpu.ldmatrix
// CHECK: nvvm.mma.sync
// CHECK-NOT: nvvm.wgmma
// CHECK-NOT: nvvm.cp.async.bulk.tensor
// CHECK-NOT: nvvm.setmaxregister
// CHECK: gpu.terminator
// CHECK: return
// CHECK-NOT: func.func private @conv3dTma
func.func @sm80_fallback(%x: memref<1x4x8x8x16xbf16>, %w: memref<3x3x3x16x32xbf16>, %o: memref<1x4x8x8x32xbf16>) {
  conv3d.conv ins(%x, %w : memref<1x4x8x8x16xbf16>, memref<3x3x3x16x32xbf16>) outs(%o : memref<1x4x8x8x32xbf16>) overwrite padding = [1, 1, 1, 1, 1, 1] config = #conv3d.igemm_config<tile_m = 64, tile_n = 32, tile_k = 32, stages = 3, warps_m = 2, warps_n = 2, kernel = sm80>
  return
}

// -----

// Both kernels in one module: the sm90 grid declares the wrappers, the sm80
// one beside it does not need them.

// CHECK-LABEL: func.func @mixed
// CHECK: call @conv3dTmaIm2colDescriptor
// CHECK: nvvm.wgmma.mma_async
// CHECK: gpu.wait
// CHECK-NOT: call @conv3dTma
// CHECK: nvvm.mma.sync
// CHECK-NOT: nvvm.wgmma
// CHECK: return
// CHECK: func.func private @conv3dTmaIm2colDescriptor
// CHECK-NEXT: func.func private @conv3dTmaTiledDescriptor
// CHECK-NEXT: func.func private @conv3dMultiprocessorCount
// CHECK-NOT: func.func private
func.func @mixed(%x: memref<1x4x8x8x64xbf16>, %w: memref<64x3x3x3x64xbf16>, %o: memref<1x4x8x8x64xbf16>, %x2: memref<1x4x8x8x16xbf16>, %w2: memref<3x3x3x16x32xbf16>, %o2: memref<1x4x8x8x32xbf16>) {
  conv3d.conv ins(%x, %w : memref<1x4x8x8x64xbf16>, memref<64x3x3x3x64xbf16>) outs(%o : memref<1x4x8x8x64xbf16>) overwrite padding = [1, 1, 1, 1, 1, 1] filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 4, warps_m = 8, warps_n = 1, kernel = sm90>
  conv3d.conv ins(%x2, %w2 : memref<1x4x8x8x16xbf16>, memref<3x3x3x16x32xbf16>) outs(%o2 : memref<1x4x8x8x32xbf16>) overwrite padding = [1, 1, 1, 1, 1, 1] config = #conv3d.igemm_config<tile_m = 64, tile_n = 32, tile_k = 32, stages = 3, warps_m = 2, warps_n = 2, kernel = sm80>
  return
}

// -----

// The ping-pong schedule (schedule = pingpong, warps_m = 4): two consumer
// warpgroups (384 threads), each owning whole 128-row tiles (two m64
// wgmmas per k16) in turn by the block-local tile index, with its own
// staging tile (the output is accumulated onto, so the staged epilogue:
// 128 x 68 f32, 34816 B, at 98304 + 34816 * group) and named
// barrier (id 1 + group, 128 threads). A stage is released by the 4 warps
// of the warpgroup that read it; two order barriers alternate the
// warpgroups' mainloops. Shared memory: 4 x (16384 + 8192) + 2 x 34816 +
// 64 + 16 + 1024 = 169040 B.

// CHECK-LABEL: func.func @pingpong
// CHECK: %[[SMEM:.*]] = arith.constant 169040 : i32
// CHECK: %[[THREADS:.*]] = arith.constant 384 : index
// CHECK: gpu.launch async {{.*}} in (%{{[^ ]*}} = %[[THREADS]], {{.*}} dynamic_shared_memory_size %[[SMEM]]
// CHECK: nvvm.mbarrier.init %{{.*}}, %c1_i32 :
// CHECK: nvvm.mbarrier.init %{{.*}}, %c4_i32{{[_0-9]*}} :
// CHECK: nvvm.setmaxregister decrease 40
// CHECK: nvvm.setmaxregister increase 232
// CHECK-NEXT: %[[C128:.*]] = arith.constant 128 : i32
// CHECK-NEXT: %[[CTID:.*]] = arith.subi %{{.*}}, %[[C128]] : i32
// CHECK: %[[GROUP:.*]] = arith.divui %[[CTID]], %{{.*}} : i32
// CHECK: %[[BARRIER:.*]] = arith.addi %[[GROUP]], %c1_i32{{[_0-9]*}} : i32
// CHECK: %[[STBASE:.*]] = arith.addi %{{.*}}, %c98304_i32 : i32
// CHECK-NEXT: %[[STSIZE:.*]] = arith.constant 34816 : i32
// CHECK-NEXT: %[[STGROUP:.*]] = arith.muli %[[GROUP]], %[[STSIZE]] : i32
// CHECK-NEXT: %[[STOFF:.*]] = arith.addi %[[STBASE]], %[[STGROUP]] : i32
// CHECK: memref.view {{.*}} to memref<8704xf32, #gpu.address_space<workgroup>>
// CHECK: scf.for %{{.*}} iter_args(%{{.*}} = %{{.*}}, %[[LOCAL:.*]] = %{{.*}}) -> (i32, i32) : i32 {
// CHECK: %[[PARITY:.*]] = arith.remui %[[LOCAL]], %c2_i32{{[_0-9]*}} : i32
// CHECK-NEXT: %[[MINE:.*]] = arith.cmpi eq, %[[PARITY]], %[[GROUP]] : i32
// CHECK-NEXT: scf.if %[[MINE]] {
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[ZERO:.*]], %{{.*}} = %[[ZERO]])
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-8: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 16>
// CHECK-NOT: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: nvvm.barrier id = %[[BARRIER]] number_of_threads = %c128_i32{{[_0-9]*}}
// CHECK: nvvm.barrier id = %[[BARRIER]] number_of_threads = %c128_i32{{[_0-9]*}}
// CHECK: gpu.terminator
func.func @pingpong(%x: memref<1x4x8x8x64xbf16>, %w: memref<64x3x3x3x64xbf16>, %o: memref<1x4x8x8x64xbf16>) {
  conv3d.conv ins(%x, %w : memref<1x4x8x8x64xbf16>, memref<64x3x3x3x64xbf16>) outs(%o : memref<1x4x8x8x64xbf16>) padding = [1, 1, 1, 1, 1, 1] filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 4, warps_m = 4, warps_n = 1, kernel = sm90, schedule = pingpong>
  return
}

// -----

// The TMA-store epilogue: an overwritten bf16 output (no residual) with
// 16-byte rows and an N tile of whole 64-column boxes. The host encodes a
// third descriptor for the output as an [M][F] matrix (F = 128, M = 256,
// row stride 128, boxes of 64 channels x 128 rows, 128-byte swizzle); the
// launch waits for all three. The consumers apply bias and SiLU in
// registers (one 8-byte bias load per 8-column group: 16), write 16-bit
// pairs to the swizzled staging (32 stores: 16 groups x 2 row halves),
// fence the async proxy, meet, and one thread issues one TMA store per box
// and commits them; before the next tile's staging writes it waits until
// the stores have read the staging, and before exiting until they are
// written. Shared memory: 4 x (16384 + 16384) + 128 x 128 x 2 + 64 + 1024 =
// 164928 B (the f32 staging would need 67584).

// CHECK-LABEL: func.func @tma_store
// CHECK: %[[DESCC:.*]] = call @conv3dTmaTiledDescriptor(%{{.*}}, %c9_i64{{[_0-9]*}}, %c128_i64{{[_0-9]*}}, %c256_i64{{[_0-9]*}}, %c1_i64{{[_0-9]*}}, %c128_i64{{[_0-9]*}}, %c32768_i64{{[_0-9]*}}, %c64_i64{{[_0-9]*}}, %c128_i64{{[_0-9]*}}, %c1_i64{{[_0-9]*}}, %c3_i64{{[_0-9]*}})
// CHECK: %[[AB:.*]] = arith.andi
// CHECK-NEXT: %[[COK:.*]] = arith.cmpi ne, %[[DESCC]], %{{.*}} : i64
// CHECK-NEXT: %[[OK:.*]] = arith.andi %[[AB]], %[[COK]] : i1
// CHECK-NEXT: scf.if %[[OK]] {
// CHECK: dynamic_shared_memory_size %c164928_i32
// CHECK: %[[TMAPC:.*]] = llvm.inttoptr %[[DESCC]] : i64 to !llvm.ptr
// CHECK: nvvm.prefetch tensormap, %[[TMAPC]] : !llvm.ptr
// CHECK: nvvm.setmaxregister increase 232
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: nvvm.cp.async.bulk.wait_group 0 {read}
// CHECK: nvvm.barrier id = %c1_i32 number_of_threads = %c256_i32
// CHECK-COUNT-16: vector.load %{{.*}} : memref<128xf32>, vector<2xf32>
// CHECK-NOT: vector.load
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK: nvvm.barrier id = %c1_i32 number_of_threads = %c256_i32{{[_0-9]*}}
// CHECK-NEXT: scf.if %[[ISSUER:.*]] {
// CHECK: nvvm.cp.async.bulk.tensor.global.shared.cta %[[TMAPC]], %{{.*}}, box[%{{.*}}, %{{.*}}, %{{.*}}] : !llvm.ptr, <3>
// CHECK: nvvm.cp.async.bulk.tensor.global.shared.cta %[[TMAPC]], %{{.*}}, box[%{{.*}}, %{{.*}}, %{{.*}}] : !llvm.ptr, <3>
// CHECK-NEXT: nvvm.cp.async.bulk.commit.group
// CHECK: scf.if %[[ISSUER]] {
// CHECK-NEXT: nvvm.cp.async.bulk.wait_group 0
// CHECK-NOT: {read}
// CHECK: gpu.terminator
func.func @tma_store(%x: memref<1x4x8x8x64xbf16>, %w: memref<128x3x3x3x64xbf16>, %b: memref<128xf32>, %o: memref<1x4x8x8x128xbf16>) {
  conv3d.conv ins(%x, %w : memref<1x4x8x8x64xbf16>, memref<128x3x3x3x64xbf16>) bias(%b : memref<128xf32>) outs(%o : memref<1x4x8x8x128xbf16>) overwrite padding = [1, 1, 1, 1, 1, 1] filter_layout = fqrsc activation = silu config = #conv3d.igemm_config<tile_m = 128, tile_n = 128, tile_k = 64, stages = 4, warps_m = 8, warps_n = 1, kernel = sm90>
  return
}

// -----

// Clusters of two blocks along M (cluster_m = 2): the launch has 2-block
// clusters (min(SMs / 2, 1 pair) x 2 blocks: M = 256 is two 128-row tiles,
// one pair); the filter's descriptor has boxes of half the N tile (48 of
// 96 rows). A block's rank in its cluster picks its M tile of the pair and
// the persistent loop walks pairs (block and grid ids halved). The empty
// barriers count both blocks' consumer warps (2 x 8); the blocks meet in a
// cluster barrier after initializing them and before exiting. The producer
// expects the whole step (16384 + 12288 bytes: its A tile and both filter
// halves) and multicasts its half (at 6144 x rank in the B stage) to both
// blocks (mask 0b11); consumers release a stage on both blocks' barriers.

// CHECK-LABEL: func.func @cluster
// CHECK: %[[HALF:.*]] = arith.constant 48 : i64
// CHECK: call @conv3dTmaTiledDescriptor(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[HALF]], %{{.*}})
// CHECK: %[[PAIRS:.*]] = arith.divui %{{.*}}, %c2{{[_0-9]*}} : index
// CHECK: %[[FEW:.*]] = arith.minui %[[PAIRS]], %c1{{[_0-9]*}} : index
// CHECK: %[[BLOCKS:.*]] = arith.muli %[[FEW]], %c2{{[_0-9]*}} : index
// CHECK: gpu.launch async {{.*}} clusters({{.*}}) in (%{{[^ ]*}} = %c2{{[_0-9]*}}, {{.*}} blocks({{.*}}) in (%{{[^ ]*}} = %[[BLOCKS]],
// CHECK: %[[RANK:.*]] = nvvm.read.ptx.sreg.cluster.ctarank : i32
// CHECK: arith.divui %{{.*}}, %c2_i32
// CHECK: arith.divui %{{.*}}, %c2_i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c1_i32 :
// CHECK: nvvm.mbarrier.init %{{.*}}, %c16_i32 :
// CHECK: nvvm.fence.mbarrier.init
// CHECK: nvvm.cluster.arrive {aligned}
// CHECK-NEXT: nvvm.cluster.wait {aligned}
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c28672_i32
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global {{.*}} im2col
// CHECK-NOT: multicast_mask
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global {{.*}} multicast_mask = %c3_i16
// CHECK: %[[MINE:.*]] = nvvm.mapa %[[EMPTY:.*]], %c0_i32{{[_0-9]*}} : !llvm.ptr<3> -> !llvm.ptr<7>
// CHECK-NEXT: nvvm.mbarrier.arrive %[[MINE]] {scope = #nvvm.mem_scope<cluster>}
// CHECK: %[[PEER:.*]] = nvvm.mapa %[[EMPTY]], %c1_i32{{[_0-9]*}} : !llvm.ptr<3> -> !llvm.ptr<7>
// CHECK-NEXT: nvvm.mbarrier.arrive %[[PEER]] {scope = #nvvm.mem_scope<cluster>}
// CHECK: nvvm.cluster.arrive {aligned}
// CHECK-NEXT: nvvm.cluster.wait {aligned}
// CHECK-NEXT: gpu.terminator
func.func @cluster(%x: memref<1x4x8x8x64xbf16>, %w: memref<96x3x3x3x64xbf16>, %o: memref<1x4x8x8x96xbf16>) {
  conv3d.conv ins(%x, %w : memref<1x4x8x8x64xbf16>, memref<96x3x3x3x64xbf16>) outs(%o : memref<1x4x8x8x96xbf16>) padding = [1, 1, 1, 1, 1, 1] filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 128, tile_n = 96, tile_k = 64, stages = 4, warps_m = 8, kernel = sm90, cluster_m = 2>
  return
}

// -----

// Depth padding 20 is past the rank-5 im2col corners: the input is read
// through a rank-4 descriptor of its depth slices, (N*D = 8, H = 8, W = 8,
// C = 64) with slice, row and pixel pitches 4096, 512 and 64, corners
// (-1, -1) and (-1, -1) (H, W), strides 1, 1, 64 channels x 128 rows, 128-
// byte swizzle: 18 i64 arguments. Tiles stay in one output depth slice
// (n, do): 2 x 22 slices of 8 x 8 = 64 rows, one 128-row tile each, so
// 44 tiles; the TMA store is off (a slice is not whole tiles). The producer
// and the consumers take a tile's steps from its valid depth taps
// [clamp(20 - do), clamp(24 - do)) x 9 steps (3 x 3 taps x 1 channel
// block); each load has 4 coordinates (c, w, h, n*D + d) and 2 offsets.
// The staged epilogue stops at the slice's end.

// CHECK-LABEL: func.func @depth_slices
// CHECK: %[[DESCA:.*]] = call @conv3dTmaIm2colSliceDescriptor(%{{[^,]*}}, %c9_i64, %c8_i64, %c8_i64_{{[0-9]+}}, %c8_i64_{{[0-9]+}}, %c64_i64, %c4096_i64, %c512_i64, %c64_i64_{{[0-9]+}}, %c-1_i64, %c-1_i64_{{[0-9]+}}, %c-1_i64_{{[0-9]+}}, %c-1_i64_{{[0-9]+}}, %c1_i64, %c1_i64_{{[0-9]+}}, %c64_i64_{{[0-9]+}}, %c128_i64, %c3_i64) : ({{i64(, i64){17}[)]}} -> i64
// CHECK-NOT: call @conv3dTmaIm2colDescriptor
// CHECK: call @conv3dTmaTiledDescriptor(
// CHECK-NOT: call @conv3dTmaTiledDescriptor(
// CHECK: %[[TILES:.*]] = arith.constant 44 : index
// CHECK-NEXT: arith.minui %{{.*}}, %[[TILES]] : index
// CHECK: nvvm.setmaxregister decrease 40
// The tile's slice, its first row and its row end (slice * 64 + min(128,
// 64)); do = slice % 22.
// CHECK: %[[SLICE:.*]] = arith.remui %{{.*}}, %c44_i32{{[_0-9]*}} : i32
// CHECK: %[[DO:.*]] = arith.remui %[[SLICE]], %c22_i32 : i32
// CHECK: %[[LO:.*]] = arith.maxsi %{{.*}}, %c0_i32{{[_0-9]*}} : i32
// CHECK-NEXT: %[[QBEGIN:.*]] = arith.minsi %[[LO]], %[[Q:c3_i32[_0-9]*]] : i32
// CHECK-NEXT: %[[HI:.*]] = arith.minsi %{{.*}}, %[[Q]] : i32
// CHECK-NEXT: %[[QEND:.*]] = arith.maxsi %[[HI]], %[[QBEGIN]] : i32
// CHECK: %[[BEGIN:.*]] = arith.muli %[[QBEGIN]], %c9_i32{{[_0-9]*}} : i32
// CHECK: %[[END:.*]] = arith.muli %[[QEND]], %c9_i32{{[_0-9]*}} : i32
// CHECK-NEXT: arith.subi %[[END]], %[[BEGIN]] : i32
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %{{.*}}, %{{.*}}, box[%{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^]]*}}] im2col[%{{[^,]*}}, %{{[^]]*}}] {mode = #nvvm.tma_load_mode<im2col>}
// CHECK: nvvm.setmaxregister increase 232
// CHECK: arith.maxsi
// CHECK: nvvm.wgmma.mma_async
// CHECK: %[[ROW:.*]] = arith.addi %{{.*}}, %{{.*}} : i32
// CHECK: arith.cmpi ult, %{{.*}}, %{{.*}} : i32
// CHECK: gpu.terminator
func.func @depth_slices(%x: memref<2x4x8x8x64xbf16>, %w: memref<64x3x3x3x64xbf16>, %o: memref<2x22x8x8x64xbf16>) {
  conv3d.conv ins(%x, %w : memref<2x4x8x8x64xbf16>, memref<64x3x3x3x64xbf16>) outs(%o : memref<2x22x8x8x64xbf16>) overwrite padding = [20, 0, 1, 1, 1, 1] filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 4, warps_m = 8, warps_n = 1, kernel = sm90>
  return
}

// -----

// Per-depth-slice loads under 2-block clusters: the blocks of a cluster run
// the same K steps (one filter tile feeds both), which per depth slice are
// the valid depth taps of the tile's slice, so both tiles of a pair lie in
// one output depth slice. A slice of 8 x 8 = 64 rows is one 64-row tile;
// each slice gets a second, padding tile (2 x 22 slices x 2 tiles = 88 M
// tiles, 44 pairs): it loads the slice's first rows again (its partner's
// filter half still comes from it) and its row end is its first row, so
// the staged epilogue stores nothing; the TMA store stays off. The filter's
// boxes are 48 of the 96 rows, multicast.

// CHECK-LABEL: func.func @depth_slices_cluster
// CHECK: call @conv3dTmaIm2colSliceDescriptor(
// CHECK: %[[HALF:.*]] = arith.constant 48 : i64
// CHECK: call @conv3dTmaTiledDescriptor(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[HALF]], %{{.*}})
// CHECK: %[[PAIRS:.*]] = arith.constant 44 : index
// CHECK: gpu.launch async {{.*}} clusters({{.*}}) in (%{{[^ ]*}} = %c2{{[_0-9]*}},
// CHECK: %[[RANK:.*]] = nvvm.read.ptx.sreg.cluster.ctarank : i32
// CHECK: nvvm.setmaxregister decrease 40
// The pair, this block's tile of it (2p + rank), its slice and its index
// in the slice; index 1 is the padding tile: first row and row end at the
// slice's begin.
// CHECK: %[[PAIR:.*]] = arith.remui %{{.*}}, %c44_i32{{[_0-9]*}} : i32
// CHECK: %[[TWICE:.*]] = arith.muli %[[PAIR]], %c2_i32{{[_0-9]*}} : i32
// CHECK-NEXT: %[[TM:.*]] = arith.addi %[[TWICE]], %[[RANK]] : i32
// CHECK: %[[SLICE:.*]] = arith.divui %[[TM]], %c2_i32{{[_0-9]*}} : i32
// CHECK: %[[INDEX:.*]] = arith.remui %[[TM]], %c2_i32{{[_0-9]*}} : i32
// CHECK: %[[END:.*]] = arith.minui %{{.*}}, %c64_i32{{[_0-9]*}} : i32
// CHECK: %[[PAD:.*]] = arith.cmpi uge, %[[INDEX]], %c1_i32 : i32
// CHECK: arith.select %[[PAD]], %c0_i32{{[_0-9]*}}, %{{.*}} : i32
// CHECK: arith.select %[[PAD]], %c0_i32{{[_0-9]*}}, %[[END]] : i32
// CHECK: arith.remui %[[SLICE]], %c22_i32 : i32
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %{{.*}}, %{{.*}}, box[%{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^]]*}}] im2col[%{{[^,]*}}, %{{[^]]*}}] {mode = #nvvm.tma_load_mode<im2col>}
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global {{.*}} multicast_mask = %c3_i16
// CHECK: nvvm.setmaxregister increase 232
// CHECK: nvvm.wgmma.mma_async
// CHECK-NOT: nvvm.cp.async.bulk.tensor.global.shared.cta
// CHECK: gpu.terminator
func.func @depth_slices_cluster(%x: memref<2x4x8x8x64xbf16>, %w: memref<96x3x3x3x64xbf16>, %o: memref<2x22x8x8x96xbf16>) {
  conv3d.conv ins(%x, %w : memref<2x4x8x8x64xbf16>, memref<96x3x3x3x64xbf16>) outs(%o : memref<2x22x8x8x96xbf16>) overwrite padding = [20, 0, 1, 1, 1, 1] filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 64, tile_n = 96, tile_k = 64, stages = 4, warps_m = 4, warps_n = 1, kernel = sm90, cluster_m = 2>
  return
}
