// conv3d.prologue lowered by conv3d-quantize-to-loops (memref form, identity
// layouts): one scf.parallel over the voxels; with a norm, an scf.for sums
// the voxel's squares in f32 from 16-byte loads, then rsqrt(sum / C + eps);
// a second scf.for loads the channels again with gamma and beta, applies
// the activation and stores 16 bytes. C not a multiple of 8 bf16 uses
// narrower accesses. On tensors, conv3d-to-linalg (the reference) lowers
// it to a reduction and an elementwise generic. The numerics are in
// test/Execution/history-prologue-cpu.test (CPU) and
// test/GPU/sm90-history-run.test (H100).
//
// RUN: split-file %s %t
// RUN: conv3d-opt %t/loops.mlir -conv3d-quantize-to-loops=alignment=16 | FileCheck %s
// RUN: conv3d-opt %t/linalg.mlir -conv3d-to-linalg | FileCheck %s --check-prefix=LINALG
// RUN: conv3d-opt %t/linalg.mlir -conv3d-to-linalg=lower-contiguous-quantize=false | FileCheck %s --check-prefix=KEPT
// RUN: not conv3d-opt %t/strided.mlir -conv3d-quantize-to-loops 2>&1 | FileCheck %s --check-prefix=STRIDED
// RUN: conv3d-opt %t/loops.mlir -conv3d-quantize-to-loops="alignment=16 prologue-lanes=32" | FileCheck %s --check-prefix=WARP
// RUN: not conv3d-opt %t/loops.mlir -conv3d-quantize-to-loops=prologue-lanes=3 2>&1 | FileCheck %s --check-prefix=LANES

// The GPU form: (voxels) x (lanes), lane l starting at element 8 l and
// striding by 8 * lanes, the partial sums combined by gpu.shuffle xor. C = 64
// is 8 accesses, so 8 lanes (4 voxels per warp); C = 12 takes 3 accesses of
// 4: 2 lanes.
// WARP-LABEL: func.func @norm_beta_silu
//       WARP:   scf.parallel (%[[V:.*]], %[[L:.*]]) = (%c0, %c0) to (%c24, %c8) step (%c1, %c1) {
//       WARP:     %[[FIRST:.*]] = arith.muli %[[L]], %c8
//       WARP:     scf.for %{{.*}} = %[[FIRST]] to %c64 step %c64 iter_args
//       WARP:     gpu.shuffle  xor %{{.*}}, %c4_i32, %c32_i32 : f32
//       WARP:     gpu.shuffle  xor %{{.*}}, %c2_i32, %c32_i32 : f32
//       WARP:     gpu.shuffle  xor %{{.*}}, %c1_i32, %c32_i32 : f32
//       WARP:     math.rsqrt
//       WARP:     scf.for %{{.*}} = %[[FIRST]] to %c64 step %c64 {
// WARP-LABEL: func.func @relu_narrow
//   WARP-NOT:   gpu.shuffle
//       WARP:   scf.parallel ({{.*}}) = (%c0, %c0) to (%c8, %c2) step (%c1, %c1)
//       WARP:     scf.for %{{.*}} = %{{.*}} to %c12 step %c8 {
// LANES: conv3d-quantize-to-loops: prologue-lanes must be a power of two from 1 to 32, got 3

//--- loops.mlir
// CHECK-LABEL: func.func @norm_beta_silu
//       CHECK:   %[[IN:.*]] = memref.collapse_shape %arg0 {{.*}} into memref<1536xbf16>
//       CHECK:   %[[OUT:.*]] = memref.collapse_shape %arg3 {{.*}} into memref<1536xbf16>
//       CHECK:   scf.parallel (%[[V:.*]], %{{.*}}) = (%c0, %c0) to (%c24, %c1) step (%c1, %c1) {
//       CHECK:     %[[BASE:.*]] = arith.muli %[[V]], %c64
//       CHECK:     %[[SUM:.*]] = scf.for %{{.*}} = %{{.*}} to %c64 step %c8 iter_args(%{{.*}} = %cst{{.*}}) -> (f32) {
//       CHECK:       vector.load %[[IN]][%{{.*}}] {alignment = 16 : i64} : memref<1536xbf16>, vector<8xbf16>
//       CHECK:       arith.mulf
//       CHECK:     arith.divf %[[SUM]]
//       CHECK:     math.rsqrt
//       CHECK:     scf.for %[[C:.*]] = %{{.*}} to %c64 step %c8 {
//       CHECK:       vector.load %[[IN]]
//       CHECK:       vector.load %arg1[%[[C]]] : memref<64xf32>, vector<8xf32>
//       CHECK:       vector.load %arg2[%[[C]]] : memref<64xbf16>, vector<8xbf16>
//       CHECK:       math.exp
//       CHECK:       vector.store %{{.*}}, %[[OUT]][%{{.*}}] {alignment = 16 : i64} : memref<1536xbf16>, vector<8xbf16>
//   CHECK-NOT:   gpu.shuffle
//   CHECK-NOT:   conv3d.prologue
func.func @norm_beta_silu(%x: memref<1x2x3x4x64xbf16>, %g: memref<64xf32>, %b: memref<64xbf16>, %o: memref<1x2x3x4x64xbf16>) {
  conv3d.prologue ins(%x : memref<1x2x3x4x64xbf16>) rms_norm(%g : memref<64xf32>) norm_beta(%b : memref<64xbf16>) norm_eps = 1.0e-6 input_activation = silu outs(%o : memref<1x2x3x4x64xbf16>)
  return
}

// An activation alone on C = 12 bf16: 4-element accesses (12 % 8 != 0), no
// sum, no alignment claim (8 bytes < 16).
// CHECK-LABEL: func.func @relu_narrow
//   CHECK-NOT:   iter_args
//       CHECK:   scf.for %{{.*}} = %{{.*}} to %c12 step %c4 {
//       CHECK:     vector.load %{{.*}} : memref<{{.*}}xbf16>, vector<4xbf16>
//       CHECK:     arith.maximumf
//       CHECK:     vector.store %{{.*}} : memref<{{.*}}xbf16>, vector<4xbf16>
func.func @relu_narrow(%x: memref<2x1x2x2x12xbf16>, %o: memref<2x1x2x2x12xbf16>) {
  conv3d.prologue ins(%x : memref<2x1x2x2x12xbf16>) input_activation = relu outs(%o : memref<2x1x2x2x12xbf16>)
  return
}

//--- linalg.mlir
// LINALG-LABEL: func.func @on_tensors
//       LINALG:   linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]
//       LINALG:   math.rsqrt
//       LINALG:   linalg.generic {{.*}}ins(%arg0, %{{.*}}, %arg1 : tensor<1x2x3x4x16xf32>, tensor<1x2x3x4xf32>, tensor<16xf32>) outs(%arg2 : tensor<1x2x3x4x16xf32>)
//   LINALG-NOT:   conv3d.prologue
// KEPT-LABEL: func.func @on_tensors
//       KEPT:   conv3d.prologue
func.func @on_tensors(%x: tensor<1x2x3x4x16xf32>, %g: tensor<16xf32>, %e: tensor<1x2x3x4x16xf32>) -> tensor<1x2x3x4x16xf32> {
  %0 = conv3d.prologue ins(%x : tensor<1x2x3x4x16xf32>) rms_norm(%g : tensor<16xf32>) norm_eps = 1.0e-3 outs(%e : tensor<1x2x3x4x16xf32>) -> tensor<1x2x3x4x16xf32>
  return %0 : tensor<1x2x3x4x16xf32>
}

//--- strided.mlir
// STRIDED: error: conv3d-quantize-to-loops needs conv3d.prologue operands with identity layouts
func.func @strided(%x: memref<1x2x3x4x16xf32, strided<[768, 384, 128, 32, 1]>>, %o: memref<1x2x3x4x16xf32>) {
  conv3d.prologue ins(%x : memref<1x2x3x4x16xf32, strided<[768, 384, 128, 32, 1]>>) input_activation = relu outs(%o : memref<1x2x3x4x16xf32>)
  return
}
