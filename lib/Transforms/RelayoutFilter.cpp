//===- RelayoutFilter.cpp - conv3d-relayout-filter ------------------------===//
//
// The sm90 kernel reads filter tiles K-major by TMA (FQRSC: each filter's
// Q*R*S*C values contiguous). A QRSCF filter is N-major; rather than send
// such convolutions to the sm80 kernel, the filter is transposed once per
// call (a linalg.transpose, which the GPU pipeline runs as a device loop:
// filters are megabytes, activations gigabytes). Channel counts that are
// not multiples of 8, which TMA cannot stride over, are padded with zeros
// (PadChannelsForTma).
//
//===----------------------------------------------------------------------===//

#include "conv3d/Target/Families.h"
#include "conv3d/Target/TmaChecks.h"
#include "conv3d/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
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

/// The geometry the TMA kernels see once PadChannelsForTma has run.
ConvGeometry geometryForTma(ConvOp conv) {
  ConvGeometry geometry = conv.getGeometry();
  if (std::optional<int64_t> channels =
          tmaPaddedChannels(ConvProblem::fromConv(conv)))
    geometry.channels = *channels;
  return geometry;
}

/// Gives `conv` its filter transposed into `layout` by a linalg.transpose
/// (the other of QRSCF [Q, R, S, C, F] and FQRSC [F, Q, R, S, C]).
void transposeFilter(PatternRewriter &rewriter, ConvOp conv,
                     FilterLayout layout) {
  auto type = cast<RankedTensorType>(conv.getFilter().getType());
  static constexpr int64_t kToFqrsc[] = {4, 0, 1, 2, 3};
  static constexpr int64_t kToQrscf[] = {1, 2, 3, 4, 0};
  ArrayRef<int64_t> permutation =
      layout == FilterLayout::fqrsc ? kToFqrsc : kToQrscf;
  SmallVector<int64_t> shape = llvm::map_to_vector(
      permutation, [&](int64_t dim) { return type.getDimSize(dim); });
  Location loc = conv.getLoc();
  Value init =
      tensor::EmptyOp::create(rewriter, loc, shape, type.getElementType());
  auto transpose = linalg::TransposeOp::create(rewriter, loc, conv.getFilter(),
                                               init, permutation);
  rewriter.modifyOpInPlace(conv, [&] {
    conv.getFilterMutable().assign(transpose.getResult()[0]);
    conv.setFilterLayout(layout);
  });
}

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
    ConvGeometry geometry = geometryForTma(conv);
    if (!geometry.hasStaticShape())
      return rewriter.notifyMatchFailure(conv, "dynamic shape");
    // Only where the layout (and channels that PadChannelsForTma pads) is
    // what keeps the sm90 kernels from it. (A prologue fused into the loads
    // keeps them from it too, but such a convolution has always been relaid
    // out for the sm80 kernel that runs it: kept so, its kernel unchanged.)
    ConvProblem relaidOut = ConvProblem::fromConv(conv);
    relaidOut.geometry = geometry;
    relaidOut.filterLayout = FilterLayout::fqrsc;
    bool prologue = relaidOut.hasPrologue;
    relaidOut.hasPrologue = false;
    if (!prologue && !sm90ReadsRelaidOut(rewriter.getContext(), relaidOut,
                                         conv.getConfigAttr()))
      return rewriter.notifyMatchFailure(conv, "sm90 does not read it");
    if (prologue && getSM90Im2colFamily().canImplement(relaidOut))
      return rewriter.notifyMatchFailure(conv, "sm90 cannot take it anyway");
    transposeFilter(rewriter, conv, FilterLayout::fqrsc);
    return success();
  }
};

/// Channels padded to a multiple of 8 for the TMA kernels: TMA's global
/// strides are multiples of 16 bytes, so an input of C = 921 (or 230, 460:
/// r(2+1)d's mid-planes) channels cannot be read by TMA and would run on the
/// sm80 kernel's element-wise loads (2-4x slower per K step: bench/
/// RESULTS.md, the cost model's odd80 and vec80). Zero channels added to
/// the input and the filter change no sum: the convolution reads
/// channel-padded copies (one pass over each operand, small next to the
/// convolution for the layers this applies to: C >= 57, where the padded
/// channels fill at least one 64-channel TMA box, and narrower channels
/// that the halo mainloop takes; sm90ReadsRelaidOut says which).
struct PadChannelsForTma : OpRewritePattern<ConvOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ConvOp conv,
                                PatternRewriter &rewriter) const override {
    auto inputType = dyn_cast<RankedTensorType>(conv.getInput().getType());
    auto filterType = dyn_cast<RankedTensorType>(conv.getFilter().getType());
    if (!inputType || !filterType ||
        conv.getFilterLayout() != FilterLayout::fqrsc)
      return rewriter.notifyMatchFailure(conv, "not an FQRSC conv on tensors");
    if (IGemmConfigAttr config = conv.getConfigAttr();
        config && config.getKernel() != Target::sm90)
      return rewriter.notifyMatchFailure(conv, "configured for another kernel");
    // Extra operands read the same channels and quantization blocks would
    // straddle the padding: those are left to the kernels that read them as
    // they are (tmaPaddedChannels says which).
    ConvGeometry geometry = conv.getGeometry();
    ConvProblem paddedProblem = ConvProblem::fromConv(conv);
    std::optional<int64_t> channels = tmaPaddedChannels(paddedProblem);
    if (!channels)
      return rewriter.notifyMatchFailure(conv, "no channels to pad");
    paddedProblem.geometry.channels = *channels;
    ConvGeometry padded = paddedProblem.geometry;
    if (!sm90ReadsRelaidOut(rewriter.getContext(), paddedProblem,
                            conv.getConfigAttr()))
      return rewriter.notifyMatchFailure(conv, "sm90 does not read it padded");
    Location loc = conv.getLoc();
    // Not a tensor.pad: that bufferizes to a fill of the whole padded buffer
    // before the copy (on r(2+1)d's 230-channel layers the fill alone took
    // longer than the convolution, bench/RESULTS.md). Only the added
    // channels are zeroed; the copy of the operand into its channel window
    // is one pass (conv3d-lower-host-ops-to-gpu vectorizes it).
    auto padChannels = [&](Value tensor) {
      auto type = cast<RankedTensorType>(tensor.getType());
      int64_t rank = type.getRank();
      SmallVector<int64_t> shape(type.getShape());
      shape.back() = padded.channels;
      Value buffer =
          tensor::EmptyOp::create(rewriter, loc, shape, type.getElementType());
      SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0));
      SmallVector<OpFoldResult> strides(rank, rewriter.getIndexAttr(1));
      SmallVector<OpFoldResult> sizes =
          getAsIndexOpFoldResult(rewriter.getContext(), shape);
      offsets.back() = rewriter.getIndexAttr(geometry.channels);
      sizes.back() = rewriter.getIndexAttr(padded.channels - geometry.channels);
      Value added = tensor::ExtractSliceOp::create(rewriter, loc, buffer,
                                                   offsets, sizes, strides);
      Value zero = arith::ConstantOp::create(
          rewriter, loc, rewriter.getZeroAttr(type.getElementType()));
      Value zeros =
          linalg::FillOp::create(rewriter, loc, zero, added).getResult(0);
      buffer = tensor::InsertSliceOp::create(rewriter, loc, zeros, buffer,
                                             offsets, sizes, strides);
      offsets.back() = rewriter.getIndexAttr(0);
      sizes.back() = rewriter.getIndexAttr(geometry.channels);
      return tensor::InsertSliceOp::create(rewriter, loc, tensor, buffer,
                                           offsets, sizes, strides)
          .getResult();
    };
    Value input = padChannels(conv.getInput());
    Value filter = padChannels(conv.getFilter());
    rewriter.modifyOpInPlace(conv, [&] {
      conv.getInputMutable().assign(input);
      conv.getFilterMutable().assign(filter);
    });
    return success();
  }
};

/// The depthwise kernel (conv3d-lower-depthwise) reads, for each tap, the
/// tap's weights of a vector of consecutive filters: one vector load in
/// QRSCF, where they are contiguous, but a scalar load per filter in FQRSC,
/// where they lie Q*R*S*C/G elements apart. FQRSC is the layout PyTorch's
/// channels-last weights have, and on the H200 that cost X3D's depthwise
/// C=432 16x14x14 layer 77 us against 33 us from QRSCF (Nsight Compute:
/// 12.7 against 5.0 cycles per issued instruction). The filter is
/// transposed to QRSCF once per call instead: a few thousand elements.
struct RelayoutFilterForDepthwise : OpRewritePattern<ConvOp> {
  RelayoutFilterForDepthwise(MLIRContext *context, Target target)
      : OpRewritePattern(context), target(target) {}

  LogicalResult matchAndRewrite(ConvOp conv,
                                PatternRewriter &rewriter) const override {
    if (!isa<RankedTensorType>(conv.getFilter().getType()) ||
        conv.getFilterLayout() != FilterLayout::fqrsc)
      return rewriter.notifyMatchFailure(conv, "not an FQRSC filter tensor");
    // (The depthwise kernel takes static shapes only.) Relaid out only where
    // the depthwise kernel takes the convolution either way: never moved
    // from a family that takes it as it is.
    ConvProblem relaidOut = ConvProblem::fromConv(conv);
    if (!takesDepthwiseKernel(relaidOut, target))
      return rewriter.notifyMatchFailure(conv, "not the depthwise kernel's");
    relaidOut.filterLayout = FilterLayout::qrscf;
    if (!takesDepthwiseKernel(relaidOut, target))
      return rewriter.notifyMatchFailure(conv, "not the depthwise kernel's "
                                               "in QRSCF");
    transposeFilter(rewriter, conv, FilterLayout::qrscf);
    return success();
  }

  Target target;
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
    patterns.add<RelayoutQrscfFilter, PadChannelsForTma>(patterns.getContext());
  patterns.add<RelayoutFilterForDepthwise>(patterns.getContext(), target);
}
