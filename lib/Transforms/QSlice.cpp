//===- QSlice.cpp - conv3d-qslice -----------------------------------------===//
//
// For each depth tap q, the output depths it contributes to form one range
// [lo_q, hi_q) (ConvGeometry::validOutputRange): there the input depth
// do*sd - pad_lo + q*dd is inside the tensor; elsewhere the tap reads only
// the padding halo. Both strategies exploit that:
//
// - fused keeps one kernel and only reorders its K loop (k_order =
//   qslice_outer); the implicit GEMM skips a slice for a tile whose rows
//   all lie outside [lo_q, hi_q).
// - separate emits, per q with a non-empty range, a convolution with a
//   one-deep window over exactly that range: its input is the depth slice
//   starting at lo_q*sd - pad_lo + q*dd with stride sd and no depth padding,
//   and it accumulates into the matching slice of an f32 buffer. One
//   conv3d.epilogue then applies bias, activation, residual and the cast.
//
// Sums stay in f32 until that single final rounding.
//
//===----------------------------------------------------------------------===//

#include "conv3d/Target/Families.h"
#include "conv3d/Transforms/ConfigHeuristics.h"
#include "conv3d/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::conv3d {
#define GEN_PASS_DEF_CONV3DQSLICE
#include "conv3d/Transforms/Passes.h.inc"
} // namespace mlir::conv3d

using namespace mlir;
using namespace mlir::conv3d;

bool mlir::conv3d::qsliceFusionSkipsWork(const ConvGeometry &g) {
  int64_t outDepth = g.outputSize(kDepth);
  for (int64_t q = 0; q < g.window[kDepth]; ++q) {
    auto [lo, hi] = g.validOutputRange(kDepth, q);
    if (lo != 0 || hi != outDepth)
      return true;
  }
  return false;
}

/// Why NVFP4 blocks forbid splitting K at slice boundaries, or none.
static std::optional<std::string> quantBlocksStraddleSlices(ConvOp conv) {
  std::optional<NVFP4Attr> quant = conv.getInputQuant();
  if (!quant)
    return std::nullopt;
  ConvGeometry g = conv.getGeometry();
  int64_t sliceK = g.gemmK() / g.window[kDepth];
  if (sliceK % quant->getBlockSize() == 0)
    return std::nullopt;
  return "NVFP4 blocks straddle depth slices (R*S*C = " +
         std::to_string(sliceK) + " is not a multiple of the block size " +
         std::to_string(quant->getBlockSize()) + ")";
}

static SmallVector<OpFoldResult> indexAttrs(OpBuilder &b,
                                            ArrayRef<int64_t> values) {
  return llvm::to_vector(llvm::map_range(
      values, [&](int64_t v) -> OpFoldResult { return b.getIndexAttr(v); }));
}

static Value slice(OpBuilder &b, Location loc, Value source,
                   ArrayRef<int64_t> offsets, ArrayRef<int64_t> sizes) {
  SmallVector<int64_t> strides(offsets.size(), 1);
  return tensor::ExtractSliceOp::create(b, loc, source, indexAttrs(b, offsets),
                                        indexAttrs(b, sizes),
                                        indexAttrs(b, strides));
}

FailureOr<Value>
mlir::conv3d::decomposeIntoSeparateQSlices(RewriterBase &rewriter,
                                           ConvOp conv) {
  if (!conv.hasTensorSemantics())
    return rewriter.notifyMatchFailure(conv, "expected the tensor form");
  ConvGeometry g = conv.getGeometry();
  if (!g.hasStaticShape())
    return rewriter.notifyMatchFailure(conv, "needs static shapes");
  if (g.window[kDepth] == 1)
    return rewriter.notifyMatchFailure(conv, "already one slice deep");
  if (conv.hasHistoryOrPrologue())
    return rewriter.notifyMatchFailure(
        conv, "slices of a history operand or an input prologue");
  if (conv.hasPackedFilter())
    return rewriter.notifyMatchFailure(conv, "a packed NVFP4 filter");
  if (std::optional<std::string> problem = quantBlocksStraddleSlices(conv))
    return rewriter.notifyMatchFailure(conv, *problem);

  Location loc = conv.getLoc();
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(conv);
  Type f32 = rewriter.getF32Type();
  std::array<int64_t, 5> outShape = g.outputShape();
  auto accType = RankedTensorType::get(outShape, f32);

  // The f32 accumulator starts from the destination (or zero).
  Value acc;
  if (conv.getOverwrite()) {
    Value empty = tensor::EmptyOp::create(rewriter, loc, outShape, f32);
    Value zero =
        arith::ConstantOp::create(rewriter, loc, rewriter.getZeroAttr(f32));
    acc = linalg::FillOp::create(rewriter, loc, zero, empty).getResult(0);
  } else if (getElementTypeOrSelf(conv.getInit().getType()).isF32()) {
    acc = conv.getInit();
  } else {
    // A bf16/f16 destination is widened once (an exact conversion).
    Value empty = tensor::EmptyOp::create(rewriter, loc, outShape, f32);
    AffineMap id = rewriter.getMultiDimIdentityMap(5);
    acc =
        linalg::GenericOp::create(
            rewriter, loc, TypeRange{accType}, ValueRange{conv.getInit()},
            ValueRange{empty}, ArrayRef<AffineMap>{id, id},
            SmallVector<utils::IteratorType>(5, utils::IteratorType::parallel),
            [](OpBuilder &b, Location l, ValueRange args) {
              Value wide = arith::ExtFOp::create(b, l, b.getF32Type(), args[0]);
              linalg::YieldOp::create(b, l, wide);
            })
            .getResult(0);
  }

  std::array<int64_t, 5> inShape = g.inputShape();
  std::array<int64_t, 5> filterShape = g.filterShape(conv.getFilterLayout());
  bool qrscf = conv.getFilterLayout() == FilterLayout::qrscf;
  IGemmConfigAttr sliceConfig;
  if (std::optional<IGemmConfigAttr> config = conv.getConfig())
    sliceConfig = IGemmConfigAttr::get(
        rewriter.getContext(), config->getTileM(), config->getTileN(),
        config->getTileK(), config->getStages(), config->getWarpsM(),
        config->getWarpsN(), KOrder::taps_outer, config->getSplitK(),
        config->getKernel(), config->getSchedule(), config->getClusterM(),
        config->getMainloop());

  for (int64_t q = 0; q < g.window[kDepth]; ++q) {
    auto [lo, hi] = g.validOutputRange(kDepth, q);
    if (lo == hi)
      continue;
    int64_t inStart =
        lo * g.strides[kDepth] - g.padLow[kDepth] + q * g.dilations[kDepth];
    int64_t inCount = (hi - lo - 1) * g.strides[kDepth] + 1;
    Value input =
        slice(rewriter, loc, conv.getInput(), {0, inStart, 0, 0, 0},
              {inShape[0], inCount, inShape[2], inShape[3], inShape[4]});
    Value filter = qrscf
                       ? slice(rewriter, loc, conv.getFilter(), {q, 0, 0, 0, 0},
                               {1, filterShape[1], filterShape[2],
                                filterShape[3], filterShape[4]})
                       : slice(rewriter, loc, conv.getFilter(), {0, q, 0, 0, 0},
                               {filterShape[0], 1, filterShape[2],
                                filterShape[3], filterShape[4]});
    SmallVector<int64_t> accOffsets = {0, lo, 0, 0, 0};
    SmallVector<int64_t> accSizes = {outShape[0], hi - lo, outShape[2],
                                     outShape[3], outShape[4]};
    Value accSlice = slice(rewriter, loc, acc, accOffsets, accSizes);
    SmallVector<int64_t> padding = llvm::to_vector(g.padding());
    padding[0] = padding[1] = 0;
    SmallVector<int64_t> dilations = {1, g.dilations[1], g.dilations[2]};
    auto sliceConv = ConvOp::create(
        rewriter, loc, TypeRange{accSlice.getType()}, input, filter,
        /*bias=*/Value(), /*residual=*/Value(), conv.getAmax(), accSlice,
        conv.getStridesAttr(), rewriter.getDenseI64ArrayAttr(dilations),
        rewriter.getDenseI64ArrayAttr(padding), conv.getFilterLayoutAttr(),
        ActivationAttr::get(rewriter.getContext(), Activation::none),
        conv.getInputQuantAttr(), /*overwrite=*/UnitAttr(), sliceConfig);
    sliceConv.setGroupsAttr(conv.getGroupsAttr());
    SmallVector<int64_t> ones(5, 1);
    acc = tensor::InsertSliceOp::create(rewriter, loc, sliceConv.getResult()[0],
                                        acc, indexAttrs(rewriter, accOffsets),
                                        indexAttrs(rewriter, accSizes),
                                        indexAttrs(rewriter, ones));
  }

  auto epilogue = EpilogueOp::create(
      rewriter, loc, TypeRange{conv.getInit().getType()}, acc, conv.getBias(),
      conv.getResidual(), conv.getInit(), conv.getActivationAttr(),
      rewriter.getUnitAttr());
  rewriter.replaceOp(conv, epilogue.getResult()[0]);
  return epilogue.getResult()[0];
}

namespace {

struct QSlicePass : mlir::conv3d::impl::Conv3dQSliceBase<QSlicePass> {
  using Base::Base;

  void runOnOperation() override {
    if (strategy == QSliceStrategy::None)
      return;
    bool forced = strategy != QSliceStrategy::Auto;
    SmallVector<ConvOp> convs;
    getOperation()->walk([&](ConvOp conv) { convs.push_back(conv); });
    IRRewriter rewriter(&getContext());
    for (ConvOp conv : convs) {
      ConvGeometry g = conv.getGeometry();
      if (g.window[kDepth] == 1 || !g.hasStaticShape())
        continue;
      if (strategy == QSliceStrategy::Auto && !qsliceFusionSkipsWork(g))
        continue;
      // The block-scaled kernel walks the taps of a packed filter itself.
      if (conv.hasPackedFilter()) {
        if (forced) {
          conv.emitError() << "cannot apply the "
                           << stringifyQSliceStrategy(strategy)
                           << " Q-slice strategy to a convolution with a "
                              "packed NVFP4 filter (filter_quant)";
          return signalPassFailure();
        }
        continue;
      }
      if (std::optional<std::string> problem =
              quantBlocksStraddleSlices(conv)) {
        if (forced) {
          conv.emitError() << "cannot apply the "
                           << stringifyQSliceStrategy(strategy)
                           << " Q-slice strategy: " << *problem;
          return signalPassFailure();
        }
        continue;
      }
      if (strategy == QSliceStrategy::Separate) {
        if (conv.hasHistoryOrPrologue()) {
          conv.emitError("cannot apply the separate Q-slice strategy to a "
                         "convolution with a history operand or an input "
                         "prologue (the fused strategy takes them)");
          return signalPassFailure();
        }
        if (failed(decomposeIntoSeparateQSlices(rewriter, conv))) {
          conv.emitError("cannot decompose this convolution into separate "
                         "Q-slices (it must be on tensors)");
          return signalPassFailure();
        }
        continue;
      }
      // fused (or auto): reorder the K loop of the one kernel. The GPU
      // pipelines' depthwise kernel has no K loop: it skips halo taps per
      // window row itself.
      if (target != Target::cpu &&
          takesDepthwiseKernel(ConvProblem::fromConv(conv), target))
        continue;
      // Split-K ranges, the lockstep K steps of an sm90 cluster and the
      // halo mainloop's per-tile depth taps need the flat K order.
      IGemmConfigAttr config =
          conv.getConfig()
              ? *conv.getConfig()
              : selectIGemmConfigForConv(conv, target, selection, strategy);
      if (config.getSplitK() > 1 || config.getClusterM() > 1 ||
          config.getMainloop() == Mainloop::halo) {
        if (forced) {
          conv.emitError()
              << "cannot apply the fused Q-slice strategy: the config uses "
              << (config.getSplitK() > 1     ? "split_k > 1"
                  : config.getClusterM() > 1 ? "cluster_m = 2"
                                             : "mainloop = halo")
              << ", which needs k_order = taps_outer";
          return signalPassFailure();
        }
        continue;
      }
      conv.setConfigAttr(IGemmConfigAttr::get(
          &getContext(), config.getTileM(), config.getTileN(),
          config.getTileK(), config.getStages(), config.getWarpsM(),
          config.getWarpsN(), KOrder::qslice_outer, config.getSplitK(),
          config.getKernel(), config.getSchedule(), config.getClusterM(),
          config.getMainloop()));
    }
  }
};

} // namespace
