// conv3d-apply-nvfp4-mode. nvfp4-mode=real asks for real FP4, so each
// convolution with an NVFP4 operand that the block-scaled sm100 kernel
// cannot take is an error naming why; one it takes gets its input
// quantization fused (the conv3d.quantize feeding it becomes its
// `quantize`, and goes if nothing else reads it). Convolutions without
// NVFP4 operands are left alone. nvfp4-mode=fake unpacks a packed filter
// (dequantized to the input's type by a linalg.generic) and drops
// filter_quant.
//
// RUN: split-file %s %t
// RUN: conv3d-opt %t/reasons.mlir -split-input-file -conv3d-apply-nvfp4-mode='target=sm100 mode=real' -verify-diagnostics
// RUN: conv3d-opt %t/packed.mlir -conv3d-apply-nvfp4-mode='target=sm100 mode=real' | FileCheck %s --check-prefix=REAL
// RUN: conv3d-opt %t/taken.mlir -conv3d-apply-nvfp4-mode='target=sm100 mode=real' | FileCheck %s --check-prefix=TAKEN
// RUN: conv3d-opt %t/plain.mlir -conv3d-apply-nvfp4-mode='target=sm100 mode=real' | FileCheck %s --check-prefix=PLAIN
// RUN: conv3d-opt %t/packed.mlir -conv3d-apply-nvfp4-mode='target=sm100 mode=fake' | FileCheck %s --check-prefix=FAKE
// RUN: conv3d-opt %t/packed-memref.mlir -conv3d-apply-nvfp4-mode -verify-diagnostics
// RUN: not conv3d-opt %t/packed.mlir -conv3d-apply-nvfp4-mode='target=sm90 mode=real' 2>&1 | FileCheck %s --check-prefix=SM90
// RUN: not conv3d-opt %t/packed.mlir -conv3d-apply-nvfp4-mode='target=sm100 mode=genuine' 2>&1 | FileCheck %s --check-prefix=MODE
// The graph pipeline runs the check in real mode, after the input
// quantization is placed; conv3d-select-config gives the packed
// convolution no config (the block-scaled kernel chooses its tile) and
// says nothing about it:
// RUN: conv3d-opt %t/packed.mlir --conv3d-graph-pipeline='target=sm100 nvfp4-mode=real' 2>&1 | FileCheck %s --check-prefix=PIPELINE
// RUN: conv3d-opt %t/plain.mlir --conv3d-graph-pipeline='target=sm100 nvfp4-mode=real' | FileCheck %s --check-prefix=PLAIN
//
// PLAIN: conv3d.conv
// FAKE-DAG: #[[CODES:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4 floordiv 2)>
// FAKE-DAG: #[[SCALES:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4 floordiv 16)>
// FAKE-LABEL: func.func @packed
//  FAKE-SAME:   (%[[X:[^:]*]]: tensor<1x4x6x6x256xbf16>, %[[W:[^:]*]]: tensor<32x3x3x3x128xi8>, %[[S:[^:]*]]: tensor<32x3x3x3x16xi8>, %[[A:[^:]*]]: f32, %[[WA:[^:]*]]: f32
//      FAKE:   %[[GS:.*]] = arith.divf %[[WA]], %{{.*}} : f32
//      FAKE:   %[[UNPACKED:.*]] = linalg.generic {indexing_maps = [#[[CODES]], #[[SCALES]], #{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%[[W]], %[[S]] : tensor<32x3x3x3x128xi8>, tensor<32x3x3x3x16xi8>) outs(%{{.*}} : tensor<32x3x3x3x256xbf16>)
//      FAKE:     linalg.index 4
//      FAKE:     arith.shrui
//      FAKE:     arith.andi
//      FAKE:     arith.mulf %{{.*}}, %[[GS]] : f32
//      FAKE:     arith.truncf {{.*}} : f32 to bf16
//      FAKE:   conv3d.conv ins(%{{.*}}, %[[UNPACKED]] : tensor<1x4x6x6x256xbf16>, tensor<32x3x3x3x256xbf16>)
//  FAKE-NOT:   filter_quant
// SM90: error: nvfp4-mode=real needs target=sm100 (the block-scaled tcgen05.mma), not sm90
// MODE: for the --mode option: Cannot find option named 'genuine'
// PIPELINE-NOT: remark
// PIPELINE-NOT: conv3d.quantize
// PIPELINE: conv3d.conv ins(%arg0, %arg1 : tensor<1x4x6x6x256xbf16>, tensor<32x3x3x3x128xi8>) quantize(#conv3d.nvfp4<block_size = 16>, %arg3) filter_quant(#conv3d.nvfp4<block_size = 16>, %arg2 : tensor<32x3x3x3x16xi8>, %arg4)
// PIPELINE-NOT: config =
// PIPELINE-SAME: filter_layout = fqrsc ->
// REAL-LABEL: func.func @packed
//  REAL-SAME:   (%[[X:[^:]*]]: tensor<1x4x6x6x256xbf16>, %[[W:[^:]*]]: tensor<32x3x3x3x128xi8>, %[[S:[^:]*]]: tensor<32x3x3x3x16xi8>, %[[A:[^:]*]]: f32, %[[WA:[^:]*]]: f32
//  REAL-NOT:   conv3d.quantize
//      REAL:   conv3d.conv ins(%[[X]], %[[W]] : tensor<1x4x6x6x256xbf16>, tensor<32x3x3x3x128xi8>) quantize(#conv3d.nvfp4<block_size = 16>, %[[A]]) filter_quant(#conv3d.nvfp4<block_size = 16>, %[[S]] : tensor<32x3x3x3x16xi8>, %[[WA]])
// A conv3d.quantize with another user stays for it; a fused one is kept.
// TAKEN-LABEL: func.func @shared_quantize
//       TAKEN:   %[[Q:.*]] = conv3d.quantize
//       TAKEN:   conv3d.conv ins(%arg0, %arg1 : {{.*}}) quantize(#conv3d.nvfp4<block_size = 16>, %arg3) filter_quant
//       TAKEN:   return %{{.*}}, %[[Q]]
// TAKEN-LABEL: func.func @fused
//       TAKEN:   conv3d.conv ins(%arg0, %arg1 : {{.*}}) quantize(#conv3d.nvfp4<block_size = 16>, %arg3) filter_quant

//--- plain.mlir
func.func @plain(%x: tensor<1x4x6x6x64xbf16>, %w: tensor<3x3x3x64x32xbf16>, %init: tensor<1x2x4x4x32xf32>) -> tensor<1x2x4x4x32xf32> {
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x64xbf16>, tensor<3x3x3x64x32xbf16>) outs(%init : tensor<1x2x4x4x32xf32>) overwrite -> tensor<1x2x4x4x32xf32>
  return %0 : tensor<1x2x4x4x32xf32>
}

//--- packed.mlir
func.func @packed(%x: tensor<1x4x6x6x256xbf16>, %w: tensor<32x3x3x3x128xi8>, %s: tensor<32x3x3x3x16xi8>, %amax: f32, %wamax: f32, %init: tensor<1x2x4x4x32xf32>) -> tensor<1x2x4x4x32xf32> {
  %e = tensor.empty() : tensor<1x4x6x6x256xbf16>
  %q = conv3d.quantize #conv3d.nvfp4<block_size = 16> axes = [4] ins(%x : tensor<1x4x6x6x256xbf16>) amax(%amax) outs(%e : tensor<1x4x6x6x256xbf16>) -> tensor<1x4x6x6x256xbf16>
  %0 = conv3d.conv ins(%q, %w : tensor<1x4x6x6x256xbf16>, tensor<32x3x3x3x128xi8>) filter_quant(#conv3d.nvfp4<block_size = 16>, %s : tensor<32x3x3x3x16xi8>, %wamax) outs(%init : tensor<1x2x4x4x32xf32>) overwrite filter_layout = fqrsc -> tensor<1x2x4x4x32xf32>
  return %0 : tensor<1x2x4x4x32xf32>
}

//--- reasons.mlir
func.func @filter_not_packed(%x: tensor<1x4x6x6x256xbf16>, %w: tensor<32x3x3x3x256xbf16>, %amax: f32, %init: tensor<1x2x4x4x32xf32>) -> tensor<1x2x4x4x32xf32> {
  // expected-error @+1 {{nvfp4-mode=real: the block-scaled MMA multiplies real FP4 only when both operands are NVFP4, and this convolution's filter is not packed (filter_quant; Engine::quantizeFilter packs one). Use nvfp4-mode=fake}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x256xbf16>, tensor<32x3x3x3x256xbf16>) quantize(#conv3d.nvfp4<block_size = 16>, %amax) outs(%init : tensor<1x2x4x4x32xf32>) overwrite filter_layout = fqrsc -> tensor<1x2x4x4x32xf32>
  return %0 : tensor<1x2x4x4x32xf32>
}

// -----

func.func @input_not_quantized(%x: tensor<1x4x6x6x256xbf16>, %w: tensor<32x3x3x3x128xi8>, %s: tensor<32x3x3x3x16xi8>, %wamax: f32, %init: tensor<1x2x4x4x32xf32>) -> tensor<1x2x4x4x32xf32> {
  // expected-error @+1 {{nvfp4-mode=real: the block-scaled MMA multiplies real FP4 only when both operands are NVFP4, and this convolution's input is not quantized along its channels (quantize, or a conv3d.quantize with axes = [4])}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x256xbf16>, tensor<32x3x3x3x128xi8>) filter_quant(#conv3d.nvfp4<block_size = 16>, %s : tensor<32x3x3x3x16xi8>, %wamax) outs(%init : tensor<1x2x4x4x32xf32>) overwrite filter_layout = fqrsc -> tensor<1x2x4x4x32xf32>
  return %0 : tensor<1x2x4x4x32xf32>
}

// -----

func.func @input_block_32(%x: tensor<1x4x6x6x256xbf16>, %w: tensor<32x3x3x3x128xi8>, %s: tensor<32x3x3x3x16xi8>, %amax: f32, %wamax: f32, %init: tensor<1x2x4x4x32xf32>) -> tensor<1x2x4x4x32xf32> {
  // expected-error @+1 {{nvfp4-mode=real: the input's NVFP4 block size is 32; the block-scaled MMA (kind::mxf4nvf4 block16) takes 16}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x256xbf16>, tensor<32x3x3x3x128xi8>) quantize(#conv3d.nvfp4<block_size = 32>, %amax) filter_quant(#conv3d.nvfp4<block_size = 16>, %s : tensor<32x3x3x3x16xi8>, %wamax) outs(%init : tensor<1x2x4x4x32xf32>) overwrite filter_layout = fqrsc -> tensor<1x2x4x4x32xf32>
  return %0 : tensor<1x2x4x4x32xf32>
}

// -----

func.func @history(%x: tensor<1x4x6x6x256xbf16>, %h: tensor<1x2x6x6x256xbf16>, %w: tensor<32x3x3x3x128xi8>, %s: tensor<32x3x3x3x16xi8>, %amax: f32, %wamax: f32, %init: tensor<1x4x4x4x32xf32>) -> tensor<1x4x4x4x32xf32> {
  // expected-error @+1 {{nvfp4-mode=real: the block-scaled kernel does not read a history operand}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x256xbf16>, tensor<32x3x3x3x128xi8>) history(%h : tensor<1x2x6x6x256xbf16>) quantize(#conv3d.nvfp4<block_size = 16>, %amax) filter_quant(#conv3d.nvfp4<block_size = 16>, %s : tensor<32x3x3x3x16xi8>, %wamax) outs(%init : tensor<1x4x4x4x32xf32>) overwrite filter_layout = fqrsc -> tensor<1x4x4x4x32xf32>
  return %0 : tensor<1x4x4x4x32xf32>
}

// -----

// C = 48: not even the rows of codes are multiples of 16 bytes.
func.func @channels_48(%x: tensor<1x4x6x6x48xbf16>, %w: tensor<32x3x3x3x24xi8>, %s: tensor<32x3x3x3x3xi8>, %amax: f32, %wamax: f32, %init: tensor<1x2x4x4x32xf32>) -> tensor<1x2x4x4x32xf32> {
  // expected-error @+1 {{nvfp4-mode=real: the block-scaled sm100 kernel cannot take this convolution: C = 48 is not a multiple of 32: rows of packed FP4 codes must be multiples of 16 bytes for TMA}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x48xbf16>, tensor<32x3x3x3x24xi8>) quantize(#conv3d.nvfp4<block_size = 16>, %amax) filter_quant(#conv3d.nvfp4<block_size = 16>, %s : tensor<32x3x3x3x3xi8>, %wamax) outs(%init : tensor<1x2x4x4x32xf32>) overwrite filter_layout = fqrsc -> tensor<1x2x4x4x32xf32>
  return %0 : tensor<1x2x4x4x32xf32>
}

// -----

func.func @padding_20(%x: tensor<1x4x6x6x256xbf16>, %w: tensor<32x1x3x3x128xi8>, %s: tensor<32x1x3x3x16xi8>, %amax: f32, %wamax: f32, %init: tensor<1x4x44x4x32xf32>) -> tensor<1x4x44x4x32xf32> {
  // expected-error @+1 {{nvfp4-mode=real: the block-scaled sm100 kernel cannot take this convolution: the height padding (20, 20) and window put a TMA im2col corner outside [-16, 15]}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x256xbf16>, tensor<32x1x3x3x128xi8>) quantize(#conv3d.nvfp4<block_size = 16>, %amax) filter_quant(#conv3d.nvfp4<block_size = 16>, %s : tensor<32x1x3x3x16xi8>, %wamax) outs(%init : tensor<1x4x44x4x32xf32>) overwrite padding = [0, 0, 20, 20, 0, 0] filter_layout = fqrsc -> tensor<1x4x44x4x32xf32>
  return %0 : tensor<1x4x44x4x32xf32>
}

//--- taken.mlir
func.func @shared_quantize(%x: tensor<1x4x6x6x256xbf16>, %w: tensor<32x3x3x3x128xi8>, %s: tensor<32x3x3x3x16xi8>, %amax: f32, %wamax: f32, %init: tensor<1x2x4x4x32xf32>) -> (tensor<1x2x4x4x32xf32>, tensor<1x4x6x6x256xbf16>) {
  %e = tensor.empty() : tensor<1x4x6x6x256xbf16>
  %q = conv3d.quantize #conv3d.nvfp4<block_size = 16> axes = [4] ins(%x : tensor<1x4x6x6x256xbf16>) amax(%amax) outs(%e : tensor<1x4x6x6x256xbf16>) -> tensor<1x4x6x6x256xbf16>
  %0 = conv3d.conv ins(%q, %w : tensor<1x4x6x6x256xbf16>, tensor<32x3x3x3x128xi8>) filter_quant(#conv3d.nvfp4<block_size = 16>, %s : tensor<32x3x3x3x16xi8>, %wamax) outs(%init : tensor<1x2x4x4x32xf32>) overwrite filter_layout = fqrsc -> tensor<1x2x4x4x32xf32>
  return %0, %q : tensor<1x2x4x4x32xf32>, tensor<1x4x6x6x256xbf16>
}

func.func @fused(%x: tensor<1x4x6x6x256xbf16>, %w: tensor<32x3x3x3x128xi8>, %s: tensor<32x3x3x3x16xi8>, %amax: f32, %wamax: f32, %init: tensor<1x2x4x4x32xf32>) -> tensor<1x2x4x4x32xf32> {
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x256xbf16>, tensor<32x3x3x3x128xi8>) quantize(#conv3d.nvfp4<block_size = 16>, %amax) filter_quant(#conv3d.nvfp4<block_size = 16>, %s : tensor<32x3x3x3x16xi8>, %wamax) outs(%init : tensor<1x2x4x4x32xf32>) overwrite filter_layout = fqrsc -> tensor<1x2x4x4x32xf32>
  return %0 : tensor<1x2x4x4x32xf32>
}

//--- packed-memref.mlir
func.func @packed_memref(%x: memref<1x4x6x6x256xbf16>, %w: memref<32x3x3x3x128xi8>, %s: memref<32x3x3x3x16xi8>, %wamax: f32, %init: memref<1x2x4x4x32xf32>) {
  // expected-error @+1 {{nvfp4-mode=fake unpacks a packed NVFP4 filter (filter_quant) on the tensor form; run conv3d-apply-nvfp4-mode before bufferization}}
  conv3d.conv ins(%x, %w : memref<1x4x6x6x256xbf16>, memref<32x3x3x3x128xi8>) filter_quant(#conv3d.nvfp4<block_size = 16>, %s : memref<32x3x3x3x16xi8>, %wamax) outs(%init : memref<1x2x4x4x32xf32>) overwrite filter_layout = fqrsc
  return
}
