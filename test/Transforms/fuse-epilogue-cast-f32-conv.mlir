// BUG (XFAIL): conv3d-fuse-epilogue folds an f32 -> bf16 cast into an
// overwrite convolution with f32 *inputs*, producing a conv whose outs
// element type (bf16) is neither f32 nor the input element type (f32). The
// verifier then rejects the pass's output:
//   'conv3d.conv' op outs element type must be f32 or the input element
//   type 'f32', got 'bf16'
// The Cast step in FoldConsumerIntoEpilogue checks only `overwrite` and an
// f32 destination; it must also require the cast's element type to be the
// conv's input element type (else leave the generic alone).
//
// Input: @cast_of_f32_conv. Expected: pass succeeds, the generic stays.
// Actual: invalid IR (pass failure).
//
// XFAIL: *
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
