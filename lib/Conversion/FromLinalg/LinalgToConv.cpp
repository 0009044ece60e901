//===- LinalgToConv.cpp - import linalg 3-D convolutions ------------------===//
//
// How a host compiler (IREE, torch-mlir output, a hand-written pipeline)
// hands convolutions over: the named linalg 3-D convolutions on tensors
// become conv3d.conv (the depthwise ones a grouped conv3d.conv). Padding that a
// front end materialized as a zero `tensor.pad` goes back into the op's padding
// attribute, so causal temporal padding never costs a copy. What video VAE
// decoders put in front of a causal convolution folds the same way: a
// `tensor.concat` of cached frames and the new input along depth becomes the
// history operand, and an elementwise activation of the input becomes the input
// prologue's, and an RMS norm over the channels (a sum of squares and an
// elementwise map) the prologue's norm.
//
//===----------------------------------------------------------------------===//

#include "conv3d/Conversion/Passes.h"
#include "conv3d/IR/Conv3dOps.h"
#include "conv3d/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <tuple>

namespace mlir::conv3d {
#define GEN_PASS_DEF_CONV3DFROMLINALG
#include "conv3d/Conversion/Passes.h.inc"
} // namespace mlir::conv3d

using namespace mlir;
using namespace mlir::conv3d;

/// Reads a 3-element strides/dilations attribute of a linalg convolution.
static std::optional<SmallVector<int64_t>>
getTriple(DenseIntElementsAttr attr) {
  if (!attr)
    return SmallVector<int64_t>{1, 1, 1};
  SmallVector<int64_t> values(attr.getValues<int64_t>());
  if (values.size() != 3)
    return std::nullopt;
  return values;
}

/// Whether the element types of a linalg convolution are ones conv3d.conv
/// computes with (input and filter the same bf16/f16/f32, output f32 or the
/// input type).
static bool hasSupportedTypes(Value input, Value filter, Value init) {
  Type in = getElementTypeOrSelf(input.getType());
  Type out = getElementTypeOrSelf(init.getType());
  return isSupportedComputeType(in) &&
         getElementTypeOrSelf(filter.getType()) == in &&
         (out.isF32() || out == in);
}

/// If `input` is a zero-valued tensor.pad that pads only `spatialDims` with
/// static amounts, returns its source and adds the padding to `padding`
/// ([d_lo, d_hi, h_lo, h_hi, w_lo, w_hi]).
static Value foldZeroPad(Value input, ArrayRef<int64_t> spatialDims,
                         SmallVectorImpl<int64_t> &padding) {
  auto pad = input.getDefiningOp<tensor::PadOp>();
  if (!pad || pad.getNofold())
    return input;
  Value padValue = pad.getConstantPaddingValue();
  if (!padValue || !matchPattern(padValue, m_AnyZeroFloat()))
    return input;
  SmallVector<int64_t> low = llvm::to_vector(pad.getStaticLow());
  SmallVector<int64_t> high = llvm::to_vector(pad.getStaticHigh());
  if (llvm::any_of(low, ShapedType::isDynamic) ||
      llvm::any_of(high, ShapedType::isDynamic))
    return input;
  for (int64_t dim = 0, rank = low.size(); dim < rank; ++dim)
    if (!llvm::is_contained(spatialDims, dim) && (low[dim] || high[dim]))
      return input; // batch or channel padding is not a convolution padding
  for (auto [axis, dim] : llvm::enumerate(spatialDims)) {
    padding[2 * axis] += low[dim];
    padding[2 * axis + 1] += high[dim];
  }
  return pad.getSource();
}

static std::string formatShape(ArrayRef<int64_t> shape) {
  std::string text;
  for (int64_t size : shape)
    text += (text.empty() ? "" : "x") +
            (ShapedType::isDynamic(size) ? "?" : std::to_string(size));
  return text;
}

/// Why conv3d.conv does not express the convolution, given shapes in its
/// order (NDHWC input, `layout` filter, NDHWF output) and the folded
/// padding; none when it does: the channel, filter and window sizes are
/// static, the geometry valid, and the output exactly as large as the
/// padded input gives. (linalg also accepts an input larger than the
/// output reads.)
static std::optional<std::string>
whyNotExpressible(ArrayRef<int64_t> inputShape, ArrayRef<int64_t> filterShape,
                  FilterLayout layout, ArrayRef<int64_t> strides,
                  ArrayRef<int64_t> dilations, ArrayRef<int64_t> padding,
                  ArrayRef<int64_t> outputShape, int64_t groups = 1) {
  auto toArray = [](ArrayRef<int64_t> values, auto &array) {
    llvm::copy(values, array.begin());
  };
  std::array<int64_t, 5> input, filter;
  std::array<int64_t, 3> stride, dilation;
  std::array<int64_t, 6> pad;
  toArray(inputShape, input);
  toArray(filterShape, filter);
  toArray(strides, stride);
  toArray(dilations, dilation);
  toArray(padding, pad);
  ConvGeometry g = ConvGeometry::fromShapes(input, filter, layout, stride,
                                            dilation, pad, groups);
  if (std::optional<std::string> problem = g.validate())
    return problem;
  for (auto [expected, actual] : llvm::zip_equal(g.outputShape(), outputShape))
    if (!ShapedType::isDynamic(expected) && !ShapedType::isDynamic(actual) &&
        expected != actual)
      return "its output is " + formatShape(outputShape) +
             " (NDHWF) where the padded input gives " +
             formatShape(g.outputShape()) +
             ": conv3d.conv reads the whole input, linalg only what the "
             "output needs";
  return std::nullopt;
}

static Value transpose(OpBuilder &b, Location loc, Value value,
                       ArrayRef<int64_t> permutation) {
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<OpFoldResult> sizes;
  for (int64_t dim : permutation)
    sizes.push_back(tensor::getMixedSize(b, loc, value, dim));
  Value empty = tensor::EmptyOp::create(b, loc, sizes, type.getElementType());
  return linalg::TransposeOp::create(b, loc, value, empty, permutation)
      .getResult()[0];
}

namespace {

/// How the operands of one of the imported linalg convolutions map onto
/// conv3d.conv's.
struct LinalgConvLayout {
  /// The input's D, H and W dimensions (those a folded tensor.pad may pad).
  std::array<int64_t, 3> spatialDims;
  /// conv3d.conv's dimension order (NDHWC, the filter's `filterLayout`,
  /// NDHWF) as dimensions of the linalg operands.
  std::array<int64_t, 5> toConvOrder;
  FilterLayout filterLayout;
};

/// linalg.conv_3d_ndhwc_dhwcf: conv3d.conv's own layouts with QRSCF.
constexpr LinalgConvLayout kNdhwcLayout{
    {1, 2, 3}, {0, 1, 2, 3, 4}, FilterLayout::qrscf};
/// linalg.conv_3d_ncdhw_fcdhw: channels move last (the filter FCDHW becomes
/// FQRSC).
constexpr LinalgConvLayout kNcdhwLayout{
    {2, 3, 4}, {0, 2, 3, 4, 1}, FilterLayout::fqrsc};

/// What the import reads off a linalg 3-D convolution it can take: the
/// input (after a folded zero pad), filter and destination in the linalg
/// op's layout, and the attributes of the conv3d.conv.
struct ImportedConv {
  Value input, filter, init;
  SmallVector<int64_t> strides, dilations, padding;
};

/// The host's choice of convolutions (ConvolutionHooks::shouldConvert);
/// null takes every one.
using ShouldConvertFn = std::function<bool(Operation *)>;

/// What every import reads off a linalg 3-D convolution `op` (dense or
/// depthwise): its operands on tensors of types conv3d.conv computes, its
/// strides and dilations, and a zero `tensor.pad` of the input's
/// `spatialDims` folded into the padding; or in `why`, why it cannot take
/// it. The filter's shape must be static: it gives the window and channels.
template <typename LinalgConvOp>
FailureOr<ImportedConv> analyzeOperands(LinalgConvOp op,
                                        ArrayRef<int64_t> spatialDims,
                                        std::string &why) {
  if (!op.hasPureTensorSemantics()) {
    why = "conv3d imports convolutions on tensors, not memrefs (import "
          "before bufferization)";
    return failure();
  }
  ImportedConv conv{
      op.getInputs()[0], op.getInputs()[1], op.getOutputs()[0], {}, {}, {}};
  if (!hasSupportedTypes(conv.input, conv.filter, conv.init)) {
    llvm::raw_string_ostream os(why);
    os << "conv3d computes bf16, f16 and f32 convolutions whose filter has "
          "the input's element type and whose output is f32 or the input's "
          "type; this one has a "
       << getElementTypeOrSelf(conv.input.getType()) << " input, a "
       << getElementTypeOrSelf(conv.filter.getType()) << " filter and a "
       << getElementTypeOrSelf(conv.init.getType()) << " output";
    return failure();
  }
  std::optional<SmallVector<int64_t>> strides = getTriple(op.getStrides());
  std::optional<SmallVector<int64_t>> dilations = getTriple(op.getDilations());
  if (!strides || !dilations) {
    why = "its strides and dilations must have 3 elements each";
    return failure();
  }
  if (!cast<ShapedType>(conv.filter.getType()).hasStaticShape()) {
    why = "its filter shape is dynamic; conv3d needs static window, channel "
          "and filter sizes";
    return failure();
  }
  conv.strides = std::move(*strides);
  conv.dilations = std::move(*dilations);
  conv.padding.assign(6, 0);
  conv.input = foldZeroPad(conv.input, spatialDims, conv.padding);
  return conv;
}

/// What conv3d.conv takes from `op`, or in `why`, why it cannot express it.
template <typename LinalgConvOp>
FailureOr<ImportedConv> analyzeImport(LinalgConvOp op,
                                      const LinalgConvLayout &layout,
                                      std::string &why) {
  FailureOr<ImportedConv> analyzed =
      analyzeOperands(op, layout.spatialDims, why);
  if (failed(analyzed))
    return failure();
  ImportedConv &conv = *analyzed;
  auto inConvOrder = [&](Value value) {
    ArrayRef<int64_t> shape = cast<ShapedType>(value.getType()).getShape();
    return llvm::map_to_vector(layout.toConvOrder,
                               [&](int64_t dim) { return shape[dim]; });
  };
  if (std::optional<std::string> problem =
          whyNotExpressible(inConvOrder(conv.input), inConvOrder(conv.filter),
                            layout.filterLayout, conv.strides, conv.dilations,
                            conv.padding, inConvOrder(conv.init))) {
    why = *problem;
    return failure();
  }
  return analyzed;
}

/// How one of linalg's depthwise 3-D convolutions maps onto a grouped
/// conv3d.conv with groups = C (filter f = c*M + m reads channel c, so group
/// f / M is channel c, as conv3d.conv's groups define it).
struct DepthwiseLayout {
  /// NCDHW input and output, CDHW filter (else NDHWC and DHWC[M]).
  bool channelsFirst;
  /// A channel multiplier dimension M after C (filter DHWCM, output
  /// NDHWCM).
  bool multiplier;
};

constexpr DepthwiseLayout kDepthwiseNdhwc{false, false};
constexpr DepthwiseLayout kDepthwiseNcdhw{true, false};
constexpr DepthwiseLayout kDepthwiseNdhwcm{false, true};

static Value reshape(OpBuilder &b, Location loc, Value value,
                     ArrayRef<int64_t> shape,
                     ArrayRef<ReassociationIndices> groups) {
  auto type = cast<RankedTensorType>(value.getType());
  auto result = RankedTensorType::get(shape, type.getElementType());
  if (result.getRank() < type.getRank())
    return tensor::CollapseShapeOp::create(b, loc, result, value, groups);
  return tensor::ExpandShapeOp::create(b, loc, result, value, groups);
}

/// What a grouped conv3d.conv takes from linalg depthwise convolution `op`
/// (the operands still in the linalg op's layout), or in `why`, why it
/// cannot express it.
template <typename DepthwiseOp>
FailureOr<ImportedConv> analyzeDepthwiseImport(DepthwiseOp op,
                                               const DepthwiseLayout &layout,
                                               std::string &why) {
  std::array<int64_t, 3> spatial = layout.channelsFirst
                                       ? std::array<int64_t, 3>{2, 3, 4}
                                       : std::array<int64_t, 3>{1, 2, 3};
  FailureOr<ImportedConv> analyzed = analyzeOperands(op, spatial, why);
  if (failed(analyzed))
    return failure();
  ImportedConv &conv = *analyzed;
  ArrayRef<int64_t> in = cast<ShapedType>(conv.input.getType()).getShape();
  ArrayRef<int64_t> out = cast<ShapedType>(conv.init.getType()).getShape();
  ArrayRef<int64_t> w = cast<ShapedType>(conv.filter.getType()).getShape();
  SmallVector<int64_t> input, filter, output;
  FilterLayout filterLayout = FilterLayout::qrscf;
  int64_t groups;
  if (layout.channelsFirst) {
    input = {in[0], in[2], in[3], in[4], in[1]};
    output = {out[0], out[2], out[3], out[4], out[1]};
    filter = {w[0], w[1], w[2], w[3], 1};
    filterLayout = FilterLayout::fqrsc;
    groups = w[0];
  } else {
    int64_t multiplier = layout.multiplier ? w[4] : 1;
    int64_t filters;
    if (llvm::MulOverflow(w[3], multiplier, filters)) {
      why = "its filter has more channels than conv3d supports";
      return failure();
    }
    input = llvm::to_vector(in);
    output = {out[0], out[1], out[2], out[3], filters};
    if (layout.multiplier && !ShapedType::isDynamic(out[4]) && out[4] != w[3]) {
      why = "its output has " + std::to_string(out[4]) +
            " channels where the filter has " + std::to_string(w[3]);
      return failure();
    }
    filter = {w[0], w[1], w[2], 1, filters};
    groups = w[3];
  }
  if (!ShapedType::isDynamic(input[4]) && input[4] != groups) {
    why = "its input has " + std::to_string(input[4]) +
          " channels where the filter has " + std::to_string(groups);
    return failure();
  }
  if (std::optional<std::string> problem =
          whyNotExpressible(input, filter, filterLayout, conv.strides,
                            conv.dilations, conv.padding, output, groups)) {
    why = *problem;
    return failure();
  }
  return analyzed;
}

/// analyzeImport of `op` if it is one of the imported convolutions.
static FailureOr<ImportedConv> analyzeAnyImport(Operation *op,
                                                std::string &why) {
  if (auto ndhwc = dyn_cast<linalg::Conv3DNdhwcDhwcfOp>(op))
    return analyzeImport(ndhwc, kNdhwcLayout, why);
  if (auto ncdhw = dyn_cast<linalg::Conv3DNcdhwFcdhwOp>(op))
    return analyzeImport(ncdhw, kNcdhwLayout, why);
  if (auto dw = dyn_cast<linalg::DepthwiseConv3DNdhwcDhwcOp>(op))
    return analyzeDepthwiseImport(dw, kDepthwiseNdhwc, why);
  if (auto dw = dyn_cast<linalg::DepthwiseConv3DNcdhwCdhwOp>(op))
    return analyzeDepthwiseImport(dw, kDepthwiseNcdhw, why);
  if (auto dw = dyn_cast<linalg::DepthwiseConv3DNdhwcDhwcmOp>(op))
    return analyzeDepthwiseImport(dw, kDepthwiseNdhwcm, why);
  why = "not a convolution conv3d imports";
  return failure();
}

/// analyzeAnyImport as a pattern's match: a failure noted on `op` where the
/// host's hook keeps it or conv3d.conv cannot express it.
static FailureOr<ImportedConv>
matchImportable(Operation *op, PatternRewriter &rewriter,
                const ShouldConvertFn &shouldConvert) {
  if (shouldConvert && !shouldConvert(op))
    return rewriter.notifyMatchFailure(op, "left to the host by its hook");
  std::string why;
  FailureOr<ImportedConv> conv = analyzeAnyImport(op, why);
  if (failed(conv))
    return rewriter.notifyMatchFailure(op, why);
  return conv;
}

/// The conv3d.conv an import creates of `input`, `filter` and `init` (in
/// conv3d.conv's layouts) with `imported`'s strides, dilations and padding:
/// a plain convolution, without epilogue, prologue or quantization.
static Value createImportedConv(PatternRewriter &rewriter, Location loc,
                                const ImportedConv &imported, Value input,
                                Value filter, Value init,
                                FilterLayout filterLayout, bool overwrite,
                                int64_t groups = 1) {
  MLIRContext *context = rewriter.getContext();
  auto conv =
      ConvOp::create(rewriter, loc, TypeRange{init.getType()}, input, filter,
                     /*bias=*/Value(), /*residual=*/Value(), /*amax=*/Value(),
                     init, rewriter.getDenseI64ArrayAttr(imported.strides),
                     rewriter.getDenseI64ArrayAttr(imported.dilations),
                     rewriter.getDenseI64ArrayAttr(imported.padding),
                     FilterLayoutAttr::get(context, filterLayout),
                     ActivationAttr::get(context, Activation::none),
                     /*input_quant=*/NVFP4Attr(),
                     overwrite ? rewriter.getUnitAttr() : UnitAttr(),
                     /*config=*/IGemmConfigAttr());
  conv.setGroupsAttr(rewriter.getI64IntegerAttr(groups));
  return conv.getResult()[0];
}

/// A pattern importing the linalg convolution `LinalgConvOp`: the host's
/// hook and the analysis decide (matchImportable), `replacement` builds what
/// replaces the op from what the analysis read.
template <typename LinalgConvOp>
struct ImportPattern : OpRewritePattern<LinalgConvOp> {
  ImportPattern(MLIRContext *context, ShouldConvertFn shouldConvert)
      : OpRewritePattern<LinalgConvOp>(context),
        shouldConvert(std::move(shouldConvert)) {}

  LogicalResult matchAndRewrite(LinalgConvOp op,
                                PatternRewriter &rewriter) const final {
    FailureOr<ImportedConv> matched =
        matchImportable(op, rewriter, shouldConvert);
    if (failed(matched))
      return failure();
    rewriter.replaceOp(op, replacement(op, *matched, rewriter));
    return success();
  }

  /// The value that replaces `op`'s result.
  virtual Value replacement(LinalgConvOp op, const ImportedConv &conv,
                            PatternRewriter &rewriter) const = 0;

  ShouldConvertFn shouldConvert;
};

/// linalg.conv_3d_ndhwc_dhwcf: the same layouts as conv3d.conv with QRSCF.
struct ImportNdhwcConv : ImportPattern<linalg::Conv3DNdhwcDhwcfOp> {
  using ImportPattern::ImportPattern;

  Value replacement(linalg::Conv3DNdhwcDhwcfOp op, const ImportedConv &conv,
                    PatternRewriter &rewriter) const override {
    return createImportedConv(rewriter, op.getLoc(), conv, conv.input,
                              conv.filter, conv.init, FilterLayout::qrscf,
                              /*overwrite=*/false);
  }
};

/// linalg.conv_3d_ncdhw_fcdhw: transposes to NDHWC and FQRSC (the filter
/// needs only its channel dimension moved last), and the result back.
struct ImportNcdhwConv : ImportPattern<linalg::Conv3DNcdhwFcdhwOp> {
  using ImportPattern::ImportPattern;

  Value replacement(linalg::Conv3DNcdhwFcdhwOp op, const ImportedConv &matched,
                    PatternRewriter &rewriter) const override {
    Value input = matched.input, filter = matched.filter, init = matched.init;
    Location loc = op.getLoc();
    ArrayRef<int64_t> toChannelsLast = kNcdhwLayout.toConvOrder;
    const SmallVector<int64_t> toChannelsFirst = {0, 4, 1, 2, 3};
    Value ndhwcInput = transpose(rewriter, loc, input, toChannelsLast);
    Value fqrscFilter = transpose(rewriter, loc, filter, toChannelsLast);
    // A zero-filled destination needs no transpose: the conv overwrites.
    Value ndhwfInit;
    bool overwrite = false;
    auto fill = init.getDefiningOp<linalg::FillOp>();
    if (fill && matchPattern(fill.getInputs()[0], m_AnyZeroFloat())) {
      SmallVector<OpFoldResult> sizes;
      for (int64_t dim : toChannelsLast)
        sizes.push_back(tensor::getMixedSize(rewriter, loc, init, dim));
      ndhwfInit = tensor::EmptyOp::create(rewriter, loc, sizes,
                                          getElementTypeOrSelf(init.getType()));
      overwrite = true;
    } else {
      ndhwfInit = transpose(rewriter, loc, init, toChannelsLast);
    }
    Value conv =
        createImportedConv(rewriter, loc, matched, ndhwcInput, fqrscFilter,
                           ndhwfInit, FilterLayout::fqrsc, overwrite);
    // A zero-filled destination is fully overwritten: transpose into the
    // fill's own destination rather than computing the fill.
    Value dest = overwrite ? fill.getOutputs()[0] : init;
    return linalg::TransposeOp::create(rewriter, loc, conv, dest,
                                       toChannelsFirst)
        .getResult()[0];
  }
};

/// linalg.depthwise_conv_3d_ndhwc_dhwc, _ncdhw_cdhw and _ndhwc_dhwcm: a
/// conv3d.conv with groups = C. The filter gains its one channel per group
/// by a reshape (no copy), the multiplier's output dims collapse into F;
/// NCDHW operands are transposed as for linalg.conv_3d_ncdhw_fcdhw.
template <typename DepthwiseOp>
struct ImportDepthwiseConv : ImportPattern<DepthwiseOp> {
  ImportDepthwiseConv(MLIRContext *context, const DepthwiseLayout &layout,
                      ShouldConvertFn shouldConvert)
      : ImportPattern<DepthwiseOp>(context, std::move(shouldConvert)),
        layout(layout) {}

  Value replacement(DepthwiseOp op, const ImportedConv &matched,
                    PatternRewriter &rewriter) const override {
    Value input = matched.input, filter = matched.filter, init = matched.init;
    Location loc = op.getLoc();
    auto filterShape = cast<ShapedType>(filter.getType()).getShape();
    const SmallVector<int64_t> toChannelsLast = {0, 2, 3, 4, 1};
    const SmallVector<int64_t> toChannelsFirst = {0, 4, 1, 2, 3};
    Value convInput = input, convFilter, convInit = init;
    FilterLayout filterLayout = FilterLayout::qrscf;
    int64_t channels, filters;
    if (layout.channelsFirst) {
      // CDHW -> C x D x H x W x 1: FQRSC with one channel per group.
      channels = filters = filterShape[0];
      convInput = transpose(rewriter, loc, input, toChannelsLast);
      convFilter = reshape(
          rewriter, loc, filter,
          {filterShape[0], filterShape[1], filterShape[2], filterShape[3], 1},
          {{0}, {1}, {2}, {3, 4}});
      convInit = transpose(rewriter, loc, init, toChannelsLast);
      filterLayout = FilterLayout::fqrsc;
    } else {
      // DHWC[M] -> D x H x W x 1 x C*M.
      channels = filterShape[3];
      filters = layout.multiplier ? channels * filterShape[4] : channels;
      Value flat = filter;
      if (layout.multiplier)
        flat =
            reshape(rewriter, loc, filter,
                    {filterShape[0], filterShape[1], filterShape[2], filters},
                    {{0}, {1}, {2}, {3, 4}});
      convFilter =
          reshape(rewriter, loc, flat,
                  {filterShape[0], filterShape[1], filterShape[2], 1, filters},
                  {{0}, {1}, {2}, {3, 4}});
      if (layout.multiplier) {
        auto initShape = cast<ShapedType>(init.getType()).getShape();
        convInit = reshape(
            rewriter, loc, init,
            {initShape[0], initShape[1], initShape[2], initShape[3], filters},
            {{0}, {1}, {2}, {3}, {4, 5}});
      }
    }
    Value result =
        createImportedConv(rewriter, loc, matched, convInput, convFilter,
                           convInit, filterLayout, /*overwrite=*/false,
                           /*groups=*/channels);
    if (layout.channelsFirst)
      result = linalg::TransposeOp::create(rewriter, loc, result, init,
                                           toChannelsFirst)
                   .getResult()[0];
    else if (layout.multiplier)
      result = reshape(rewriter, loc, result,
                       cast<ShapedType>(init.getType()).getShape(),
                       {{0}, {1}, {2}, {3}, {4, 5}});
    return result;
  }

  DepthwiseLayout layout;
};

/// conv(concat(h, x) along depth)  ==>  conv(x) with history h. The
/// concatenation is never materialized; padding keeps applying to it. Not
/// when the conv already has a history or a prologue (which would then
/// apply to h as well), nor for concatenations of more than two tensors.
struct FoldConcatIntoHistory : OpRewritePattern<ConvOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ConvOp conv,
                                PatternRewriter &rewriter) const override {
    if (!conv.hasTensorSemantics() || conv.hasHistoryOrPrologue())
      return rewriter.notifyMatchFailure(conv, "tensor conv without history "
                                               "or prologue expected");
    auto concat = conv.getInput().getDefiningOp<tensor::ConcatOp>();
    if (!concat || concat.getDim() != 1 || concat.getInputs().size() != 2)
      return rewriter.notifyMatchFailure(
          conv, "input is not a concatenation of two tensors along depth");
    Value history = concat.getInputs()[0], input = concat.getInputs()[1];
    if (getElementTypeOrSelf(history.getType()) !=
        getElementTypeOrSelf(input.getType()))
      return rewriter.notifyMatchFailure(conv, "mixed element types");
    rewriter.modifyOpInPlace(conv, [&] {
      conv.getInputMutable().assign(input);
      conv.getHistoryMutable().assign(history);
    });
    return success();
  }
};

/// conv(act(x)) with an elementwise activation generic  ==>  conv(x) with
/// input_activation = act, applied as the input is loaded. The history, if
/// any, is not the generic's output, so it stays untransformed, as the
/// prologue's semantics say; the halo stays zero (act(0) = 0 for ReLU, SiLU
/// and GELU-tanh, so a pad after the activation folds either way).
struct FoldActivationIntoPrologue : OpRewritePattern<ConvOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ConvOp conv,
                                PatternRewriter &rewriter) const override {
    if (!conv.hasTensorSemantics() || conv.hasPrologue() ||
        conv.getInputQuant())
      return rewriter.notifyMatchFailure(
          conv, "tensor conv without prologue or quantization expected");
    auto generic = conv.getInput().getDefiningOp<linalg::GenericOp>();
    if (!generic || generic.getNumDpsInputs() != 1 ||
        generic.getNumDpsInits() != 1 || generic.getNumResults() != 1 ||
        generic.getNumParallelLoops() != generic.getNumLoops() ||
        !llvm::all_of(generic.getIndexingMapsArray(),
                      [](AffineMap map) { return map.isIdentity(); }))
      return rewriter.notifyMatchFailure(conv, "input is not elementwise");
    Value source = generic.getDpsInputs()[0];
    if (source.getType() != conv.getInput().getType())
      return rewriter.notifyMatchFailure(conv, "activation changes the type");
    std::optional<Activation> activation =
        matchActivationBody(generic.getRegion().front());
    if (!activation)
      return rewriter.notifyMatchFailure(conv, "not an activation");
    rewriter.modifyOpInPlace(conv, [&] {
      conv.getInputMutable().assign(source);
      conv.setInputActivation(*activation);
    });
    return success();
  }
};

/// Whether `value` is a linalg.generic summing the squares of `input` over
/// its channels into a zero-filled N x D x H x W tensor.
static bool isSumOfSquaresOverChannels(Value value, Value input) {
  auto sum = value.getDefiningOp<linalg::GenericOp>();
  if (!sum || sum.getNumDpsInputs() != 1 || sum.getNumDpsInits() != 1 ||
      sum.getNumLoops() != 5 || sum.getNumReductionLoops() != 1 ||
      sum.getIteratorTypesArray().back() != utils::IteratorType::reduction ||
      sum.getDpsInputs()[0] != input)
    return false;
  MLIRContext *ctx = sum.getContext();
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  SmallVector<AffineMap> maps = sum.getIndexingMapsArray();
  if (!maps[0].isIdentity() ||
      maps[1] != AffineMap::get(5, 0, {d(0), d(1), d(2), d(3)}, ctx))
    return false;
  auto fill = sum.getDpsInits()[0].getDefiningOp<linalg::FillOp>();
  if (!fill || !matchPattern(fill.getInputs()[0], m_AnyZeroFloat()))
    return false;
  // acc + x^2, checked at a few points.
  Block &body = sum.getRegion().front();
  for (auto [x, acc] :
       {std::pair{1.5, 0.25}, std::pair{-3.0, 7.0}, std::pair{0.5, -2.0}}) {
    std::optional<double> y = evaluateScalarBody(body, {x, acc});
    if (!y || std::fabs(*y - (acc + x * x)) > 1e-6 * (1 + std::fabs(*y)))
      return false;
  }
  return true;
}

/// conv(rms_norm(x)) with the norm as linalg: a sum of the squares of x
/// over the channels (a reduction generic into a zero fill) and an
/// elementwise generic of (x, sum, gamma[, beta]) computing
/// x * rsqrt(sum / C + eps) * gamma (+ beta)  ==>  conv(x) with the
/// rms_norm prologue; eps is read off the body, which is then checked at
/// several points. Before an activation folded into the conv (the prologue
/// normalizes first), not after another norm, a history is fine (the norm
/// is of the input only).
struct FoldRmsNormIntoPrologue : OpRewritePattern<ConvOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ConvOp conv,
                                PatternRewriter &rewriter) const override {
    if (!conv.hasTensorSemantics() || conv.getNormGamma() ||
        conv.getInputQuant())
      return rewriter.notifyMatchFailure(
          conv, "tensor conv without norm or quantization expected");
    auto norm = conv.getInput().getDefiningOp<linalg::GenericOp>();
    if (!norm || norm.getNumDpsInits() != 1 || norm.getNumResults() != 1 ||
        norm.getNumLoops() != 5 ||
        norm.getNumParallelLoops() != norm.getNumLoops() ||
        (norm.getNumDpsInputs() != 3 && norm.getNumDpsInputs() != 4))
      return rewriter.notifyMatchFailure(conv, "input is not a norm generic");
    MLIRContext *ctx = conv.getContext();
    auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
    SmallVector<AffineMap> maps = norm.getIndexingMapsArray();
    AffineMap channel = AffineMap::get(5, 0, {d(4)}, ctx);
    bool hasBeta = norm.getNumDpsInputs() == 4;
    if (!maps[0].isIdentity() || maps.back() != maps[0] ||
        maps[1] != AffineMap::get(5, 0, {d(0), d(1), d(2), d(3)}, ctx) ||
        maps[2] != channel || (hasBeta && maps[3] != channel))
      return rewriter.notifyMatchFailure(conv, "not (x, sum, gamma, beta)");
    Value x = norm.getDpsInputs()[0];
    if (x.getType() != conv.getInput().getType() ||
        !isSumOfSquaresOverChannels(norm.getDpsInputs()[1], x))
      return rewriter.notifyMatchFailure(conv, "no sum of squares of x");
    Value gamma = norm.getDpsInputs()[2];
    Value beta = hasBeta ? norm.getDpsInputs()[3] : Value();
    for (Value vector : {gamma, beta})
      if (vector &&
          !isSupportedComputeType(getElementTypeOrSelf(vector.getType())))
        return rewriter.notifyMatchFailure(conv, "unsupported gamma or beta");
    int64_t channels = cast<ShapedType>(x.getType()).getDimSize(4);
    if (ShapedType::isDynamic(channels))
      return rewriter.notifyMatchFailure(conv, "dynamic channels");

    // y(x, s, g, b) = x * g / sqrt(s / C + eps) + b: at s = 0, x = g = 1,
    // b = 0, y = 1 / sqrt(eps).
    Block &body = norm.getRegion().front();
    auto evaluate = [&](double xv, double sv, double gv, double bv) {
      SmallVector<double> args = {xv, sv, gv};
      if (hasBeta)
        args.push_back(bv);
      return evaluateScalarBody(body, args);
    };
    std::optional<double> atZero = evaluate(1.0, 0.0, 1.0, 0.0);
    if (!atZero || !(*atZero > 0) || !std::isfinite(*atZero))
      return rewriter.notifyMatchFailure(conv, "not an RMS norm body");
    double eps = 1.0 / (*atZero * *atZero);
    for (auto [xv, sv, gv, bv] :
         {std::tuple{1.5, 3.0, 0.5, 0.25}, std::tuple{-2.0, 40.0, 1.25, -1.0},
          std::tuple{0.25, 0.01, -3.0, 2.0}}) {
      std::optional<double> y = evaluate(xv, sv, gv, bv);
      double expected =
          xv * gv / std::sqrt(sv / double(channels) + eps) + (hasBeta ? bv : 0);
      if (!y || std::fabs(*y - expected) > 1e-5 * (1 + std::fabs(expected)))
        return rewriter.notifyMatchFailure(conv, "not an RMS norm body");
    }
    if (!(eps > 0) || !std::isfinite(float(eps)) || float(eps) <= 0)
      return rewriter.notifyMatchFailure(conv, "eps is not positive in f32");
    rewriter.modifyOpInPlace(conv, [&] {
      conv.getInputMutable().assign(x);
      conv.getNormGammaMutable().assign(gamma);
      if (beta)
        conv.getNormBetaMutable().assign(beta);
      conv.setNormEpsAttr(rewriter.getF32FloatAttr(float(eps)));
    });
    return success();
  }
};

/// The linalg 3-D convolutions conv3d imports.
static bool isImportedLinalgConv3d(Operation *op) {
  return isa<linalg::Conv3DNdhwcDhwcfOp, linalg::Conv3DNcdhwFcdhwOp,
             linalg::DepthwiseConv3DNdhwcDhwcOp,
             linalg::DepthwiseConv3DNcdhwCdhwOp,
             linalg::DepthwiseConv3DNdhwcDhwcmOp>(op);
}

/// Whether `op` is a linalg 3-D convolution conv3d does not compute
/// (unbatched, quantized: anything but those it imports).
static bool isOtherLinalgConv3d(Operation *op) {
  StringRef name = op->getName().getStringRef();
  return isa<linalg::LinalgOp>(op) && !isImportedLinalgConv3d(op) &&
         (name.starts_with("linalg.conv_3d") ||
          name.starts_with("linalg.depthwise_conv_3d"));
}

struct Conv3dFromLinalgPass
    : mlir::conv3d::impl::Conv3dFromLinalgBase<Conv3dFromLinalgPass> {
  using Base::Base;
  Conv3dFromLinalgPass(const Conv3dFromLinalgOptions &options,
                       ShouldConvertFn shouldConvert)
      : Base(options), shouldConvert(std::move(shouldConvert)) {}

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateConvFromLinalgPatterns(patterns, shouldConvert);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    if (refuseUnconverted && failed(refuseLeftovers()))
      return signalPassFailure();
  }

  /// The pipelines' guarantee: no convolution reaches upstream's generic
  /// lowering unnoticed (it accumulates bf16 in bf16, and runs far slower).
  LogicalResult refuseLeftovers() {
    bool refused = false;
    getOperation()->walk([&](Operation *op) {
      if (isOtherLinalgConv3d(op)) {
        op->emitWarning() << "conv3d does not compute " << op->getName()
                          << " (it imports linalg.conv_3d_ndhwc_dhwcf, "
                             "linalg.conv_3d_ncdhw_fcdhw and the depthwise "
                             "linalg.depthwise_conv_3d_ndhwc_dhwc, "
                             "_ncdhw_cdhw and _ndhwc_dhwcm); upstream's "
                             "generic lowering computes it";
        return;
      }
      if (!isImportedLinalgConv3d(op) || (shouldConvert && !shouldConvert(op)))
        return;
      std::string why;
      if (succeeded(analyzeAnyImport(op, why)))
        why = "it was left unconverted";
      op->emitError() << "cannot import this convolution into conv3d: " << why
                      << " (the conv3d pipelines do not hand a convolution to "
                         "upstream's generic lowering)";
      refused = true;
    });
    return failure(refused);
  }

  ShouldConvertFn shouldConvert;
};

} // namespace

void mlir::conv3d::populateConvFromLinalgPatterns(
    RewritePatternSet &patterns, ShouldConvertFn shouldConvert) {
  patterns.add<ImportNdhwcConv, ImportNcdhwConv>(patterns.getContext(),
                                                 shouldConvert);
  patterns.add<ImportDepthwiseConv<linalg::DepthwiseConv3DNdhwcDhwcOp>>(
      patterns.getContext(), kDepthwiseNdhwc, shouldConvert);
  patterns.add<ImportDepthwiseConv<linalg::DepthwiseConv3DNcdhwCdhwOp>>(
      patterns.getContext(), kDepthwiseNcdhw, shouldConvert);
  patterns.add<ImportDepthwiseConv<linalg::DepthwiseConv3DNdhwcDhwcmOp>>(
      patterns.getContext(), kDepthwiseNdhwcm, shouldConvert);
  patterns.add<FoldConcatIntoHistory, FoldActivationIntoPrologue,
               FoldRmsNormIntoPrologue>(patterns.getContext());
  ConvOp::getCanonicalizationPatterns(patterns, patterns.getContext());
}

std::unique_ptr<Pass>
mlir::conv3d::createConv3dFromLinalg(ShouldConvertFn shouldConvert) {
  return createConv3dFromLinalg(Conv3dFromLinalgOptions{},
                                std::move(shouldConvert));
}

std::unique_ptr<Pass>
mlir::conv3d::createConv3dFromLinalg(const Conv3dFromLinalgOptions &options,
                                     ShouldConvertFn shouldConvert) {
  return std::make_unique<Conv3dFromLinalgPass>(options,
                                                std::move(shouldConvert));
}
