// conv3d-quantize-to-loops: a conv3d.quantize on memrefs whose blocks are
// contiguous runs of the flat buffer (block axes trailing, flattened length
// a multiple of the block size) becomes one scf.parallel over the blocks:
// 16-byte vector loads of the block, one maximum and scale, the quantized
// values stored back with 16-byte vector stores. Other quantize ops stay.
// Errors: quantize-to-loops-invalid.mlir. The numerics (bit for bit against
// the reference quantizer, on the CPU and the GPU) are in
// unittests/FusedQuantBitExactTest.cpp (the prepass cases).
//
// RUN: conv3d-opt %s -split-input-file -conv3d-quantize-to-loops | FileCheck %s
// RUN: conv3d-opt %s -split-input-file -conv3d-quantize-to-loops=alignment=16 | FileCheck %s --check-prefix=ALIGN

// bf16 activation, blocks of 16 channels: 2*3*4*4*32 / 16 = 192 blocks of
// two 8-element (16-byte) vectors each.
// CHECK-LABEL: func.func @activation_bf16
// CHECK-SAME: (%[[X:.*]]: memref<2x3x4x4x32xbf16>, %[[AMAX:.*]]: f32, %[[O:.*]]: memref<2x3x4x4x32xbf16>)
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : index
// CHECK-DAG: %[[C192:.*]] = arith.constant 192 : index
// CHECK-DAG: %[[FX:.*]] = memref.collapse_shape %[[X]] {{\[\[}}0, 1, 2, 3, 4]] : memref<2x3x4x4x32xbf16> into memref<3072xbf16>
// CHECK-DAG: %[[FO:.*]] = memref.collapse_shape %[[O]] {{\[\[}}0, 1, 2, 3, 4]] : memref<2x3x4x4x32xbf16> into memref<3072xbf16>
// CHECK: scf.parallel (%[[B:.*]]) = (%[[C0]]) to (%[[C192]]) step (%[[C1]]) {
// CHECK: %[[BASE:.*]] = arith.muli %[[B]], %[[C16]] : index
// CHECK: vector.load %[[FX]][%[[BASE]]] : memref<3072xbf16>, vector<8xbf16>
// CHECK: %[[SECOND:.*]] = arith.addi %[[BASE]], %[[C8]] : index
// CHECK: vector.load %[[FX]][%[[SECOND]]] : memref<3072xbf16>, vector<8xbf16>
// The block maximum and the scale are computed once per block: one divide
// by amax / 2688 and one E4M3 rounding, not one per element.
// CHECK: arith.divf
// CHECK: vector.store %{{.*}}, %[[FO]][%{{.*}}] : memref<3072xbf16>, vector<8xbf16>
// CHECK: vector.store %{{.*}}, %[[FO]][%{{.*}}] : memref<3072xbf16>, vector<8xbf16>
// CHECK-NOT: vector.store
// CHECK: scf.reduce
// CHECK-NOT: conv3d.quantize
// ALIGN-LABEL: func.func @activation_bf16
// ALIGN-COUNT-2: vector.load {{.*}} {alignment = 16 : i64} : memref<3072xbf16>, vector<8xbf16>
// ALIGN-COUNT-2: vector.store {{.*}} {alignment = 16 : i64} : memref<3072xbf16>, vector<8xbf16>
func.func @activation_bf16(%x: memref<2x3x4x4x32xbf16>, %amax: f32, %o: memref<2x3x4x4x32xbf16>) {
  conv3d.quantize #conv3d.nvfp4<block_size = 16> axes = [4] ins(%x : memref<2x3x4x4x32xbf16>) amax(%amax) outs(%o : memref<2x3x4x4x32xbf16>)
  return
}

// -----

// f32, blocks of 32 spanning two trailing axes (4 x 16 = 64 elements, a
// multiple of 32): eight 4-element vectors per block; dynamic batch.
// CHECK-LABEL: func.func @f32_two_axes_dynamic
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C32:.*]] = arith.constant 32 : index
// CHECK: %[[FX:.*]] = memref.collapse_shape %{{.*}} {{\[\[}}0, 1, 2]] : memref<?x4x16xf32> into memref<?xf32>
// CHECK: %[[N:.*]] = memref.dim %[[FX]], %[[C0]] : memref<?xf32>
// CHECK: %[[BLOCKS:.*]] = arith.divui %[[N]], %[[C32]] : index
// CHECK: scf.parallel (%{{.*}}) = (%[[C0]]) to (%[[BLOCKS]])
// CHECK-COUNT-8: vector.load %[[FX]][%{{.*}}] : memref<?xf32>, vector<4xf32>
// CHECK-COUNT-8: vector.store %{{.*}} : memref<?xf32>, vector<4xf32>
func.func @f32_two_axes_dynamic(%x: memref<?x4x16xf32>, %amax: f32, %o: memref<?x4x16xf32>) {
  conv3d.quantize #conv3d.nvfp4<block_size = 32> axes = [1, 2] ins(%x : memref<?x4x16xf32>) amax(%amax) outs(%o : memref<?x4x16xf32>)
  return
}

// -----

// Blocks that are not contiguous runs stay for the reference lowering:
// QRSCF filter blocks run along Q, R, S, C with F innermost; a C of 24 is
// not a multiple of the block size 16; the tensor form.
// CHECK-LABEL: func.func @not_contiguous
// CHECK-NOT: scf.parallel
// CHECK: conv3d.quantize #conv3d.nvfp4<block_size = 16> axes = [0, 1, 2, 3] ins(%{{.*}} : memref<3x3x3x16x8xbf16>)
// CHECK: conv3d.quantize #conv3d.nvfp4<block_size = 16> axes = [4] ins(%{{.*}} : memref<1x2x2x2x24xbf16>)
// CHECK: conv3d.quantize #conv3d.nvfp4<block_size = 16> axes = [4] ins(%{{.*}} : tensor<1x2x2x2x32xbf16>)
func.func @not_contiguous(%w: memref<3x3x3x16x8xbf16>, %wo: memref<3x3x3x16x8xbf16>, %x: memref<1x2x2x2x24xbf16>, %xo: memref<1x2x2x2x24xbf16>, %t: tensor<1x2x2x2x32xbf16>, %amax: f32) -> tensor<1x2x2x2x32xbf16> {
  conv3d.quantize #conv3d.nvfp4<block_size = 16> axes = [0, 1, 2, 3] ins(%w : memref<3x3x3x16x8xbf16>) amax(%amax) outs(%wo : memref<3x3x3x16x8xbf16>)
  conv3d.quantize #conv3d.nvfp4<block_size = 16> axes = [4] ins(%x : memref<1x2x2x2x24xbf16>) amax(%amax) outs(%xo : memref<1x2x2x2x24xbf16>)
  %e = tensor.empty() : tensor<1x2x2x2x32xbf16>
  %q = conv3d.quantize #conv3d.nvfp4<block_size = 16> axes = [4] ins(%t : tensor<1x2x2x2x32xbf16>) amax(%amax) outs(%e : tensor<1x2x2x2x32xbf16>) -> tensor<1x2x2x2x32xbf16>
  return %q : tensor<1x2x2x2x32xbf16>
}
