//===- CpuFamily.cpp - the cpu family: implicit-GEMM tiles as loops -------===//
//
// Tiles sized for the L1/L2 caches; stages and warps are unused. It runs
// every convolution the dialect can state (the reference for the others).
//
//===----------------------------------------------------------------------===//

#include "FamilyUtils.h"

#include "conv3d/Target/Families.h"

using namespace mlir;
using namespace mlir::conv3d;
using namespace mlir::conv3d::families;

const CpuFamily &mlir::conv3d::getCpuFamily() {
  static const CpuFamily family;
  return family;
}

std::optional<std::string>
CpuFamily::canImplement(const ConvProblem &problem) const {
  return packedFilterProblem(problem);
}

FamilyChoice CpuFamily::select(MLIRContext *context,
                               const ConvProblem &problem) const {
  const ConvGeometry &g = problem.geometry;
  int64_t m = g.gemmM(), n = g.gemmN(), k = g.gemmK();
  FamilyChoice choice;
  choice.config =
      makeConfig(context, problem, std::min<int64_t>(64, roundUp(m, 4)),
                 std::min<int64_t>(64, n), std::min<int64_t>(64, k),
                 /*stages=*/1, /*warpsM=*/1, /*warpsN=*/1, Target::cpu);
  return choice;
}

/// A few cache-sized tiles.
void CpuFamily::addCandidates(MLIRContext *context, const ConvProblem &problem,
                              SmallVectorImpl<IGemmConfigAttr> &out) const {
  const ConvGeometry &g = problem.geometry;
  const int64_t tiles[][3] = {{16, 64, 64}, {32, 32, 32}, {64, 32, 64}};
  for (const auto &tile : tiles)
    out.push_back(IGemmConfigAttr::get(
        context, std::min(tile[0], roundUp(g.gemmM(), 4)),
        std::min(tile[1], g.gemmN()), std::min(tile[2], g.gemmK()),
        /*stages=*/1, /*warpsM=*/1, /*warpsN=*/1, KOrder::taps_outer,
        /*splitK=*/1, Target::cpu, KernelSchedule::cooperative,
        /*clusterM=*/1, Mainloop::im2col));
}
