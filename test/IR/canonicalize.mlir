// FoldFillIntoConvInit: a conv3d.conv whose destination is a zero linalg.fill
// (or any fill, when the destination is not read because of `overwrite`)
// writes into the fill's destination with `overwrite`.
//
// RUN: conv3d-opt %s -canonicalize | FileCheck %s

// CHECK-LABEL: func.func @zero_fill_of_empty
//  CHECK-SAME:   (%[[X:.*]]: tensor<1x4x6x6x8xbf16>, %[[W:.*]]: tensor<1x3x3x8x16xbf16>)
//   CHECK-NOT:   linalg.fill
//       CHECK:   %[[E:.*]] = tensor.empty() : tensor<1x4x4x4x16xf32>
//   CHECK-NOT:   linalg.fill
//       CHECK:   %[[R:.*]] = conv3d.conv ins(%[[X]], %[[W]] : tensor<1x4x6x6x8xbf16>, tensor<1x3x3x8x16xbf16>) outs(%[[E]] : tensor<1x4x4x4x16xf32>) overwrite -> tensor<1x4x4x4x16xf32>{{$}}
//  CHECK-NEXT:   return %[[R]]
func.func @zero_fill_of_empty(%x: tensor<1x4x6x6x8xbf16>, %w: tensor<1x3x3x8x16xbf16>) -> tensor<1x4x4x4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<1x4x4x4x16xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%empty : tensor<1x4x4x4x16xf32>) -> tensor<1x4x4x4x16xf32>
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xbf16>, tensor<1x3x3x8x16xbf16>) outs(%fill : tensor<1x4x4x4x16xf32>) -> tensor<1x4x4x4x16xf32>
  return %0 : tensor<1x4x4x4x16xf32>
}

// The other parts of the op are kept; a negative zero is a zero too.
// CHECK-LABEL: func.func @zero_fill_keeps_attributes
//  CHECK-SAME:   (%[[X:.*]]: tensor<1x4x6x6x8xf16>, %[[W:.*]]: tensor<16x3x3x3x8xf16>, %[[B:.*]]: tensor<16xf32>, %[[AMAX:.*]]: f32)
//   CHECK-NOT:   linalg.fill
//       CHECK:   %[[E:.*]] = tensor.empty() : tensor<1x4x4x4x16xf16>
//   CHECK-NOT:   linalg.fill
//       CHECK:   conv3d.conv ins(%[[X]], %[[W]] : tensor<1x4x6x6x8xf16>, tensor<16x3x3x3x8xf16>) bias(%[[B]] : tensor<16xf32>) quantize(#conv3d.nvfp4<block_size = 16>, %[[AMAX]]) outs(%[[E]] : tensor<1x4x4x4x16xf16>) overwrite padding = [2, 0, 0, 0, 0, 0] filter_layout = fqrsc activation = silu config = #conv3d.igemm_config<tile_m = 64, tile_n = 16, tile_k = 32> -> tensor<1x4x4x4x16xf16>{{$}}
func.func @zero_fill_keeps_attributes(%x: tensor<1x4x6x6x8xf16>, %w: tensor<16x3x3x3x8xf16>, %bias: tensor<16xf32>, %amax: f32) -> tensor<1x4x4x4x16xf16> {
  %zero = arith.constant -0.0 : f16
  %empty = tensor.empty() : tensor<1x4x4x4x16xf16>
  %fill = linalg.fill ins(%zero : f16) outs(%empty : tensor<1x4x4x4x16xf16>) -> tensor<1x4x4x4x16xf16>
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf16>, tensor<16x3x3x3x8xf16>) bias(%bias : tensor<16xf32>) quantize(#conv3d.nvfp4<block_size = 16>, %amax) outs(%fill : tensor<1x4x4x4x16xf16>) padding = [2, 0, 0, 0, 0, 0] filter_layout = fqrsc activation = silu config = #conv3d.igemm_config<tile_m = 64, tile_n = 16, tile_k = 32> -> tensor<1x4x4x4x16xf16>
  return %0 : tensor<1x4x4x4x16xf16>
}

// The fill's destination need not be a tensor.empty.
// CHECK-LABEL: func.func @zero_fill_of_argument
//  CHECK-SAME:   (%[[X:.*]]: tensor<1x4x6x6x8xf32>, %[[W:.*]]: tensor<1x3x3x8x16xf32>, %[[D:.*]]: tensor<1x4x4x4x16xf32>)
//   CHECK-NOT:   linalg.fill
//       CHECK:   conv3d.conv ins(%[[X]], %[[W]] : {{.*}}) outs(%[[D]] : tensor<1x4x4x4x16xf32>) overwrite -> tensor<1x4x4x4x16xf32>{{$}}
func.func @zero_fill_of_argument(%x: tensor<1x4x6x6x8xf32>, %w: tensor<1x3x3x8x16xf32>, %dest: tensor<1x4x4x4x16xf32>) -> tensor<1x4x4x4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %fill = linalg.fill ins(%zero : f32) outs(%dest : tensor<1x4x4x4x16xf32>) -> tensor<1x4x4x4x16xf32>
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf32>, tensor<1x3x3x8x16xf32>) outs(%fill : tensor<1x4x4x4x16xf32>) -> tensor<1x4x4x4x16xf32>
  return %0 : tensor<1x4x4x4x16xf32>
}

// A nonzero fill is the initial value of the accumulation: it stays.
// CHECK-LABEL: func.func @nonzero_fill_not_folded
//       CHECK:   %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
//       CHECK:   %[[E:.*]] = tensor.empty() : tensor<1x4x4x4x16xf32>
//       CHECK:   %[[F:.*]] = linalg.fill ins(%[[ONE]] : f32) outs(%[[E]] : tensor<1x4x4x4x16xf32>)
//       CHECK:   conv3d.conv ins(%{{.*}}, %{{.*}} : {{.*}}) outs(%[[F]] : tensor<1x4x4x4x16xf32>) -> tensor<1x4x4x4x16xf32>{{$}}
func.func @nonzero_fill_not_folded(%x: tensor<1x4x6x6x8xf32>, %w: tensor<1x3x3x8x16xf32>) -> tensor<1x4x4x4x16xf32> {
  %one = arith.constant 1.0 : f32
  %empty = tensor.empty() : tensor<1x4x4x4x16xf32>
  %fill = linalg.fill ins(%one : f32) outs(%empty : tensor<1x4x4x4x16xf32>) -> tensor<1x4x4x4x16xf32>
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf32>, tensor<1x3x3x8x16xf32>) outs(%fill : tensor<1x4x4x4x16xf32>) -> tensor<1x4x4x4x16xf32>
  return %0 : tensor<1x4x4x4x16xf32>
}

// A fill value unknown at compile time is not folded either.
// CHECK-LABEL: func.func @unknown_fill_not_folded
//  CHECK-SAME:   (%[[X:.*]]: tensor<1x4x6x6x8xf32>, %[[W:.*]]: tensor<1x3x3x8x16xf32>, %[[V:.*]]: f32)
//       CHECK:   %[[F:.*]] = linalg.fill ins(%[[V]] : f32)
//       CHECK:   conv3d.conv ins(%[[X]], %[[W]] : {{.*}}) outs(%[[F]] : tensor<1x4x4x4x16xf32>) -> tensor<1x4x4x4x16xf32>{{$}}
func.func @unknown_fill_not_folded(%x: tensor<1x4x6x6x8xf32>, %w: tensor<1x3x3x8x16xf32>, %v: f32) -> tensor<1x4x4x4x16xf32> {
  %empty = tensor.empty() : tensor<1x4x4x4x16xf32>
  %fill = linalg.fill ins(%v : f32) outs(%empty : tensor<1x4x4x4x16xf32>) -> tensor<1x4x4x4x16xf32>
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf32>, tensor<1x3x3x8x16xf32>) outs(%fill : tensor<1x4x4x4x16xf32>) -> tensor<1x4x4x4x16xf32>
  return %0 : tensor<1x4x4x4x16xf32>
}

// With `overwrite`, the destination's contents are never read: any fill goes.
// CHECK-LABEL: func.func @nonzero_fill_with_overwrite
//  CHECK-SAME:   (%[[X:.*]]: tensor<1x4x6x6x8xf32>, %[[W:.*]]: tensor<1x3x3x8x16xf32>, %[[V:.*]]: f32)
//   CHECK-NOT:   linalg.fill
//   CHECK-NOT:   arith.constant
//       CHECK:   %[[E:.*]] = tensor.empty() : tensor<1x4x4x4x16xf32>
//   CHECK-NOT:   linalg.fill
//       CHECK:   %[[R0:.*]] = conv3d.conv ins(%[[X]], %[[W]] : {{.*}}) outs(%[[E]] : tensor<1x4x4x4x16xf32>) overwrite activation = relu -> tensor<1x4x4x4x16xf32>{{$}}
//   CHECK-NOT:   linalg.fill
//       CHECK:   %[[R1:.*]] = conv3d.conv ins(%[[X]], %[[W]] : {{.*}}) outs(%[[E]] : tensor<1x4x4x4x16xf32>) overwrite -> tensor<1x4x4x4x16xf32>{{$}}
//       CHECK:   return %[[R0]], %[[R1]]
func.func @nonzero_fill_with_overwrite(%x: tensor<1x4x6x6x8xf32>, %w: tensor<1x3x3x8x16xf32>, %v: f32) -> (tensor<1x4x4x4x16xf32>, tensor<1x4x4x4x16xf32>) {
  %one = arith.constant 1.0 : f32
  %empty = tensor.empty() : tensor<1x4x4x4x16xf32>
  %fill = linalg.fill ins(%one : f32) outs(%empty : tensor<1x4x4x4x16xf32>) -> tensor<1x4x4x4x16xf32>
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf32>, tensor<1x3x3x8x16xf32>) outs(%fill : tensor<1x4x4x4x16xf32>) overwrite activation = relu -> tensor<1x4x4x4x16xf32>
  %fill2 = linalg.fill ins(%v : f32) outs(%empty : tensor<1x4x4x4x16xf32>) -> tensor<1x4x4x4x16xf32>
  %1 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf32>, tensor<1x3x3x8x16xf32>) outs(%fill2 : tensor<1x4x4x4x16xf32>) overwrite -> tensor<1x4x4x4x16xf32>
  return %0, %1 : tensor<1x4x4x4x16xf32>, tensor<1x4x4x4x16xf32>
}

// A fill with another user stays for that user.
// CHECK-LABEL: func.func @fill_with_other_use
//       CHECK:   %[[E:.*]] = tensor.empty() : tensor<1x4x4x4x16xf32>
//       CHECK:   %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : tensor<1x4x4x4x16xf32>)
//       CHECK:   %[[R:.*]] = conv3d.conv ins(%{{.*}}, %{{.*}} : {{.*}}) outs(%[[E]] : tensor<1x4x4x4x16xf32>) overwrite -> tensor<1x4x4x4x16xf32>{{$}}
//       CHECK:   return %[[R]], %[[F]]
func.func @fill_with_other_use(%x: tensor<1x4x6x6x8xf32>, %w: tensor<1x3x3x8x16xf32>) -> (tensor<1x4x4x4x16xf32>, tensor<1x4x4x4x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<1x4x4x4x16xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%empty : tensor<1x4x4x4x16xf32>) -> tensor<1x4x4x4x16xf32>
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf32>, tensor<1x3x3x8x16xf32>) outs(%fill : tensor<1x4x4x4x16xf32>) -> tensor<1x4x4x4x16xf32>
  return %0, %fill : tensor<1x4x4x4x16xf32>, tensor<1x4x4x4x16xf32>
}

// The memref form is left alone: the fill is a separate write.
// CHECK-LABEL: func.func @memref_not_folded
//       CHECK:   linalg.fill ins(%{{.*}} : f32) outs(%[[O:.*]] : memref<1x4x4x4x16xf32>)
//       CHECK:   conv3d.conv ins(%{{.*}}, %{{.*}} : {{.*}}) outs(%[[O]] : memref<1x4x4x4x16xf32>){{$}}
func.func @memref_not_folded(%x: memref<1x4x6x6x8xf32>, %w: memref<1x3x3x8x16xf32>, %out: memref<1x4x4x4x16xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%out : memref<1x4x4x4x16xf32>)
  conv3d.conv ins(%x, %w : memref<1x4x6x6x8xf32>, memref<1x3x3x8x16xf32>) outs(%out : memref<1x4x4x4x16xf32>)
  return
}
