//===- LowerConvGradients.cpp - conv3d-lower-conv-gradients --------------===//
//
// The gradients of a convolution as forward convolutions, so that the
// forward kernels of every target (tuned, with their own canImplement and
// fallbacks) compute them: the data gradient by stride phase, each phase a
// dense stride-1 convolution of the output gradient with the phase's
// rotated, C <-> F transposed taps (no multiplication by the zeros that a
// zero-inserted formulation reads), the weight gradient as one forward
// convolution whose window is the output gradient. The geometry is
// GradientGeometry's; this file only builds the tensor ops.
//
//===----------------------------------------------------------------------===//

#include "conv3d/Geometry/GradientGeometry.h"
#include "conv3d/IR/IndexMath.h"
#include "conv3d/Transforms/AttrNames.h"
#include "conv3d/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::conv3d {
#define GEN_PASS_DEF_CONV3DLOWERCONVGRADIENTS
#include "conv3d/Transforms/Passes.h.inc"
} // namespace mlir::conv3d

using namespace mlir;
using namespace mlir::conv3d;

namespace {

SmallVector<OpFoldResult> indexAttrs(OpBuilder &b, ArrayRef<int64_t> values) {
  return llvm::map_to_vector(
      values, [&](int64_t v) -> OpFoldResult { return b.getIndexAttr(v); });
}

/// A zero-filled tensor of `type`'s shape (the fill's destination `init`).
Value zeroFill(OpBuilder &b, Location loc, Value init) {
  Type elem = getElementTypeOrSelf(init.getType());
  Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(elem));
  return linalg::FillOp::create(b, loc, zero, init).getResult(0);
}

Value transpose(OpBuilder &b, Location loc, Value value,
                ArrayRef<int64_t> permutation, Value init = Value()) {
  auto type = cast<RankedTensorType>(value.getType());
  if (!init) {
    SmallVector<int64_t> shape;
    for (int64_t dim : permutation)
      shape.push_back(type.getDimSize(dim));
    init = tensor::EmptyOp::create(b, loc, shape, type.getElementType());
  }
  return linalg::TransposeOp::create(b, loc, value, init, permutation)
      .getResult()[0];
}

/// The forward convolution `conv3d.conv ins(input, filter) outs(init)` of
/// `geometry` (its strides, dilations and padding).
Value forwardConv(OpBuilder &b, Location loc, Value input, Value filter,
                  Value init, const ConvGeometry &geometry, FilterLayout layout,
                  bool overwrite) {
  MLIRContext *ctx = b.getContext();
  auto conv = ConvOp::create(
      b, loc, TypeRange{init.getType()}, input, filter, /*bias=*/Value(),
      /*residual=*/Value(), /*amax=*/Value(), init,
      b.getDenseI64ArrayAttr(geometry.strides),
      b.getDenseI64ArrayAttr(geometry.dilations),
      b.getDenseI64ArrayAttr(geometry.padding()),
      FilterLayoutAttr::get(ctx, layout),
      ActivationAttr::get(ctx, Activation::none), NVFP4Attr(),
      overwrite ? b.getUnitAttr() : UnitAttr(), IGemmConfigAttr());
  return conv.getResult()[0];
}

/// The filter of one dgrad phase, in the forward filter's layout with the
/// roles of C and F exchanged: tap k of the phase along each axis is the
/// forward's tap firstTap + (taps-1-k)*tapStep (rotated), gathered by a
/// linalg.generic whose input map runs backwards through the taps.
Value phaseFilter(OpBuilder &b, Location loc, Value filter, FilterLayout layout,
                  const ConvGeometry &forward, const DgradPhase &phase) {
  MLIRContext *ctx = b.getContext();
  Type elem = getElementTypeOrSelf(filter.getType());
  ConvGeometry sub = dgradPhaseGeometry(forward, phase);
  std::array<int64_t, 5> shape = sub.filterShape(layout);
  Value init = tensor::EmptyOp::create(b, loc, shape, elem);
  auto tap = [&](unsigned axis, AffineExpr k) {
    const DgradAxisPhase &p = phase.axes[axis];
    return p.forwardTap(0) - k * p.tapStep;
  };
  SmallVector<AffineExpr> d;
  for (unsigned i = 0; i < 5; ++i)
    d.push_back(getAffineDimExpr(i, ctx));
  // Output dims: QRSCF (k0, k1, k2, f, c) reads [t0, t1, t2, c, f];
  // FQRSC (c, k0, k1, k2, f) reads [f, t0, t1, t2, c].
  SmallVector<AffineExpr> read =
      layout == FilterLayout::qrscf
          ? SmallVector<AffineExpr>{tap(0, d[0]), tap(1, d[1]), tap(2, d[2]),
                                    d[4], d[3]}
          : SmallVector<AffineExpr>{d[4], tap(0, d[1]), tap(1, d[2]),
                                    tap(2, d[3]), d[0]};
  SmallVector<AffineMap> maps = {AffineMap::get(5, 0, read, ctx),
                                 AffineMap::getMultiDimIdentityMap(5, ctx)};
  SmallVector<utils::IteratorType> iterators(5, utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType()}, ValueRange{filter}, ValueRange{init},
      maps, iterators, [](OpBuilder &nb, Location nloc, ValueRange args) {
        linalg::YieldOp::create(nb, nloc, args[0]);
      });
  return generic.getResult(0);
}

struct DgradToPhaseConvolutions : OpRewritePattern<ConvBackwardDataOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ConvBackwardDataOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    ConvGeometry forward = op.getGeometry();
    FilterLayout layout = op.getFilterLayout();
    auto initType = cast<RankedTensorType>(op.getInit().getType());
    DgradPhases phases = dgradPhases(forward);
    bool overwrite = op.getOverwrite();
    // Every position lies in one phase; phases no tap reaches are zero.
    Value result = op.getInit();
    if (overwrite && !phases.complete)
      result = zeroFill(rewriter, loc, result);
    for (const DgradPhase &phase : phases.phases) {
      ConvGeometry sub = dgradPhaseGeometry(forward, phase);
      // The output-gradient rows the phase reads.
      Value gradOutput = op.getGradOutput();
      SmallVector<int64_t> sliceOffsets = {0, phase.axes[0].sliceBegin,
                                           phase.axes[1].sliceBegin,
                                           phase.axes[2].sliceBegin, 0};
      std::array<int64_t, 5> sliceShape = sub.inputShape();
      if (ArrayRef<int64_t>(sliceShape) !=
          cast<RankedTensorType>(gradOutput.getType()).getShape())
        gradOutput = tensor::ExtractSliceOp::create(
            rewriter, loc, gradOutput, indexAttrs(rewriter, sliceOffsets),
            indexAttrs(rewriter, sliceShape),
            indexAttrs(rewriter, {1, 1, 1, 1, 1}));
      Value filter =
          phaseFilter(rewriter, loc, op.getFilter(), layout, forward, phase);
      // The phase's positions of the input gradient.
      SmallVector<int64_t> offsets = {
          0, phase.axes[0].phase, phase.axes[1].phase, phase.axes[2].phase, 0};
      std::array<int64_t, 5> blockShape = sub.outputShape();
      SmallVector<int64_t> strides = {1, forward.strides[0], forward.strides[1],
                                      forward.strides[2], 1};
      // With strides, the phase's positions are a strided view of the
      // input gradient; its convolution writes a dense block of its own
      // (bufferization.alloc_tensor, which empty-tensor elimination leaves
      // alone: kernels that store tiles by TMA need a dense output), copied
      // into place by the insert_slice. With stride 1 the block is the
      // whole gradient and the convolution writes it directly.
      bool strided = llvm::any_of(forward.strides,
                                  [](int64_t stride) { return stride > 1; });
      auto blockType =
          RankedTensorType::get(blockShape, initType.getElementType());
      Value block;
      if (overwrite && !strided)
        block = tensor::EmptyOp::create(rewriter, loc, blockShape,
                                        initType.getElementType());
      else if (overwrite)
        block = bufferization::AllocTensorOp::create(rewriter, loc, blockType,
                                                     ValueRange{});
      else {
        block = tensor::ExtractSliceOp::create(
            rewriter, loc, result, indexAttrs(rewriter, offsets),
            indexAttrs(rewriter, blockShape), indexAttrs(rewriter, strides));
        if (strided)
          block = bufferization::AllocTensorOp::create(
              rewriter, loc, blockType, ValueRange{}, /*copy=*/block);
      }
      Value computed = forwardConv(rewriter, loc, gradOutput, filter, block,
                                   sub, layout, overwrite);
      result = tensor::InsertSliceOp::create(
          rewriter, loc, computed, result, indexAttrs(rewriter, offsets),
          indexAttrs(rewriter, blockShape), indexAttrs(rewriter, strides));
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// A tensor of `shape` whose element at `idx` is `source`[at(idx)] where
/// `valid(idx)` holds and zero elsewhere: one linalg.generic that reads
/// `source` by tensor.extract (at a clamped index, so no read leaves it),
/// so that padding, gathering and transposing are one pass over the result
/// (a tensor.pad would be a fill of its whole buffer and a copy first).
///
/// `transposeDims` (a, b): the dimension along which its reads are
/// contiguous and the output's innermost, for GPU targets' shared-memory
/// staging (kGpuTransposeDimsAttrName).
Value gatherOrZero(OpBuilder &b, Location loc, Value source,
                   ArrayRef<int64_t> shape,
                   std::array<int64_t, 2> transposeDims,
                   function_ref<std::pair<SmallVector<Value>, Value>(
                       OpBuilder &, Location, ArrayRef<Value>)>
                       at) {
  Type elem = getElementTypeOrSelf(source.getType());
  Value init = tensor::EmptyOp::create(b, loc, shape, elem);
  SmallVector<AffineMap> maps = {
      AffineMap::getMultiDimIdentityMap(shape.size(), b.getContext())};
  SmallVector<utils::IteratorType> iterators(shape.size(),
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType()}, ValueRange{}, ValueRange{init}, maps,
      iterators, [&](OpBuilder &nb, Location nloc, ValueRange) {
        SmallVector<Value> idx;
        for (unsigned d = 0; d < shape.size(); ++d)
          idx.push_back(linalg::IndexOp::create(nb, nloc, d));
        auto [indices, valid] = at(nb, nloc, idx);
        Value value = tensor::ExtractOp::create(nb, nloc, source, indices);
        if (valid) {
          Value zero =
              arith::ConstantOp::create(nb, nloc, nb.getZeroAttr(elem));
          value = arith::SelectOp::create(nb, nloc, valid, value, zero);
        }
        linalg::YieldOp::create(nb, nloc, value);
      });
  generic->setAttr(kGpuTransposeDimsAttrName,
                   b.getDenseI64ArrayAttr(transposeDims));
  return generic.getResult(0);
}

/// Index arithmetic for gatherOrZero's bodies: IRIndexMath's, with
/// comparisons; a null condition means "always".
struct GatherMath : IRIndexMath {
  Value less(Value x, int64_t v) const {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, x,
                                 constant(v));
  }
  Value atLeast(Value x, int64_t v) const {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, x,
                                 constant(v));
  }
  Value both(Value x, Value y) const {
    return arith::AndIOp::create(b, loc, x, y);
  }
  Value select(Value c, Value x, int64_t otherwise) const {
    return c ? arith::SelectOp::create(b, loc, c, x, constant(otherwise))
                   .getResult()
             : x;
  }
};

/// The forward input of a weight gradient as its forward convolution reads
/// it (GradientGeometry's WgradForward): x'[0, d, h, s*C + c, wo*N + n] =
/// x[n, d, h, wo*stride + s*dil - pad, c] for the depth and height rows the
/// taps read, zero where the width tap reads padding and in the channels
/// past Wo*N (GradientGeometry pads them to a multiple of 8).
Value widthTapsAsColumns(OpBuilder &b, Location loc, Value input,
                         const ConvGeometry &forward,
                         const WgradForward &wgrad) {
  int64_t n = forward.batch, c = forward.channels;
  int64_t width = forward.inputSize[kWidth];
  int64_t taps = forward.window[kWidth];
  int64_t used = forward.outputSize(kWidth) * n;
  int64_t channels = wgrad.geometry.channels;
  int64_t d = wgrad.inputExtent[0], h = wgrad.inputExtent[1];
  Value gathered = gatherOrZero(
      b, loc, input, {d, h, taps, c, channels}, /*transposeDims=*/{3, 4},
      [&](OpBuilder &nb, Location nloc, ArrayRef<Value> idx) {
        // idx = (d, h, s, c, k), k = wo * N + n.
        GatherMath m{{nb, nloc}};
        Value column =
            m.add(m.add(m.mul(m.div(idx[4], n), forward.strides[kWidth]),
                        m.mul(idx[2], forward.dilations[kWidth])),
                  m.constant(-forward.padLow[kWidth]));
        Value valid = m.both(m.atLeast(column, 0), m.less(column, width));
        if (used != channels)
          valid = m.both(valid, m.less(idx[4], used));
        // k mod N is always a batch index; only the column is clamped.
        SmallVector<Value> at = {m.rem(idx[4], n), idx[0], idx[1],
                                 m.select(valid, column, 0), idx[3]};
        return std::make_pair(at, valid);
      });
  Value collapsed = tensor::CollapseShapeOp::create(
      b, loc, gathered, ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3}, {4}});
  return tensor::ExpandShapeOp::create(
      b, loc,
      RankedTensorType::get({1, d, h, taps * c, channels},
                            getElementTypeOrSelf(input.getType())),
      collapsed, ArrayRef<ReassociationIndices>{{0, 1}, {2}, {3}, {4}});
}

/// The output gradient as the weight gradient's FQRSC filter
/// F x Do x Ho x 1 x (Wo*N, zero-padded to the forward form's channels):
/// filter[f, do, ho, 0, wo*N + n] = dy[n, do, ho, wo, f]. The TMA kernels
/// read FQRSC filters, so no relayout or channel padding follows.
Value gradOutputAsFilter(OpBuilder &b, Location loc, Value gradOutput,
                         const ConvGeometry &forward,
                         const WgradForward &wgrad) {
  int64_t n = forward.batch, f = forward.filters;
  int64_t outD = forward.outputSize(kDepth), outH = forward.outputSize(kHeight);
  int64_t used = forward.outputSize(kWidth) * n;
  int64_t channels = wgrad.geometry.channels;
  Value filter = gatherOrZero(
      b, loc, gradOutput, {f, outD, outH, channels}, /*transposeDims=*/{0, 3},
      [&](OpBuilder &nb, Location nloc, ArrayRef<Value> idx) {
        // idx = (f, do, ho, k), k = wo * N + n.
        GatherMath m{{nb, nloc}};
        Value valid = used != channels ? m.less(idx[3], used) : Value();
        SmallVector<Value> at = {m.rem(idx[3], n), idx[1], idx[2],
                                 m.select(valid, m.div(idx[3], n), 0), idx[0]};
        return std::make_pair(at, valid);
      });
  return tensor::ExpandShapeOp::create(
      b, loc,
      RankedTensorType::get({f, outD, outH, 1, channels},
                            getElementTypeOrSelf(gradOutput.getType())),
      filter, ArrayRef<ReassociationIndices>{{0}, {1}, {2}, {3, 4}});
}

/// `value` (Q x R x S x C x F) as the weight gradient's forward convolution
/// result 1 x Q x R x (S*C) x F, or back: reshapes of contiguous dimensions.
Value qrscfAsForwardResult(OpBuilder &b, Location loc, Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  ArrayRef<int64_t> s = type.getShape();
  Value collapsed = tensor::CollapseShapeOp::create(
      b, loc, value, ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3}, {4}});
  return tensor::ExpandShapeOp::create(
      b, loc,
      RankedTensorType::get({1, s[0], s[1], s[2] * s[3], s[4]},
                            type.getElementType()),
      collapsed, ArrayRef<ReassociationIndices>{{0, 1}, {2}, {3}, {4}});
}

Value forwardResultAsQrscf(OpBuilder &b, Location loc, Value value,
                           int64_t taps) {
  auto type = cast<RankedTensorType>(value.getType());
  ArrayRef<int64_t> s = type.getShape();
  Value collapsed = tensor::CollapseShapeOp::create(
      b, loc, value, ArrayRef<ReassociationIndices>{{0, 1}, {2}, {3}, {4}});
  return tensor::ExpandShapeOp::create(
      b, loc,
      RankedTensorType::get({s[1], s[2], taps, s[3] / taps, s[4]},
                            type.getElementType()),
      collapsed, ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3}, {4}});
}

struct WgradToForwardConvolution : OpRewritePattern<ConvBackwardFilterOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ConvBackwardFilterOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    ConvGeometry forward = op.getGeometry();
    FilterLayout layout = op.getFilterLayout();
    WgradForward wgrad = wgradAsForward(forward);
    bool overwrite = op.getOverwrite();
    if (wgrad.empty) {
      // Every tap reads only padding along some axis.
      rewriter.replaceOp(op, overwrite ? zeroFill(rewriter, loc, op.getInit())
                                       : op.getInit());
      return success();
    }
    Value input =
        widthTapsAsColumns(rewriter, loc, op.getInput(), forward, wgrad);
    Value filter =
        gradOutputAsFilter(rewriter, loc, op.getGradOutput(), forward, wgrad);
    // The result is the QRSCF gradient reshaped: a QRSCF `outs` is the
    // convolution's own (no copy); an FQRSC one is transposed in (when
    // accumulating) and the result transposed back into it.
    int64_t taps = forward.window[kWidth];
    Value init = op.getInit();
    auto initType = cast<RankedTensorType>(init.getType());
    if (layout == FilterLayout::qrscf) {
      Value computed =
          forwardConv(rewriter, loc, input, filter,
                      qrscfAsForwardResult(rewriter, loc, init), wgrad.geometry,
                      FilterLayout::fqrsc, overwrite);
      rewriter.replaceOp(op,
                         forwardResultAsQrscf(rewriter, loc, computed, taps));
      return success();
    }
    Value qrscfInit =
        overwrite ? tensor::EmptyOp::create(rewriter, loc,
                                            wgrad.geometry.outputShape(),
                                            initType.getElementType())
                        .getResult()
                  : qrscfAsForwardResult(
                        rewriter, loc,
                        transpose(rewriter, loc, init, {1, 2, 3, 4, 0}));
    Value computed =
        forwardConv(rewriter, loc, input, filter, qrscfInit, wgrad.geometry,
                    FilterLayout::fqrsc, overwrite);
    rewriter.replaceOp(
        op, transpose(rewriter, loc,
                      forwardResultAsQrscf(rewriter, loc, computed, taps),
                      {4, 0, 1, 2, 3}, init));
    return success();
  }
};

struct LowerConvGradientsPass
    : mlir::conv3d::impl::Conv3dLowerConvGradientsBase<LowerConvGradientsPass> {
  using Base::Base;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateLowerConvGradientsPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void mlir::conv3d::populateLowerConvGradientsPatterns(
    RewritePatternSet &patterns) {
  patterns.add<DgradToPhaseConvolutions, WgradToForwardConvolution>(
      patterns.getContext());
}
