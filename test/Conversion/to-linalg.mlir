// The reference lowering of conv3d ops on tensors to linalg: a zero
// tensor.pad, one 9-loop linalg.generic accumulating in f32 and an epilogue
// generic for conv3d.conv; an explicit im2col + block-max + quantization +
// GEMM chain with input quantization; block-max + quantization generics for
// conv3d.quantize; one elementwise generic for conv3d.epilogue.
//
// RUN: conv3d-opt %s -conv3d-to-linalg -split-input-file | FileCheck %s

//===----------------------------------------------------------------------===//
// conv3d.conv, direct
//===----------------------------------------------------------------------===//

// bf16 with causal padding and `overwrite`: a zero f32 accumulator, the
// padded input, the convolution generic (n, do, ho, wo, f parallel;
// q, r, s, c reduction) and an epilogue that only rounds to bf16.
// CHECK-DAG: #[[$IN:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d1 + d5, d2 + d6, d3 + d7, d8)>
// CHECK-DAG: #[[$QRSCF:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d5, d6, d7, d8, d4)>
// CHECK-DAG: #[[$OUT9:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d1, d2, d3, d4)>
// CHECK-DAG: #[[$ID5:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
// CHECK-LABEL: func.func @conv_bf16_causal
//  CHECK-SAME:   (%[[X:.*]]: tensor<1x4x6x6x8xbf16>, %[[W:.*]]: tensor<3x3x3x8x16xbf16>, %[[INIT:.*]]: tensor<1x4x6x6x16xbf16>)
//   CHECK-DAG:   %[[ZB:.*]] = arith.constant 0.000000e+00 : bf16
//   CHECK-DAG:   %[[ZF:.*]] = arith.constant 0.000000e+00 : f32
//       CHECK:   %[[E:.*]] = tensor.empty() : tensor<1x4x6x6x16xf32>
//       CHECK:   %[[ACC:.*]] = linalg.fill ins(%[[ZF]] : f32) outs(%[[E]] : tensor<1x4x6x6x16xf32>)
//       CHECK:   %[[P:.*]] = tensor.pad %[[X]] low[0, 2, 1, 1, 0] high[0, 0, 1, 1, 0]
//       CHECK:     tensor.yield %[[ZB]] : bf16
//       CHECK:   } : tensor<1x4x6x6x8xbf16> to tensor<1x6x8x8x8xbf16>
//       CHECK:   %[[CONV:.*]] = linalg.generic {indexing_maps = [#[[$IN]], #[[$QRSCF]], #[[$OUT9]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "reduction"]}
//  CHECK-SAME:       ins(%[[P]], %[[W]] : tensor<1x6x8x8x8xbf16>, tensor<3x3x3x8x16xbf16>) outs(%[[ACC]] : tensor<1x4x6x6x16xf32>)
//       CHECK:   ^bb0(%[[A:.*]]: bf16, %[[B:.*]]: bf16, %[[O:.*]]: f32):
//       CHECK:     %[[AF:.*]] = arith.extf %[[A]] : bf16 to f32
//       CHECK:     %[[BF:.*]] = arith.extf %[[B]] : bf16 to f32
//       CHECK:     %[[M:.*]] = arith.mulf %[[AF]], %[[BF]] : f32
//       CHECK:     %[[S:.*]] = arith.addf %[[O]], %[[M]] : f32
//       CHECK:     linalg.yield %[[S]] : f32
//       CHECK:   %[[R:.*]] = linalg.generic {indexing_maps = [#[[$ID5]], #[[$ID5]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
//  CHECK-SAME:       ins(%[[CONV]] : tensor<1x4x6x6x16xf32>) outs(%[[INIT]] : tensor<1x4x6x6x16xbf16>)
//       CHECK:     arith.truncf %{{.*}} : f32 to bf16
//       CHECK:   return %[[R]]
//   CHECK-NOT:   conv3d.
func.func @conv_bf16_causal(%x: tensor<1x4x6x6x8xbf16>, %w: tensor<3x3x3x8x16xbf16>,
                            %init: tensor<1x4x6x6x16xbf16>) -> tensor<1x4x6x6x16xbf16> {
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xbf16>, tensor<3x3x3x8x16xbf16>)
         outs(%init : tensor<1x4x6x6x16xbf16>) overwrite
         padding = [2, 0, 1, 1, 1, 1] -> tensor<1x4x6x6x16xbf16>
  return %0 : tensor<1x4x6x6x16xbf16>
}

// -----

// Strides and dilations enter the input map (d * stride + tap * dilation),
// FQRSC the filter map; no padding means no tensor.pad. An f32 destination
// without `overwrite` is the accumulator itself.
// CHECK-DAG: #[[$IN:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d1 * 2 + d5 * 3, d2 * 3 + d6, d3 * 2 + d7 * 2, d8)>
// CHECK-DAG: #[[$FQRSC:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d4, d5, d6, d7, d8)>
// CHECK-LABEL: func.func @conv_f32_strided_dilated_fqrsc_accumulate
//  CHECK-SAME:   (%[[X:.*]]: tensor<2x9x9x9x3xf32>, %[[W:.*]]: tensor<16x2x3x2x3xf32>, %[[INIT:.*]]: tensor<2x3x3x4x16xf32>)
//   CHECK-NOT:   tensor.pad
//   CHECK-NOT:   linalg.fill
//       CHECK:   %[[CONV:.*]] = linalg.generic {indexing_maps = [#[[$IN]], #[[$FQRSC]], #{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "reduction"]}
//  CHECK-SAME:       ins(%[[X]], %[[W]] : tensor<2x9x9x9x3xf32>, tensor<16x2x3x2x3xf32>) outs(%[[INIT]] : tensor<2x3x3x4x16xf32>)
//   CHECK-NOT:     arith.extf
//       CHECK:     arith.mulf
//       CHECK:   linalg.generic {{.*}} ins(%[[CONV]] : tensor<2x3x3x4x16xf32>) outs(%[[INIT]] : tensor<2x3x3x4x16xf32>)
func.func @conv_f32_strided_dilated_fqrsc_accumulate(
    %x: tensor<2x9x9x9x3xf32>, %w: tensor<16x2x3x2x3xf32>,
    %init: tensor<2x3x3x4x16xf32>) -> tensor<2x3x3x4x16xf32> {
  %0 = conv3d.conv ins(%x, %w : tensor<2x9x9x9x3xf32>, tensor<16x2x3x2x3xf32>)
         outs(%init : tensor<2x3x3x4x16xf32>)
         strides = [2, 3, 2] dilations = [3, 1, 2] filter_layout = fqrsc
         -> tensor<2x3x3x4x16xf32>
  return %0 : tensor<2x3x3x4x16xf32>
}

// -----

// Accumulation onto a bf16 destination: the destination is first widened
// to f32 by an extf generic, which then is the accumulator (no zero fill).
// CHECK-LABEL: func.func @conv_accumulate_bf16
//  CHECK-SAME:   (%[[X:.*]]: tensor<1x4x6x6x8xbf16>, %[[W:.*]]: tensor<3x3x3x8x16xbf16>, %[[INIT:.*]]: tensor<1x2x4x4x16xbf16>)
//   CHECK-NOT:   linalg.fill
//       CHECK:   %[[E:.*]] = tensor.empty() : tensor<1x2x4x4x16xf32>
//       CHECK:   %[[ACC:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%[[INIT]] : tensor<1x2x4x4x16xbf16>) outs(%[[E]] : tensor<1x2x4x4x16xf32>)
//       CHECK:   ^bb0(%[[IN:.*]]: bf16, %{{.*}}: f32):
//       CHECK:     %[[EXT:.*]] = arith.extf %[[IN]] : bf16 to f32
//       CHECK:     linalg.yield %[[EXT]] : f32
//       CHECK:   %[[CONV:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[W]] : tensor<1x4x6x6x8xbf16>, tensor<3x3x3x8x16xbf16>) outs(%[[ACC]] : tensor<1x2x4x4x16xf32>)
//       CHECK:   %[[R:.*]] = linalg.generic {{.*}} ins(%[[CONV]] : tensor<1x2x4x4x16xf32>) outs(%[[INIT]] : tensor<1x2x4x4x16xbf16>)
//       CHECK:     arith.truncf
//       CHECK:   return %[[R]]
func.func @conv_accumulate_bf16(%x: tensor<1x4x6x6x8xbf16>, %w: tensor<3x3x3x8x16xbf16>,
                                %init: tensor<1x2x4x4x16xbf16>) -> tensor<1x2x4x4x16xbf16> {
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xbf16>, tensor<3x3x3x8x16xbf16>)
         outs(%init : tensor<1x2x4x4x16xbf16>) -> tensor<1x2x4x4x16xbf16>
  return %0 : tensor<1x2x4x4x16xbf16>
}

// -----

// The fused epilogue: bias (indexed by f), SiLU, residual, cast to f16, all
// in the one elementwise generic after the convolution.
// CHECK-DAG: #[[$ID5:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
// CHECK-DAG: #[[$BIAS:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d4)>
// CHECK-LABEL: func.func @conv_epilogue_silu
//  CHECK-SAME:   (%[[X:.*]]: tensor<1x3x3x3x4xf16>, %[[W:.*]]: tensor<1x1x1x4x8xf16>, %[[B:.*]]: tensor<8xf32>, %[[RES:.*]]: tensor<1x3x3x3x8xf16>, %[[INIT:.*]]: tensor<1x3x3x3x8xf16>)
//       CHECK:   %[[CONV:.*]] = linalg.generic
//       CHECK:   %[[R:.*]] = linalg.generic {indexing_maps = [#[[$ID5]], #[[$BIAS]], #[[$ID5]], #[[$ID5]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
//  CHECK-SAME:       ins(%[[CONV]], %[[B]], %[[RES]] : tensor<1x3x3x3x8xf32>, tensor<8xf32>, tensor<1x3x3x3x8xf16>) outs(%[[INIT]] : tensor<1x3x3x3x8xf16>)
//       CHECK:   ^bb0(%[[ACC:.*]]: f32, %[[BV:.*]]: f32, %[[RV:.*]]: f16, %{{.*}}: f16):
//       CHECK:     %[[Z:.*]] = arith.addf %[[ACC]], %[[BV]] : f32
//       CHECK:     arith.negf %[[Z]]
//       CHECK:     math.exp
//       CHECK:     %[[SILU:.*]] = arith.divf %[[Z]], %{{.*}} : f32
//       CHECK:     %[[RF:.*]] = arith.extf %[[RV]] : f16 to f32
//       CHECK:     %[[SUM:.*]] = arith.addf %[[SILU]], %[[RF]] : f32
//       CHECK:     %[[T:.*]] = arith.truncf %[[SUM]] : f32 to f16
//       CHECK:     linalg.yield %[[T]] : f16
//       CHECK:   return %[[R]]
func.func @conv_epilogue_silu(%x: tensor<1x3x3x3x4xf16>, %w: tensor<1x1x1x4x8xf16>,
                              %b: tensor<8xf32>, %res: tensor<1x3x3x3x8xf16>,
                              %init: tensor<1x3x3x3x8xf16>) -> tensor<1x3x3x3x8xf16> {
  %0 = conv3d.conv ins(%x, %w : tensor<1x3x3x3x4xf16>, tensor<1x1x1x4x8xf16>)
         bias(%b : tensor<8xf32>) residual(%res : tensor<1x3x3x3x8xf16>)
         outs(%init : tensor<1x3x3x3x8xf16>) overwrite activation = silu
         -> tensor<1x3x3x3x8xf16>
  return %0 : tensor<1x3x3x3x8xf16>
}

// -----

// A dynamic batch is fine for the direct form: the accumulator takes its
// size from the destination.
// CHECK-LABEL: func.func @conv_dynamic_batch
//  CHECK-SAME:   %[[INIT:[^:]*]]: tensor<?x2x4x4x16xf32>
//       CHECK:   %[[D:.*]] = tensor.dim %[[INIT]], %{{.*}} : tensor<?x2x4x4x16xf32>
//       CHECK:   tensor.empty(%[[D]]) : tensor<?x2x4x4x16xf32>
//       CHECK:   linalg.generic {{.*}} outs(%{{.*}} : tensor<?x2x4x4x16xf32>)
//   CHECK-NOT:   conv3d.conv
func.func @conv_dynamic_batch(%x: tensor<?x4x6x6x8xf32>, %w: tensor<3x3x3x8x16xf32>,
                              %init: tensor<?x2x4x4x16xf32>) -> tensor<?x2x4x4x16xf32> {
  %0 = conv3d.conv ins(%x, %w : tensor<?x4x6x6x8xf32>, tensor<3x3x3x8x16xf32>)
         outs(%init : tensor<?x2x4x4x16xf32>) overwrite -> tensor<?x2x4x4x16xf32>
  return %0 : tensor<?x2x4x4x16xf32>
}

//===----------------------------------------------------------------------===//
// conv3d.conv with NVFP4 input quantization
//===----------------------------------------------------------------------===//

// -----

// M = 1*4*6*6 = 144 output positions, K = 3*3*3*8 = 216, F = 16; 14 blocks
// of 16 per row (the last one partial). im2col reads the padded input; the
// block maxima reduce over the element loop; the quantization reads its
// block's maximum through k floordiv 16; the FQRSC filter collapses to F x K
// and the GEMM result expands back to NDHWF.
// CHECK-DAG: #[[$ID2:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$ELEM:.*]] = affine_map<(d0, d1, d2) -> (d2)>
// CHECK-DAG: #[[$MN:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[$BLOCK:.*]] = affine_map<(d0, d1) -> (d0, d1 floordiv 16)>
// CHECK-DAG: #[[$MK:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[$NK:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-LABEL: func.func @conv_quantized_fqrsc
//  CHECK-SAME:   (%[[X:.*]]: tensor<1x4x6x6x8xbf16>, %[[W:.*]]: tensor<16x3x3x3x8xbf16>, %[[AMAX:.*]]: f32, %[[INIT:.*]]: tensor<1x4x6x6x16xf32>)
//       CHECK:   %[[ACC:.*]] = linalg.fill
//       CHECK:   %[[P:.*]] = tensor.pad %[[X]] low[0, 2, 1, 1, 0] high[0, 0, 1, 1, 0]
//       CHECK:   %[[IE:.*]] = tensor.empty() : tensor<144x216xbf16>
//       CHECK:   %[[IM2COL:.*]] = linalg.generic {indexing_maps = [#[[$ID2]]], iterator_types = ["parallel", "parallel"]} outs(%[[IE]] : tensor<144x216xbf16>)
//       CHECK:     tensor.extract %[[P]][{{.*}}] : tensor<1x6x8x8x8xbf16>
//       CHECK:   %[[QE:.*]] = tensor.empty() : tensor<144x216xbf16>
//       CHECK:   %[[ME:.*]] = tensor.empty() : tensor<144x14xf32>
//       CHECK:   %[[MI:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[ME]] : tensor<144x14xf32>)
//       CHECK:   %[[EXTENT:.*]] = tensor.empty() : tensor<16xi8>
//       CHECK:   %[[BMAX:.*]] = linalg.generic {indexing_maps = [#[[$ELEM]], #[[$MN]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[EXTENT]] : tensor<16xi8>) outs(%[[MI]] : tensor<144x14xf32>)
//       CHECK:     tensor.extract %[[IM2COL]]
//       CHECK:     math.absf
//       CHECK:     arith.maxnumf
//       CHECK:   %[[Q:.*]] = linalg.generic {indexing_maps = [#[[$ID2]], #[[$BLOCK]], #[[$ID2]]], iterator_types = ["parallel", "parallel"]} ins(%[[IM2COL]], %[[BMAX]] : tensor<144x216xbf16>, tensor<144x14xf32>) outs(%[[QE]] : tensor<144x216xbf16>)
//       CHECK:     arith.divf %[[AMAX]], %{{.*}} : f32
//       CHECK:     math.roundeven
//       CHECK:     math.copysign
//       CHECK:     arith.truncf %{{.*}} : f32 to bf16
//       CHECK:   %[[WM:.*]] = tensor.collapse_shape %[[W]] {{\[}}[0], [1, 2, 3, 4]] : tensor<16x3x3x3x8xbf16> into tensor<16x216xbf16>
//       CHECK:   %[[ACC2D:.*]] = tensor.collapse_shape %[[ACC]] {{\[}}[0, 1, 2, 3], [4]] : tensor<1x4x6x6x16xf32> into tensor<144x16xf32>
//       CHECK:   %[[GEMM:.*]] = linalg.generic {indexing_maps = [#[[$MK]], #[[$NK]], #[[$MN]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[Q]], %[[WM]] : tensor<144x216xbf16>, tensor<16x216xbf16>) outs(%[[ACC2D]] : tensor<144x16xf32>)
//       CHECK:     arith.mulf
//       CHECK:     arith.addf
//       CHECK:   %[[OUT:.*]] = tensor.expand_shape %[[GEMM]] {{\[}}[0, 1, 2, 3], [4]] output_shape [1, 4, 6, 6, 16] : tensor<144x16xf32> into tensor<1x4x6x6x16xf32>
//       CHECK:   linalg.generic {{.*}} ins(%[[OUT]] : tensor<1x4x6x6x16xf32>) outs(%[[INIT]] : tensor<1x4x6x6x16xf32>)
func.func @conv_quantized_fqrsc(%x: tensor<1x4x6x6x8xbf16>, %w: tensor<16x3x3x3x8xbf16>,
                                %amax: f32, %init: tensor<1x4x6x6x16xf32>) -> tensor<1x4x6x6x16xf32> {
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xbf16>, tensor<16x3x3x3x8xbf16>)
         quantize(#conv3d.nvfp4<block_size = 16>, %amax)
         outs(%init : tensor<1x4x6x6x16xf32>) overwrite
         padding = [2, 0, 1, 1, 1, 1] filter_layout = fqrsc -> tensor<1x4x6x6x16xf32>
  return %0 : tensor<1x4x6x6x16xf32>
}

// -----

// QRSCF collapses to K x F, and the GEMM reads it as (k, f). Blocks of 32
// over K = 2*2*2*12 = 96: 3 per row.
// CHECK-DAG: #[[$KN:.*]] = affine_map<(d0, d1, d2) -> (d2, d1)>
// CHECK-DAG: #[[$BLOCK:.*]] = affine_map<(d0, d1) -> (d0, d1 floordiv 32)>
// CHECK-LABEL: func.func @conv_quantized_qrscf
//  CHECK-SAME:   %[[W:[^:]*]]: tensor<2x2x2x12x5xf32>
//       CHECK:   linalg.generic {{.*}} outs(%{{.*}} : tensor<27x96xf32>)
//       CHECK:   tensor.empty() : tensor<27x3xf32>
//       CHECK:   linalg.generic {{.*}} ins(%{{.*}} : tensor<32xi8>) outs(%{{.*}} : tensor<27x3xf32>)
//       CHECK:   linalg.generic {indexing_maps = [#{{.*}}, #[[$BLOCK]], #{{.*}}]
//       CHECK:   %[[WM:.*]] = tensor.collapse_shape %[[W]] {{\[}}[0, 1, 2, 3], [4]] : tensor<2x2x2x12x5xf32> into tensor<96x5xf32>
//       CHECK:   linalg.generic {indexing_maps = [#{{.*}}, #[[$KN]], #{{.*}}], iterator_types = ["parallel", "parallel", "reduction"]} ins(%{{.*}}, %[[WM]] : tensor<27x96xf32>, tensor<96x5xf32>) outs(%{{.*}} : tensor<27x5xf32>)
//       CHECK:   tensor.expand_shape {{.*}} output_shape [1, 3, 3, 3, 5] : tensor<27x5xf32> into tensor<1x3x3x3x5xf32>
func.func @conv_quantized_qrscf(%x: tensor<1x4x4x4x12xf32>, %w: tensor<2x2x2x12x5xf32>,
                                %amax: f32, %init: tensor<1x3x3x3x5xf32>) -> tensor<1x3x3x3x5xf32> {
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x4x4x12xf32>, tensor<2x2x2x12x5xf32>)
         quantize(#conv3d.nvfp4<block_size = 32>, %amax)
         outs(%init : tensor<1x3x3x3x5xf32>) overwrite -> tensor<1x3x3x3x5xf32>
  return %0 : tensor<1x3x3x3x5xf32>
}

//===----------------------------------------------------------------------===//
// conv3d.quantize
//===----------------------------------------------------------------------===//

// -----

// Activations, blocks of 16 along C = 40: 3 blocks per voxel (the last one
// reads zeros past the end); the block-max generic has the element loop as
// its reduction, the quantization generic indexes the maxima by c floordiv 16
// and writes into the destination.
// CHECK-DAG: #[[$ELEM:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d5)>
// CHECK-DAG: #[[$MAXOUT:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4)>
// CHECK-DAG: #[[$ID5:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
// CHECK-DAG: #[[$BLOCK:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4 floordiv 16)>
// CHECK-LABEL: func.func @quantize_channels
//  CHECK-SAME:   (%[[X:.*]]: tensor<2x3x4x5x40xbf16>, %[[AMAX:.*]]: f32, %[[E:.*]]: tensor<2x3x4x5x40xbf16>)
//   CHECK-DAG:   %[[C40:.*]] = arith.constant 40 : index
//       CHECK:   %[[ME:.*]] = tensor.empty() : tensor<2x3x4x5x3xf32>
//       CHECK:   %[[MI:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[ME]] : tensor<2x3x4x5x3xf32>)
//       CHECK:   %[[EXTENT:.*]] = tensor.empty() : tensor<16xi8>
//       CHECK:   %[[BMAX:.*]] = linalg.generic {indexing_maps = [#[[$ELEM]], #[[$MAXOUT]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[EXTENT]] : tensor<16xi8>) outs(%[[MI]] : tensor<2x3x4x5x3xf32>)
//       CHECK:     %[[VALID:.*]] = arith.cmpi ult, %{{.*}}, %[[C40]] : index
//       CHECK:     %[[V:.*]] = tensor.extract %[[X]]
//       CHECK:     arith.select %[[VALID]], %[[V]], %{{.*}} : bf16
//       CHECK:     math.absf
//       CHECK:     arith.maxnumf
//       CHECK:   %[[R:.*]] = linalg.generic {indexing_maps = [#[[$ID5]], #[[$BLOCK]], #[[$ID5]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%[[X]], %[[BMAX]] : tensor<2x3x4x5x40xbf16>, tensor<2x3x4x5x3xf32>) outs(%[[E]] : tensor<2x3x4x5x40xbf16>)
//       CHECK:     arith.divf %[[AMAX]]
//       CHECK:     math.roundeven
//       CHECK:     arith.truncf %{{.*}} : f32 to bf16
//       CHECK:   return %[[R]]
//   CHECK-NOT:   conv3d.quantize
func.func @quantize_channels(%x: tensor<2x3x4x5x40xbf16>, %amax: f32,
                             %e: tensor<2x3x4x5x40xbf16>) -> tensor<2x3x4x5x40xbf16> {
  %q = conv3d.quantize #conv3d.nvfp4<block_size = 16> axes = [4]
         ins(%x : tensor<2x3x4x5x40xbf16>) amax(%amax)
         outs(%e : tensor<2x3x4x5x40xbf16>) -> tensor<2x3x4x5x40xbf16>
  return %q : tensor<2x3x4x5x40xbf16>
}

// -----

// A QRSCF filter in K order per output channel: blocks run along the
// flattening of (q, r, s, c); 216 / 32 -> 7 blocks for each of the 16 f.
// CHECK-DAG: #[[$BLOCK:.*]] = affine_map<(d0, d1, d2, d3, d4) -> ((((d0 * 3 + d1) * 3 + d2) * 8 + d3) floordiv 32, d4)>
// CHECK-LABEL: func.func @quantize_filter_qrscf
//       CHECK:   tensor.empty() : tensor<7x16xf32>
//       CHECK:   %[[BMAX:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%{{.*}} : tensor<32xi8>) outs(%{{.*}} : tensor<7x16xf32>)
//       CHECK:   linalg.generic {indexing_maps = [#{{.*}}, #[[$BLOCK]], #{{.*}}], {{.*}} ins(%{{.*}}, %[[BMAX]] : tensor<3x3x3x8x16xf32>, tensor<7x16xf32>)
//   CHECK-NOT:     arith.truncf
//       CHECK:     linalg.yield
func.func @quantize_filter_qrscf(%w: tensor<3x3x3x8x16xf32>, %amax: f32,
                                 %e: tensor<3x3x3x8x16xf32>) -> tensor<3x3x3x8x16xf32> {
  %q = conv3d.quantize #conv3d.nvfp4<block_size = 32> axes = [0, 1, 2, 3]
         ins(%w : tensor<3x3x3x8x16xf32>) amax(%amax)
         outs(%e : tensor<3x3x3x8x16xf32>) -> tensor<3x3x3x8x16xf32>
  return %q : tensor<3x3x3x8x16xf32>
}

//===----------------------------------------------------------------------===//
// conv3d.epilogue
//===----------------------------------------------------------------------===//

// -----

// `overwrite`: a single elementwise generic over the sum (relu, cast).
// CHECK-LABEL: func.func @epilogue_overwrite_relu
//  CHECK-SAME:   (%[[SUM:.*]]: tensor<1x4x6x6x16xf32>, %[[O:.*]]: tensor<1x4x6x6x16xf16>)
//       CHECK:   %[[R:.*]] = linalg.generic {{.*}} ins(%[[SUM]] : tensor<1x4x6x6x16xf32>) outs(%[[O]] : tensor<1x4x6x6x16xf16>)
//       CHECK:     %[[RELU:.*]] = arith.maximumf %{{.*}}, %{{.*}} : f32
//       CHECK:     arith.truncf %[[RELU]] : f32 to f16
//   CHECK-NOT:   linalg.generic
//       CHECK:   return %[[R]]
func.func @epilogue_overwrite_relu(%sum: tensor<1x4x6x6x16xf32>,
                                   %o: tensor<1x4x6x6x16xf16>) -> tensor<1x4x6x6x16xf16> {
  %y = conv3d.epilogue ins(%sum : tensor<1x4x6x6x16xf32>)
         outs(%o : tensor<1x4x6x6x16xf16>) overwrite activation = relu
         -> tensor<1x4x6x6x16xf16>
  return %y : tensor<1x4x6x6x16xf16>
}

// -----

// Without `overwrite` the destination is added first, in f32: widen it,
// add the sum, then the epilogue (bias, silu, residual, cast).
// CHECK-LABEL: func.func @epilogue_accumulate
//  CHECK-SAME:   (%[[SUM:.*]]: tensor<1x4x6x6x16xf32>, %[[B:.*]]: tensor<16xf32>, %[[RES:.*]]: tensor<1x4x6x6x16xbf16>, %[[O:.*]]: tensor<1x4x6x6x16xbf16>)
//       CHECK:   %[[WIDE:.*]] = linalg.generic {{.*}} ins(%[[O]] : tensor<1x4x6x6x16xbf16>) outs(%{{.*}} : tensor<1x4x6x6x16xf32>)
//       CHECK:     arith.extf
//       CHECK:   %[[ACC:.*]] = linalg.generic {{.*}} ins(%[[SUM]], %[[WIDE]] : tensor<1x4x6x6x16xf32>, tensor<1x4x6x6x16xf32>) outs(%{{.*}} : tensor<1x4x6x6x16xf32>)
//       CHECK:     arith.addf
//       CHECK:   %[[R:.*]] = linalg.generic {{.*}} ins(%[[ACC]], %[[B]], %[[RES]] : tensor<1x4x6x6x16xf32>, tensor<16xf32>, tensor<1x4x6x6x16xbf16>) outs(%[[O]] : tensor<1x4x6x6x16xbf16>)
//       CHECK:     math.exp
//       CHECK:     arith.truncf
//       CHECK:   return %[[R]]
func.func @epilogue_accumulate(%sum: tensor<1x4x6x6x16xf32>, %b: tensor<16xf32>,
                               %r: tensor<1x4x6x6x16xbf16>,
                               %o: tensor<1x4x6x6x16xbf16>) -> tensor<1x4x6x6x16xbf16> {
  %y = conv3d.epilogue ins(%sum : tensor<1x4x6x6x16xf32>) bias(%b : tensor<16xf32>)
         residual(%r : tensor<1x4x6x6x16xbf16>) outs(%o : tensor<1x4x6x6x16xbf16>)
         activation = silu -> tensor<1x4x6x6x16xbf16>
  return %y : tensor<1x4x6x6x16xbf16>
}

// -----

// gelu_tanh goes through math.tanh.
// CHECK-LABEL: func.func @epilogue_gelu
//       CHECK:   linalg.generic
//       CHECK:     math.tanh
//       CHECK:     linalg.yield %{{.*}} : f32
func.func @epilogue_gelu(%sum: tensor<1x2x2x2x4xf32>,
                         %o: tensor<1x2x2x2x4xf32>) -> tensor<1x2x2x2x4xf32> {
  %y = conv3d.epilogue ins(%sum : tensor<1x2x2x2x4xf32>)
         outs(%o : tensor<1x2x2x2x4xf32>) overwrite activation = gelu_tanh
         -> tensor<1x2x2x2x4xf32>
  return %y : tensor<1x2x2x2x4xf32>
}
