// conv3d.pack_nvfp4 round-trips, and its diagnostics (one split each).
//
// RUN: conv3d-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// CHECK-LABEL: func @pack
// CHECK: conv3d.pack_nvfp4 #conv3d.nvfp4<block_size = 16> ins(%{{.*}} : memref<1x4x6x6x64xbf16>) amax(%{{.*}}) outs(%{{.*}} : memref<1x4x6x6x32xi8>, %{{.*}} : memref<1x4x6x6x4xi8>)
func.func @pack(%x: memref<1x4x6x6x64xbf16>, %amax: f32,
                %codes: memref<1x4x6x6x32xi8>, %scales: memref<1x4x6x6x4xi8>) {
  conv3d.pack_nvfp4 #conv3d.nvfp4<block_size = 16> ins(%x : memref<1x4x6x6x64xbf16>) amax(%amax) outs(%codes : memref<1x4x6x6x32xi8>, %scales : memref<1x4x6x6x4xi8>)
  return
}

// -----

// Dynamic leading sizes, block 32, f32.
// CHECK-LABEL: func @pack_dynamic
// CHECK: conv3d.pack_nvfp4 #conv3d.nvfp4<block_size = 32>
func.func @pack_dynamic(%x: memref<?x64xf32>, %amax: f32,
                        %codes: memref<?x32xi8>, %scales: memref<?x2xi8>) {
  conv3d.pack_nvfp4 #conv3d.nvfp4<block_size = 32> ins(%x : memref<?x64xf32>) amax(%amax) outs(%codes : memref<?x32xi8>, %scales : memref<?x2xi8>)
  return
}

// -----

// Padded scale rows (C = 96: 6 scales a row in 16 bytes, TMA's stride).
// CHECK-LABEL: func @pack_padded_scales
// CHECK: outs(%{{.*}} : memref<1x2x3x3x48xi8>, %{{.*}} : memref<1x2x3x3x16xi8>)
func.func @pack_padded_scales(%x: memref<1x2x3x3x96xbf16>, %amax: f32,
                              %codes: memref<1x2x3x3x48xi8>, %scales: memref<1x2x3x3x16xi8>) {
  conv3d.pack_nvfp4 #conv3d.nvfp4<block_size = 16> ins(%x : memref<1x2x3x3x96xbf16>) amax(%amax) outs(%codes : memref<1x2x3x3x48xi8>, %scales : memref<1x2x3x3x16xi8>)
  return
}

// -----

func.func @pack_int_input(%x: memref<4x32xi16>, %amax: f32, %codes: memref<4x16xi8>, %scales: memref<4x2xi8>) {
  // expected-error @+1 {{'conv3d.pack_nvfp4' op input element type must be bf16, f16 or f32, got 'i16'}}
  conv3d.pack_nvfp4 #conv3d.nvfp4<block_size = 16> ins(%x : memref<4x32xi16>) amax(%amax) outs(%codes : memref<4x16xi8>, %scales : memref<4x2xi8>)
  return
}

// -----

func.func @pack_codes_type(%x: memref<4x32xbf16>, %amax: f32, %codes: memref<4x16xui8>, %scales: memref<4x2xi8>) {
  // expected-error @+1 {{'conv3d.pack_nvfp4' op codes element type must be i8, got 'ui8'}}
  conv3d.pack_nvfp4 #conv3d.nvfp4<block_size = 16> ins(%x : memref<4x32xbf16>) amax(%amax) outs(%codes : memref<4x16xui8>, %scales : memref<4x2xi8>)
  return
}

// -----

func.func @pack_scales_type(%x: memref<4x32xbf16>, %amax: f32, %codes: memref<4x16xi8>, %scales: memref<4x2xf32>) {
  // expected-error @+1 {{'conv3d.pack_nvfp4' op scales element type must be i8, got 'f32'}}
  conv3d.pack_nvfp4 #conv3d.nvfp4<block_size = 16> ins(%x : memref<4x32xbf16>) amax(%amax) outs(%codes : memref<4x16xi8>, %scales : memref<4x2xf32>)
  return
}

// -----

func.func @pack_rank0(%x: memref<bf16>, %amax: f32, %codes: memref<i8>, %scales: memref<i8>) {
  // expected-error @+1 {{'conv3d.pack_nvfp4' op input must have at least one dimension}}
  conv3d.pack_nvfp4 #conv3d.nvfp4<block_size = 16> ins(%x : memref<bf16>) amax(%amax) outs(%codes : memref<i8>, %scales : memref<i8>)
  return
}

// -----

func.func @pack_rank(%x: memref<4x32xbf16>, %amax: f32, %codes: memref<64xi8>, %scales: memref<4x2xi8>) {
  // expected-error @+1 {{'conv3d.pack_nvfp4' op codes and scales must have the input's rank 2}}
  conv3d.pack_nvfp4 #conv3d.nvfp4<block_size = 16> ins(%x : memref<4x32xbf16>) amax(%amax) outs(%codes : memref<64xi8>, %scales : memref<4x2xi8>)
  return
}

// -----

func.func @pack_not_multiple(%x: memref<4x24xbf16>, %amax: f32, %codes: memref<4x12xi8>, %scales: memref<4x1xi8>) {
  // expected-error @+1 {{'conv3d.pack_nvfp4' op the last dimension must be a static multiple of the block size 16, got 4x24}}
  conv3d.pack_nvfp4 #conv3d.nvfp4<block_size = 16> ins(%x : memref<4x24xbf16>) amax(%amax) outs(%codes : memref<4x12xi8>, %scales : memref<4x1xi8>)
  return
}

// -----

func.func @pack_dynamic_last(%x: memref<4x?xbf16>, %amax: f32, %codes: memref<4x?xi8>, %scales: memref<4x?xi8>) {
  // expected-error @+1 {{'conv3d.pack_nvfp4' op the last dimension must be a static multiple of the block size 16, got 4x?}}
  conv3d.pack_nvfp4 #conv3d.nvfp4<block_size = 16> ins(%x : memref<4x?xbf16>) amax(%amax) outs(%codes : memref<4x?xi8>, %scales : memref<4x?xi8>)
  return
}

// -----

func.func @pack_codes_shape(%x: memref<4x32xbf16>, %amax: f32, %codes: memref<4x32xi8>, %scales: memref<4x2xi8>) {
  // expected-error @+1 {{'conv3d.pack_nvfp4' op codes shape must be 4x16 (two codes per byte), got 4x32}}
  conv3d.pack_nvfp4 #conv3d.nvfp4<block_size = 16> ins(%x : memref<4x32xbf16>) amax(%amax) outs(%codes : memref<4x32xi8>, %scales : memref<4x2xi8>)
  return
}

// -----

func.func @pack_codes_leading(%x: memref<4x32xbf16>, %amax: f32, %codes: memref<5x16xi8>, %scales: memref<4x2xi8>) {
  // expected-error @+1 {{'conv3d.pack_nvfp4' op codes shape must be 4x16 (two codes per byte), got 5x16}}
  conv3d.pack_nvfp4 #conv3d.nvfp4<block_size = 16> ins(%x : memref<4x32xbf16>) amax(%amax) outs(%codes : memref<5x16xi8>, %scales : memref<4x2xi8>)
  return
}

// -----

func.func @pack_scales_shape(%x: memref<4x64xbf16>, %amax: f32, %codes: memref<4x32xi8>, %scales: memref<4x1xi8>) {
  // expected-error @+1 {{'conv3d.pack_nvfp4' op scales shape must be 4x2 (one byte per block, or more to pad each row), got 4x1}}
  conv3d.pack_nvfp4 #conv3d.nvfp4<block_size = 32> ins(%x : memref<4x64xbf16>) amax(%amax) outs(%codes : memref<4x32xi8>, %scales : memref<4x1xi8>)
  return
}

// -----

func.func @pack_padded_scales_leading(%x: memref<4x96xbf16>, %amax: f32, %codes: memref<4x48xi8>, %scales: memref<5x16xi8>) {
  // expected-error @+1 {{'conv3d.pack_nvfp4' op scales shape must be 4x16 (padded rows), got 5x16}}
  conv3d.pack_nvfp4 #conv3d.nvfp4<block_size = 16> ins(%x : memref<4x96xbf16>) amax(%amax) outs(%codes : memref<4x48xi8>, %scales : memref<5x16xi8>)
  return
}

// -----

func.func @pack_block_size(%x: memref<4x64xbf16>, %amax: f32, %codes: memref<4x32xi8>, %scales: memref<4x4xi8>) {
  // expected-error @+1 {{NVFP4 block size must be 16, 32, 64, 128 or 256}}
  conv3d.pack_nvfp4 #conv3d.nvfp4<block_size = 24> ins(%x : memref<4x64xbf16>) amax(%amax) outs(%codes : memref<4x32xi8>, %scales : memref<4x4xi8>)
  return
}

// -----

func.func @pack_too_many(%x: memref<288230376151711744x32xbf16>, %amax: f32, %codes: memref<288230376151711744x16xi8>, %scales: memref<288230376151711744x2xi8>) {
  // expected-error @+1 {{'conv3d.pack_nvfp4' op input of shape 288230376151711744x32 has more than 2^62 elements, the supported maximum}}
  conv3d.pack_nvfp4 #conv3d.nvfp4<block_size = 16> ins(%x : memref<288230376151711744x32xbf16>) amax(%amax) outs(%codes : memref<288230376151711744x16xi8>, %scales : memref<288230376151711744x2xi8>)
  return
}
