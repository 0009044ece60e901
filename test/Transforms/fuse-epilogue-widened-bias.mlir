// A bias or residual that the consumer widens with arith.extf (a bf16
// operand of an f32-output conv) folds: the epilogue widens bias and
// residual of any compute type itself.
//
// RUN: conv3d-opt %s -split-input-file -conv3d-fuse-epilogue | FileCheck %s

#id = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
#ch = affine_map<(d0, d1, d2, d3, d4) -> (d4)>
!X = tensor<1x4x4x4x8xbf16>
!W = tensor<1x1x1x8x16xbf16>
!T = tensor<1x4x4x4x16xf32>

// CHECK-LABEL: func.func @bias_extf
// CHECK: %[[C:.*]] = conv3d.conv {{.*}} bias(
// CHECK-NOT: linalg.generic {{.*}} ins(%[[C]]
// CHECK: return %[[C]]
func.func @bias_extf(%x: !X, %w: !W, %b: tensor<16xbf16>, %i: !T) -> !T {
  %0 = conv3d.conv ins(%x, %w : !X, !W) outs(%i : !T) overwrite -> !T
  %e = tensor.empty() : !T
  %1 = linalg.generic {indexing_maps = [#ch, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%b, %0 : tensor<16xbf16>, !T) outs(%e : !T) {
  ^bb0(%c: bf16, %a: f32, %o: f32):
    %ce = arith.extf %c : bf16 to f32
    %s = arith.addf %ce, %a : f32
    linalg.yield %s : f32
  } -> !T
  return %1 : !T
}

// -----

#id = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
!X = tensor<1x4x4x4x8xbf16>
!W = tensor<1x1x1x8x16xbf16>
!T = tensor<1x4x4x4x16xf32>
!R = tensor<1x4x4x4x16xbf16>

// CHECK-LABEL: func.func @residual_extf
// CHECK: %[[C:.*]] = conv3d.conv {{.*}} residual(
// CHECK-NOT: linalg.generic {{.*}} ins(%[[C]]
// CHECK: return %[[C]]
func.func @residual_extf(%x: !X, %w: !W, %r: !R, %i: !T) -> !T {
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
