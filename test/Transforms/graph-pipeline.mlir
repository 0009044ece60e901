// --conv3d-graph-pipeline end to end: canonicalize (the zero fill becomes
// `overwrite`), fuse-quant, fuse-epilogue (bias, residual, cast), select-config
// and qslice, on a causal 3x3x3 block with an NVFP4-quantized input.
// (An activation in the chain: graph-pipeline-silu.mlir.)
//
// RUN: conv3d-opt %s --conv3d-graph-pipeline | FileCheck %s
// RUN: conv3d-opt %s --conv3d-graph-pipeline="quant-placement=tile target=sm90" 2>%t.remarks | FileCheck %s --check-prefix=TILE
// RUN: FileCheck %s --input-file=%t.remarks --check-prefix=TILE-REMARK
// RUN: conv3d-opt %s --conv3d-graph-pipeline="qslice=separate" | FileCheck %s --check-prefix=SEP
// RUN: conv3d-opt %s --conv3d-graph-pipeline="qslice=none config={tile_m=32,tile_n=16,tile_k=32}" | FileCheck %s --check-prefix=NONE

// Default (cpu, auto placement, auto Q-slices): the 3x3x3 conv keeps the
// quantization as a prepass; bias, residual and the bf16 cast fold into the
// conv, which writes the cast's destination; the heuristic config gets
// k_order = qslice_outer because the causal padding makes slices halo-only.
// CHECK-LABEL: func.func @block
// CHECK-SAME: (%[[X:.*]]: tensor<1x6x8x8x32xbf16>, %[[AMAX:.*]]: f32, %[[W:.*]]: tensor<3x3x3x32x16xbf16>, %[[B:.*]]: tensor<16xf32>, %[[R:.*]]: tensor<1x6x8x8x16xf32>)
// CHECK-NEXT: %[[EQ:.*]] = tensor.empty() : tensor<1x6x8x8x32xbf16>
// CHECK-NEXT: %[[Q:.*]] = conv3d.quantize #conv3d.nvfp4<block_size = 16> axes = [4] ins(%[[X]] : tensor<1x6x8x8x32xbf16>) amax(%[[AMAX]]) outs(%[[EQ]] : tensor<1x6x8x8x32xbf16>)
// CHECK-NEXT: %[[EO:.*]] = tensor.empty() : tensor<1x6x8x8x16xbf16>
// CHECK-NEXT: %[[C:.*]] = conv3d.conv ins(%[[Q]], %[[W]] : tensor<1x6x8x8x32xbf16>, tensor<3x3x3x32x16xbf16>) bias(%[[B]] : tensor<16xf32>) residual(%[[R]] : tensor<1x6x8x8x16xf32>) outs(%[[EO]] : tensor<1x6x8x8x16xbf16>) overwrite padding = [2, 0, 1, 1, 1, 1] config = #conv3d.igemm_config<tile_m = 64, tile_n = 16, tile_k = 64, k_order = qslice_outer> -> tensor<1x6x8x8x16xbf16>
// CHECK-NEXT: return %[[C]] : tensor<1x6x8x8x16xbf16>

// Forced tile placement: the quantize folds into the conv too. On sm90 the
// QRSCF filter (and the quantization in the tile) keep the conv off the sm90
// kernel: a remark, and the sm80 heuristic's config with kernel = sm80.
// TILE-REMARK: graph-pipeline.mlir:[[# @LINE + 29]]:8: remark: conv3d: the sm90 kernel cannot take this convolution (the filter is QRSCF; the TMA filter tiles are K-major (FQRSC)); it runs on the sm80 kernel
// TILE-LABEL: func.func @block
// TILE-NOT: conv3d.quantize
// TILE-NOT: linalg.
// TILE: %[[C:.*]] = conv3d.conv ins(%{{.*}}, %{{.*}} : {{.*}}) bias(%{{.*}}) residual(%{{.*}}) quantize(#conv3d.nvfp4<block_size = 16>, %{{.*}}) outs(%{{.*}} : tensor<1x6x8x8x16xbf16>) overwrite padding = [2, 0, 1, 1, 1, 1] config = #conv3d.igemm_config<tile_m = 64, tile_n = 16, tile_k = 32, stages = 4, warps_m = 2, k_order = qslice_outer, kernel = sm80> ->
// TILE-NEXT: return %[[C]]

// Separate Q-slices: three one-deep slice convs into an f32 accumulator
// (CSE shares the full-depth input slice with the input itself), then the
// epilogue with the fused bias and residual.
// SEP-LABEL: func.func @block
// SEP: %[[Q:.*]] = conv3d.quantize
// SEP: linalg.fill
// SEP-COUNT-3: conv3d.conv {{.*}} padding = [0, 0, 1, 1, 1, 1] config = #conv3d.igemm_config<tile_m = 64, tile_n = 16, tile_k = 64> ->
// SEP: %[[Y:.*]] = conv3d.epilogue ins(%{{.*}} : tensor<1x6x8x8x16xf32>) bias(%{{.*}} : tensor<16xf32>) residual(%{{.*}} : tensor<1x6x8x8x16xf32>) outs(%{{.*}} : tensor<1x6x8x8x16xbf16>) overwrite ->
// SEP-NEXT: return %[[Y]]

// No Q-slicing and a forced config.
// NONE-LABEL: func.func @block
// NONE: conv3d.conv {{.*}} config = #conv3d.igemm_config<tile_m = 32, tile_n = 16, tile_k = 32> ->

#id = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
#ch = affine_map<(d0, d1, d2, d3, d4) -> (d4)>
func.func @block(%x: tensor<1x6x8x8x32xbf16>, %amax: f32, %w: tensor<3x3x3x32x16xbf16>, %b: tensor<16xf32>, %res: tensor<1x6x8x8x16xf32>) -> tensor<1x6x8x8x16xbf16> {
  %eq = tensor.empty() : tensor<1x6x8x8x32xbf16>
  %q = conv3d.quantize #conv3d.nvfp4<block_size = 16> axes = [4] ins(%x : tensor<1x6x8x8x32xbf16>) amax(%amax) outs(%eq : tensor<1x6x8x8x32xbf16>) -> tensor<1x6x8x8x32xbf16>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x6x8x8x16xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x6x8x8x16xf32>) -> tensor<1x6x8x8x16xf32>
  %c = conv3d.conv ins(%q, %w : tensor<1x6x8x8x32xbf16>, tensor<3x3x3x32x16xbf16>) outs(%init : tensor<1x6x8x8x16xf32>) padding = [2, 0, 1, 1, 1, 1] -> tensor<1x6x8x8x16xf32>
  %1 = linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%c, %b : tensor<1x6x8x8x16xf32>, tensor<16xf32>) outs(%e : tensor<1x6x8x8x16xf32>) {
  ^bb0(%a: f32, %bb: f32, %o: f32):
    %s = arith.addf %a, %bb : f32
    linalg.yield %s : f32
  } -> tensor<1x6x8x8x16xf32>
  %2 = linalg.add ins(%1, %res : tensor<1x6x8x8x16xf32>, tensor<1x6x8x8x16xf32>) outs(%e : tensor<1x6x8x8x16xf32>) -> tensor<1x6x8x8x16xf32>
  %eo = tensor.empty() : tensor<1x6x8x8x16xbf16>
  %3 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%2 : tensor<1x6x8x8x16xf32>) outs(%eo : tensor<1x6x8x8x16xbf16>) {
  ^bb0(%a: f32, %o: bf16):
    %t = arith.truncf %a : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<1x6x8x8x16xbf16>
  return %3 : tensor<1x6x8x8x16xbf16>
}
