//===- SM100BlockScaledPlan.cpp - real NVFP4 sm100 layouts ----------------===//

#include "conv3d/Target/SM100/SM100BlockScaledPlan.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir::conv3d;
using namespace mlir::conv3d::sm100;
using namespace mlir::conv3d::sm100::nvfp4;

std::optional<std::string> BlockScaledPlan::build(const ConvGeometry &g,
                                                  int64_t tileM, int64_t tileN,
                                                  int64_t stages,
                                                  BlockScaledPlan &plan,
                                                  int64_t epilogueAlignment) {
  if (tileM != kTmemLanes)
    return llvm::formatv("tile_m must be 128 for the block-scaled MMA "
                         "(kind::mxf4nvf4 has M = 128 with cta_group::1), "
                         "got {0}",
                         tileM)
        .str();
  if (tileN % 16 != 0 || tileN < 16 || tileN > 256)
    return llvm::formatv("tile_n = {0} is not a kind::mxf4nvf4 shape for "
                         "M = 128 (a multiple of 16 from 16 to 256)",
                         tileN)
        .str();
  if (stages < 2)
    return llvm::formatv("needs at least 2 stages, got {0}", stages).str();
  if (g.channels % 32 != 0)
    return llvm::formatv("C = {0} is not a multiple of 32: rows of packed "
                         "FP4 codes must be multiples of 16 bytes for TMA",
                         g.channels)
        .str();
  plan.tileM = tileM;
  plan.tileN = tileN;
  plan.stages = stages;
  plan.channelBlocks = ceilDiv(g.channels, kChannelBlock);
  plan.taps = g.window[0] * g.window[1] * g.window[2];
  plan.totalSteps = plan.taps * plan.channelBlocks;
  plan.aStageBytes = tileM * kRowBytes;
  plan.bStageBytes = tileN * kRowBytes;
  plan.aScaleStageBytes = kMmasPerStep * ceilDiv(tileM, kAtomRows) * kAtomBytes;
  plan.bScaleStageBytes = kMmasPerStep * ceilDiv(tileN, kAtomRows) * kAtomBytes;
  plan.pipelineBytes = stages * (plan.aStageBytes + plan.bStageBytes +
                                 plan.aScaleStageBytes + plan.bScaleStageBytes);
  plan.bScaleColumns = 4 * ceilDiv(tileN, kAtomRows);
  int64_t scaleColumns =
      kMmasPerStep * (plan.aScaleColumns + plan.bScaleColumns);
  plan.accumulatorBuffers = 2 * tileN + scaleColumns <= kTmemColumns ? 2 : 1;
  plan.scaleColumn = plan.accumulatorBuffers * tileN;
  plan.tmemColumns = std::max<int64_t>(
      32, llvm::PowerOf2Ceil(plan.scaleColumn + scaleColumns));

  // The shared kernel's view: one CTA, the steps in taps-outer order
  // without split-K, the rings laid out as aCodesOffset .. bScalesOffset.
  SM100KernelPlan &k = plan.kernel;
  k = SM100KernelPlan();
  k.tileM = tileM;
  k.tileN = tileN;
  k.stages = stages;
  k.ctaGroup = 1;
  k.channelBlocks = plan.channelBlocks;
  k.taps = plan.taps;
  k.stepsPerSlice = g.window[1] * g.window[2] * plan.channelBlocks;
  k.totalSteps = plan.totalSteps;
  k.kOrder = KOrder::taps_outer;
  k.splitK = 1;
  k.accumulatorBuffers = plan.accumulatorBuffers;
  k.tmemColumns = plan.tmemColumns;
  k.scaleStageBytes = plan.aScaleStageBytes + plan.bScaleStageBytes;
  bool fits = k.layOutSharedMemory();
  k.stepBytes = plan.stepBytes();
  k.outputVector = g.filters % 8 == 0 && epilogueAlignment % 8 == 0 ? 8 : 1;
  if (!fits || k.pipelineBytes != plan.pipelineBytes)
    return llvm::formatv("{0} stages of packed FP4 tiles and scale atoms "
                         "({1} bytes) and the epilogue's staging ({2} bytes) "
                         "need {3} bytes of shared memory; a block has {4}",
                         stages, plan.pipelineBytes, k.stagingBytes,
                         k.sharedBytes, kMaxSharedBytes)
        .str();
  return std::nullopt;
}

int64_t BlockScaledPlan::maxStages(const ConvGeometry &g, int64_t tileN,
                                   int64_t limit) {
  // A deeper ring is not worth an epilogue of narrow chunks (each chunk is
  // two barriers of the epilogue warps and its own pass over the output).
  BlockScaledPlan plan;
  int64_t minChunk = std::min<int64_t>(32, tileN);
  for (int64_t stages = limit; stages >= 2; --stages)
    if (!build(g, kTmemLanes, tileN, stages, plan) &&
        plan.kernel.chunkColumns >= minChunk)
      return stages;
  return 0;
}
