// Parse/print round trips of every conv3d op, in the custom form and through
// the generic form and bytecode. Default-valued attributes are elided when
// printed.
//
// RUN: conv3d-opt %s | conv3d-opt | FileCheck %s
// RUN: conv3d-opt %s --mlir-print-op-generic | conv3d-opt | FileCheck %s
// RUN: conv3d-opt %s -emit-bytecode | conv3d-opt | FileCheck %s
// RUN: conv3d-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

//===----------------------------------------------------------------------===//
// conv3d.conv
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @conv_minimal
//  CHECK-SAME:   (%[[X:.*]]: tensor<1x4x6x6x8xf32>, %[[W:.*]]: tensor<1x3x3x8x16xf32>, %[[I:.*]]: tensor<1x4x4x4x16xf32>)
//       CHECK:   %[[R:.*]] = conv3d.conv ins(%[[X]], %[[W]] : tensor<1x4x6x6x8xf32>, tensor<1x3x3x8x16xf32>) outs(%[[I]] : tensor<1x4x4x4x16xf32>) -> tensor<1x4x4x4x16xf32>{{$}}
//       CHECK:   return %[[R]]
// GENERIC-LABEL: sym_name = "conv_minimal"
//       GENERIC: "conv3d.conv"(%{{.*}}, %{{.*}}, %{{.*}}) <{activation = #conv3d<activation none>, dilations = array<i64: 1, 1, 1>, filter_layout = #conv3d<filter_layout qrscf>, groups = 1 : i64, input_activation = #conv3d<activation none>, operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0>, padding = array<i64: 0, 0, 0, 0, 0, 0>, strides = array<i64: 1, 1, 1>}> : (tensor<1x4x6x6x8xf32>, tensor<1x3x3x8x16xf32>, tensor<1x4x4x4x16xf32>) -> tensor<1x4x4x4x16xf32>
func.func @conv_minimal(%x: tensor<1x4x6x6x8xf32>, %w: tensor<1x3x3x8x16xf32>,
                        %init: tensor<1x4x4x4x16xf32>) -> tensor<1x4x4x4x16xf32> {
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf32>, tensor<1x3x3x8x16xf32>)
         outs(%init : tensor<1x4x4x4x16xf32>) -> tensor<1x4x4x4x16xf32>
  return %0 : tensor<1x4x4x4x16xf32>
}

// Every optional part: bias, residual, quantization, overwrite, strides,
// dilations, padding, FQRSC filter, activation and a config with every
// parameter set to a non-default value.
// CHECK-LABEL: func.func @conv_everything
//  CHECK-SAME:   (%[[X:.*]]: tensor<2x9x18x18x32xbf16>, %[[W:.*]]: tensor<64x3x3x3x32xbf16>, %[[B:.*]]: tensor<64xf32>, %[[RES:.*]]: tensor<2x7x9x9x64xbf16>, %[[AMAX:.*]]: f32, %[[I:.*]]: tensor<2x7x9x9x64xbf16>)
//       CHECK:   conv3d.conv ins(%[[X]], %[[W]] : tensor<2x9x18x18x32xbf16>, tensor<64x3x3x3x32xbf16>)
//  CHECK-SAME:     bias(%[[B]] : tensor<64xf32>) residual(%[[RES]] : tensor<2x7x9x9x64xbf16>)
//  CHECK-SAME:     quantize(#conv3d.nvfp4<block_size = 32>, %[[AMAX]])
//  CHECK-SAME:     outs(%[[I]] : tensor<2x7x9x9x64xbf16>) overwrite
//  CHECK-SAME:     strides = [1, 2, 2] dilations = [2, 1, 1] padding = [2, 0, 1, 1, 1, 1]
//  CHECK-SAME:     filter_layout = fqrsc activation = relu
//  CHECK-SAME:     config = #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 3, warps_m = 4, warps_n = 2, k_order = qslice_outer, split_k = 2>
//  CHECK-SAME:     -> tensor<2x7x9x9x64xbf16>{{$}}
// GENERIC-LABEL: sym_name = "conv_everything"
//       GENERIC: "conv3d.conv"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{activation = #conv3d<activation relu>, config = #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 3, warps_m = 4, warps_n = 2, k_order = qslice_outer, split_k = 2>, dilations = array<i64: 2, 1, 1>, filter_layout = #conv3d<filter_layout fqrsc>, groups = 1 : i64, input_activation = #conv3d<activation none>, input_quant = #conv3d.nvfp4<block_size = 32>, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0>, overwrite, padding = array<i64: 2, 0, 1, 1, 1, 1>, strides = array<i64: 1, 2, 2>}>
func.func @conv_everything(%x: tensor<2x9x18x18x32xbf16>,
                           %w: tensor<64x3x3x3x32xbf16>, %bias: tensor<64xf32>,
                           %res: tensor<2x7x9x9x64xbf16>, %amax: f32,
                           %init: tensor<2x7x9x9x64xbf16>)
    -> tensor<2x7x9x9x64xbf16> {
  %0 = conv3d.conv ins(%x, %w : tensor<2x9x18x18x32xbf16>,
                                tensor<64x3x3x3x32xbf16>)
         bias(%bias : tensor<64xf32>)
         residual(%res : tensor<2x7x9x9x64xbf16>)
         quantize(#conv3d.nvfp4<block_size = 32>, %amax)
         outs(%init : tensor<2x7x9x9x64xbf16>) overwrite
         strides = [1, 2, 2] dilations = [2, 1, 1]
         padding = [2, 0, 1, 1, 1, 1] filter_layout = fqrsc activation = relu
         config = #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64,
                                       stages = 3, warps_m = 4, warps_n = 2,
                                       k_order = qslice_outer, split_k = 2>
         -> tensor<2x7x9x9x64xbf16>
  return %0 : tensor<2x7x9x9x64xbf16>
}

// Attributes spelled out with their default values are elided when printed;
// so are the default parameters of the config.
// CHECK-LABEL: func.func @conv_defaults_elided
//       CHECK:   conv3d.conv ins(%{{.*}}, %{{.*}} : tensor<1x4x6x6x8xf32>, tensor<1x3x3x8x16xf32>) outs(%{{.*}} : tensor<1x4x4x4x16xf32>) config = #conv3d.igemm_config<tile_m = 64, tile_n = 16, tile_k = 8> -> tensor<1x4x4x4x16xf32>{{$}}
func.func @conv_defaults_elided(%x: tensor<1x4x6x6x8xf32>,
                                %w: tensor<1x3x3x8x16xf32>,
                                %init: tensor<1x4x4x4x16xf32>)
    -> tensor<1x4x4x4x16xf32> {
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf32>, tensor<1x3x3x8x16xf32>)
         outs(%init : tensor<1x4x4x4x16xf32>)
         strides = [1, 1, 1] dilations = [1, 1, 1]
         padding = [0, 0, 0, 0, 0, 0] filter_layout = qrscf activation = none
         config = #conv3d.igemm_config<tile_m = 64, tile_n = 16, tile_k = 8,
                                       stages = 1, warps_m = 1, warps_n = 1,
                                       k_order = taps_outer, split_k = 1>
         -> tensor<1x4x4x4x16xf32>
  return %0 : tensor<1x4x4x4x16xf32>
}

// CHECK-LABEL: func.func @conv_activations
//       CHECK:   conv3d.conv {{.*}} outs(%{{.*}} : tensor<1x4x4x4x16xf16>) activation = silu -> tensor<1x4x4x4x16xf16>{{$}}
//       CHECK:   conv3d.conv {{.*}} outs(%{{.*}} : tensor<1x4x4x4x16xf16>) overwrite activation = gelu_tanh -> tensor<1x4x4x4x16xf16>{{$}}
func.func @conv_activations(%x: tensor<1x4x6x6x8xf16>, %w: tensor<1x3x3x8x16xf16>,
                            %init: tensor<1x4x4x4x16xf16>)
    -> tensor<1x4x4x4x16xf16> {
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf16>, tensor<1x3x3x8x16xf16>)
         outs(%init : tensor<1x4x4x4x16xf16>) activation = silu
         -> tensor<1x4x4x4x16xf16>
  %1 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf16>, tensor<1x3x3x8x16xf16>)
         outs(%0 : tensor<1x4x4x4x16xf16>) overwrite activation = gelu_tanh
         -> tensor<1x4x4x4x16xf16>
  return %1 : tensor<1x4x4x4x16xf16>
}

// bf16 operands accumulated into an f32 destination.
// CHECK-LABEL: func.func @conv_f32_accumulator
//       CHECK:   conv3d.conv ins(%{{.*}}, %{{.*}} : tensor<1x4x6x6x8xbf16>, tensor<1x3x3x8x16xbf16>) bias(%{{.*}} : tensor<16xf32>) outs(%{{.*}} : tensor<1x4x4x4x16xf32>) -> tensor<1x4x4x4x16xf32>{{$}}
func.func @conv_f32_accumulator(%x: tensor<1x4x6x6x8xbf16>,
                                %w: tensor<1x3x3x8x16xbf16>,
                                %bias: tensor<16xf32>,
                                %init: tensor<1x4x4x4x16xf32>)
    -> tensor<1x4x4x4x16xf32> {
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xbf16>,
                                tensor<1x3x3x8x16xbf16>)
         bias(%bias : tensor<16xf32>)
         outs(%init : tensor<1x4x4x4x16xf32>) -> tensor<1x4x4x4x16xf32>
  return %0 : tensor<1x4x4x4x16xf32>
}

// Dynamic batch and spatial sizes.
// CHECK-LABEL: func.func @conv_dynamic
//       CHECK:   conv3d.conv ins(%{{.*}}, %{{.*}} : tensor<?x?x?x?x8xf32>, tensor<3x3x3x8x16xf32>) residual(%{{.*}} : tensor<?x?x?x?x16xf32>) outs(%{{.*}} : tensor<?x?x?x?x16xf32>) padding = [2, 0, 1, 1, 1, 1] -> tensor<?x?x?x?x16xf32>{{$}}
func.func @conv_dynamic(%x: tensor<?x?x?x?x8xf32>, %w: tensor<3x3x3x8x16xf32>,
                        %res: tensor<?x?x?x?x16xf32>,
                        %init: tensor<?x?x?x?x16xf32>)
    -> tensor<?x?x?x?x16xf32> {
  %0 = conv3d.conv ins(%x, %w : tensor<?x?x?x?x8xf32>, tensor<3x3x3x8x16xf32>)
         residual(%res : tensor<?x?x?x?x16xf32>)
         outs(%init : tensor<?x?x?x?x16xf32>) padding = [2, 0, 1, 1, 1, 1]
         -> tensor<?x?x?x?x16xf32>
  return %0 : tensor<?x?x?x?x16xf32>
}

// Memref form: no result.
// CHECK-LABEL: func.func @conv_memref
//  CHECK-SAME:   (%[[X:.*]]: memref<2x9x18x18x32xbf16>, %[[W:.*]]: memref<64x3x3x3x32xbf16>, %[[B:.*]]: memref<64xf32>, %[[RES:.*]]: memref<2x7x9x9x64xf32>, %[[AMAX:.*]]: f32, %[[I:.*]]: memref<2x7x9x9x64xf32>)
//       CHECK:   conv3d.conv ins(%[[X]], %[[W]] : memref<2x9x18x18x32xbf16>, memref<64x3x3x3x32xbf16>) bias(%[[B]] : memref<64xf32>) residual(%[[RES]] : memref<2x7x9x9x64xf32>) quantize(#conv3d.nvfp4<block_size = 16>, %[[AMAX]]) outs(%[[I]] : memref<2x7x9x9x64xf32>) overwrite strides = [1, 2, 2] dilations = [2, 1, 1] padding = [2, 0, 1, 1, 1, 1] filter_layout = fqrsc activation = gelu_tanh config = #conv3d.igemm_config<tile_m = 64, tile_n = 64, tile_k = 32>{{$}}
//  CHECK-NEXT:   return
func.func @conv_memref(%x: memref<2x9x18x18x32xbf16>,
                       %w: memref<64x3x3x3x32xbf16>, %bias: memref<64xf32>,
                       %res: memref<2x7x9x9x64xf32>, %amax: f32,
                       %init: memref<2x7x9x9x64xf32>) {
  conv3d.conv ins(%x, %w : memref<2x9x18x18x32xbf16>, memref<64x3x3x3x32xbf16>)
    bias(%bias : memref<64xf32>) residual(%res : memref<2x7x9x9x64xf32>)
    quantize(#conv3d.nvfp4<block_size = 16>, %amax)
    outs(%init : memref<2x7x9x9x64xf32>) overwrite
    strides = [1, 2, 2] dilations = [2, 1, 1] padding = [2, 0, 1, 1, 1, 1]
    filter_layout = fqrsc activation = gelu_tanh
    config = #conv3d.igemm_config<tile_m = 64, tile_n = 64, tile_k = 32>
  return
}

// Dynamic sizes on memrefs.
// CHECK-LABEL: func.func @conv_memref_dynamic
//       CHECK:   conv3d.conv ins(%{{.*}}, %{{.*}} : memref<?x?x?x?x8xf16>, memref<1x1x1x8x4xf16>) outs(%{{.*}} : memref<?x?x?x?x4xf32>){{$}}
func.func @conv_memref_dynamic(%x: memref<?x?x?x?x8xf16>,
                               %w: memref<1x1x1x8x4xf16>,
                               %init: memref<?x?x?x?x4xf32>) {
  conv3d.conv ins(%x, %w : memref<?x?x?x?x8xf16>, memref<1x1x1x8x4xf16>)
    outs(%init : memref<?x?x?x?x4xf32>)
  return
}

//===----------------------------------------------------------------------===//
// conv3d.quantize
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @quantize
//  CHECK-SAME:   (%[[X:.*]]: tensor<1x8x32x32x64xbf16>, %[[W:.*]]: tensor<3x3x3x64x32xf16>, %[[AMAX:.*]]: f32, %[[E:.*]]: tensor<1x8x32x32x64xbf16>, %[[EW:.*]]: tensor<3x3x3x64x32xf16>)
//       CHECK:   %[[Q:.*]] = conv3d.quantize #conv3d.nvfp4<block_size = 16> axes = [4] ins(%[[X]] : tensor<1x8x32x32x64xbf16>) amax(%[[AMAX]]) outs(%[[E]] : tensor<1x8x32x32x64xbf16>) -> tensor<1x8x32x32x64xbf16>{{$}}
//       CHECK:   %[[QW:.*]] = conv3d.quantize #conv3d.nvfp4<block_size = 256> axes = [0, 1, 2, 3] ins(%[[W]] : tensor<3x3x3x64x32xf16>) amax(%[[AMAX]]) outs(%[[EW]] : tensor<3x3x3x64x32xf16>) -> tensor<3x3x3x64x32xf16>{{$}}
//       CHECK:   return %[[Q]], %[[QW]]
// GENERIC-LABEL: sym_name = "quantize"
//       GENERIC: "conv3d.quantize"(%{{.*}}, %{{.*}}, %{{.*}}) <{block_axes = array<i64: 4>, format = #conv3d.nvfp4<block_size = 16>}> : (tensor<1x8x32x32x64xbf16>, f32, tensor<1x8x32x32x64xbf16>) -> tensor<1x8x32x32x64xbf16>
func.func @quantize(%x: tensor<1x8x32x32x64xbf16>, %w: tensor<3x3x3x64x32xf16>,
                    %amax: f32, %e: tensor<1x8x32x32x64xbf16>,
                    %ew: tensor<3x3x3x64x32xf16>)
    -> (tensor<1x8x32x32x64xbf16>, tensor<3x3x3x64x32xf16>) {
  %0 = conv3d.quantize #conv3d.nvfp4<block_size = 16> axes = [4]
         ins(%x : tensor<1x8x32x32x64xbf16>) amax(%amax)
         outs(%e : tensor<1x8x32x32x64xbf16>) -> tensor<1x8x32x32x64xbf16>
  %1 = conv3d.quantize #conv3d.nvfp4<block_size = 256> axes = [0, 1, 2, 3]
         ins(%w : tensor<3x3x3x64x32xf16>) amax(%amax)
         outs(%ew : tensor<3x3x3x64x32xf16>) -> tensor<3x3x3x64x32xf16>
  return %0, %1 : tensor<1x8x32x32x64xbf16>, tensor<3x3x3x64x32xf16>
}

// Any rank; dimensions outside the block axes may be dynamic.
// CHECK-LABEL: func.func @quantize_memref
//       CHECK:   conv3d.quantize #conv3d.nvfp4<block_size = 64> axes = [1, 2] ins(%{{.*}} : memref<?x4x32xf32>) amax(%{{.*}}) outs(%{{.*}} : memref<?x4x32xf32>){{$}}
//  CHECK-NEXT:   return
func.func @quantize_memref(%x: memref<?x4x32xf32>, %amax: f32,
                           %out: memref<?x4x32xf32>) {
  conv3d.quantize #conv3d.nvfp4<block_size = 64> axes = [1, 2]
    ins(%x : memref<?x4x32xf32>) amax(%amax) outs(%out : memref<?x4x32xf32>)
  return
}

//===----------------------------------------------------------------------===//
// conv3d.epilogue
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @epilogue
//  CHECK-SAME:   (%[[S:.*]]: tensor<1x8x8x8x32xf32>, %[[B:.*]]: tensor<32xf32>, %[[RES:.*]]: tensor<1x8x8x8x32xbf16>, %[[O:.*]]: tensor<1x8x8x8x32xbf16>)
//       CHECK:   %[[E0:.*]] = conv3d.epilogue ins(%[[S]] : tensor<1x8x8x8x32xf32>) outs(%[[O]] : tensor<1x8x8x8x32xbf16>) -> tensor<1x8x8x8x32xbf16>{{$}}
//       CHECK:   %[[E1:.*]] = conv3d.epilogue ins(%[[S]] : tensor<1x8x8x8x32xf32>) bias(%[[B]] : tensor<32xf32>) residual(%[[RES]] : tensor<1x8x8x8x32xbf16>) outs(%[[E0]] : tensor<1x8x8x8x32xbf16>) overwrite activation = silu -> tensor<1x8x8x8x32xbf16>{{$}}
//       CHECK:   return %[[E1]]
// GENERIC-LABEL: sym_name = "epilogue"
//       GENERIC: "conv3d.epilogue"(%{{.*}}, %{{.*}}) <{activation = #conv3d<activation none>, operandSegmentSizes = array<i32: 1, 0, 0, 1>}>
//       GENERIC: "conv3d.epilogue"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{activation = #conv3d<activation silu>, operandSegmentSizes = array<i32: 1, 1, 1, 1>, overwrite}>
func.func @epilogue(%sum: tensor<1x8x8x8x32xf32>, %bias: tensor<32xf32>,
                    %res: tensor<1x8x8x8x32xbf16>, %out: tensor<1x8x8x8x32xbf16>)
    -> tensor<1x8x8x8x32xbf16> {
  %0 = conv3d.epilogue ins(%sum : tensor<1x8x8x8x32xf32>)
         outs(%out : tensor<1x8x8x8x32xbf16>) -> tensor<1x8x8x8x32xbf16>
  %1 = conv3d.epilogue ins(%sum : tensor<1x8x8x8x32xf32>)
         bias(%bias : tensor<32xf32>) residual(%res : tensor<1x8x8x8x32xbf16>)
         outs(%0 : tensor<1x8x8x8x32xbf16>) overwrite activation = silu
         -> tensor<1x8x8x8x32xbf16>
  return %1 : tensor<1x8x8x8x32xbf16>
}

// CHECK-LABEL: func.func @epilogue_memref
//       CHECK:   conv3d.epilogue ins(%{{.*}} : memref<?x8x8x8x32xf32>) bias(%{{.*}} : memref<32xf16>) outs(%{{.*}} : memref<?x8x8x8x32xf16>) activation = gelu_tanh{{$}}
//  CHECK-NEXT:   return
func.func @epilogue_memref(%sum: memref<?x8x8x8x32xf32>, %bias: memref<32xf16>,
                           %out: memref<?x8x8x8x32xf16>) {
  conv3d.epilogue ins(%sum : memref<?x8x8x8x32xf32>) bias(%bias : memref<32xf16>)
    outs(%out : memref<?x8x8x8x32xf16>) activation = gelu_tanh
  return
}

//===----------------------------------------------------------------------===//
// Tile operations (memrefs only)
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @tile_ops
//  CHECK-SAME:   (%[[IN:.*]]: memref<1x10x32x32x96xbf16>, %[[W:.*]]: memref<3x3x3x96x96xbf16>, %[[WF:.*]]: memref<96x3x3x3x96xbf16>, %[[A:.*]]: memref<64x32xbf16>, %[[B:.*]]: memref<32x64xbf16>, %[[ACC:.*]]: memref<64x64xf32>, %[[OUT:.*]]: memref<1x8x32x32x96xbf16>, %[[OUT32:.*]]: memref<2x1x8x32x32x96xf32>, %[[BIAS:.*]]: memref<96xf32>, %[[RES:.*]]: memref<1x8x32x32x96xbf16>, %[[AMAX:.*]]: f32, %[[M0:.*]]: index, %[[K0:.*]]: index, %[[N0:.*]]: index, %[[K:.*]]: index)
//       CHECK:   conv3d.load_im2col_tile %[[IN]][%[[M0]], %[[K0]]] limit %[[K]] into %[[A]] window = [3, 3, 3] padding = [2, 0, 1, 1, 1, 1] : memref<1x10x32x32x96xbf16>, memref<64x32xbf16>{{$}}
//       CHECK:   conv3d.load_im2col_tile %[[IN]][%[[M0]], %[[K0]]] limit %[[K]] into %[[A]] quantize(#conv3d.nvfp4<block_size = 32>, %[[AMAX]]) window = [1, 3, 3] strides = [1, 2, 2] dilations = [1, 2, 2] : memref<1x10x32x32x96xbf16>, memref<64x32xbf16>{{$}}
//       CHECK:   conv3d.load_im2col_tile %[[IN]][%[[M0]], %[[K0]]] limit %[[K]] into %[[A]] window = [1, 1, 1] : memref<1x10x32x32x96xbf16>, memref<64x32xbf16>{{$}}
//       CHECK:   conv3d.load_filter_tile %[[W]][%[[K0]], %[[N0]]] limit %[[K]] into %[[B]] : memref<3x3x3x96x96xbf16>, memref<32x64xbf16>{{$}}
//       CHECK:   conv3d.load_filter_tile %[[WF]][%[[K0]], %[[N0]]] limit %[[K]] into %[[B]] filter_layout = fqrsc : memref<96x3x3x3x96xbf16>, memref<32x64xbf16>{{$}}
//       CHECK:   conv3d.tile_mma %[[A]], %[[B]], %[[ACC]] : memref<64x32xbf16>, memref<32x64xbf16>, memref<64x64xf32>{{$}}
//       CHECK:   conv3d.store_output_tile %[[ACC]] into %[[OUT]][%[[M0]], %[[N0]]] mode = overwrite : memref<64x64xf32>, memref<1x8x32x32x96xbf16>{{$}}
//       CHECK:   conv3d.store_output_tile %[[ACC]] into %[[OUT]][%[[M0]], %[[N0]]] bias(%[[BIAS]] : memref<96xf32>) residual(%[[RES]] : memref<1x8x32x32x96xbf16>) mode = overwrite activation = relu : memref<64x64xf32>, memref<1x8x32x32x96xbf16>{{$}}
//       CHECK:   conv3d.store_output_tile %[[ACC]] into %[[OUT]][%[[M0]], %[[N0]]] bias(%[[BIAS]] : memref<96xf32>) mode = accumulate activation = silu : memref<64x64xf32>, memref<1x8x32x32x96xbf16>{{$}}
//       CHECK:   conv3d.store_output_tile %[[ACC]] into %[[OUT32]][%[[M0]], %[[N0]]] split(%[[M0]]) mode = partial : memref<64x64xf32>, memref<2x1x8x32x32x96xf32>{{$}}
//  CHECK-NEXT:   return
// GENERIC-LABEL: sym_name = "tile_ops"
//       GENERIC: "conv3d.load_im2col_tile"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{dilations = array<i64: 1, 1, 1>, input_activation = #conv3d<activation none>, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 0, 0, 0>, padding = array<i64: 2, 0, 1, 1, 1, 1>, strides = array<i64: 1, 1, 1>, window = array<i64: 3, 3, 3>}>
//       GENERIC: "conv3d.load_im2col_tile"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{dilations = array<i64: 1, 2, 2>, input_activation = #conv3d<activation none>, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 0, 0, 0, 0>, padding = array<i64: 0, 0, 0, 0, 0, 0>, quant = #conv3d.nvfp4<block_size = 32>, strides = array<i64: 1, 2, 2>, window = array<i64: 1, 3, 3>}>
//       GENERIC: "conv3d.load_filter_tile"({{.*}}) <{filter_layout = #conv3d<filter_layout qrscf>}>
//       GENERIC: "conv3d.load_filter_tile"({{.*}}) <{filter_layout = #conv3d<filter_layout fqrsc>}>
//       GENERIC: "conv3d.tile_mma"({{.*}}) : (memref<64x32xbf16>, memref<32x64xbf16>, memref<64x64xf32>) -> ()
//       GENERIC: "conv3d.store_output_tile"({{.*}}) <{activation = #conv3d<activation none>, mode = #conv3d<store_mode overwrite>, operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0>}>
func.func @tile_ops(%in: memref<1x10x32x32x96xbf16>, %w: memref<3x3x3x96x96xbf16>,
                    %wf: memref<96x3x3x3x96xbf16>, %a: memref<64x32xbf16>,
                    %b: memref<32x64xbf16>, %acc: memref<64x64xf32>,
                    %out: memref<1x8x32x32x96xbf16>,
                    %out32: memref<2x1x8x32x32x96xf32>, %bias: memref<96xf32>,
                    %res: memref<1x8x32x32x96xbf16>, %amax: f32,
                    %m0: index, %k0: index, %n0: index, %k: index) {
  conv3d.load_im2col_tile %in[%m0, %k0] limit %k into %a
      window = [3, 3, 3] padding = [2, 0, 1, 1, 1, 1]
      : memref<1x10x32x32x96xbf16>, memref<64x32xbf16>
  conv3d.load_im2col_tile %in[%m0, %k0] limit %k into %a
      quantize(#conv3d.nvfp4<block_size = 32>, %amax)
      window = [1, 3, 3] strides = [1, 2, 2] dilations = [1, 2, 2]
      : memref<1x10x32x32x96xbf16>, memref<64x32xbf16>
  // Default strides, dilations and padding are elided.
  conv3d.load_im2col_tile %in[%m0, %k0] limit %k into %a
      window = [1, 1, 1] strides = [1, 1, 1] dilations = [1, 1, 1]
      padding = [0, 0, 0, 0, 0, 0]
      : memref<1x10x32x32x96xbf16>, memref<64x32xbf16>
  conv3d.load_filter_tile %w[%k0, %n0] limit %k into %b filter_layout = qrscf
      : memref<3x3x3x96x96xbf16>, memref<32x64xbf16>
  conv3d.load_filter_tile %wf[%k0, %n0] limit %k into %b filter_layout = fqrsc
      : memref<96x3x3x3x96xbf16>, memref<32x64xbf16>
  conv3d.tile_mma %a, %b, %acc
      : memref<64x32xbf16>, memref<32x64xbf16>, memref<64x64xf32>
  conv3d.store_output_tile %acc into %out[%m0, %n0] mode = overwrite
      activation = none : memref<64x64xf32>, memref<1x8x32x32x96xbf16>
  conv3d.store_output_tile %acc into %out[%m0, %n0]
      bias(%bias : memref<96xf32>) residual(%res : memref<1x8x32x32x96xbf16>)
      mode = overwrite activation = relu
      : memref<64x64xf32>, memref<1x8x32x32x96xbf16>
  conv3d.store_output_tile %acc into %out[%m0, %n0]
      bias(%bias : memref<96xf32>) mode = accumulate activation = silu
      : memref<64x64xf32>, memref<1x8x32x32x96xbf16>
  conv3d.store_output_tile %acc into %out32[%m0, %n0] split(%m0) mode = partial
      : memref<64x64xf32>, memref<2x1x8x32x32x96xf32>
  return
}

// Attributes on their own, outside any op.
// CHECK-LABEL: func.func private @attributes
//  CHECK-SAME:   attributes {config = #conv3d.igemm_config<tile_m = 256, tile_n = 128, tile_k = 64, stages = 8, warps_m = 8, warps_n = 4, split_k = 16>, nvfp4 = #conv3d.nvfp4<block_size = 128>}
func.func private @attributes() attributes {
  nvfp4 = #conv3d.nvfp4<block_size = 128>,
  config = #conv3d.igemm_config<tile_m = 256, tile_n = 128, tile_k = 64,
                                stages = 8, warps_m = 8, warps_n = 4,
                                split_k = 16>
}
