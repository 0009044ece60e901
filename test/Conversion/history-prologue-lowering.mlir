// The CPU lowerings of a convolution with a history operand and an input
// prologue never materialize concat(history, input) or a padded input:
// - conv3d-to-linalg: a per-voxel RMS statistic (a reduction over C), the
//   prologue as one elementwise map of the input, and an im2col gather that
//   reads each element from the history or the transformed input (halo
//   zero) under scf.if, times the K x F filter;
// - conv3d-implicit-gemm + conv3d-lower-to-cpu: the RMS statistic of every
//   input voxel from the conv3d.voxel_rms_scale prepass (a parallel loop,
//   the same the GPU targets run as a device loop); the A-tile load chooses
//   the source per element (a memref.load of the history and of the input
//   at clamped positions, one selected by depth; never a copy), reads the
//   voxel's statistic and applies the prologue to the input's value only;
// - a load_im2col_tile without the prepass (INLINE) computes the statistic
//   over the voxel's channels once per voxel and tap, carried along the
//   tile's columns.
//
// RUN: split-file %s %t
// RUN: conv3d-opt %t/step.mlir -conv3d-to-linalg | FileCheck %s --check-prefix=LINALG
// RUN: conv3d-opt %t/step.mlir -one-shot-bufferize="bufferize-function-boundaries" -conv3d-implicit-gemm -conv3d-lower-to-cpu | FileCheck %s --check-prefix=CPU
// RUN: conv3d-opt %t/inline.mlir -conv3d-lower-to-cpu | FileCheck %s --check-prefix=INLINE

//--- step.mlir

// LINALG-LABEL: func.func @step
//  LINALG-SAME:   (%[[X:[^:]+]]: tensor<1x4x6x6x8xbf16>, %[[H:[^:]+]]: tensor<1x2x6x6x8xbf16>, %{{.*}}: tensor<3x3x3x8x16xbf16>, %[[G:[^:]+]]: tensor<8xf32>
//   LINALG-NOT:   tensor.concat
//   LINALG-NOT:   tensor.pad
//       LINALG:   linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[X]] : tensor<1x4x6x6x8xbf16>)
//       LINALG:   math.rsqrt
//       LINALG:   %[[T:.*]] = linalg.generic {{.*}} ins(%[[X]], %{{.*}}, %[[G]] : tensor<1x4x6x6x8xbf16>, tensor<1x4x6x6xf32>, tensor<8xf32>)
//       LINALG:     math.exp
//       LINALG:     arith.divf
//       LINALG:   linalg.generic {{.*}} outs(%{{.*}} : tensor<144x216xbf16>)
//       LINALG:     scf.if
//       LINALG:       scf.if
//       LINALG:         tensor.extract %[[H]]
//       LINALG:         tensor.extract %[[T]]
//   LINALG-NOT:   tensor.concat
//   LINALG-NOT:   tensor.pad
//       LINALG:   return

// CPU-LABEL: func.func @step
//  CPU-SAME:   (%[[X:[^:]+]]: memref<1x4x6x6x8xbf16{{.*}}>, %[[H:[^:]+]]: memref<1x2x6x6x8xbf16{{.*}}>, %{{.*}}: memref<3x3x3x8x16xbf16{{.*}}>, %[[G:[^:]+]]: memref<8xf32{{.*}}>
//   CPU-NOT:   memref.copy
// The prepass: one parallel loop over the input's voxels (not the
// history's), each summing its 8 channels' squares, then the statistic.
//       CPU:   %[[S:.*]] = memref.alloc() : memref<1x4x6x6xf32>
//       CPU:   scf.parallel (%[[N:.*]], %[[D:.*]], %[[HH:.*]], %[[W:.*]]) = (%c0, %c0, %c0, %c0) to (%c1, %c4, %c6, %c6)
//       CPU:     scf.for %{{.*}} = %c0 to %c8 step %c1 iter_args
//       CPU:       memref.load %[[X]]
//       CPU:     math.rsqrt
//       CPU:     memref.store %{{.*}}, %[[S]][%[[N]], %[[D]], %[[HH]], %[[W]]]
//       CPU:   scf.forall
// The tile load reads the voxel's statistic, then the input value, the
// norm's gamma, SiLU, the rounding to bf16.
//       CPU:   memref.load %[[S]]
//       CPU:   %[[XV:.*]] = memref.load %[[X]]
//       CPU:   memref.load %[[G]]
//       CPU:   math.exp
//       CPU:   %[[T:.*]] = arith.truncf %{{.*}} : f32 to bf16
// The history voxel at the same (clamped) position, then the source by
// depth and the halo select.
//       CPU:   %[[HV:.*]] = memref.load %[[H]]
//       CPU:   %[[FROMH:.*]] = arith.cmpi ult, %{{.*}}, %c2 : index
//       CPU:   %[[V:.*]] = arith.select %[[FROMH]], %[[HV]], %[[T]] : bf16
//       CPU:   arith.select %{{.*}}, %[[V]], %{{.*}} : bf16
//       CPU:   memref.dealloc %[[S]]
//   CPU-NOT:   memref.copy
//       CPU:   return
func.func @step(%x: tensor<1x4x6x6x8xbf16>, %h: tensor<1x2x6x6x8xbf16>,
                %w: tensor<3x3x3x8x16xbf16>, %g: tensor<8xf32>,
                %init: tensor<1x4x6x6x16xbf16>) -> tensor<1x4x6x6x16xbf16> {
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xbf16>, tensor<3x3x3x8x16xbf16>)
         history(%h : tensor<1x2x6x6x8xbf16>)
         rms_norm(%g : tensor<8xf32>) norm_eps = 1.0e-6 input_activation = silu
         outs(%init : tensor<1x4x6x6x16xbf16>) overwrite
         padding = [0, 0, 1, 1, 1, 1] -> tensor<1x4x6x6x16xbf16>
  return %0 : tensor<1x4x6x6x16xbf16>
}

//--- inline.mlir

// INLINE-LABEL: func.func @inline
//  INLINE-SAME:   (%[[X:[^:]+]]: memref<1x4x6x6x8xbf16>, %[[H:[^:]+]]: memref<1x2x6x6x8xbf16>, %[[G:[^:]+]]: memref<8xf32>
//   INLINE-NOT:   scf.parallel
// The column loop carries the voxel's norm scale, recomputed (a loop over
// its 8 channels) when a voxel or the row starts.
//       INLINE:   scf.for %{{.*}} = %c0 to %c32 step %c1 iter_args(%[[CARRIED:.*]] = %{{.*}}) -> (f32)
//       INLINE:     %[[FRESH:.*]] = arith.ori
//       INLINE:     %[[SCALE:.*]] = scf.if %[[FRESH]] -> (f32)
//       INLINE:       scf.for %{{.*}} = %c0 to %c8 step %c1 iter_args
//       INLINE:         memref.load %[[X]]
//       INLINE:       math.rsqrt
//       INLINE:     } else {
//       INLINE:       scf.yield %[[CARRIED]] : f32
//       INLINE:   memref.load %[[X]]
//       INLINE:   memref.load %[[G]]
//       INLINE:   math.exp
//       INLINE:   memref.load %[[H]]
//       INLINE:   scf.yield %[[SCALE]] : f32
func.func @inline(%x: memref<1x4x6x6x8xbf16>, %h: memref<1x2x6x6x8xbf16>,
                  %g: memref<8xf32>, %a: memref<32x32xbf16>, %m0: index,
                  %k0: index, %k: index) {
  conv3d.load_im2col_tile %x[%m0, %k0] limit %k into %a history(%h : memref<1x2x6x6x8xbf16>)
      rms_norm(%g : memref<8xf32>) norm_eps = 1.0e-6 input_activation = silu
      window = [3, 3, 3] padding = [0, 0, 1, 1, 1, 1]
      : memref<1x4x6x6x8xbf16>, memref<32x32xbf16>
  return
}
