// conv3d-from-linalg folds what a video VAE decoder puts in front of a
// causal convolution: a tensor.concat of the cached frames and the chunk
// along depth becomes the history operand (then the zero pad of the
// concatenation the padding), and an elementwise activation of the chunk the
// input prologue's activation, an RMS norm over the channels (a sum of
// squares and an elementwise map, eps read off its body) the prologue's
// norm. Nothing is folded where the result would differ: an activation of
// the concatenation (the prologue skips the history), an activation before
// a norm (the prologue's runs after it), concatenations along other axes or
// of three tensors.
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

// -----

// The whole WAN step: rms_norm (a sum of squares over C, then
// x * rsqrt(s / C + eps) * gamma + beta), silu, cat(cache, .), pad, conv:
// one conv3d.conv with a history and the full prologue.
// CHECK-LABEL: func.func @wan_norm_step
//  CHECK-SAME:   (%[[X:[^:]+]]: tensor<1x4x6x6x8xf32>, %[[H:[^:]+]]: tensor<1x2x6x6x8xf32>, %[[W:[^:]+]]: tensor<3x3x3x8x16xf32>, %[[G:[^:]+]]: tensor<8xf32>, %[[B:[^:]+]]: tensor<8xf32>)
//       CHECK:   conv3d.conv ins(%[[X]], %[[W]] : tensor<1x4x6x6x8xf32>, tensor<3x3x3x8x16xf32>) history(%[[H]] : tensor<1x2x6x6x8xf32>) rms_norm(%[[G]] : tensor<8xf32>) norm_beta(%[[B]] : tensor<8xf32>) norm_eps = 9.99999974E-6 input_activation = silu outs(%{{.*}}) overwrite padding = [0, 0, 1, 1, 1, 1]
#id = affine_map<(n, d, h, w, c) -> (n, d, h, w, c)>
#voxel = affine_map<(n, d, h, w, c) -> (n, d, h, w)>
#chan = affine_map<(n, d, h, w, c) -> (c)>
func.func @wan_norm_step(%x: tensor<1x4x6x6x8xf32>, %h: tensor<1x2x6x6x8xf32>, %w: tensor<3x3x3x8x16xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<1x4x6x6x16xf32> {
  %zero = arith.constant 0.0 : f32
  %se = tensor.empty() : tensor<1x4x6x6xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%se : tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %s = linalg.generic {indexing_maps = [#id, #voxel], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%x : tensor<1x4x6x6x8xf32>) outs(%s0 : tensor<1x4x6x6xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %sq = arith.mulf %v, %v : f32
    %r = arith.addf %acc, %sq : f32
    linalg.yield %r : f32
  } -> tensor<1x4x6x6xf32>
  %ne = tensor.empty() : tensor<1x4x6x6x8xf32>
  %n = linalg.generic {indexing_maps = [#id, #voxel, #chan, #chan, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%x, %s, %g, %b : tensor<1x4x6x6x8xf32>, tensor<1x4x6x6xf32>, tensor<8xf32>, tensor<8xf32>) outs(%ne : tensor<1x4x6x6x8xf32>) {
  ^bb0(%v: f32, %sum: f32, %gv: f32, %bv: f32, %o: f32):
    %c8 = arith.constant 8.0 : f32
    %eps = arith.constant 1.0e-5 : f32
    %mean = arith.divf %sum, %c8 : f32
    %me = arith.addf %mean, %eps : f32
    %rs = math.rsqrt %me : f32
    %xn = arith.mulf %v, %rs : f32
    %xg = arith.mulf %xn, %gv : f32
    %xb = arith.addf %xg, %bv : f32
    linalg.yield %xb : f32
  } -> tensor<1x4x6x6x8xf32>
  %ae = tensor.empty() : tensor<1x4x6x6x8xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%n : tensor<1x4x6x6x8xf32>) outs(%ae : tensor<1x4x6x6x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %neg = arith.negf %v : f32
    %ex = math.exp %neg : f32
    %one = arith.constant 1.0 : f32
    %den = arith.addf %one, %ex : f32
    %si = arith.divf %v, %den : f32
    linalg.yield %si : f32
  } -> tensor<1x4x6x6x8xf32>
  %c = tensor.concat dim(1) %h, %a : (tensor<1x2x6x6x8xf32>, tensor<1x4x6x6x8xf32>) -> tensor<1x6x6x6x8xf32>
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

// An activation before the norm (norm(relu(x))) must not become the
// prologue's activation, which runs after the norm: the norm folds, the
// activation stays a separate op.
// CHECK-LABEL: func.func @activation_before_norm
//       CHECK:   %[[A:.*]] = linalg.generic
//       CHECK:   conv3d.conv ins(%[[A]], %{{.*}} : {{.*}}) rms_norm(
//   CHECK-NOT:   input_activation
#id = affine_map<(n, d, h, w, c) -> (n, d, h, w, c)>
#voxel = affine_map<(n, d, h, w, c) -> (n, d, h, w)>
#chan = affine_map<(n, d, h, w, c) -> (c)>
func.func @activation_before_norm(%x: tensor<1x4x6x6x8xf32>, %w: tensor<3x3x3x8x16xf32>, %g: tensor<8xf32>, %out: tensor<1x2x4x4x16xf32>) -> tensor<1x2x4x4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %ae = tensor.empty() : tensor<1x4x6x6x8xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<1x4x6x6x8xf32>) outs(%ae : tensor<1x4x6x6x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  } -> tensor<1x4x6x6x8xf32>
  %se = tensor.empty() : tensor<1x4x6x6xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%se : tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %s = linalg.generic {indexing_maps = [#id, #voxel], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%a : tensor<1x4x6x6x8xf32>) outs(%s0 : tensor<1x4x6x6xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %sq = arith.mulf %v, %v : f32
    %r = arith.addf %acc, %sq : f32
    linalg.yield %r : f32
  } -> tensor<1x4x6x6xf32>
  %ne = tensor.empty() : tensor<1x4x6x6x8xf32>
  %n = linalg.generic {indexing_maps = [#id, #voxel, #chan, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%a, %s, %g : tensor<1x4x6x6x8xf32>, tensor<1x4x6x6xf32>, tensor<8xf32>) outs(%ne : tensor<1x4x6x6x8xf32>) {
  ^bb0(%v: f32, %sum: f32, %gv: f32, %o: f32):
    %inv = arith.constant 0.125 : f32
    %eps = arith.constant 1.0e-6 : f32
    %mean = arith.mulf %sum, %inv : f32
    %me = arith.addf %mean, %eps : f32
    %rs = math.rsqrt %me : f32
    %xn = arith.mulf %v, %rs : f32
    %xg = arith.mulf %xn, %gv : f32
    linalg.yield %xg : f32
  } -> tensor<1x4x6x6x8xf32>
  %y = linalg.conv_3d_ndhwc_dhwcf ins(%n, %w : tensor<1x4x6x6x8xf32>, tensor<3x3x3x8x16xf32>) outs(%out : tensor<1x2x4x4x16xf32>) -> tensor<1x2x4x4x16xf32>
  return %y : tensor<1x2x4x4x16xf32>
}
