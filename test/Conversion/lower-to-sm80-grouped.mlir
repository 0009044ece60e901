// conv3d-lower-to-sm80 on a grouped convolution's grid (conv3d-implicit-gemm
// gives it a group dimension): one gpu.launch of groups x M tiles x N tiles
// blocks; each block computes its group from its block index (N tiles vary
// fastest, then groups, then M tiles), clones the grid's views of that
// group's input channels, filters, bias and output columns into the kernel,
// flattens them there and runs the dense kernel of C/G channels and F/G
// filters on them: 16-byte cp.async of each group's 16 channels and 32
// filters (the input's through L1: a group's slice of 32 bytes a voxel is
// re-read once per filter tap; the filter's L2-only), mma.sync, 16-byte
// epilogue loads and stores at the group's columns. Errors:
// lower-to-sm80-invalid.mlir.
//
// RUN: conv3d-opt %s -conv3d-implicit-gemm=target=sm80 -conv3d-lower-to-sm80 | FileCheck %s
// RUN: conv3d-opt %s -conv3d-implicit-gemm=target=sm80 -conv3d-lower-to-sm80 | FileCheck %s --check-prefix=CA
// CA-NOT: nvgpu.device_async_copy %reinterpret_cast[{{.*}}bypassL1

// 2 groups of 16 channels and 32 filters: per group M = 4*8*8 = 256 in 4
// tiles of 64, N = 32 in 2 tiles of 16, K = 27*16 = 432: 16 blocks of
// 2 warps. A warp owns 32 x 16: 2 x 2 mma tiles over 2 k16 steps a stage.
// CHECK-LABEL: func.func @grouped
// CHECK-SAME: (%[[X:.*]]: memref<1x4x8x8x32xbf16>, %[[W:.*]]: memref<3x3x3x16x64xbf16>, %[[B:.*]]: memref<64xf32>, %[[O:.*]]: memref<1x4x8x8x64xbf16>)
// CHECK-NOT: scf.forall
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : index
// CHECK-DAG: %[[C32:.*]] = arith.constant 32 : index
// CHECK: gpu.launch async {{.*}} blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c16{{.*}}, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) threads({{.*}}) in (%{{.*}} = %c64{{.*}}, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}})
// The block's group: (block / 2 N tiles) mod 2 groups.
// CHECK-NEXT: %[[TWO:.*]] = arith.constant 2 : index
// CHECK-NEXT: %[[Q:.*]] = arith.divui %[[BX]], %[[TWO]] : index
// CHECK-NEXT: %[[TWO2:.*]] = arith.constant 2 : index
// CHECK-NEXT: %[[G:.*]] = arith.remui %[[Q]], %[[TWO2]] : index
// Its views: channels [16g, 16g + 16), filters and outputs [32g, 32g + 32).
// CHECK-NEXT: %[[C0:.*]] = arith.muli %[[G]], %[[C16]] : index
// CHECK-NEXT: %[[F0:.*]] = arith.muli %[[G]], %[[C32]] : index
// CHECK-NEXT: %[[XG:.*]] = memref.subview %[[X]][0, 0, 0, 0, %[[C0]]] [1, 4, 8, 8, 16] [1, 1, 1, 1, 1]
// CHECK-NEXT: %[[WG:.*]] = memref.subview %[[W]][0, 0, 0, 0, %[[F0]]] [3, 3, 3, 16, 32] [1, 1, 1, 1, 1]
// CHECK-NEXT: %[[BG:.*]] = memref.subview %[[B]][%[[F0]]] [32] [1]
// CHECK-NEXT: %[[OG:.*]] = memref.subview %[[O]][0, 0, 0, 0, %[[F0]]] [1, 4, 8, 8, 32] [1, 1, 1, 1, 1]
// Flattened in the kernel.
// CHECK-NEXT: %[[XB:.*]], %[[XO:.*]], %{{.*}}:5, %{{.*}}:5 = memref.extract_strided_metadata %[[XG]]
// CHECK-NEXT: %[[XF:.*]] = memref.reinterpret_cast %[[XB]] to offset: [%[[XO]]], sizes: [8176], strides: [1] : memref<bf16> to memref<8176xbf16, strided<[1], offset: ?>>
// CHECK-NEXT: %[[WB:.*]], %[[WO:.*]], %{{.*}}:5, %{{.*}}:5 = memref.extract_strided_metadata %[[WG]]
// CHECK-NEXT: %[[WF:.*]] = memref.reinterpret_cast %[[WB]] to offset: [%[[WO]]]
// CHECK-NEXT: %[[OB:.*]], %[[OO:.*]], %{{.*}}:5, %{{.*}}:5 = memref.extract_strided_metadata %[[OG]]
// CHECK-NEXT: %[[OF:.*]] = memref.reinterpret_cast %[[OB]] to offset: [%[[OO]]]
// CHECK-NEXT: %[[BB:.*]], %[[BO:.*]], %{{.*}}, %{{.*}} = memref.extract_strided_metadata %[[BG]]
// CHECK-NEXT: %[[BF:.*]] = memref.reinterpret_cast %[[BB]] to offset: [%[[BO]]], sizes: [32], strides: [1]
// 16-byte copies of both operands (the group views are 8-element aligned):
// the input's cached in L1 (.ca), the filter's not (.cg).
// CHECK: nvgpu.device_async_copy %[[XF]][%{{.*}}], %{{.*}}[%{{.*}}], 8, %{{[0-9]+}} : memref<8176xbf16
// CHECK: nvgpu.device_async_copy %[[WF]][%{{.*}}], %{{.*}}[%{{.*}}], 8, %{{.*}} {bypassL1}
// CHECK: scf.for
// CHECK-COUNT-8: nvvm.mma.sync {{.*}} shape = #nvvm.shape<m = 16, n = 8, k = 16>
// CHECK-NOT: nvvm.mma.sync
// The epilogue: the group's bias and output columns, 16-byte accesses.
// CHECK: vector.load %[[BF]][%{{.*}}] {alignment = 16 : i64} : memref<32xf32, strided<[1], offset: ?>>, vector<8xf32>
// CHECK: vector.store %{{.*}}, %[[OF]][%{{.*}}] {alignment = 16 : i64} : memref<16352xbf16, strided<[1], offset: ?>>, vector<8xbf16>
// CHECK: gpu.terminator
func.func @grouped(%x: memref<1x4x8x8x32xbf16>, %w: memref<3x3x3x16x64xbf16>, %b: memref<64xf32>, %o: memref<1x4x8x8x64xbf16>) {
  conv3d.conv ins(%x, %w : memref<1x4x8x8x32xbf16>, memref<3x3x3x16x64xbf16>) bias(%b : memref<64xf32>) outs(%o : memref<1x4x8x8x64xbf16>) overwrite padding = [1, 1, 1, 1, 1, 1] groups = 2 activation = silu config = #conv3d.igemm_config<tile_m = 64, tile_n = 16, tile_k = 32, stages = 3, warps_m = 2>
  return
}
