// conv3d-fuse-epilogue: elementwise consumers of a single-use tensor
// convolution fold into its epilogue cast(act(acc + bias) + residual), one at
// a time and only in that order. Activations are recognized by evaluating
// their bodies, so any algebraic form matches (the activation forms:
// fuse-epilogue-activations.mlir).
//
// RUN: conv3d-opt %s -split-input-file -conv3d-fuse-epilogue | FileCheck %s

#id = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
#ch = affine_map<(d0, d1, d2, d3, d4) -> (d4)>
!X = tensor<1x4x4x4x8xbf16>
!W = tensor<1x1x1x8x16xbf16>
!T = tensor<1x4x4x4x16xf32>

// CHECK-LABEL: func.func @bias_add
// CHECK-SAME: (%[[X:.*]]: tensor<1x4x4x4x8xbf16>, %[[W:.*]]: tensor<1x1x1x8x16xbf16>, %[[B:.*]]: tensor<16xf32>, %[[I:.*]]: tensor<1x4x4x4x16xf32>)
// CHECK-NEXT: %[[C:.*]] = conv3d.conv ins(%[[X]], %[[W]] : tensor<1x4x4x4x8xbf16>, tensor<1x1x1x8x16xbf16>) bias(%[[B]] : tensor<16xf32>) outs(%[[I]] : tensor<1x4x4x4x16xf32>) overwrite -> tensor<1x4x4x4x16xf32>
// CHECK-NEXT: return %[[C]]
func.func @bias_add(%x: !X, %w: !W, %b: tensor<16xf32>, %i: !T) -> !T {
  %0 = conv3d.conv ins(%x, %w : !X, !W) outs(%i : !T) overwrite -> !T
  %e = tensor.empty() : !T
  %1 = linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%0, %b : !T, tensor<16xf32>) outs(%e : !T) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  } -> !T
  return %1 : !T
}

// -----

// The bias first, in the inputs and in the addf.
#id = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
#ch = affine_map<(d0, d1, d2, d3, d4) -> (d4)>
!X = tensor<1x4x4x4x8xbf16>
!W = tensor<1x1x1x8x16xbf16>
!T = tensor<1x4x4x4x16xf32>

// CHECK-LABEL: func.func @bias_add_swapped
// CHECK-SAME: %[[B:[^:]*]]: tensor<16xf32>
// CHECK-NEXT: %[[C:.*]] = conv3d.conv {{.*}} bias(%[[B]] : tensor<16xf32>) outs({{.*}}) overwrite ->
// CHECK-NEXT: return %[[C]]
func.func @bias_add_swapped(%x: !X, %w: !W, %b: tensor<16xf32>, %i: !T) -> !T {
  %0 = conv3d.conv ins(%x, %w : !X, !W) outs(%i : !T) overwrite -> !T
  %e = tensor.empty() : !T
  %1 = linalg.generic {indexing_maps = [#ch, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%b, %0 : tensor<16xf32>, !T) outs(%e : !T) {
  ^bb0(%c: f32, %a: f32, %o: f32):
    %s = arith.addf %c, %a : f32
    linalg.yield %s : f32
  } -> !T
  return %1 : !T
}

// -----

// A bf16 bias of a bf16 convolution (no widening).
#id = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
#ch = affine_map<(d0, d1, d2, d3, d4) -> (d4)>
!X = tensor<1x4x4x4x8xbf16>
!W = tensor<1x1x1x8x16xbf16>
!T = tensor<1x4x4x4x16xbf16>

// CHECK-LABEL: func.func @bias_add_bf16
// CHECK-SAME: %[[B:[^:]*]]: tensor<16xbf16>
// CHECK-NEXT: %[[C:.*]] = conv3d.conv {{.*}} bias(%[[B]] : tensor<16xbf16>) outs({{.*}} : tensor<1x4x4x4x16xbf16>) overwrite ->
// CHECK-NEXT: return %[[C]]
func.func @bias_add_bf16(%x: !X, %w: !W, %b: tensor<16xbf16>, %i: !T) -> !T {
  %0 = conv3d.conv ins(%x, %w : !X, !W) outs(%i : !T) overwrite -> !T
  %e = tensor.empty() : !T
  %1 = linalg.generic {indexing_maps = [#ch, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%b, %0 : tensor<16xbf16>, !T) outs(%e : !T) {
  ^bb0(%c: bf16, %a: bf16, %o: bf16):
    %s = arith.addf %a, %c : bf16
    linalg.yield %s : bf16
  } -> !T
  return %1 : !T
}

// -----

// A bias that is not per output channel (map to d3) is not a bias.
#id = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
#w = affine_map<(d0, d1, d2, d3, d4) -> (d3)>
!X = tensor<1x4x4x4x8xbf16>
!W = tensor<1x1x1x8x16xbf16>
!T = tensor<1x4x4x4x16xf32>

// CHECK-LABEL: func.func @bias_wrong_dim_not_folded
// CHECK: %[[C:.*]] = conv3d.conv
// CHECK-NOT: bias(
// CHECK: linalg.generic {{.*}} ins(%[[C]], %{{.*}} : tensor<1x4x4x4x16xf32>, tensor<4xf32>)
func.func @bias_wrong_dim_not_folded(%x: !X, %w: !W, %b: tensor<4xf32>, %i: !T) -> !T {
  %0 = conv3d.conv ins(%x, %w : !X, !W) outs(%i : !T) overwrite -> !T
  %e = tensor.empty() : !T
  %1 = linalg.generic {indexing_maps = [#id, #w, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%0, %b : !T, tensor<4xf32>) outs(%e : !T) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  } -> !T
  return %1 : !T
}

// -----

// Activations are recognized by evaluating the body. A body without
// constants (max(x, x - x)) is recognized as relu. (Bodies with constants:
// fuse-epilogue-activations.mlir.)
#id = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
!X = tensor<1x4x4x4x8xbf16>
!W = tensor<1x1x1x8x16xbf16>
!T = tensor<1x4x4x4x16xf32>

// CHECK-LABEL: func.func @relu_without_constants
// CHECK-NEXT: %[[C:.*]] = conv3d.conv {{.*}} overwrite activation = relu ->
// CHECK-NEXT: return %[[C]]
func.func @relu_without_constants(%x: !X, %w: !W, %i: !T) -> !T {
  %0 = conv3d.conv ins(%x, %w : !X, !W) outs(%i : !T) overwrite -> !T
  %e = tensor.empty() : !T
  %1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%0 : !T) outs(%e : !T) {
  ^bb0(%a: f32, %o: f32):
    %z = arith.subf %a, %a : f32
    %r = arith.maximumf %a, %z : f32
    linalg.yield %r : f32
  } -> !T
  return %1 : !T
}

// -----

// The same evaluation recognizes relu as a compare and select, and silu as
// x / (exp(x - x) + exp(-x)), both without constants.
#id = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
!X = tensor<1x4x4x4x8xbf16>
!W = tensor<1x1x1x8x16xbf16>
!T = tensor<1x4x4x4x16xf32>

// CHECK-LABEL: func.func @relu_select_without_constants
// CHECK-NEXT: %[[C:.*]] = conv3d.conv {{.*}} overwrite activation = relu ->
// CHECK-NEXT: return %[[C]]
func.func @relu_select_without_constants(%x: !X, %w: !W, %i: !T) -> !T {
  %0 = conv3d.conv ins(%x, %w : !X, !W) outs(%i : !T) overwrite -> !T
  %e = tensor.empty() : !T
  %1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%0 : !T) outs(%e : !T) {
  ^bb0(%a: f32, %o: f32):
    %z = arith.subf %a, %a : f32
    %p = arith.cmpf ogt, %a, %z : f32
    %r = arith.select %p, %a, %z : f32
    linalg.yield %r : f32
  } -> !T
  return %1 : !T
}

// -----

#id = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
!X = tensor<1x4x4x4x8xbf16>
!W = tensor<1x1x1x8x16xbf16>
!T = tensor<1x4x4x4x16xf32>

// CHECK-LABEL: func.func @silu_without_constants
// CHECK-NEXT: %[[C:.*]] = conv3d.conv {{.*}} overwrite activation = silu ->
// CHECK-NEXT: return %[[C]]
func.func @silu_without_constants(%x: !X, %w: !W, %i: !T) -> !T {
  %0 = conv3d.conv ins(%x, %w : !X, !W) outs(%i : !T) overwrite -> !T
  %e = tensor.empty() : !T
  %1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%0 : !T) outs(%e : !T) {
  ^bb0(%a: f32, %o: f32):
    %z = arith.subf %a, %a : f32
    %one = math.exp %z : f32
    %n = arith.negf %a : f32
    %ex = math.exp %n : f32
    %d = arith.addf %one, %ex : f32
    %r = arith.divf %a, %d : f32
    linalg.yield %r : f32
  } -> !T
  return %1 : !T
}

// -----

// GELU with erf, 0.5 * x * (1 + erf(x / sqrt(2))), differs from the tanh
// form by about 1e-3 and is not mistaken for it: no fold.
#id = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
!X = tensor<1x4x4x4x8xbf16>
!W = tensor<1x1x1x8x16xbf16>
!T = tensor<1x4x4x4x16xf32>

// CHECK-LABEL: func.func @gelu_erf_not_folded
// CHECK: %[[C:.*]] = conv3d.conv {{.*}} overwrite -> tensor<1x4x4x4x16xf32>
// CHECK: %[[G:.*]] = linalg.generic {{.*}} ins(%[[C]] : tensor<1x4x4x4x16xf32>)
// CHECK: math.erf
// CHECK: return %[[G]]
func.func @gelu_erf_not_folded(%x: !X, %w: !W, %i: !T) -> !T {
  %0 = conv3d.conv ins(%x, %w : !X, !W) outs(%i : !T) overwrite -> !T
  %e = tensor.empty() : !T
  %1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%0 : !T) outs(%e : !T) {
  ^bb0(%a: f32, %o: f32):
    %half = arith.constant 0.5 : f32
    %one = arith.constant 1.0 : f32
    %two = arith.constant 2.0 : f32
    %s2 = math.sqrt %two : f32
    %y = arith.divf %a, %s2 : f32
    %er = math.erf %y : f32
    %onept = arith.addf %one, %er : f32
    %hx = arith.mulf %half, %a : f32
    %r = arith.mulf %hx, %onept : f32
    linalg.yield %r : f32
  } -> !T
  return %1 : !T
}

// -----

// x * x is elementwise but no activation: no fold.
#id = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
!X = tensor<1x4x4x4x8xbf16>
!W = tensor<1x1x1x8x16xbf16>
!T = tensor<1x4x4x4x16xf32>

// CHECK-LABEL: func.func @square_not_folded
// CHECK: %[[C:.*]] = conv3d.conv {{.*}} overwrite -> tensor<1x4x4x4x16xf32>
// CHECK: %[[G:.*]] = linalg.generic {{.*}} ins(%[[C]] : tensor<1x4x4x4x16xf32>)
// CHECK: arith.mulf
// CHECK: return %[[G]]
func.func @square_not_folded(%x: !X, %w: !W, %i: !T) -> !T {
  %0 = conv3d.conv ins(%x, %w : !X, !W) outs(%i : !T) overwrite -> !T
  %e = tensor.empty() : !T
  %1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%0 : !T) outs(%e : !T) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.mulf %a, %a : f32
    linalg.yield %r : f32
  } -> !T
  return %1 : !T
}

// -----

#id = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
!X = tensor<1x4x4x4x8xbf16>
!W = tensor<1x1x1x8x16xbf16>
!T = tensor<1x4x4x4x16xf32>

// CHECK-LABEL: func.func @residual_generic
// CHECK-SAME: %[[R:[^:]*]]: tensor<1x4x4x4x16xf32>, %[[I:[^:]*]]: tensor<1x4x4x4x16xf32>)
// CHECK-NEXT: %[[C:.*]] = conv3d.conv {{.*}} residual(%[[R]] : tensor<1x4x4x4x16xf32>) outs(%[[I]] : {{.*}}) overwrite ->
// CHECK-NEXT: return %[[C]]
func.func @residual_generic(%x: !X, %w: !W, %res: !T, %i: !T) -> !T {
  %0 = conv3d.conv ins(%x, %w : !X, !W) outs(%i : !T) overwrite -> !T
  %e = tensor.empty() : !T
  %1 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%res, %0 : !T, !T) outs(%e : !T) {
  ^bb0(%r: f32, %a: f32, %o: f32):
    %s = arith.addf %a, %r : f32
    linalg.yield %s : f32
  } -> !T
  return %1 : !T
}

// -----

!X = tensor<1x4x4x4x8xbf16>
!W = tensor<1x1x1x8x16xbf16>
!T = tensor<1x4x4x4x16xf32>

// CHECK-LABEL: func.func @residual_linalg_add
// CHECK-SAME: %[[R:[^:]*]]: tensor<1x4x4x4x16xf32>, %[[I:[^:]*]]: tensor<1x4x4x4x16xf32>)
// CHECK-NEXT: %[[C:.*]] = conv3d.conv {{.*}} residual(%[[R]] : tensor<1x4x4x4x16xf32>) outs(%[[I]] : {{.*}}) overwrite ->
// CHECK-NEXT: return %[[C]]
func.func @residual_linalg_add(%x: !X, %w: !W, %res: !T, %i: !T) -> !T {
  %0 = conv3d.conv ins(%x, %w : !X, !W) outs(%i : !T) overwrite -> !T
  %e = tensor.empty() : !T
  %1 = linalg.add ins(%0, %res : !T, !T) outs(%e : !T) -> !T
  return %1 : !T
}

// -----

// The residual first.
!X = tensor<1x4x4x4x8xbf16>
!W = tensor<1x1x1x8x16xbf16>
!T = tensor<1x4x4x4x16xf32>

// CHECK-LABEL: func.func @residual_linalg_add_swapped
// CHECK-SAME: %[[R:[^:]*]]: tensor<1x4x4x4x16xf32>, %[[I:[^:]*]]: tensor<1x4x4x4x16xf32>)
// CHECK-NEXT: %[[C:.*]] = conv3d.conv {{.*}} residual(%[[R]] : tensor<1x4x4x4x16xf32>) outs(%[[I]] : {{.*}}) overwrite ->
// CHECK-NEXT: return %[[C]]
func.func @residual_linalg_add_swapped(%x: !X, %w: !W, %res: !T, %i: !T) -> !T {
  %0 = conv3d.conv ins(%x, %w : !X, !W) outs(%i : !T) overwrite -> !T
  %e = tensor.empty() : !T
  %1 = linalg.add ins(%res, %0 : !T, !T) outs(%e : !T) -> !T
  return %1 : !T
}

// -----

// An f32 -> bf16 cast of an overwrite conv: the conv writes the cast's bf16
// destination directly.
#id = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
!X = tensor<1x4x4x4x8xbf16>
!W = tensor<1x1x1x8x16xbf16>
!T = tensor<1x4x4x4x16xf32>
!O = tensor<1x4x4x4x16xbf16>

// CHECK-LABEL: func.func @cast_to_bf16
// CHECK-SAME: (%[[X:.*]]: tensor<1x4x4x4x8xbf16>, %[[W:.*]]: tensor<1x1x1x8x16xbf16>, %[[I:.*]]: tensor<1x4x4x4x16xf32>)
// CHECK-NEXT: %[[E:.*]] = tensor.empty() : tensor<1x4x4x4x16xbf16>
// CHECK-NEXT: %[[C:.*]] = conv3d.conv ins(%[[X]], %[[W]] : tensor<1x4x4x4x8xbf16>, tensor<1x1x1x8x16xbf16>) outs(%[[E]] : tensor<1x4x4x4x16xbf16>) overwrite -> tensor<1x4x4x4x16xbf16>
// CHECK-NEXT: return %[[C]] : tensor<1x4x4x4x16xbf16>
func.func @cast_to_bf16(%x: !X, %w: !W, %i: !T) -> !O {
  %0 = conv3d.conv ins(%x, %w : !X, !W) outs(%i : !T) overwrite -> !T
  %e = tensor.empty() : !O
  %1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%0 : !T) outs(%e : !O) {
  ^bb0(%a: f32, %o: bf16):
    %t = arith.truncf %a : f32 to bf16
    linalg.yield %t : bf16
  } -> !O
  return %1 : !O
}

// -----

// A zero linalg.fill destination first becomes `overwrite` (the conv's
// canonicalization runs with the fusion), then the cast folds.
#id = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
!X = tensor<1x4x4x4x8xbf16>
!W = tensor<1x1x1x8x16xbf16>
!T = tensor<1x4x4x4x16xf32>
!O = tensor<1x4x4x4x16xbf16>

// CHECK-LABEL: func.func @zero_fill_then_cast
// CHECK-NOT: linalg.fill
// CHECK: %[[E:.*]] = tensor.empty() : tensor<1x4x4x4x16xbf16>
// CHECK-NEXT: %[[C:.*]] = conv3d.conv {{.*}} outs(%[[E]] : tensor<1x4x4x4x16xbf16>) overwrite -> tensor<1x4x4x4x16xbf16>
// CHECK-NEXT: return %[[C]]
func.func @zero_fill_then_cast(%x: !X, %w: !W) -> !O {
  %z = arith.constant 0.0 : f32
  %e0 = tensor.empty() : !T
  %i = linalg.fill ins(%z : f32) outs(%e0 : !T) -> !T
  %0 = conv3d.conv ins(%x, %w : !X, !W) outs(%i : !T) -> !T
  %e = tensor.empty() : !O
  %1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%0 : !T) outs(%e : !O) {
  ^bb0(%a: f32, %o: bf16):
    %t = arith.truncf %a : f32 to bf16
    linalg.yield %t : bf16
  } -> !O
  return %1 : !O
}

// -----

// A conv that accumulates onto its f32 destination cannot take the cast:
// the destination would become the cast's.
#id = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
!X = tensor<1x4x4x4x8xbf16>
!W = tensor<1x1x1x8x16xbf16>
!T = tensor<1x4x4x4x16xf32>
!O = tensor<1x4x4x4x16xbf16>

// CHECK-LABEL: func.func @cast_of_accumulating_conv_not_folded
// CHECK-SAME: %[[I:[^:]*]]: tensor<1x4x4x4x16xf32>)
// CHECK: %[[C:.*]] = conv3d.conv {{.*}} outs(%[[I]] : tensor<1x4x4x4x16xf32>) -> tensor<1x4x4x4x16xf32>
// CHECK: %[[G:.*]] = linalg.generic {{.*}} ins(%[[C]] : tensor<1x4x4x4x16xf32>)
// CHECK: arith.truncf
// CHECK: return %[[G]]
func.func @cast_of_accumulating_conv_not_folded(%x: !X, %w: !W, %i: !T) -> !O {
  %0 = conv3d.conv ins(%x, %w : !X, !W) outs(%i : !T) -> !T
  %e = tensor.empty() : !O
  %1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%0 : !T) outs(%e : !O) {
  ^bb0(%a: f32, %o: bf16):
    %t = arith.truncf %a : f32 to bf16
    linalg.yield %t : bf16
  } -> !O
  return %1 : !O
}

// -----

// A chain without activation, bias -> residual -> cast, folds into one conv.
#id = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
#ch = affine_map<(d0, d1, d2, d3, d4) -> (d4)>
!X = tensor<1x4x4x4x8xbf16>
!W = tensor<1x1x1x8x16xbf16>
!T = tensor<1x4x4x4x16xf32>
!O = tensor<1x4x4x4x16xbf16>

// CHECK-LABEL: func.func @bias_residual_cast_chain
// CHECK-SAME: (%[[X:.*]]: tensor<1x4x4x4x8xbf16>, %[[W:.*]]: tensor<1x1x1x8x16xbf16>, %[[B:.*]]: tensor<16xf32>, %[[R:.*]]: tensor<1x4x4x4x16xf32>, %[[I:.*]]: tensor<1x4x4x4x16xf32>)
// CHECK-NOT: linalg.generic
// CHECK-NOT: linalg.add
// CHECK: %[[E:.*]] = tensor.empty() : tensor<1x4x4x4x16xbf16>
// CHECK-NEXT: %[[C:.*]] = conv3d.conv ins(%[[X]], %[[W]] : tensor<1x4x4x4x8xbf16>, tensor<1x1x1x8x16xbf16>) bias(%[[B]] : tensor<16xf32>) residual(%[[R]] : tensor<1x4x4x4x16xf32>) outs(%[[E]] : tensor<1x4x4x4x16xbf16>) overwrite -> tensor<1x4x4x4x16xbf16>
// CHECK-NEXT: return %[[C]]
func.func @bias_residual_cast_chain(%x: !X, %w: !W, %b: tensor<16xf32>, %res: !T, %i: !T) -> !O {
  %0 = conv3d.conv ins(%x, %w : !X, !W) outs(%i : !T) overwrite -> !T
  %e = tensor.empty() : !T
  %1 = linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%0, %b : !T, tensor<16xf32>) outs(%e : !T) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  } -> !T
  %2 = linalg.add ins(%1, %res : !T, !T) outs(%e : !T) -> !T
  %eo = tensor.empty() : !O
  %3 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%2 : !T) outs(%eo : !O) {
  ^bb0(%a: f32, %o: bf16):
    %t = arith.truncf %a : f32 to bf16
    linalg.yield %t : bf16
  } -> !O
  return %3 : !O
}

// -----

// A bias after an activation would change the epilogue's order: a bias
// consumer of a conv that already applies relu does not fold.
#id = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
#ch = affine_map<(d0, d1, d2, d3, d4) -> (d4)>
!X = tensor<1x4x4x4x8xbf16>
!W = tensor<1x1x1x8x16xbf16>
!T = tensor<1x4x4x4x16xf32>

// CHECK-LABEL: func.func @bias_after_activation_not_folded
// CHECK-SAME: %[[B:[^:]*]]: tensor<16xf32>
// CHECK: %[[C:.*]] = conv3d.conv
// CHECK-NOT: bias(
// CHECK-SAME: activation = relu
// CHECK: %[[G:.*]] = linalg.generic {{.*}} ins(%[[C]], %[[B]] : tensor<1x4x4x4x16xf32>, tensor<16xf32>)
// CHECK: return %[[G]]
func.func @bias_after_activation_not_folded(%x: !X, %w: !W, %b: tensor<16xf32>, %i: !T) -> !T {
  %0 = conv3d.conv ins(%x, %w : !X, !W) outs(%i : !T) overwrite activation = relu -> !T
  %e = tensor.empty() : !T
  %1 = linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%0, %b : !T, tensor<16xf32>) outs(%e : !T) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  } -> !T
  return %1 : !T
}

// -----

// An activation after the residual would change the epilogue's order: the
// residual folds, the activation (a constant-free relu body that folds on its
// own, see @relu_without_constants) does not.
#id = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
!X = tensor<1x4x4x4x8xbf16>
!W = tensor<1x1x1x8x16xbf16>
!T = tensor<1x4x4x4x16xf32>

// CHECK-LABEL: func.func @activation_after_residual_not_folded
// CHECK: %[[C:.*]] = conv3d.conv {{.*}} residual(
// CHECK-NOT: activation
// CHECK: %[[G:.*]] = linalg.generic {{.*}} ins(%[[C]] : tensor<1x4x4x4x16xf32>)
// CHECK: arith.maximumf
// CHECK: return %[[G]]
func.func @activation_after_residual_not_folded(%x: !X, %w: !W, %res: !T, %i: !T) -> !T {
  %0 = conv3d.conv ins(%x, %w : !X, !W) outs(%i : !T) overwrite -> !T
  %e = tensor.empty() : !T
  %1 = linalg.add ins(%0, %res : !T, !T) outs(%e : !T) -> !T
  %2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%1 : !T) outs(%e : !T) {
  ^bb0(%a: f32, %o: f32):
    %z = arith.subf %a, %a : f32
    %r = arith.maximumf %a, %z : f32
    linalg.yield %r : f32
  } -> !T
  return %2 : !T
}

// -----

// A conv with two uses stays as it is (its plain result is needed).
#id = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
#ch = affine_map<(d0, d1, d2, d3, d4) -> (d4)>
!X = tensor<1x4x4x4x8xbf16>
!W = tensor<1x1x1x8x16xbf16>
!T = tensor<1x4x4x4x16xf32>

// CHECK-LABEL: func.func @two_uses_not_folded
// CHECK: %[[C:.*]] = conv3d.conv {{.*}} overwrite -> tensor<1x4x4x4x16xf32>
// CHECK: %[[G:.*]] = linalg.generic {{.*}} ins(%[[C]], %{{.*}} : tensor<1x4x4x4x16xf32>, tensor<16xf32>)
// CHECK: %[[A:.*]] = linalg.add ins(%[[C]], %{{.*}} : {{.*}})
// CHECK: return %[[G]], %[[A]]
func.func @two_uses_not_folded(%x: !X, %w: !W, %b: tensor<16xf32>, %res: !T, %i: !T) -> (!T, !T) {
  %0 = conv3d.conv ins(%x, %w : !X, !W) outs(%i : !T) overwrite -> !T
  %e = tensor.empty() : !T
  %1 = linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%0, %b : !T, tensor<16xf32>) outs(%e : !T) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  } -> !T
  %2 = linalg.add ins(%0, %res : !T, !T) outs(%e : !T) -> !T
  return %1, %2 : !T, !T
}

// -----

// A consumer whose residual or bias does not have the convolution's shape
// (linalg.generic does not check static shapes against its maps) is not an
// epilogue: folding it made a conv that does not verify (found by
// conv3d-pass-fuzzer; test/Fuzz/regressions/pass-fuse-epilogue-shape.input).
#id = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
#ch = affine_map<(d0, d1, d2, d3, d4) -> (d4)>
!X = tensor<1x4x4x4x8xbf16>
!W = tensor<1x1x1x8x16xbf16>
!T = tensor<1x4x4x4x16xf32>
!R = tensor<0x4x4x4x16xbf16>

// CHECK-LABEL: func.func @mismatched_residual_not_folded
// CHECK: %[[C:.*]] = conv3d.conv {{.*}} overwrite -> tensor<1x4x4x4x16xf32>
// CHECK-NOT: residual
// CHECK: linalg.generic {{.*}} ins(%[[C]], %{{.*}} : tensor<1x4x4x4x16xf32>, tensor<0x4x4x4x16xbf16>)
func.func @mismatched_residual_not_folded(%x: !X, %w: !W, %r: !R, %i: !T) -> !T {
  %0 = conv3d.conv ins(%x, %w : !X, !W) outs(%i : !T) overwrite -> !T
  %e = tensor.empty() : !T
  %1 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%0, %r : !T, !R) outs(%e : !T) {
  ^bb0(%a: f32, %c: bf16, %o: f32):
    %ce = arith.extf %c : bf16 to f32
    %s = arith.addf %a, %ce : f32
    linalg.yield %s : f32
  } -> !T
  return %1 : !T
}

// CHECK-LABEL: func.func @mismatched_bias_not_folded
// CHECK: %[[C:.*]] = conv3d.conv {{.*}} overwrite -> tensor<1x4x4x4x16xf32>
// CHECK-NOT: bias
// CHECK: linalg.generic {{.*}} ins(%[[C]], %{{.*}} : tensor<1x4x4x4x16xf32>, tensor<0xf32>)
func.func @mismatched_bias_not_folded(%x: !X, %w: !W, %b: tensor<0xf32>, %i: !T) -> !T {
  %0 = conv3d.conv ins(%x, %w : !X, !W) outs(%i : !T) overwrite -> !T
  %e = tensor.empty() : !T
  %1 = linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%0, %b : !T, tensor<0xf32>) outs(%e : !T) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  } -> !T
  return %1 : !T
}
