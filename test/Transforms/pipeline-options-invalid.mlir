// The registered pipelines parse their options with parsePipelineOptions,
// the one parser the C API (and Python) use too: every unknown key or value
// is an error that names it, never a silent default.
//
// RUN: not conv3d-opt %s --conv3d-gpu-pipeline='target=sm90 gpu-binary-format=foo' 2>&1 | FileCheck %s --check-prefix=FORMAT
// FORMAT: error: gpu-binary-format=foo: expected one of bin, isa
// RUN: not conv3d-opt %s --conv3d-gpu-pipeline='target=sm80 ptxas-options="-O0 {"' 2>&1 | FileCheck %s --check-prefix=PTXASOPTS
// PTXASOPTS: error: ptxas-options=-O0 {: quotes and braces are not allowed
// RUN: not conv3d-opt %s --conv3d-cpu-pipeline='qslice=sliced' 2>&1 | FileCheck %s --check-prefix=QSLICE
// QSLICE: error: qslice=sliced: expected one of auto, none, fused, separate
// RUN: not conv3d-opt %s --conv3d-graph-pipeline='quant-placement=everywhere' 2>&1 | FileCheck %s --check-prefix=PLACEMENT
// PLACEMENT: error: quant-placement=everywhere: expected one of auto, tile, prepass
// RUN: not conv3d-opt %s --conv3d-graph-pipeline='wgrad-fold=depth' 2>&1 | FileCheck %s --check-prefix=FOLD
// FOLD: error: wgrad-fold=depth: expected one of auto, width, height-width
// RUN: not conv3d-opt %s --conv3d-gpu-pipeline='target=sm70' 2>&1 | FileCheck %s --check-prefix=TARGET
// TARGET: for the --target option: Cannot find option named 'sm70'
// TARGET: error: target=sm70: expected one of cpu, sm80, sm90, sm100
// RUN: not conv3d-opt %s --conv3d-cpu-pipeline='lowering="direct"' 2>&1 | FileCheck %s --check-prefix=LOWERING
// LOWERING: error: lowering=direct: expected one of reference, igemm
// RUN: not conv3d-opt %s --conv3d-gpu-pipeline='target=sm80 gpu-chip=gfx90a' 2>&1 | FileCheck %s --check-prefix=CHIP
// CHIP: error: gpu-chip=gfx90a: expected a chip such as sm_80 or sm_90a
// RUN: not conv3d-opt %s --conv3d-cpu-pipeline='results-to-out-params=maybe' 2>&1 | FileCheck %s --check-prefix=BOOL
// BOOL: error: results-to-out-params=maybe: expected one of true, false, 1, 0
// RUN: not conv3d-opt %s --conv3d-cpu-pipeline='quant_placement=tile' 2>&1 | FileCheck %s --check-prefix=SPELLING
// SPELLING: error: <Pass-Options-Parser>: no such option quant_placement
// The NVFP4 mode: fake or real; real is the block-scaled sm100 MMA, refused
// on other targets and, until its kernel is emitted, on sm100 too.
// RUN: not conv3d-opt %s --conv3d-gpu-pipeline='target=sm100 nvfp4-mode=genuine' 2>&1 | FileCheck %s --check-prefix=NVFP4MODE
// NVFP4MODE: error: nvfp4-mode=genuine: expected one of fake, real
// RUN: not conv3d-opt %s --conv3d-gpu-pipeline='target=sm90 nvfp4-mode=real' 2>&1 | FileCheck %s --check-prefix=REALTARGET
// REALTARGET: error: nvfp4-mode=real needs target=sm100 (the block-scaled tcgen05.mma); other targets multiply NVFP4 operands as nvfp4-mode=fake
// nvfp4-mode=real on sm100 is checked per convolution
// (test/Transforms/apply-nvfp4-mode.mlir).
// RUN: conv3d-opt %s --conv3d-graph-pipeline='target=sm100 nvfp4-mode=fake' | FileCheck %s --check-prefix=FAKE
// FAKE: func.func @f
// Tuning is the engine's: a pass pipeline only compiles.
// RUN: not conv3d-opt %s --conv3d-cpu-pipeline='tune=true' 2>&1 | FileCheck %s --check-prefix=TUNE
// TUNE: error: tune=true is an option of the engine
// RUN: not conv3d-opt %s --conv3d-cpu-pipeline='tune=true config="tile_m=16,tile_n=8,tile_k=8"' 2>&1 | FileCheck %s --check-prefix=TUNECONFIG
// TUNECONFIG: error: tune=true times candidate tile configurations; it cannot be combined with a forced config

func.func @f() {
  return
}
