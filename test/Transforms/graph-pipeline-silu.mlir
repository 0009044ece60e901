// --conv3d-graph-pipeline on quantize + conv + bias generic + silu generic:
// everything folds into one conv with `activation = silu`.
//
// RUN: conv3d-opt %s --conv3d-graph-pipeline | FileCheck %s
// RUN: conv3d-opt %s --conv3d-graph-pipeline="quant-placement=tile" | FileCheck %s --check-prefix=TILE

// CHECK-LABEL: func.func @quantize_conv_bias_silu
// CHECK-SAME: (%[[X:.*]]: tensor<1x6x8x8x32xbf16>, %[[AMAX:.*]]: f32, %[[W:.*]]: tensor<3x3x3x32x16xbf16>, %[[B:.*]]: tensor<16xf32>, %[[I:.*]]: tensor<1x6x8x8x16xf32>)
// CHECK-NOT: linalg.generic
// CHECK: %[[Q:.*]] = conv3d.quantize #conv3d.nvfp4<block_size = 16> axes = [4] ins(%[[X]] : tensor<1x6x8x8x32xbf16>) amax(%[[AMAX]])
// CHECK-NOT: linalg.generic
// CHECK: %[[C:.*]] = conv3d.conv ins(%[[Q]], %[[W]] : tensor<1x6x8x8x32xbf16>, tensor<3x3x3x32x16xbf16>) bias(%[[B]] : tensor<16xf32>) outs(%[[I]] : tensor<1x6x8x8x16xf32>) overwrite padding = [2, 0, 1, 1, 1, 1] activation = silu config = #conv3d.igemm_config<tile_m = 64, tile_n = 16, tile_k = 64, k_order = qslice_outer> -> tensor<1x6x8x8x16xf32>
// CHECK-NEXT: return %[[C]]

// TILE-LABEL: func.func @quantize_conv_bias_silu
// TILE-NOT: conv3d.quantize
// TILE-NOT: linalg.generic
// TILE: %[[C:.*]] = conv3d.conv {{.*}} bias({{.*}}) quantize(#conv3d.nvfp4<block_size = 16>, %{{.*}}) outs({{.*}}) overwrite padding = [2, 0, 1, 1, 1, 1] activation = silu config =
// TILE-NEXT: return %[[C]]

#id = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
#ch = affine_map<(d0, d1, d2, d3, d4) -> (d4)>
func.func @quantize_conv_bias_silu(%x: tensor<1x6x8x8x32xbf16>, %amax: f32, %w: tensor<3x3x3x32x16xbf16>, %b: tensor<16xf32>, %i: tensor<1x6x8x8x16xf32>) -> tensor<1x6x8x8x16xf32> {
  %eq = tensor.empty() : tensor<1x6x8x8x32xbf16>
  %q = conv3d.quantize #conv3d.nvfp4<block_size = 16> axes = [4] ins(%x : tensor<1x6x8x8x32xbf16>) amax(%amax) outs(%eq : tensor<1x6x8x8x32xbf16>) -> tensor<1x6x8x8x32xbf16>
  %c = conv3d.conv ins(%q, %w : tensor<1x6x8x8x32xbf16>, tensor<3x3x3x32x16xbf16>) outs(%i : tensor<1x6x8x8x16xf32>) overwrite padding = [2, 0, 1, 1, 1, 1] -> tensor<1x6x8x8x16xf32>
  %e = tensor.empty() : tensor<1x6x8x8x16xf32>
  %1 = linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%c, %b : tensor<1x6x8x8x16xf32>, tensor<16xf32>) outs(%e : tensor<1x6x8x8x16xf32>) {
  ^bb0(%a: f32, %bb: f32, %o: f32):
    %s = arith.addf %a, %bb : f32
    linalg.yield %s : f32
  } -> tensor<1x6x8x8x16xf32>
  %2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%1 : tensor<1x6x8x8x16xf32>) outs(%e : tensor<1x6x8x8x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %one = arith.constant 1.0 : f32
    %n = arith.negf %a : f32
    %ex = math.exp %n : f32
    %d = arith.addf %one, %ex : f32
    %r = arith.divf %a, %d : f32
    linalg.yield %r : f32
  } -> tensor<1x6x8x8x16xf32>
  return %2 : tensor<1x6x8x8x16xf32>
}
