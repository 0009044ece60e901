// A cast to bf16 of an f32-input convolution does not fold: conv3d.conv
// outputs f32 or its input element type, so the generic stays.
//
// RUN: conv3d-opt %s -conv3d-fuse-epilogue | FileCheck %s

#id = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
!X = tensor<1x4x4x4x8xf32>
!W = tensor<1x1x1x8x16xf32>
!T = tensor<1x4x4x4x16xf32>
!O = tensor<1x4x4x4x16xbf16>

// CHECK-LABEL: func.func @cast_of_f32_conv
// CHECK: %[[C:.*]] = conv3d.conv {{.*}} outs(%{{.*}} : tensor<1x4x4x4x16xf32>) overwrite -> tensor<1x4x4x4x16xf32>
// CHECK: %[[G:.*]] = linalg.generic {{.*}} ins(%[[C]] : tensor<1x4x4x4x16xf32>)
// CHECK: arith.truncf
// CHECK: return %[[G]]
func.func @cast_of_f32_conv(%x: !X, %w: !W, %i: !T) -> !O {
  %0 = conv3d.conv ins(%x, %w : !X, !W) outs(%i : !T) overwrite -> !T
  %e = tensor.empty() : !O
  %1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%0 : !T) outs(%e : !O) {
  ^bb0(%a: f32, %o: bf16):
    %t = arith.truncf %a : f32 to bf16
    linalg.yield %t : bf16
  } -> !O
  return %1 : !O
}
