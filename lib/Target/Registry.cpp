//===- Registry.cpp - each target's kernel families, and choosing one -----===//
//
// To add a kernel family: implement KernelFamily (Families.h, a file of its
// own under lib/Target) and put it in its target's list below, where it
// falls back to: a family tried before another takes what both can compute.
//
//===----------------------------------------------------------------------===//

#include "conv3d/Target/Families.h"

using namespace mlir;
using namespace mlir::conv3d;

ArrayRef<const KernelFamily *> mlir::conv3d::getKernelFamilies(Target target) {
  static const KernelFamily *const cpu[] = {&getCpuFamily()};
  static const KernelFamily *const sm80[] = {&getSM80Family()};
  static const KernelFamily *const sm90[] = {
      &getSM90HaloFamily(), &getSM90Im2colFamily(), &getSM80Family()};
  static const KernelFamily *const sm100[] = {
      &getSM100BlockScaledFamily(), &getSM100Family(), &getSM80Family()};
  switch (target) {
  case Target::cpu:
    return cpu;
  case Target::sm80:
    return sm80;
  case Target::sm90:
    return sm90;
  case Target::sm100:
    return sm100;
  }
  llvm_unreachable("unknown target");
}

bool mlir::conv3d::takesDepthwiseKernel(const ConvProblem &problem,
                                        Target target) {
  if (depthwiseKernelProblem(problem))
    return false;
  if (target == Target::cpu)
    return problem.geometry.channelsPerGroup() == 1;
  // The GEMM families of the target first: the grouped implicit GEMM of
  // the sm80 kernel (also the last family of sm90 and sm100) runs groups
  // of 8 channels and more on the tensor cores.
  return llvm::none_of(getKernelFamilies(target),
                       [&](const KernelFamily *family) {
                         return !family->canImplement(problem);
                       });
}

const KernelFamily &mlir::conv3d::getDefaultKernelFamily(Target target) {
  switch (target) {
  case Target::cpu:
    return getCpuFamily();
  case Target::sm80:
    return getSM80Family();
  case Target::sm90:
    return getSM90Im2colFamily();
  case Target::sm100:
    return getSM100Family();
  }
  llvm_unreachable("unknown target");
}

const KernelFamily *mlir::conv3d::getKernelFamilyFor(IGemmConfigAttr config,
                                                     Target target) {
  if (config.getKernel() == Target::cpu)
    config = withKernel(config, target);
  for (const KernelFamily *family : getKernelFamilies(target))
    if (family->runs(config))
      return family;
  return nullptr;
}

const KernelFamily *mlir::conv3d::lookupKernelFamily(StringRef name) {
  for (Target target : {Target::cpu, Target::sm80, Target::sm90, Target::sm100})
    for (const KernelFamily *family : getKernelFamilies(target))
      if (family->getName() == name)
        return family;
  return nullptr;
}

/// `config` of `family` as selectKernel writes it for `target`: the cpu and
/// sm80 kernels' configurations serve whatever target compiles them and are
/// written without a kernel on their own targets; the asynchronous kernels'
/// name theirs.
static IGemmConfigAttr forTarget(IGemmConfigAttr config,
                                 const KernelFamily &family, Target target) {
  if (!config)
    return config;
  bool servesAnyTarget =
      family.getKernel() == Target::cpu || family.getKernel() == Target::sm80;
  if (servesAnyTarget && family.getKernel() == target)
    return withKernel(config, Target::cpu);
  return config;
}

/// Whether the cost model chooses among `family`'s configurations on
/// `target`: the sm90 kernels, on whose timings it was fitted and checked.
static bool modelChooses(const KernelFamily &family, Target target) {
  return target == Target::sm90 && family.getKernel() == Target::sm90;
}

/// Replaces the heuristic's configuration in `selection` with the candidate
/// of the lowest predicted time whose plan builds, where the heuristic's
/// leaves multiprocessors idle (under one wave) and the candidate saves at
/// least kModelMargin (a ping-pong candidate's prediction scaled by
/// kModelPingpongPenalty).
static void chooseByCostModel(MLIRContext *context, const ConvProblem &problem,
                              Target target, KernelSelection &selection) {
  std::optional<KernelPrediction> heuristic =
      selection.family->predict(problem, selection.config);
  if (!heuristic || heuristic->waves >= kModelMaxWaves)
    return;
  const KernelFamily *bestFamily = nullptr;
  IGemmConfigAttr bestConfig;
  double bestSeconds = heuristic->seconds * (1 - kModelMargin);
  // tuningCandidates holds only families that can implement the problem.
  for (IGemmConfigAttr config : tuningCandidates(context, problem, target)) {
    const KernelFamily *family = getKernelFamilyFor(config, target);
    if (!family || !modelChooses(*family, target) ||
        family->planProblem(problem, config))
      continue;
    std::optional<KernelPrediction> prediction =
        family->predict(problem, config);
    if (prediction && config.getSchedule() == KernelSchedule::pingpong)
      prediction->seconds *= kModelPingpongPenalty;
    if (prediction && prediction->seconds < bestSeconds) {
      bestSeconds = prediction->seconds;
      bestFamily = family;
      bestConfig = config;
    }
  }
  if (!bestFamily)
    return;
  selection.heuristic = selection.config;
  selection.heuristicPrediction = heuristic;
  // The notes describe how the heuristic's kernel reads the input.
  if (bestFamily != selection.family)
    selection.notes.clear();
  for (FamilyVerdict &verdict : selection.verdicts) {
    if (verdict.family == bestFamily) {
      verdict.kind = FamilyVerdict::Kind::Chosen;
      verdict.reason.clear();
    } else if (verdict.family == selection.family) {
      verdict.kind = FamilyVerdict::Kind::Declined;
      verdict.reason = "the cost model predicts another kernel faster";
    }
  }
  selection.family = bestFamily;
  selection.config = bestConfig;
}

KernelSelection mlir::conv3d::selectKernel(MLIRContext *context,
                                           const ConvProblem &problem,
                                           Target target,
                                           SelectionPolicy policy) {
  KernelSelection selection;
  ArrayRef<const KernelFamily *> families = getKernelFamilies(target);
  for (const KernelFamily *family : families) {
    FamilyVerdict verdict;
    verdict.family = family;
    if (selection.family) {
      selection.verdicts.push_back(std::move(verdict));
      continue;
    }
    if (std::optional<std::string> why = family->canImplement(problem)) {
      verdict.kind = FamilyVerdict::Kind::Refused;
      verdict.reason = std::move(*why);
      selection.verdicts.push_back(std::move(verdict));
      continue;
    }
    FamilyChoice choice = family->select(context, problem);
    if (!choice.config) {
      verdict.kind = FamilyVerdict::Kind::Declined;
      verdict.reason = std::move(choice.declined);
      selection.verdicts.push_back(std::move(verdict));
      continue;
    }
    verdict.kind = FamilyVerdict::Kind::Chosen;
    selection.verdicts.push_back(std::move(verdict));
    selection.family = family;
    selection.config = forTarget(choice.config, *family, target);
    selection.notes = std::move(choice.notes);
  }
  if (!selection.family) {
    // No family can take it: the last one runs its heuristic anyway and its
    // lowering reports why it cannot (as the sm80 kernel always did).
    selection.family = families.back();
    selection.refused = true;
    selection.config =
        heuristicConfig(context, *families.back(), problem, target);
  }
  if (policy == SelectionPolicy::CostModel && !selection.refused &&
      modelChooses(*selection.family, target))
    chooseByCostModel(context, problem, target, selection);
  selection.prediction = selection.family->predict(problem, selection.config);
  return selection;
}

std::optional<std::string>
KernelSelection::fallbackReason(Target target) const {
  const KernelFamily &own = getDefaultKernelFamily(target);
  if (family->getKernel() == own.getKernel())
    return std::nullopt;
  for (const FamilyVerdict &verdict : verdicts)
    if (verdict.family == &own && verdict.kind == FamilyVerdict::Kind::Refused)
      return verdict.reason;
  return std::nullopt;
}

IGemmConfigAttr mlir::conv3d::heuristicConfig(MLIRContext *context,
                                              const KernelFamily &family,
                                              const ConvProblem &problem,
                                              Target target) {
  return forTarget(family.select(context, problem).config, family, target);
}

SmallVector<IGemmConfigAttr>
mlir::conv3d::tuningCandidates(MLIRContext *context, const ConvProblem &problem,
                               Target target) {
  SmallVector<IGemmConfigAttr> candidates;
  IGemmConfigAttr heuristic;
  for (const KernelFamily *family : getKernelFamilies(target)) {
    if (family->canImplement(problem))
      continue;
    size_t first = candidates.size();
    family->addCandidates(context, problem, candidates);
    for (IGemmConfigAttr &config : llvm::drop_begin(candidates, first))
      config = forTarget(config, *family, target);
    if (family->specializes())
      continue;
    heuristic = heuristicConfig(context, *family, problem, target);
    break;
  }
  // Tile loads quantize whole NVFP4 blocks; the heuristic's own choice is
  // timed anyway.
  SmallVector<IGemmConfigAttr> result;
  for (IGemmConfigAttr config : candidates) {
    if (problem.quantBlockSize &&
        config.getTileK() % *problem.quantBlockSize != 0)
      continue;
    if (config == heuristic || llvm::is_contained(result, config))
      continue;
    result.push_back(config);
  }
  return result;
}
