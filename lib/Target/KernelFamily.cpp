//===- KernelFamily.cpp - problems, configurations, shared helpers --------===//

#include "conv3d/Target/KernelFamily.h"

#include "FamilyUtils.h"

#include "conv3d/IR/Conv3dOps.h"
#include "conv3d/Target/CostModel.h"

using namespace mlir;
using namespace mlir::conv3d;

KernelFamily::~KernelFamily() = default;

std::optional<KernelPrediction>
KernelFamily::predict(const ConvProblem &problem,
                      IGemmConfigAttr config) const {
  if (!config || !problem.geometry.hasStaticShape())
    return std::nullopt;
  std::optional<CostEstimate> estimate =
      estimateKernelCost(problem.geometry, config, getKernel());
  if (!estimate)
    return std::nullopt;
  KernelPrediction prediction;
  prediction.seconds = estimate->milliseconds * 1e-3;
  prediction.waves = estimate->waves;
  prediction.bytes = estimate->dramBytes;
  return prediction;
}

/// Whether the output of `conv` is what a TMA store writes: overwritten
/// without a residual, 16-bit, [M][F] with 16-byte rows (F a multiple of 8)
/// and, on memrefs, an identity layout.
static bool takesTmaStore(ConvOp conv) {
  if (conv.getResidual() || !conv.getOverwrite() ||
      conv.getGeometry().filters % 8 != 0)
    return false;
  Type outElem = getElementTypeOrSelf(conv.getInit().getType());
  if (!outElem.isBF16() && !outElem.isF16())
    return false;
  auto memref = dyn_cast<MemRefType>(conv.getInit().getType());
  return !memref || memref.getLayout().isIdentity();
}

ConvProblem ConvProblem::fromConv(ConvOp conv) {
  ConvProblem problem;
  problem.geometry = conv.getGeometry();
  problem.filterLayout = conv.getFilterLayout();
  problem.inputType = getElementTypeOrSelf(conv.getInput().getType());
  if (std::optional<NVFP4Attr> quant = conv.getInputQuant()) {
    problem.quantBlockSize = quant->getBlockSize();
    problem.quantizesInTile = true;
  }
  problem.packedFilter = conv.hasPackedFilter();
  problem.hasHistory = static_cast<bool>(conv.getHistory());
  problem.hasPrologue = conv.hasPrologue();
  problem.outputTakesTmaStore = takesTmaStore(conv);
  return problem;
}

IGemmConfigAttr mlir::conv3d::withKernel(IGemmConfigAttr config,
                                         Target kernel) {
  return IGemmConfigAttr::get(
      config.getContext(), config.getTileM(), config.getTileN(),
      config.getTileK(), config.getStages(), config.getWarpsM(),
      config.getWarpsN(), config.getKOrder(), config.getSplitK(), kernel,
      config.getSchedule(), kernel == Target::sm90 ? config.getClusterM() : 1,
      kernel == Target::sm90 ? config.getMainloop() : Mainloop::im2col);
}

StringRef mlir::conv3d::stringifySelectionPolicy(SelectionPolicy policy) {
  switch (policy) {
  case SelectionPolicy::CostModel:
    return "model";
  case SelectionPolicy::Heuristic:
    return "heuristic";
  }
  llvm_unreachable("unknown selection policy");
}

std::optional<SelectionPolicy>
mlir::conv3d::symbolizeSelectionPolicy(StringRef text) {
  if (text == "model")
    return SelectionPolicy::CostModel;
  if (text == "heuristic")
    return SelectionPolicy::Heuristic;
  return std::nullopt;
}

StringRef mlir::conv3d::stringifyVerdict(FamilyVerdict::Kind kind) {
  switch (kind) {
  case FamilyVerdict::Kind::Chosen:
    return "chosen";
  case FamilyVerdict::Kind::Declined:
    return "declined";
  case FamilyVerdict::Kind::Refused:
    return "refused";
  case FamilyVerdict::Kind::NotReached:
    return "not reached";
  }
  llvm_unreachable("unknown verdict");
}

int64_t families::pickTileN(int64_t filters, int64_t maxTile) {
  if (filters <= maxTile)
    return roundUp(filters, 8);
  for (int64_t tile = maxTile; tile >= 64; tile -= 32)
    if (filters % tile == 0)
      return tile;
  return maxTile;
}

SmallVector<int64_t> families::candidateTileNs(int64_t filters,
                                               int64_t maxTile) {
  SmallVector<int64_t> tiles;
  auto add = [&](int64_t tile) {
    if (tile >= 8 && tile <= maxTile && !llvm::is_contained(tiles, tile))
      tiles.push_back(tile);
  };
  if (filters <= maxTile)
    add(roundUp(filters, 8));
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

IGemmConfigAttr families::makeConfig(
    MLIRContext *context, const ConvProblem &problem, int64_t tileM,
    int64_t tileN, int64_t tileK, int64_t stages, int64_t warpsM,
    int64_t warpsN, Target kernel, KernelSchedule schedule, Mainloop mainloop) {
  if (problem.quantBlockSize)
    tileK = roundUp(tileK, *problem.quantBlockSize);
  return IGemmConfigAttr::get(context, tileM, tileN, tileK, stages, warpsM,
                              warpsN, KOrder::taps_outer, /*splitK=*/1, kernel,
                              schedule, /*clusterM=*/1, mainloop);
}

std::optional<std::string> families::groupsProblem(const ConvProblem &problem) {
  const ConvGeometry &g = problem.geometry;
  if (!g.isGrouped())
    return std::nullopt;
  return "it is a grouped convolution (groups = " + std::to_string(g.groups) +
         ", " + std::to_string(g.channelsPerGroup()) +
         " channels per group), which this kernel does not compute (the cpu "
         "target does; on GPUs the sm80 kernel and the depthwise kernel do)";
}

std::optional<std::string>
families::packedFilterProblem(const ConvProblem &problem) {
  if (!problem.packedFilter)
    return std::nullopt;
  return std::string("its filter is packed NVFP4 (filter_quant), which only "
                     "the sm100-block-scaled kernel multiplies packed "
                     "(nvfp4-mode=fake unpacks it first)");
}
