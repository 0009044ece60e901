// The registered GPU pipeline with target=sm100 and nvfp4-mode=real: a
// tensor-level conv3d.conv with a packed NVFP4 filter (filter_quant) fed by
// a conv3d.quantize of its input becomes the packing prepass (a kernel of
// its own, launched first) and the block-scaled kernel, with host code that
// encodes the four UINT8 TMA descriptors; sm_100a code is PTX 8.8. With
// nvfp4-mode=fake the same function unpacks the filter and runs the
// kind::f16 kernel. Generated, never run (no sm_100 GPU).
//
// format=isa stops at PTX, but gpu-module-to-binary links libdevice from the
// CUDA toolkit: the ptxas feature stands for a toolkit being there.
// REQUIRES: ptxas
//
// RUN: conv3d-opt %s --conv3d-gpu-pipeline='target=sm100 nvfp4-mode=real gpu-binary-format=isa' | FileCheck %s --check-prefix=REAL
// RUN: conv3d-opt %s --conv3d-gpu-pipeline='target=sm100 nvfp4-mode=fake gpu-binary-format=isa' | FileCheck %s --check-prefix=FAKE

// REAL-LABEL: llvm.func @conv(
// REAL: gpu.launch_func {{.*}}@[[PACK:[a-z0-9_]+]]::@{{.*}} blocks
// REAL-COUNT-2: llvm.call @conv3dTmaIm2colDescriptor(
// REAL-COUNT-2: llvm.call @conv3dTmaTiledDescriptor(
// REAL: llvm.call @conv3dMultiprocessorCount()
// REAL: gpu.launch_func {{.*}}@[[KERNEL:[a-z0-9_]+]]::@{{.*}} blocks
// REAL-DAG: gpu.binary @[[PACK]] [#gpu.object<#nvvm.target<O = 3, chip = "sm_100a", features = "+ptx88">
// REAL-DAG: gpu.binary @[[KERNEL]] [#gpu.object<#nvvm.target<O = 3, chip = "sm_100a", features = "+ptx88">, {{.*}}tcgen05.cp.cta_group::1.32x128b.warpx4{{.*}}tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16
// REAL-NOT: kind::f16

// FAKE-LABEL: llvm.func @conv(
// FAKE-COUNT-1: llvm.call @conv3dTmaIm2colDescriptor(
// FAKE-NOT: llvm.call @conv3dTmaIm2colDescriptor(
// FAKE: tcgen05.mma.cta_group::1.kind::f16
// FAKE-NOT: block_scale
func.func @conv(%x: tensor<1x6x10x10x256xbf16>, %w: tensor<64x3x3x3x128xi8>, %s: tensor<64x3x3x3x16xi8>, %amax: f32, %wamax: f32) -> tensor<1x4x8x8x64xbf16> {
  %e = tensor.empty() : tensor<1x6x10x10x256xbf16>
  %q = conv3d.quantize #conv3d.nvfp4<block_size = 16> axes = [4] ins(%x : tensor<1x6x10x10x256xbf16>) amax(%amax) outs(%e : tensor<1x6x10x10x256xbf16>) -> tensor<1x6x10x10x256xbf16>
  %init = tensor.empty() : tensor<1x4x8x8x64xbf16>
  %y = conv3d.conv ins(%q, %w : tensor<1x6x10x10x256xbf16>, tensor<64x3x3x3x128xi8>) filter_quant(#conv3d.nvfp4<block_size = 16>, %s : tensor<64x3x3x3x16xi8>, %wamax) outs(%init : tensor<1x4x8x8x64xbf16>) overwrite filter_layout = fqrsc -> tensor<1x4x8x8x64xbf16>
  return %y : tensor<1x4x8x8x64xbf16>
}
