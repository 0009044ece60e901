//===- CheckNVFP4Mode.cpp - conv3d-check-nvfp4-mode -----------------------===//
//
// nvfp4-mode=real is a request for real FP4 arithmetic, so a convolution
// with an NVFP4 operand that the block-scaled sm100 kernel cannot take is an
// error naming why rather than a quiet fallback to fake quantization. The
// checks follow the kernel's own: both operands NVFP4 in the block16 form,
// then its plan (SM100BlockScaledPlan.h) and its TMA maps
// (SM100BlockScaledTma.h). The kernel is not emitted yet, which is the last
// reason given.
//
//===----------------------------------------------------------------------===//

#include "conv3d/Conversion/SM100/SM100BlockScaledTma.h"
#include "conv3d/IR/Conv3dOps.h"
#include "conv3d/Transforms/Passes.h"

namespace mlir::conv3d {
#define GEN_PASS_DEF_CONV3DCHECKNVFP4MODE
#include "conv3d/Transforms/Passes.h.inc"
} // namespace mlir::conv3d

using namespace mlir;
using namespace mlir::conv3d;

namespace {

/// The NVFP4 block size of the convolution's input: fused (`quantize`) or
/// a conv3d.quantize along the channels feeding it; none if the input is
/// not quantized.
std::optional<int64_t> inputBlockSize(ConvOp conv) {
  if (std::optional<NVFP4Attr> quant = conv.getInputQuant())
    return quant->getBlockSize();
  if (auto quantize = conv.getInput().getDefiningOp<QuantizeOp>())
    if (quantize.getBlockAxes() == ArrayRef<int64_t>{4})
      return quantize.getFormat().getBlockSize();
  return std::nullopt;
}

/// Why the block-scaled sm100 kernel cannot multiply `conv`, which has an
/// NVFP4 operand.
std::string blockScaledProblem(ConvOp conv) {
  std::optional<int64_t> blockSize = inputBlockSize(conv);
  if (!conv.hasPackedFilter())
    return "the block-scaled MMA multiplies real FP4 only when both operands "
           "are NVFP4, and this convolution's filter is not packed "
           "(filter_quant; Engine::quantizeFilter packs one). Use "
           "nvfp4-mode=fake";
  if (!blockSize)
    return "the block-scaled MMA multiplies real FP4 only when both operands "
           "are NVFP4, and this convolution's input is not quantized along "
           "its channels (quantize, or a conv3d.quantize with axes = [4])";
  if (*blockSize != sm100::nvfp4::kScaleBlock)
    return "the input's NVFP4 block size is " + std::to_string(*blockSize) +
           "; the block-scaled MMA (kind::mxf4nvf4 block16) takes 16";
  if (conv.getHistory())
    return "the block-scaled kernel does not read a history operand";
  ConvGeometry g = conv.getGeometry();
  if (!g.hasStaticShape())
    return "the block-scaled kernel needs static shapes";
  // The limits that depend on the convolution, not on the tile shape the
  // kernel would choose: a 128 x 128 tile with the fewest stages.
  sm100::nvfp4::BlockScaledPlan plan;
  sm100::nvfp4::BlockScaledTmaPlan tma;
  std::optional<std::string> problem =
      sm100::nvfp4::BlockScaledPlan::build(g, 128, 128, 2, plan);
  if (!problem)
    problem = sm100::nvfp4::BlockScaledTmaPlan::build(g, plan, tma);
  if (problem)
    return "the block-scaled sm100 kernel cannot take this convolution: " +
           *problem;
  return "the block-scaled sm100 kernel (tcgen05.mma kind::mxf4nvf4) is not "
         "emitted yet; its packing prepass (conv3d.pack_nvfp4), the packed "
         "filter (filter_quant, Engine::quantizeFilter), its plan and its TMA "
         "maps are built. Use nvfp4-mode=fake";
}

struct CheckNVFP4ModePass
    : mlir::conv3d::impl::Conv3dCheckNVFP4ModeBase<CheckNVFP4ModePass> {
  using Base::Base;

  void runOnOperation() override {
    if (mode != "fake" && mode != "real") {
      getOperation()->emitError() << "conv3d-check-nvfp4-mode: mode must be "
                                     "fake or real, got '"
                                  << mode << "'";
      return signalPassFailure();
    }
    if (mode == "fake")
      return;
    WalkResult result = getOperation()->walk([&](ConvOp conv) {
      if (!inputBlockSize(conv) && !conv.hasPackedFilter())
        return WalkResult::advance();
      if (target != Target::sm100)
        conv.emitError() << "nvfp4-mode=real needs target=sm100 (the "
                            "block-scaled tcgen05.mma), not "
                         << stringifyTarget(target);
      else
        conv.emitError() << "nvfp4-mode=real: " << blockScaledProblem(conv);
      return WalkResult::interrupt();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
