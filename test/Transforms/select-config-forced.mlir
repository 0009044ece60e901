// conv3d-select-config with `config=`: the given config replaces the
// heuristic's on every convolution that has none; a config already on the op
// still wins. A forced config that names no kernel is for the target's own
// kernel on the GPU targets (kernel = sm80 / sm90); on the CPU it stays as
// given, and a kernel it names is kept.
//
// The value contains commas. MLIR's pass option parser splits options only
// at spaces (and keeps `{...}`, '...' and "..." together, stripping the outer
// braces or quotes of a string value), so the value may be given bare, in
// braces or in quotes, on the command line or in a textual pipeline (where
// the braces keep the commas from separating passes):
//
// RUN: conv3d-opt %s --conv3d-select-config="target=sm80 config=tile_m=64,tile_n=32,tile_k=16" | FileCheck %s
// RUN: conv3d-opt %s --conv3d-select-config="target=sm80 config={tile_m=64,tile_n=32,tile_k=16}" | FileCheck %s
// RUN: conv3d-opt %s --conv3d-select-config="target=sm80 config='tile_m=64,tile_n=32,tile_k=16'" | FileCheck %s
// RUN: conv3d-opt %s --pass-pipeline="builtin.module(conv3d-select-config{target=sm80 config=tile_m=64,tile_n=32,tile_k=16})" | FileCheck %s
// RUN: conv3d-opt %s --pass-pipeline="builtin.module(conv3d-select-config{target=sm80 config={tile_m=64,tile_n=32,tile_k=16}})" | FileCheck %s
//
// Spaces after the commas need the quotes or braces; every key can be set:
// RUN: conv3d-opt %s --conv3d-select-config="config={tile_m=32, tile_n=16, tile_k=64, stages=2, warps_m=2, warps_n=2, k_order=qslice_outer, split_k=1}" | FileCheck %s --check-prefix=ALL
// RUN: conv3d-opt %s --pass-pipeline="builtin.module(conv3d-select-config{config={tile_m=16,tile_n=16,tile_k=16,split_k=3}})" | FileCheck %s --check-prefix=SPLIT
//
// The kernel: sm90 gives a config without one kernel = sm90; where the sm90
// kernel cannot take the convolution (these filters are QRSCF) a forced
// sm90 config is an error naming the reason and the way out (kernel=sm80),
// not a fallback. A named kernel stays, also on the CPU target.
// RUN: not conv3d-opt %s --conv3d-select-config="target=sm90 config=tile_m=128,tile_n=96,tile_k=64" 2>&1 | FileCheck %s --check-prefix=SM90
// RUN: conv3d-opt %s --conv3d-select-config="target=sm90 config=tile_m=64,tile_n=32,tile_k=16,kernel=sm80" | FileCheck %s --check-prefix=SM90TO80
// RUN: conv3d-opt %s --conv3d-select-config="config=tile_m=128,tile_n=96,tile_k=64,kernel=sm90" | FileCheck %s --check-prefix=CPUNAMED
// RUN: conv3d-opt %s --conv3d-select-config="target=cpu config=tile_m=64,tile_n=32,tile_k=16" | FileCheck %s --check-prefix=CPU

// CHECK-LABEL: func.func @no_config
// CHECK: conv3d.conv {{.*}} config = #conv3d.igemm_config<tile_m = 64, tile_n = 32, tile_k = 16, kernel = sm80> ->
// ALL-LABEL: func.func @no_config
// ALL: conv3d.conv {{.*}} config = #conv3d.igemm_config<tile_m = 32, tile_n = 16, tile_k = 64, stages = 2, warps_m = 2, warps_n = 2, k_order = qslice_outer> ->
// SPLIT-LABEL: func.func @no_config
// SPLIT: conv3d.conv {{.*}} config = #conv3d.igemm_config<tile_m = 16, tile_n = 16, tile_k = 16, split_k = 3> ->
// SM90: error: cannot use tile configuration #conv3d.igemm_config<tile_m = 128, tile_n = 96, tile_k = 64, kernel = sm90>: the sm90 kernel cannot take this convolution (the filter is QRSCF; the TMA filter tiles are K-major (FQRSC)); force an sm80 configuration with kernel=sm80
// SM90TO80-LABEL: func.func @no_config
// SM90TO80: conv3d.conv {{.*}} config = #conv3d.igemm_config<tile_m = 64, tile_n = 32, tile_k = 16, kernel = sm80> ->
// CPUNAMED-LABEL: func.func @no_config
// CPUNAMED: conv3d.conv {{.*}} config = #conv3d.igemm_config<tile_m = 128, tile_n = 96, tile_k = 64, kernel = sm90> ->
// CPU-LABEL: func.func @no_config
// CPU: conv3d.conv {{.*}} config = #conv3d.igemm_config<tile_m = 64, tile_n = 32, tile_k = 16> ->
func.func @no_config(%x: tensor<1x10x34x34x96xbf16>, %w: tensor<3x3x3x96x96xbf16>, %i: tensor<1x8x32x32x96xbf16>) -> tensor<1x8x32x32x96xbf16> {
  %0 = conv3d.conv ins(%x, %w : tensor<1x10x34x34x96xbf16>, tensor<3x3x3x96x96xbf16>) outs(%i : tensor<1x8x32x32x96xbf16>) overwrite -> tensor<1x8x32x32x96xbf16>
  return %0 : tensor<1x8x32x32x96xbf16>
}

// CHECK-LABEL: func.func @existing_config
// CHECK: conv3d.conv {{.*}} config = #conv3d.igemm_config<tile_m = 128, tile_n = 96, tile_k = 32, stages = 3> ->
// ALL-LABEL: func.func @existing_config
// ALL: conv3d.conv {{.*}} config = #conv3d.igemm_config<tile_m = 128, tile_n = 96, tile_k = 32, stages = 3> ->
func.func @existing_config(%x: tensor<1x10x34x34x96xbf16>, %w: tensor<3x3x3x96x96xbf16>, %i: tensor<1x8x32x32x96xbf16>) -> tensor<1x8x32x32x96xbf16> {
  %0 = conv3d.conv ins(%x, %w : tensor<1x10x34x34x96xbf16>, tensor<3x3x3x96x96xbf16>) outs(%i : tensor<1x8x32x32x96xbf16>) overwrite config = #conv3d.igemm_config<tile_m = 128, tile_n = 96, tile_k = 32, stages = 3> -> tensor<1x8x32x32x96xbf16>
  return %0 : tensor<1x8x32x32x96xbf16>
}

// A forced config whose tile_k is a multiple of the block size serves a
// quantized convolution as it is.
// CHECK-LABEL: func.func @quantized
// CHECK: conv3d.conv {{.*}} quantize(#conv3d.nvfp4<block_size = 16>, %{{.*}}) {{.*}} config = #conv3d.igemm_config<tile_m = 64, tile_n = 32, tile_k = 16, kernel = sm80> ->
func.func @quantized(%x: tensor<1x8x8x8x32xbf16>, %w: tensor<1x1x1x32x32xbf16>, %amax: f32, %i: tensor<1x8x8x8x32xbf16>) -> tensor<1x8x8x8x32xbf16> {
  %0 = conv3d.conv ins(%x, %w : tensor<1x8x8x8x32xbf16>, tensor<1x1x1x32x32xbf16>) quantize(#conv3d.nvfp4<block_size = 16>, %amax) outs(%i : tensor<1x8x8x8x32xbf16>) overwrite -> tensor<1x8x8x8x32xbf16>
  return %0 : tensor<1x8x8x8x32xbf16>
}
