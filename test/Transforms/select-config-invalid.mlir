// Errors of conv3d-select-config: bad options, and a forced configuration
// that cannot serve a convolution.
//
// RUN: split-file %s %t
// RUN: not conv3d-opt %t/bad-target.mlir -conv3d-select-config=target=sm70 2>&1 | FileCheck %s --check-prefix=BAD-TARGET
// An unknown target is a command-line error that names the value:
// BAD-TARGET: for the --target option: Cannot find option named 'sm70'
// RUN: conv3d-opt %t/no-value.mlir --conv3d-select-config="config={tile_m=64,tile_n}" -verify-diagnostics
// RUN: conv3d-opt %t/unknown-key.mlir --conv3d-select-config="config={tile_m=64,tile_n=64,tile_k=32,tile_q=2}" -verify-diagnostics
// RUN: conv3d-opt %t/bad-value.mlir --conv3d-select-config="config={tile_m=64,tile_n=64,tile_k=32,k_order=sideways}" -verify-diagnostics
// RUN: conv3d-opt %t/bad-kernel.mlir --conv3d-select-config="config={tile_m=64,tile_n=64,tile_k=64,kernel=sm99}" -verify-diagnostics
// RUN: conv3d-opt %t/unverified.mlir --conv3d-select-config="config={tile_m=64,tile_n=0,tile_k=32}" -verify-diagnostics
// RUN: conv3d-opt %t/forced.mlir -split-input-file --conv3d-select-config="config={tile_m=64,tile_n=64,tile_k=16,k_order=qslice_outer}" -verify-diagnostics
// RUN: conv3d-opt %t/split-k.mlir --conv3d-select-config="target=sm90 config={tile_m=64,tile_n=64,tile_k=32,split_k=2,k_order=qslice_outer}" -verify-diagnostics

//--- bad-target.mlir
module {
}

//--- no-value.mlir
// expected-error @below {{conv3d-select-config: expected key=value pairs separated by commas in the tile configuration, got 'tile_n'}}
module {
}

//--- unknown-key.mlir
// expected-error @below {{conv3d-select-config: invalid tile configuration 'tile_m=64,tile_n=64,tile_k=32,tile_q=2': duplicate or unknown struct parameter name: tile_q}}
module {
}

//--- bad-value.mlir
// expected-error @below {{conv3d-select-config: invalid tile configuration 'tile_m=64,tile_n=64,tile_k=32,k_order=sideways'}}
module {
}

//--- bad-kernel.mlir
// expected-error @below {{conv3d-select-config: invalid tile configuration 'tile_m=64,tile_n=64,tile_k=64,kernel=sm99': expected one of [cpu, sm80, sm90, sm100] for code generation target of the implicit-GEMM lowerings, got: sm99}}
module {
}

//--- unverified.mlir
// expected-error @below {{conv3d-select-config: invalid tile configuration 'tile_m=64,tile_n=0,tile_k=32': igemm_config tile_n must be positive, got 0}}
module {
}

//--- forced.mlir
// tile_k = 16 with NVFP4 blocks of 32.
func.func @tile_k_not_multiple_of_block(%x: tensor<1x8x8x8x32xbf16>, %w: tensor<1x1x1x32x64xbf16>, %amax: f32, %i: tensor<1x8x8x8x64xbf16>) -> tensor<1x8x8x8x64xbf16> {
  // expected-error @below {{cannot use tile configuration #conv3d.igemm_config<tile_m = 64, tile_n = 64, tile_k = 16, k_order = qslice_outer>: tile_k = 16 must be a multiple of the NVFP4 block size 32 (tile loads quantize whole blocks)}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x8x8x8x32xbf16>, tensor<1x1x1x32x64xbf16>) quantize(#conv3d.nvfp4<block_size = 32>, %amax) outs(%i : tensor<1x8x8x8x64xbf16>) overwrite -> tensor<1x8x8x8x64xbf16>
  return %0 : tensor<1x8x8x8x64xbf16>
}

// -----

// k_order = qslice_outer with R*S*C = 3*3*8 = 72, not a multiple of 16.
func.func @qslice_outer_splits_blocks(%x: tensor<1x8x8x8x8xbf16>, %w: tensor<3x3x3x8x16xbf16>, %amax: f32, %i: tensor<1x6x6x6x16xbf16>) -> tensor<1x6x6x6x16xbf16> {
  // expected-error @below {{cannot use tile configuration #conv3d.igemm_config<tile_m = 64, tile_n = 64, tile_k = 16, k_order = qslice_outer>: k_order = qslice_outer splits NVFP4 blocks: R*S*C = 72 is not a multiple of the block size 16}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x8x8x8x8xbf16>, tensor<3x3x3x8x16xbf16>) quantize(#conv3d.nvfp4<block_size = 16>, %amax) outs(%i : tensor<1x6x6x6x16xbf16>) overwrite -> tensor<1x6x6x6x16xbf16>
  return %0 : tensor<1x6x6x6x16xbf16>
}

// -----

// The same config serves an unquantized conv.
func.func @unquantized_ok(%x: tensor<1x8x8x8x8xbf16>, %w: tensor<3x3x3x8x16xbf16>, %i: tensor<1x6x6x6x16xbf16>) -> tensor<1x6x6x6x16xbf16> {
  %0 = conv3d.conv ins(%x, %w : tensor<1x8x8x8x8xbf16>, tensor<3x3x3x8x16xbf16>) outs(%i : tensor<1x6x6x6x16xbf16>) overwrite -> tensor<1x6x6x6x16xbf16>
  return %0 : tensor<1x6x6x6x16xbf16>
}

//--- split-k.mlir
// The forced config names no kernel: on sm90 it is for the sm90 kernel.
func.func @split_k_with_qslice_outer(%x: tensor<1x8x8x8x8xbf16>, %w: tensor<3x3x3x8x16xbf16>, %i: tensor<1x6x6x6x16xbf16>) -> tensor<1x6x6x6x16xbf16> {
  // expected-error @below {{cannot use tile configuration #conv3d.igemm_config<tile_m = 64, tile_n = 64, tile_k = 32, k_order = qslice_outer, split_k = 2, kernel = sm90>: split_k > 1 needs k_order = taps_outer}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x8x8x8x8xbf16>, tensor<3x3x3x8x16xbf16>) outs(%i : tensor<1x6x6x6x16xbf16>) overwrite -> tensor<1x6x6x6x16xbf16>
  return %0 : tensor<1x6x6x6x16xbf16>
}
