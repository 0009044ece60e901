//===- RelayoutFilter.cpp - conv3d-relayout-filter ------------------------===//
//
// The sm90 kernel reads filter tiles K-major by TMA (FQRSC: each filter's
// Q*R*S*C values contiguous). A QRSCF filter is N-major; rather than send
// such convolutions to the sm80 kernel, the filter is transposed once per
// call (a linalg.transpose, which the GPU pipeline runs as a device loop:
// filters are megabytes, activations gigabytes).
//
//===----------------------------------------------------------------------===//

#include "conv3d/Target/Families.h"
#include "conv3d/Transforms/Passes.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::conv3d {
#define GEN_PASS_DEF_CONV3DRELAYOUTFILTER
#include "conv3d/Transforms/Passes.h.inc"
} // namespace mlir::conv3d

using namespace mlir;
using namespace mlir::conv3d;

namespace {

struct RelayoutQrscfFilter : OpRewritePattern<ConvOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ConvOp conv,
                                PatternRewriter &rewriter) const override {
    auto filterType = dyn_cast<RankedTensorType>(conv.getFilter().getType());
    if (!filterType || conv.getFilterLayout() != FilterLayout::qrscf)
      return rewriter.notifyMatchFailure(conv, "not a QRSCF filter tensor");
    // A configuration chosen for another kernel keeps its layout.
    if (IGemmConfigAttr config = conv.getConfigAttr();
        config && config.getKernel() != Target::sm90)
      return rewriter.notifyMatchFailure(conv, "configured for another kernel");
    ConvGeometry geometry = conv.getGeometry();
    if (!geometry.hasStaticShape())
      return rewriter.notifyMatchFailure(conv, "dynamic shape");
    // Only where the layout is what keeps the sm90 im2col kernel from it.
    // (A prologue fused into the loads keeps it from the kernel too, but
    // such a convolution has always been relaid out for the sm80 kernel
    // that runs it: kept so, its kernel unchanged.)
    ConvProblem relaidOut = ConvProblem::fromConv(conv);
    relaidOut.filterLayout = FilterLayout::fqrsc;
    relaidOut.hasPrologue = false;
    if (getSM90Im2colFamily().canImplement(relaidOut))
      return rewriter.notifyMatchFailure(conv, "sm90 cannot take it anyway");
    // [Q, R, S, C, F] -> [F, Q, R, S, C].
    ArrayRef<int64_t> shape = filterType.getShape();
    SmallVector<int64_t> fqrsc = {shape[4], shape[0], shape[1], shape[2],
                                  shape[3]};
    Location loc = conv.getLoc();
    Value init = tensor::EmptyOp::create(rewriter, loc, fqrsc,
                                         filterType.getElementType());
    auto transpose =
        linalg::TransposeOp::create(rewriter, loc, conv.getFilter(), init,
                                    ArrayRef<int64_t>{4, 0, 1, 2, 3});
    rewriter.modifyOpInPlace(conv, [&] {
      conv.getFilterMutable().assign(transpose.getResult()[0]);
      conv.setFilterLayout(FilterLayout::fqrsc);
    });
    return success();
  }
};

struct RelayoutFilterPass
    : mlir::conv3d::impl::Conv3dRelayoutFilterBase<RelayoutFilterPass> {
  using Base::Base;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateFilterRelayoutPatterns(patterns, target);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void mlir::conv3d::populateFilterRelayoutPatterns(RewritePatternSet &patterns,
                                                  Target target) {
  if (target == Target::sm90)
    patterns.add<RelayoutQrscfFilter>(patterns.getContext());
}
