// RUN: conv3d-opt --conv3d-fold-upsample --split-input-file %s | FileCheck %s

// conv3d-fold-upsample: a convolution of a nearest-upsampled tensor becomes
// the data gradient of the tensor before upsampling, with the folded filter
// (window K + 1 on upsampled axes, taps K-1-t and K-t summed; rotated
// elsewhere) and padding K - 1 - lo / K - 1 - hi. Numerics:
// test/Execution/fold-upsample.test.

#up = affine_map<(n, d, h, w, c) -> (n, d, h floordiv 2, w floordiv 2, c)>
#id = affine_map<(n, d, h, w, c) -> (n, d, h, w, c)>

// H and W upsampled, a 1x3x3 window, QRSCF, bf16: the taps are summed in
// f32 and rounded once; the outs and overwrite are kept.
// CHECK-DAG: #[[T00:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (-d0, -d1 + 3, -d2 + 3, d4, d3)>
// CHECK-DAG: #[[T10:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (-d0, -d1 + 4, -d2 + 3, d4, d3)>
// CHECK-DAG: #[[T01:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (-d0, -d1 + 3, -d2 + 4, d4, d3)>
// CHECK-DAG: #[[T11:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (-d0, -d1 + 4, -d2 + 4, d4, d3)>
// CHECK-LABEL: func.func @up2d(
// CHECK-SAME: %[[X:.*]]: tensor<1x2x3x4x8xbf16>, %[[W:.*]]: tensor<1x3x3x8x16xbf16>
// CHECK: %[[OUT:.*]] = tensor.empty() : tensor<1x2x6x8x16xf32>
// CHECK: %[[PAD:.*]] = tensor.pad %[[W]] low[0, 1, 1, 0, 0] high[0, 1, 1, 0, 0]
// CHECK: tensor<1x3x3x8x16xbf16> to tensor<1x5x5x8x16xbf16>
// CHECK: %[[FOLDED:.*]] = linalg.generic {indexing_maps = [#[[T00]], #[[T10]], #[[T01]], #[[T11]], #{{.*}}]
// CHECK-SAME: ins(%[[PAD]], %[[PAD]], %[[PAD]], %[[PAD]] :
// CHECK-COUNT-4: arith.extf
// CHECK: arith.truncf
// CHECK: } -> tensor<1x4x4x16x8xbf16>
// CHECK: conv3d.conv_backward_data ins(%[[X]], %[[FOLDED]] : tensor<1x2x3x4x8xbf16>, tensor<1x4x4x16x8xbf16>)
// CHECK-SAME: outs(%[[OUT]] : tensor<1x2x6x8x16xf32>) overwrite strides = [1, 2, 2] padding = [0, 0, 1, 1, 1, 1]
// CHECK-NOT: conv3d.conv ins
func.func @up2d(%x: tensor<1x2x3x4x8xbf16>, %w: tensor<1x3x3x8x16xbf16>) -> tensor<1x2x6x8x16xf32> {
  %e = tensor.empty() : tensor<1x2x6x8x8xbf16>
  %u = linalg.generic {indexing_maps = [#up, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<1x2x3x4x8xbf16>) outs(%e : tensor<1x2x6x8x8xbf16>) {
    ^bb0(%a: bf16, %b: bf16):
      linalg.yield %a : bf16
  } -> tensor<1x2x6x8x8xbf16>
  %o = tensor.empty() : tensor<1x2x6x8x16xf32>
  %y = conv3d.conv ins(%u, %w : tensor<1x2x6x8x8xbf16>, tensor<1x3x3x8x16xbf16>) outs(%o : tensor<1x2x6x8x16xf32>) overwrite padding = [0, 0, 1, 1, 1, 1] -> tensor<1x2x6x8x16xf32>
  return %y : tensor<1x2x6x8x16xf32>
}

// -----

// D, H and W upsampled, FQRSC (kept: C x window x F, K-major for the sm90
// kernel), asymmetric padding, accumulating onto the outs (no overwrite):
// 8 tap combinations, padding K - 1 - lo / K - 1 - hi.
#up3 = affine_map<(n, d, h, w, c) -> (n, d floordiv 2, h floordiv 2, w floordiv 2, c)>
#id = affine_map<(n, d, h, w, c) -> (n, d, h, w, c)>
// CHECK-DAG: #[[F000:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d4, -d1 + 3, -d2 + 2, -d3 + 3, d0)>
// CHECK-DAG: #[[F111:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d4, -d1 + 4, -d2 + 3, -d3 + 4, d0)>
// CHECK-LABEL: func.func @up3d(
// CHECK-SAME: %[[X:.*]]: tensor<2x2x3x4x5xf32>, %[[W:.*]]: tensor<6x3x2x3x5xf32>, %[[ACC:.*]]: tensor<2x5x7x8x6xf32>
// CHECK: tensor.pad %[[W]] low[0, 1, 1, 1, 0] high[0, 1, 1, 1, 0]
// CHECK: %[[FOLDED:.*]] = linalg.generic {indexing_maps = [#[[F000]], #{{.*}}, #{{.*}}, #{{.*}}, #{{.*}}, #{{.*}}, #{{.*}}, #[[F111]], #{{.*}}]
// CHECK-COUNT-7: arith.addf
// CHECK: -> tensor<5x4x3x4x6xf32>
// CHECK: conv3d.conv_backward_data ins(%[[X]], %[[FOLDED]] : tensor<2x2x3x4x5xf32>, tensor<5x4x3x4x6xf32>)
// CHECK-SAME: outs(%[[ACC]] : tensor<2x5x7x8x6xf32>) strides = [2, 2, 2] padding = [0, 1, 0, 0, 2, 0] filter_layout = fqrsc
func.func @up3d(%x: tensor<2x2x3x4x5xf32>, %w: tensor<6x3x2x3x5xf32>, %acc: tensor<2x5x7x8x6xf32>) -> tensor<2x5x7x8x6xf32> {
  %e = tensor.empty() : tensor<2x4x6x8x5xf32>
  %u = linalg.generic {indexing_maps = [#up3, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<2x2x3x4x5xf32>) outs(%e : tensor<2x4x6x8x5xf32>) {
    ^bb0(%a: f32, %b: f32):
      linalg.yield %a : f32
  } -> tensor<2x4x6x8x5xf32>
  %y = conv3d.conv ins(%u, %w : tensor<2x4x6x8x5xf32>, tensor<6x3x2x3x5xf32>) outs(%acc : tensor<2x5x7x8x6xf32>) padding = [2, 1, 1, 1, 0, 2] filter_layout = fqrsc -> tensor<2x5x7x8x6xf32>
  return %y : tensor<2x5x7x8x6xf32>
}

// -----

// Not folded: a strided convolution, a dilated one, padding beyond the
// window minus one, an epilogue (the clause stays on the convolution), a
// copy that is not an upsampling (a factor of 3; a body that computes).
#up = affine_map<(n, d, h, w, c) -> (n, d, h floordiv 2, w floordiv 2, c)>
#up3 = affine_map<(n, d, h, w, c) -> (n, d, h floordiv 3, w, c)>
#id = affine_map<(n, d, h, w, c) -> (n, d, h, w, c)>
// CHECK-LABEL: func.func @not_folded(
// CHECK-NOT: conv3d.conv_backward_data
// CHECK-COUNT-6: conv3d.conv ins
// CHECK-NOT: conv3d.conv_backward_data
func.func @not_folded(%x: tensor<1x2x4x4x8xf32>, %w: tensor<1x3x3x8x8xf32>, %b: tensor<8xf32>)
    -> (tensor<1x2x4x4x8xf32>, tensor<1x2x4x4x8xf32>, tensor<1x2x10x10x8xf32>, tensor<1x2x8x8x8xf32>, tensor<1x2x12x4x8xf32>, tensor<1x2x8x8x8xf32>) {
  %e = tensor.empty() : tensor<1x2x8x8x8xf32>
  %u = linalg.generic {indexing_maps = [#up, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<1x2x4x4x8xf32>) outs(%e : tensor<1x2x8x8x8xf32>) {
    ^bb0(%a: f32, %o: f32):
      linalg.yield %a : f32
  } -> tensor<1x2x8x8x8xf32>
  %small = tensor.empty() : tensor<1x2x4x4x8xf32>
  %strided = conv3d.conv ins(%u, %w : tensor<1x2x8x8x8xf32>, tensor<1x3x3x8x8xf32>) outs(%small : tensor<1x2x4x4x8xf32>) overwrite strides = [1, 2, 2] padding = [0, 0, 1, 1, 1, 1] -> tensor<1x2x4x4x8xf32>
  %dilated = conv3d.conv ins(%u, %w : tensor<1x2x8x8x8xf32>, tensor<1x3x3x8x8xf32>) outs(%small : tensor<1x2x4x4x8xf32>) overwrite dilations = [1, 2, 2] -> tensor<1x2x4x4x8xf32>
  %big = tensor.empty() : tensor<1x2x10x10x8xf32>
  %padded = conv3d.conv ins(%u, %w : tensor<1x2x8x8x8xf32>, tensor<1x3x3x8x8xf32>) outs(%big : tensor<1x2x10x10x8xf32>) overwrite padding = [0, 0, 3, 1, 3, 1] -> tensor<1x2x10x10x8xf32>
  %same = tensor.empty() : tensor<1x2x8x8x8xf32>
  %biased = conv3d.conv ins(%u, %w : tensor<1x2x8x8x8xf32>, tensor<1x3x3x8x8xf32>) bias(%b : tensor<8xf32>) outs(%same : tensor<1x2x8x8x8xf32>) overwrite padding = [0, 0, 1, 1, 1, 1] -> tensor<1x2x8x8x8xf32>
  %e3 = tensor.empty() : tensor<1x2x12x4x8xf32>
  %u3 = linalg.generic {indexing_maps = [#up3, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<1x2x4x4x8xf32>) outs(%e3 : tensor<1x2x12x4x8xf32>) {
    ^bb0(%a: f32, %o: f32):
      linalg.yield %a : f32
  } -> tensor<1x2x12x4x8xf32>
  %e12 = tensor.empty() : tensor<1x2x12x4x8xf32>
  %by3 = conv3d.conv ins(%u3, %w : tensor<1x2x12x4x8xf32>, tensor<1x3x3x8x8xf32>) outs(%e12 : tensor<1x2x12x4x8xf32>) overwrite padding = [0, 0, 1, 1, 1, 1] -> tensor<1x2x12x4x8xf32>
  %ud = linalg.generic {indexing_maps = [#up, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<1x2x4x4x8xf32>) outs(%e : tensor<1x2x8x8x8xf32>) {
    ^bb0(%a: f32, %o: f32):
      %twice = arith.addf %a, %a : f32
      linalg.yield %twice : f32
  } -> tensor<1x2x8x8x8xf32>
  %computed = conv3d.conv ins(%ud, %w : tensor<1x2x8x8x8xf32>, tensor<1x3x3x8x8xf32>) outs(%same : tensor<1x2x8x8x8xf32>) overwrite padding = [0, 0, 1, 1, 1, 1] -> tensor<1x2x8x8x8xf32>
  return %strided, %dilated, %padded, %biased, %by3, %computed : tensor<1x2x4x4x8xf32>, tensor<1x2x4x4x8xf32>, tensor<1x2x10x10x8xf32>, tensor<1x2x8x8x8xf32>, tensor<1x2x12x4x8xf32>, tensor<1x2x8x8x8xf32>
}
