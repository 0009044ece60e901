// A convolution with a packed real NVFP4 filter (filter_quant) is unpacked
// by conv3d-apply-nvfp4-mode (fake) or multiplied packed by the block-scaled
// sm100 kernel (real): the passes that would build bf16 tiles, linalg loops
// or Q-slices of it directly say so instead of misreading the codes. `auto`
// Q-slicing leaves it alone.
//
// RUN: split-file %s %t
// RUN: conv3d-opt %t/memref.mlir -conv3d-implicit-gemm=target=sm100 -verify-diagnostics
// RUN: conv3d-opt %t/memref.mlir -conv3d-implicit-gemm=target=cpu -verify-diagnostics
// RUN: conv3d-opt %t/tensor.mlir -conv3d-to-linalg -verify-diagnostics
// RUN: conv3d-opt %t/tensor-qslice.mlir -conv3d-qslice=strategy=fused -verify-diagnostics
// RUN: conv3d-opt %t/tensor-qslice.mlir -conv3d-qslice=strategy=separate -verify-diagnostics
// RUN: conv3d-opt %t/tensor.mlir -conv3d-qslice=strategy=auto | FileCheck %s --check-prefix=AUTO

// AUTO-LABEL: func.func @packed
//   AUTO-NOT:   tensor.extract_slice
//       AUTO:   conv3d.conv {{.*}} filter_quant(#conv3d.nvfp4<block_size = 16>
//   AUTO-NOT:   conv3d.conv

//--- memref.mlir
func.func @packed(%x: memref<1x4x6x6x64xbf16>, %w: memref<32x3x3x3x32xi8>,
                  %s: memref<32x3x3x3x4xi8>, %amax: f32, %wamax: f32,
                  %init: memref<1x2x4x4x32xf32>) {
  // expected-error @+1 {{conv3d-implicit-gemm cannot tile this convolution: its filter is packed NVFP4 (filter_quant): conv3d-apply-nvfp4-mode unpacks it for nvfp4-mode=fake, and only the block-scaled sm100 kernel (nvfp4-mode=real, conv3d-lower-block-scaled-to-sm100) multiplies it packed}}
  conv3d.conv ins(%x, %w : memref<1x4x6x6x64xbf16>, memref<32x3x3x3x32xi8>)
    quantize(#conv3d.nvfp4<block_size = 16>, %amax)
    filter_quant(#conv3d.nvfp4<block_size = 16>, %s : memref<32x3x3x3x4xi8>, %wamax)
    outs(%init : memref<1x2x4x4x32xf32>) overwrite filter_layout = fqrsc
  return
}

//--- tensor.mlir
func.func @packed(%x: tensor<1x4x6x6x64xbf16>, %w: tensor<32x3x3x3x32xi8>,
                  %s: tensor<32x3x3x3x4xi8>, %wamax: f32,
                  %init: tensor<1x2x4x4x32xf32>) -> tensor<1x2x4x4x32xf32> {
  // expected-error @+1 {{conv3d-to-linalg does not lower a packed NVFP4 filter (filter_quant): conv3d-apply-nvfp4-mode unpacks it first (nvfp4-mode=fake)}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x64xbf16>, tensor<32x3x3x3x32xi8>)
         filter_quant(#conv3d.nvfp4<block_size = 16>, %s : tensor<32x3x3x3x4xi8>, %wamax)
         outs(%init : tensor<1x2x4x4x32xf32>) overwrite filter_layout = fqrsc
         -> tensor<1x2x4x4x32xf32>
  return %0 : tensor<1x2x4x4x32xf32>
}

//--- tensor-qslice.mlir
func.func @packed(%x: tensor<1x4x6x6x64xbf16>, %w: tensor<32x3x3x3x32xi8>,
                  %s: tensor<32x3x3x3x4xi8>, %wamax: f32,
                  %init: tensor<1x2x4x4x32xf32>) -> tensor<1x2x4x4x32xf32> {
  // expected-error-re @+1 {{cannot apply the {{fused|separate}} Q-slice strategy to a convolution with a packed NVFP4 filter (filter_quant)}}
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x64xbf16>, tensor<32x3x3x3x32xi8>)
         filter_quant(#conv3d.nvfp4<block_size = 16>, %s : tensor<32x3x3x3x4xi8>, %wamax)
         outs(%init : tensor<1x2x4x4x32xf32>) overwrite filter_layout = fqrsc
         -> tensor<1x2x4x4x32xf32>
  return %0 : tensor<1x2x4x4x32xf32>
}
