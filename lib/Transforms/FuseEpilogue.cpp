//===- FuseEpilogue.cpp - conv3d-fuse-epilogue ----------------------------===//
//
// Folds the elementwise consumers of a convolution into its epilogue
// `cast(act(acc + bias) + residual)`, each consumer any consecutive part of
// it (a bias add, `relu(x + b)` in one generic, a whole epilogue) and only
// in that order, so the folded convolution computes exactly what the
// consumers did (with f32 intermediates instead of whatever the consumers
// rounded to).
//
// Front ends spell activations in many algebraic forms (x * sigmoid(x),
// x / (1 + exp(-x)), 0.5x(1 + tanh(...)) with the constants folded or not),
// and group the epilogue's parts into generics as they like. Instead of
// matching op trees or counting ops, a body is recognized by evaluating it:
// it must be a pure function of its inputs built from a small set of
// arithmetic ops, and agree with `act(x + b) + r` at sample points spread
// over the range that matters (|x| up to 9) to 1e-5. GELU with erf differs
// from the tanh form by about 1e-3 there and is not mistaken for it.
//
//===----------------------------------------------------------------------===//

#include "conv3d/Transforms/Passes.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

namespace mlir::conv3d {
#define GEN_PASS_DEF_CONV3DFUSEEPILOGUE
#include "conv3d/Transforms/Passes.h.inc"
} // namespace mlir::conv3d

using namespace mlir;
using namespace mlir::conv3d;

//===----------------------------------------------------------------------===//
// Recognizing a scalar body by evaluation
//===----------------------------------------------------------------------===//

/// Evaluates `body` (a linalg body whose yield depends on argument 0 only)
/// at `x` in double precision; none if it uses anything unsupported.
static std::optional<double> evaluateBody(Block &body, double x) {
  return evaluateScalarBody(body, {x});
}

std::optional<double>
mlir::conv3d::evaluateScalarBody(Block &body, ArrayRef<double> arguments) {
  llvm::DenseMap<Value, double> values;
  for (auto [i, value] : llvm::enumerate(arguments)) {
    if (i >= body.getNumArguments())
      return std::nullopt;
    values[body.getArgument(i)] = value;
  }
  auto get = [&](Value v) -> std::optional<double> {
    auto it = values.find(v);
    if (it != values.end())
      return it->second;
    // Canonicalization hoists constants out of the body.
    FloatAttr constant;
    if (matchPattern(v, m_Constant(&constant)))
      return constant.getValueAsDouble();
    return std::nullopt;
  };
  for (Operation &op : body) {
    if (auto yield = dyn_cast<linalg::YieldOp>(op)) {
      if (yield.getNumOperands() != 1)
        return std::nullopt;
      return get(yield.getOperand(0));
    }
    if (op.getNumResults() != 1)
      return std::nullopt;
    if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
      auto attr = dyn_cast<FloatAttr>(constant.getValue());
      if (!attr)
        return std::nullopt;
      values[op.getResult(0)] = attr.getValueAsDouble();
      continue;
    }
    SmallVector<double> in;
    for (Value operand : op.getOperands()) {
      std::optional<double> v = get(operand);
      if (!v)
        return std::nullopt; // outside values or the output argument
      in.push_back(*v);
    }
    std::optional<double> r =
        llvm::TypeSwitch<Operation *, std::optional<double>>(&op)
            .Case([&](arith::AddFOp) { return in[0] + in[1]; })
            .Case([&](arith::SubFOp) { return in[0] - in[1]; })
            .Case([&](arith::MulFOp) { return in[0] * in[1]; })
            .Case([&](arith::DivFOp) { return in[0] / in[1]; })
            .Case([&](arith::NegFOp) { return -in[0]; })
            .Case<arith::MaximumFOp, arith::MaxNumFOp>(
                [&](Operation *) { return std::max(in[0], in[1]); })
            .Case<arith::MinimumFOp, arith::MinNumFOp>(
                [&](Operation *) { return std::min(in[0], in[1]); })
            .Case<arith::ExtFOp, arith::TruncFOp>(
                [&](Operation *) { return in[0]; })
            .Case([&](arith::CmpFOp cmp) -> std::optional<double> {
              using P = arith::CmpFPredicate;
              switch (cmp.getPredicate()) {
              case P::OGT:
              case P::UGT:
                return in[0] > in[1];
              case P::OGE:
              case P::UGE:
                return in[0] >= in[1];
              case P::OLT:
              case P::ULT:
                return in[0] < in[1];
              case P::OLE:
              case P::ULE:
                return in[0] <= in[1];
              default:
                return std::nullopt;
              }
            })
            .Case([&](arith::SelectOp) { return in[0] != 0 ? in[1] : in[2]; })
            .Case([&](math::ExpOp) { return std::exp(in[0]); })
            .Case([&](math::TanhOp) { return std::tanh(in[0]); })
            .Case([&](math::ErfOp) { return std::erf(in[0]); })
            .Case([&](math::SqrtOp) { return std::sqrt(in[0]); })
            .Case([&](math::RsqrtOp) { return 1.0 / std::sqrt(in[0]); })
            .Case([&](math::AbsFOp) { return std::fabs(in[0]); })
            .Case([&](math::PowFOp) { return std::pow(in[0], in[1]); })
            .Case([&](math::LogOp) { return std::log(in[0]); })
            .Case([&](math::Log1pOp) { return std::log1p(in[0]); })
            .Default([](Operation *) { return std::nullopt; });
    if (!r)
      return std::nullopt;
    values[op.getResult(0)] = *r;
  }
  return std::nullopt;
}

static double referenceActivation(Activation activation, double x) {
  switch (activation) {
  case Activation::none:
    return x;
  case Activation::relu:
    return std::max(x, 0.0);
  case Activation::silu:
    return x / (1.0 + std::exp(-x));
  case Activation::gelu_tanh:
    return 0.5 * x *
           (1.0 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
  default:
    break;
  }
  llvm_unreachable("only the forward activations are matched");
}

std::optional<Activation> mlir::conv3d::matchActivationBody(Block &body) {
  static constexpr double kSamples[] = {
      -9,   -6,   -3.5, -2, -1.3, -1, -0.7, -0.25, -0.01, 0,
      0.01, 0.25, 0.7,  1,  1.3,  2,  3.5,  6,     9};
  SmallVector<double> values;
  for (double x : kSamples) {
    std::optional<double> y = evaluateBody(body, x);
    if (!y || !std::isfinite(*y))
      return std::nullopt;
    values.push_back(*y);
  }
  for (Activation activation :
       {Activation::relu, Activation::silu, Activation::gelu_tanh}) {
    bool matches = true;
    for (auto [x, y] : llvm::zip_equal(kSamples, values)) {
      double expected = referenceActivation(activation, x);
      if (std::fabs(y - expected) > 1e-5 * (1.0 + std::fabs(expected))) {
        matches = false;
        break;
      }
    }
    if (matches)
      return activation;
  }
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// The consumers
//===----------------------------------------------------------------------===//

namespace {

/// What one elementwise consumer of a convolution adds to its epilogue
/// `cast(act(acc + bias) + residual)`: any of its parts, in that order
/// (`y = x + b`, `y = relu(x + b)`, `y = act(x) + r`, ... one generic or
/// several).
struct Step {
  Value bias, residual;
  Activation activation = Activation::none;
  bool cast = false; ///< the consumer's result type differs from the conv's
};

/// Whether `body` computes `act(x + b) + r` of its arguments (x at
/// `convArg`; b and r where given, zero otherwise), checked by evaluation
/// at sample points spread over the range that matters.
static bool bodyComputes(Block &body, unsigned numInputs, unsigned convArg,
                         std::optional<unsigned> biasArg,
                         std::optional<unsigned> residualArg,
                         Activation activation) {
  static constexpr double kX[] = {-9,   -3.5, -1.3, -0.7, -0.25, -0.01, 0,
                                  0.01, 0.25, 0.7,  1.3,  3.5,   9};
  static constexpr double kOther[] = {0, -1.25, 0.5, 2.75};
  for (double x : kX) {
    // b and r take each sample value, in different pairs.
    for (size_t i = 0; i < std::size(kOther); ++i) {
      double b = biasArg ? kOther[i] : 0.0;
      double r = residualArg ? kOther[(i + 1) % std::size(kOther)] : 0.0;
      SmallVector<double> args(numInputs, 0.0);
      args[convArg] = x;
      if (biasArg)
        args[*biasArg] = b;
      if (residualArg)
        args[*residualArg] = r;
      std::optional<double> y = evaluateScalarBody(body, args);
      double expected = referenceActivation(activation, x + b) + r;
      if (!y || !std::isfinite(*y) ||
          std::fabs(*y - expected) > 1e-5 * (1.0 + std::fabs(expected)))
        return false;
    }
  }
  return true;
}

/// Classifies an elementwise consumer `generic` of convolution result
/// `conv`: its inputs are the convolution (identity map), at most one bias
/// (indexed by the filter dimension alone) and at most one residual (the
/// convolution's shape), and its body is recognized by evaluating it, not by
/// counting its ops, so `relu(x + b)` in one generic folds as bias and
/// activation at once.
static std::optional<Step> classify(linalg::GenericOp generic, Value conv) {
  if (generic.getNumDpsInits() != 1 || generic.getNumResults() != 1 ||
      generic.getNumParallelLoops() != generic.getNumLoops() ||
      generic.getNumLoops() != 5 ||
      !generic.getIndexingMapsArray().back().isIdentity())
    return std::nullopt;
  // linalg.generic does not check that static shapes agree with its maps: a
  // consumer whose result, residual or bias does not have the
  // convolution's shape is not an epilogue (folding it would make an
  // invalid conv; found by conv3d-pass-fuzzer).
  auto shapeOf = [](Value value) {
    return cast<ShapedType>(value.getType()).getShape();
  };
  ArrayRef<int64_t> convShape = shapeOf(conv);
  if (shapeOf(generic.getResult(0)) != convShape)
    return std::nullopt;
  std::optional<unsigned> convArg, biasArg, residualArg;
  Step step;
  AffineExpr filterDim = getAffineDimExpr(4, generic.getContext());
  for (OpOperand *operand : generic.getDpsInputOperands()) {
    AffineMap map = generic.getMatchingIndexingMap(operand);
    unsigned arg = operand->getOperandNumber();
    Value value = operand->get();
    if (value == conv && map.isIdentity() && !convArg) {
      convArg = arg;
    } else if (map.isIdentity() && shapeOf(value) == convShape &&
               !residualArg) {
      residualArg = arg;
      step.residual = value;
    } else if (map.getNumResults() == 1 && map.getResult(0) == filterDim &&
               shapeOf(value) == convShape.take_back() && !biasArg) {
      biasArg = arg;
      step.bias = value;
    } else {
      return std::nullopt;
    }
  }
  if (!convArg)
    return std::nullopt;
  step.cast = getElementTypeOrSelf(generic.getResult(0).getType()) !=
              getElementTypeOrSelf(conv.getType());
  Block &body = generic.getRegion().front();
  unsigned numInputs = generic.getNumDpsInputs();
  for (Activation activation : {Activation::none, Activation::relu,
                                Activation::silu, Activation::gelu_tanh}) {
    if (!bodyComputes(body, numInputs, *convArg, biasArg, residualArg,
                      activation))
      continue;
    step.activation = activation;
    bool changes = step.bias || step.residual || step.cast ||
                   activation != Activation::none;
    if (!changes)
      return std::nullopt; // a copy
    return step;
  }
  return std::nullopt;
}

struct FoldConsumerIntoEpilogue : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp generic,
                                PatternRewriter &rewriter) const override {
    ConvOp conv;
    for (Value input : generic.getDpsInputs())
      if (auto producer = input.getDefiningOp<ConvOp>())
        conv = producer;
    if (!conv || !conv.hasTensorSemantics() || !conv->hasOneUse())
      return rewriter.notifyMatchFailure(generic, "no single-use conv input");
    std::optional<Step> step = classify(generic, conv.getResult()[0]);
    if (!step)
      return rewriter.notifyMatchFailure(generic, "not an epilogue step");

    // Keep the epilogue's order: bias, activation, residual, cast.
    bool hasActivation = conv.getActivation() != Activation::none;
    auto supported = [](Value value) {
      return isSupportedComputeType(getElementTypeOrSelf(value.getType()));
    };
    if (step->bias && (conv.getBias() || hasActivation || conv.getResidual() ||
                       !supported(step->bias)))
      return rewriter.notifyMatchFailure(generic, "bias out of order");
    if (step->activation != Activation::none &&
        (hasActivation || conv.getResidual()))
      return rewriter.notifyMatchFailure(generic, "activation out of order");
    if (step->residual && (conv.getResidual() || !supported(step->residual)))
      return rewriter.notifyMatchFailure(generic, "residual out of order");
    if (step->cast) {
      // The conv must not read its f32 destination, since the destination
      // becomes the cast's; and it can only produce f32 or its input type.
      Type outElem = getElementTypeOrSelf(conv.getInit().getType());
      Type castElem = getElementTypeOrSelf(generic.getResult(0).getType());
      Type inElem = getElementTypeOrSelf(conv.getInput().getType());
      if (!conv.getOverwrite() || !outElem.isF32() || castElem != inElem)
        return rewriter.notifyMatchFailure(generic, "cast not foldable");
    }

    rewriter.modifyOpInPlace(conv, [&] {
      if (step->bias)
        conv.getBiasMutable().assign(step->bias);
      if (step->activation != Activation::none)
        conv.setActivation(step->activation);
      if (step->residual)
        conv.getResidualMutable().assign(step->residual);
      if (step->cast) {
        conv.getInitMutable().assign(generic.getDpsInits()[0]);
        conv.getResult()[0].setType(generic.getResult(0).getType());
      }
    });
    // The conv now produces what the consumer did.
    conv->moveBefore(generic);
    rewriter.replaceOp(generic, conv.getResult()[0]);
    return success();
  }
};

/// linalg.add of the convolution and a same-shaped tensor: a residual.
struct FoldAddIntoResidual : OpRewritePattern<linalg::AddOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::AddOp add,
                                PatternRewriter &rewriter) const override {
    if (!add.hasPureTensorSemantics() || add.getNumDpsInputs() != 2)
      return failure();
    Value lhs = add.getDpsInputs()[0], rhs = add.getDpsInputs()[1];
    auto conv = lhs.getDefiningOp<ConvOp>();
    Value other = rhs;
    if (!conv) {
      conv = rhs.getDefiningOp<ConvOp>();
      other = lhs;
    }
    if (!conv || !conv.hasTensorSemantics() || !conv->hasOneUse() ||
        conv.getResidual() || other.getType() != conv.getResult()[0].getType())
      return failure();
    if (add.getResult(0).getType() != conv.getResult()[0].getType())
      return failure();
    rewriter.modifyOpInPlace(conv,
                             [&] { conv.getResidualMutable().assign(other); });
    conv->moveBefore(add);
    rewriter.replaceOp(add, conv.getResult()[0]);
    return success();
  }
};

struct FuseEpiloguePass
    : mlir::conv3d::impl::Conv3dFuseEpilogueBase<FuseEpiloguePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateFuseEpiloguePatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace

void mlir::conv3d::populateFuseEpiloguePatterns(RewritePatternSet &patterns) {
  patterns.add<FoldConsumerIntoEpilogue, FoldAddIntoResidual>(
      patterns.getContext());
  ConvOp::getCanonicalizationPatterns(patterns, patterns.getContext());
}
