//===- ConvOp.cpp - conv3d.conv verifier, effects, canonicalization -------===//

#include "ConvAttributeClauses.h"
#include "EnumKeyword.h"
#include "OpVerification.h"

#include "conv3d/IR/Conv3dOps.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::conv3d;
using namespace mlir::conv3d::detail;

//===----------------------------------------------------------------------===//
// Helpers shared by the destination-style ops.
//===----------------------------------------------------------------------===//

/// Memory effects of a destination-style op on memrefs: every shaped input
/// is read; the init is written, and read unless `initIsRead` is false.
static void getDpsEffects(
    DestinationStyleOpInterface op, bool initIsRead,
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  for (OpOperand &operand : op->getOpOperands()) {
    if (!isa<MemRefType>(operand.get().getType()))
      continue;
    bool isInit = op.isDpsInit(&operand);
    if (!isInit || initIsRead)
      effects.emplace_back(MemoryEffects::Read::get(), &operand, /*stage=*/0,
                           /*effectOnFullRegion=*/true,
                           SideEffects::DefaultResource::get());
    if (isInit)
      effects.emplace_back(MemoryEffects::Write::get(), &operand, /*stage=*/0,
                           /*effectOnFullRegion=*/true,
                           SideEffects::DefaultResource::get());
  }
}

//===----------------------------------------------------------------------===//
// ConvOp
//===----------------------------------------------------------------------===//

ConvGeometry ConvOp::getGeometry() {
  ConvGeometry g = ConvGeometry::fromShapes(
      getShape5(getInput().getType()), getShape5(getFilter().getType()),
      getFilterLayout(), toArray3(getStrides()), toArray3(getDilations()),
      toArray6(getPadding()), getGroups());
  if (Value history = getHistory())
    g.addHistory(getShape5(history.getType())[1]);
  return g;
}

/// The packed real NVFP4 filter of `filter_quant`: codes and scales of an
/// FQRSC filter, as conv3d.pack_nvfp4 writes them along C, in the block16
/// form kind::mxf4nvf4 reads. The channel count is checked against the
/// input's with the unpacked filters.
static LogicalResult verifyPackedFilter(ConvOp conv) {
  bool scales = static_cast<bool>(conv.getFilterScales());
  bool amax = static_cast<bool>(conv.getFilterAmax());
  if (!conv.hasPackedFilter()) {
    if (scales || amax)
      return conv.emitOpError("filter scales and a filter amax need a "
                              "filter_quant attribute");
    return success();
  }
  if (!scales || !amax)
    return conv.emitOpError("filter_quant needs the filter's scales and amax "
                            "operands");
  int64_t blockSize = conv.getFilterQuant()->getBlockSize();
  if (blockSize != 16)
    return conv.emitOpError()
           << "filter_quant block_size must be 16 (the block16 scales of "
              "tcgen05.mma kind::mxf4nvf4), got "
           << blockSize;
  if (conv.getFilterLayout() != FilterLayout::fqrsc)
    return conv.emitOpError(
        "a packed NVFP4 filter (filter_quant) must have filter_layout = "
        "fqrsc: the block-scaled MMA reads FP4 operands K-major");
  Type codesElem = getElementTypeOrSelf(conv.getFilter().getType());
  if (!codesElem.isSignlessInteger(8))
    return conv.emitOpError()
           << "a packed NVFP4 filter holds i8 codes (two E2M1 codes a byte), "
              "got "
           << codesElem;
  Value scalesValue = conv.getFilterScales();
  if (failed(verifyRank(conv, scalesValue, "filter scales", 5)))
    return failure();
  Type scalesElem = getElementTypeOrSelf(scalesValue.getType());
  if (!scalesElem.isSignlessInteger(8))
    return conv.emitOpError()
           << "filter scales must be i8 (E4M3 bits), got " << scalesElem;
  auto codesShape = getShape5(conv.getFilter().getType());
  for (int64_t size : codesShape)
    if (size == ConvGeometry::kDynamic)
      return conv.emitOpError("a packed NVFP4 filter must have a static "
                              "shape");
  int64_t channels = 2 * codesShape[4];
  if (channels % blockSize != 0)
    return conv.emitOpError()
           << "a packed NVFP4 filter of C = " << channels
           << " channels is not a whole number of blocks of " << blockSize;
  std::array<int64_t, 5> expected = codesShape;
  expected[4] = channels / blockSize;
  return verifyShapeMatches(conv, getShape5(scalesValue.getType()), expected,
                            "filter scales");
}

LogicalResult ConvOp::verify() {
  Operation *op = getOperation();
  if (failed(verifyDpsForm(op, getInit())) ||
      failed(verifyRank(op, getInput(), "input", 5)) ||
      failed(verifyRank(op, getFilter(), "filter", 5)) ||
      failed(verifyRank(op, getInit(), "outs", 5)) ||
      failed(verifyArraySize(op, getStrides(), "strides", 3)) ||
      failed(verifyArraySize(op, getDilations(), "dilations", 3)) ||
      failed(verifyArraySize(op, getPadding(), "padding", 6)) ||
      failed(verifyHistory(op, getHistory(), getInput())))
    return failure();

  Type inElem = getElementTypeOrSelf(getInput().getType());
  Type filterElem = getElementTypeOrSelf(getFilter().getType());
  Type outElem = getElementTypeOrSelf(getInit().getType());
  if (!isSupportedComputeType(inElem))
    return emitOpError() << "input element type must be bf16, f16 or f32, got "
                         << inElem;
  if (failed(verifyPackedFilter(*this)))
    return failure();
  if (!hasPackedFilter() && filterElem != inElem)
    return emitOpError() << "filter element type " << filterElem
                         << " must match the input element type " << inElem;
  if (!outElem.isF32() && outElem != inElem)
    return emitOpError() << "outs element type must be f32 or the input "
                            "element type "
                         << inElem << ", got " << outElem;

  auto inShape = getShape5(getInput().getType());
  auto filterShape = getShape5(getFilter().getType());
  int64_t filterChannels = getFilterLayout() == FilterLayout::qrscf
                               ? filterShape[3]
                               : filterShape[4];
  // Two packed FP4 codes per byte.
  if (hasPackedFilter() && filterChannels != ConvGeometry::kDynamic)
    filterChannels *= 2;
  // The geometry takes C from the input; the filter's C is only checked here.
  if (filterChannels == ConvGeometry::kDynamic)
    return emitOpError("channel, filter and window sizes must be static");
  int64_t groups = getGroups();
  if (groups < 1)
    return emitOpError() << "groups must be positive, got " << groups;
  if (groups != 1) {
    if (getInputQuant())
      return emitOpError("input quantization (quantize) of a grouped "
                         "convolution is not supported: NVFP4 blocks run "
                         "along the dense K order");
    if (hasPackedFilter())
      return emitOpError("a packed NVFP4 filter (filter_quant) takes groups "
                         "= 1 only");
    if (inShape[4] == ConvGeometry::kDynamic)
      return emitOpError("a grouped convolution needs a static channel "
                         "count");
  }
  // (Divided, not multiplied: groups is the user's and may be huge.)
  if (inShape[4] != ConvGeometry::kDynamic &&
      (inShape[4] % groups != 0 || inShape[4] / groups != filterChannels)) {
    if (groups == 1)
      return emitOpError() << "filter has " << filterChannels
                           << " input channels but the input has " << inShape[4]
                           << " (filter_layout = "
                           << stringifyFilterLayout(getFilterLayout()) << ")";
    if (inShape[4] % groups != 0)
      return emitOpError() << "the " << inShape[4]
                           << " input channels do not split into " << groups
                           << " groups (C must be a multiple of groups)";
    return emitOpError() << "filter has " << filterChannels
                         << " input channels but a group of the input has "
                         << inShape[4] / groups << " (C = " << inShape[4]
                         << ", groups = " << groups << ", filter_layout = "
                         << stringifyFilterLayout(getFilterLayout()) << ")";
  }

  ConvGeometry geometry = getGeometry();
  if (std::optional<std::string> problem = geometry.validate())
    return emitOpError() << *problem;

  auto initType = cast<ShapedType>(getInit().getType());
  for (int64_t size : initType.getShape())
    if (size == 0)
      return emitOpError() << "outs must not be empty, got shape "
                           << formatShape(initType.getShape());
  std::array<int64_t, 5> expected = geometry.outputShape();
  if (failed(verifyShapeMatches(op, initType.getShape(), expected, "outs")))
    return failure();
  if (failed(verifyBias(op, getBias(), geometry.filters, outElem)) ||
      failed(verifyResidual(op, getResidual(), initType.getShape(), outElem,
                            getActivation())))
    return failure();

  if (getInputQuant().has_value() != static_cast<bool>(getAmax()))
    return emitOpError("input quantization needs both an NVFP4 attribute and "
                       "an amax operand");
  std::optional<APFloat> eps;
  if (FloatAttr epsAttr = getNormEpsAttr())
    eps = epsAttr.getValue();
  if (failed(verifyPrologue(op, getNormGamma(), getNormBeta(), eps,
                            getInputActivation(), geometry.channels,
                            getInputQuant().has_value())))
    return failure();
  if (std::optional<IGemmConfigAttr> config = getConfig()) {
    if (std::optional<NVFP4Attr> quant = getInputQuant()) {
      int64_t blockSize = quant->getBlockSize();
      if (config->getTileK() % blockSize != 0)
        return emitOpError()
               << "config tile_k = " << config->getTileK()
               << " must be a multiple of the NVFP4 block size " << blockSize
               << " (tile loads quantize whole blocks)";
      int64_t sliceK = geometry.gemmK() / geometry.window[0];
      if (config->getKOrder() == KOrder::qslice_outer &&
          sliceK % blockSize != 0)
        return emitOpError()
               << "k_order = qslice_outer splits NVFP4 blocks: R*S*C = "
               << sliceK << " is not a multiple of the block size "
               << blockSize;
    }
  }
  return success();
}

void ConvOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  getDpsEffects(*this, /*initIsRead=*/!getOverwrite(), effects);
}

namespace {
/// A convolution whose destination is a zero `linalg.fill` (or any fill, when
/// the destination is not read) writes into the fill's destination directly:
/// `result = 0 + conv` becomes `overwrite`, and the fill disappears.
struct FoldFillIntoConvInit : OpRewritePattern<ConvOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ConvOp conv,
                                PatternRewriter &rewriter) const override {
    if (!conv.hasTensorSemantics())
      return failure();
    auto fill = conv.getInit().getDefiningOp<linalg::FillOp>();
    if (!fill)
      return rewriter.notifyMatchFailure(conv, "init is not a linalg.fill");
    if (!conv.getOverwrite() &&
        !matchPattern(fill.getInputs()[0], m_AnyZeroFloat()))
      return rewriter.notifyMatchFailure(conv, "init fill is not zero");
    rewriter.modifyOpInPlace(conv, [&] {
      conv.getInitMutable().assign(fill.getOutputs()[0]);
      conv.setOverwrite(true);
    });
    return success();
  }
};
} // namespace

void ConvOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                         MLIRContext *context) {
  results.add<FoldFillIntoConvInit>(context);
}

//===----------------------------------------------------------------------===//
// QuantizeOp
//===----------------------------------------------------------------------===//

LogicalResult QuantizeOp::verify() {
  Operation *op = getOperation();
  if (failed(verifyDpsForm(op, getInit())) ||
      failed(verifySameComputeType(op, getInput(), getInit())))
    return failure();
  auto inType = cast<ShapedType>(getInput().getType());
  auto outType = cast<ShapedType>(getInit().getType());
  if (failed(verifyCompatibleShape(outType.getShape(), inType.getShape())))
    return emitOpError() << "outs shape " << formatShape(outType.getShape())
                         << " must match the input shape "
                         << formatShape(inType.getShape());
  if (llvm::is_contained(inType.getShape(), 0))
    return emitOpError() << "input must not be empty, got shape "
                         << formatShape(inType.getShape());
  if (failed(verifyElementCount(op, getInput(), "input")))
    return failure();
  ArrayRef<int64_t> axes = getBlockAxes();
  if (axes.empty())
    return emitOpError("block_axes must name at least one dimension");
  for (auto [i, axis] : llvm::enumerate(axes)) {
    if (axis < 0 || axis >= inType.getRank())
      return emitOpError() << "block axis " << axis
                           << " is out of range for rank " << inType.getRank();
    if (i > 0 && axis != axes[i - 1] + 1)
      return emitOpError("block_axes must be increasing and contiguous "
                         "(blocks run along their row-major flattening)");
  }
  for (int64_t axis : axes)
    if (inType.isDynamicDim(axis))
      return emitOpError() << "block axis " << axis << " must be static";
  return success();
}

void QuantizeOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  getDpsEffects(*this, /*initIsRead=*/false, effects);
}

//===----------------------------------------------------------------------===//
// PrologueOp
//===----------------------------------------------------------------------===//

LogicalResult PrologueOp::verify() {
  Operation *op = getOperation();
  if (failed(verifyDpsForm(op, getInit())) ||
      failed(verifyRank(op, getInput(), "input", 5)) ||
      failed(verifyElementCount(op, getInput(), "input")) ||
      failed(verifySameComputeType(op, getInput(), getInit())))
    return failure();
  auto inType = cast<ShapedType>(getInput().getType());
  auto outType = cast<ShapedType>(getInit().getType());
  if (failed(verifyShapeMatches(op, outType.getShape(), inType.getShape(),
                                "outs")))
    return failure();
  if (inType.isDynamicDim(4))
    return emitOpError("the channel dimension of the input must be static");
  if (!getNormGamma() && getInputActivation() == Activation::none)
    return emitOpError("needs rms_norm or an input_activation (an empty "
                       "prologue is a copy)");
  std::optional<APFloat> eps;
  if (FloatAttr attr = getNormEpsAttr())
    eps = attr.getValue();
  return verifyPrologue(op, getNormGamma(), getNormBeta(), eps,
                        getInputActivation(), inType.getDimSize(4),
                        /*quantized=*/false);
}

void PrologueOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  getDpsEffects(*this, /*initIsRead=*/false, effects);
}

//===----------------------------------------------------------------------===//
// EpilogueOp
//===----------------------------------------------------------------------===//

LogicalResult EpilogueOp::verify() {
  Operation *op = getOperation();
  auto sumRanked = dyn_cast<ShapedType>(getSum().getType());
  // A stack of split-K partial sums has one more (leading) dimension.
  bool splitStack =
      sumRanked && sumRanked.hasRank() && sumRanked.getRank() == 6;
  if (failed(verifyDpsForm(op, getInit())) ||
      failed(verifyRank(op, getSum(), "sum", splitStack ? 6 : 5)) ||
      failed(verifyRank(op, getInit(), "outs", 5)) ||
      failed(verifyElementCount(op, getSum(), "sum")) ||
      failed(verifyElementCount(op, getInit(), "outs")))
    return failure();
  auto sumType = cast<ShapedType>(getSum().getType());
  auto outType = cast<ShapedType>(getInit().getType());
  if (!sumType.getElementType().isF32())
    return emitOpError() << "sum element type must be f32, got "
                         << sumType.getElementType();
  if (!isSupportedComputeType(outType.getElementType()))
    return emitOpError() << "outs element type must be bf16, f16 or f32, got "
                         << outType.getElementType();
  ArrayRef<int64_t> sumShape = sumType.getShape();
  if (splitStack) {
    // The partial sums are added slab by slab: their count must be known.
    if (sumType.isDynamicDim(0) || sumType.getDimSize(0) < 1)
      return emitOpError() << "a rank-6 sum stacks split-K partial sums and "
                              "needs a static, positive leading dimension, "
                              "got shape "
                           << formatShape(sumShape);
    sumShape = sumShape.drop_front();
  }
  if (failed(verifyShapeMatches(op, outType.getShape(), sumShape, "outs")))
    return failure();
  if (outType.isDynamicDim(4))
    return emitOpError("the filter dimension of outs must be static");
  if (llvm::is_contained(outType.getShape(), 0))
    return emitOpError() << "outs must not be empty, got shape "
                         << formatShape(outType.getShape());
  return failure(
      failed(verifyBias(op, getBias(), outType.getDimSize(4),
                        outType.getElementType())) ||
      failed(verifyResidual(op, getResidual(), outType.getShape(),
                            outType.getElementType(), getActivation())));
}

void EpilogueOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  getDpsEffects(*this, /*initIsRead=*/!getOverwrite(), effects);
}

#define GET_OP_CLASSES
#include "conv3d/IR/Conv3dOps.cpp.inc"
