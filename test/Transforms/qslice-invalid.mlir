// Errors of conv3d-qslice: bad options, and a forced strategy that cannot
// apply. `auto` skips the same convolutions silently.
//
// RUN: split-file %s %t
// RUN: not conv3d-opt %t/bad-strategy.mlir -conv3d-qslice=strategy=sliced 2>&1 | FileCheck %s --check-prefix=BAD-STRATEGY
// An unknown value of a typed option is a command-line error naming it:
// BAD-STRATEGY: for the --strategy option: Cannot find option named 'sliced'
// RUN: not conv3d-opt %t/bad-target.mlir -conv3d-qslice=target=sm70 2>&1 | FileCheck %s --check-prefix=BAD-TARGET
// An unknown target is a command-line error that names the value:
// BAD-TARGET: for the --target option: Cannot find option named 'sm70'
// RUN: conv3d-opt %t/straddle-fused.mlir -split-input-file -conv3d-qslice=strategy=fused -verify-diagnostics
// RUN: conv3d-opt %t/straddle-separate.mlir -split-input-file -conv3d-qslice=strategy=separate -verify-diagnostics
// RUN: conv3d-opt %t/split-k.mlir -conv3d-qslice=strategy=fused -verify-diagnostics
// RUN: conv3d-opt %t/cluster.mlir -conv3d-qslice=strategy=fused -verify-diagnostics
// RUN: conv3d-opt %t/halo.mlir -conv3d-qslice=strategy=fused -verify-diagnostics
// RUN: conv3d-opt %t/memref.mlir -conv3d-qslice=strategy=separate -verify-diagnostics
//
// RUN: conv3d-opt %t/straddle-fused.mlir -split-input-file -conv3d-qslice=strategy=auto | FileCheck %s --check-prefix=AUTO-STRADDLE
// RUN: conv3d-opt %t/split-k.mlir -conv3d-qslice=strategy=auto | FileCheck %s --check-prefix=AUTO-SPLITK
// RUN: conv3d-opt %t/split-k.mlir -conv3d-qslice=strategy=separate | FileCheck %s --check-prefix=SEP-SPLITK
// RUN: conv3d-opt %t/memref.mlir -conv3d-qslice=strategy=fused | FileCheck %s --check-prefix=FUSED-MEMREF

// AUTO-STRADDLE-LABEL: func.func @straddle
// AUTO-STRADDLE-NOT: config
// AUTO-STRADDLE: conv3d.conv {{.*}} quantize(#conv3d.nvfp4<block_size = 16>, %{{.*}}) outs({{.*}}) overwrite padding = [2, 0, 1, 1, 1, 1] ->
// AUTO-STRADDLE-LABEL: func.func @straddle_strided
// AUTO-STRADDLE-NOT: config
// AUTO-STRADDLE: return

// AUTO-SPLITK-LABEL: func.func @split_k
// AUTO-SPLITK: config = #conv3d.igemm_config<tile_m = 32, tile_n = 16, tile_k = 32, split_k = 2> ->

// SEP-SPLITK-LABEL: func.func @split_k
// SEP-SPLITK-COUNT-3: conv3d.conv {{.*}} config = #conv3d.igemm_config<tile_m = 32, tile_n = 16, tile_k = 32, split_k = 2> ->
// SEP-SPLITK: conv3d.epilogue

// FUSED-MEMREF-LABEL: func.func @memref_conv
// FUSED-MEMREF: conv3d.conv {{.*}} config = #conv3d.igemm_config<tile_m = 64, tile_n = 16, tile_k = 48, k_order = qslice_outer>{{$}}

//--- bad-strategy.mlir
module {
}

//--- bad-target.mlir
module {
}

//--- straddle-fused.mlir
// R*S*C = 3*3*8 = 72 is not a multiple of the block size 16.
func.func @straddle(%x: tensor<1x4x4x4x8xbf16>, %w: tensor<3x3x3x8x16xbf16>, %amax: f32, %i: tensor<1x4x4x4x16xbf16>) -> tensor<1x4x4x4x16xbf16> {
  // expected-error @below {{cannot apply the fused Q-slice strategy: NVFP4 blocks straddle depth slices (R*S*C = 72 is not a multiple of the block size 16)}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x4x4x8xbf16>, tensor<3x3x3x8x16xbf16>) quantize(#conv3d.nvfp4<block_size = 16>, %amax) outs(%i : tensor<1x4x4x4x16xbf16>) overwrite padding = [2, 0, 1, 1, 1, 1] -> tensor<1x4x4x4x16xbf16>
  return %0 : tensor<1x4x4x4x16xbf16>
}

// -----

// R*S*C = 1*1*48 = 48 is not a multiple of the block size 32.
func.func @straddle_strided(%x: tensor<1x9x4x4x48xbf16>, %w: tensor<3x1x1x48x16xbf16>, %amax: f32, %i: tensor<1x4x4x4x16xf32>) -> tensor<1x4x4x4x16xf32> {
  // expected-error @below {{cannot apply the fused Q-slice strategy: NVFP4 blocks straddle depth slices (R*S*C = 48 is not a multiple of the block size 32)}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x9x4x4x48xbf16>, tensor<3x1x1x48x16xbf16>) quantize(#conv3d.nvfp4<block_size = 32>, %amax) outs(%i : tensor<1x4x4x4x16xf32>) strides = [2, 1, 1] -> tensor<1x4x4x4x16xf32>
  return %0 : tensor<1x4x4x4x16xf32>
}

//--- straddle-separate.mlir
func.func @straddle(%x: tensor<1x4x4x4x8xbf16>, %w: tensor<3x3x3x8x16xbf16>, %amax: f32, %i: tensor<1x4x4x4x16xbf16>) -> tensor<1x4x4x4x16xbf16> {
  // expected-error @below {{cannot apply the separate Q-slice strategy: NVFP4 blocks straddle depth slices (R*S*C = 72 is not a multiple of the block size 16)}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x4x4x8xbf16>, tensor<3x3x3x8x16xbf16>) quantize(#conv3d.nvfp4<block_size = 16>, %amax) outs(%i : tensor<1x4x4x4x16xbf16>) overwrite padding = [2, 0, 1, 1, 1, 1] -> tensor<1x4x4x4x16xbf16>
  return %0 : tensor<1x4x4x4x16xbf16>
}

//--- split-k.mlir
func.func @split_k(%x: tensor<1x4x4x4x32xbf16>, %w: tensor<3x3x3x32x16xbf16>, %i: tensor<1x4x4x4x16xbf16>) -> tensor<1x4x4x4x16xbf16> {
  // expected-error @below {{cannot apply the fused Q-slice strategy: the config uses split_k > 1, which needs k_order = taps_outer}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x4x4x32xbf16>, tensor<3x3x3x32x16xbf16>) outs(%i : tensor<1x4x4x4x16xbf16>) overwrite padding = [2, 0, 1, 1, 1, 1] config = #conv3d.igemm_config<tile_m = 32, tile_n = 16, tile_k = 32, split_k = 2> -> tensor<1x4x4x4x16xbf16>
  return %0 : tensor<1x4x4x4x16xbf16>
}

//--- cluster.mlir
func.func @cluster(%x: tensor<1x4x4x4x64xbf16>, %w: tensor<64x3x3x3x64xbf16>, %i: tensor<1x4x4x4x64xbf16>) -> tensor<1x4x4x4x64xbf16> {
  // expected-error @below {{cannot apply the fused Q-slice strategy: the config uses cluster_m = 2, which needs k_order = taps_outer}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x4x4x64xbf16>, tensor<64x3x3x3x64xbf16>) outs(%i : tensor<1x4x4x4x64xbf16>) overwrite padding = [2, 0, 1, 1, 1, 1] filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 128, tile_n = 64, tile_k = 64, stages = 4, warps_m = 8, kernel = sm90, cluster_m = 2> -> tensor<1x4x4x4x64xbf16>
  return %0 : tensor<1x4x4x4x64xbf16>
}

//--- halo.mlir
func.func @halo(%x: tensor<1x4x4x4x64xbf16>, %w: tensor<64x3x3x3x64xbf16>, %i: tensor<1x4x4x4x64xbf16>) -> tensor<1x4x4x4x64xbf16> {
  // expected-error @below {{cannot apply the fused Q-slice strategy: the config uses mainloop = halo, which needs k_order = taps_outer}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x4x4x64xbf16>, tensor<64x3x3x3x64xbf16>) outs(%i : tensor<1x4x4x4x64xbf16>) overwrite padding = [2, 0, 1, 1, 1, 1] filter_layout = fqrsc config = #conv3d.igemm_config<tile_m = 256, tile_n = 64, tile_k = 64, stages = 4, warps_m = 8, kernel = sm90, mainloop = halo> -> tensor<1x4x4x4x64xbf16>
  return %0 : tensor<1x4x4x4x64xbf16>
}

//--- memref.mlir
func.func @memref_conv(%x: memref<1x6x4x4x16xbf16>, %w: memref<3x1x1x16x16xbf16>, %i: memref<1x6x4x4x16xbf16>) {
  // expected-error @below {{cannot decompose this convolution into separate Q-slices (it must be on tensors)}}
  conv3d.conv ins(%x, %w : memref<1x6x4x4x16xbf16>, memref<3x1x1x16x16xbf16>) outs(%i : memref<1x6x4x4x16xbf16>) overwrite padding = [2, 0, 0, 0, 0, 0]
  return
}
