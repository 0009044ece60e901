// conv3d.conv with a packed real NVFP4 filter (filter_quant): round trips
// through the custom and generic forms and bytecode, and tiling slices the
// filter's scales along F with its codes.
//
// RUN: conv3d-opt %s | conv3d-opt | FileCheck %s
// RUN: conv3d-opt %s --mlir-print-op-generic | conv3d-opt | FileCheck %s
// RUN: conv3d-opt %s -emit-bytecode | conv3d-opt | FileCheck %s

// CHECK-LABEL: func.func @packed_filter
//  CHECK-SAME:   (%[[X:.*]]: tensor<1x4x6x6x64xbf16>, %[[W:.*]]: tensor<32x3x3x3x32xi8>, %[[S:.*]]: tensor<32x3x3x3x4xi8>, %[[A:.*]]: f32, %[[WA:.*]]: f32, %[[I:.*]]: tensor<1x2x4x4x32xf32>)
//       CHECK:   conv3d.conv ins(%[[X]], %[[W]] : tensor<1x4x6x6x64xbf16>, tensor<32x3x3x3x32xi8>)
//  CHECK-SAME:     quantize(#conv3d.nvfp4<block_size = 16>, %[[A]])
//  CHECK-SAME:     filter_quant(#conv3d.nvfp4<block_size = 16>, %[[S]] : tensor<32x3x3x3x4xi8>, %[[WA]])
//  CHECK-SAME:     outs(%[[I]] : tensor<1x2x4x4x32xf32>) overwrite
//  CHECK-SAME:     filter_layout = fqrsc
func.func @packed_filter(%x: tensor<1x4x6x6x64xbf16>, %w: tensor<32x3x3x3x32xi8>,
                         %s: tensor<32x3x3x3x4xi8>, %amax: f32, %wamax: f32,
                         %init: tensor<1x2x4x4x32xf32>) -> tensor<1x2x4x4x32xf32> {
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x64xbf16>, tensor<32x3x3x3x32xi8>)
         quantize(#conv3d.nvfp4<block_size = 16>, %amax)
         filter_quant(#conv3d.nvfp4<block_size = 16>, %s : tensor<32x3x3x3x4xi8>, %wamax)
         outs(%init : tensor<1x2x4x4x32xf32>) overwrite filter_layout = fqrsc
         -> tensor<1x2x4x4x32xf32>
  return %0 : tensor<1x2x4x4x32xf32>
}

// CHECK-LABEL: func.func @packed_filter_memref
//       CHECK:   conv3d.conv ins(%{{.*}}, %{{.*}} : memref<1x4x6x6x32xf16>, memref<16x1x3x3x16xi8>)
//  CHECK-SAME:     filter_quant(#conv3d.nvfp4<block_size = 16>, %{{.*}} : memref<16x1x3x3x2xi8>, %{{.*}})
func.func @packed_filter_memref(%x: memref<1x4x6x6x32xf16>, %w: memref<16x1x3x3x16xi8>,
                                %s: memref<16x1x3x3x2xi8>, %wamax: f32,
                                %init: memref<1x4x4x4x16xf16>) {
  conv3d.conv ins(%x, %w : memref<1x4x6x6x32xf16>, memref<16x1x3x3x16xi8>)
    filter_quant(#conv3d.nvfp4<block_size = 16>, %s : memref<16x1x3x3x2xi8>, %wamax)
    outs(%init : memref<1x4x4x4x16xf16>) overwrite filter_layout = fqrsc
  return
}
