//===- PlacePrologue.cpp - conv3d-place-prologue --------------------------===//
//
// A convolution's input prologue (RMS norm over channels, activation) can
// run in two places:
//
// - fused: in the convolution's operand loads. Every input element is
//   transformed once per filter tap that reads it and once per N tile:
//   about Q*R*S*ceil(F/tile_n) times (27-54 for the 3x3x3 convolutions of a
//   video VAE). Only the CPU implicit-GEMM loops and the sm80 loaders do it;
//   on the H100 the sm80 kernel with the fused prologue measured 5-10x
//   slower than the same convolution after a separate pass
//   (bench/RESULTS.md, fourth session), and the sm90/sm100 kernels, which
//   take the convolution in shared memory from TMA, do not apply one.
// - prepass: a `conv3d.prologue` over the input (one read and one write of
//   it, each element transformed once) feeds a convolution without a
//   prologue, which every kernel takes. The default.
//
// The in-tile alternative on the TMA kernels was estimated and not built:
// SiLU needs two MUFU operations (ex2, rcp) per element, and the im2col
// mainloop sees every element Q*R*S times, so a 4 x 240 x 416 x 192 chunk
// would spend ~1.1 ms in MUFU alone against ~0.12 ms for the prepass.
//
// History frames are not transformed (they were when they were the previous
// chunk's input), so the prepass reads only the input.
//
//===----------------------------------------------------------------------===//

#include "conv3d/Transforms/Passes.h"

#include "EmptyLike.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::conv3d {
#define GEN_PASS_DEF_CONV3DPLACEPROLOGUE
#include "conv3d/Transforms/Passes.h.inc"
} // namespace mlir::conv3d

using namespace mlir;
using namespace mlir::conv3d;

namespace {

/// conv with a prologue  ==>  conv3d.prologue(x) -> conv without one.
struct MovePrologueToPrepass : OpRewritePattern<ConvOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ConvOp conv,
                                PatternRewriter &rewriter) const override {
    if (!conv.hasTensorSemantics() || !conv.hasPrologue())
      return failure();
    Location loc = conv.getLoc();
    Value input = conv.getInput();
    auto inputType = cast<RankedTensorType>(input.getType());
    Value empty = createEmptyLike(rewriter, loc, input);
    auto prologue = PrologueOp::create(
        rewriter, loc, TypeRange{inputType}, input, conv.getNormGamma(),
        conv.getNormBeta(), empty, conv.getNormEpsAttr(),
        conv.getInputActivationAttr());
    rewriter.modifyOpInPlace(conv, [&] {
      conv.getInputMutable().assign(prologue.getResult()[0]);
      conv.getNormGammaMutable().clear();
      conv.getNormBetaMutable().clear();
      conv.removeNormEpsAttr();
      conv.setInputActivation(Activation::none);
    });
    return success();
  }
};

struct PlaceProloguePass
    : mlir::conv3d::impl::Conv3dPlacePrologueBase<PlaceProloguePass> {
  using Base::Base;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populatePlaceProloguePatterns(patterns, placement);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void mlir::conv3d::populatePlaceProloguePatterns(RewritePatternSet &patterns,
                                                 ProloguePlacement placement) {
  if (placement == ProloguePlacement::Prepass)
    patterns.add<MovePrologueToPrepass>(patterns.getContext());
}
