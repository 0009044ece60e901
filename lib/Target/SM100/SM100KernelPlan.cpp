//===- SM100KernelPlan.cpp - sm100 kernel planning ------------------------===//

#include "conv3d/Target/SM100/SM100KernelPlan.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir::conv3d;
using namespace mlir::conv3d::sm100;

std::optional<std::string>
Tcgen05InstrDescriptor::shapeProblem(int64_t m, int64_t n, int64_t ctaGroup) {
  // PTX ISA, tcgen05.mma "Valid shapes" (dense .kind::f16).
  int64_t step = 0;
  if (ctaGroup == 1 && m == 64)
    step = 8;
  else if ((ctaGroup == 1 && m == 128) || (ctaGroup == 2 && m == 256))
    step = 16;
  else if (ctaGroup == 2 && m == 128)
    step = 32;
  else
    return llvm::formatv("M = {0} is not a tcgen05.mma shape for "
                         "cta_group::{1} (64 or 128 for one CTA, 128 or "
                         "256 for two)",
                         m, ctaGroup)
        .str();
  if (n % step != 0 || n < step || n > 256)
    return llvm::formatv("N = {0} is not a tcgen05.mma shape for M = {1} "
                         "(a multiple of {2} from {2} to 256)",
                         n, m, step)
        .str();
  return std::nullopt;
}

bool SM100KernelPlan::layOutSharedMemory() {
  SM100KernelPlan &plan = *this;
  // Each CTA loads its 128 rows of A and its share of B's rows.
  plan.aStageBytes = kTmemLanes * kRowBytes;
  plan.bStageBytes = plan.tileN / plan.ctaGroup * kRowBytes;
  plan.stepBytes = plan.ctaGroup * (plan.aStageBytes + plan.bStageBytes);
  plan.pipelineBytes = plan.stages * (plan.aStageBytes + plan.bStageBytes +
                                      plan.scaleStageBytes);
  for (plan.epilogueChunks = 1;; plan.epilogueChunks *= 2) {
    plan.chunkColumns = plan.tileN / plan.epilogueChunks;
    // Padding the rows by 4 floats keeps them 16-byte aligned for the
    // epilogue's vector reads and spreads the rows over banks.
    plan.stagingStride = plan.chunkColumns + 4;
    plan.stagingBytes = kTmemLanes * plan.stagingStride * 4;
    plan.stagingOffset = plan.pipelineBytes;
    plan.barrierOffset = plan.stagingOffset + plan.stagingBytes;
    int64_t barriers = 2 * plan.stages + 2 * plan.accumulatorBuffers;
    plan.tmemSlotOffset = plan.barrierOffset + 8 * barriers;
    plan.sharedBytes = plan.tmemSlotOffset + 8 + kAlignmentSlack;
    bool canSplit = plan.chunkColumns % 16 == 0;
    if (plan.sharedBytes <= kMaxSharedBytes || !canSplit)
      break;
  }
  for (plan.loadColumns = 32; plan.chunkColumns % plan.loadColumns != 0;)
    plan.loadColumns /= 2;
  return plan.sharedBytes <= kMaxSharedBytes;
}

static void planAccumulators(SM100KernelPlan &plan) {
  plan.accumulatorBuffers = 2 * plan.tileN <= kTmemColumns ? 2 : 1;
  plan.tmemColumns = std::max<int64_t>(
      32, llvm::PowerOf2Ceil(plan.accumulatorBuffers * plan.tileN));
}

int64_t SM100KernelPlan::maxStages(int64_t tileM, int64_t tileN,
                                   int64_t limit) {
  SM100KernelPlan plan;
  plan.tileM = tileM;
  plan.tileN = tileN;
  plan.ctaGroup = tileM / kTmemLanes;
  planAccumulators(plan);
  for (plan.stages = limit; plan.stages >= 2; --plan.stages)
    if (plan.layOutSharedMemory())
      return plan.stages;
  return 0;
}

std::optional<std::string>
SM100KernelPlan::build(const ConvGeometry &g, int64_t tileM, int64_t tileN,
                       int64_t tileK, int64_t stages, int64_t warpsM,
                       int64_t warpsN, KOrder kOrder, int64_t splitK,
                       int64_t epilogueAlignment, SM100KernelPlan &plan) {
  auto fail = [](const llvm::Twine &message) { return message.str(); };
  if (tileK != kChannelBlock)
    return fail(llvm::formatv("tile_k must be {0} (one 128-byte TMA row of "
                              "channels), got {1}",
                              kChannelBlock, tileK));
  if (warpsM != kEpilogueWarps || warpsN != 1)
    return fail(llvm::formatv("the warp layout must be 4x1 (the four "
                              "epilogue warps, one per 32 TMEM lanes), got "
                              "{0}x{1}",
                              warpsM, warpsN));
  if (tileM != kTmemLanes && tileM != 2 * kTmemLanes)
    return fail(llvm::formatv("tile_m must be 128 (one cta_group::1 "
                              "tcgen05.mma, a row per TMEM lane) or 256 "
                              "(cta_group::2 over a pair of CTAs), got {0}",
                              tileM));
  int64_t ctaGroup = tileM / kTmemLanes;
  if (std::optional<std::string> problem =
          Tcgen05InstrDescriptor::shapeProblem(tileM, tileN, ctaGroup))
    return fail("tile_n = " + llvm::Twine(tileN) + ": " + *problem);
  if (stages < 2)
    return fail(llvm::formatv("needs at least 2 stages, got {0}", stages));
  if (splitK > 1 && kOrder != KOrder::taps_outer)
    return fail("split_k > 1 needs k_order = taps_outer");
  plan.tileM = tileM;
  plan.tileN = tileN;
  plan.stages = stages;
  plan.ctaGroup = ctaGroup;
  plan.kOrder = kOrder;
  plan.splitK = splitK;

  plan.channelBlocks = ceilDiv(g.channels, kChannelBlock);
  plan.taps = g.window[0] * g.window[1] * g.window[2];
  plan.stepsPerSlice = g.window[1] * g.window[2] * plan.channelBlocks;
  plan.totalSteps = plan.taps * plan.channelBlocks;

  planAccumulators(plan);
  if (!plan.layOutSharedMemory())
    return fail(llvm::formatv(
        "{0} stages of {1}x64 and {2}x64 tiles ({3} bytes) and the epilogue's "
        "staging ({4} bytes) need {5} bytes of shared memory; a block has {6}",
        stages, kTmemLanes, tileN / ctaGroup, plan.pipelineBytes,
        plan.stagingBytes, plan.sharedBytes, kMaxSharedBytes));
  plan.outputVector = g.filters % 8 == 0 && epilogueAlignment % 8 == 0 ? 8 : 1;
  return std::nullopt;
}
