//===- SM90Im2colFamily.cpp - sm90-im2col: wgmma + TMA im2col -------------===//
//
// The heuristic: wgmma covers the whole N tile (up to 256 columns) per
// warpgroup; two consumer warpgroups split a 128-row M tile (one for 64
// rows). A K step is one filter tap x 64 channels: one 128-byte-swizzled TMA
// box per operand. The kernel is persistent, so the epilogue's f32 staging
// tile has its own shared memory: as many stages as fit beside it (up to 6),
// with the staging in column halves or quarters when whole rows would leave
// fewer than 4 (SM90KernelPlan does the same).
//
// Measured on an H100 (bench/RESULTS.md, tuning): two consumer warpgroups of
// 64 rows each beat one even when 128-row tiles leave multiprocessors idle
// (wan_chunk_mid: 98 tiles of 128 x 192 run 25% faster than 196 of 64 x
// 192), so tile_m drops to 64 only for M <= 64. Narrow N tiles (F <= 96) are
// bound by the L2 bandwidth of reloading the activation tile per tap:
// 256-row tiles halve the reloads per output (wan_up_96: 256 x 96 is 1.2x
// faster than 128 x 96); F = 64 prefers 128 rows with deeper pipelines.
//
// Read per depth slice (past the rank-5 im2col limits), a tile never spans
// two output depth slices: the rows of one slice bound the tile as M does
// otherwise (an 8 x 8 slice takes 64-row tiles).
//
// The tuner times the N tile (F itself, or the largest divisor up to 128 or
// 256, or 64), 64/128/256-row M tiles, and the cooperative or ping-pong
// schedule (ping-pong overlaps one tile's epilogue with the next one's MMAs,
// which pays on shapes with few K steps per tile), and split-K where the
// tiles leave multiprocessors idle (the late, low-resolution layers of real
// networks: a few hundred rows, K in the thousands).
//
//===----------------------------------------------------------------------===//

#include "../FamilyUtils.h"

#include "conv3d/Target/Families.h"

using namespace mlir;
using namespace mlir::conv3d;
using namespace mlir::conv3d::families;

const SM90Im2colFamily &mlir::conv3d::getSM90Im2colFamily() {
  static const SM90Im2colFamily family;
  return family;
}

std::optional<std::string>
SM90Im2colFamily::canImplement(const ConvProblem &problem) const {
  return tmaIm2colFamilyProblem(problem, Target::sm90);
}

FamilyChoice SM90Im2colFamily::select(MLIRContext *context,
                                      const ConvProblem &problem) const {
  const ConvGeometry &geometry = problem.geometry;
  int64_t m = geometry.gemmM(), n = geometry.gemmN();
  int64_t tileN = pickTileN(n, 256);
  std::string why;
  bool depthSlices =
      geometry.chooseTmaIm2colForm(2, why) == TmaIm2colForm::depthSlices;
  int64_t rows = depthSlices ? std::min(m, geometry.outputSliceSize()) : m;
  int64_t tileM = rows <= 64 ? 64 : 128;
  if (tileN > 64 && tileN <= 96 && rows >= 256 &&
      ceilDiv(m, 256) >= 2 * kH100SMs)
    tileM = 256;
  int64_t stages = sm90StagesFor(tileM, tileN, KernelSchedule::cooperative);
  FamilyChoice choice;
  choice.config =
      makeConfig(context, problem, tileM, tileN, /*tileK=*/64, stages,
                 tileM >= 128 ? 8 : 4, /*warpsN=*/1, Target::sm90);
  if (depthSlices)
    choice.notes.push_back("the sm90 kernel reads this input through "
                           "per-depth-slice (rank-4) TMA im2col descriptors (" +
                           why + ")");
  return choice;
}

/// The N tiles the sm90 kernel is tried with: candidateTileNs' (F, or its
/// divisors from 256 and 128 down, and 64), and for F > 256 that is not a
/// multiple of 64 the tiles that cut it into two or three near-equal parts
/// (F = 464: 232 and 160), where 64-column tiles are the only divisor left
/// and would run 8 N tiles, the last a quarter full (bench/RESULTS.md,
/// run 12: 0.53x cuDNN on a 460-channel layer).
struct SM90TileN {
  int64_t columns;
  bool nearEqualPart;
};

static SmallVector<SM90TileN> sm90TileNs(int64_t filters) {
  SmallVector<SM90TileN> tiles;
  for (int64_t tile : candidateTileNs(filters, 256))
    tiles.push_back({tile, /*nearEqualPart=*/false});
  if (filters > 256 && filters % 64 != 0)
    for (int64_t parts : {ceilDiv(filters, 256), ceilDiv(filters, 256) + 1}) {
      int64_t tile = roundUp(ceilDiv(filters, parts), 8);
      if (tile <= 256 && llvm::none_of(tiles, [&](const SM90TileN &t) {
            return t.columns == tile;
          }))
        tiles.push_back({tile, /*nearEqualPart=*/true});
    }
  return tiles;
}

/// Whether a configuration of `tile` with a ring of `stages` is tried. The
/// cost model does not price the ring's depth, and the near-equal tiles with
/// a two-stage ring ran 1.23-1.25x slower than the fastest candidate on two
/// of the three layers where the model chose one (run 12): those join with
/// three stages or more.
static bool triedWith(const SM90TileN &tile, int64_t stages) {
  return !tile.nearEqualPart || stages >= 3;
}

/// Split-K configurations for convolutions whose output tiles leave most
/// multiprocessors idle: 64- and 128-row tiles of each N tile, split 2, 4, 8
/// or 16 ways while every split keeps at least four K steps and the blocks
/// stay within two waves, and 32, 64 or 128 ways while they stay within
/// one: weight gradients' forward forms have a few output tiles and K
/// loops of 10^4-10^5 steps (a 7x7 stem's, 16 splits of one tile, ran
/// 8.5x cuDNN's time; bench/RESULTS.md, eleventh session). Splits of up to
/// kMaxSplitCluster are reduced in a cluster, more go through the
/// workspace; both are deterministic.
static void addSplitKCandidates(MLIRContext *context, const ConvGeometry &g,
                                SmallVectorImpl<IGemmConfigAttr> &out) {
  int64_t steps = g.window[0] * g.window[1] * g.window[2] *
                  ceilDiv(g.channels, sm90::kChannelBlock);
  for (const SM90TileN &tile : sm90TileNs(g.gemmN())) {
    int64_t tileN = tile.columns;
    for (int64_t tileM : {int64_t(64), int64_t(128)}) {
      int64_t tiles = ceilDiv(g.gemmM(), tileM) * ceilDiv(g.gemmN(), tileN);
      if (tiles >= kH100SMs)
        continue;
      int64_t warpsM = tileM == 64 ? 4 : 8;
      int64_t stages = sm90StagesFor(tileM, tileN, KernelSchedule::cooperative);
      if (!triedWith(tile, stages))
        continue;
      for (int64_t split : {2, 4, 8, 16, 32, 64, 128}) {
        if (steps < 4 * split || tiles * split > 2 * kH100SMs ||
            (split > 16 && tiles * split > kH100SMs))
          break;
        out.push_back(IGemmConfigAttr::get(
            context, tileM, tileN, /*tileK=*/64, stages, warpsM,
            /*warpsN=*/1, KOrder::taps_outer, split, Target::sm90,
            KernelSchedule::cooperative, /*clusterM=*/1, Mainloop::im2col));
      }
    }
  }
}

void SM90Im2colFamily::addCandidates(
    MLIRContext *context, const ConvProblem &problem,
    SmallVectorImpl<IGemmConfigAttr> &out) const {
  const ConvGeometry &g = problem.geometry;
  struct Shape {
    int64_t tileM, warpsM;
    KernelSchedule schedule;
  };
  const Shape shapes[] = {{128, 8, KernelSchedule::cooperative},
                          {256, 8, KernelSchedule::cooperative},
                          {64, 4, KernelSchedule::cooperative},
                          {128, 4, KernelSchedule::pingpong},
                          {64, 4, KernelSchedule::pingpong}};
  for (const SM90TileN &tile : sm90TileNs(g.gemmN())) {
    int64_t tileN = tile.columns;
    for (const Shape &shape : shapes) {
      // 256-row tiles pay only when they still fill the machine.
      if (shape.tileM == 256 && g.gemmM() < 256 * kH100SMs)
        continue;
      int64_t stages = sm90StagesFor(shape.tileM, tileN, shape.schedule);
      if (!triedWith(tile, stages))
        continue;
      out.push_back(IGemmConfigAttr::get(
          context, shape.tileM, tileN, /*tileK=*/64, stages, shape.warpsM,
          /*warpsN=*/1, KOrder::taps_outer, /*splitK=*/1, Target::sm90,
          shape.schedule, /*clusterM=*/1, Mainloop::im2col));
    }
  }
  addSplitKCandidates(context, g, out);
}
