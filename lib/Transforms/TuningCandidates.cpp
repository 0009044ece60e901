//===- TuningCandidates.cpp - what the tuner times
//-------------------------===//
//
// The heuristic (SelectConfig.cpp) encodes what measured well on average;
// the tuner times a small neighbourhood of it on the convolution at hand,
// as cuDNN's benchmark mode does. The neighbourhood is the decisions the
// heuristic makes with the least margin:
//
// - sm90: the N tile (F itself, or the largest divisor up to 128 or 256, or
//   64), 64/128/256-row M tiles, and the cooperative or ping-pong schedule
//   (ping-pong overlaps one tile's epilogue with the next one's MMAs, which
//   pays on shapes with few K steps per tile); and split-K where the tiles
//   leave multiprocessors idle.
// - sm80: 64/128/256-row M tiles with 64- and 128-wide N tiles, and the
//   K depth of a stage.
// - cpu: a few cache-sized tiles.
//
// Stages follow the heuristic's rules for each tile, so every candidate is
// a configuration the heuristic could have picked.
//
//===----------------------------------------------------------------------===//

#include "conv3d/Conversion/SM90/SM90KernelPlan.h"
#include "conv3d/Transforms/ConfigHeuristics.h"

using namespace mlir;
using namespace mlir::conv3d;

static int64_t roundUpTo(int64_t value, int64_t multiple) {
  return ceilDiv(value, multiple) * multiple;
}

/// N tiles up to `maxTile` worth trying for F = `filters`: F itself (when it
/// fits), the largest multiples of 32 dividing F up to 128 and up to
/// `maxTile`, and 64.
static SmallVector<int64_t> candidateTileNs(int64_t filters, int64_t maxTile) {
  SmallVector<int64_t> tiles;
  auto add = [&](int64_t tile) {
    if (tile >= 8 && tile <= maxTile && !llvm::is_contained(tiles, tile))
      tiles.push_back(tile);
  };
  if (filters <= maxTile)
    add(roundUpTo(filters, 8));
  for (int64_t limit : {maxTile, int64_t(128)})
    for (int64_t tile = limit; tile >= 64; tile -= 32)
      if (filters % tile == 0) {
        add(tile);
        break;
      }
  if (filters > 64)
    add(64);
  return tiles;
}

/// Split-K configurations for convolutions whose output tiles leave most
/// multiprocessors idle (the late, low-resolution layers of real networks:
/// a few hundred rows, K in the thousands): 64- and 128-row tiles of each
/// N tile, split 2, 4, 8 or 16 ways while every split keeps at least four
/// K steps and the blocks stay within two waves. Splits of up to
/// kMaxSplitCluster are reduced in a cluster, more go through the
/// workspace; both are deterministic.
static void addSM90SplitKCandidates(MLIRContext *context,
                                    const ConvGeometry &g,
                                    SmallVectorImpl<IGemmConfigAttr> &out) {
  constexpr int64_t kSMs = 132;
  int64_t steps = g.window[0] * g.window[1] * g.window[2] *
                  ceilDiv(g.channels, sm90::kChannelBlock);
  for (int64_t tileN : candidateTileNs(g.gemmN(), 256)) {
    for (int64_t tileM : {int64_t(64), int64_t(128)}) {
      int64_t tiles = ceilDiv(g.gemmM(), tileM) * ceilDiv(g.gemmN(), tileN);
      if (tiles >= kSMs)
        continue;
      int64_t warpsM = tileM == 64 ? 4 : 8;
      int64_t stages =
          sm90StagesFor(tileM, tileN, KernelSchedule::cooperative);
      for (int64_t split : {2, 4, 8, 16}) {
        if (steps < 4 * split || tiles * split > 2 * kSMs)
          break;
        out.push_back(IGemmConfigAttr::get(
            context, tileM, tileN, /*tileK=*/64, stages, warpsM,
            /*warpsN=*/1, KOrder::taps_outer, split, Target::sm90,
            KernelSchedule::cooperative, /*clusterM=*/1, Mainloop::im2col));
      }
    }
  }
}

static void addSM90Candidates(MLIRContext *context, const ConvGeometry &g,
                              SmallVectorImpl<IGemmConfigAttr> &out) {
  struct Shape {
    int64_t tileM, warpsM;
    KernelSchedule schedule;
  };
  const Shape shapes[] = {{128, 8, KernelSchedule::cooperative},
                          {256, 8, KernelSchedule::cooperative},
                          {64, 4, KernelSchedule::cooperative},
                          {128, 4, KernelSchedule::pingpong},
                          {64, 4, KernelSchedule::pingpong}};
  for (int64_t tileN : candidateTileNs(g.gemmN(), 256)) {
    for (const Shape &shape : shapes) {
      // 256-row tiles pay only when they still fill the machine.
      if (shape.tileM == 256 && g.gemmM() < 256 * 132)
        continue;
      int64_t stages = sm90StagesFor(shape.tileM, tileN, shape.schedule);
      out.push_back(IGemmConfigAttr::get(
          context, shape.tileM, tileN, /*tileK=*/64, stages, shape.warpsM,
          /*warpsN=*/1, KOrder::taps_outer, /*splitK=*/1, Target::sm90,
          shape.schedule, /*clusterM=*/1, Mainloop::im2col));
    }
  }
}

/// Halo-mainloop configurations (mainloop = halo) of 128- and 256-row
/// tiles with N tiles of whole 32-column store boxes, each with the deepest
/// filter ring up to 8 that its plan accepts. The plan cannot see whether
/// the output takes TMA stores; where it does not, the tuner skips them.
static void addSM90HaloCandidates(MLIRContext *context, const ConvGeometry &g,
                                  SmallVectorImpl<IGemmConfigAttr> &out) {
  if (g.window[1] * g.window[2] < 2)
    return;
  for (int64_t tileN : candidateTileNs(g.gemmN(), 128)) {
    tileN = roundUpTo(tileN, 32);
    for (int64_t tileM : {int64_t(256), int64_t(128)}) {
      if (std::optional<int64_t> stages =
              sm90::SM90KernelPlan::deepestHaloStages(g, tileM, tileN))
        out.push_back(IGemmConfigAttr::get(
            context, tileM, tileN, sm90::kChannelBlock, *stages, 8, 1,
            KOrder::taps_outer, 1, Target::sm90, KernelSchedule::cooperative, 1,
            Mainloop::halo));
    }
  }
}

static void addSM80Candidates(MLIRContext *context, const ConvGeometry &g,
                              Target kernel,
                              SmallVectorImpl<IGemmConfigAttr> &out) {
  // The register-staged path of odd channel counts keeps its thin tiles.
  if (g.channels % 2 != 0)
    return;
  int64_t n = g.gemmN();
  for (int64_t tileN : {int64_t(64), int64_t(128)}) {
    if (tileN > roundUpTo(n, 8) && tileN != 64)
      continue;
    int64_t warpsN = tileN == 128 ? 2 : 1;
    for (int64_t tileM : {int64_t(64), int64_t(128), int64_t(256)}) {
      // At most 64 x 64 accumulators per warp, at most 8 warps.
      int64_t warpsM = std::min<int64_t>(tileM / 32, 8 / warpsN);
      if (tileM / warpsM > 64 || tileN / warpsN > 64)
        continue;
      for (int64_t tileK : {int64_t(32), int64_t(64)}) {
        if (tileK == 64 && g.channels < 64)
          continue;
        int64_t stages = tileK == 64 || tileM >= 256 ? 3 : 4;
        out.push_back(IGemmConfigAttr::get(context, tileM, tileN, tileK, stages,
                                           warpsM, warpsN, KOrder::taps_outer,
                                           /*splitK=*/1, kernel,
                                           KernelSchedule::cooperative,
                                           /*clusterM=*/1, Mainloop::im2col));
      }
    }
  }
}

static void addCpuCandidates(MLIRContext *context, const ConvGeometry &g,
                             SmallVectorImpl<IGemmConfigAttr> &out) {
  const int64_t tiles[][3] = {{16, 64, 64}, {32, 32, 32}, {64, 32, 64}};
  for (const auto &tile : tiles)
    out.push_back(IGemmConfigAttr::get(
        context, std::min(tile[0], roundUpTo(g.gemmM(), 4)),
        std::min(tile[1], g.gemmN()), std::min(tile[2], g.gemmK()),
        /*stages=*/1, /*warpsM=*/1, /*warpsN=*/1, KOrder::taps_outer,
        /*splitK=*/1, Target::cpu, KernelSchedule::cooperative,
        /*clusterM=*/1, Mainloop::im2col));
}

SmallVector<IGemmConfigAttr> mlir::conv3d::tuningCandidates(
    MLIRContext *context, const ConvGeometry &geometry, Target target,
    FilterLayout layout, Type elementType,
    std::optional<int64_t> quantBlockSize, bool quantizesInTile) {
  SmallVector<IGemmConfigAttr> candidates;
  IGemmConfigAttr heuristic =
      selectIGemmConfig(context, geometry, target, quantBlockSize);
  switch (target) {
  case Target::cpu:
    addCpuCandidates(context, geometry, candidates);
    break;
  case Target::sm80:
    addSM80Candidates(context, geometry, Target::cpu, candidates);
    break;
  case Target::sm90:
    if (!getHaloKernelProblem(geometry, layout, elementType, quantizesInTile))
      addSM90HaloCandidates(context, geometry, candidates);
    if (getTmaKernelProblem(geometry, layout, elementType,
                            quantizesInTile ? quantBlockSize
                                            : std::optional<int64_t>(),
                            Target::sm90)) {
      addSM80Candidates(context, geometry, Target::sm80, candidates);
      heuristic = withKernel(
          selectIGemmConfig(context, geometry, Target::sm80, quantBlockSize),
          Target::sm80);
    } else {
      addSM90Candidates(context, geometry, candidates);
      addSM90SplitKCandidates(context, geometry, candidates);
    }
    break;
  case Target::sm100:
    break; // no lowering to time yet
  }
  // Tile loads quantize whole NVFP4 blocks; the heuristic's own choice is
  // timed anyway.
  SmallVector<IGemmConfigAttr> result;
  for (IGemmConfigAttr config : candidates) {
    if (quantBlockSize && config.getTileK() % *quantBlockSize != 0)
      continue;
    if (config == heuristic || llvm::is_contained(result, config))
      continue;
    result.push_back(config);
  }
  return result;
}
