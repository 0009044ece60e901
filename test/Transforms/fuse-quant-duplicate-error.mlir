// The "prepass placement needs C to be a multiple of the NVFP4 block size"
// error is reported once per convolution, even when other rewrites make the
// greedy driver visit it again (here @other is un-fused).
//
// (-verify-diagnostics lets one expected-error match any number of equal
// diagnostics, so the count is checked with FileCheck.)
// RUN: not conv3d-opt %s -conv3d-fuse-quant=placement=prepass 2>&1 | FileCheck %s

// CHECK: :[[@LINE+4]]:8: error: prepass placement needs C to be a multiple of the NVFP4 block size (C = 8, block size 16)
// CHECK-NOT: error:

func.func @impossible(%x: tensor<1x8x8x8x8xbf16>, %w: tensor<3x3x3x8x16xbf16>, %amax: f32, %i: tensor<1x6x6x6x16xbf16>) -> tensor<1x6x6x6x16xbf16> {
  %0 = conv3d.conv ins(%x, %w : tensor<1x8x8x8x8xbf16>, tensor<3x3x3x8x16xbf16>) quantize(#conv3d.nvfp4<block_size = 16>, %amax) outs(%i : tensor<1x6x6x6x16xbf16>) overwrite -> tensor<1x6x6x6x16xbf16>
  return %0 : tensor<1x6x6x6x16xbf16>
}

func.func @other(%x: tensor<1x8x8x8x32xbf16>, %w: tensor<3x3x3x32x16xbf16>, %amax: f32, %i: tensor<1x6x6x6x16xbf16>) -> tensor<1x6x6x6x16xbf16> {
  %0 = conv3d.conv ins(%x, %w : tensor<1x8x8x8x32xbf16>, tensor<3x3x3x32x16xbf16>) quantize(#conv3d.nvfp4<block_size = 16>, %amax) outs(%i : tensor<1x6x6x6x16xbf16>) overwrite -> tensor<1x6x6x6x16xbf16>
  return %0 : tensor<1x6x6x6x16xbf16>
}
