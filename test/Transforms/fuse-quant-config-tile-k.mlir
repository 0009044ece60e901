// A conv3d.quantize does not fold into a convolution whose tile
// configuration cannot quantize whole blocks (tile_k 32 < block size 64):
// the prepass form stays and the IR remains valid.
//
// RUN: conv3d-opt %s -conv3d-fuse-quant=placement=tile | FileCheck %s
// RUN: conv3d-opt %s -conv3d-fuse-quant=placement=auto | FileCheck %s

// CHECK-LABEL: func.func @config_tile_k_below_block
// CHECK: %[[Q:.*]] = conv3d.quantize #conv3d.nvfp4<block_size = 64> axes = [4]
// CHECK: conv3d.conv ins(%[[Q]], {{.*}} config = #conv3d.igemm_config<tile_m = 64, tile_n = 16, tile_k = 32>
// CHECK-NOT: quantize(
func.func @config_tile_k_below_block(%x: tensor<1x8x8x8x64xbf16>, %w: tensor<1x1x1x64x16xbf16>, %amax: f32, %i: tensor<1x8x8x8x16xbf16>) -> tensor<1x8x8x8x16xbf16> {
  %e = tensor.empty() : tensor<1x8x8x8x64xbf16>
  %q = conv3d.quantize #conv3d.nvfp4<block_size = 64> axes = [4] ins(%x : tensor<1x8x8x8x64xbf16>) amax(%amax) outs(%e : tensor<1x8x8x8x64xbf16>) -> tensor<1x8x8x8x64xbf16>
  %0 = conv3d.conv ins(%q, %w : tensor<1x8x8x8x64xbf16>, tensor<1x1x1x64x16xbf16>) outs(%i : tensor<1x8x8x8x16xbf16>) overwrite config = #conv3d.igemm_config<tile_m = 64, tile_n = 16, tile_k = 32> -> tensor<1x8x8x8x16xbf16>
  return %0 : tensor<1x8x8x8x16xbf16>
}
