//===- ConvToLinalg.cpp - reference lowering of conv3d ops to linalg ------===//

#include "conv3d/Conversion/Passes.h"
#include "conv3d/IR/Conv3dOps.h"
#include "conv3d/IR/IndexMath.h"
#include "conv3d/IR/ScalarEmitters.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <functional>

namespace mlir::conv3d {
#define GEN_PASS_DEF_CONV3DTOLINALG
#include "conv3d/Conversion/Passes.h.inc"
} // namespace mlir::conv3d

using namespace mlir;
using namespace mlir::conv3d;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

static Value emptyLike(OpBuilder &b, Location loc, Value shaped, Type elem) {
  return tensor::EmptyOp::create(b, loc, tensor::getMixedSizes(b, loc, shaped),
                                 elem);
}

static Value zeroFilled(OpBuilder &b, Location loc, Value empty) {
  Type elem = getElementTypeOrSelf(empty.getType());
  Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(elem));
  return linalg::FillOp::create(b, loc, zero, empty).getResult(0);
}

static SmallVector<utils::IteratorType> parallelIterators(unsigned n) {
  return SmallVector<utils::IteratorType>(n, utils::IteratorType::parallel);
}

/// The f32 accumulator `(overwrite ? 0 : init)` of a convolution.
static Value initialAccumulator(OpBuilder &b, Location loc, Value init,
                                bool overwrite) {
  Type f32 = b.getF32Type();
  if (overwrite)
    return zeroFilled(b, loc, emptyLike(b, loc, init, f32));
  if (getElementTypeOrSelf(init.getType()).isF32())
    return init;
  auto type = cast<RankedTensorType>(init.getType());
  AffineMap id = b.getMultiDimIdentityMap(type.getRank());
  return linalg::GenericOp::create(
             b, loc, TypeRange{type.clone(f32)}, ValueRange{init},
             ValueRange{emptyLike(b, loc, init, f32)},
             ArrayRef<AffineMap>{id, id}, parallelIterators(type.getRank()),
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               linalg::YieldOp::create(
                   nb, nl, emitFloatCast(nb, nl, args[0], nb.getF32Type()));
             })
      .getResult(0);
}

/// `dest = cast(act(acc + bias[f]) + residual)` on NDHWF tensors.
static Value buildEpilogue(OpBuilder &b, Location loc, Value acc, Value bias,
                           Value residual, Activation activation, Value dest) {
  auto destType = cast<RankedTensorType>(dest.getType());
  AffineMap id = b.getMultiDimIdentityMap(5);
  SmallVector<Value> inputs = {acc};
  SmallVector<AffineMap> maps = {id};
  if (bias) {
    inputs.push_back(bias);
    maps.push_back(AffineMap::get(5, 0, b.getAffineDimExpr(4)));
  }
  if (residual) {
    inputs.push_back(residual);
    maps.push_back(id);
  }
  maps.push_back(id);
  return linalg::GenericOp::create(
             b, loc, TypeRange{destType}, inputs, ValueRange{dest}, maps,
             parallelIterators(5),
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value biasValue = bias ? args[1] : Value();
               Value residualValue = residual ? args[bias ? 2 : 1] : Value();
               linalg::YieldOp::create(nb, nl,
                                       emitEpilogue(nb, nl, args[0], biasValue,
                                                    residualValue, activation,
                                                    destType.getElementType()));
             })
      .getResult(0);
}

/// `acc += a * b` body shared by the convolution and GEMM generics.
static void multiplyAccumulateBody(OpBuilder &b, Location loc,
                                   ValueRange args) {
  Type f32 = b.getF32Type();
  Value product =
      arith::MulFOp::create(b, loc, emitFloatCast(b, loc, args[0], f32),
                            emitFloatCast(b, loc, args[1], f32));
  Value sum = arith::AddFOp::create(b, loc, args[2], product);
  linalg::YieldOp::create(b, loc, sum);
}

/// NVFP4 quantization of `input` in blocks along the row-major flattening of
/// the axes [first, last]; the result is written into `dest`.
static Value buildQuantize(OpBuilder &b, Location loc, Value input, Value amax,
                           int64_t blockSize, int64_t first, int64_t last,
                           Value dest) {
  auto type = cast<RankedTensorType>(input.getType());
  int64_t rank = type.getRank();
  ArrayRef<int64_t> shape = type.getShape();
  int64_t length = 1;
  for (int64_t axis = first; axis <= last; ++axis)
    length *= shape[axis];
  int64_t numBlocks = ceilDiv(length, blockSize);
  Type f32 = b.getF32Type();

  // Block maxima: iteration (outer..., block, inner..., element) with the
  // element dimension reduced; the input is gathered in the body because the
  // last block runs past the end (those positions read as zero).
  SmallVector<OpFoldResult> maxSizes;
  for (int64_t axis = 0; axis < first; ++axis)
    maxSizes.push_back(tensor::getMixedSize(b, loc, input, axis));
  maxSizes.push_back(b.getIndexAttr(numBlocks));
  for (int64_t axis = last + 1; axis < rank; ++axis)
    maxSizes.push_back(tensor::getMixedSize(b, loc, input, axis));
  int64_t maxRank = maxSizes.size();
  Value maxInit =
      zeroFilled(b, loc, tensor::EmptyOp::create(b, loc, maxSizes, f32));
  SmallVector<AffineExpr> outExprs;
  for (int64_t d = 0; d < maxRank; ++d)
    outExprs.push_back(b.getAffineDimExpr(d));
  AffineMap maxMap = AffineMap::get(maxRank + 1, 0, outExprs, b.getContext());
  SmallVector<utils::IteratorType> iterators = parallelIterators(maxRank);
  iterators.push_back(utils::IteratorType::reduction);
  // linalg infers loop ranges from operand shapes: an (unread) operand of
  // the block size gives the element loop its range.
  Value blockExtent = tensor::EmptyOp::create(
      b, loc, ArrayRef<int64_t>{blockSize}, b.getI8Type());
  AffineMap extentMap =
      AffineMap::get(maxRank + 1, 0, b.getAffineDimExpr(maxRank));
  Value blockMax =
      linalg::GenericOp::create(
          b, loc, TypeRange{maxInit.getType()}, ValueRange{blockExtent},
          ValueRange{maxInit}, ArrayRef<AffineMap>{extentMap, maxMap},
          iterators,
          [&](OpBuilder &nb, Location nl, ValueRange args) {
            IRIndexMath math{nb, nl};
            Value block = linalg::IndexOp::create(nb, nl, first);
            Value element = linalg::IndexOp::create(nb, nl, maxRank);
            Value pos = math.add(math.mul(block, blockSize), element);
            Value valid = arith::CmpIOp::create(
                nb, nl, arith::CmpIPredicate::ult, pos, math.constant(length));
            Value clamped =
                arith::SelectOp::create(nb, nl, valid, pos, math.constant(0));
            SmallVector<Value> indices;
            for (int64_t axis = 0; axis < first; ++axis)
              indices.push_back(linalg::IndexOp::create(nb, nl, axis));
            SmallVector<Value> blockCoords(last - first + 1);
            for (int64_t axis = last; axis >= first; --axis) {
              blockCoords[axis - first] = math.rem(clamped, shape[axis]);
              clamped = math.div(clamped, shape[axis]);
            }
            indices.append(blockCoords);
            for (int64_t axis = last + 1; axis < rank; ++axis)
              indices.push_back(
                  linalg::IndexOp::create(nb, nl, axis - (last - first)));
            Value x = tensor::ExtractOp::create(nb, nl, input, indices);
            Value zero =
                arith::ConstantOp::create(nb, nl, nb.getZeroAttr(x.getType()));
            x = arith::SelectOp::create(nb, nl, valid, x, zero);
            linalg::YieldOp::create(nb, nl,
                                    emitAbsMaxUpdate(nb, nl, args[1], x));
          })
          .getResult(0);

  // Elementwise quantization with the block's scale.
  AffineExpr linear = b.getAffineConstantExpr(0);
  for (int64_t axis = first; axis <= last; ++axis)
    linear = linear * shape[axis] + b.getAffineDimExpr(axis);
  SmallVector<AffineExpr> blockExprs;
  for (int64_t axis = 0; axis < first; ++axis)
    blockExprs.push_back(b.getAffineDimExpr(axis));
  blockExprs.push_back(linear.floorDiv(blockSize));
  for (int64_t axis = last + 1; axis < rank; ++axis)
    blockExprs.push_back(b.getAffineDimExpr(axis));
  AffineMap id = b.getMultiDimIdentityMap(rank);
  AffineMap blockMap = AffineMap::get(rank, 0, blockExprs, b.getContext());
  return linalg::GenericOp::create(
             b, loc, TypeRange{dest.getType()}, ValueRange{input, blockMax},
             ValueRange{dest}, ArrayRef<AffineMap>{id, blockMap, id},
             parallelIterators(rank),
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               NVFP4BlockScale scale =
                   emitNVFP4BlockScale(nb, nl, args[1], amax);
               Value q = emitNVFP4Quantize(nb, nl, args[0], scale);
               linalg::YieldOp::create(
                   nb, nl, emitFloatCast(nb, nl, q, args[0].getType()));
             })
      .getResult(0);
}

//===----------------------------------------------------------------------===//
// conv3d.conv
//===----------------------------------------------------------------------===//

/// The input padded with zeros per the op's padding.
static Value padInput(OpBuilder &b, Location loc, Value input,
                      const ConvGeometry &g) {
  if (llvm::all_of(g.padding(), [](int64_t p) { return p == 0; }))
    return input;
  return createZeroPaddedInput(b, loc, input, g);
}

/// The direct convolution: one generic over (n, do, ho, wo, f, q, r, s, c),
/// c a channel of filter f's group: input channel (f / (F/G)) * C/G + c.
static Value buildDirectConv(OpBuilder &b, Location loc, Value padded,
                             Value filter, Value acc, const ConvGeometry &g,
                             FilterLayout layout) {
  auto d = [&](unsigned i) { return b.getAffineDimExpr(i); };
  MLIRContext *ctx = b.getContext();
  AffineExpr channel =
      g.isGrouped()
          ? d(4).floorDiv(g.filtersPerGroup()) * g.channelsPerGroup() + d(8)
          : d(8);
  AffineMap inputMap =
      AffineMap::get(9, 0,
                     {d(0), d(1) * g.strides[0] + d(5) * g.dilations[0],
                      d(2) * g.strides[1] + d(6) * g.dilations[1],
                      d(3) * g.strides[2] + d(7) * g.dilations[2], channel},
                     ctx);
  AffineMap filterMap =
      layout == FilterLayout::qrscf
          ? AffineMap::get(9, 0, {d(5), d(6), d(7), d(8), d(4)}, ctx)
          : AffineMap::get(9, 0, {d(4), d(5), d(6), d(7), d(8)}, ctx);
  AffineMap outMap = AffineMap::get(9, 0, {d(0), d(1), d(2), d(3), d(4)}, ctx);
  SmallVector<utils::IteratorType> iterators = parallelIterators(5);
  iterators.append(4, utils::IteratorType::reduction);
  return linalg::GenericOp::create(
             b, loc, TypeRange{acc.getType()}, ValueRange{padded, filter},
             ValueRange{acc}, ArrayRef<AffineMap>{inputMap, filterMap, outMap},
             iterators, multiplyAccumulateBody)
      .getResult(0);
}

/// The input after the op's prologue (RMS norm over channels, activation):
/// a reduction to one f32 norm scale per voxel, then an elementwise map. The
/// transformed input replaces the input in the gather below; the halo is
/// never transformed because the gather reads it as zero.
/// `init`, when given, receives the result (a conv3d.prologue's outs).
static Value buildInputPrologue(OpBuilder &b, Location loc, Value input,
                                Value normGamma, Value normBeta,
                                FloatAttr normEps, Activation activation,
                                Value init = Value()) {
  Type elem = getElementTypeOrSelf(input.getType());
  Type f32 = b.getF32Type();
  auto inType = cast<RankedTensorType>(input.getType());
  MLIRContext *ctx = b.getContext();
  auto d = [&](unsigned i) { return b.getAffineDimExpr(i); };
  AffineMap id = b.getMultiDimIdentityMap(5);
  AffineMap voxel = AffineMap::get(5, 0, {d(0), d(1), d(2), d(3)}, ctx);
  AffineMap channel = AffineMap::get(5, 0, {d(4)}, ctx);
  int64_t channels = inType.getDimSize(4);

  Value normScale;
  if (normGamma) {
    Value sumInit = zeroFilled(
        b, loc,
        tensor::EmptyOp::create(b, loc, inType.getShape().drop_back(), f32));
    SmallVector<utils::IteratorType> iterators = parallelIterators(4);
    iterators.push_back(utils::IteratorType::reduction);
    Value sum =
        linalg::GenericOp::create(
            b, loc, TypeRange{sumInit.getType()}, ValueRange{input},
            ValueRange{sumInit}, ArrayRef<AffineMap>{id, voxel}, iterators,
            [&](OpBuilder &nb, Location nl, ValueRange args) {
              Value x = emitFloatCast(nb, nl, args[0], nb.getF32Type());
              Value sq = arith::MulFOp::create(nb, nl, x, x);
              linalg::YieldOp::create(
                  nb, nl,
                  arith::AddFOp::create(nb, nl, args[1], sq).getResult());
            })
            .getResult(0);
    float eps = normEps.getValue().convertToFloat();
    normScale =
        linalg::GenericOp::create(
            b, loc, TypeRange{sum.getType()}, ValueRange{sum},
            ValueRange{emptyLike(b, loc, sum, f32)},
            ArrayRef<AffineMap>{b.getMultiDimIdentityMap(4),
                                b.getMultiDimIdentityMap(4)},
            parallelIterators(4),
            [&](OpBuilder &nb, Location nl, ValueRange args) {
              linalg::YieldOp::create(
                  nb, nl, emitRmsNormScale(nb, nl, args[0], channels, eps));
            })
            .getResult(0);
  }

  SmallVector<Value> inputs = {input};
  SmallVector<AffineMap> maps = {id};
  if (normScale) {
    inputs.append({normScale, normGamma});
    maps.append({voxel, channel});
    if (normBeta) {
      inputs.push_back(normBeta);
      maps.push_back(channel);
    }
  }
  maps.push_back(id);
  bool hasBeta = static_cast<bool>(normBeta);
  return linalg::GenericOp::create(
             b, loc, TypeRange{inType}, inputs,
             ValueRange{init ? init : emptyLike(b, loc, input, elem)}, maps,
             parallelIterators(5),
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value y = emitInputPrologue(
                   nb, nl, args[0], normScale ? args[1] : Value(),
                   normScale ? args[2] : Value(), hasBeta ? args[3] : Value(),
                   activation, elem);
               linalg::YieldOp::create(nb, nl, y);
             })
      .getResult(0);
}

/// Reads element (n, d, h, w, c) of the convolution's logical input,
/// `concat(history, input)` along depth and zero-padded, inside a
/// linalg.generic body: `coords` are (d, h, w) in unpadded coordinates of
/// the concatenation (possibly in the halo). No concatenation or padded
/// tensor is built.
static Value gatherInputElement(OpBuilder &b, Location loc,
                                const ConvGeometry &g, Value history,
                                Value input, Value n, ArrayRef<Value> coords,
                                Value c) {
  Type elem = getElementTypeOrSelf(input.getType());
  IRIndexMath math{b, loc};
  auto cmp = [&](arith::CmpIPredicate pred, Value x, int64_t bound) {
    return arith::CmpIOp::create(b, loc, pred, x, math.constant(bound))
        .getResult();
  };
  Value valid;
  for (unsigned axis = 0; axis < 3; ++axis) {
    Value inside = arith::AndIOp::create(
        b, loc, cmp(arith::CmpIPredicate::sge, coords[axis], 0),
        cmp(arith::CmpIPredicate::slt, coords[axis], g.inputSize[axis]));
    valid = valid ? arith::AndIOp::create(b, loc, valid, inside).getResult()
                  : inside;
  }
  int64_t historyDepth = history ? g.historyDepth : 0;
  auto load = scf::IfOp::create(b, loc, TypeRange{elem}, valid,
                                /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(load.thenBlock());
  auto extract = [&](Value source, Value depth) {
    return tensor::ExtractOp::create(
               b, loc, source, ValueRange{n, depth, coords[1], coords[2], c})
        .getResult();
  };
  auto extractInput = [&]() {
    return extract(input, math.add(coords[0], math.constant(-historyDepth)));
  };
  Value x;
  if (historyDepth == 0) {
    x = extractInput();
  } else {
    auto source = scf::IfOp::create(
        b, loc, TypeRange{elem},
        cmp(arith::CmpIPredicate::slt, coords[0], historyDepth),
        /*withElseRegion=*/true);
    b.setInsertionPointToStart(source.thenBlock());
    scf::YieldOp::create(b, loc, extract(history, coords[0]));
    b.setInsertionPointToStart(source.elseBlock());
    scf::YieldOp::create(b, loc, extractInput());
    b.setInsertionPointAfter(source);
    x = source.getResult(0);
  }
  scf::YieldOp::create(b, loc, x);
  b.setInsertionPointToStart(load.elseBlock());
  scf::YieldOp::create(
      b, loc,
      arith::ConstantOp::create(b, loc, b.getZeroAttr(elem)).getResult());
  return load.getResult(0);
}

/// The convolution as an explicit im2col matrix (M x K, gathered by
/// `inputElement`), NVFP4-quantized along K when `blockSize` is set,
/// multiplied by the K x F filter. Used where the direct form cannot say
/// what is read: quantization blocks run along K of each output position,
/// and a history operand is a second source along depth.
/// Reads the input element (n, coords, c) inside the im2col generic's body;
/// `coords` are (d, h, w) in unpadded coordinates (possibly in the halo).
using InputElementFn = function_ref<Value(OpBuilder &, Location, Value n,
                                          ArrayRef<Value> coords, Value c)>;

static Value buildIm2colConv(OpBuilder &b, Location loc, Type elem,
                             InputElementFn inputElement, Value filter,
                             Value acc, Value amax, const ConvGeometry &g,
                             FilterLayout layout,
                             std::optional<int64_t> blockSize) {
  int64_t m = g.gemmM(), k = g.gemmK();
  AffineMap id2 = b.getMultiDimIdentityMap(2);
  Value im2colInit =
      tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{m, k}, elem);
  Value im2col =
      linalg::GenericOp::create(
          b, loc, TypeRange{im2colInit.getType()}, ValueRange{},
          ValueRange{im2colInit}, ArrayRef<AffineMap>{id2},
          parallelIterators(2),
          [&](OpBuilder &nb, Location nl, ValueRange) {
            IRIndexMath math{nb, nl};
            auto [n, od, oh, ow] =
                g.decomposeM(math, linalg::IndexOp::create(nb, nl, 0));
            auto [q, r, s, c] =
                g.decomposeK(math, linalg::IndexOp::create(nb, nl, 1));
            std::array<Value, 3> out = {od, oh, ow}, tap = {q, r, s};
            SmallVector<Value> coords;
            for (unsigned axis = 0; axis < 3; ++axis)
              coords.push_back(g.inputCoord(math, axis, out[axis], tap[axis]));
            Value element = inputElement(nb, nl, n, coords, c);
            linalg::YieldOp::create(nb, nl, element);
          })
          .getResult(0);
  Value operandA = im2col;
  if (blockSize)
    operandA = buildQuantize(
        b, loc, im2col, amax, *blockSize, /*first=*/1, /*last=*/1,
        tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{m, k}, elem));

  SmallVector<ReassociationIndices> filterGroups =
      layout == FilterLayout::qrscf
          ? SmallVector<ReassociationIndices>{{0, 1, 2, 3}, {4}}
          : SmallVector<ReassociationIndices>{{0}, {1, 2, 3, 4}};
  Value filterMatrix =
      tensor::CollapseShapeOp::create(b, loc, filter, filterGroups);
  SmallVector<ReassociationIndices> outGroups = {{0, 1, 2, 3}, {4}};
  Value acc2d = tensor::CollapseShapeOp::create(b, loc, acc, outGroups);

  auto d = [&](unsigned i) { return b.getAffineDimExpr(i); };
  MLIRContext *ctx = b.getContext();
  AffineMap aMap = AffineMap::get(3, 0, {d(0), d(2)}, ctx);
  AffineMap bMap = layout == FilterLayout::qrscf
                       ? AffineMap::get(3, 0, {d(2), d(1)}, ctx)
                       : AffineMap::get(3, 0, {d(1), d(2)}, ctx);
  AffineMap cMap = AffineMap::get(3, 0, {d(0), d(1)}, ctx);
  SmallVector<utils::IteratorType> iterators = parallelIterators(2);
  iterators.push_back(utils::IteratorType::reduction);
  Value product = linalg::GenericOp::create(
                      b, loc, TypeRange{acc2d.getType()},
                      ValueRange{operandA, filterMatrix}, ValueRange{acc2d},
                      ArrayRef<AffineMap>{aMap, bMap, cMap}, iterators,
                      multiplyAccumulateBody)
                      .getResult(0);
  return tensor::ExpandShapeOp::create(b, loc, acc.getType(), product,
                                       outGroups);
}

namespace {

struct ConvOpToLinalg : OpRewritePattern<ConvOp> {
  /// `onlyDynamic`: the implicit-GEMM pipelines' fallback, for convolutions
  /// of dynamic shape only, each reported with a remark.
  ConvOpToLinalg(MLIRContext *context, bool onlyDynamic)
      : OpRewritePattern(context), onlyDynamic(onlyDynamic) {}

  LogicalResult matchAndRewrite(ConvOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasTensorSemantics())
      return rewriter.notifyMatchFailure(op, "memref form is not lowered");
    if (op.hasPackedFilter())
      return rewriter.notifyMatchFailure(op, "a packed NVFP4 filter");
    if (onlyDynamic && !hasDynamicConvShape(op))
      return rewriter.notifyMatchFailure(op, "left to the implicit GEMM");
    ConvGeometry g = op.getGeometry();
    std::optional<NVFP4Attr> quant = op.getInputQuant();
    bool gathered = quant || op.hasHistoryOrPrologue();
    if (gathered && !g.hasStaticShape())
      return rewriter.notifyMatchFailure(
          op, "input quantization, a history operand or an input prologue "
              "needs static shapes");
    if (onlyDynamic)
      op->emitRemark("conv3d-implicit-gemm tiles convolutions of static "
                     "shape: this one (input ")
          << op.getInput().getType()
          << ") takes the reference lowering (direct loops) instead";
    Location loc = op.getLoc();
    Value acc =
        initialAccumulator(rewriter, loc, op.getInit(), op.getOverwrite());
    if (gathered && g.isGrouped()) {
      // The im2col GEMM below is dense; a grouped convolution (never
      // quantized, the verifier says) reads its transformed input and
      // history materialized, padded, by the direct form.
      Value source =
          op.hasPrologue()
              ? buildInputPrologue(rewriter, loc, op.getInput(),
                                   op.getNormGamma(), op.getNormBeta(),
                                   op.getNormEpsAttr(), op.getInputActivation())
              : op.getInput();
      if (Value history = op.getHistory())
        source = tensor::ConcatOp::create(rewriter, loc, /*dim=*/1,
                                          ValueRange{history, source});
      acc = buildDirectConv(rewriter, loc, padInput(rewriter, loc, source, g),
                            op.getFilter(), acc, g, op.getFilterLayout());
    } else if (gathered) {
      std::optional<int64_t> blockSize;
      if (quant)
        blockSize = quant->getBlockSize();
      Type elem = getElementTypeOrSelf(op.getInput().getType());
      Value source, history = op.getHistory();
      std::function<Value(OpBuilder &, Location, Value, ArrayRef<Value>, Value)>
          inputElement;
      if (!op.hasHistoryOrPrologue()) {
        // Only quantized: read the zero-padded input.
        source = padInput(rewriter, loc, op.getInput(), g);
        inputElement = [&](OpBuilder &nb, Location nl, Value n,
                           ArrayRef<Value> coords, Value c) -> Value {
          IRIndexMath math{nb, nl};
          SmallVector<Value> indices = {n};
          for (unsigned axis = 0; axis < 3; ++axis)
            indices.push_back(
                math.add(coords[axis],
                         math.constant(g.padLow[axis]))); // padded coordinates
          indices.push_back(c);
          return tensor::ExtractOp::create(nb, nl, source, indices);
        };
      } else {
        // Neither the concatenation nor a padded tensor is built.
        source = op.hasPrologue()
                     ? buildInputPrologue(rewriter, loc, op.getInput(),
                                          op.getNormGamma(), op.getNormBeta(),
                                          op.getNormEpsAttr(),
                                          op.getInputActivation())
                     : op.getInput();
        inputElement = [&](OpBuilder &nb, Location nl, Value n,
                           ArrayRef<Value> coords, Value c) -> Value {
          return gatherInputElement(nb, nl, g, history, source, n, coords, c);
        };
      }
      acc = buildIm2colConv(rewriter, loc, elem, inputElement, op.getFilter(),
                            acc, op.getAmax(), g, op.getFilterLayout(),
                            blockSize);
    } else {
      Value padded = padInput(rewriter, loc, op.getInput(), g);
      acc = buildDirectConv(rewriter, loc, padded, op.getFilter(), acc, g,
                            op.getFilterLayout());
    }
    rewriter.replaceOp(op, buildEpilogue(rewriter, loc, acc, op.getBias(),
                                         op.getResidual(), op.getActivation(),
                                         op.getInit()));
    return success();
  }

  bool onlyDynamic;
};

struct QuantizeOpToLinalg : OpRewritePattern<QuantizeOp> {
  QuantizeOpToLinalg(MLIRContext *context, bool includeContiguous)
      : OpRewritePattern(context), includeContiguous(includeContiguous) {}

  LogicalResult matchAndRewrite(QuantizeOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasTensorSemantics())
      return rewriter.notifyMatchFailure(op, "memref form is not lowered");
    if (!includeContiguous && hasContiguousQuantBlocks(op))
      return rewriter.notifyMatchFailure(
          op, "contiguous blocks are left to conv3d-quantize-to-loops");
    ArrayRef<int64_t> axes = op.getBlockAxes();
    rewriter.replaceOp(
        op, buildQuantize(rewriter, op.getLoc(), op.getInput(), op.getAmax(),
                          op.getFormat().getBlockSize(), axes.front(),
                          axes.back(), op.getInit()));
    return success();
  }

  bool includeContiguous;
};

/// conv3d.prologue on tensors; on the other pipelines it bufferizes and
/// conv3d-quantize-to-loops lowers it with the other prepasses.
struct PrologueOpToLinalg : OpRewritePattern<PrologueOp> {
  PrologueOpToLinalg(MLIRContext *context, bool include)
      : OpRewritePattern(context), include(include) {}

  LogicalResult matchAndRewrite(PrologueOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasTensorSemantics())
      return rewriter.notifyMatchFailure(op, "memref form is not lowered");
    if (!include)
      return rewriter.notifyMatchFailure(op,
                                         "left to conv3d-quantize-to-loops");
    rewriter.replaceOp(
        op, buildInputPrologue(rewriter, op.getLoc(), op.getInput(),
                               op.getNormGamma(), op.getNormBeta(),
                               op.getNormEpsAttr(), op.getInputActivation(),
                               op.getInit()));
    return success();
  }

  bool include;
};

/// A stack of split-K partial sums (S x N x D x H x W x F) added slab by
/// slab in split order, as conv3d.epilogue defines it; a rank-5 sum as is.
static Value addSplitSlabs(OpBuilder &b, Location loc, Value sum) {
  auto type = cast<RankedTensorType>(sum.getType());
  if (type.getRank() == 5)
    return sum;
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, sum);
  sizes[0] = b.getIndexAttr(1);
  SmallVector<OpFoldResult> offsets(6, b.getIndexAttr(0)),
      strides(6, b.getIndexAttr(1));
  auto slabType = RankedTensorType::get(type.getShape().drop_front(),
                                        type.getElementType());
  SmallVector<Value> slabs;
  for (int64_t s = 0; s < type.getDimSize(0); ++s) {
    offsets[0] = b.getIndexAttr(s);
    slabs.push_back(tensor::ExtractSliceOp::create(b, loc, slabType, sum,
                                                   offsets, sizes, strides));
  }
  AffineMap id = b.getMultiDimIdentityMap(5);
  return linalg::GenericOp::create(
             b, loc, TypeRange{slabType}, slabs,
             ValueRange{emptyLike(b, loc, slabs[0], type.getElementType())},
             SmallVector<AffineMap>(slabs.size() + 1, id), parallelIterators(5),
             [](OpBuilder &nb, Location nl, ValueRange args) {
               Value acc = args[0];
               for (Value slab : args.drop_front().drop_back())
                 acc = arith::AddFOp::create(nb, nl, acc, slab);
               linalg::YieldOp::create(nb, nl, acc);
             })
      .getResult(0);
}

struct EpilogueOpToLinalg : OpRewritePattern<EpilogueOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(EpilogueOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasTensorSemantics())
      return rewriter.notifyMatchFailure(op, "memref form is not lowered");
    Location loc = op.getLoc();
    Value acc = addSplitSlabs(rewriter, loc, op.getSum());
    if (!op.getOverwrite()) {
      // acc = sum + init, in f32.
      Value init =
          initialAccumulator(rewriter, loc, op.getInit(), /*overwrite=*/false);
      AffineMap id = rewriter.getMultiDimIdentityMap(5);
      acc =
          linalg::GenericOp::create(
              rewriter, loc, TypeRange{acc.getType()}, ValueRange{acc, init},
              ValueRange{emptyLike(rewriter, loc, acc, rewriter.getF32Type())},
              ArrayRef<AffineMap>{id, id, id}, parallelIterators(5),
              [](OpBuilder &nb, Location nl, ValueRange args) {
                Value sum = arith::AddFOp::create(nb, nl, args[0], args[1]);
                linalg::YieldOp::create(nb, nl, sum);
              })
              .getResult(0);
    }
    rewriter.replaceOp(op, buildEpilogue(rewriter, loc, acc, op.getBias(),
                                         op.getResidual(), op.getActivation(),
                                         op.getInit()));
    return success();
  }

  bool onlyDynamic;
};

//===----------------------------------------------------------------------===//
// Memref forms
//===----------------------------------------------------------------------===//

/// A conv3d op on memrefs (a module written after bufferization) as the same
/// op on tensors: each buffer it reads is read once through
/// `bufferization.to_tensor`, and the result is materialized into its
/// output buffer, so that the tensor patterns above lower it and One-Shot
/// Bufferize computes it there. As for the op itself (and the kernels that
/// take its memref form), distinct buffer operands must not overlap. An
/// output buffer that the op overwrites and does not read is not read here
/// either: unless tensors are read from it elsewhere, the materialization is
/// `restrict`, and empty-tensor elimination computes the result in place.
template <typename OpTy> struct BufferFormOnTensors : OpRewritePattern<OpTy> {
  BufferFormOnTensors(MLIRContext *context, bool includeContiguousQuantize,
                      bool onlyDynamicConv = false)
      : OpRewritePattern<OpTy>(context),
        includeContiguousQuantize(includeContiguousQuantize),
        onlyDynamicConv(onlyDynamicConv) {}

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    auto dps = cast<DestinationStyleOpInterface>(op.getOperation());
    if (!dps.hasPureBufferSemantics())
      return rewriter.notifyMatchFailure(op, "not the memref form");
    if constexpr (std::is_same_v<OpTy, ConvOp>) {
      if (onlyDynamicConv && !hasDynamicConvShape(op))
        return rewriter.notifyMatchFailure(op, "left to the implicit GEMM");
    }
    if constexpr (std::is_same_v<OpTy, QuantizeOp>) {
      if (!includeContiguousQuantize && hasContiguousQuantBlocks(op))
        return rewriter.notifyMatchFailure(
            op, "contiguous blocks are left to conv3d-quantize-to-loops");
    }
    if constexpr (std::is_same_v<OpTy, PrologueOp>) {
      if (!includeContiguousQuantize)
        return rewriter.notifyMatchFailure(op,
                                           "left to conv3d-quantize-to-loops");
    }
    Location loc = op.getLoc();
    Value output = dps.getDpsInits().front();
    bool readsOutput = false;
    if constexpr (!std::is_same_v<OpTy, QuantizeOp> &&
                  !std::is_same_v<OpTy, PrologueOp>)
      readsOutput = !op.getOverwrite();
    for (OpOperand *operand : dps.getDpsInputOperands())
      readsOutput |= operand->get() == output;
    // An output of dynamic shape is read for its sizes.
    auto outputType = cast<MemRefType>(output.getType());
    bool outputAsTensor = readsOutput || !outputType.hasStaticShape();

    IRMapping tensors;
    auto asTensor = [&](Value buffer) {
      if (Value tensor = tensors.lookupOrNull(buffer))
        return tensor;
      auto type = cast<MemRefType>(buffer.getType());
      Value tensor = bufferization::ToTensorOp::create(
          rewriter, loc,
          RankedTensorType::get(type.getShape(), type.getElementType()), buffer,
          /*restrict=*/true, /*writable=*/false);
      tensors.map(buffer, tensor);
      return tensor;
    };
    SmallVector<Value> operands;
    for (Value operand : op->getOperands()) {
      if (!isa<MemRefType>(operand.getType()))
        operands.push_back(operand);
      else if (operand == output && !outputAsTensor)
        operands.push_back(tensor::EmptyOp::create(
            rewriter, loc, outputType.getShape(), outputType.getElementType()));
      else
        operands.push_back(asTensor(operand));
    }
    Type resultType =
        operands[dps.getDpsInitsMutable().begin()->getOperandNumber()]
            .getType();
    OperationState state(loc, op->getName());
    state.addOperands(operands);
    state.addTypes(resultType);
    state.addAttributes(llvm::to_vector(op->getDiscardableAttrs()));
    state.propertiesAttr = op->getPropertiesAsAttribute();
    Operation *onTensors = rewriter.create(state);
    // `restrict` (which lets empty-tensor elimination compute the result in
    // the buffer) promises that no to_tensor reads the buffer.
    bool tensorViews =
        outputAsTensor || llvm::any_of(output.getUsers(), [](Operation *user) {
          return isa<bufferization::ToTensorOp>(user);
        });
    bufferization::MaterializeInDestinationOp::create(
        rewriter, loc, /*result=*/Type(), onTensors->getResult(0), output,
        /*restrict=*/!tensorViews, /*writable=*/true);
    rewriter.eraseOp(op);
    return success();
  }

  bool includeContiguousQuantize;
  bool onlyDynamicConv;
};

struct Conv3dToLinalgPass
    : mlir::conv3d::impl::Conv3dToLinalgBase<Conv3dToLinalgPass> {
  using Base::Base;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateConv3dToLinalgPatterns(patterns, lowerConv, lowerContiguousQuantize,
                                   lowerDynamicConv);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    // Anything left is a form the reference lowering does not handle.
    WalkResult result = getOperation()->walk([&](Operation *op) {
      auto conv = dyn_cast<ConvOp>(op);
      if (!isa<ConvOp, QuantizeOp, EpilogueOp, PrologueOp>(op) ||
          (conv && !lowerConv &&
           !(lowerDynamicConv && hasDynamicConvShape(conv))) ||
          (isa<PrologueOp>(op) && !lowerContiguousQuantize))
        return WalkResult::advance();
      if (auto quantize = dyn_cast<QuantizeOp>(op);
          quantize && !lowerContiguousQuantize &&
          hasContiguousQuantBlocks(quantize))
        return WalkResult::advance();
      if (conv && conv.hasPackedFilter()) {
        op->emitError("conv3d-to-linalg does not lower a packed NVFP4 filter "
                      "(filter_quant): conv3d-apply-nvfp4-mode unpacks it "
                      "first (nvfp4-mode=fake)");
        return WalkResult::interrupt();
      }
      // Memref forms became tensor forms above; what is left needs static
      // shapes.
      op->emitError("conv3d-to-linalg needs static shapes to lower input "
                    "quantization, a history operand or an input prologue");
      return WalkResult::interrupt();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace

bool mlir::conv3d::hasDynamicConvShape(ConvOp conv) {
  return !conv.getGeometry().hasStaticShape() ||
         !cast<ShapedType>(conv.getInit().getType()).hasStaticShape();
}

void mlir::conv3d::populateConv3dToLinalgPatterns(
    RewritePatternSet &patterns, bool includeConv,
    bool includeContiguousQuantize, bool includeDynamicConv) {
  MLIRContext *context = patterns.getContext();
  if (includeConv || includeDynamicConv) {
    bool onlyDynamic = !includeConv;
    patterns.add<ConvOpToLinalg>(context, onlyDynamic);
    patterns.add<BufferFormOnTensors<ConvOp>>(
        context, includeContiguousQuantize, onlyDynamic);
  }
  patterns.add<QuantizeOpToLinalg, BufferFormOnTensors<QuantizeOp>>(
      context, includeContiguousQuantize);
  patterns.add<PrologueOpToLinalg, BufferFormOnTensors<PrologueOp>>(
      context, includeContiguousQuantize);
  patterns.add<EpilogueOpToLinalg>(context);
  patterns.add<BufferFormOnTensors<EpilogueOp>>(context,
                                                includeContiguousQuantize);
}
