// conv3d-from-linalg folds what a video VAE decoder puts in front of a
// causal convolution: a tensor.concat of the cached frames and the chunk
// along depth becomes the history operand (then the zero pad of the
// concatenation the padding), and an elementwise activation of the chunk the
// input prologue's activation. Nothing is folded where the result would
// differ: an activation of the concatenation (the prologue skips the
// history), concatenations along other axes or of three tensors.
//
// RUN: conv3d-opt %s -split-input-file -conv3d-from-linalg | FileCheck %s

// cat(cache, silu(x)) -> pad (causal: the cache covers the time padding) ->
// conv.
// CHECK-LABEL: func.func @wan_step
//  CHECK-SAME:   (%[[X:[^:]+]]: tensor<1x4x6x6x8xf32>, %[[H:[^:]+]]: tensor<1x2x6x6x8xf32>, %[[W:[^:]+]]: tensor<3x3x3x8x16xf32>
//   CHECK-NOT:   tensor.concat
//   CHECK-NOT:   tensor.pad
//   CHECK-NOT:   linalg.generic
//       CHECK:   conv3d.conv ins(%[[X]], %[[W]] : tensor<1x4x6x6x8xf32>, tensor<3x3x3x8x16xf32>) history(%[[H]] : tensor<1x2x6x6x8xf32>) input_activation = silu outs(%{{.*}}) overwrite padding = [0, 0, 1, 1, 1, 1]
#id = affine_map<(n, d, h, w, c) -> (n, d, h, w, c)>
func.func @wan_step(%x: tensor<1x4x6x6x8xf32>, %h: tensor<1x2x6x6x8xf32>, %w: tensor<3x3x3x8x16xf32>) -> tensor<1x4x6x6x16xf32> {
  %e = tensor.empty() : tensor<1x4x6x6x8xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<1x4x6x6x8xf32>) outs(%e : tensor<1x4x6x6x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %n = arith.negf %v : f32
    %ex = math.exp %n : f32
    %one = arith.constant 1.0 : f32
    %d = arith.addf %one, %ex : f32
    %s = arith.divf %v, %d : f32
    linalg.yield %s : f32
  } -> tensor<1x4x6x6x8xf32>
  %c = tensor.concat dim(1) %h, %a : (tensor<1x2x6x6x8xf32>, tensor<1x4x6x6x8xf32>) -> tensor<1x6x6x6x8xf32>
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %c low[0, 0, 1, 1, 0] high[0, 0, 1, 1, 0] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index, %i4: index):
    tensor.yield %zero : f32
  } : tensor<1x6x6x6x8xf32> to tensor<1x6x8x8x8xf32>
  %oe = tensor.empty() : tensor<1x4x6x6x16xf32>
  %o = linalg.fill ins(%zero : f32) outs(%oe : tensor<1x4x6x6x16xf32>) -> tensor<1x4x6x6x16xf32>
  %y = linalg.conv_3d_ndhwc_dhwcf ins(%p, %w : tensor<1x6x8x8x8xf32>, tensor<3x3x3x8x16xf32>) outs(%o : tensor<1x4x6x6x16xf32>) -> tensor<1x4x6x6x16xf32>
  return %y : tensor<1x4x6x6x16xf32>
}

// -----

// relu(cat(cache, x)) would transform the cache: the activation folds, the
// concatenation stays (the conv reads it as its input).
// CHECK-LABEL: func.func @activation_of_concat
//       CHECK:   %[[C:.*]] = tensor.concat dim(1)
//       CHECK:   conv3d.conv ins(%[[C]], %{{.*}} : tensor<1x6x6x6x8xf32>, tensor<3x3x3x8x16xf32>) input_activation = relu outs(
//   CHECK-NOT:   history(
#id = affine_map<(n, d, h, w, c) -> (n, d, h, w, c)>
func.func @activation_of_concat(%x: tensor<1x4x6x6x8xf32>, %h: tensor<1x2x6x6x8xf32>, %w: tensor<3x3x3x8x16xf32>, %o: tensor<1x4x4x4x16xf32>) -> tensor<1x4x4x4x16xf32> {
  %c = tensor.concat dim(1) %h, %x : (tensor<1x2x6x6x8xf32>, tensor<1x4x6x6x8xf32>) -> tensor<1x6x6x6x8xf32>
  %e = tensor.empty() : tensor<1x6x6x6x8xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%c : tensor<1x6x6x6x8xf32>) outs(%e : tensor<1x6x6x6x8xf32>) {
  ^bb0(%v: f32, %out: f32):
    %zero = arith.constant 0.0 : f32
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  } -> tensor<1x6x6x6x8xf32>
  %y = linalg.conv_3d_ndhwc_dhwcf ins(%a, %w : tensor<1x6x6x6x8xf32>, tensor<3x3x3x8x16xf32>) outs(%o : tensor<1x4x4x4x16xf32>) -> tensor<1x4x4x4x16xf32>
  return %y : tensor<1x4x4x4x16xf32>
}

// -----

// Along height, or of three tensors: not a history.
// CHECK-LABEL: func.func @not_history
//       CHECK:   tensor.concat dim(2)
//       CHECK:   tensor.concat dim(1)
//   CHECK-NOT:   history(
func.func @not_history(%x: tensor<1x4x3x6x8xf32>, %w: tensor<3x3x3x8x16xf32>, %o: tensor<1x2x4x4x16xf32>,
                       %a: tensor<1x1x6x6x8xf32>, %b: tensor<1x1x6x6x8xf32>, %c: tensor<1x2x6x6x8xf32>, %o2: tensor<1x2x4x4x16xf32>) -> (tensor<1x2x4x4x16xf32>, tensor<1x2x4x4x16xf32>) {
  %h = tensor.concat dim(2) %x, %x : (tensor<1x4x3x6x8xf32>, tensor<1x4x3x6x8xf32>) -> tensor<1x4x6x6x8xf32>
  %y = linalg.conv_3d_ndhwc_dhwcf ins(%h, %w : tensor<1x4x6x6x8xf32>, tensor<3x3x3x8x16xf32>) outs(%o : tensor<1x2x4x4x16xf32>) -> tensor<1x2x4x4x16xf32>
  %t = tensor.concat dim(1) %a, %b, %c : (tensor<1x1x6x6x8xf32>, tensor<1x1x6x6x8xf32>, tensor<1x2x6x6x8xf32>) -> tensor<1x4x6x6x8xf32>
  %z = linalg.conv_3d_ndhwc_dhwcf ins(%t, %w : tensor<1x4x6x6x8xf32>, tensor<3x3x3x8x16xf32>) outs(%o2 : tensor<1x2x4x4x16xf32>) -> tensor<1x2x4x4x16xf32>
  return %y, %z : tensor<1x2x4x4x16xf32>, tensor<1x2x4x4x16xf32>
}
