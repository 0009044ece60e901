//===- SM90KernelPlan.cpp - sm90 kernel planning --------------------------===//

#include "conv3d/Target/SM90/SM90KernelPlan.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir::conv3d;
using namespace mlir::conv3d::sm90;

namespace {

/// The halo mainloop's part of SM90KernelPlan::build (the plan's tiles,
/// stages, schedule and warps are set): its refusals, the patch geometry
/// and the shared-memory layout.
std::optional<std::string> buildHalo(const ConvGeometry &g,
                                     bool outputTakesTmaStore,
                                     std::optional<int64_t> quantBlockSize,
                                     SM90KernelPlan &plan) {
  auto fail = [](const llvm::Twine &message) {
    return ("mainloop = halo " + message).str();
  };
  // Output row i of a tile reads input row i + r * dil_h of the patch, and
  // output column j input column j + s * dil_w: unit strides.
  if (g.strides[kHeight] != 1 || g.strides[kWidth] != 1)
    return fail(llvm::formatv("needs unit strides in H and W, got {0}x{1}",
                              g.strides[kHeight], g.strides[kWidth]));
  if (plan.pingPong || plan.splitK != 1 || plan.clusterM != 1 ||
      plan.kOrder != KOrder::taps_outer)
    return fail("runs the cooperative schedule with k_order = taps_outer, "
                "split_k = 1 and cluster_m = 1");
  if (quantBlockSize)
    return fail("does not quantize the input in the tile (use "
                "quant-placement=prepass)");
  if (!outputTakesTmaStore)
    return fail("stores its tiles with TMA: it needs an overwritten dense "
                "16-bit output without residual");
  plan.halo = true;
  plan.haloOutRows = plan.tileM / kWgmmaM;
  // Channel blocks of 32 (64-byte rows) where C is an odd multiple of 32,
  // so that none is half zeros.
  plan.haloChannels = g.channels % kChannelBlock != 0 && g.channels % 32 == 0
                          ? kChannelBlock / 2
                          : kChannelBlock;
  plan.operandRowBytes = plan.haloChannels * 2;
  int64_t reachW = kWgmmaM + (g.window[2] - 1) * g.dilations[kWidth];
  plan.haloColumns = ceilDiv(reachW, 8) * 8;
  plan.haloRows = plan.haloOutRows + (g.window[1] - 1) * g.dilations[kHeight];
  // A TMA box has at most 256 elements per dimension.
  if (plan.haloColumns > 256 || plan.haloRows > 256)
    return fail(llvm::formatv("reads a patch of {0}x{1} pixels per tile; a "
                              "TMA box has at most 256 per dimension",
                              plan.haloRows, plan.haloColumns));
  plan.channelBlocks = ceilDiv(g.channels, plan.haloChannels);
  plan.taps = g.window[0] * g.window[1] * g.window[2];
  plan.tapsPerAStep = g.window[1] * g.window[2];
  plan.aSteps = g.window[0] * plan.channelBlocks;
  plan.totalSteps = plan.aSteps * plan.tapsPerAStep;
  plan.stepsPerSlice = plan.tapsPerAStep * plan.channelBlocks;

  // Stages on 1024-byte boundaries (the 128-byte swizzle's atom).
  auto atoms = [](int64_t bytes) { return ceilDiv(bytes, 1024) * 1024; };
  plan.aStageBytes =
      atoms(plan.haloRows * plan.haloColumns * plan.operandRowBytes);
  plan.bStageBytes = atoms(plan.tileN * plan.operandRowBytes);
  plan.stepBytes = plan.tileN * plan.operandRowBytes;
  plan.storeBoxColumns = SM90KernelPlan::storeBoxColumnsFor(plan.tileN);
  if (!plan.storeBoxColumns)
    return fail(llvm::formatv("stores whole boxes of 32 or 64 columns: tile_n "
                              "= {0} must be a multiple of 32",
                              plan.tileN));
  plan.tmaStore = true;
  plan.epilogueChunks = plan.tileN / plan.storeBoxColumns;
  plan.stagingStride = plan.storeBoxColumns;
  plan.stagingBytes = plan.tileM * plan.tileN * 2;
  // Shared memory: the A ring, the B ring, the staging, then the B ring's
  // full and empty barriers and the A ring's. Three A stages where they
  // fit (a patch loads while two are read), else two.
  int64_t fixed = plan.stages * plan.bStageBytes + plan.stagingBytes +
                  16 * plan.stages + kAlignmentSlack;
  // One stage would deadlock: the next patch may load only once the last
  // one's taps are done, and those wait for filter rows the producer
  // issues after that patch.
  for (plan.aStages = 3; plan.aStages >= 2; --plan.aStages)
    if (fixed + plan.aStages * (plan.aStageBytes + 16) <= kMaxSharedBytes)
      break;
  if (plan.aStages < 2)
    return fail(llvm::formatv(
        "needs two patches of {0} bytes beside {1} filter stages of {2} and "
        "a staging tile of {3}: {4} bytes of shared memory; an H100 block "
        "has {5} (use fewer stages)",
        plan.aStageBytes, plan.stages, plan.bStageBytes, plan.stagingBytes,
        fixed + 2 * (plan.aStageBytes + 16), kMaxSharedBytes));
  plan.pipelineBytes =
      plan.aStages * plan.aStageBytes + plan.stages * plan.bStageBytes;
  plan.stagingOffset = plan.pipelineBytes;
  plan.barrierOffset = plan.stagingOffset + plan.stagingBytes;
  plan.aBarrierOffset = plan.barrierOffset + 16 * plan.stages;
  plan.sharedBytes = plan.aBarrierOffset + 16 * plan.aStages + kAlignmentSlack;
  if (plan.sharedBytes > kMaxSharedBytes)
    return fail(llvm::formatv(
        "needs {0} bytes of shared memory (patches of {1} bytes, {2} filter "
        "stages of {3}, a staging tile of {4}); an H100 block has {5}",
        plan.sharedBytes, plan.aStageBytes, plan.stages, plan.bStageBytes,
        plan.stagingBytes, kMaxSharedBytes));
  return std::nullopt;
}

} // namespace

std::optional<std::string>
SM90KernelPlan::build(const ConvGeometry &g, int64_t tileM, int64_t tileN,
                      int64_t tileK, int64_t stages, int64_t warpsM,
                      int64_t warpsN, KOrder kOrder, int64_t splitK,
                      int64_t epilogueAlignment, SM90KernelPlan &plan,
                      KernelSchedule schedule, bool outputTakesTmaStore,
                      std::optional<int64_t> quantBlockSize, int64_t clusterM,
                      Mainloop mainloop, bool reduceSplitsInCluster) {
  auto fail = [](const llvm::Twine &message) { return message.str(); };
  if (reduceSplitsInCluster)
    if (std::optional<std::string> problem =
            splitClusterProblem(splitK, schedule, clusterM, mainloop))
      return problem;
  if (tileK != kChannelBlock)
    return fail(llvm::formatv("tile_k must be {0} (one 128-byte TMA row of "
                              "channels), got {1}",
                              kChannelBlock, tileK));
  if (warpsN != 1 || (warpsM != 4 && warpsM != 8))
    return fail(llvm::formatv("the warp layout must be 4x1 or 8x1 (one or two "
                              "consumer warpgroups), got {0}x{1}",
                              warpsM, warpsN));
  plan.pingPong = schedule == KernelSchedule::pingpong;
  if (plan.pingPong && (warpsM != 4 || tileM > 128))
    return fail(llvm::formatv("the ping-pong schedule gives each tile one "
                              "warpgroup: warps_m must be 4 and tile_m at "
                              "most 128, got {0} and {1}",
                              warpsM, tileM));
  plan.consumerGroups = plan.pingPong ? 2 : warpsM / 4;
  int64_t tileGroups = plan.pingPong ? 1 : plan.consumerGroups;
  plan.warpsPerTile = 4 * tileGroups;
  if (tileM % (kWgmmaM * tileGroups) != 0 || tileM > 256)
    return fail(llvm::formatv("tile_m = {0} must be a multiple of {1} (64 "
                              "rows per wgmma per consumer warpgroup) and at "
                              "most 256 (a TMA im2col box)",
                              tileM, kWgmmaM * tileGroups));
  if (tileN % 8 != 0 || tileN > 256)
    return fail(llvm::formatv("tile_n = {0} must be a multiple of 8 up to 256 "
                              "(one wgmma covers the N tile)",
                              tileN));
  if (stages < 2)
    return fail(llvm::formatv("needs at least 2 stages, got {0}", stages));
  if (splitK > 1 && kOrder != KOrder::taps_outer)
    return fail("split_k > 1 needs k_order = taps_outer");
  // Correct, but ptxas serializes its wgmmas (C7520, "program dependence
  // on compiler-inserted WG.AR in divergent path"): the split's step count
  // may be zero inside the warpgroup's branch of the ping-pong schedule,
  // and serialized wgmmas run several times slower. Refused as the issue
  // treats ptxas's other "wgmma serialized" notes (C7510-C7515).
  if (splitK > 1 && plan.pingPong)
    return fail("split_k > 1 with the ping-pong schedule: ptxas serializes "
                "the wgmmas of that kernel (C7520); use the cooperative "
                "schedule for split-K");
  if (clusterM != 1 && clusterM != 2)
    return fail(llvm::formatv("cluster_m must be 1 or 2, got {0}", clusterM));
  // The blocks of a cluster run the same K steps in lockstep (one filter
  // tile feeds both): the steps may not depend on the M tile, as the halo
  // slices skipped by qslice_outer do.
  if (clusterM == 2 && kOrder != KOrder::taps_outer)
    return fail("cluster_m = 2 needs k_order = taps_outer (both blocks of a "
                "cluster run the same K steps)");
  // Each block's half of the filter tile starts on a 1024-byte swizzle atom.
  if (clusterM == 2 && tileN % 16 != 0)
    return fail(llvm::formatv("cluster_m = 2 splits the filter tile in two "
                              "halves of whole 8-row swizzle atoms: tile_n = "
                              "{0} must be a multiple of 16",
                              tileN));
  plan.clusterM = clusterM;
  plan.tileM = tileM;
  plan.tileN = tileN;
  plan.stages = stages;
  plan.mmaTilesM = tileM / (kWgmmaM * tileGroups);
  plan.threads = kWarpgroupThreads * (1 + plan.consumerGroups);
  plan.kOrder = kOrder;
  plan.splitK = splitK;
  if (reduceSplitsInCluster) {
    plan.splitCluster = splitK;
    plan.splitRowsPerBlock = ceilDiv(tileM, splitK);
  }

  if (mainloop == Mainloop::halo)
    return buildHalo(g, outputTakesTmaStore, quantBlockSize, plan);

  if (quantBlockSize) {
    if (*quantBlockSize <= 0 || kChannelBlock % *quantBlockSize != 0 ||
        *quantBlockSize % 8 != 0)
      return fail(llvm::formatv("NVFP4 blocks of {0} do not tile a 64-channel "
                                "K step in 16-byte chunks",
                                *quantBlockSize));
    plan.quantBlockSize = quantBlockSize;
    plan.quantRows = plan.mmaTilesM * kWgmmaM;
    plan.quantBlocksPerThread = ceilDiv(plan.quantBlocks(), kWarpgroupThreads);
  }

  plan.channelBlocks = ceilDiv(g.channels, kChannelBlock);
  plan.taps = g.window[0] * g.window[1] * g.window[2];
  plan.stepsPerSlice = g.window[1] * g.window[2] * plan.channelBlocks;
  plan.totalSteps = plan.taps * plan.channelBlocks;

  // Every tile is a whole number of 1024-byte swizzle atoms (8 rows).
  plan.aStageBytes = tileM * kRowBytes;
  plan.bStageBytes = tileN * kRowBytes;
  plan.stepBytes = plan.aStageBytes + plan.bStageBytes;
  plan.pipelineBytes = stages * plan.stepBytes;
  // Shared memory after the ring: the staging tile(s) (one per consumer
  // warpgroup in ping-pong), then the full and empty barriers per stage
  // and, in ping-pong, the two order barriers that alternate the consumers'
  // mainloops.
  auto layOut = [&](int64_t stagingBytes) {
    plan.stagingBytes = stagingBytes;
    plan.stagingOffset = plan.pipelineBytes;
    plan.barrierOffset =
        plan.stagingOffset + stagingBytes * (plan.pingPong ? 2 : 1);
    plan.splitBarrierOffset =
        plan.barrierOffset + 2 * stages * 8 + (plan.pingPong ? 16 : 0);
    plan.sharedBytes = plan.splitBarrierOffset +
                       (plan.splitCluster > 1 ? 16 : 0) + kAlignmentSlack;
  };
  // TMA stores write whole boxes, so the N tile must be whole boxes (a
  // ragged one would overwrite the next tile's columns): 64 columns (one
  // 128-byte swizzle span), or 32 (64-byte swizzle) for N tiles such as 96.
  // The 16-bit staging holds the whole tile: boxes of tile_m rows, 1024-byte
  // aligned. Where that does not fit beside the ring (the f32 staging can be
  // split into column chunks), the staged epilogue stores.
  plan.storeBoxColumns = storeBoxColumnsFor(tileN);
  plan.tmaStore = outputTakesTmaStore && splitK == 1 && plan.storeBoxColumns;
  if (plan.tmaStore) {
    plan.epilogueChunks = tileN / plan.storeBoxColumns;
    plan.stagingStride = plan.storeBoxColumns;
    layOut(tileM * tileN * 2);
    plan.tmaStore = plan.sharedBytes <= kMaxSharedBytes;
  }
  if (!plan.tmaStore) {
    // The f32 staging tile in 1, 2 or 4 column chunks (of 8-column
    // multiples), the fewest that fit beside the ring. Padding the staging
    // rows by 4 floats spreads a fragment store's 8 rows over distinct
    // banks.
    for (plan.epilogueChunks = 1;; plan.epilogueChunks *= 2) {
      int64_t chunk = tileN / plan.epilogueChunks;
      plan.stagingStride = chunk + 4;
      layOut(tileM * plan.stagingStride * 4);
      bool canSplit = plan.epilogueChunks < 4 && chunk % 16 == 0;
      if (plan.sharedBytes <= kMaxSharedBytes || !canSplit)
        break;
    }
  }
  if (plan.sharedBytes > kMaxSharedBytes)
    return fail(llvm::formatv(
        "{0} stages of {1}x64 and {2}x64 tiles ({3} bytes) and the epilogue's "
        "staging ({4} bytes) need {5} bytes of shared memory; an H100 block "
        "has {6}",
        stages, tileM, tileN, plan.pipelineBytes,
        plan.stagingBytes * (plan.pingPong ? 2 : 1), plan.sharedBytes,
        kMaxSharedBytes));
  plan.outputVector = g.filters % 8 == 0 && epilogueAlignment % 8 == 0 ? 8 : 1;
  return std::nullopt;
}

std::optional<std::string>
SM90KernelPlan::splitClusterProblem(int64_t splitK, KernelSchedule schedule,
                                    int64_t clusterM, Mainloop mainloop) {
  if (splitK < 2 || splitK > kMaxSplitCluster)
    return llvm::formatv("reducing split-K in a cluster needs split_k from 2 "
                         "to {0} (a block per split), got {1}",
                         kMaxSplitCluster, splitK)
        .str();
  if (schedule != KernelSchedule::cooperative || clusterM != 1 ||
      mainloop != Mainloop::im2col)
    return std::string("reducing split-K in a cluster needs the cooperative "
                       "schedule, cluster_m = 1 and mainloop = im2col");
  return std::nullopt;
}

std::optional<int64_t> SM90KernelPlan::deepestHaloStages(const ConvGeometry &g,
                                                         int64_t tileM,
                                                         int64_t tileN,
                                                         int64_t maxStages) {
  for (int64_t stages = maxStages; stages >= 2; --stages) {
    SM90KernelPlan plan;
    if (!build(g, tileM, tileN, kChannelBlock, stages, /*warpsM=*/8,
               /*warpsN=*/1, KOrder::taps_outer, /*splitK=*/1,
               /*epilogueAlignment=*/8, plan, KernelSchedule::cooperative,
               /*outputTakesTmaStore=*/true, std::nullopt, /*clusterM=*/1,
               Mainloop::halo))
      return stages;
  }
  return std::nullopt;
}
