//===- SM100Family.cpp - sm100: tcgen05.mma kind::f16 + TMA im2col --------===//
//
// The heuristic: one cta_group::1 tcgen05.mma covers 128 rows (a TMEM lane
// each) and N in multiples of 16 up to 256; its accumulators live in TMEM,
// so the whole N tile costs no registers. As many stages (up to 6) as fit
// beside the epilogue's staging (the plan's own computation); the four
// epilogue warps are warps_m. No sm_100 GPU has run the kernel, so nothing
// is tuned.
//
//===----------------------------------------------------------------------===//

#include "../FamilyUtils.h"

#include "conv3d/Target/Families.h"

using namespace mlir;
using namespace mlir::conv3d;
using namespace mlir::conv3d::families;

const SM100Family &mlir::conv3d::getSM100Family() {
  static const SM100Family family;
  return family;
}

std::optional<std::string>
SM100Family::canImplement(const ConvProblem &problem) const {
  return tmaIm2colFamilyProblem(problem, Target::sm100);
}

FamilyChoice SM100Family::select(MLIRContext *context,
                                 const ConvProblem &problem) const {
  int64_t tileN = roundUp(pickTileN(problem.geometry.gemmN(), 256), 16);
  int64_t tileM = 128;
  int64_t stages = std::max<int64_t>(
      2, sm100::SM100KernelPlan::maxStages(tileM, tileN, /*limit=*/6));
  FamilyChoice choice;
  choice.config = makeConfig(context, problem, tileM, tileN, /*tileK=*/64,
                             stages, /*warpsM=*/4, /*warpsN=*/1, Target::sm100);
  return choice;
}

void SM100Family::addCandidates(MLIRContext *, const ConvProblem &,
                                SmallVectorImpl<IGemmConfigAttr> &) const {
  // No lowering to time yet (no sm_100 GPU).
}

std::optional<std::string>
SM100Family::plan(const ConvProblem &problem, IGemmConfigAttr config,
                  int64_t epilogueAlignment,
                  sm100::SM100KernelPlan &plan) const {
  if (std::optional<std::string> why = sm100::SM100KernelPlan::build(
          problem.geometry, config.getTileM(), config.getTileN(),
          config.getTileK(), config.getStages(), config.getWarpsM(),
          config.getWarpsN(), config.getKOrder(), config.getSplitK(),
          epilogueAlignment, plan))
    return why;
  if (config.getSchedule() != KernelSchedule::cooperative)
    return ("schedule = " + stringifyKernelSchedule(config.getSchedule()) +
            " is an sm90 schedule (the sm100 kernel overlaps epilogues "
            "through double-buffered TMEM accumulators)")
        .str();
  if (config.getClusterM() != 1)
    return std::string("cluster_m is an sm90 option (the sm100 kernel pairs "
                       "blocks through tile_m = 256, cta_group::2)");
  if (config.getMainloop() != Mainloop::im2col)
    return std::string("mainloop = halo is an sm90 option");
  return std::nullopt;
}
