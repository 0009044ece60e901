//===- ApplyNVFP4Mode.cpp - conv3d-apply-nvfp4-mode -----------------------===//
//
// The one place the pipeline's NVFP4 mode acts on convolutions:
// - fake: a packed filter (filter_quant) is multiplied as its dequantized
//   values in the compute type, so it is unpacked by a linalg.generic
//   (code x E4M3 scale x amax / 2688, rounded to the input's type: exactly
//   the fake quantization of the filter it was packed from) and the
//   convolution loses filter_quant; every target then takes it.
// - real: a request for real FP4 arithmetic, so a convolution with an
//   NVFP4 operand that the block-scaled sm100 kernel cannot take is an
//   error naming why rather than a quiet fallback to fake quantization.
//   The checks are the kernel family's (sm100-block-scaled,
//   lib/Target/SM100/SM100BlockScaledFamily.cpp): both operands NVFP4 in
//   the block16 form, then its plan and its TMA maps. A convolution the kernel
//   takes gets its input quantization fused (a conv3d.quantize along the
//   channels feeding it becomes the convolution's `quantize`): the kernel packs
//   the original input itself (conv3d-lower-block-scaled-to-sm100).
//
//===----------------------------------------------------------------------===//

#include "conv3d/IR/Conv3dOps.h"
#include "conv3d/IR/ScalarEmitters.h"
#include "conv3d/Target/Families.h"
#include "conv3d/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::conv3d {
#define GEN_PASS_DEF_CONV3DAPPLYNVFP4MODE
#include "conv3d/Transforms/Passes.h.inc"
} // namespace mlir::conv3d

using namespace mlir;
using namespace mlir::conv3d;

namespace {

/// The NVFP4 block size of the convolution's input: fused (`quantize`) or
/// a conv3d.quantize along the channels feeding it; none if the input is
/// not quantized.
std::optional<int64_t> inputBlockSize(ConvOp conv) {
  if (std::optional<NVFP4Attr> quant = conv.getInputQuant())
    return quant->getBlockSize();
  if (auto quantize = conv.getInput().getDefiningOp<QuantizeOp>())
    if (quantize.getBlockAxes() == ArrayRef<int64_t>{4})
      return quantize.getFormat().getBlockSize();
  return std::nullopt;
}

/// Why the block-scaled sm100 kernel cannot multiply `conv`, which has an
/// NVFP4 operand, or none: its family's answer, the input's quantization
/// being fused or a conv3d.quantize feeding it.
std::optional<std::string> blockScaledProblem(ConvOp conv) {
  ConvProblem problem = ConvProblem::fromConv(conv);
  problem.quantBlockSize = inputBlockSize(conv);
  return getSM100BlockScaledFamily().canImplement(problem);
}

/// Real mode: the input quantization of `conv` (which the block-scaled
/// kernel takes) fused into it, so that the kernel's packing prepass reads
/// the original input. A conv3d.quantize with other users stays for them.
void fuseInputQuantization(RewriterBase &rewriter, ConvOp conv) {
  if (conv.getInputQuant())
    return;
  auto quantize = conv.getInput().getDefiningOp<QuantizeOp>();
  rewriter.modifyOpInPlace(conv, [&] {
    conv.getInputMutable().assign(quantize.getInput());
    conv.getAmaxMutable().assign(quantize.getAmax());
    conv.setInputQuantAttr(quantize.getFormat());
  });
  if (quantize->use_empty())
    rewriter.eraseOp(quantize);
}

/// The FQRSC filter of `conv` (tensor form, filter_quant) dequantized to
/// the input's element type.
Value unpackFilter(RewriterBase &rewriter, ConvOp conv) {
  Location loc = conv.getLoc();
  MLIRContext *ctx = rewriter.getContext();
  Type elem = getElementTypeOrSelf(conv.getInput().getType());
  auto codesType = cast<RankedTensorType>(conv.getFilter().getType());
  SmallVector<int64_t> shape(codesType.getShape());
  shape.back() *= 2;
  Value init = tensor::EmptyOp::create(rewriter, loc, shape, elem);
  Value gs = arith::DivFOp::create(
      rewriter, loc, conv.getFilterAmax(),
      arith::ConstantOp::create(rewriter, loc,
                                rewriter.getF32FloatAttr(2688.0f)));
  // Element (f, q, r, s, c) reads byte c / 2 of the codes and byte c / 16
  // of the scales.
  AffineMap identity = rewriter.getMultiDimIdentityMap(5);
  auto along = [&](int64_t divisor) {
    SmallVector<AffineExpr> exprs(identity.getResults());
    exprs[4] = rewriter.getAffineDimExpr(4).floorDiv(divisor);
    return AffineMap::get(5, 0, exprs, ctx);
  };
  int64_t blockSize = conv.getFilterQuant()->getBlockSize();
  auto generic = linalg::GenericOp::create(
      rewriter, loc, TypeRange{init.getType()},
      ValueRange{conv.getFilter(), conv.getFilterScales()}, ValueRange{init},
      ArrayRef<AffineMap>{along(2), along(blockSize), identity},
      SmallVector<utils::IteratorType>(5, utils::IteratorType::parallel),
      [&](OpBuilder &b, Location l, ValueRange args) {
        Type i8 = b.getI8Type();
        Value c = linalg::IndexOp::create(b, l, 4);
        Value odd = arith::CmpIOp::create(
            b, l, arith::CmpIPredicate::ne,
            arith::RemUIOp::create(b, l, c,
                                   arith::ConstantIndexOp::create(b, l, 2)),
            arith::ConstantIndexOp::create(b, l, 0));
        // Element 2i in the low nibble, 2i + 1 in the high one.
        Value high = arith::ShRUIOp::create(
            b, l, args[0], arith::ConstantIntOp::create(b, l, i8, 4));
        Value low = arith::AndIOp::create(
            b, l, args[0], arith::ConstantIntOp::create(b, l, i8, 15));
        Value code = arith::SelectOp::create(b, l, odd, high, low);
        // The fake path's order: scale = s8 * gs, then q * scale.
        Value scale =
            arith::MulFOp::create(b, l, emitDecodeE4M3(b, l, args[1]), gs);
        Value value =
            arith::MulFOp::create(b, l, emitDecodeE2M1(b, l, code), scale);
        linalg::YieldOp::create(b, l, emitFloatCast(b, l, value, elem));
      });
  return generic.getResult(0);
}

/// Fake mode: `conv` with its packed filter replaced by the unpacked one.
LogicalResult applyFake(RewriterBase &rewriter, ConvOp conv) {
  if (!conv.hasTensorSemantics())
    return conv.emitError("nvfp4-mode=fake unpacks a packed NVFP4 filter "
                          "(filter_quant) on the tensor form; run "
                          "conv3d-apply-nvfp4-mode before bufferization");
  rewriter.setInsertionPoint(conv);
  Value filter = unpackFilter(rewriter, conv);
  rewriter.modifyOpInPlace(conv, [&] {
    conv.getFilterMutable().assign(filter);
    conv.getFilterScalesMutable().clear();
    conv.getFilterAmaxMutable().clear();
    conv.removeFilterQuantAttr();
  });
  return success();
}

struct ApplyNVFP4ModePass
    : mlir::conv3d::impl::Conv3dApplyNVFP4ModeBase<ApplyNVFP4ModePass> {
  using Base::Base;

  void runOnOperation() override {
    if (mode == NVFP4Mode::Fake) {
      SmallVector<ConvOp> packed;
      getOperation()->walk([&](ConvOp conv) {
        if (conv.hasPackedFilter())
          packed.push_back(conv);
      });
      IRRewriter rewriter(&getContext());
      for (ConvOp conv : packed)
        if (failed(applyFake(rewriter, conv)))
          return signalPassFailure();
      return;
    }
    SmallVector<ConvOp> taken;
    WalkResult result = getOperation()->walk([&](ConvOp conv) {
      if (!inputBlockSize(conv) && !conv.hasPackedFilter())
        return WalkResult::advance();
      if (target != Target::sm100) {
        conv.emitError() << "nvfp4-mode=real needs target=sm100 (the "
                            "block-scaled tcgen05.mma), not "
                         << stringifyTarget(target);
        return WalkResult::interrupt();
      }
      if (std::optional<std::string> problem = blockScaledProblem(conv)) {
        conv.emitError() << "nvfp4-mode=real: " << *problem;
        return WalkResult::interrupt();
      }
      taken.push_back(conv);
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      return signalPassFailure();
    IRRewriter rewriter(&getContext());
    // (A memref convolution only qualifies with its quantization fused: a
    // conv3d.quantize on memrefs defines no value inputBlockSize sees.)
    for (ConvOp conv : taken)
      fuseInputQuantization(rewriter, conv);
  }
};

} // namespace
