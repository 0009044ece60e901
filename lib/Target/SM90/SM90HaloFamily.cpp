//===- SM90HaloFamily.cpp - sm90-halo: wgmma + tiled loads of the patch ---===//
//
// Chosen where it is the faster sm90 mainloop. Measured on the H100
// (bench/RESULTS.md, 2026-11-24, third session): for narrow N tiles, which
// the im2col mainloop starves by re-reading the activation per tap from L2,
// 256-row halo tiles are 1.6-1.9x faster (video_r3d_64, F = 64; wan_up_96,
// F = 96). With fewer than 128 input channels (at most two 64-channel
// blocks a tap) the halo tiles win at any F too: on the timed candidates of
// 240 random layers (H200, bench/RESULTS.md, fifth session) they are
// 1.4-1.6x faster for C = 96-114 and F = 128-288, while from C = 128 up
// with F > 96 the im2col mainloop is as fast or up to 4x faster. Chosen
// only where the window reuses rows (R * S > 1), the tiles nearly fill the
// multiprocessors, the 64-column tile rows are mostly output (W fill), and
// the output takes the TMA-store epilogue (kMinHaloTiles and
// kMinHaloFillPercent below).
//
// The tuner times 128- and 256-row tiles with N tiles of whole 32-column
// store boxes, each with the deepest filter ring up to 8 that its plan
// accepts. The tuner does not know whether the output takes TMA stores;
// where it does not, the lowering refuses those candidates and the tuner
// skips them.
//
//===----------------------------------------------------------------------===//

#include "../FamilyUtils.h"

#include "conv3d/Target/Families.h"
#include "conv3d/Target/TmaChecks.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::conv3d;
using namespace mlir::conv3d::families;

// Where the halo kernel is chosen over the im2col one, fitted on the timed
// candidates of 120 random layers (seed 31) and checked on 120 others (seed
// 32; bench/RESULTS.md, fifth session): at least 48 tiles of 256 rows (60
// and 120 tiles still ran 1.2x and 1.8x faster than the im2col kernel, C =
// F = 96), and output rows that fill at least half of the 64-column tile
// rows (Wo = 28, 44%, ran 1.4x slower; Wo = 73, 57%, 1.2x faster).
static constexpr int64_t kMinHaloTiles = 48;
static constexpr int64_t kMinHaloFillPercent = 50;

const SM90HaloFamily &mlir::conv3d::getSM90HaloFamily() {
  static const SM90HaloFamily family;
  return family;
}

std::optional<std::string>
SM90HaloFamily::canImplement(const ConvProblem &problem) const {
  if (std::optional<std::string> why = tmaOperandProblem(problem))
    return why;
  if (problem.needsQSliceOrder)
    return std::string("the fused Q-slice strategy runs K depth slice by "
                       "depth slice, and the halo mainloop walks each tile's "
                       "depth taps itself");
  if (std::optional<std::string> why =
          haloProblem(problem.geometry, problem.filterLayout, problem.inputType,
                      problem.quantizesInTile))
    return why;
  // (haloProblem refuses history frames; an empty history operand too.)
  if (problem.hasHistory)
    return std::string("the halo mainloop does not read a history operand");
  // The plan says the same of a configuration (SM90KernelPlan::build).
  if (problem.outputTakesTmaStore == false)
    return std::string("mainloop = halo stores its tiles with TMA: it needs "
                       "an overwritten dense 16-bit output without residual");
  if (problem.layouts)
    return tmaLayoutProblem(problem, *problem.layouts);
  return std::nullopt;
}

FamilyChoice SM90HaloFamily::select(MLIRContext *context,
                                    const ConvProblem &problem) const {
  const ConvGeometry &g = problem.geometry;
  if (g.filters > 96 && g.channels >= 128)
    return FamilyChoice::decline(llvm::formatv(
        "C = {0}, F = {1}: the halo mainloop is chosen for F up to 96 or C "
        "under 128; with more of both the im2col mainloop is as fast or "
        "faster",
        g.channels, g.filters));
  if (g.window[1] * g.window[2] < 2)
    return FamilyChoice::decline("a 1x1 window in H and W reuses no input "
                                 "rows across taps");
  // Whole 32-column store boxes of F up to 128, else the widest of 128, 96
  // and 64 that divides F (F = 288: three tiles of 96).
  int64_t tileM = 256, tileN = roundUp(pickTileN(g.filters, 128), 32);
  int64_t outW = g.outputSize(2);
  int64_t columns = ceilDiv(outW, sm90::kWgmmaM) * sm90::kWgmmaM;
  if (outW * 100 < columns * kMinHaloFillPercent)
    return FamilyChoice::decline(
        llvm::formatv("Wo = {0} fills {1}% of the 64-column tile rows (under "
                      "{2}%)",
                      outW, outW * 100 / columns, kMinHaloFillPercent));
  int64_t tiles = g.batch * g.outputSize(0) *
                  ceilDiv(g.outputSize(1), tileM / sm90::kWgmmaM) *
                  ceilDiv(outW, sm90::kWgmmaM);
  if (tiles < kMinHaloTiles)
    return FamilyChoice::decline(
        llvm::formatv("{0} tiles of 256 rows leave multiprocessors idle "
                      "(fewer than {1})",
                      tiles, kMinHaloTiles));
  std::optional<int64_t> stages =
      sm90::SM90KernelPlan::deepestHaloStages(g, tileM, tileN);
  if (!stages)
    return FamilyChoice::decline(
        llvm::formatv("no filter ring of a {0} x {1} tile leaves room for two "
                      "input patches in shared memory",
                      tileM, tileN));
  FamilyChoice choice;
  choice.config =
      IGemmConfigAttr::get(context, tileM, tileN, sm90::kChannelBlock, *stages,
                           8, 1, KOrder::taps_outer, 1, Target::sm90,
                           KernelSchedule::cooperative, 1, Mainloop::halo);
  return choice;
}

void SM90HaloFamily::addCandidates(
    MLIRContext *context, const ConvProblem &problem,
    SmallVectorImpl<IGemmConfigAttr> &out) const {
  const ConvGeometry &g = problem.geometry;
  if (g.window[1] * g.window[2] < 2)
    return;
  for (int64_t tileN : candidateTileNs(g.gemmN(), 128)) {
    tileN = roundUp(tileN, 32);
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
