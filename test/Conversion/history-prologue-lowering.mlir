// The CPU lowerings of a convolution with a history operand and an input
// prologue never materialize concat(history, input) or a padded input:
// - conv3d-to-linalg: a per-voxel RMS statistic (a reduction over C), the
//   prologue as one elementwise map of the input, and an im2col gather that
//   reads each element from the history or the transformed input (halo
//   zero) under scf.if, times the K x F filter;
// - conv3d-implicit-gemm + conv3d-lower-to-cpu: the A-tile load chooses the
//   source per element (a memref.load of the history and of the input at
//   clamped positions, one selected by depth; never a copy), computes the
//   statistic over the voxel's channels once per voxel and tap (carried
//   along the tile's columns) and applies the prologue to the input's value
//   only.
//
// RUN: conv3d-opt %s -conv3d-to-linalg | FileCheck %s --check-prefix=LINALG
// RUN: conv3d-opt %s -one-shot-bufferize="bufferize-function-boundaries" -conv3d-implicit-gemm -conv3d-lower-to-cpu | FileCheck %s --check-prefix=CPU

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
// The column loop carries the voxel's norm scale, recomputed (a loop over
// its 8 channels) when a voxel or the row starts; then the input value, the
// norm's gamma, SiLU, the rounding to bf16.
//       CPU:   scf.for %{{.*}} = %c0 to %c64 step %c1 iter_args(%[[CARRIED:.*]] = %{{.*}}) -> (f32)
//       CPU:     %[[FRESH:.*]] = arith.ori
//       CPU:     %[[SCALE:.*]] = scf.if %[[FRESH]] -> (f32)
//       CPU:       scf.for %{{.*}} = %c0 to %c8 step %c1 iter_args
//       CPU:         memref.load %[[X]]
//       CPU:       math.rsqrt
//       CPU:     } else {
//       CPU:       scf.yield %[[CARRIED]] : f32
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
//       CPU:   scf.yield %[[SCALE]] : f32
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
