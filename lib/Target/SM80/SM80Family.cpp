//===- SM80Family.cpp - the sm80 family: mma.sync + cp.async --------------===//
//
// The heuristic encodes a few measured facts rather than a search (the
// runtime's tuner can override it through the same attribute):
//
// - N tile matched to F. The filters of video VAEs come in 96, 192 and 384:
//   warp tiles of 64 x 64 (32 x 32 for F = 32) do best; a 96-wide N tile is
//   slower than a 128-wide one that wastes a quarter of its columns, and
//   F = 192 prefers three 64-wide N tiles with 256-row M tiles (measured on
//   an H100 over bench/shapes.json, bench/RESULTS.md).
// - Smaller M tiles when M is small: a GPU needs at least about one block
//   per multiprocessor (132 on an H100) or it idles; a cost model of the
//   last wave's imbalance halves tile_m (down to 64).
// - K tile: 64 bf16 elements (128 bytes) per row with 3 stages for 128-wide
//   N tiles over at least 64 channels (96 KB: two blocks per
//   multiprocessor); otherwise 32 with 4 stages (3 for 256-row M tiles), and
//   16 for odd channel counts, whose element-wise loads are staged in
//   registers.
// - Warp layout: each warp owns at most 64 x 64 accumulators (128 f32
//   registers per thread), so wide N tiles get more warps.
//
// The tuner times 64/128/256-row M tiles with 64- and 128-wide N tiles and
// both K depths of a stage, stages following the heuristic's rules.
//
// Grouped convolutions (issue 23) are G GEMMs of M x F/G x K/G: the group
// is one more grid dimension, each block reading its group's C/G input
// channels and F/G filters (conv3d-implicit-gemm's group views) and
// writing its F/G output channels. The family takes them where each
// group's channel and filter slices are whole 16-byte vectors
// (kGroupedChannelMultiple: cp.async of 8 channels, 16-byte epilogue
// stores at every group's first filter); the depthwise kernel takes the
// others (takesDepthwiseKernel, Registry.cpp). The N tile is chosen for
// F/G, and the machine is balanced over the blocks of every group.
//
//===----------------------------------------------------------------------===//

#include "../FamilyUtils.h"

#include "conv3d/Target/Families.h"

using namespace mlir;
using namespace mlir::conv3d;
using namespace mlir::conv3d::families;

const SM80Family &mlir::conv3d::getSM80Family() {
  static const SM80Family family;
  return family;
}

std::optional<std::string>
SM80Family::canImplement(const ConvProblem &problem) const {
  // Operand types and strides are checked on the grid loop by the lowering
  // (checkGpuOperands), which names them.
  if (std::optional<std::string> why = packedFilterProblem(problem))
    return why;
  return groupedProblem(problem);
}

std::optional<std::string>
SM80Family::groupedProblem(const ConvProblem &problem) {
  const ConvGeometry &g = problem.geometry;
  if (!g.isGrouped())
    return std::nullopt;
  auto describe = [&](StringRef what, int64_t perGroup) {
    return "it is a grouped convolution (groups = " + std::to_string(g.groups) +
           ") of " + std::to_string(perGroup) + " " + what.str() +
           " per group, and the sm80 kernel takes groups of a multiple of " +
           std::to_string(kGroupedChannelMultiple) + " " + what.str() +
           " (16-byte vectors of each group's slice; the depthwise kernel "
           "takes the others)";
  };
  int64_t cg = g.channelsPerGroup(), fg = g.filtersPerGroup();
  if (cg == ConvGeometry::kDynamic || cg % kGroupedChannelMultiple != 0)
    return describe("input channels", cg);
  if (fg == ConvGeometry::kDynamic || fg % kGroupedChannelMultiple != 0)
    return describe("filters", fg);
  return std::nullopt;
}

FamilyChoice SM80Family::select(MLIRContext *context,
                                const ConvProblem &problem) const {
  const ConvGeometry &geometry = problem.geometry;
  int64_t m = geometry.gemmM(), n = geometry.gemmN();
  int64_t tileM, tileN, tileK, stages, warpsM, warpsN;
  int64_t rowsPerWarp = 64;
  if (n <= 64) {
    tileN = roundUp(n, 8);
    tileM = 128;
    // Two warp columns need 8-column MMA tiles on each side.
    warpsN = tileN > 32 && tileN % 16 == 0 ? 2 : 1;
    rowsPerWarp = warpsN == 2 ? 64 : 32;
  } else if (n % 128 == 0 || n < 128) {
    tileN = 128;
    tileM = 128;
    warpsN = 2;
  } else if (n % 64 == 0) {
    tileN = 64;
    tileM = 256;
    warpsN = 1;
  } else {
    tileN = 128;
    tileM = 128;
    warpsN = 2;
  }
  // Balance the machine: a multiprocessor works through its share of the
  // blocks, so the time goes as ceil(blocks / SMs) times a block's rows
  // plus a fixed cost per block (pipeline prologue and epilogue, about
  // 32 rows' worth). Halve tile_m (down to 64) while that helps: e.g.
  // 147 blocks of 128 rows leave 15 multiprocessors with two blocks, 294
  // of 64 rows spread better (measured 8% faster on wan_chunk_mid).
  // (Every group has its own M x N tiles.)
  int64_t nTiles = ceilDiv(n, tileN) * geometry.gemmBatch();
  auto balancedCost = [&](int64_t rows) {
    return ceilDiv(ceilDiv(m, rows) * nTiles, kH100SMs) * (rows + 32);
  };
  while (tileM > 64 && balancedCost(tileM / 2) < balancedCost(tileM))
    tileM /= 2;
  // A halved M tile keeps four warps by thinning their rows.
  if (tileM < 128)
    rowsPerWarp = std::min<int64_t>(rowsPerWarp, 32);
  // Channel counts that are not a multiple of 2 take the register-staged
  // element-wise load path: a thinner K tile and 16-row warp tiles keep
  // the elements each thread stages (and their addresses) in registers.
  bool narrow = geometry.channels % 2 != 0;
  if (narrow)
    rowsPerWarp = 16;
  tileK = narrow ? 16 : 32;
  stages = tileM >= 256 ? 3 : 4;
  // 128-wide N tiles over at least 64 channels: a 64-deep K step halves
  // the barriers and copy issues per MMA; three stages (96 KB) keep two
  // blocks per multiprocessor, four would allow only one.
  if (tileN == 128 && geometry.channels >= 64) {
    tileK = 64;
    stages = 3;
  }
  warpsM =
      std::max<int64_t>(1, std::min<int64_t>(tileM / rowsPerWarp, 8 / warpsN));
  while (tileM % (16 * warpsM) != 0)
    --warpsM;
  FamilyChoice choice;
  choice.config = makeConfig(context, problem, tileM, tileN, tileK, stages,
                             warpsM, warpsN, Target::sm80);
  return choice;
}

void SM80Family::addCandidates(MLIRContext *context, const ConvProblem &problem,
                               SmallVectorImpl<IGemmConfigAttr> &out) const {
  const ConvGeometry &g = problem.geometry;
  // The register-staged path of odd channel counts keeps its thin tiles.
  if (g.channels % 2 != 0)
    return;
  int64_t n = g.gemmN();
  SmallVector<int64_t, 2> tileNs = {64, 128};
  // A group's N tile spans at most its filters: wider ones would only mask
  // columns of each group's GEMM.
  if (g.isGrouped() && n < 64)
    tileNs = {roundUp(n, 8)};
  for (int64_t tileN : tileNs) {
    if (tileN > roundUp(n, 8) && tileN != 64)
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
                                           /*splitK=*/1, Target::sm80,
                                           KernelSchedule::cooperative,
                                           /*clusterM=*/1, Mainloop::im2col));
      }
    }
  }
}

std::optional<std::string>
SM80Family::plan(const ConvProblem &problem, IGemmConfigAttr config,
                 const sm80::OperandAlignment &alignment,
                 sm80::SM80KernelPlan &plan) const {
  return sm80::SM80KernelPlan::build(
      problem.geometry, problem.filterLayout, config.getTileM(),
      config.getTileN(), config.getTileK(), config.getStages(),
      config.getWarpsM(), config.getWarpsN(), config.getKOrder(),
      config.getSplitK(), problem.tileQuantBlockSize(), plan, alignment,
      problem.hasPrologue);
}
