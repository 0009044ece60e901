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
#include "conv3d/IR/ScalarEmitters.h"
#include "conv3d/Transforms/AttrNames.h"
#include "conv3d/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/STLExtras.h"

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
/// `geometry` (its strides, dilations and padding), with the epilogue
/// `activation` and its `residual` (a derivative epilogue's pre-activation)
/// where given.
Value forwardConv(OpBuilder &b, Location loc, Value input, Value filter,
                  Value init, const ConvGeometry &geometry, FilterLayout layout,
                  bool overwrite, Value residual = Value(),
                  Activation activation = Activation::none) {
  MLIRContext *ctx = b.getContext();
  auto conv = ConvOp::create(
      b, loc, TypeRange{init.getType()}, input, filter, /*bias=*/Value(),
      residual, /*amax=*/Value(), init,
      b.getDenseI64ArrayAttr(geometry.strides),
      b.getDenseI64ArrayAttr(geometry.dilations),
      b.getDenseI64ArrayAttr(geometry.padding()),
      FilterLayoutAttr::get(ctx, layout), ActivationAttr::get(ctx, activation),
      NVFP4Attr(), overwrite ? b.getUnitAttr() : UnitAttr(), IGemmConfigAttr());
  return conv.getResult()[0];
}

/// `init * act'(preActivation)` elementwise, in f32, rounded to init's
/// type: a non-overwriting data gradient's positions that no stride phase
/// reaches (their gradient is init's alone), or the whole plain gradient
/// where the derivative is not fused.
Value scaleByDerivative(OpBuilder &b, Location loc, Value init,
                        Value preActivation, Activation derivative) {
  // init is the generic's `outs` (read and updated in place), not an input
  // beside an empty destination: bufferization then sees the phases' later
  // reads of init and copies it, where an eliminated empty destination
  // could alias init's buffer.
  auto type = cast<RankedTensorType>(init.getType());
  Type elem = type.getElementType();
  SmallVector<AffineMap> maps(
      2, AffineMap::getMultiDimIdentityMap(type.getRank(), b.getContext()));
  SmallVector<utils::IteratorType> iterators(type.getRank(),
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{type}, ValueRange{preActivation}, ValueRange{init},
      maps, iterators, [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value acc = emitFloatCast(nb, nloc, args[1], nb.getF32Type());
        linalg::YieldOp::create(nb, nloc,
                                emitEpilogue(nb, nloc, acc, /*bias=*/Value(),
                                             args[0], derivative, elem));
      });
  return generic.getResult(0);
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

/// Whether a data gradient through an activation applies the derivative in
/// its phases' epilogues (else in one element-wise pass after them).
bool fusesDerivative(ConvBackwardDataOp op, Target target,
                     DgradActivationPolicy policy) {
  if (policy != DgradActivationPolicy::Auto)
    return policy == DgradActivationPolicy::Fused;
  if (target == Target::cpu)
    return true;
  // A residual epilogue is the staged one. Where the plain phase would
  // store its tiles by TMA, the plain gradient and one element-wise pass
  // (16 bytes a thread) ran faster on all 8 of the suite's unstrided shapes
  // (H200), the fused epilogue on both strided ones (its phases write their
  // strided positions in place, where the plain ones write blocks and copy
  // them).
  Type outElem = getElementTypeOrSelf(op.getInit().getType());
  ConvGeometry forward = op.getGeometry();
  bool tmaStored = op.getOverwrite() && (outElem.isBF16() || outElem.isF16()) &&
                   forward.channels % 8 == 0;
  bool strided =
      llvm::any_of(forward.strides, [](int64_t stride) { return stride > 1; });
  return !tmaStored || strided;
}

struct DgradToPhaseConvolutions : OpRewritePattern<ConvBackwardDataOp> {
  DgradToPhaseConvolutions(MLIRContext *context, Target target,
                           DgradActivationPolicy policy)
      : OpRewritePattern(context), target(target), policy(policy) {}

  LogicalResult matchAndRewrite(ConvBackwardDataOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    ConvGeometry forward = op.getGeometry();
    FilterLayout layout = op.getFilterLayout();
    auto initType = cast<RankedTensorType>(op.getInit().getType());
    DgradPhases phases = dgradPhases(forward);
    bool overwrite = op.getOverwrite();
    // The chain rule's factor act'(z), applied by each phase's epilogue at
    // the phase's positions of the pre-activation z, or after them.
    Activation derivative = derivativeOf(op.getActivation());
    Value separatePre;
    Value preActivation = op.getPreActivation();
    if (preActivation && !fusesDerivative(op, target, policy))
      std::swap(separatePre, preActivation);
    // Every position lies in one phase; phases no tap reaches are zero (and
    // stay zero times the factor) or, accumulating, init times the factor.
    Value result = op.getInit();
    bool scaled = !overwrite && preActivation && !phases.complete;
    if (overwrite && !phases.complete)
      result = zeroFill(rewriter, loc, result);
    else if (scaled)
      result =
          scaleByDerivative(rewriter, loc, result, preActivation, derivative);
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
      // Through an activation the epilogue reads a residual, so no kernel
      // stores by TMA: the phase writes its strided positions in place.
      bool strided = llvm::any_of(forward.strides,
                                  [](int64_t stride) { return stride > 1; });
      bool inPlace = strided && preActivation;
      auto blockType =
          RankedTensorType::get(blockShape, initType.getElementType());
      // The phase's positions of the accumulator it starts from: init's
      // (phases are disjoint, so `result` still holds them, unless it is
      // init already scaled by the derivative).
      auto positions = [&]() -> Value {
        return tensor::ExtractSliceOp::create(
            rewriter, loc, scaled ? op.getInit() : result,
            indexAttrs(rewriter, offsets), indexAttrs(rewriter, blockShape),
            indexAttrs(rewriter, strides));
      };
      Value block;
      if (overwrite && !strided)
        block = tensor::EmptyOp::create(rewriter, loc, blockShape,
                                        initType.getElementType());
      else if (overwrite && !inPlace)
        block = bufferization::AllocTensorOp::create(rewriter, loc, blockType,
                                                     ValueRange{});
      else if (inPlace || !strided)
        block = positions();
      else
        block = bufferization::AllocTensorOp::create(
            rewriter, loc, blockType, ValueRange{}, /*copy=*/positions());
      // The pre-activation at the phase's positions: a strided view, read
      // in place (every lowering takes a residual with static strides; the
      // channels stay contiguous, so the GPU epilogues' vector loads too).
      Value phasePre = preActivation;
      if (preActivation && strided)
        phasePre = tensor::ExtractSliceOp::create(
            rewriter, loc, preActivation, indexAttrs(rewriter, offsets),
            indexAttrs(rewriter, blockShape), indexAttrs(rewriter, strides));
      Value computed = forwardConv(rewriter, loc, gradOutput, filter, block,
                                   sub, layout, overwrite, phasePre,
                                   phasePre ? derivative : Activation::none);
      result = tensor::InsertSliceOp::create(
          rewriter, loc, computed, result, indexAttrs(rewriter, offsets),
          indexAttrs(rewriter, blockShape), indexAttrs(rewriter, strides));
    }
    if (separatePre)
      result =
          scaleByDerivative(rewriter, loc, result, separatePre, derivative);
    rewriter.replaceOp(op, result);
    return success();
  }

private:
  Target target;
  DgradActivationPolicy policy;
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
/// it (GradientGeometry's WgradForward). Width fold:
/// x'[0, d, h, s*C + c, wo*N + n] = x[n, d, h, wo*stride + s*dil - pad, c]
/// for the depth and height rows the taps read. Height-width fold:
/// x'[0, d, 0, (r*S + s)*C + c, (ho*Wo + wo)*N + n] =
/// x[n, d, ho*stride + r*dil - pad, wo*stride + s*dil - pad, c]. Zero where a
/// tap reads padding and in the channels past the positions
/// (GradientGeometry pads them to a multiple of 8).
Value gatherInputColumns(OpBuilder &b, Location loc, Value input,
                         const ConvGeometry &forward,
                         const WgradForward &wgrad) {
  bool foldHeight = wgrad.fold == WgradFold::HeightWidth;
  int64_t n = forward.batch, c = forward.channels;
  int64_t outW = forward.outputSize(kWidth);
  int64_t used = outW * n * (foldHeight ? forward.outputSize(kHeight) : 1);
  int64_t channels = wgrad.geometry.channels;
  int64_t d = wgrad.inputExtent[0];
  // The second dimension: input rows (width fold) or height taps.
  int64_t rows = foldHeight ? forward.window[kHeight] : wgrad.inputExtent[1];
  int64_t taps = forward.window[kWidth];
  // Where a tap reads along `axis` for output position `out`, and whether
  // that is inside the input.
  auto tapRead = [&](GatherMath &m, unsigned axis, Value out, Value tap) {
    Value at = m.add(m.add(m.mul(out, forward.strides[axis]),
                           m.mul(tap, forward.dilations[axis])),
                     m.constant(-forward.padLow[axis]));
    return std::make_pair(
        at, m.both(m.atLeast(at, 0), m.less(at, forward.inputSize[axis])));
  };
  Value gathered = gatherOrZero(
      b, loc, input, {d, rows, taps, c, channels}, /*transposeDims=*/{3, 4},
      [&](OpBuilder &nb, Location nloc, ArrayRef<Value> idx) {
        // idx = (d, h or r, s, c, k); k = (ho *) wo * N + n.
        GatherMath m{{nb, nloc}};
        Value position = m.div(idx[4], n);
        // The width fold's positions are output columns (those past them
        // are the padding's, masked).
        auto [column, valid] = tapRead(
            m, kWidth, foldHeight ? m.rem(position, outW) : position, idx[2]);
        Value row = idx[1];
        if (foldHeight) {
          auto [tapRow, rowValid] =
              tapRead(m, kHeight, m.div(position, outW), idx[1]);
          row = tapRow;
          valid = m.both(valid, rowValid);
        }
        if (used != channels)
          valid = m.both(valid, m.less(idx[4], used));
        // k mod N is always a batch index; only what a tap reads is
        // clamped.
        SmallVector<Value> at = {m.rem(idx[4], n), idx[0],
                                 foldHeight ? m.select(valid, row, 0) : row,
                                 m.select(valid, column, 0), idx[3]};
        return std::make_pair(at, valid);
      });
  // (d, rows, taps, c, k) -> 1 x d x H' x W' x k of the forward form.
  const ConvGeometry &g = wgrad.geometry;
  Value collapsed = tensor::CollapseShapeOp::create(
      b, loc, gathered, ArrayRef<ReassociationIndices>{{0}, {1, 2, 3}, {4}});
  return tensor::ExpandShapeOp::create(
      b, loc,
      RankedTensorType::get(
          {1, d, g.inputSize[kHeight], g.inputSize[kWidth], channels},
          getElementTypeOrSelf(input.getType())),
      collapsed, ArrayRef<ReassociationIndices>{{0, 1}, {2, 3}, {4}});
}

/// The output gradient as the weight gradient's FQRSC filter
/// F x Do x Ho x 1 x K (width fold; K: Wo*N zero-padded to the forward
/// form's channels), filter[f, do, ho, 0, wo*N + n] = dy[n, do, ho, wo, f],
/// or F x Do x 1 x 1 x K (height-width fold; K: Ho*Wo*N padded),
/// filter[f, do, 0, 0, (ho*Wo + wo)*N + n]. The TMA kernels read FQRSC
/// filters, so no relayout or channel padding follows.
Value gradOutputAsFilter(OpBuilder &b, Location loc, Value gradOutput,
                         const ConvGeometry &forward,
                         const WgradForward &wgrad) {
  bool foldHeight = wgrad.fold == WgradFold::HeightWidth;
  int64_t n = forward.batch, f = forward.filters;
  int64_t outD = forward.outputSize(kDepth), outH = forward.outputSize(kHeight);
  int64_t outW = forward.outputSize(kWidth);
  int64_t used = outW * n * (foldHeight ? outH : 1);
  int64_t channels = wgrad.geometry.channels;
  int64_t rows = wgrad.geometry.window[kHeight];
  Value filter = gatherOrZero(
      b, loc, gradOutput, {f, outD, rows, channels}, /*transposeDims=*/{0, 3},
      [&](OpBuilder &nb, Location nloc, ArrayRef<Value> idx) {
        // idx = (f, do, ho or 0, k), k = (ho *) wo * N + n.
        GatherMath m{{nb, nloc}};
        Value valid = used != channels ? m.less(idx[3], used) : Value();
        Value position = m.select(valid, m.div(idx[3], n), 0);
        Value row = foldHeight ? m.div(position, outW) : idx[2];
        Value column = foldHeight ? m.rem(position, outW) : position;
        SmallVector<Value> at = {m.rem(idx[3], n), idx[1], row, column, idx[0]};
        return std::make_pair(at, valid);
      });
  return tensor::ExpandShapeOp::create(
      b, loc,
      RankedTensorType::get({f, outD, rows, 1, channels},
                            getElementTypeOrSelf(gradOutput.getType())),
      filter, ArrayRef<ReassociationIndices>{{0}, {1}, {2}, {3, 4}});
}

/// `value` (Q x R x S x C x F) as the weight gradient's forward convolution
/// result 1 x Q x H' x W' x F (`shape`; H' x W' = R x S x C), or back:
/// reshapes of contiguous dimensions.
Value qrscfAsForwardResult(OpBuilder &b, Location loc, Value value,
                           ArrayRef<int64_t> shape) {
  auto type = cast<RankedTensorType>(value.getType());
  Value collapsed = tensor::CollapseShapeOp::create(
      b, loc, value, ArrayRef<ReassociationIndices>{{0}, {1, 2, 3}, {4}});
  return tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get(shape, type.getElementType()), collapsed,
      ArrayRef<ReassociationIndices>{{0, 1}, {2, 3}, {4}});
}

Value forwardResultAsQrscf(OpBuilder &b, Location loc, Value value,
                           const ConvGeometry &forward) {
  auto type = cast<RankedTensorType>(value.getType());
  Value collapsed = tensor::CollapseShapeOp::create(
      b, loc, value, ArrayRef<ReassociationIndices>{{0, 1}, {2, 3}, {4}});
  return tensor::ExpandShapeOp::create(
      b, loc,
      RankedTensorType::get(forward.filterShape(FilterLayout::qrscf),
                            type.getElementType()),
      collapsed, ArrayRef<ReassociationIndices>{{0}, {1, 2, 3}, {4}});
}

struct WgradToForwardConvolution : OpRewritePattern<ConvBackwardFilterOp> {
  WgradToForwardConvolution(MLIRContext *context, Target target,
                            WgradFoldPolicy policy)
      : OpRewritePattern(context), target(target), policy(policy) {}

  LogicalResult matchAndRewrite(ConvBackwardFilterOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    ConvGeometry forward = op.getGeometry();
    FilterLayout layout = op.getFilterLayout();
    WgradForward wgrad = wgradAsForward(
        forward, chooseWgradFold(op.getContext(), forward,
                                 getElementTypeOrSelf(op.getInput().getType()),
                                 target, policy));
    bool overwrite = op.getOverwrite();
    if (wgrad.empty) {
      // Every tap reads only padding along some axis.
      rewriter.replaceOp(op, overwrite ? zeroFill(rewriter, loc, op.getInit())
                                       : op.getInit());
      return success();
    }
    Value input =
        gatherInputColumns(rewriter, loc, op.getInput(), forward, wgrad);
    Value filter =
        gradOutputAsFilter(rewriter, loc, op.getGradOutput(), forward, wgrad);
    // The result is the QRSCF gradient reshaped: a QRSCF `outs` is the
    // convolution's own (no copy); an FQRSC one is transposed in (when
    // accumulating) and the result transposed back into it.
    std::array<int64_t, 5> resultShape = wgrad.geometry.outputShape();
    Value init = op.getInit();
    auto initType = cast<RankedTensorType>(init.getType());
    if (layout == FilterLayout::qrscf) {
      Value computed =
          forwardConv(rewriter, loc, input, filter,
                      qrscfAsForwardResult(rewriter, loc, init, resultShape),
                      wgrad.geometry, FilterLayout::fqrsc, overwrite);
      rewriter.replaceOp(
          op, forwardResultAsQrscf(rewriter, loc, computed, forward));
      return success();
    }
    Value qrscfInit =
        overwrite
            ? tensor::EmptyOp::create(rewriter, loc, resultShape,
                                      initType.getElementType())
                  .getResult()
            : qrscfAsForwardResult(
                  rewriter, loc,
                  transpose(rewriter, loc, init, {1, 2, 3, 4, 0}), resultShape);
    Value computed =
        forwardConv(rewriter, loc, input, filter, qrscfInit, wgrad.geometry,
                    FilterLayout::fqrsc, overwrite);
    rewriter.replaceOp(
        op, transpose(rewriter, loc,
                      forwardResultAsQrscf(rewriter, loc, computed, forward),
                      {4, 0, 1, 2, 3}, init));
    return success();
  }

private:
  Target target;
  WgradFoldPolicy policy;
};

struct LowerConvGradientsPass
    : mlir::conv3d::impl::Conv3dLowerConvGradientsBase<LowerConvGradientsPass> {
  using Base::Base;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateLowerConvGradientsPatterns(patterns, target, wgradFold,
                                       dgradActivation);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

/// Bytes a second the gathers move (written and read), as the fold choice
/// prices them. The height-width fold's gathers ran 0.9-1.0 TB/s on the
/// H200 and the width fold's 1.4-2.3; fitted over 0.6-2 TB/s (with the
/// K-step fill's exponent, 0-2) on the suite and 40 random layers of seed
/// 61, 0.8 TB/s took the faster fold on all 50 (1.4: 47), and on 40
/// held-out layers of seed 62 on 36 (within 10%; bench/RESULTS.md,
/// eleventh session).
constexpr double kGatherBytesPerSecond = 0.8e12;
/// The largest gathered input the height-width fold may make: R*S copies of
/// the input can be many GiB on video layers, where the width fold's S
/// copies are a third of it.
constexpr int64_t kMaxHeightWidthGatherBytes = int64_t(2) << 30;

/// The forward form's predicted time on `target` plus its gathers', or
/// none where the cost model does not cover the target or the form.
std::optional<double> wgradFormSeconds(MLIRContext *context,
                                       const ConvGeometry &forward,
                                       const WgradForward &wgrad,
                                       Type elementType, Target target) {
  ConvProblem problem;
  problem.geometry = wgrad.geometry;
  problem.filterLayout = FilterLayout::fqrsc;
  problem.inputType = elementType;
  KernelSelection selection = selectKernel(context, problem, target);
  if (selection.refused || !selection.prediction)
    return std::nullopt;
  // The model counts a tap's partial last K step as a whole one, but the
  // sm90 kernel ran the width fold's taps of 104 channels 2x slower than
  // the model's ratio to the height-width fold said (1.23x; H200, eleventh
  // session): short K loops per tap cost more than their steps. The
  // steps' fill is the correction.
  int64_t channels = wgrad.geometry.channels;
  double fill = double(channels) / double(llvm::alignTo(channels, 64));
  int64_t bytes = elementType.getIntOrFloatBitWidth() / 8;
  double gathered = double(wgrad.gatheredInputElements() +
                           llvm::product_of(forward.inputShape())) *
                    double(bytes);
  return selection.prediction->seconds / fill +
         gathered / kGatherBytesPerSecond;
}

} // namespace

WgradFold mlir::conv3d::chooseWgradFold(MLIRContext *context,
                                        const ConvGeometry &forward,
                                        Type elementType, Target target,
                                        WgradFoldPolicy policy) {
  if (policy == WgradFoldPolicy::HeightWidth)
    return WgradFold::HeightWidth;
  if (policy == WgradFoldPolicy::Width || target == Target::cpu)
    return WgradFold::Width;
  // The families build configuration attributes: a host compiler may ask
  // before any conv3d op exists in its context.
  context->getOrLoadDialect<Conv3dDialect>();
  WgradForward width = wgradAsForward(forward, WgradFold::Width);
  WgradForward heightWidth = wgradAsForward(forward, WgradFold::HeightWidth);
  if (width.empty || heightWidth.gatheredInputElements() *
                             (elementType.getIntOrFloatBitWidth() / 8) >
                         kMaxHeightWidthGatherBytes)
    return WgradFold::Width;
  std::optional<double> widthSeconds =
      wgradFormSeconds(context, forward, width, elementType, target);
  std::optional<double> heightWidthSeconds =
      wgradFormSeconds(context, forward, heightWidth, elementType, target);
  if (!heightWidthSeconds)
    return WgradFold::Width;
  if (!widthSeconds || *heightWidthSeconds < *widthSeconds)
    return WgradFold::HeightWidth;
  return WgradFold::Width;
}

void mlir::conv3d::populateLowerConvGradientsPatterns(
    RewritePatternSet &patterns, Target target, WgradFoldPolicy policy,
    DgradActivationPolicy dgradActivation) {
  patterns.add<DgradToPhaseConvolutions>(patterns.getContext(), target,
                                         dgradActivation);
  patterns.add<WgradToForwardConvolution>(patterns.getContext(), target,
                                          policy);
}
