// conv3d-fuse-epilogue matches the body of a consumer, not its op count:
// one linalg.generic computing several consecutive parts of the epilogue
// cast(act(acc + bias) + residual) folds as a whole (issue 26, item 8: a
// bias + ReLU written as one generic), and one computing them out of order
// does not.
//
// RUN: conv3d-opt %s -split-input-file -conv3d-fuse-epilogue | FileCheck %s

#id = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
#ch = affine_map<(d0, d1, d2, d3, d4) -> (d4)>
!X = tensor<1x4x4x4x8xbf16>
!W = tensor<1x1x1x8x16xbf16>
!T = tensor<1x4x4x4x16xbf16>

// bias + ReLU in one bf16 generic, as front ends write it.
// CHECK-LABEL: func.func @bias_relu
// CHECK-SAME: %[[B:[^:]*]]: tensor<16xbf16>
// CHECK-NOT: linalg.generic
// CHECK: %[[C:.*]] = conv3d.conv {{.*}} bias(%[[B]] : tensor<16xbf16>) outs({{.*}}) overwrite activation = relu -> tensor<1x4x4x4x16xbf16>
// CHECK-NEXT: return %[[C]]
func.func @bias_relu(%x: !X, %w: !W, %b: tensor<16xbf16>, %i: !T) -> !T {
  %0 = conv3d.conv ins(%x, %w : !X, !W) outs(%i : !T) overwrite -> !T
  %e = tensor.empty() : !T
  %1 = linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%0, %b : !T, tensor<16xbf16>) outs(%e : !T) {
  ^bb0(%a: bf16, %c: bf16, %o: bf16):
    %zero = arith.constant 0.0 : bf16
    %s = arith.addf %a, %c : bf16
    %r = arith.maximumf %s, %zero : bf16
    linalg.yield %r : bf16
  } -> !T
  return %1 : !T
}

// -----

// The whole epilogue in one generic whose inputs come in another order:
// residual, bias, conv; SiLU as x * sigmoid(x), then the f32 -> bf16 cast.
#id = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
#ch = affine_map<(d0, d1, d2, d3, d4) -> (d4)>
!X = tensor<1x4x4x4x8xbf16>
!W = tensor<1x1x1x8x16xbf16>
!T = tensor<1x4x4x4x16xf32>
!O = tensor<1x4x4x4x16xbf16>

// CHECK-LABEL: func.func @whole_epilogue
// CHECK-SAME: (%[[X:.*]]: tensor<1x4x4x4x8xbf16>, %[[W:.*]]: tensor<1x1x1x8x16xbf16>, %[[B:.*]]: tensor<16xf32>, %[[R:.*]]: tensor<1x4x4x4x16xf32>, %[[I:.*]]: tensor<1x4x4x4x16xf32>)
// CHECK-NOT: linalg.generic
// CHECK: %[[C:.*]] = conv3d.conv ins(%[[X]], %[[W]] : {{.*}}) bias(%[[B]] : tensor<16xf32>) residual(%[[R]] : tensor<1x4x4x4x16xf32>) outs(%{{.*}} : tensor<1x4x4x4x16xbf16>) overwrite activation = silu -> tensor<1x4x4x4x16xbf16>
// CHECK-NEXT: return %[[C]]
func.func @whole_epilogue(%x: !X, %w: !W, %b: tensor<16xf32>, %res: !T, %i: !T) -> !O {
  %0 = conv3d.conv ins(%x, %w : !X, !W) outs(%i : !T) overwrite -> !T
  %e = tensor.empty() : !O
  %1 = linalg.generic {indexing_maps = [#id, #ch, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%res, %b, %0 : !T, tensor<16xf32>, !T) outs(%e : !O) {
  ^bb0(%r: f32, %c: f32, %a: f32, %o: bf16):
    %one = arith.constant 1.0 : f32
    %s = arith.addf %c, %a : f32
    %n = arith.negf %s : f32
    %ex = math.exp %n : f32
    %den = arith.addf %one, %ex : f32
    %sig = arith.divf %one, %den : f32
    %act = arith.mulf %s, %sig : f32
    %sum = arith.addf %act, %r : f32
    %t = arith.truncf %sum : f32 to bf16
    linalg.yield %t : bf16
  } -> !O
  return %1 : !O
}

// -----

// ReLU before the bias, relu(x) + b, is not act(x + b): no fold.
#id = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
#ch = affine_map<(d0, d1, d2, d3, d4) -> (d4)>
!X = tensor<1x4x4x4x8xbf16>
!W = tensor<1x1x1x8x16xbf16>
!T = tensor<1x4x4x4x16xf32>

// CHECK-LABEL: func.func @relu_then_bias
// CHECK: %[[C:.*]] = conv3d.conv {{.*}} outs({{.*}}) overwrite -> tensor<1x4x4x4x16xf32>
// CHECK: linalg.generic {{.*}} ins(%[[C]]
// CHECK: arith.maximumf
func.func @relu_then_bias(%x: !X, %w: !W, %b: tensor<16xf32>, %i: !T) -> !T {
  %0 = conv3d.conv ins(%x, %w : !X, !W) outs(%i : !T) overwrite -> !T
  %e = tensor.empty() : !T
  %1 = linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%0, %b : !T, tensor<16xf32>) outs(%e : !T) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %zero = arith.constant 0.0 : f32
    %r = arith.maximumf %a, %zero : f32
    %s = arith.addf %r, %c : f32
    linalg.yield %s : f32
  } -> !T
  return %1 : !T
}

// -----

// ReLU then a residual, relu(x) + r: the epilogue without a bias.
#id = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
!X = tensor<1x4x4x4x8xbf16>
!W = tensor<1x1x1x8x16xbf16>
!T = tensor<1x4x4x4x16xf32>

// CHECK-LABEL: func.func @relu_residual
// CHECK-SAME: %[[R:[^:]*]]: tensor<1x4x4x4x16xf32>, %{{[^:]*}}: tensor<1x4x4x4x16xf32>)
// CHECK-NOT: linalg.generic
// CHECK: %[[C:.*]] = conv3d.conv {{.*}} residual(%[[R]] : tensor<1x4x4x4x16xf32>) outs({{.*}}) overwrite activation = relu ->
// CHECK-NEXT: return %[[C]]
func.func @relu_residual(%x: !X, %w: !W, %r: !T, %i: !T) -> !T {
  %0 = conv3d.conv ins(%x, %w : !X, !W) outs(%i : !T) overwrite -> !T
  %e = tensor.empty() : !T
  %1 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%0, %r : !T, !T) outs(%e : !T) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %zero = arith.constant 0.0 : f32
    %m = arith.maximumf %a, %zero : f32
    %s = arith.addf %m, %c : f32
    linalg.yield %s : f32
  } -> !T
  return %1 : !T
}

// -----

// A bias + ReLU generic after a conv that already has a bias: a second bias
// would come after the first's activation-free sum, fine in arithmetic but
// conv3d.conv has one bias operand: no fold.
#id = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
#ch = affine_map<(d0, d1, d2, d3, d4) -> (d4)>
!X = tensor<1x4x4x4x8xbf16>
!W = tensor<1x1x1x8x16xbf16>
!T = tensor<1x4x4x4x16xf32>

// CHECK-LABEL: func.func @second_bias
// CHECK: %[[C:.*]] = conv3d.conv {{.*}} bias(%{{.*}}) outs({{.*}}) overwrite -> tensor<1x4x4x4x16xf32>
// CHECK: linalg.generic {{.*}} ins(%[[C]]
func.func @second_bias(%x: !X, %w: !W, %b: tensor<16xf32>, %b2: tensor<16xf32>, %i: !T) -> !T {
  %0 = conv3d.conv ins(%x, %w : !X, !W) bias(%b : tensor<16xf32>) outs(%i : !T) overwrite -> !T
  %e = tensor.empty() : !T
  %1 = linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%0, %b2 : !T, tensor<16xf32>) outs(%e : !T) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %zero = arith.constant 0.0 : f32
    %s = arith.addf %a, %c : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> !T
  return %1 : !T
}
