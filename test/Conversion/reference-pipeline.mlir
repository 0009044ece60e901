// The whole CPU pipeline with the reference lowering: conv3d ops on tensors
// become linalg, are bufferized and lowered to the LLVM dialect. Nothing of
// the conv3d dialect, or of any other dialect than llvm, may be left.
//
// RUN: conv3d-opt %s --conv3d-cpu-pipeline=lowering=reference | FileCheck %s
// RUN: conv3d-opt %s --conv3d-cpu-pipeline=lowering=reference | FileCheck %s --check-prefix=LEFT

// CHECK-LABEL: llvm.func @conv(
//       CHECK:   llvm.fmul
//       CHECK:   llvm.fadd
// SiLU: exp(-x).
//       CHECK:   llvm.intr.exp
//       CHECK:   llvm.return
func.func @conv(%x: tensor<1x4x6x6x8xbf16>, %w: tensor<3x3x3x8x16xbf16>,
                %b: tensor<16xf32>) -> tensor<1x4x6x6x16xbf16> {
  %e = tensor.empty() : tensor<1x4x6x6x16xbf16>
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x6x6x8xbf16>, tensor<3x3x3x8x16xbf16>)
         bias(%b : tensor<16xf32>) outs(%e : tensor<1x4x6x6x16xbf16>) overwrite
         padding = [2, 0, 1, 1, 1, 1] activation = silu -> tensor<1x4x6x6x16xbf16>
  return %0 : tensor<1x4x6x6x16xbf16>
}

// Input quantization, a stand-alone quantize and an epilogue.
// CHECK-LABEL: llvm.func @quantized(
//       CHECK:   llvm.intr.roundeven
//       CHECK:   llvm.intr.tanh
//       CHECK:   llvm.return
func.func @quantized(%x: tensor<1x3x4x4x16xf32>, %w: tensor<16x1x3x3x16xf32>,
                     %amax: f32, %sum: tensor<1x3x4x4x16xf32>)
    -> (tensor<1x3x4x4x16xf32>, tensor<1x3x4x4x16xf32>, tensor<1x3x4x4x16xf32>) {
  %e = tensor.empty() : tensor<1x3x4x4x16xf32>
  %0 = conv3d.conv ins(%x, %w : tensor<1x3x4x4x16xf32>, tensor<16x1x3x3x16xf32>)
         quantize(#conv3d.nvfp4<block_size = 16>, %amax)
         outs(%e : tensor<1x3x4x4x16xf32>) overwrite padding = [0, 0, 1, 1, 1, 1]
         filter_layout = fqrsc -> tensor<1x3x4x4x16xf32>
  %1 = conv3d.quantize #conv3d.nvfp4<block_size = 16> axes = [4]
         ins(%x : tensor<1x3x4x4x16xf32>) amax(%amax)
         outs(%e : tensor<1x3x4x4x16xf32>) -> tensor<1x3x4x4x16xf32>
  %2 = conv3d.epilogue ins(%sum : tensor<1x3x4x4x16xf32>)
         outs(%e : tensor<1x3x4x4x16xf32>) overwrite activation = gelu_tanh
         -> tensor<1x3x4x4x16xf32>
  return %0, %1, %2 : tensor<1x3x4x4x16xf32>, tensor<1x3x4x4x16xf32>, tensor<1x3x4x4x16xf32>
}

// Only the llvm dialect (and the module, with the bytes its allocations
// need) is left, anywhere in the output.
// LEFT: module attributes {conv3d.host_allocation_bytes = {{[0-9]+}} : i64}
// LEFT-NOT: {{(conv3d|linalg|tensor|memref|bufferization|scf|cf|arith|math|func|affine|vector)\.[a-z_]+}}
