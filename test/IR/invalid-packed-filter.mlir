// Diagnostics of conv3d.conv's packed real NVFP4 filter (filter_quant). One
// split per diagnostic.
//
// RUN: conv3d-opt %s -split-input-file -verify-diagnostics

func.func @block_size_32(%x: tensor<1x4x6x6x64xbf16>, %w: tensor<32x3x3x3x32xi8>, %s: tensor<32x3x3x3x2xi8>, %wamax: f32, %init: tensor<1x2x4x4x32xf32>) {
  // expected-error @+1 {{filter_quant block_size must be 16 (the block16 scales of tcgen05.mma kind::mxf4nvf4), got 32}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x64xbf16>, tensor<32x3x3x3x32xi8>) filter_quant(#conv3d.nvfp4<block_size = 32>, %s : tensor<32x3x3x3x2xi8>, %wamax) outs(%init : tensor<1x2x4x4x32xf32>) filter_layout = fqrsc -> tensor<1x2x4x4x32xf32>
  return
}

// -----

func.func @qrscf(%x: tensor<1x4x6x6x64xbf16>, %w: tensor<3x3x3x32x32xi8>, %s: tensor<3x3x3x4x32xi8>, %wamax: f32, %init: tensor<1x2x4x4x32xf32>) {
  // expected-error @+1 {{a packed NVFP4 filter (filter_quant) must have filter_layout = fqrsc: the block-scaled MMA reads FP4 operands K-major}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x64xbf16>, tensor<3x3x3x32x32xi8>) filter_quant(#conv3d.nvfp4<block_size = 16>, %s : tensor<3x3x3x4x32xi8>, %wamax) outs(%init : tensor<1x2x4x4x32xf32>) -> tensor<1x2x4x4x32xf32>
  return
}

// -----

func.func @bf16_codes(%x: tensor<1x4x6x6x64xbf16>, %w: tensor<32x3x3x3x32xbf16>, %s: tensor<32x3x3x3x4xi8>, %wamax: f32, %init: tensor<1x2x4x4x32xf32>) {
  // expected-error @+1 {{a packed NVFP4 filter holds i8 codes (two E2M1 codes a byte), got 'bf16'}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x64xbf16>, tensor<32x3x3x3x32xbf16>) filter_quant(#conv3d.nvfp4<block_size = 16>, %s : tensor<32x3x3x3x4xi8>, %wamax) outs(%init : tensor<1x2x4x4x32xf32>) filter_layout = fqrsc -> tensor<1x2x4x4x32xf32>
  return
}

// -----

func.func @f32_scales(%x: tensor<1x4x6x6x64xbf16>, %w: tensor<32x3x3x3x32xi8>, %s: tensor<32x3x3x3x4xf32>, %wamax: f32, %init: tensor<1x2x4x4x32xf32>) {
  // expected-error @+1 {{filter scales must be i8 (E4M3 bits), got 'f32'}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x64xbf16>, tensor<32x3x3x3x32xi8>) filter_quant(#conv3d.nvfp4<block_size = 16>, %s : tensor<32x3x3x3x4xf32>, %wamax) outs(%init : tensor<1x2x4x4x32xf32>) filter_layout = fqrsc -> tensor<1x2x4x4x32xf32>
  return
}

// -----

func.func @scales_rank(%x: tensor<1x4x6x6x64xbf16>, %w: tensor<32x3x3x3x32xi8>, %s: tensor<32x108xi8>, %wamax: f32, %init: tensor<1x2x4x4x32xf32>) {
  // expected-error @+1 {{filter scales must have rank 5}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x64xbf16>, tensor<32x3x3x3x32xi8>) filter_quant(#conv3d.nvfp4<block_size = 16>, %s : tensor<32x108xi8>, %wamax) outs(%init : tensor<1x2x4x4x32xf32>) filter_layout = fqrsc -> tensor<1x2x4x4x32xf32>
  return
}

// -----

func.func @scales_shape(%x: tensor<1x4x6x6x64xbf16>, %w: tensor<32x3x3x3x32xi8>, %s: tensor<32x3x3x3x8xi8>, %wamax: f32, %init: tensor<1x2x4x4x32xf32>) {
  // expected-error @+1 {{filter scales shape 32x3x3x3x8 is inconsistent with the expected 32x3x3x3x4}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x64xbf16>, tensor<32x3x3x3x32xi8>) filter_quant(#conv3d.nvfp4<block_size = 16>, %s : tensor<32x3x3x3x8xi8>, %wamax) outs(%init : tensor<1x2x4x4x32xf32>) filter_layout = fqrsc -> tensor<1x2x4x4x32xf32>
  return
}

// -----

func.func @partial_block(%x: tensor<1x4x6x6x24xbf16>, %w: tensor<32x3x3x3x12xi8>, %s: tensor<32x3x3x3x2xi8>, %wamax: f32, %init: tensor<1x2x4x4x32xf32>) {
  // expected-error @+1 {{a packed NVFP4 filter of C = 24 channels is not a whole number of blocks of 16}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x24xbf16>, tensor<32x3x3x3x12xi8>) filter_quant(#conv3d.nvfp4<block_size = 16>, %s : tensor<32x3x3x3x2xi8>, %wamax) outs(%init : tensor<1x2x4x4x32xf32>) filter_layout = fqrsc -> tensor<1x2x4x4x32xf32>
  return
}

// -----

func.func @channels_mismatch(%x: tensor<1x4x6x6x32xbf16>, %w: tensor<32x3x3x3x32xi8>, %s: tensor<32x3x3x3x4xi8>, %wamax: f32, %init: tensor<1x2x4x4x32xf32>) {
  // expected-error @+1 {{filter has 64 input channels but the input has 32 (filter_layout = fqrsc)}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x32xbf16>, tensor<32x3x3x3x32xi8>) filter_quant(#conv3d.nvfp4<block_size = 16>, %s : tensor<32x3x3x3x4xi8>, %wamax) outs(%init : tensor<1x2x4x4x32xf32>) filter_layout = fqrsc -> tensor<1x2x4x4x32xf32>
  return
}

// -----

func.func @dynamic_codes(%x: tensor<1x4x6x6x64xbf16>, %w: tensor<?x3x3x3x32xi8>, %s: tensor<32x3x3x3x4xi8>, %wamax: f32, %init: tensor<1x2x4x4x32xf32>) {
  // expected-error @+1 {{a packed NVFP4 filter must have a static shape}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x64xbf16>, tensor<?x3x3x3x32xi8>) filter_quant(#conv3d.nvfp4<block_size = 16>, %s : tensor<32x3x3x3x4xi8>, %wamax) outs(%init : tensor<1x2x4x4x32xf32>) filter_layout = fqrsc -> tensor<1x2x4x4x32xf32>
  return
}

// -----

func.func @codes_without_quant(%x: tensor<1x4x6x6x64xbf16>, %w: tensor<32x3x3x3x32xi8>, %init: tensor<1x2x4x4x32xf32>) {
  // expected-error @+1 {{filter element type 'i8' must match the input element type 'bf16'}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x64xbf16>, tensor<32x3x3x3x32xi8>) outs(%init : tensor<1x2x4x4x32xf32>) filter_layout = fqrsc -> tensor<1x2x4x4x32xf32>
  return
}

// -----

// The generic form can give the operands without the attribute, or the
// attribute without them.
func.func @scales_without_attr(%x: tensor<1x4x6x6x64xbf16>, %w: tensor<32x3x3x3x64xbf16>, %s: tensor<32x3x3x3x4xi8>, %wamax: f32, %init: tensor<1x2x4x4x32xf32>) {
  // expected-error @+1 {{filter scales and a filter amax need a filter_quant attribute}}
  %0 = "conv3d.conv"(%x, %w, %init, %s, %wamax) <{filter_layout = #conv3d<filter_layout fqrsc>, operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 1, 0, 0, 0, 1, 1>}> : (tensor<1x4x6x6x64xbf16>, tensor<32x3x3x3x64xbf16>, tensor<1x2x4x4x32xf32>, tensor<32x3x3x3x4xi8>, f32) -> tensor<1x2x4x4x32xf32>
  return
}

// -----

func.func @attr_without_scales(%x: tensor<1x4x6x6x64xbf16>, %w: tensor<32x3x3x3x32xi8>, %wamax: f32, %init: tensor<1x2x4x4x32xf32>) {
  // expected-error @+1 {{filter_quant needs the filter's scales and amax operands}}
  %0 = "conv3d.conv"(%x, %w, %init, %wamax) <{filter_layout = #conv3d<filter_layout fqrsc>, filter_quant = #conv3d.nvfp4<block_size = 16>, operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 1, 0, 0, 0, 0, 1>}> : (tensor<1x4x6x6x64xbf16>, tensor<32x3x3x3x32xi8>, tensor<1x2x4x4x32xf32>, f32) -> tensor<1x2x4x4x32xf32>
  return
}
