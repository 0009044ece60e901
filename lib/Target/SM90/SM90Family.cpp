//===- SM90Family.cpp - the sm90 kernel's plan, for both mainloops --------===//

#include "../FamilyUtils.h"

#include "conv3d/Target/Families.h"

using namespace mlir;
using namespace mlir::conv3d;

std::optional<std::string>
SM90Family::plan(const ConvProblem &problem, IGemmConfigAttr config,
                 int64_t epilogueAlignment, bool outputTakesTmaStore,
                 sm90::SM90KernelPlan &plan, bool reduceSplitsInCluster) const {
  return sm90::SM90KernelPlan::build(
      problem.geometry, config.getTileM(), config.getTileN(), config.getTileK(),
      config.getStages(), config.getWarpsM(), config.getWarpsN(),
      config.getKOrder(), config.getSplitK(), epilogueAlignment, plan,
      config.getSchedule(), outputTakesTmaStore, problem.tileQuantBlockSize(),
      config.getClusterM(), config.getMainloop(), reduceSplitsInCluster);
}

std::optional<std::string>
SM90Family::planProblem(const ConvProblem &problem,
                        IGemmConfigAttr config) const {
  // Unknown (nullopt) is not checked, as everywhere in this layer.
  bool takesTmaStore = problem.outputTakesTmaStore.value_or(true);
  // The halo mainloop stores its tiles by TMA only.
  if (config.getMainloop() == Mainloop::halo && !takesTmaStore)
    return std::string("the halo mainloop stores by TMA, which this output "
                       "does not take");
  bool inCluster =
      config.getSplitK() > 1 && !sm90::SM90KernelPlan::splitClusterProblem(
                                    config.getSplitK(), config.getSchedule(),
                                    config.getClusterM(), config.getMainloop());
  int64_t epilogueAlignment = problem.geometry.filters % 8 == 0 ? 8 : 1;
  sm90::SM90KernelPlan unused;
  return plan(problem, config, epilogueAlignment, takesTmaStore, unused,
              inCluster);
}

int64_t mlir::conv3d::families::sm90StagesFor(int64_t tileM, int64_t tileN,
                                              KernelSchedule schedule) {
  int64_t stageBytes = (tileM + tileN) * 128;
  // Ping-pong gives each consumer warpgroup its own staging tile.
  int64_t stagingTiles = schedule == KernelSchedule::pingpong ? 2 : 1;
  constexpr int64_t kBudget = 232448 - 2048; // the block's shared memory
  int64_t stages = 0;
  for (int64_t chunks = 1; chunks <= 4; chunks *= 2) {
    int64_t staging = stagingTiles * tileM * (tileN / chunks + 4) * 4;
    stages = (kBudget - staging) / stageBytes;
    if (stages >= 4 || (tileN / chunks) % 16 != 0)
      break;
  }
  return std::clamp<int64_t>(stages, 2, 6);
}
