// The registered GPU pipeline with target=sm100: conv3d-gpu-pipeline takes
// a tensor-level conv3d.conv with an FQRSC filter through the heuristic's
// sm100 config (tile 128 x 64, 6 stages) and conv3d-lower-to-sm100 to one
// kernel for sm_100a (PTX 8.8 features), embedded as PTX, and host code in
// the LLVM dialect that encodes the two TMA descriptors, asks the runtime
// for the multiprocessor count and launches 192 threads per block. The
// code is generated, never run (no sm_100 GPU).
//
// format=isa stops at PTX, but gpu-module-to-binary links libdevice from the
// CUDA toolkit: the ptxas feature stands for a toolkit being there.
// REQUIRES: ptxas
//
// RUN: conv3d-opt %s --conv3d-gpu-pipeline='target=sm100 gpu-binary-format=isa' | FileCheck %s

// CHECK-LABEL: llvm.func @conv(
// CHECK: %[[THREADS:.*]] = llvm.mlir.constant(192 : index) : i64
// CHECK: llvm.call @conv3dTmaIm2colDescriptor(
// CHECK: llvm.call @conv3dTmaTiledDescriptor(
// CHECK: llvm.call @conv3dMultiprocessorCount()
// CHECK: gpu.launch_func {{.*}} threads in (%[[THREADS]], %{{.*}}, %{{.*}}) : i64 dynamic_shared_memory_size
// CHECK: gpu.binary @{{.*}} [#gpu.object<#nvvm.target<O = 3, chip = "sm_100a", features = "+ptx88">, {{.*}}assembly = "
// CHECK-SAME: .target sm_100a
// CHECK-SAME: .maxntid 192, 1, 1
// CHECK-SAME: tcgen05.alloc.cta_group::1
// CHECK-SAME: tcgen05.mma.cta_group::1.kind::f16
// CHECK-SAME: tcgen05.ld.sync.aligned.32x32b
// CHECK-SAME: tcgen05.dealloc.cta_group::1
func.func @conv(%x: tensor<1x6x10x10x64xbf16>, %w: tensor<64x3x3x3x64xbf16>) -> tensor<1x4x8x8x64xbf16> {
  %init = tensor.empty() : tensor<1x4x8x8x64xbf16>
  %y = conv3d.conv ins(%x, %w : tensor<1x6x10x10x64xbf16>, tensor<64x3x3x3x64xbf16>) outs(%init : tensor<1x4x8x8x64xbf16>) overwrite filter_layout = fqrsc -> tensor<1x4x8x8x64xbf16>
  return %y : tensor<1x4x8x8x64xbf16>
}
