//===- SelectConfig.cpp - conv3d-select-config ----------------------------===//
//
// The configuration of each convolution: the host's hook, then a forced
// configuration (both checked against the convolution and the kernel they
// name), then the target's kernel families in fallback order
// (conv3d/Target/KernelFamily.h: selectKernel), whose heuristics and checks
// live in lib/Target.
//
//===----------------------------------------------------------------------===//

#include "conv3d/Transforms/ConfigHeuristics.h"
#include "conv3d/Transforms/Passes.h"

#include "conv3d/IR/Conv3dOps.h"
#include "conv3d/Target/Families.h"

#include "llvm/Support/FormatVariadic.h"

namespace mlir::conv3d {
#define GEN_PASS_DEF_CONV3DSELECTCONFIG
#include "conv3d/Transforms/Passes.h.inc"
} // namespace mlir::conv3d

using namespace mlir;
using namespace mlir::conv3d;

std::optional<int64_t> mlir::conv3d::inputQuantBlockSize(ConvOp conv) {
  if (std::optional<NVFP4Attr> quant = conv.getInputQuant())
    return quant->getBlockSize();
  return std::nullopt;
}

KernelSelection mlir::conv3d::selectKernelForConv(ConvOp conv, Target target,
                                                  SelectionPolicy policy,
                                                  QSliceStrategy qslice) {
  ConvProblem problem = ConvProblem::fromConv(conv);
  policy = selectUnderQSlice(problem, qslice, policy);
  KernelSelection selection =
      selectKernel(conv.getContext(), problem, target, policy);
  if (std::optional<std::string> why = selection.fallbackReason(target))
    conv.emitRemark() << "conv3d: the " << stringifyTarget(target)
                      << " kernel cannot take this convolution (" << *why
                      << "); it runs on the "
                      << stringifyTarget(selection.family->getKernel())
                      << " kernel";
  for (const std::string &note : selection.notes)
    conv.emitRemark() << "conv3d: " << note;
  return selection;
}

SelectionPolicy mlir::conv3d::selectUnderQSlice(ConvProblem &problem,
                                                QSliceStrategy strategy,
                                                SelectionPolicy policy) {
  if (strategy != QSliceStrategy::Fused)
    return policy;
  problem.needsQSliceOrder = true;
  return SelectionPolicy::Heuristic;
}

IGemmConfigAttr mlir::conv3d::selectIGemmConfigForConv(ConvOp conv,
                                                       Target target,
                                                       SelectionPolicy policy,
                                                       QSliceStrategy qslice) {
  return selectKernelForConv(conv, target, policy, qslice).config;
}

std::optional<std::string>
mlir::conv3d::checkConfigForConv(IGemmConfigAttr config,
                                 const ConvGeometry &geometry,
                                 std::optional<int64_t> quantBlockSize) {
  if (config.getSplitK() > 1 && config.getKOrder() != KOrder::taps_outer)
    return std::string("split_k > 1 needs k_order = taps_outer");
  if (!quantBlockSize)
    return std::nullopt;
  if (config.getTileK() % *quantBlockSize != 0)
    return llvm::formatv("tile_k = {0} must be a multiple of the NVFP4 block "
                         "size {1} (tile loads quantize whole blocks)",
                         config.getTileK(), *quantBlockSize)
        .str();
  int64_t sliceK = geometry.gemmK() / geometry.window[0];
  if (config.getKOrder() == KOrder::qslice_outer &&
      sliceK % *quantBlockSize != 0)
    return llvm::formatv("k_order = qslice_outer splits NVFP4 blocks: R*S*C "
                         "= {0} is not a multiple of the block size {1}",
                         sliceK, *quantBlockSize)
        .str();
  return std::nullopt;
}

/// A configuration the user or the host chose (rather than the heuristic)
/// for `conv`, made ready for `target`: a config without a kernel is for the
/// target's own. Returns null after reporting on `conv` when it does not fit
/// the convolution or names a TMA kernel that cannot take it; `origin` says
/// where it came from ("" for `config=`).
static IGemmConfigAttr checkChosenConfig(ConvOp conv, IGemmConfigAttr config,
                                         Target target, StringRef origin) {
  IGemmConfigAttr chosen =
      config.getKernel() == Target::cpu && target != Target::cpu
          ? withKernel(config, target)
          : config;
  ConvGeometry geometry = conv.getGeometry();
  std::optional<int64_t> blockSize = inputQuantBlockSize(conv);
  if (std::optional<std::string> problem =
          checkConfigForConv(chosen, geometry, blockSize)) {
    conv.emitError() << "cannot use " << origin << "tile configuration "
                     << chosen << ": " << *problem;
    return {};
  }
  // An sm90 or sm100 config on a convolution that kernel cannot take is
  // refused here, with the way out, rather than in the lowering.
  Target kernel = chosen.getKernel();
  if ((target == Target::sm90 || target == Target::sm100) && kernel == target)
    if (const KernelFamily *family = getKernelFamilyFor(chosen, target))
      if (std::optional<std::string> problem =
              family->canImplement(ConvProblem::fromConv(conv))) {
        conv.emitError() << "cannot use " << origin << "tile configuration "
                         << chosen << ": the " << stringifyTarget(kernel)
                         << " kernel cannot take this convolution (" << *problem
                         << "); force an sm80 configuration with kernel=sm80";
        return {};
      }
  return chosen;
}

namespace {
struct SelectConfigPass
    : mlir::conv3d::impl::Conv3dSelectConfigBase<SelectConfigPass> {
  using Base::Base;
  SelectConfigPass(const Conv3dSelectConfigOptions &options,
                   std::function<IGemmConfigAttr(ConvOp)> hook)
      : Base(options), hook(std::move(hook)) {}

  void runOnOperation() override {
    IGemmConfigAttr forced;
    if (!config.empty()) {
      std::string error;
      forced = parseIGemmConfig(&getContext(), config, error);
      if (!forced) {
        getOperation()->emitError() << "conv3d-select-config: " << error;
        return signalPassFailure();
      }
    }
    WalkResult result = getOperation()->walk([&](ConvOp conv) {
      if (conv.getConfig())
        return WalkResult::advance();
      // A packed NVFP4 filter is multiplied only by the block-scaled sm100
      // kernel, which chooses its own tile (conv3d-lower-block-scaled-to-
      // sm100) unless the host or the user chose one: that configuration
      // is the kernel's to take or refuse, with its reason.
      if (conv.hasPackedFilter()) {
        IGemmConfigAttr chosen = hook ? hook(conv) : IGemmConfigAttr();
        if (!chosen)
          chosen = forced;
        if (chosen)
          conv.setConfigAttr(chosen.getKernel() == Target::cpu
                                 ? withKernel(chosen, Target::sm100)
                                 : chosen);
        return WalkResult::advance();
      }
      ConvGeometry geometry = conv.getGeometry();
      if (!geometry.hasStaticShape())
        return WalkResult::advance(); // dynamic shapes keep no config
      // The host's hook first, then a forced config, then the heuristic.
      IGemmConfigAttr fromHook = hook ? hook(conv) : IGemmConfigAttr();
      // The GPU pipelines give the grouped convolutions their families do
      // not take to the depthwise kernel (conv3d-lower-depthwise), which has
      // no tile configuration.
      if (target != Target::cpu &&
          takesDepthwiseKernel(ConvProblem::fromConv(conv), target))
        return WalkResult::advance();
      IGemmConfigAttr chosen;
      if (fromHook)
        chosen = checkChosenConfig(conv, fromHook, target, "the hook's ");
      else if (forced)
        chosen = checkChosenConfig(conv, forced, target, "");
      else if (IGemmConfigAttr heuristic =
                   selectIGemmConfigForConv(conv, target, selection, qslice);
               std::optional<std::string> problem = checkConfigForConv(
                   heuristic, geometry, inputQuantBlockSize(conv)))
        conv.emitError() << "cannot use tile configuration " << heuristic
                         << ": " << *problem;
      else
        chosen = heuristic;
      if (!chosen)
        return WalkResult::interrupt();
      conv.setConfigAttr(chosen);
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }

  std::function<IGemmConfigAttr(ConvOp)> hook;
};
} // namespace

std::unique_ptr<Pass> mlir::conv3d::createConv3dSelectConfig(
    const Conv3dSelectConfigOptions &options,
    std::function<IGemmConfigAttr(ConvOp)> selectConfig) {
  return std::make_unique<SelectConfigPass>(options, std::move(selectConfig));
}
