// conv3d-lower-to-sm90 with NVFP4 quantization of the input in the tile
// (TileQuantization.cpp): each consumer warpgroup quantizes in place the A
// rows its wgmmas read, one K step ahead of them:
//   before a tile's mainloop (when it has steps): wait for step 0's full
//     barrier, quantize its stage, fence.proxy.async (the wgmmas read
//     through the async proxy what the threads wrote through the generic
//     one);
//   per step t: the warpgroup's named barrier (3 + its index, 128 threads)
//     in place of the full barrier's wait, so that every thread's
//     quantization (fenced) is done before the wgmmas; fence, wgmmas,
//     commit, wait for step t-1's group, release its stage; then, when
//     there is a step t+1: wait for its full barrier, quantize it, fence;
// A block (16, 32 or 64 channels of a row) is 2, 4 or 8 16-byte chunks,
// read at TMA's 128-byte swizzled addresses (logical chunk j of row r at
// j ^ (r % 8)), quantized by ScalarEmitters' block quantizer (its maximum
// with maxnumf, the E4M3 scale, E2M1 values), and written back in place.
// The structure without quantization: lower-to-sm90.mlir; the numerics on
// the GPU: test/GPU/sm90-nvfp4-run.test.
//
// RUN: conv3d-opt %s -split-input-file -conv3d-implicit-gemm=target=sm90 -conv3d-lower-to-sm90 | FileCheck %s

// Blocks of 16 in a 128 x 96 tile with two consumer warpgroups: each
// quantizes its 64 rows, 4 blocks a row, 256 blocks: 2 per thread, 2 chunks
// each. 4 stages of 16384 B (A) + 12288 B (B); the full barriers at 139264.

// CHECK-LABEL: func.func @block16_cooperative
// CHECK-SAME: %[[AMAX:[^:]*]]: f32
// CHECK: gpu.launch
// CHECK: nvvm.setmaxregister  increase 232
// CHECK: %[[CTID:.*]] = arith.subi %{{.*}}, %c128_i32{{.*}} : i32
// CHECK-NEXT: %c128_i32{{.*}} = arith.constant 128 : i32
// CHECK-NEXT: %[[GROUP:.*]] = arith.divui %[[CTID]], %c128_i32{{.*}} : i32
// CHECK: %[[GTID:.*]] = arith.remui %[[CTID]], %c128_i32{{.*}} : i32
// The tile loop; step 0 of the tile is quantized before its mainloop.
// CHECK: scf.for
// CHECK: %[[ANY:.*]] = arith.cmpi ugt, %[[STEPS:.*]], %c0_i32{{.*}} : i32
// CHECK-NEXT: scf.if %[[ANY]] {
// CHECK: %[[FULL0:.*]] = llvm.inttoptr
// CHECK-NEXT: %c0_i32{{.*}} = arith.constant 0 : i32
// CHECK-NEXT: nvvm.mbarrier.try_wait.parity %[[FULL0]]
// The warpgroup's rows of the stage; this thread's first block (id = its
// index in the warpgroup): row id / 4, first chunk 2 (id % 4), chunk v at
// ((first + v) ^ (row % 8)) * 16 + row * 128 (SM90KernelPlan's
// quantChunkOffset).
// CHECK: %[[ID0:.*]] = arith.addi %[[GTID]], %c0_i32{{.*}} : i32
// CHECK-NEXT: %c4_i32{{.*}} = arith.constant 4 : i32
// CHECK-NEXT: %[[ROW0:.*]] = arith.divui %[[ID0]], %c4_i32{{.*}} : i32
// CHECK-NEXT: %c4_i32{{.*}} = arith.constant 4 : i32
// CHECK-NEXT: %[[BLK0:.*]] = arith.remui %[[ID0]], %c4_i32{{.*}} : i32
// CHECK-NEXT: %c2_i32{{.*}} = arith.constant 2 : i32
// CHECK-NEXT: %[[FIRST0:.*]] = arith.muli %[[BLK0]], %c2_i32{{.*}} : i32
// CHECK-NEXT: %c0_i32{{.*}} = arith.constant 0 : i32
// CHECK-NEXT: %[[L0:.*]] = arith.addi %[[FIRST0]], %c0_i32{{.*}} : i32
// CHECK-NEXT: %c7_i32{{.*}} = arith.constant 7 : i32
// CHECK-NEXT: %[[PHASE0:.*]] = arith.andi %[[ROW0]], %c7_i32{{.*}} : i32
// CHECK-NEXT: %[[P0:.*]] = arith.xori %[[L0]], %[[PHASE0]] : i32
// CHECK-NEXT: %c128_i32{{.*}} = arith.constant 128 : i32
// CHECK-NEXT: %[[RB0:.*]] = arith.muli %[[ROW0]], %c128_i32{{.*}} : i32
// CHECK-NEXT: %c16_i32{{.*}} = arith.constant 16 : i32
// CHECK-NEXT: %[[CB0:.*]] = arith.muli %[[P0]], %c16_i32{{.*}} : i32
// CHECK-NEXT: arith.addi %[[RB0]], %[[CB0]] : i32
// CHECK: %[[PTR0:.*]] = llvm.inttoptr %{{.*}} : i32 to !llvm.ptr<3>
// CHECK: %[[L1:.*]] = arith.addi %{{.*}}, %c1_i32{{.*}} : i32
// CHECK: arith.xori %[[L1]], %{{.*}} : i32
// CHECK: %[[PTR1:.*]] = llvm.inttoptr %{{.*}} : i32 to !llvm.ptr<3>
// A block of 16 is read once, into registers.
// CHECK-NEXT: %[[C0:.*]] = llvm.load %[[PTR0]] {alignment = 16 : i64} : !llvm.ptr<3> -> vector<8xbf16>
// CHECK-NEXT: %[[C1:.*]] = llvm.load %[[PTR1]] {alignment = 16 : i64} : !llvm.ptr<3> -> vector<8xbf16>
// The block's maximum over its 16 elements, then its scale from amax.
// CHECK-COUNT-16: arith.maxnumf
// CHECK-NOT: arith.maxnumf
// CHECK: arith.divf %[[AMAX]]
// CHECK: llvm.store %{{.*}}, %[[PTR0]] {alignment = 16 : i64} : vector<8xbf16>, !llvm.ptr<3>
// CHECK-NEXT: llvm.store %{{.*}}, %[[PTR1]] {alignment = 16 : i64} : vector<8xbf16>, !llvm.ptr<3>
// The second block, 128 ids further.
// CHECK-NEXT: %c128_i32{{.*}} = arith.constant 128 : i32
// CHECK-NEXT: arith.addi %[[GTID]], %c128_i32{{.*}} : i32
// CHECK-COUNT-2: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<8xbf16>
// CHECK-COUNT-16: arith.maxnumf
// CHECK-COUNT-2: llvm.store %{{.*}} {alignment = 16 : i64} : vector<8xbf16>, !llvm.ptr<3>
// CHECK-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT: }
// The mainloop: no full-barrier wait, the warpgroup's barrier instead.
// CHECK: scf.for %[[T:.*]] = %c0_i32{{.*}} to %[[STEPS]]
// CHECK-NOT: nvvm.mbarrier.try_wait.parity
// CHECK: %c3_i32{{.*}} = arith.constant 3 : i32
// CHECK-NEXT: %[[QID:.*]] = arith.addi %[[GROUP]], %c3_i32{{.*}} : i32
// CHECK-NEXT: %c128_i32{{.*}} = arith.constant 128 : i32
// CHECK-NEXT: nvvm.barrier id = %[[QID]] number_of_threads = %c128_i32{{.*}}
// CHECK-NEXT: nvvm.wgmma.fence.aligned
// CHECK-COUNT-4: nvvm.wgmma.mma_async
// CHECK-NEXT: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK: nvvm.mbarrier.arrive
// Step t + 1, after the release.
// CHECK: %[[NEXT:.*]] = arith.addi %[[T]], %c1_i32{{.*}} : i32
// CHECK-NEXT: %[[HAS:.*]] = arith.cmpi ult, %[[NEXT]], %[[STEPS]] : i32
// CHECK-NEXT: scf.if %[[HAS]] {
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK-COUNT-2: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<8xbf16>
// CHECK-COUNT-2: llvm.store %{{.*}} {alignment = 16 : i64} : vector<8xbf16>, !llvm.ptr<3>
// CHECK-COUNT-2: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<8xbf16>
// CHECK-COUNT-2: llvm.store %{{.*}} {alignment = 16 : i64} : vector<8xbf16>, !llvm.ptr<3>
// CHECK-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT: }
// CHECK-NEXT: scf.yield
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
func.func @block16_cooperative(%x: memref<1x4x8x8x64xbf16>, %w: memref<96x3x3x3x64xbf16>, %amax: f32, %o: memref<1x4x8x8x96xbf16>) {
  conv3d.conv ins(%x, %w : memref<1x4x8x8x64xbf16>, memref<96x3x3x3x64xbf16>) quantize(#conv3d.nvfp4<block_size = 16>, %amax) outs(%o : memref<1x4x8x8x96xbf16>) overwrite padding = [2, 0, 1, 1, 1, 1] filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 128, tile_n = 96, tile_k = 64, stages = 4, warps_m = 8, kernel = sm90>
  return
}

// -----

// Blocks of 32, ping-pong: a warpgroup owns whole 128-row tiles, 2 blocks
// a row, 256 blocks: 2 per thread, 4 chunks each; its barrier is 3 + its
// index, as in the cooperative schedule (the epilogue's are 1 and 2).
// Blocks over 16 are read twice, a chunk at a time: the maximum, then the
// values, each written back where it was read.

// CHECK-LABEL: func.func @block32_pingpong
// CHECK-SAME: %[[AMAX:[^:]*]]: f32
// CHECK: %[[CTID:.*]] = arith.subi %{{.*}}, %c128_i32{{.*}} : i32
// CHECK-NEXT: %c128_i32{{.*}} = arith.constant 128 : i32
// CHECK-NEXT: %[[GROUP:.*]] = arith.divui %[[CTID]], %c128_i32{{.*}} : i32
// The order barrier comes first, then step 0's quantization.
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: scf.if
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: %[[P0:.*]] = llvm.inttoptr
// CHECK: %[[P1:.*]] = llvm.inttoptr
// CHECK: %[[P2:.*]] = llvm.inttoptr
// CHECK: %[[P3:.*]] = llvm.inttoptr
// CHECK: llvm.load %[[P0]] {alignment = 16 : i64} : !llvm.ptr<3> -> vector<8xbf16>
// CHECK-COUNT-8: arith.maxnumf
// CHECK-NEXT: llvm.load %[[P1]]
// CHECK-COUNT-8: arith.maxnumf
// CHECK-NEXT: llvm.load %[[P2]]
// CHECK-COUNT-8: arith.maxnumf
// CHECK-NEXT: llvm.load %[[P3]]
// CHECK-COUNT-8: arith.maxnumf
// CHECK-NOT: arith.maxnumf
// CHECK: arith.divf %[[AMAX]]
// CHECK-NOT: llvm.store
// CHECK: llvm.load %[[P0]]
// CHECK-NOT: llvm.load
// CHECK: llvm.store %{{.*}}, %[[P0]] {alignment = 16 : i64} : vector<8xbf16>, !llvm.ptr<3>
// CHECK-NEXT: llvm.load %[[P1]]
// CHECK-NOT: llvm.load
// CHECK: llvm.store %{{.*}}, %[[P1]]
// CHECK-NEXT: llvm.load %[[P2]]
// CHECK-NOT: llvm.load
// CHECK: llvm.store %{{.*}}, %[[P2]]
// CHECK-NEXT: llvm.load %[[P3]]
// CHECK-NOT: llvm.load
// CHECK: llvm.store %{{.*}}, %[[P3]]
// The second block.
// CHECK-COUNT-32: arith.maxnumf
// CHECK-NOT: arith.maxnumf
// CHECK-COUNT-4: llvm.store %{{.*}} {alignment = 16 : i64} : vector<8xbf16>, !llvm.ptr<3>
// CHECK-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK: scf.for
// CHECK: %[[QID:.*]] = arith.addi %[[GROUP]], %c3_i32{{.*}} : i32
// CHECK-NEXT: %c128_i32{{.*}} = arith.constant 128 : i32
// CHECK-NEXT: nvvm.barrier id = %[[QID]] number_of_threads = %c128_i32{{.*}}
// CHECK-NEXT: nvvm.wgmma.fence.aligned
// Two m64 wgmmas per k16 (the warpgroup's 128 rows).
// CHECK-COUNT-8: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.fence.proxy
// CHECK: scf.yield
func.func @block32_pingpong(%x: memref<1x4x8x8x64xbf16>, %w: memref<64x3x3x3x64xbf16>, %amax: f32, %o: memref<1x4x8x8x64xbf16>) {
  conv3d.conv ins(%x, %w : memref<1x4x8x8x64xbf16>, memref<64x3x3x3x64xbf16>) quantize(#conv3d.nvfp4<block_size = 32>, %amax) outs(%o : memref<1x4x8x8x64xbf16>) overwrite padding = [1, 1, 1, 1, 1, 1] filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 4, warps_m = 4, kernel = sm90, schedule = pingpong>
  return
}

// -----

// Blocks of 64 (one whole row each), two consumer warpgroups of 64 rows:
// 64 blocks for 128 threads, so the second half of the warpgroup has none
// (id < 64). C = 128: two steps per tap.

// CHECK-LABEL: func.func @block64_partial
// CHECK: %[[GTID:.*]] = arith.remui %{{.*}}, %c128_i32{{.*}} : i32
// CHECK: scf.if
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: %[[ID:.*]] = arith.addi %[[GTID]], %c0_i32{{.*}} : i32
// CHECK-NEXT: %c64_i32{{.*}} = arith.constant 64 : i32
// CHECK-NEXT: %[[OWNS:.*]] = arith.cmpi ult, %[[ID]], %c64_i32{{.*}} : i32
// CHECK-NEXT: scf.if %[[OWNS]] {
// CHECK-COUNT-64: arith.maxnumf
// CHECK-NOT: arith.maxnumf
// CHECK-COUNT-8: llvm.store %{{.*}} {alignment = 16 : i64} : vector<8xbf16>, !llvm.ptr<3>
// CHECK-NEXT: }
// CHECK-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
func.func @block64_partial(%x: memref<1x4x8x8x128xbf16>, %w: memref<64x1x1x1x128xbf16>, %amax: f32, %o: memref<1x4x8x8x64xbf16>) {
  conv3d.conv ins(%x, %w : memref<1x4x8x8x128xbf16>, memref<64x1x1x1x128xbf16>) quantize(#conv3d.nvfp4<block_size = 64>, %amax) outs(%o : memref<1x4x8x8x64xbf16>) overwrite filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 3, warps_m = 8, kernel = sm90>
  return
}
