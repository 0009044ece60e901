// Diagnostics of the attribute verifiers (#conv3d.nvfp4,
// #conv3d.igemm_config) and parser errors of the attributes and of the
// enum keywords (activation, filter_layout, mode). One split per diagnostic.
//
// RUN: conv3d-opt %s -split-input-file -verify-diagnostics

//===----------------------------------------------------------------------===//
// #conv3d.nvfp4
//===----------------------------------------------------------------------===//

func.func @nvfp4_block_size_8(%x: tensor<4x32xf32>, %amax: f32, %out: tensor<4x32xf32>) {
  // expected-error @+1 {{NVFP4 block size must be 16, 32, 64, 128 or 256, got 8}}
  %0 = conv3d.quantize #conv3d.nvfp4<block_size = 8> axes = [1] ins(%x : tensor<4x32xf32>) amax(%amax) outs(%out : tensor<4x32xf32>) -> tensor<4x32xf32>
  return
}

// -----

// Not a power of two.
func.func @nvfp4_block_size_48(%x: tensor<1x4x6x6x16xf32>, %w: tensor<1x3x3x16x16xf32>, %amax: f32, %init: tensor<1x4x4x4x16xf32>) {
  // expected-error @+1 {{NVFP4 block size must be 16, 32, 64, 128 or 256, got 48}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x16xf32>, tensor<1x3x3x16x16xf32>) quantize(#conv3d.nvfp4<block_size = 48>, %amax) outs(%init : tensor<1x4x4x4x16xf32>) -> tensor<1x4x4x4x16xf32>
  return
}

// -----

func.func @nvfp4_block_size_512(%in: memref<1x10x32x32x96xbf16>, %tile: memref<64x512xbf16>, %m0: index, %k0: index, %k: index, %amax: f32) {
  // expected-error @+1 {{NVFP4 block size must be 16, 32, 64, 128 or 256, got 512}}
  conv3d.load_im2col_tile %in[%m0, %k0] limit %k into %tile quantize(#conv3d.nvfp4<block_size = 512>, %amax) window = [3, 3, 3] : memref<1x10x32x32x96xbf16>, memref<64x512xbf16>
  return
}

// -----

// expected-error @+1 {{NVFP4 block size must be 16, 32, 64, 128 or 256, got 0}}
func.func private @nvfp4_block_size_0() attributes {q = #conv3d.nvfp4<block_size = 0>}

// -----

// expected-error @+1 {{NVFP4 block size must be 16, 32, 64, 128 or 256, got -16}}
func.func private @nvfp4_block_size_negative() attributes {q = #conv3d.nvfp4<block_size = -16>}


//===----------------------------------------------------------------------===//
// #conv3d.igemm_config
//===----------------------------------------------------------------------===//

// -----

// expected-error @+1 {{igemm_config tile_m must be positive, got 0}}
func.func private @config_tile_m() attributes {c = #conv3d.igemm_config<tile_m = 0, tile_n = 64, tile_k = 32>}

// -----

// expected-error @+1 {{igemm_config tile_n must be positive, got -64}}
func.func private @config_tile_n() attributes {c = #conv3d.igemm_config<tile_m = 64, tile_n = -64, tile_k = 32>}

// -----

// expected-error @+1 {{igemm_config tile_k must be positive, got 0}}
func.func private @config_tile_k() attributes {c = #conv3d.igemm_config<tile_m = 64, tile_n = 64, tile_k = 0>}

// -----

// expected-error @+1 {{igemm_config stages must be positive, got 0}}
func.func private @config_stages() attributes {c = #conv3d.igemm_config<tile_m = 64, tile_n = 64, tile_k = 32, stages = 0>}

// -----

// expected-error @+1 {{igemm_config warps_m must be positive, got 0}}
func.func private @config_warps_m() attributes {c = #conv3d.igemm_config<tile_m = 64, tile_n = 64, tile_k = 32, warps_m = 0>}

// -----

// expected-error @+1 {{igemm_config warps_n must be positive, got -1}}
func.func private @config_warps_n() attributes {c = #conv3d.igemm_config<tile_m = 64, tile_n = 64, tile_k = 32, warps_n = -1>}

// -----

// expected-error @+1 {{igemm_config split_k must be positive, got 0}}
func.func private @config_split_k() attributes {c = #conv3d.igemm_config<tile_m = 64, tile_n = 64, tile_k = 32, split_k = 0>}

// -----

// expected-error @+1 {{igemm_config split_k must be from 1 to 4096, got 4611686018427387904}}
func.func private @config_split_k_huge() attributes {c = #conv3d.igemm_config<tile_m = 64, tile_n = 64, tile_k = 32, split_k = 4611686018427387904>}

// -----

// expected-error @+1 {{igemm_config split_k must be from 1 to 4096, got 4097}}
func.func private @config_split_k_beyond() attributes {c = #conv3d.igemm_config<tile_m = 64, tile_n = 64, tile_k = 32, split_k = 4097>}

// -----

func.func private @config_split_k_largest() attributes {c = #conv3d.igemm_config<tile_m = 64, tile_n = 64, tile_k = 32, split_k = 4096>}

// -----

// expected-error @+1 {{igemm_config tiles larger than 1048576 elements are not supported (tile_m = 2048, tile_n = 1024, tile_k = 32)}}
func.func private @config_tile_mn_too_large() attributes {c = #conv3d.igemm_config<tile_m = 2048, tile_n = 1024, tile_k = 32>}

// -----

// expected-error @+1 {{igemm_config tiles larger than 1048576 elements are not supported (tile_m = 4096, tile_n = 16, tile_k = 512)}}
func.func private @config_tile_mk_too_large() attributes {c = #conv3d.igemm_config<tile_m = 4096, tile_n = 16, tile_k = 512>}

// -----

// expected-error @+1 {{igemm_config tiles larger than 1048576 elements are not supported (tile_m = 16, tile_n = 4096, tile_k = 512)}}
func.func private @config_tile_kn_too_large() attributes {c = #conv3d.igemm_config<tile_m = 16, tile_n = 4096, tile_k = 512>}

// -----

// 2^32 * 2^32 wraps to 0 in 64-bit arithmetic: the check must not overflow.
// expected-error @+1 {{igemm_config tiles larger than 1048576 elements are not supported (tile_m = 4294967296, tile_n = 4294967296, tile_k = 4294967296)}}
func.func private @config_tile_overflow() attributes {c = #conv3d.igemm_config<tile_m = 4294967296, tile_n = 4294967296, tile_k = 4294967296>}

// -----

// The largest tiles accepted: 1024 x 1024 = 2^20 elements each.
func.func private @config_largest_tiles() attributes {c = #conv3d.igemm_config<tile_m = 1024, tile_n = 1024, tile_k = 1024>}

// -----

// expected-error @+1 {{igemm_config stages must be at most 8, got 9}}
func.func private @config_too_many_stages() attributes {c = #conv3d.igemm_config<tile_m = 64, tile_n = 64, tile_k = 32, stages = 9>}

// -----

// expected-error @+1 {{igemm_config warp layout 3x1 does not divide the 64x64 tile}}
func.func private @config_warps_m_not_dividing() attributes {c = #conv3d.igemm_config<tile_m = 64, tile_n = 64, tile_k = 32, warps_m = 3>}

// -----

// expected-error @+1 {{igemm_config warp layout 2x128 does not divide the 64x64 tile}}
func.func private @config_warps_n_not_dividing() attributes {c = #conv3d.igemm_config<tile_m = 64, tile_n = 64, tile_k = 32, warps_m = 2, warps_n = 128>}

// -----

// The verifier also runs on a config attached to an op.
func.func @config_on_conv(%x: tensor<1x4x6x6x8xf32>, %w: tensor<1x3x3x8x16xf32>, %init: tensor<1x4x4x4x16xf32>) {
  // expected-error @+1 {{igemm_config warp layout 32x4 does not divide the 16x16 tile}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf32>, tensor<1x3x3x8x16xf32>) outs(%init : tensor<1x4x4x4x16xf32>) config = #conv3d.igemm_config<tile_m = 16, tile_n = 16, tile_k = 8, warps_m = 32, warps_n = 4, stages = 2> -> tensor<1x4x4x4x16xf32>
  return
}

// -----

// expected-error @+1 {{struct is missing required parameter: tile_k}}
func.func private @config_missing_tile_k() attributes {c = #conv3d.igemm_config<tile_m = 64, tile_n = 64>}

// -----

// expected-error @+2 {{expected one of [taps_outer, qslice_outer] for order in which the implicit-GEMM K loop walks the filter taps, got: depth_first}}
// expected-error @+1 {{failed to parse Conv3d_IGemmConfigAttr parameter 'k_order' which is to be a `::mlir::conv3d::KOrder`}}
func.func private @config_unknown_k_order() attributes {c = #conv3d.igemm_config<tile_m = 64, tile_n = 64, tile_k = 32, k_order = depth_first>}

//===----------------------------------------------------------------------===//
// Enum keywords
//===----------------------------------------------------------------------===//

// -----

func.func @conv_unknown_activation(%x: tensor<1x4x6x6x8xf32>, %w: tensor<1x3x3x8x16xf32>, %init: tensor<1x4x4x4x16xf32>) {
  // expected-error @+1 {{expected one of [none, relu, silu, gelu_tanh, relu_backward, silu_backward, gelu_tanh_backward], got 'tanh'}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf32>, tensor<1x3x3x8x16xf32>) outs(%init : tensor<1x4x4x4x16xf32>) activation = tanh -> tensor<1x4x4x4x16xf32>
  return
}

// -----

func.func @epilogue_unknown_activation(%sum: tensor<1x4x4x4x16xf32>, %out: tensor<1x4x4x4x16xbf16>) {
  // expected-error @+1 {{expected one of [none, relu, silu, gelu_tanh, relu_backward, silu_backward, gelu_tanh_backward], got 'gelu'}}
  %0 = conv3d.epilogue ins(%sum : tensor<1x4x4x4x16xf32>) outs(%out : tensor<1x4x4x4x16xbf16>) activation = gelu -> tensor<1x4x4x4x16xbf16>
  return
}

// -----

func.func @store_unknown_activation(%acc: memref<64x64xf32>, %out: memref<1x8x8x8x64xbf16>, %m0: index, %n0: index) {
  // expected-error @+1 {{expected one of [none, relu, silu, gelu_tanh, relu_backward, silu_backward, gelu_tanh_backward], got 'RELU'}}
  conv3d.store_output_tile %acc into %out[%m0, %n0] mode = overwrite activation = RELU : memref<64x64xf32>, memref<1x8x8x8x64xbf16>
  return
}

// -----

func.func @store_unknown_mode(%acc: memref<64x64xf32>, %out: memref<1x8x8x8x64xf32>, %m0: index, %n0: index) {
  // expected-error @+1 {{expected one of [overwrite, accumulate, partial], got 'add'}}
  conv3d.store_output_tile %acc into %out[%m0, %n0] mode = add : memref<64x64xf32>, memref<1x8x8x8x64xf32>
  return
}

// -----

func.func @conv_unknown_filter_layout(%x: tensor<1x4x6x6x8xf32>, %w: tensor<1x3x3x8x16xf32>, %init: tensor<1x4x4x4x16xf32>) {
  // expected-error @+1 {{expected one of [qrscf, fqrsc], got 'dhwcf'}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf32>, tensor<1x3x3x8x16xf32>) outs(%init : tensor<1x4x4x4x16xf32>) filter_layout = dhwcf -> tensor<1x4x4x4x16xf32>
  return
}

// -----

func.func @filter_tile_unknown_filter_layout(%w: memref<3x3x3x96x96xbf16>, %tile: memref<32x64xbf16>, %k0: index, %n0: index, %k: index) {
  // expected-error @+1 {{expected one of [qrscf, fqrsc], got 'kcrs'}}
  conv3d.load_filter_tile %w[%k0, %n0] limit %k into %tile filter_layout = kcrs : memref<3x3x3x96x96xbf16>, memref<32x64xbf16>
  return
}

// -----

func.func @config_cluster_m_three(%x: tensor<1x4x6x6x8xf32>, %w: tensor<1x3x3x8x16xf32>, %init: tensor<1x4x4x4x16xf32>) -> tensor<1x4x4x4x16xf32> {
  // expected-error @+1 {{igemm_config cluster_m must be 1 or 2, got 3}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf32>, tensor<1x3x3x8x16xf32>) outs(%init : tensor<1x4x4x4x16xf32>) config = #conv3d.igemm_config<tile_m = 64, tile_n = 16, tile_k = 8, cluster_m = 3> -> tensor<1x4x4x4x16xf32>
  return %0 : tensor<1x4x4x4x16xf32>
}

// -----

func.func @config_mainloop_unknown(%x: tensor<1x4x6x6x8xf32>, %w: tensor<1x3x3x8x16xf32>, %init: tensor<1x4x4x4x16xf32>) -> tensor<1x4x4x4x16xf32> {
  // expected-error @+2 {{expected one of [im2col, halo] for how a TMA kernel loads the activation operand, got: direct}}
  // expected-error @+1 {{failed to parse Conv3d_IGemmConfigAttr parameter 'mainloop'}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xf32>, tensor<1x3x3x8x16xf32>) outs(%init : tensor<1x4x4x4x16xf32>) config = #conv3d.igemm_config<tile_m = 64, tile_n = 16, tile_k = 8, mainloop = direct> -> tensor<1x4x4x4x16xf32>
  return %0 : tensor<1x4x4x4x16xf32>
}
