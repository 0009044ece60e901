// conv3d-gpu-pipeline honours its target (issue 12, item 5: target=sm90 and
// sm100 used to emit sm80 code silently). sm90 emits the wgmma kernel for
// sm_90a; sm100 the tcgen05 kernel for sm_100a (assembled, never run:
// there is no sm_100 GPU here), never sm80 code in its place; sm80 stays
// mma.sync.
// REQUIRES: ptxas
//
// RUN: conv3d-opt %s --conv3d-gpu-pipeline='target=sm90 gpu-binary-format=isa' | FileCheck %s --check-prefix=SM90
// SM90: .target sm_90a
// SM90: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
// SM90-NOT: mma.sync.aligned.m16n8k16
//
// RUN: conv3d-opt %s --conv3d-gpu-pipeline='target=sm80 gpu-binary-format=isa' | FileCheck %s --check-prefix=SM80
// SM80: .target sm_80
// SM80: mma.sync.aligned.m16n8k16
// SM80-NOT: wgmma
//
// RUN: conv3d-opt %s --conv3d-gpu-pipeline='target=sm100 gpu-binary-format=isa' | FileCheck %s --check-prefix=SM100
// SM100: .target sm_100a
// SM100: tcgen05.mma.cta_group::1.kind::f16
// SM100-NOT: wgmma
// SM100-NOT: mma.sync.aligned.m16n8k16

func.func @conv(%x: tensor<1x4x8x8x64xbf16>, %w: tensor<64x3x3x3x64xbf16>, %o: tensor<1x4x8x8x64xbf16>) -> tensor<1x4x8x8x64xbf16> {
  %y = conv3d.conv ins(%x, %w : tensor<1x4x8x8x64xbf16>, tensor<64x3x3x3x64xbf16>) outs(%o : tensor<1x4x8x8x64xbf16>) overwrite padding = [1, 1, 1, 1, 1, 1] filter_layout = fqrsc -> tensor<1x4x8x8x64xbf16>
  return %y : tensor<1x4x8x8x64xbf16>
}
