// One-shot bufferization of the destination-style ops: each becomes its
// memref form with the same attributes and writes into the buffer of its
// destination. A destination that is not read (`overwrite`, and always for
// conv3d.quantize) is not copied when a new buffer is needed.
//
// RUN: conv3d-opt %s -one-shot-bufferize="bufferize-function-boundaries" | FileCheck %s

// A tensor.empty destination becomes an allocation; every attribute and the
// amax operand are kept.
// CHECK-LABEL: func.func @conv_into_empty
//  CHECK-SAME:   (%[[X:[^:]+]]: memref<1x4x6x6x8xbf16, strided<[?, ?, ?, ?, ?], offset: ?>>, %[[W:[^:]+]]: memref<16x1x3x3x8xbf16, strided<[?, ?, ?, ?, ?], offset: ?>>, %[[B:[^:]+]]: memref<16xf32, strided<[?], offset: ?>>, %[[AMAX:[^:]+]]: f32)
//  CHECK-SAME:   -> memref<1x4x6x6x16xbf16>
//   CHECK-NOT:   memref.copy
//       CHECK:   %[[ALLOC:.*]] = memref.alloc() {{.*}}: memref<1x4x6x6x16xbf16>
//   CHECK-NOT:   memref.copy
//       CHECK:   conv3d.conv ins(%[[X]], %[[W]] : memref<1x4x6x6x8xbf16, strided<[?, ?, ?, ?, ?], offset: ?>>, memref<16x1x3x3x8xbf16, strided<[?, ?, ?, ?, ?], offset: ?>>) bias(%[[B]] : memref<16xf32, strided<[?], offset: ?>>) quantize(#conv3d.nvfp4<block_size = 16>, %[[AMAX]]) outs(%[[ALLOC]] : memref<1x4x6x6x16xbf16>) overwrite padding = [0, 0, 1, 1, 1, 1] filter_layout = fqrsc activation = silu config = #conv3d.igemm_config<tile_m = 64, tile_n = 16, tile_k = 16, stages = 2>{{$}}
//       CHECK:   return %[[ALLOC]]
func.func @conv_into_empty(%x: tensor<1x4x6x6x8xbf16>, %w: tensor<16x1x3x3x8xbf16>, %b: tensor<16xf32>, %amax: f32) -> tensor<1x4x6x6x16xbf16> {
  %e = tensor.empty() : tensor<1x4x6x6x16xbf16>
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xbf16>, tensor<16x1x3x3x8xbf16>) bias(%b : tensor<16xf32>) quantize(#conv3d.nvfp4<block_size = 16>, %amax) outs(%e : tensor<1x4x6x6x16xbf16>) overwrite padding = [0, 0, 1, 1, 1, 1] filter_layout = fqrsc activation = silu config = #conv3d.igemm_config<tile_m = 64, tile_n = 16, tile_k = 16, stages = 2> -> tensor<1x4x6x6x16xbf16>
  return %0 : tensor<1x4x6x6x16xbf16>
}

// The destination is a function argument not used afterwards: the conv
// accumulates into it in place.
// CHECK-LABEL: func.func @conv_in_place
//  CHECK-SAME:   (%[[X:[^:]+]]: memref<{{.*}}>, %[[W:[^:]+]]: memref<{{.*}}>, %[[I:[^:]+]]: memref<1x4x4x4x16xf32, strided<[?, ?, ?, ?, ?], offset: ?>>)
//   CHECK-NOT:   memref.alloc
//   CHECK-NOT:   memref.copy
//       CHECK:   conv3d.conv ins(%[[X]], %[[W]] : {{.*}}) outs(%[[I]] : memref<1x4x4x4x16xf32, strided<[?, ?, ?, ?, ?], offset: ?>>){{$}}
//  CHECK-NEXT:   return %[[I]]
func.func @conv_in_place(%x: tensor<1x4x6x6x8xf32>, %w: tensor<1x3x3x8x16xf32>, %init: tensor<1x4x4x4x16xf32>) -> tensor<1x4x4x4x16xf32> {
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf32>, tensor<1x3x3x8x16xf32>) outs(%init : tensor<1x4x4x4x16xf32>) -> tensor<1x4x4x4x16xf32>
  return %0 : tensor<1x4x4x4x16xf32>
}

// The destination is still needed after the conv, which accumulates onto it:
// the conv writes into a copy.
// CHECK-LABEL: func.func @conv_accumulate_copies
//  CHECK-SAME:   (%[[X:[^:]+]]: memref<{{.*}}>, %[[W:[^:]+]]: memref<{{.*}}>, %[[I:[^:]+]]: memref<1x4x4x4x16xf32, strided<[?, ?, ?, ?, ?], offset: ?>>)
//       CHECK:   %[[ALLOC:.*]] = memref.alloc() {{.*}}: memref<1x4x4x4x16xf32>
//       CHECK:   memref.copy %[[I]], %[[ALLOC]]
//       CHECK:   conv3d.conv ins(%[[X]], %[[W]] : {{.*}}) outs(%[[ALLOC]] : memref<1x4x4x4x16xf32>){{$}}
//       CHECK:   return %[[ALLOC]], %[[I]]
func.func @conv_accumulate_copies(%x: tensor<1x4x6x6x8xf32>, %w: tensor<1x3x3x8x16xf32>, %init: tensor<1x4x4x4x16xf32>) -> (tensor<1x4x4x4x16xf32>, tensor<1x4x4x4x16xf32>) {
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf32>, tensor<1x3x3x8x16xf32>) outs(%init : tensor<1x4x4x4x16xf32>) -> tensor<1x4x4x4x16xf32>
  return %0, %init : tensor<1x4x4x4x16xf32>, tensor<1x4x4x4x16xf32>
}

// The same with `overwrite`: the old contents are not read, so the new
// buffer is not initialized with a copy.
// CHECK-LABEL: func.func @conv_overwrite_no_copy
//  CHECK-SAME:   (%[[X:[^:]+]]: memref<{{.*}}>, %[[W:[^:]+]]: memref<{{.*}}>, %[[I:[^:]+]]: memref<1x4x4x4x16xf32, strided<[?, ?, ?, ?, ?], offset: ?>>)
//   CHECK-NOT:   memref.copy
//       CHECK:   %[[ALLOC:.*]] = memref.alloc() {{.*}}: memref<1x4x4x4x16xf32>
//   CHECK-NOT:   memref.copy
//       CHECK:   conv3d.conv ins(%[[X]], %[[W]] : {{.*}}) outs(%[[ALLOC]] : memref<1x4x4x4x16xf32>) overwrite{{$}}
//   CHECK-NOT:   memref.copy
//       CHECK:   return %[[ALLOC]], %[[I]]
func.func @conv_overwrite_no_copy(%x: tensor<1x4x6x6x8xf32>, %w: tensor<1x3x3x8x16xf32>, %init: tensor<1x4x4x4x16xf32>) -> (tensor<1x4x4x4x16xf32>, tensor<1x4x4x4x16xf32>) {
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf32>, tensor<1x3x3x8x16xf32>) outs(%init : tensor<1x4x4x4x16xf32>) overwrite -> tensor<1x4x4x4x16xf32>
  return %0, %init : tensor<1x4x4x4x16xf32>, tensor<1x4x4x4x16xf32>
}

// conv3d.quantize writes every element of its destination: never a copy.
// CHECK-LABEL: func.func @quantize_no_copy
//  CHECK-SAME:   (%[[X:[^:]+]]: memref<4x32xf32, strided<[?, ?], offset: ?>>, %[[AMAX:[^:]+]]: f32, %[[O:[^:]+]]: memref<4x32xf32, strided<[?, ?], offset: ?>>)
//   CHECK-NOT:   memref.copy
//       CHECK:   %[[ALLOC:.*]] = memref.alloc() {{.*}}: memref<4x32xf32>
//   CHECK-NOT:   memref.copy
//       CHECK:   conv3d.quantize #conv3d.nvfp4<block_size = 16> axes = [1] ins(%[[X]] : memref<4x32xf32, strided<[?, ?], offset: ?>>) amax(%[[AMAX]]) outs(%[[ALLOC]] : memref<4x32xf32>){{$}}
//       CHECK:   return %[[ALLOC]], %[[O]]
func.func @quantize_no_copy(%x: tensor<4x32xf32>, %amax: f32, %out: tensor<4x32xf32>) -> (tensor<4x32xf32>, tensor<4x32xf32>) {
  %0 = conv3d.quantize #conv3d.nvfp4<block_size = 16> axes = [1] ins(%x : tensor<4x32xf32>) amax(%amax) outs(%out : tensor<4x32xf32>) -> tensor<4x32xf32>
  return %0, %out : tensor<4x32xf32>, tensor<4x32xf32>
}

// In place when the destination is dead afterwards.
// CHECK-LABEL: func.func @quantize_in_place
//  CHECK-SAME:   (%[[X:[^:]+]]: memref<{{.*}}>, %[[AMAX:[^:]+]]: f32, %[[O:[^:]+]]: memref<1x8x8x8x64xbf16, strided<[?, ?, ?, ?, ?], offset: ?>>)
//   CHECK-NOT:   memref.alloc
//       CHECK:   conv3d.quantize #conv3d.nvfp4<block_size = 64> axes = [4] ins(%[[X]] : {{.*}}) amax(%[[AMAX]]) outs(%[[O]] : memref<1x8x8x8x64xbf16, strided<[?, ?, ?, ?, ?], offset: ?>>){{$}}
//  CHECK-NEXT:   return %[[O]]
func.func @quantize_in_place(%x: tensor<1x8x8x8x64xbf16>, %amax: f32, %out: tensor<1x8x8x8x64xbf16>) -> tensor<1x8x8x8x64xbf16> {
  %0 = conv3d.quantize #conv3d.nvfp4<block_size = 64> axes = [4] ins(%x : tensor<1x8x8x8x64xbf16>) amax(%amax) outs(%out : tensor<1x8x8x8x64xbf16>) -> tensor<1x8x8x8x64xbf16>
  return %0 : tensor<1x8x8x8x64xbf16>
}

// conv3d.epilogue without `overwrite` adds the sum onto its destination:
// the new buffer starts as a copy.
// CHECK-LABEL: func.func @epilogue_accumulate_copies
//  CHECK-SAME:   (%[[S:[^:]+]]: memref<{{.*}}>, %[[B:[^:]+]]: memref<{{.*}}>, %[[R:[^:]+]]: memref<{{.*}}>, %[[O:[^:]+]]: memref<1x4x4x4x16xbf16, strided<[?, ?, ?, ?, ?], offset: ?>>)
//       CHECK:   %[[ALLOC:.*]] = memref.alloc() {{.*}}: memref<1x4x4x4x16xbf16>
//       CHECK:   memref.copy %[[O]], %[[ALLOC]]
//       CHECK:   conv3d.epilogue ins(%[[S]] : {{.*}}) bias(%[[B]] : memref<16xf32, strided<[?], offset: ?>>) residual(%[[R]] : memref<1x4x4x4x16xbf16, strided<[?, ?, ?, ?, ?], offset: ?>>) outs(%[[ALLOC]] : memref<1x4x4x4x16xbf16>) activation = gelu_tanh{{$}}
//       CHECK:   return %[[ALLOC]], %[[O]]
func.func @epilogue_accumulate_copies(%s: tensor<1x4x4x4x16xf32>, %b: tensor<16xf32>, %r: tensor<1x4x4x4x16xbf16>, %out: tensor<1x4x4x4x16xbf16>) -> (tensor<1x4x4x4x16xbf16>, tensor<1x4x4x4x16xbf16>) {
  %0 = conv3d.epilogue ins(%s : tensor<1x4x4x4x16xf32>) bias(%b : tensor<16xf32>) residual(%r : tensor<1x4x4x4x16xbf16>) outs(%out : tensor<1x4x4x4x16xbf16>) activation = gelu_tanh -> tensor<1x4x4x4x16xbf16>
  return %0, %out : tensor<1x4x4x4x16xbf16>, tensor<1x4x4x4x16xbf16>
}

// With `overwrite`, no copy.
// CHECK-LABEL: func.func @epilogue_overwrite_no_copy
//  CHECK-SAME:   (%[[S:[^:]+]]: memref<{{.*}}>, %[[O:[^:]+]]: memref<1x4x4x4x16xbf16, strided<[?, ?, ?, ?, ?], offset: ?>>)
//   CHECK-NOT:   memref.copy
//       CHECK:   %[[ALLOC:.*]] = memref.alloc() {{.*}}: memref<1x4x4x4x16xbf16>
//   CHECK-NOT:   memref.copy
//       CHECK:   conv3d.epilogue ins(%[[S]] : {{.*}}) outs(%[[ALLOC]] : memref<1x4x4x4x16xbf16>) overwrite activation = relu{{$}}
//       CHECK:   return %[[ALLOC]], %[[O]]
func.func @epilogue_overwrite_no_copy(%s: tensor<1x4x4x4x16xf32>, %out: tensor<1x4x4x4x16xbf16>) -> (tensor<1x4x4x4x16xbf16>, tensor<1x4x4x4x16xbf16>) {
  %0 = conv3d.epilogue ins(%s : tensor<1x4x4x4x16xf32>) outs(%out : tensor<1x4x4x4x16xbf16>) overwrite activation = relu -> tensor<1x4x4x4x16xbf16>
  return %0, %out : tensor<1x4x4x4x16xbf16>, tensor<1x4x4x4x16xbf16>
}

// A chain: the conv's result is the epilogue's sum, both in place.
// CHECK-LABEL: func.func @conv_then_epilogue
//  CHECK-SAME:   (%[[X:[^:]+]]: memref<{{.*}}>, %[[W:[^:]+]]: memref<{{.*}}>, %[[O:[^:]+]]: memref<1x4x4x4x16xf16, strided<[?, ?, ?, ?, ?], offset: ?>>)
//       CHECK:   %[[ACC:.*]] = memref.alloc() {{.*}}: memref<1x4x4x4x16xf32>
//   CHECK-NOT:   memref.copy
//       CHECK:   conv3d.conv ins(%[[X]], %[[W]] : {{.*}}) outs(%[[ACC]] : memref<1x4x4x4x16xf32>) overwrite{{$}}
//       CHECK:   conv3d.epilogue ins(%[[ACC]] : memref<1x4x4x4x16xf32>) outs(%[[O]] : memref<1x4x4x4x16xf16, strided<[?, ?, ?, ?, ?], offset: ?>>) overwrite activation = silu{{$}}
//       CHECK:   return %[[O]]
func.func @conv_then_epilogue(%x: tensor<1x4x6x6x8xf16>, %w: tensor<1x3x3x8x16xf16>, %out: tensor<1x4x4x4x16xf16>) -> tensor<1x4x4x4x16xf16> {
  %e = tensor.empty() : tensor<1x4x4x4x16xf32>
  %acc = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf16>, tensor<1x3x3x8x16xf16>) outs(%e : tensor<1x4x4x4x16xf32>) overwrite -> tensor<1x4x4x4x16xf32>
  %0 = conv3d.epilogue ins(%acc : tensor<1x4x4x4x16xf32>) outs(%out : tensor<1x4x4x4x16xf16>) overwrite activation = silu -> tensor<1x4x4x4x16xf16>
  return %0 : tensor<1x4x4x4x16xf16>
}
