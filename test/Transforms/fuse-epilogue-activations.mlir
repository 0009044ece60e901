// Activations whose bodies use constants fold: the greedy driver hoists the
// constants out of the linalg.generic body, and the body evaluator reads
// such outside constants too (as it does constants front ends emit outside).
//
// RUN: conv3d-opt %s -split-input-file -conv3d-fuse-epilogue | FileCheck %s

#id = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
!X = tensor<1x4x4x4x8xbf16>
!W = tensor<1x1x1x8x16xbf16>
!T = tensor<1x4x4x4x16xf32>

// CHECK-LABEL: func.func @relu_maximumf
// CHECK-NOT: linalg.generic
// CHECK: %[[C:.*]] = conv3d.conv {{.*}} overwrite activation = relu ->
// CHECK-NEXT: return %[[C]]
func.func @relu_maximumf(%x: !X, %w: !W, %i: !T) -> !T {
  %0 = conv3d.conv ins(%x, %w : !X, !W) outs(%i : !T) overwrite -> !T
  %e = tensor.empty() : !T
  %1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%0 : !T) outs(%e : !T) {
  ^bb0(%a: f32, %o: f32):
    %z = arith.constant 0.0 : f32
    %r = arith.maximumf %a, %z : f32
    linalg.yield %r : f32
  } -> !T
  return %1 : !T
}


// -----


#id = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
!X = tensor<1x4x4x4x8xbf16>
!W = tensor<1x1x1x8x16xbf16>
!T = tensor<1x4x4x4x16xf32>

// CHECK-LABEL: func.func @relu_cmpf_select
// CHECK-NOT: linalg.generic
// CHECK: %[[C:.*]] = conv3d.conv {{.*}} overwrite activation = relu ->
// CHECK-NEXT: return %[[C]]
func.func @relu_cmpf_select(%x: !X, %w: !W, %i: !T) -> !T {
  %0 = conv3d.conv ins(%x, %w : !X, !W) outs(%i : !T) overwrite -> !T
  %e = tensor.empty() : !T
  %1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%0 : !T) outs(%e : !T) {
  ^bb0(%a: f32, %o: f32):
    %zero = arith.constant 0.0 : f32
    %p = arith.cmpf ogt, %a, %zero : f32
    %r = arith.select %p, %a, %zero : f32
    linalg.yield %r : f32
  } -> !T
  return %1 : !T
}


// -----


// SiLU as x * sigmoid(x), with the reciprocal spelled out.
#id = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
!X = tensor<1x4x4x4x8xbf16>
!W = tensor<1x1x1x8x16xbf16>
!T = tensor<1x4x4x4x16xf32>

// CHECK-LABEL: func.func @silu_times_sigmoid
// CHECK-NOT: linalg.generic
// CHECK: %[[C:.*]] = conv3d.conv {{.*}} overwrite activation = silu ->
// CHECK-NEXT: return %[[C]]
func.func @silu_times_sigmoid(%x: !X, %w: !W, %i: !T) -> !T {
  %0 = conv3d.conv ins(%x, %w : !X, !W) outs(%i : !T) overwrite -> !T
  %e = tensor.empty() : !T
  %1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%0 : !T) outs(%e : !T) {
  ^bb0(%a: f32, %o: f32):
    %one = arith.constant 1.0 : f32
    %n = arith.negf %a : f32
    %ex = math.exp %n : f32
    %d = arith.addf %one, %ex : f32
    %s = arith.divf %one, %d : f32
    %r = arith.mulf %a, %s : f32
    linalg.yield %r : f32
  } -> !T
  return %1 : !T
}


// -----


// SiLU as x / (1 + exp(-x)), with -x as 0 - x.
#id = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
!X = tensor<1x4x4x4x8xbf16>
!W = tensor<1x1x1x8x16xbf16>
!T = tensor<1x4x4x4x16xf32>

// CHECK-LABEL: func.func @silu_divide
// CHECK-NOT: linalg.generic
// CHECK: %[[C:.*]] = conv3d.conv {{.*}} overwrite activation = silu ->
// CHECK-NEXT: return %[[C]]
func.func @silu_divide(%x: !X, %w: !W, %i: !T) -> !T {
  %0 = conv3d.conv ins(%x, %w : !X, !W) outs(%i : !T) overwrite -> !T
  %e = tensor.empty() : !T
  %1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%0 : !T) outs(%e : !T) {
  ^bb0(%a: f32, %o: f32):
    %zero = arith.constant 0.0 : f32
    %one = arith.constant 1.0 : f32
    %n = arith.subf %zero, %a : f32
    %ex = math.exp %n : f32
    %d = arith.addf %ex, %one : f32
    %r = arith.divf %a, %d : f32
    linalg.yield %r : f32
  } -> !T
  return %1 : !T
}


// -----


// GELU, tanh approximation: 0.5 * x * (1 + tanh(0.7978845608 * (x + 0.044715 * x^3))).
#id = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
!X = tensor<1x4x4x4x8xbf16>
!W = tensor<1x1x1x8x16xbf16>
!T = tensor<1x4x4x4x16xf32>

// CHECK-LABEL: func.func @gelu_tanh
// CHECK-NOT: linalg.generic
// CHECK: %[[C:.*]] = conv3d.conv {{.*}} overwrite activation = gelu_tanh ->
// CHECK-NEXT: return %[[C]]
func.func @gelu_tanh(%x: !X, %w: !W, %i: !T) -> !T {
  %0 = conv3d.conv ins(%x, %w : !X, !W) outs(%i : !T) overwrite -> !T
  %e = tensor.empty() : !T
  %1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%0 : !T) outs(%e : !T) {
  ^bb0(%a: f32, %o: f32):
    %half = arith.constant 0.5 : f32
    %one = arith.constant 1.0 : f32
    %k = arith.constant 0.7978845608 : f32
    %c = arith.constant 0.044715 : f32
    %x2 = arith.mulf %a, %a : f32
    %x3 = arith.mulf %x2, %a : f32
    %cx3 = arith.mulf %c, %x3 : f32
    %inner = arith.addf %a, %cx3 : f32
    %scaled = arith.mulf %k, %inner : f32
    %t = math.tanh %scaled : f32
    %onept = arith.addf %one, %t : f32
    %hx = arith.mulf %half, %a : f32
    %r = arith.mulf %hx, %onept : f32
    linalg.yield %r : f32
  } -> !T
  return %1 : !T
}


// -----


// The whole chain bias -> silu -> residual -> cast folds into one conv.
#id = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
#ch = affine_map<(d0, d1, d2, d3, d4) -> (d4)>
!X = tensor<1x4x4x4x8xbf16>
!W = tensor<1x1x1x8x16xbf16>
!T = tensor<1x4x4x4x16xf32>
!O = tensor<1x4x4x4x16xbf16>

// CHECK-LABEL: func.func @whole_chain
// CHECK-SAME: (%[[X:.*]]: tensor<1x4x4x4x8xbf16>, %[[W:.*]]: tensor<1x1x1x8x16xbf16>, %[[B:.*]]: tensor<16xf32>, %[[R:.*]]: tensor<1x4x4x4x16xf32>, %[[I:.*]]: tensor<1x4x4x4x16xf32>)
// CHECK-NOT: linalg.generic
// CHECK: %[[E:.*]] = tensor.empty() : tensor<1x4x4x4x16xbf16>
// CHECK-NOT: linalg.generic
// CHECK: %[[C:.*]] = conv3d.conv ins(%[[X]], %[[W]] : tensor<1x4x4x4x8xbf16>, tensor<1x1x1x8x16xbf16>) bias(%[[B]] : tensor<16xf32>) residual(%[[R]] : tensor<1x4x4x4x16xf32>) outs(%[[E]] : tensor<1x4x4x4x16xbf16>) overwrite activation = silu -> tensor<1x4x4x4x16xbf16>
// CHECK-NEXT: return %[[C]]
func.func @whole_chain(%x: !X, %w: !W, %b: tensor<16xf32>, %res: !T, %i: !T) -> !O {
  %0 = conv3d.conv ins(%x, %w : !X, !W) outs(%i : !T) overwrite -> !T
  %e = tensor.empty() : !T
  %1 = linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%0, %b : !T, tensor<16xf32>) outs(%e : !T) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  } -> !T
  %2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%1 : !T) outs(%e : !T) {
  ^bb0(%a: f32, %o: f32):
    %one = arith.constant 1.0 : f32
    %n = arith.negf %a : f32
    %ex = math.exp %n : f32
    %d = arith.addf %one, %ex : f32
    %r = arith.divf %a, %d : f32
    linalg.yield %r : f32
  } -> !T
  %3 = linalg.add ins(%2, %res : !T, !T) outs(%e : !T) -> !T
  %eo = tensor.empty() : !O
  %4 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%3 : !T) outs(%eo : !O) {
  ^bb0(%a: f32, %o: bf16):
    %t = arith.truncf %a : f32 to bf16
    linalg.yield %t : bf16
  } -> !O
  return %4 : !O
}

// -----

// The constant defined outside the body.
#id = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
!X = tensor<1x4x4x4x8xbf16>
!W = tensor<1x1x1x8x16xbf16>
!T = tensor<1x4x4x4x16xf32>

// CHECK-LABEL: func.func @relu_constant_outside_body
// CHECK-NOT: linalg.generic
// CHECK: %[[C:.*]] = conv3d.conv {{.*}} overwrite activation = relu ->
// CHECK-NEXT: return %[[C]]
func.func @relu_constant_outside_body(%x: !X, %w: !W, %i: !T) -> !T {
  %z = arith.constant 0.0 : f32
  %0 = conv3d.conv ins(%x, %w : !X, !W) outs(%i : !T) overwrite -> !T
  %e = tensor.empty() : !T
  %1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%0 : !T) outs(%e : !T) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.maximumf %a, %z : f32
    linalg.yield %r : f32
  } -> !T
  return %1 : !T
}
