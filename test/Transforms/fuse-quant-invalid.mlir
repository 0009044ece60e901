// Errors of conv3d-fuse-quant: bad options, and a forced prepass placement
// that would change the quantization's semantics.
//
// RUN: split-file %s %t
// RUN: not conv3d-opt %t/bad-placement.mlir -conv3d-fuse-quant=placement=bogus 2>&1 | FileCheck %s --check-prefix=BAD-PLACEMENT
// BAD-PLACEMENT: for the --placement option: Cannot find option named 'bogus'
// RUN: not conv3d-opt %t/bad-target.mlir -conv3d-fuse-quant=target=sm70 2>&1 | FileCheck %s --check-prefix=BAD-TARGET
// An unknown target is a command-line error that names the value:
// BAD-TARGET: for the --target option: Cannot find option named 'sm70'
// RUN: conv3d-opt %t/prepass.mlir -split-input-file -conv3d-fuse-quant=placement=prepass -verify-diagnostics
//
// The same convolutions are legal (and stay fused) under auto and tile:
// RUN: conv3d-opt %t/prepass.mlir -split-input-file -conv3d-fuse-quant=placement=auto | FileCheck %s
// RUN: conv3d-opt %t/prepass.mlir -split-input-file -conv3d-fuse-quant=placement=tile | FileCheck %s

// CHECK-LABEL: func.func @channels_not_multiple_of_block
// CHECK-NOT: conv3d.quantize
// CHECK: conv3d.conv {{.*}} quantize(#conv3d.nvfp4<block_size = 16>, %{{.*}})
// CHECK-LABEL: func.func @strided_channels_not_multiple_of_block
// CHECK-NOT: conv3d.quantize
// CHECK: conv3d.conv {{.*}} quantize(#conv3d.nvfp4<block_size = 64>, %{{.*}})

//--- bad-placement.mlir
module {
}

//--- bad-target.mlir
module {
}

//--- prepass.mlir
func.func @channels_not_multiple_of_block(%x: tensor<1x8x8x8x8xbf16>, %w: tensor<3x3x3x8x16xbf16>, %amax: f32, %i: tensor<1x6x6x6x16xbf16>) -> tensor<1x6x6x6x16xbf16> {
  // expected-error @below {{prepass placement needs C to be a multiple of the NVFP4 block size (C = 8, block size 16): otherwise blocks straddle filter taps}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x8x8x8x8xbf16>, tensor<3x3x3x8x16xbf16>) quantize(#conv3d.nvfp4<block_size = 16>, %amax) outs(%i : tensor<1x6x6x6x16xbf16>) overwrite -> tensor<1x6x6x6x16xbf16>
  return %0 : tensor<1x6x6x6x16xbf16>
}

// -----

func.func @strided_channels_not_multiple_of_block(%x: tensor<1x8x8x8x96xbf16>, %w: tensor<1x1x1x96x16xbf16>, %amax: f32, %i: tensor<1x4x4x4x16xbf16>) -> tensor<1x4x4x4x16xbf16> {
  // expected-error @below {{prepass placement needs C to be a multiple of the NVFP4 block size (C = 96, block size 64): otherwise blocks straddle filter taps}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x8x8x8x96xbf16>, tensor<1x1x1x96x16xbf16>) quantize(#conv3d.nvfp4<block_size = 64>, %amax) outs(%i : tensor<1x4x4x4x16xbf16>) overwrite strides = [2, 2, 2] -> tensor<1x4x4x4x16xbf16>
  return %0 : tensor<1x4x4x4x16xbf16>
}
