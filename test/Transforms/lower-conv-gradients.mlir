// conv3d-lower-conv-gradients: dgrad by stride phase (each phase a dense
// stride-1 forward convolution with its rotated, C <-> F transposed taps,
// inserted at the phase's strided positions), phases no tap reaches zero,
// wgrad as one forward convolution between transposes. The numbers follow
// GradientGeometry (unittests/GradientGeometryTest.cpp enumerates them);
// test/Execution/conv-gradients-cpu.test runs the same functions.
//
// RUN: conv3d-opt --conv3d-lower-conv-gradients %inputs/module_conv_gradients.mlir | FileCheck %s
// RUN: conv3d-opt --conv3d-lower-conv-gradients="wgrad-fold=height-width" %inputs/module_conv_gradients.mlir | FileCheck %s --check-prefix=HW

// Stride 2 along every axis: 8 phases. Phase (0, 0, 0) (even positions) is
// reached by the middle tap alone along each axis: a 1x1x1 filter, tap 1.
// CHECK-DAG: #[[TAP1:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0 * -2 + 1, d1 * -2 + 1, d2 * -2 + 1, d4, d3)>
// Phase (1, 1, 1) by taps 2 and 0, in that (rotated) order.
// CHECK-DAG: #[[TAPS20:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0 * -2 + 2, d1 * -2 + 2, d2 * -2 + 2, d4, d3)>
// CHECK-LABEL: func.func @dgrad_strided
// CHECK-NOT: conv3d.conv_backward_data
// CHECK: %[[F0:.*]] = linalg.generic {indexing_maps = [#[[TAP1]], {{.*}}]} ins(%{{.*}} : tensor<3x3x3x8x6xf32>) outs(%{{.*}} : tensor<1x1x1x6x8xf32>)
// CHECK: %[[B0:.*]] = bufferization.alloc_tensor() : tensor<1x4x4x3x8xf32>
// CHECK: %[[C0:.*]] = conv3d.conv ins(%{{.*}}, %[[F0]] : tensor<1x4x4x3x6xf32>, tensor<1x1x1x6x8xf32>) outs(%[[B0]] : tensor<1x4x4x3x8xf32>) overwrite -> tensor<1x4x4x3x8xf32>
// CHECK: tensor.insert_slice %[[C0]] into %{{.*}}[0, 0, 0, 0, 0] [1, 4, 4, 3, 8] [1, 2, 2, 2, 1]
// CHECK-COUNT-6: conv3d.conv ins
// CHECK: %[[F7:.*]] = linalg.generic {indexing_maps = [#[[TAPS20]], {{.*}}]} ins(%{{.*}} : tensor<3x3x3x8x6xf32>) outs(%{{.*}} : tensor<2x2x2x6x8xf32>)
// Seven odd depths, eight heights (one past the last window: padding 1
// after), six widths.
// CHECK: %[[C7:.*]] = conv3d.conv ins(%{{.*}}, %[[F7]] : tensor<1x4x4x3x6xf32>, tensor<2x2x2x6x8xf32>) outs(%{{.*}} : tensor<1x3x4x3x8xf32>) overwrite padding = [0, 0, 0, 1, 0, 1]
// CHECK: tensor.insert_slice %[[C7]] into %{{.*}}[0, 1, 1, 1, 0] [1, 3, 4, 3, 8] [1, 2, 2, 2, 1]
// CHECK-NOT: conv3d.conv
// CHECK: return

// Accumulating: each phase's convolution adds onto a dense copy of its
// positions of outs (strided phases write dense blocks of their own).
// CHECK-LABEL: func.func @dgrad_accumulate
// CHECK: %[[SLICE:.*]] = tensor.extract_slice %{{.*}}[0, 0, 0, 0, 0] [2, 6, 3, 3, 4] [1, 1, 2, 3, 1]
// CHECK: %[[BLOCK:.*]] = bufferization.alloc_tensor() copy(%[[SLICE]]) : tensor<2x6x3x3x4xf32>
// CHECK: conv3d.conv ins({{.*}}) outs(%[[BLOCK]] : tensor<2x6x3x3x4xf32>) dilations = [2, 1, 2] padding = [0, 2, 1, 1, 0, 0] filter_layout = fqrsc
// CHECK-NOT: overwrite
// CHECK: return

// Dilation 2 with stride 2 along depth: odd depths get no tap. They are
// zeros (the fill), and only the 2 (height) x 1 (width) even-depth phases
// are convolutions.
// CHECK-LABEL: func.func @dgrad_zero_phase
// CHECK: %[[ZERO:.*]] = linalg.fill
// CHECK: tensor.insert_slice %{{.*}} into %[[ZERO]][0, 0, 0, 0, 0] [1, 3, 3, 4, 3] [1, 2, 2, 1, 1]
// CHECK: tensor.insert_slice %{{.*}}[0, 0, 1, 0, 0] [1, 3, 2, 4, 3] [1, 2, 2, 1, 1]
// CHECK-NOT: conv3d.conv
// CHECK: return

// wgrad: batch 1, the output gradient as the window (Do x Ho x 1) with
// its width and batch as channels (Wo*N = 3, zero-padded to 8); stride =
// the forward's dilation (1), dilation = its stride (2); depth reads one
// row past the input (padding 1 after). One generic gathers the input per
// width tap and channel, x'[0, d, h, s*8 + c, wo] = x[0, d, h, wo*2 + s - 1,
// c], zero where the column is padding or wo >= 3; one more makes the
// output gradient the FQRSC filter dy'[f, do, ho, 0, wo] = dy[0, do, ho, wo,
// f]. Both carry conv3d.gpu_transpose_dims (the dimension their reads are
// contiguous along, the output's innermost) for GPU targets' shared-memory
// staging. The result 1 x Q x R x (S*C) x F is the QRSCF gradient, reshaped
// (an `outs` of the function's own, no copy).
// CHECK-LABEL: func.func @wgrad_strided
// CHECK: %[[OUT:.*]] = tensor.empty() : tensor<3x3x3x8x6xf32>
// CHECK-NOT: tensor.pad
// CHECK: %[[G:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<7x8x3x8x8xf32>) attrs = {conv3d.gpu_transpose_dims = array<i64: 3, 4>}
// CHECK: %[[K:.*]] = linalg.index 4
// CHECK: %[[W2:.*]] = arith.muli %[[K]], %c2
// CHECK: %[[W:.*]] = arith.addi
// CHECK: %[[COL:.*]] = arith.addi %[[W]], %c-1
// CHECK: %[[LO:.*]] = arith.cmpi sge, %[[COL]], %c0
// CHECK: %[[HI:.*]] = arith.cmpi slt, %[[COL]], %c6
// CHECK: %[[IN:.*]] = arith.andi %[[LO]], %[[HI]]
// CHECK: %[[USED:.*]] = arith.cmpi slt, %[[K]], %c3
// CHECK: %[[VALID:.*]] = arith.andi %[[IN]], %[[USED]]
// CHECK: %[[AT:.*]] = arith.select %[[VALID]], %[[COL]], %c0
// CHECK: %[[V:.*]] = tensor.extract %arg0[%c0, %{{.*}}, %{{.*}}, %[[AT]], %{{.*}}] : tensor<1x7x8x6x8xf32>
// CHECK: arith.select %[[VALID]], %[[V]], %cst
// CHECK: %[[XC:.*]] = tensor.collapse_shape %[[G]] {{\[}}[0], [1, 2, 3], [4]] : tensor<7x8x3x8x8xf32> into tensor<7x192x8xf32>
// CHECK: %[[X:.*]] = tensor.expand_shape %[[XC]] {{\[}}[0, 1], [2, 3], [4]] output_shape [1, 7, 8, 24, 8]
// CHECK: %[[T:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<6x4x4x8xf32>) attrs = {conv3d.gpu_transpose_dims = array<i64: 0, 3>}
// CHECK: tensor.extract %arg1[%c0, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : tensor<1x4x4x3x6xf32>
// CHECK: %[[DY:.*]] = tensor.expand_shape %[[T]] {{\[}}[0], [1], [2], [3, 4]] output_shape [6, 4, 4, 1, 8]
// CHECK: %[[OC:.*]] = tensor.collapse_shape %[[OUT]] {{\[}}[0], [1, 2, 3], [4]] : tensor<3x3x3x8x6xf32> into tensor<3x72x6xf32>
// CHECK: %[[O:.*]] = tensor.expand_shape %[[OC]] {{\[}}[0, 1], [2, 3], [4]] output_shape [1, 3, 3, 24, 6]
// CHECK: %[[DW:.*]] = conv3d.conv ins(%[[X]], %[[DY]] : tensor<1x7x8x24x8xf32>, tensor<6x4x4x1x8xf32>) outs(%[[O]] : tensor<1x3x3x24x6xf32>) overwrite dilations = [2, 2, 1] padding = [1, 1, 1, 0, 0, 0] filter_layout = fqrsc
// CHECK: %[[DWC:.*]] = tensor.collapse_shape %[[DW]] {{\[}}[0, 1], [2, 3], [4]] : tensor<1x3x3x24x6xf32> into tensor<3x72x6xf32>
// CHECK: %[[R:.*]] = tensor.expand_shape %[[DWC]] {{\[}}[0], [1, 2, 3], [4]] output_shape [3, 3, 3, 8, 6]
// CHECK-NOT: linalg.transpose
// CHECK: return %[[R]]

// Accumulating onto an FQRSC gradient: outs transposed in (QRSCF, then
// reshaped), the sum reshaped and transposed out.
// CHECK-LABEL: func.func @wgrad_accumulate
// CHECK: %[[T:.*]] = linalg.transpose ins(%[[OUTS:.*]] : tensor<5x2x3x2x4xf32>) outs(%{{.*}} : tensor<2x3x2x4x5xf32>) permutation = [1, 2, 3, 4, 0]
// CHECK: %[[TC:.*]] = tensor.collapse_shape %[[T]] {{\[}}[0], [1, 2, 3], [4]] : tensor<2x3x2x4x5xf32> into tensor<2x24x5xf32>
// CHECK: %[[INIT:.*]] = tensor.expand_shape %[[TC]] {{\[}}[0, 1], [2, 3], [4]] output_shape [1, 2, 3, 8, 5]
// CHECK: %[[SUM:.*]] = conv3d.conv ins({{.*}}) outs(%[[INIT]] : tensor<1x2x3x8x5xf32>) strides = [2, 1, 1] dilations = [1, 2, 1] padding = [2, 0, 0, 0, 0, 0] filter_layout = fqrsc
// CHECK: %[[SC:.*]] = tensor.collapse_shape %[[SUM]] {{\[}}[0, 1], [2, 3], [4]] : tensor<1x2x3x8x5xf32> into tensor<2x24x5xf32>
// CHECK: %[[S:.*]] = tensor.expand_shape %[[SC]] {{\[}}[0], [1, 2, 3], [4]] output_shape [2, 3, 2, 4, 5]
// CHECK: linalg.transpose ins(%[[S]] : tensor<2x3x2x4x5xf32>) outs(%[[OUTS]] : tensor<5x2x3x2x4xf32>) permutation = [4, 0, 1, 2, 3]

// wgrad-fold=height-width: the height folded into the channels too,
// Ho*Wo*N = 4*3*1 = 12 of them (zero-padded to 16), k = ho*3 + wo. One
// generic gathers the input per height and width tap and channel,
// x'[0, d, 0, (r*3 + s)*8 + c, k] = x[0, d, ho*2 + r - 1, wo*2 + s - 1, c],
// zero where the row or the column is padding or k >= 12; the output
// gradient is the filter dy'[f, do, 0, 0, k] = dy[0, do, ho, wo, f]; the
// window is the 4 output depths alone, with no height padding (the gather
// wrote it), and the result 1 x Q x 1 x (R*S*C) x F is the QRSCF gradient
// reshaped.
// HW-LABEL: func.func @wgrad_strided
// HW: %[[OUT:.*]] = tensor.empty() : tensor<3x3x3x8x6xf32>
// HW: %[[G:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<7x3x3x8x16xf32>) attrs = {conv3d.gpu_transpose_dims = array<i64: 3, 4>}
// HW: %[[R:.*]] = linalg.index 1
// HW: %[[S:.*]] = linalg.index 2
// HW: %[[K:.*]] = linalg.index 4
// HW: %[[WO:.*]] = arith.remui %[[K]], %c3
// HW: %[[WO2:.*]] = arith.muli %[[WO]], %c2
// HW: arith.addi %[[WO2]], %[[S]]
// HW: %[[HO:.*]] = arith.divui %[[K]], %c3
// HW: %[[HO2:.*]] = arith.muli %[[HO]], %c2
// HW: arith.addi %[[HO2]], %[[R]]
// HW: %[[USED:.*]] = arith.cmpi slt, %[[K]], %c12
// HW: tensor.extract %arg0[%c0, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : tensor<1x7x8x6x8xf32>
// HW: %[[XC:.*]] = tensor.collapse_shape %[[G]] {{\[}}[0], [1, 2, 3], [4]] : tensor<7x3x3x8x16xf32> into tensor<7x72x16xf32>
// HW: %[[X:.*]] = tensor.expand_shape %[[XC]] {{\[}}[0, 1], [2, 3], [4]] output_shape [1, 7, 1, 72, 16]
// HW: %[[T:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<6x4x1x16xf32>) attrs = {conv3d.gpu_transpose_dims = array<i64: 0, 3>}
// HW: tensor.extract %arg1[%c0, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : tensor<1x4x4x3x6xf32>
// HW: %[[DY:.*]] = tensor.expand_shape %[[T]] {{\[}}[0], [1], [2], [3, 4]] output_shape [6, 4, 1, 1, 16]
// HW: %[[O:.*]] = tensor.expand_shape %{{.*}} {{\[}}[0, 1], [2, 3], [4]] output_shape [1, 3, 1, 72, 6]
// HW: %[[DW:.*]] = conv3d.conv ins(%[[X]], %[[DY]] : tensor<1x7x1x72x16xf32>, tensor<6x4x1x1x16xf32>) outs(%[[O]] : tensor<1x3x1x72x6xf32>) overwrite dilations = [2, 1, 1] padding = [1, 1, 0, 0, 0, 0] filter_layout = fqrsc
// HW: %[[DWC:.*]] = tensor.collapse_shape %[[DW]] {{\[}}[0, 1], [2, 3], [4]] : tensor<1x3x1x72x6xf32> into tensor<3x72x6xf32>
// HW: %[[RES:.*]] = tensor.expand_shape %[[DWC]] {{\[}}[0], [1, 2, 3], [4]] output_shape [3, 3, 3, 8, 6]
// HW: return %[[RES]]
// HW-LABEL: func.func @wgrad_accumulate
// HW: conv3d.conv ins({{.*}} : tensor<1x6x1x24x16xf32>, tensor<5x6x1x1x16xf32>) outs(%{{.*}} : tensor<1x2x1x24x5xf32>) strides = [2, 1, 1] padding = [2, 0, 0, 0, 0, 0] filter_layout = fqrsc
