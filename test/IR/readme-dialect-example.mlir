// The README's dialect example (issue 26, item 9): a causal 3x3x3 bf16
// convolution of a 10-frame input, padded by two frames before along
// depth, keeps 10 output frames; with bias and SiLU fused. The snippet as
// first written (outs of 8 frames) fails the verifier (second split).
//
// RUN: conv3d-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// CHECK-LABEL: func.func @readme
// CHECK: conv3d.conv {{.*}} bias(%{{.*}} : tensor<96xf32>) outs(%{{.*}} : tensor<1x10x32x32x96xbf16>) overwrite padding = [2, 0, 1, 1, 1, 1] activation = silu -> tensor<1x10x32x32x96xbf16>
func.func @readme(%x: tensor<1x10x32x32x96xbf16>, %w: tensor<3x3x3x96x96xbf16>,
                  %b: tensor<96xf32>, %init: tensor<1x10x32x32x96xbf16>)
    -> tensor<1x10x32x32x96xbf16> {
%y = conv3d.conv ins(%x, %w : tensor<1x10x32x32x96xbf16>, tensor<3x3x3x96x96xbf16>)
       bias(%b : tensor<96xf32>)
       outs(%init : tensor<1x10x32x32x96xbf16>) overwrite
       padding = [2, 0, 1, 1, 1, 1] activation = silu
       -> tensor<1x10x32x32x96xbf16>
  return %y : tensor<1x10x32x32x96xbf16>
}

// -----

func.func @readme_as_first_written(%x: tensor<1x10x32x32x96xbf16>, %w: tensor<3x3x3x96x96xbf16>,
                                   %b: tensor<96xf32>, %init: tensor<1x8x32x32x96xbf16>)
    -> tensor<1x8x32x32x96xbf16> {
// expected-error @below {{'conv3d.conv' op outs shape 1x8x32x32x96 is inconsistent with the expected 1x10x32x32x96}}
%y = conv3d.conv ins(%x, %w : tensor<1x10x32x32x96xbf16>, tensor<3x3x3x96x96xbf16>)
       bias(%b : tensor<96xf32>)
       outs(%init : tensor<1x8x32x32x96xbf16>) overwrite
       padding = [2, 0, 1, 1, 1, 1] activation = silu
       -> tensor<1x8x32x32x96xbf16>
  return %y : tensor<1x8x32x32x96xbf16>
}
