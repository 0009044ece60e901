//===- FoldUpsample.cpp - conv3d-fold-upsample ----------------------------===//
//
// Nearest-neighbour upsampling folded into the convolution that reads it.
// Along an axis repeated twice, a convolution with window K and padding
// (lo, hi), lo and hi at most K - 1, unit stride and dilation, computes
//   y[o] = sum_k w[k] x[floor((o + k - lo) / 2)],
// so output o sees input i through the two taps K - 1 - t and K - t, with
// t = o - 2i + K - 1 - lo: it is the data gradient (the transposed
// convolution) of a stride-2 forward convolution with window K + 1 and
// padding (K - 1 - lo, K - 1 - hi) whose tap t is the sum of those two
// taps. An axis that is not upsampled is the stride-1 data gradient of the
// rotated window, with the same padding rule. conv3d-lower-conv-gradients
// then computes the data gradient by stride phase, dense convolutions of
// the low-resolution tensor: the upsampled tensor is never formed, and an
// output reads ceil((K + 1) / 2) taps per upsampled axis instead of K.
//
//===----------------------------------------------------------------------===//

#include "conv3d/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <optional>

namespace mlir::conv3d {
#define GEN_PASS_DEF_CONV3DFOLDUPSAMPLE
#include "conv3d/Transforms/Passes.h.inc"
} // namespace mlir::conv3d

using namespace mlir;
using namespace mlir::conv3d;

namespace {

/// An NDHWC tensor `source` repeated `scales` (1 or 2) times along D, H, W.
struct NearestUpsample {
  Value source;
  std::array<int64_t, 3> scales;
};

/// `value` as a nearest-neighbour upsampling: a linalg.generic on static
/// rank-5 tensors, all loops parallel, that yields its only input, with an
/// identity output map and the input map
/// (n, d, h, w, c) -> (n, d floordiv sd, h floordiv sh, w floordiv sw, c),
/// each s 1 or 2 and one of them 2, the output sizes s times the input's.
std::optional<NearestUpsample> matchNearestUpsample(Value value) {
  auto generic = value.getDefiningOp<linalg::GenericOp>();
  if (!generic || generic.getNumDpsInputs() != 1 ||
      generic.getNumDpsInits() != 1 || !generic.hasPureTensorSemantics() ||
      generic.getNumLoops() != 5 ||
      generic.getNumParallelLoops() != generic.getNumLoops())
    return std::nullopt;
  Block &body = generic.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  if (!llvm::hasSingleElement(body) || yield.getNumOperands() != 1 ||
      yield.getOperand(0) != body.getArgument(0))
    return std::nullopt;
  SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
  AffineMap in = maps[0];
  if (!maps[1].isIdentity() || in.getNumResults() != 5 ||
      in.getNumSymbols() != 0)
    return std::nullopt;
  MLIRContext *ctx = generic.getContext();
  auto dim = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  if (in.getResult(0) != dim(0) || in.getResult(4) != dim(4))
    return std::nullopt;
  NearestUpsample match{generic.getDpsInputOperand(0)->get(), {1, 1, 1}};
  for (unsigned axis = 0; axis < 3; ++axis) {
    AffineExpr expr = in.getResult(axis + 1);
    if (expr == dim(axis + 1).floorDiv(2))
      match.scales[axis] = 2;
    else if (expr != dim(axis + 1))
      return std::nullopt;
  }
  if (llvm::all_of(match.scales, [](int64_t s) { return s == 1; }))
    return std::nullopt;
  auto sourceType = dyn_cast<RankedTensorType>(match.source.getType());
  auto resultType = cast<RankedTensorType>(value.getType());
  if (!sourceType || !sourceType.hasStaticShape() ||
      !resultType.hasStaticShape() ||
      sourceType.getElementType() != resultType.getElementType())
    return std::nullopt;
  for (unsigned i = 0; i < 5; ++i) {
    int64_t scale = i == 0 || i == 4 ? 1 : match.scales[i - 1];
    if (resultType.getDimSize(i) != scale * sourceType.getDimSize(i))
      return std::nullopt;
  }
  return match;
}

/// The forward filter of the data gradient equal to `filter`'s convolution
/// of the upsampled input, in the filter's layout with the roles of C and F
/// exchanged (QRSCF: window x F x C; FQRSC: C x window x F), so that a
/// K-major filter stays K-major for the sm90 kernel. Tap t along an upsampled
/// axis is w[K-1-t] + w[K-t] (read from the filter zero-padded by one tap on
/// each side of that axis, so every read is in bounds), along another axis
/// w[K-1-t]. The taps are summed in f32 and rounded once to the filter's
/// element type.
Value foldedFilter(OpBuilder &b, Location loc, Value filter,
                   FilterLayout layout, const ConvGeometry &g,
                   ArrayRef<int64_t> scales) {
  MLIRContext *ctx = b.getContext();
  auto filterType = cast<RankedTensorType>(filter.getType());
  Type elem = filterType.getElementType();
  // The filter's spatial dimensions: QRSCF 0-2, FQRSC 1-3.
  unsigned first = layout == FilterLayout::qrscf ? 0 : 1;
  SmallVector<OpFoldResult> low(5, b.getIndexAttr(0)),
      high(5, b.getIndexAttr(0));
  SmallVector<int64_t> paddedShape(filterType.getShape());
  for (unsigned axis = 0; axis < 3; ++axis) {
    if (scales[axis] != 2)
      continue;
    low[first + axis] = high[first + axis] = b.getIndexAttr(1);
    paddedShape[first + axis] += 2;
  }
  Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(elem));
  Value padded =
      tensor::PadOp::create(b, loc, RankedTensorType::get(paddedShape, elem),
                            filter, low, high, zero);

  SmallVector<int64_t> window;
  for (unsigned axis = 0; axis < 3; ++axis)
    window.push_back(g.window[axis] + (scales[axis] == 2 ? 1 : 0));
  SmallVector<int64_t> shape =
      layout == FilterLayout::qrscf
          ? SmallVector<int64_t>{window[0], window[1], window[2], g.filters,
                                 g.channels}
          : SmallVector<int64_t>{g.channels, window[0], window[1], window[2],
                                 g.filters};
  Value init = tensor::EmptyOp::create(b, loc, shape, elem);

  // One input per combination of the two taps along the upsampled axes.
  SmallVector<AffineExpr> d;
  for (unsigned i = 0; i < 5; ++i)
    d.push_back(getAffineDimExpr(i, ctx));
  unsigned upsampled = llvm::count(scales, 2);
  SmallVector<AffineMap> maps;
  // The output's window dims and its F (of the upsampled convolution) and
  // C dims: QRSCF (t0, t1, t2, f, c), FQRSC (c, t0, t1, t2, f).
  bool qrscf = layout == FilterLayout::qrscf;
  unsigned outFirst = qrscf ? 0 : 1;
  AffineExpr outF = qrscf ? d[3] : d[4], outC = qrscf ? d[4] : d[0];
  for (unsigned combo = 0; combo < (1u << upsampled); ++combo) {
    SmallVector<AffineExpr> tap;
    unsigned bit = 0;
    for (unsigned axis = 0; axis < 3; ++axis) {
      int64_t k = g.window[axis];
      AffineExpr t = d[outFirst + axis];
      // Padded index K - t (+1 for the second tap) is w[K-1-t] (w[K-t]).
      tap.push_back(scales[axis] == 2 ? -t + (k + ((combo >> bit++) & 1))
                                      : -t + (k - 1));
    }
    // Read the filter at [t, c, f] (QRSCF) or [f, t, c] (FQRSC).
    maps.push_back(AffineMap::get(
        5, 0,
        qrscf ? SmallVector<AffineExpr>{tap[0], tap[1], tap[2], outC, outF}
              : SmallVector<AffineExpr>{outF, tap[0], tap[1], tap[2], outC},
        ctx));
  }
  maps.push_back(AffineMap::getMultiDimIdentityMap(5, ctx));
  SmallVector<Value> inputs(maps.size() - 1, padded);
  SmallVector<utils::IteratorType> iterators(5, utils::IteratorType::parallel);
  Type f32 = b.getF32Type();
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType()}, inputs, ValueRange{init}, maps,
      iterators, [&](OpBuilder &nb, Location nloc, ValueRange args) {
        auto widen = [&](Value v) -> Value {
          return elem == f32 ? v : arith::ExtFOp::create(nb, nloc, f32, v);
        };
        Value sum = widen(args[0]);
        for (Value arg : args.drop_front().drop_back())
          sum = arith::AddFOp::create(nb, nloc, sum, widen(arg));
        if (elem != f32)
          sum = arith::TruncFOp::create(nb, nloc, elem, sum);
        linalg::YieldOp::create(nb, nloc, sum);
      });
  return generic.getResult(0);
}

struct FoldNearestUpsampleIntoConv : OpRewritePattern<ConvOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ConvOp op,
                                PatternRewriter &rewriter) const override {
    if (!isa<RankedTensorType>(op.getInit().getType()) ||
        op->getNumResults() != 1)
      return rewriter.notifyMatchFailure(op, "not on tensors");
    // The data gradient has the geometry and nothing else: the clauses stay
    // on convolutions of the upsampled tensor.
    if (op.hasEpilogue() || op.hasHistoryOrPrologue() || op.getInputQuant() ||
        op.hasPackedFilter() || op.getConfig() || op.getGroups() != 1)
      return rewriter.notifyMatchFailure(op, "has clauses beyond geometry");
    std::optional<NearestUpsample> up = matchNearestUpsample(op.getInput());
    if (!up)
      return rewriter.notifyMatchFailure(op, "input is not an upsampling");
    // conv3d.conv_backward_data's types: the operands' the same, outs f32
    // or theirs.
    auto filterType = dyn_cast<RankedTensorType>(op.getFilter().getType());
    auto initType = cast<RankedTensorType>(op.getInit().getType());
    Type elem = getElementTypeOrSelf(up->source.getType());
    if (!filterType || !filterType.hasStaticShape() ||
        !initType.hasStaticShape() || filterType.getElementType() != elem ||
        (initType.getElementType() != elem &&
         !initType.getElementType().isF32()))
      return rewriter.notifyMatchFailure(op, "types");
    ConvGeometry g = op.getGeometry();
    SmallVector<int64_t> padding;
    for (unsigned axis = 0; axis < 3; ++axis) {
      int64_t k = g.window[axis];
      if (g.strides[axis] != 1 || g.dilations[axis] != 1)
        return rewriter.notifyMatchFailure(op, "not unit stride and dilation");
      int64_t lo = g.padLow[axis], hi = g.padHigh[axis];
      if (lo > k - 1 || hi > k - 1)
        return rewriter.notifyMatchFailure(op, "padding beyond the window");
      padding.append({k - 1 - lo, k - 1 - hi});
    }
    Location loc = op.getLoc();
    Value filter = foldedFilter(rewriter, loc, op.getFilter(),
                                op.getFilterLayout(), g, up->scales);
    auto dgrad = ConvBackwardDataOp::create(
        rewriter, loc, op->getResult(0).getType(), up->source, filter,
        /*pre_activation=*/Value(), op.getInit(), ArrayRef<int64_t>(up->scales),
        ArrayRef<int64_t>{1, 1, 1}, padding, op.getFilterLayout(),
        op.getOverwrite());
    rewriter.replaceOp(op, dgrad.getResult());
    return success();
  }
};

struct FoldUpsamplePass
    : mlir::conv3d::impl::Conv3dFoldUpsampleBase<FoldUpsamplePass> {
  using Base::Base;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateFoldUpsamplePatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void mlir::conv3d::populateFoldUpsamplePatterns(RewritePatternSet &patterns) {
  patterns.add<FoldNearestUpsampleIntoConv>(patterns.getContext());
}
