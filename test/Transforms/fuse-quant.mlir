// conv3d-fuse-quant: folding a channel-block conv3d.quantize into the
// convolution it feeds, and the placement (tile / prepass / auto cost model)
// of every quantized convolution. Errors: fuse-quant-invalid.mlir.
//
// RUN: conv3d-opt %s -split-input-file -conv3d-fuse-quant=placement=tile | FileCheck %s --check-prefix=TILE
// RUN: conv3d-opt %s -split-input-file -conv3d-fuse-quant=placement=prepass | FileCheck %s --check-prefix=PREPASS
// RUN: conv3d-opt %s -split-input-file -conv3d-fuse-quant | FileCheck %s --check-prefix=AUTO
// RUN: conv3d-opt %s -split-input-file -conv3d-fuse-quant=placement=auto | FileCheck %s --check-prefix=AUTO
// RUN: conv3d-opt %s -split-input-file -conv3d-fuse-quant="placement=auto target=sm80" | FileCheck %s --check-prefix=SM80
// RUN: conv3d-opt %s -split-input-file -conv3d-fuse-quant="placement=auto target=sm90" | FileCheck %s --check-prefix=SM90
//
// Idempotence: a second run changes nothing.
// RUN: conv3d-opt %s -split-input-file -conv3d-fuse-quant=placement=tile > %t.tile1
// RUN: conv3d-opt %t.tile1 -split-input-file -conv3d-fuse-quant=placement=tile > %t.tile2
// RUN: diff %t.tile1 %t.tile2
// RUN: conv3d-opt %s -split-input-file -conv3d-fuse-quant=placement=prepass > %t.prepass1
// RUN: conv3d-opt %t.prepass1 -split-input-file -conv3d-fuse-quant=placement=prepass > %t.prepass2
// RUN: diff %t.prepass1 %t.prepass2
// RUN: conv3d-opt %s -split-input-file -conv3d-fuse-quant > %t.auto1
// RUN: conv3d-opt %s -split-input-file -conv3d-fuse-quant -conv3d-fuse-quant > %t.auto2
// RUN: diff %t.auto1 %t.auto2

// A 3x3x3 convolution of a channel-block quantized input with C = 32, a
// multiple of the block size 16: the two are equivalent.
// - tile: the quantize folds into the conv (and, dead, disappears);
// - prepass: it stays;
// - auto: a 3x3x3 conv would quantize each element 27 times in its tiles, so
//   the cost model keeps the prepass.

// TILE-LABEL: func.func @quantize_3x3x3
// TILE-SAME: (%[[X:.*]]: tensor<1x8x8x8x32xbf16>, %[[W:.*]]: tensor<3x3x3x32x16xbf16>, %[[AMAX:.*]]: f32, %[[I:.*]]: tensor<1x6x6x6x16xbf16>)
// TILE-NOT: conv3d.quantize
// TILE-NOT: tensor.empty
// TILE: %[[C:.*]] = conv3d.conv ins(%[[X]], %[[W]] : tensor<1x8x8x8x32xbf16>, tensor<3x3x3x32x16xbf16>) quantize(#conv3d.nvfp4<block_size = 16>, %[[AMAX]]) outs(%[[I]] : tensor<1x6x6x6x16xbf16>) overwrite -> tensor<1x6x6x6x16xbf16>
// TILE-NEXT: return %[[C]]

// PREPASS-LABEL: func.func @quantize_3x3x3
// PREPASS-SAME: (%[[X:.*]]: tensor<1x8x8x8x32xbf16>, %[[W:.*]]: tensor<3x3x3x32x16xbf16>, %[[AMAX:.*]]: f32, %[[I:.*]]: tensor<1x6x6x6x16xbf16>)
// PREPASS: %[[E:.*]] = tensor.empty() : tensor<1x8x8x8x32xbf16>
// PREPASS: %[[Q:.*]] = conv3d.quantize #conv3d.nvfp4<block_size = 16> axes = [4] ins(%[[X]] : tensor<1x8x8x8x32xbf16>) amax(%[[AMAX]]) outs(%[[E]] : tensor<1x8x8x8x32xbf16>)
// PREPASS: conv3d.conv ins(%[[Q]], %[[W]] : {{.*}}) outs(%[[I]] : {{.*}}) overwrite ->

// AUTO-LABEL: func.func @quantize_3x3x3
// AUTO: %[[Q:.*]] = conv3d.quantize #conv3d.nvfp4<block_size = 16> axes = [4]
// AUTO: conv3d.conv ins(%[[Q]], %{{.*}} : {{.*}}) outs(
// AUTO-NOT: quantize(
func.func @quantize_3x3x3(%x: tensor<1x8x8x8x32xbf16>, %w: tensor<3x3x3x32x16xbf16>, %amax: f32, %i: tensor<1x6x6x6x16xbf16>) -> tensor<1x6x6x6x16xbf16> {
  %e = tensor.empty() : tensor<1x8x8x8x32xbf16>
  %q = conv3d.quantize #conv3d.nvfp4<block_size = 16> axes = [4] ins(%x : tensor<1x8x8x8x32xbf16>) amax(%amax) outs(%e : tensor<1x8x8x8x32xbf16>) -> tensor<1x8x8x8x32xbf16>
  %0 = conv3d.conv ins(%q, %w : tensor<1x8x8x8x32xbf16>, tensor<3x3x3x32x16xbf16>) outs(%i : tensor<1x6x6x6x16xbf16>) overwrite -> tensor<1x6x6x6x16xbf16>
  return %0 : tensor<1x6x6x6x16xbf16>
}

// -----

// C = 8 is not a multiple of the block size 16: channel blocks are not the
// conv's K blocks (which straddle filter taps), so nothing folds under any
// placement.

// TILE-LABEL: func.func @channels_not_multiple_of_block
// TILE: %[[Q:.*]] = conv3d.quantize #conv3d.nvfp4<block_size = 16> axes = [4]
// TILE: conv3d.conv ins(%[[Q]], %{{.*}} : {{.*}}) outs(
// TILE-NOT: quantize(
// PREPASS-LABEL: func.func @channels_not_multiple_of_block
// PREPASS: %[[Q:.*]] = conv3d.quantize #conv3d.nvfp4<block_size = 16> axes = [4]
// PREPASS: conv3d.conv ins(%[[Q]], %{{.*}} : {{.*}}) outs(
// AUTO-LABEL: func.func @channels_not_multiple_of_block
// AUTO: %[[Q:.*]] = conv3d.quantize #conv3d.nvfp4<block_size = 16> axes = [4]
// AUTO: conv3d.conv ins(%[[Q]], %{{.*}} : {{.*}}) outs(
// AUTO-NOT: quantize(
// SM90-LABEL: func.func @channels_not_multiple_of_block
// SM90: %[[Q:.*]] = conv3d.quantize #conv3d.nvfp4<block_size = 16> axes = [4]
// SM90: conv3d.conv ins(%[[Q]], %{{.*}} : {{.*}}) outs(
// SM90-NOT: quantize(
func.func @channels_not_multiple_of_block(%x: tensor<1x8x8x8x8xbf16>, %w: tensor<1x1x1x8x16xbf16>, %amax: f32, %i: tensor<1x8x8x8x16xbf16>) -> tensor<1x8x8x8x16xbf16> {
  %e = tensor.empty() : tensor<1x8x8x8x8xbf16>
  %q = conv3d.quantize #conv3d.nvfp4<block_size = 16> axes = [4] ins(%x : tensor<1x8x8x8x8xbf16>) amax(%amax) outs(%e : tensor<1x8x8x8x8xbf16>) -> tensor<1x8x8x8x8xbf16>
  %0 = conv3d.conv ins(%q, %w : tensor<1x8x8x8x8xbf16>, tensor<1x1x1x8x16xbf16>) outs(%i : tensor<1x8x8x8x16xbf16>) overwrite -> tensor<1x8x8x8x16xbf16>
  return %0 : tensor<1x8x8x8x16xbf16>
}

// -----

// Blocks along other axes than the channels never fold.

// TILE-LABEL: func.func @blocks_not_along_channels
// TILE: %[[Q:.*]] = conv3d.quantize #conv3d.nvfp4<block_size = 16> axes = [3, 4]
// TILE: conv3d.conv ins(%[[Q]], %{{.*}} : {{.*}}) outs(
// TILE-NOT: quantize(
func.func @blocks_not_along_channels(%x: tensor<1x8x8x8x32xbf16>, %w: tensor<1x1x1x32x16xbf16>, %amax: f32, %i: tensor<1x8x8x8x16xbf16>) -> tensor<1x8x8x8x16xbf16> {
  %e = tensor.empty() : tensor<1x8x8x8x32xbf16>
  %q = conv3d.quantize #conv3d.nvfp4<block_size = 16> axes = [3, 4] ins(%x : tensor<1x8x8x8x32xbf16>) amax(%amax) outs(%e : tensor<1x8x8x8x32xbf16>) -> tensor<1x8x8x8x32xbf16>
  %0 = conv3d.conv ins(%q, %w : tensor<1x8x8x8x32xbf16>, tensor<1x1x1x32x16xbf16>) outs(%i : tensor<1x8x8x8x16xbf16>) overwrite -> tensor<1x8x8x8x16xbf16>
  return %0 : tensor<1x8x8x8x16xbf16>
}

// -----

// The prepass placement un-fuses a quantized convolution into a
// conv3d.quantize of its input (blocks along C) feeding a plain conv; the
// other operands and attributes stay. With tile it stays fused; auto picks
// the prepass for a 3x3x3 window.

// TILE-LABEL: func.func @quantized_3x3x3
// TILE-NOT: conv3d.quantize
// TILE: conv3d.conv ins(%{{.*}}, %{{.*}} : {{.*}}) bias(%{{.*}} : tensor<16xf32>) quantize(#conv3d.nvfp4<block_size = 32>, %{{.*}}) outs({{.*}}) overwrite padding = [2, 0, 1, 1, 1, 1] activation = silu ->

// PREPASS-LABEL: func.func @quantized_3x3x3
// PREPASS-SAME: (%[[X:.*]]: tensor<1x6x8x8x64xbf16>, %[[W:.*]]: tensor<3x3x3x64x16xbf16>, %[[B:.*]]: tensor<16xf32>, %[[AMAX:.*]]: f32, %[[I:.*]]: tensor<1x6x8x8x16xbf16>)
// PREPASS: %[[E:.*]] = tensor.empty() : tensor<1x6x8x8x64xbf16>
// PREPASS: %[[Q:.*]] = conv3d.quantize #conv3d.nvfp4<block_size = 32> axes = [4] ins(%[[X]] : tensor<1x6x8x8x64xbf16>) amax(%[[AMAX]]) outs(%[[E]] : tensor<1x6x8x8x64xbf16>) -> tensor<1x6x8x8x64xbf16>
// PREPASS: %[[C:.*]] = conv3d.conv ins(%[[Q]], %[[W]] : tensor<1x6x8x8x64xbf16>, tensor<3x3x3x64x16xbf16>) bias(%[[B]] : tensor<16xf32>) outs(%[[I]] : tensor<1x6x8x8x16xbf16>) overwrite padding = [2, 0, 1, 1, 1, 1] activation = silu -> tensor<1x6x8x8x16xbf16>
// PREPASS: return %[[C]]

// AUTO-LABEL: func.func @quantized_3x3x3
// AUTO: %[[Q:.*]] = conv3d.quantize #conv3d.nvfp4<block_size = 32> axes = [4]
// AUTO: conv3d.conv ins(%[[Q]], %{{.*}} : {{.*}}) bias(
// AUTO-NOT: quantize(
// AUTO-SAME: activation = silu

// On sm90 (C = 64, blocks of 32: the sm90 kernel quantizes in its tiles)
// this input is small (24K elements): the prepass's launch (5 us) costs
// more than quantizing the 27 taps' tiles (0.66 M elements), so the
// quantization stays in the tile.
// SM90-LABEL: func.func @quantized_3x3x3
// SM90-NOT: conv3d.quantize
// SM90: conv3d.conv {{.*}} quantize(#conv3d.nvfp4<block_size = 32>
func.func @quantized_3x3x3(%x: tensor<1x6x8x8x64xbf16>, %w: tensor<3x3x3x64x16xbf16>, %b: tensor<16xf32>, %amax: f32, %i: tensor<1x6x8x8x16xbf16>) -> tensor<1x6x8x8x16xbf16> {
  %0 = conv3d.conv ins(%x, %w : tensor<1x6x8x8x64xbf16>, tensor<3x3x3x64x16xbf16>) bias(%b : tensor<16xf32>) quantize(#conv3d.nvfp4<block_size = 32>, %amax) outs(%i : tensor<1x6x8x8x16xbf16>) overwrite padding = [2, 0, 1, 1, 1, 1] activation = silu -> tensor<1x6x8x8x16xbf16>
  return %0 : tensor<1x6x8x8x16xbf16>
}

// -----

// auto on a strided 1x1x1 convolution with one N tile (F = 64 <= tile_n =
// 64 on the CPU): the tiles quantize only the 1/8 of the input the outputs
// read, cheaper than a prepass over all of it, so the quantize folds into
// the conv.

// TILE-LABEL: func.func @quantize_1x1x1_one_n_tile
// TILE-NOT: conv3d.quantize
// TILE: conv3d.conv {{.*}} quantize(#conv3d.nvfp4<block_size = 16>
// PREPASS-LABEL: func.func @quantize_1x1x1_one_n_tile
// PREPASS: conv3d.quantize
// PREPASS-NOT: quantize(
// AUTO-LABEL: func.func @quantize_1x1x1_one_n_tile
// AUTO-SAME: (%[[X:.*]]: tensor<1x8x8x8x32xbf16>, %[[W:.*]]: tensor<1x1x1x32x64xbf16>, %[[AMAX:.*]]: f32, %[[I:.*]]: tensor<1x4x4x4x64xbf16>)
// AUTO-NOT: conv3d.quantize
// AUTO: conv3d.conv ins(%[[X]], %[[W]] : tensor<1x8x8x8x32xbf16>, tensor<1x1x1x32x64xbf16>) quantize(#conv3d.nvfp4<block_size = 16>, %[[AMAX]]) outs(%[[I]] : tensor<1x4x4x4x64xbf16>) overwrite strides = [2, 2, 2] ->
func.func @quantize_1x1x1_one_n_tile(%x: tensor<1x8x8x8x32xbf16>, %w: tensor<1x1x1x32x64xbf16>, %amax: f32, %i: tensor<1x4x4x4x64xbf16>) -> tensor<1x4x4x4x64xbf16> {
  %e = tensor.empty() : tensor<1x8x8x8x32xbf16>
  %q = conv3d.quantize #conv3d.nvfp4<block_size = 16> axes = [4] ins(%x : tensor<1x8x8x8x32xbf16>) amax(%amax) outs(%e : tensor<1x8x8x8x32xbf16>) -> tensor<1x8x8x8x32xbf16>
  %0 = conv3d.conv ins(%q, %w : tensor<1x8x8x8x32xbf16>, tensor<1x1x1x32x64xbf16>) outs(%i : tensor<1x4x4x4x64xbf16>) overwrite strides = [2, 2, 2] -> tensor<1x4x4x4x64xbf16>
  return %0 : tensor<1x4x4x4x64xbf16>
}

// -----

// An already quantized strided 1x1x1 convolution with one N tile: auto
// keeps the quantization in the tile; prepass un-fuses it.

// AUTO-LABEL: func.func @quantized_1x1x1_one_n_tile
// AUTO-NOT: conv3d.quantize
// AUTO: conv3d.conv {{.*}} quantize(#conv3d.nvfp4<block_size = 16>
// PREPASS-LABEL: func.func @quantized_1x1x1_one_n_tile
// PREPASS: %[[Q:.*]] = conv3d.quantize #conv3d.nvfp4<block_size = 16> axes = [4]
// PREPASS: conv3d.conv ins(%[[Q]],
// PREPASS-NOT: quantize(
// The sm90 kernel cannot take C = 32 (under one TMA box): the sm80
// kernel runs it under either placement, and the sm80 rates keep the tile.
// SM90-LABEL: func.func @quantized_1x1x1_one_n_tile
// SM90-NOT: conv3d.quantize
// SM90: conv3d.conv {{.*}} quantize(#conv3d.nvfp4<block_size = 16>
func.func @quantized_1x1x1_one_n_tile(%x: tensor<1x8x8x8x32xbf16>, %w: tensor<1x1x1x32x64xbf16>, %amax: f32, %i: tensor<1x4x4x4x64xbf16>) -> tensor<1x4x4x4x64xbf16> {
  %0 = conv3d.conv ins(%x, %w : tensor<1x8x8x8x32xbf16>, tensor<1x1x1x32x64xbf16>) quantize(#conv3d.nvfp4<block_size = 16>, %amax) outs(%i : tensor<1x4x4x4x64xbf16>) overwrite strides = [2, 2, 2] -> tensor<1x4x4x4x64xbf16>
  return %0 : tensor<1x4x4x4x64xbf16>
}

// -----

// The cost model depends on the target: for F = 320 the CPU (tile_n = 64)
// quantizes each element 5 times in the tiles and prefers the prepass; on
// sm80 the prepass is one more kernel launch (5 us), which for this small
// input (16K elements) costs more than quantizing in the tiles. On sm90,
// C = 32 runs on the sm80 kernel, which decides as on sm80.

// AUTO-LABEL: func.func @quantize_1x1x1_many_n_tiles
// AUTO: %[[Q:.*]] = conv3d.quantize
// AUTO: conv3d.conv ins(%[[Q]],
// AUTO-NOT: quantize(
// SM80-LABEL: func.func @quantize_1x1x1_many_n_tiles
// SM80-NOT: conv3d.quantize
// SM80: conv3d.conv {{.*}} quantize(#conv3d.nvfp4<block_size = 16>
// SM90-LABEL: func.func @quantize_1x1x1_many_n_tiles
// SM90-NOT: conv3d.quantize
// SM90: conv3d.conv {{.*}} quantize(#conv3d.nvfp4<block_size = 16>
func.func @quantize_1x1x1_many_n_tiles(%x: tensor<1x8x8x8x32xbf16>, %w: tensor<1x1x1x32x320xbf16>, %amax: f32, %i: tensor<1x8x8x8x320xbf16>) -> tensor<1x8x8x8x320xbf16> {
  %e = tensor.empty() : tensor<1x8x8x8x32xbf16>
  %q = conv3d.quantize #conv3d.nvfp4<block_size = 16> axes = [4] ins(%x : tensor<1x8x8x8x32xbf16>) amax(%amax) outs(%e : tensor<1x8x8x8x32xbf16>) -> tensor<1x8x8x8x32xbf16>
  %0 = conv3d.conv ins(%q, %w : tensor<1x8x8x8x32xbf16>, tensor<1x1x1x32x320xbf16>) outs(%i : tensor<1x8x8x8x320xbf16>) overwrite -> tensor<1x8x8x8x320xbf16>
  return %0 : tensor<1x8x8x8x320xbf16>
}

// -----

// A config on the op drives the cost model instead of the heuristic: with
// tile_n = 8, F = 64 takes 8 N tiles and auto un-fuses even a 1x1x1 conv.

// AUTO-LABEL: func.func @config_drives_cost_model
// AUTO: %[[Q:.*]] = conv3d.quantize #conv3d.nvfp4<block_size = 16> axes = [4]
// AUTO: conv3d.conv ins(%[[Q]], {{.*}} config = #conv3d.igemm_config<tile_m = 64, tile_n = 8, tile_k = 32>
// AUTO-NOT: quantize(
// On sm80 and sm90 (where C = 32 runs on the sm80 kernel) the prepass's
// launch still costs more than 8 tiles of 512 x 32.
// SM80-LABEL: func.func @config_drives_cost_model
// SM80-NOT: conv3d.quantize
// SM80: conv3d.conv {{.*}} quantize(#conv3d.nvfp4<block_size = 16>, %{{.*}}) {{.*}} config = #conv3d.igemm_config<tile_m = 64, tile_n = 8, tile_k = 32>
// SM90-LABEL: func.func @config_drives_cost_model
// SM90-NOT: conv3d.quantize
// SM90: conv3d.conv {{.*}} quantize(#conv3d.nvfp4<block_size = 16>, %{{.*}}) {{.*}} config = #conv3d.igemm_config<tile_m = 64, tile_n = 8, tile_k = 32>
func.func @config_drives_cost_model(%x: tensor<1x8x8x8x32xbf16>, %w: tensor<1x1x1x32x64xbf16>, %amax: f32, %i: tensor<1x8x8x8x64xbf16>) -> tensor<1x8x8x8x64xbf16> {
  %0 = conv3d.conv ins(%x, %w : tensor<1x8x8x8x32xbf16>, tensor<1x1x1x32x64xbf16>) quantize(#conv3d.nvfp4<block_size = 16>, %amax) outs(%i : tensor<1x8x8x8x64xbf16>) overwrite config = #conv3d.igemm_config<tile_m = 64, tile_n = 8, tile_k = 32> -> tensor<1x8x8x8x64xbf16>
  return %0 : tensor<1x8x8x8x64xbf16>
}

// -----

// A quantize with another user stays for that user. With tile, the conv
// still takes the unquantized input and quantizes in the tile; so does auto
// (a 1x1x1 conv over one N tile reads each element once: quantizing in the
// tile costs less than another pass over the input).

// TILE-LABEL: func.func @quantize_with_two_users
// TILE-SAME: (%[[X:[^:]*]]: tensor<1x8x8x8x32xbf16>
// TILE: %[[Q:.*]] = conv3d.quantize
// TILE: %[[C:.*]] = conv3d.conv ins(%[[X]], {{.*}} quantize(#conv3d.nvfp4<block_size = 16>
// TILE: return %[[C]], %[[Q]]
// AUTO-LABEL: func.func @quantize_with_two_users
// AUTO-SAME: (%[[X:[^:]*]]: tensor<1x8x8x8x32xbf16>
// AUTO: %[[Q:.*]] = conv3d.quantize
// AUTO: %[[C:.*]] = conv3d.conv ins(%[[X]], {{.*}} quantize(#conv3d.nvfp4<block_size = 16>
// AUTO: return %[[C]], %[[Q]]
// SM80-LABEL: func.func @quantize_with_two_users
// SM90-LABEL: func.func @quantize_with_two_users
// SM90-SAME: (%[[X:[^:]*]]: tensor<1x8x8x8x32xbf16>
// SM90: %[[Q:.*]] = conv3d.quantize
// SM90: %[[C:.*]] = conv3d.conv ins(%[[X]], {{.*}} quantize(#conv3d.nvfp4<block_size = 16>
// SM90: return %[[C]], %[[Q]]
func.func @quantize_with_two_users(%x: tensor<1x8x8x8x32xbf16>, %w: tensor<1x1x1x32x16xbf16>, %amax: f32, %i: tensor<1x8x8x8x16xbf16>) -> (tensor<1x8x8x8x16xbf16>, tensor<1x8x8x8x32xbf16>) {
  %e = tensor.empty() : tensor<1x8x8x8x32xbf16>
  %q = conv3d.quantize #conv3d.nvfp4<block_size = 16> axes = [4] ins(%x : tensor<1x8x8x8x32xbf16>) amax(%amax) outs(%e : tensor<1x8x8x8x32xbf16>) -> tensor<1x8x8x8x32xbf16>
  %0 = conv3d.conv ins(%q, %w : tensor<1x8x8x8x32xbf16>, tensor<1x1x1x32x16xbf16>) outs(%i : tensor<1x8x8x8x16xbf16>) overwrite -> tensor<1x8x8x8x16xbf16>
  return %0, %q : tensor<1x8x8x8x16xbf16>, tensor<1x8x8x8x32xbf16>
}

// -----

// sm90 on a larger 3x3x3 convolution (1M input elements, C = 64, F = 128:
// one N tile): quantizing the 27 taps' tiles (28M elements, ~14 us at the
// sm90 rate) costs more than the prepass (~6.4 us): the prepass feeds the
// sm90 kernel.

// SM90-LABEL: func.func @sm90_large_3x3x3
// SM90: %[[Q:.*]] = conv3d.quantize #conv3d.nvfp4<block_size = 16> axes = [4]
// SM90: conv3d.conv ins(%[[Q]],
// SM90-NOT: quantize(
func.func @sm90_large_3x3x3(%x: tensor<1x16x32x32x64xbf16>, %w: tensor<128x3x3x3x64xbf16>, %amax: f32, %i: tensor<1x16x32x32x128xbf16>) -> tensor<1x16x32x32x128xbf16> {
  %0 = conv3d.conv ins(%x, %w : tensor<1x16x32x32x64xbf16>, tensor<128x3x3x3x64xbf16>) quantize(#conv3d.nvfp4<block_size = 16>, %amax) outs(%i : tensor<1x16x32x32x128xbf16>) overwrite padding = [1, 1, 1, 1, 1, 1] filter_layout = fqrsc -> tensor<1x16x32x32x128xbf16>
  return %0 : tensor<1x16x32x32x128xbf16>
}

// -----

// Blocks of 128 span two of the sm90 kernel's 64-channel K steps: it takes
// the convolution but not its tile quantization, so sm90 takes the prepass
// even for a small input, where sm80 keeps the tile.

// SM80-LABEL: func.func @sm90_block_128
// SM80-NOT: conv3d.quantize
// SM80: conv3d.conv {{.*}} quantize(#conv3d.nvfp4<block_size = 128>
// SM90-LABEL: func.func @sm90_block_128
// SM90: %[[Q:.*]] = conv3d.quantize #conv3d.nvfp4<block_size = 128> axes = [4]
// SM90: conv3d.conv ins(%[[Q]],
// SM90-NOT: quantize(
func.func @sm90_block_128(%x: tensor<1x4x8x8x128xbf16>, %w: tensor<64x1x1x1x128xbf16>, %amax: f32, %i: tensor<1x4x8x8x64xbf16>) -> tensor<1x4x8x8x64xbf16> {
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x8x8x128xbf16>, tensor<64x1x1x1x128xbf16>) quantize(#conv3d.nvfp4<block_size = 128>, %amax) outs(%i : tensor<1x4x8x8x64xbf16>) overwrite filter_layout = fqrsc -> tensor<1x4x8x8x64xbf16>
  return %0 : tensor<1x4x8x8x64xbf16>
}

// -----

// Memref convolutions are left alone.

// AUTO-LABEL: func.func @memref_untouched
// AUTO-NOT: conv3d.quantize
// AUTO: conv3d.conv {{.*}} quantize(#conv3d.nvfp4<block_size = 16>
// SM90-LABEL: func.func @memref_untouched
// SM90-NOT: conv3d.quantize
// PREPASS-LABEL: func.func @memref_untouched
// PREPASS-NOT: conv3d.quantize
// PREPASS: conv3d.conv {{.*}} quantize(#conv3d.nvfp4<block_size = 16>
func.func @memref_untouched(%x: memref<1x8x8x8x32xbf16>, %w: memref<3x3x3x32x16xbf16>, %amax: f32, %i: memref<1x6x6x6x16xbf16>) {
  conv3d.conv ins(%x, %w : memref<1x8x8x8x32xbf16>, memref<3x3x3x32x16xbf16>) quantize(#conv3d.nvfp4<block_size = 16>, %amax) outs(%i : memref<1x6x6x6x16xbf16>) overwrite
  return
}
