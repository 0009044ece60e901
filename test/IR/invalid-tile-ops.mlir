// Diagnostics of the verifiers of the implicit-GEMM tile ops
// (conv3d.load_im2col_tile, conv3d.load_filter_tile, conv3d.tile_mma,
// conv3d.store_output_tile). One split per diagnostic.
//
// RUN: conv3d-opt %s -split-input-file -verify-diagnostics

//===----------------------------------------------------------------------===//
// conv3d.load_im2col_tile
//===----------------------------------------------------------------------===//

func.func @im2col_input_rank(%in: memref<10x32x32x96xbf16>, %tile: memref<64x32xbf16>, %m0: index, %k0: index, %k: index) {
  // expected-error @+1 {{'conv3d.load_im2col_tile' op input must have rank 5, got rank 4}}
  conv3d.load_im2col_tile %in[%m0, %k0] limit %k into %tile window = [3, 3, 3] : memref<10x32x32x96xbf16>, memref<64x32xbf16>
  return
}

// -----

func.func @im2col_tile_rank(%in: memref<1x10x32x32x96xbf16>, %tile: memref<2x64x32xbf16>, %m0: index, %k0: index, %k: index) {
  // expected-error @+1 {{'conv3d.load_im2col_tile' op tile must have rank 2, got rank 3}}
  conv3d.load_im2col_tile %in[%m0, %k0] limit %k into %tile window = [3, 3, 3] : memref<1x10x32x32x96xbf16>, memref<2x64x32xbf16>
  return
}

// -----

func.func @im2col_tile_dynamic(%in: memref<1x10x32x32x96xbf16>, %tile: memref<?x32xbf16>, %m0: index, %k0: index, %k: index) {
  // expected-error @+1 {{'conv3d.load_im2col_tile' op tile must have a static shape}}
  conv3d.load_im2col_tile %in[%m0, %k0] limit %k into %tile window = [3, 3, 3] : memref<1x10x32x32x96xbf16>, memref<?x32xbf16>
  return
}

// -----

func.func @im2col_window_size(%in: memref<1x10x32x32x96xbf16>, %tile: memref<64x32xbf16>, %m0: index, %k0: index, %k: index) {
  // expected-error @+1 {{'conv3d.load_im2col_tile' op window must have 3 values, got 2}}
  conv3d.load_im2col_tile %in[%m0, %k0] limit %k into %tile window = [3, 3] : memref<1x10x32x32x96xbf16>, memref<64x32xbf16>
  return
}

// -----

func.func @im2col_strides_size(%in: memref<1x10x32x32x96xbf16>, %tile: memref<64x32xbf16>, %m0: index, %k0: index, %k: index) {
  // expected-error @+1 {{'conv3d.load_im2col_tile' op strides must have 3 values, got 1}}
  conv3d.load_im2col_tile %in[%m0, %k0] limit %k into %tile window = [3, 3, 3] strides = [2] : memref<1x10x32x32x96xbf16>, memref<64x32xbf16>
  return
}

// -----

func.func @im2col_dilations_size(%in: memref<1x10x32x32x96xbf16>, %tile: memref<64x32xbf16>, %m0: index, %k0: index, %k: index) {
  // expected-error @+1 {{'conv3d.load_im2col_tile' op dilations must have 3 values, got 0}}
  conv3d.load_im2col_tile %in[%m0, %k0] limit %k into %tile window = [3, 3, 3] dilations = [] : memref<1x10x32x32x96xbf16>, memref<64x32xbf16>
  return
}

// -----

func.func @im2col_padding_size(%in: memref<1x10x32x32x96xbf16>, %tile: memref<64x32xbf16>, %m0: index, %k0: index, %k: index) {
  // expected-error @+1 {{'conv3d.load_im2col_tile' op padding must have 6 values, got 3}}
  conv3d.load_im2col_tile %in[%m0, %k0] limit %k into %tile window = [3, 3, 3] padding = [1, 1, 1] : memref<1x10x32x32x96xbf16>, memref<64x32xbf16>
  return
}

// -----

func.func @im2col_input_element_type(%in: memref<1x10x32x32x96xi8>, %tile: memref<64x32xi8>, %m0: index, %k0: index, %k: index) {
  // expected-error @+1 {{'conv3d.load_im2col_tile' op input element type must be bf16, f16 or f32, got 'i8'}}
  conv3d.load_im2col_tile %in[%m0, %k0] limit %k into %tile window = [3, 3, 3] : memref<1x10x32x32x96xi8>, memref<64x32xi8>
  return
}

// -----

func.func @im2col_tile_element_type(%in: memref<1x10x32x32x96xbf16>, %tile: memref<64x32xf32>, %m0: index, %k0: index, %k: index) {
  // expected-error @+1 {{'conv3d.load_im2col_tile' op tile element type 'f32' must match the input element type 'bf16'}}
  conv3d.load_im2col_tile %in[%m0, %k0] limit %k into %tile window = [3, 3, 3] : memref<1x10x32x32x96xbf16>, memref<64x32xf32>
  return
}

// -----

func.func @im2col_dynamic_channels(%in: memref<1x10x32x32x?xbf16>, %tile: memref<64x32xbf16>, %m0: index, %k0: index, %k: index) {
  // expected-error @+1 {{'conv3d.load_im2col_tile' op channel, filter and window sizes must be static}}
  conv3d.load_im2col_tile %in[%m0, %k0] limit %k into %tile window = [3, 3, 3] : memref<1x10x32x32x?xbf16>, memref<64x32xbf16>
  return
}

// -----

func.func @im2col_zero_channels(%in: memref<1x10x32x32x0xbf16>, %tile: memref<64x32xbf16>, %m0: index, %k0: index, %k: index) {
  // expected-error @+1 {{'conv3d.load_im2col_tile' op channel count must be positive, got 0}}
  conv3d.load_im2col_tile %in[%m0, %k0] limit %k into %tile window = [3, 3, 3] : memref<1x10x32x32x0xbf16>, memref<64x32xbf16>
  return
}

// -----

func.func @im2col_zero_batch(%in: memref<0x10x32x32x96xbf16>, %tile: memref<64x32xbf16>, %m0: index, %k0: index, %k: index) {
  // expected-error @+1 {{'conv3d.load_im2col_tile' op batch size must be positive, got 0}}
  conv3d.load_im2col_tile %in[%m0, %k0] limit %k into %tile window = [3, 3, 3] : memref<0x10x32x32x96xbf16>, memref<64x32xbf16>
  return
}

// -----

func.func @im2col_zero_window(%in: memref<1x10x32x32x96xbf16>, %tile: memref<64x32xbf16>, %m0: index, %k0: index, %k: index) {
  // expected-error @+1 {{'conv3d.load_im2col_tile' op filter window along width must be positive, got 0}}
  conv3d.load_im2col_tile %in[%m0, %k0] limit %k into %tile window = [3, 3, 0] : memref<1x10x32x32x96xbf16>, memref<64x32xbf16>
  return
}

// -----

func.func @im2col_zero_stride(%in: memref<1x10x32x32x96xbf16>, %tile: memref<64x32xbf16>, %m0: index, %k0: index, %k: index) {
  // expected-error @+1 {{'conv3d.load_im2col_tile' op stride along depth must be positive, got 0}}
  conv3d.load_im2col_tile %in[%m0, %k0] limit %k into %tile window = [3, 3, 3] strides = [0, 1, 1] : memref<1x10x32x32x96xbf16>, memref<64x32xbf16>
  return
}

// -----

func.func @im2col_negative_dilation(%in: memref<1x10x32x32x96xbf16>, %tile: memref<64x32xbf16>, %m0: index, %k0: index, %k: index) {
  // expected-error @+1 {{'conv3d.load_im2col_tile' op dilation along height must be positive, got -2}}
  conv3d.load_im2col_tile %in[%m0, %k0] limit %k into %tile window = [3, 3, 3] dilations = [1, -2, 1] : memref<1x10x32x32x96xbf16>, memref<64x32xbf16>
  return
}

// -----

func.func @im2col_negative_padding(%in: memref<1x10x32x32x96xbf16>, %tile: memref<64x32xbf16>, %m0: index, %k0: index, %k: index) {
  // expected-error @+1 {{'conv3d.load_im2col_tile' op padding along height must be non-negative, got [0, -3]}}
  conv3d.load_im2col_tile %in[%m0, %k0] limit %k into %tile window = [3, 3, 3] padding = [0, 0, 0, -3, 0, 0] : memref<1x10x32x32x96xbf16>, memref<64x32xbf16>
  return
}

// -----

func.func @im2col_zero_input_size(%in: memref<1x0x32x32x96xbf16>, %tile: memref<64x32xbf16>, %m0: index, %k0: index, %k: index) {
  // expected-error @+1 {{'conv3d.load_im2col_tile' op input depth must be positive, got 0}}
  conv3d.load_im2col_tile %in[%m0, %k0] limit %k into %tile window = [3, 3, 3] : memref<1x0x32x32x96xbf16>, memref<64x32xbf16>
  return
}

// -----

func.func @im2col_empty_output(%in: memref<1x2x32x32x96xbf16>, %tile: memref<64x32xbf16>, %m0: index, %k0: index, %k: index) {
  // expected-error @+1 {{'conv3d.load_im2col_tile' op empty output: the dilated window along depth spans 5 but the padded input has 3}}
  conv3d.load_im2col_tile %in[%m0, %k0] limit %k into %tile window = [3, 3, 3] dilations = [2, 1, 1] padding = [1, 0, 1, 1, 1, 1] : memref<1x2x32x32x96xbf16>, memref<64x32xbf16>
  return
}

// -----

// The custom syntax always carries both; the generic form can drop one.
func.func @im2col_quant_without_amax(%in: memref<1x10x32x32x96xbf16>, %tile: memref<64x32xbf16>, %m0: index, %k0: index, %k: index) {
  // expected-error @+1 {{'conv3d.load_im2col_tile' op quantization needs both an NVFP4 attribute and an amax operand}}
  "conv3d.load_im2col_tile"(%in, %m0, %k0, %k, %tile) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 0, 0, 0>, quant = #conv3d.nvfp4<block_size = 16>, window = array<i64: 3, 3, 3>}> : (memref<1x10x32x32x96xbf16>, index, index, index, memref<64x32xbf16>) -> ()
  return
}

// -----

func.func @im2col_amax_without_quant(%in: memref<1x10x32x32x96xbf16>, %tile: memref<64x32xbf16>, %m0: index, %k0: index, %k: index, %amax: f32) {
  // expected-error @+1 {{'conv3d.load_im2col_tile' op quantization needs both an NVFP4 attribute and an amax operand}}
  "conv3d.load_im2col_tile"(%in, %m0, %k0, %k, %tile, %amax) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 0, 0, 0, 0>, window = array<i64: 3, 3, 3>}> : (memref<1x10x32x32x96xbf16>, index, index, index, memref<64x32xbf16>, f32) -> ()
  return
}

// -----

func.func @im2col_tile_width_vs_block_size(%in: memref<1x10x32x32x96xbf16>, %tile: memref<64x48xbf16>, %m0: index, %k0: index, %k: index, %amax: f32) {
  // expected-error @+1 {{'conv3d.load_im2col_tile' op tile width 48 must be a multiple of the NVFP4 block size 32}}
  conv3d.load_im2col_tile %in[%m0, %k0] limit %k into %tile quantize(#conv3d.nvfp4<block_size = 32>, %amax) window = [3, 3, 3] : memref<1x10x32x32x96xbf16>, memref<64x48xbf16>
  return
}

//===----------------------------------------------------------------------===//
// conv3d.load_filter_tile
//===----------------------------------------------------------------------===//

// -----

func.func @filter_tile_filter_rank(%w: memref<27x96x96xbf16>, %tile: memref<32x64xbf16>, %k0: index, %n0: index, %k: index) {
  // expected-error @+1 {{'conv3d.load_filter_tile' op filter must have rank 5, got rank 3}}
  conv3d.load_filter_tile %w[%k0, %n0] limit %k into %tile : memref<27x96x96xbf16>, memref<32x64xbf16>
  return
}

// -----

func.func @filter_tile_tile_rank(%w: memref<3x3x3x96x96xbf16>, %tile: memref<2048xbf16>, %k0: index, %n0: index, %k: index) {
  // expected-error @+1 {{'conv3d.load_filter_tile' op tile must have rank 2, got rank 1}}
  conv3d.load_filter_tile %w[%k0, %n0] limit %k into %tile : memref<3x3x3x96x96xbf16>, memref<2048xbf16>
  return
}

// -----

func.func @filter_tile_tile_dynamic(%w: memref<3x3x3x96x96xbf16>, %tile: memref<32x?xbf16>, %k0: index, %n0: index, %k: index) {
  // expected-error @+1 {{'conv3d.load_filter_tile' op tile must have a static shape}}
  conv3d.load_filter_tile %w[%k0, %n0] limit %k into %tile : memref<3x3x3x96x96xbf16>, memref<32x?xbf16>
  return
}

// -----

func.func @filter_tile_filter_dynamic(%w: memref<3x3x3x96x?xbf16>, %tile: memref<32x64xbf16>, %k0: index, %n0: index, %k: index) {
  // expected-error @+1 {{'conv3d.load_filter_tile' op filter must have a static shape}}
  conv3d.load_filter_tile %w[%k0, %n0] limit %k into %tile : memref<3x3x3x96x?xbf16>, memref<32x64xbf16>
  return
}

// -----

func.func @filter_tile_element_type(%w: memref<3x3x3x96x96xf64>, %tile: memref<32x64xf64>, %k0: index, %n0: index, %k: index) {
  // expected-error @+1 {{'conv3d.load_filter_tile' op filter element type must be bf16, f16 or f32, got 'f64'}}
  conv3d.load_filter_tile %w[%k0, %n0] limit %k into %tile : memref<3x3x3x96x96xf64>, memref<32x64xf64>
  return
}

// -----

func.func @filter_tile_tile_element_type(%w: memref<96x3x3x3x96xf16>, %tile: memref<32x64xbf16>, %k0: index, %n0: index, %k: index) {
  // expected-error @+1 {{'conv3d.load_filter_tile' op tile element type 'bf16' must match the filter element type 'f16'}}
  conv3d.load_filter_tile %w[%k0, %n0] limit %k into %tile filter_layout = fqrsc : memref<96x3x3x3x96xf16>, memref<32x64xbf16>
  return
}

//===----------------------------------------------------------------------===//
// conv3d.tile_mma
//===----------------------------------------------------------------------===//

// -----

func.func @mma_a_rank(%a: memref<64x32x1xbf16>, %b: memref<32x64xbf16>, %acc: memref<64x64xf32>) {
  // expected-error @+1 {{'conv3d.tile_mma' op A tile must have rank 2, got rank 3}}
  conv3d.tile_mma %a, %b, %acc : memref<64x32x1xbf16>, memref<32x64xbf16>, memref<64x64xf32>
  return
}

// -----

func.func @mma_b_dynamic(%a: memref<64x32xbf16>, %b: memref<?x64xbf16>, %acc: memref<64x64xf32>) {
  // expected-error @+1 {{'conv3d.tile_mma' op B tile must have a static shape}}
  conv3d.tile_mma %a, %b, %acc : memref<64x32xbf16>, memref<?x64xbf16>, memref<64x64xf32>
  return
}

// -----

func.func @mma_acc_rank(%a: memref<64x32xbf16>, %b: memref<32x64xbf16>, %acc: memref<4096xf32>) {
  // expected-error @+1 {{'conv3d.tile_mma' op accumulator must have rank 2, got rank 1}}
  conv3d.tile_mma %a, %b, %acc : memref<64x32xbf16>, memref<32x64xbf16>, memref<4096xf32>
  return
}

// -----

func.func @mma_acc_dynamic(%a: memref<64x32xbf16>, %b: memref<32x64xbf16>, %acc: memref<64x?xf32>) {
  // expected-error @+1 {{'conv3d.tile_mma' op accumulator must have a static shape}}
  conv3d.tile_mma %a, %b, %acc : memref<64x32xbf16>, memref<32x64xbf16>, memref<64x?xf32>
  return
}

// -----

func.func @mma_k_mismatch(%a: memref<64x32xbf16>, %b: memref<16x64xbf16>, %acc: memref<64x64xf32>) {
  // expected-error @+1 {{'conv3d.tile_mma' op tile shapes do not chain: A 64x32, B 16x64, accumulator 64x64}}
  conv3d.tile_mma %a, %b, %acc : memref<64x32xbf16>, memref<16x64xbf16>, memref<64x64xf32>
  return
}

// -----

func.func @mma_m_mismatch(%a: memref<64x32xbf16>, %b: memref<32x64xbf16>, %acc: memref<128x64xf32>) {
  // expected-error @+1 {{'conv3d.tile_mma' op tile shapes do not chain: A 64x32, B 32x64, accumulator 128x64}}
  conv3d.tile_mma %a, %b, %acc : memref<64x32xbf16>, memref<32x64xbf16>, memref<128x64xf32>
  return
}

// -----

func.func @mma_n_mismatch(%a: memref<64x32xbf16>, %b: memref<32x64xbf16>, %acc: memref<64x32xf32>) {
  // expected-error @+1 {{'conv3d.tile_mma' op tile shapes do not chain: A 64x32, B 32x64, accumulator 64x32}}
  conv3d.tile_mma %a, %b, %acc : memref<64x32xbf16>, memref<32x64xbf16>, memref<64x32xf32>
  return
}

// -----

func.func @mma_a_element_type(%a: memref<64x32xi8>, %b: memref<32x64xi8>, %acc: memref<64x64xf32>) {
  // expected-error @+1 {{'conv3d.tile_mma' op A element type must be bf16, f16 or f32, got 'i8'}}
  conv3d.tile_mma %a, %b, %acc : memref<64x32xi8>, memref<32x64xi8>, memref<64x64xf32>
  return
}

// -----

func.func @mma_b_element_type(%a: memref<64x32xbf16>, %b: memref<32x64xf16>, %acc: memref<64x64xf32>) {
  // expected-error @+1 {{'conv3d.tile_mma' op B element type 'f16' must match the A element type 'bf16'}}
  conv3d.tile_mma %a, %b, %acc : memref<64x32xbf16>, memref<32x64xf16>, memref<64x64xf32>
  return
}

// -----

func.func @mma_acc_element_type(%a: memref<64x32xbf16>, %b: memref<32x64xbf16>, %acc: memref<64x64xbf16>) {
  // expected-error @+1 {{'conv3d.tile_mma' op accumulator element type must be f32, got 'bf16'}}
  conv3d.tile_mma %a, %b, %acc : memref<64x32xbf16>, memref<32x64xbf16>, memref<64x64xbf16>
  return
}

//===----------------------------------------------------------------------===//
// conv3d.store_output_tile
//===----------------------------------------------------------------------===//

// -----

func.func @store_acc_rank(%acc: memref<64x64x1xf32>, %out: memref<1x8x8x8x64xbf16>, %m0: index, %n0: index) {
  // expected-error @+1 {{'conv3d.store_output_tile' op accumulator must have rank 2, got rank 3}}
  conv3d.store_output_tile %acc into %out[%m0, %n0] mode = overwrite : memref<64x64x1xf32>, memref<1x8x8x8x64xbf16>
  return
}

// -----

func.func @store_acc_dynamic(%acc: memref<?x64xf32>, %out: memref<1x8x8x8x64xbf16>, %m0: index, %n0: index) {
  // expected-error @+1 {{'conv3d.store_output_tile' op accumulator must have a static shape}}
  conv3d.store_output_tile %acc into %out[%m0, %n0] mode = overwrite : memref<?x64xf32>, memref<1x8x8x8x64xbf16>
  return
}

// -----

func.func @store_output_rank(%acc: memref<64x64xf32>, %out: memref<512x64xbf16>, %m0: index, %n0: index) {
  // expected-error @+1 {{'conv3d.store_output_tile' op output must have rank 5, got rank 2}}
  conv3d.store_output_tile %acc into %out[%m0, %n0] mode = overwrite : memref<64x64xf32>, memref<512x64xbf16>
  return
}

// -----

func.func @store_acc_element_type(%acc: memref<64x64xbf16>, %out: memref<1x8x8x8x64xbf16>, %m0: index, %n0: index) {
  // expected-error @+1 {{'conv3d.store_output_tile' op accumulator element type must be f32, got 'bf16'}}
  conv3d.store_output_tile %acc into %out[%m0, %n0] mode = overwrite : memref<64x64xbf16>, memref<1x8x8x8x64xbf16>
  return
}

// -----

func.func @store_output_dynamic(%acc: memref<64x64xf32>, %out: memref<?x8x8x8x64xbf16>, %m0: index, %n0: index) {
  // expected-error @+1 {{'conv3d.store_output_tile' op output must have a static shape}}
  conv3d.store_output_tile %acc into %out[%m0, %n0] mode = overwrite : memref<64x64xf32>, memref<?x8x8x8x64xbf16>
  return
}

// -----

func.func @store_output_element_type(%acc: memref<64x64xf32>, %out: memref<1x8x8x8x64xi32>, %m0: index, %n0: index) {
  // expected-error @+1 {{'conv3d.store_output_tile' op output element type must be bf16, f16 or f32, got 'i32'}}
  conv3d.store_output_tile %acc into %out[%m0, %n0] mode = overwrite : memref<64x64xf32>, memref<1x8x8x8x64xi32>
  return
}

// -----

func.func @store_bias_rank(%acc: memref<64x64xf32>, %out: memref<1x8x8x8x64xbf16>, %bias: memref<1x64xf32>, %m0: index, %n0: index) {
  // expected-error @+1 {{'conv3d.store_output_tile' op bias must have rank 1, got rank 2}}
  conv3d.store_output_tile %acc into %out[%m0, %n0] bias(%bias : memref<1x64xf32>) mode = overwrite : memref<64x64xf32>, memref<1x8x8x8x64xbf16>
  return
}

// -----

func.func @store_bias_size(%acc: memref<64x64xf32>, %out: memref<1x8x8x8x64xbf16>, %bias: memref<96xf32>, %m0: index, %n0: index) {
  // expected-error @+1 {{'conv3d.store_output_tile' op bias must have 64 elements (one per filter), got 96}}
  conv3d.store_output_tile %acc into %out[%m0, %n0] bias(%bias : memref<96xf32>) mode = overwrite : memref<64x64xf32>, memref<1x8x8x8x64xbf16>
  return
}

// -----

func.func @store_bias_element_type(%acc: memref<64x64xf32>, %out: memref<1x8x8x8x64xbf16>, %bias: memref<64xf64>, %m0: index, %n0: index) {
  // expected-error @+1 {{'conv3d.store_output_tile' op bias element type must be bf16, f16 or f32, got 'f64'}}
  conv3d.store_output_tile %acc into %out[%m0, %n0] bias(%bias : memref<64xf64>) mode = accumulate : memref<64x64xf32>, memref<1x8x8x8x64xbf16>
  return
}

// -----

func.func @store_residual_rank(%acc: memref<64x64xf32>, %out: memref<1x8x8x8x64xbf16>, %res: memref<512x64xbf16>, %m0: index, %n0: index) {
  // expected-error @+1 {{'conv3d.store_output_tile' op residual must have rank 5, got rank 2}}
  conv3d.store_output_tile %acc into %out[%m0, %n0] residual(%res : memref<512x64xbf16>) mode = overwrite : memref<64x64xf32>, memref<1x8x8x8x64xbf16>
  return
}

// -----

func.func @store_residual_shape(%acc: memref<64x64xf32>, %out: memref<1x8x8x8x64xbf16>, %res: memref<1x8x8x8x32xbf16>, %m0: index, %n0: index) {
  // expected-error @+1 {{'conv3d.store_output_tile' op residual shape 1x8x8x8x32 is inconsistent with the expected 1x8x8x8x64}}
  conv3d.store_output_tile %acc into %out[%m0, %n0] residual(%res : memref<1x8x8x8x32xbf16>) mode = overwrite : memref<64x64xf32>, memref<1x8x8x8x64xbf16>
  return
}

// -----

func.func @store_residual_element_type(%acc: memref<64x64xf32>, %out: memref<1x8x8x8x64xf32>, %res: memref<1x8x8x8x64xf64>, %m0: index, %n0: index) {
  // expected-error @+1 {{'conv3d.store_output_tile' op residual element type must be bf16, f16 or f32, got 'f64'}}
  conv3d.store_output_tile %acc into %out[%m0, %n0] residual(%res : memref<1x8x8x8x64xf64>) mode = overwrite : memref<64x64xf32>, memref<1x8x8x8x64xf32>
  return
}

// -----

func.func @store_partial_not_f32(%acc: memref<64x64xf32>, %out: memref<2x1x8x8x8x64xbf16>, %m0: index, %n0: index, %s: index) {
  // expected-error @+1 {{'conv3d.store_output_tile' op mode = partial needs an f32 workspace, got 'bf16'}}
  conv3d.store_output_tile %acc into %out[%m0, %n0] split(%s) mode = partial : memref<64x64xf32>, memref<2x1x8x8x8x64xbf16>
  return
}

// -----

func.func @store_partial_bias(%acc: memref<64x64xf32>, %out: memref<2x1x8x8x8x64xf32>, %bias: memref<64xf32>, %m0: index, %n0: index, %s: index) {
  // expected-error @+1 {{'conv3d.store_output_tile' op mode = partial stores partial sums and cannot apply an epilogue}}
  conv3d.store_output_tile %acc into %out[%m0, %n0] split(%s) bias(%bias : memref<64xf32>) mode = partial : memref<64x64xf32>, memref<2x1x8x8x8x64xf32>
  return
}

// -----

func.func @store_partial_activation(%acc: memref<64x64xf32>, %out: memref<2x1x8x8x8x64xf32>, %m0: index, %n0: index, %s: index) {
  // expected-error @+1 {{'conv3d.store_output_tile' op mode = partial stores partial sums and cannot apply an epilogue}}
  conv3d.store_output_tile %acc into %out[%m0, %n0] split(%s) mode = partial activation = relu : memref<64x64xf32>, memref<2x1x8x8x8x64xf32>
  return
}

// -----

func.func @store_partial_no_split(%acc: memref<64x64xf32>, %out: memref<2x1x8x8x8x64xf32>, %m0: index, %n0: index) {
  // expected-error @+1 {{'conv3d.store_output_tile' op mode = partial needs a split index (split(%s)): the workspace slab it writes}}
  conv3d.store_output_tile %acc into %out[%m0, %n0] mode = partial : memref<64x64xf32>, memref<2x1x8x8x8x64xf32>
  return
}

// -----

func.func @store_split_not_partial(%acc: memref<64x64xf32>, %out: memref<1x8x8x8x64xf32>, %m0: index, %n0: index, %s: index) {
  // expected-error @+1 {{'conv3d.store_output_tile' op a split index goes with mode = partial only}}
  conv3d.store_output_tile %acc into %out[%m0, %n0] split(%s) mode = overwrite : memref<64x64xf32>, memref<1x8x8x8x64xf32>
  return
}

// -----

func.func @store_partial_rank5(%acc: memref<64x64xf32>, %out: memref<1x8x8x8x64xf32>, %m0: index, %n0: index, %s: index) {
  // expected-error @+1 {{'conv3d.store_output_tile' op output must have rank 6, got rank 5}}
  conv3d.store_output_tile %acc into %out[%m0, %n0] split(%s) mode = partial : memref<64x64xf32>, memref<1x8x8x8x64xf32>
  return
}

// -----

func.func @tile_mma_empty_tile(%a: memref<0x16xbf16>, %b: memref<16x8xbf16>, %acc: memref<0x8xf32>) {
  // expected-error @+1 {{A tile must not be empty, got shape 0x16}}
  conv3d.tile_mma %a, %b, %acc : memref<0x16xbf16>, memref<16x8xbf16>, memref<0x8xf32>
  return
}

// -----

func.func @filter_tile_empty_filter(%w: memref<0x3x3x8x16xbf16>, %tile: memref<16x16xbf16>, %k0: index, %n0: index, %k: index) {
  // expected-error @+1 {{filter must not be empty, got shape 0x3x3x8x16}}
  conv3d.load_filter_tile %w[%k0, %n0] limit %k into %tile : memref<0x3x3x8x16xbf16>, memref<16x16xbf16>
  return
}

// -----

func.func @store_empty_output(%acc: memref<16x16xf32>, %out: memref<1x0x8x8x16xf32>, %m0: index, %n0: index) {
  // expected-error @+1 {{output must not be empty, got shape 1x0x8x8x16}}
  conv3d.store_output_tile %acc into %out[%m0, %n0] mode = overwrite : memref<16x16xf32>, memref<1x0x8x8x16xf32>
  return
}

// -----

func.func @store_derivative_without_residual(%acc: memref<64x64xf32>, %out: memref<1x8x8x8x64xbf16>, %m0: index, %n0: index) {
  // expected-error @+1 {{'conv3d.store_output_tile' op activation = silu_backward multiplies by the derivative at the forward's pre-activation, which it reads as the residual operand; there is none}}
  conv3d.store_output_tile %acc into %out[%m0, %n0] mode = overwrite activation = silu_backward : memref<64x64xf32>, memref<1x8x8x8x64xbf16>
  return
}
