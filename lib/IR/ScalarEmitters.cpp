//===- ScalarEmitters.cpp - scalar IR for quantization and epilogues ------===//

#include "conv3d/IR/ScalarEmitters.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <limits>

using namespace mlir;
using namespace mlir::conv3d;

static Value f32Const(OpBuilder &b, Location loc, float value) {
  return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(value));
}

static Value i32Const(OpBuilder &b, Location loc, int32_t value) {
  return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(value));
}

/// The unbiased binary exponent of a non-negative f32 (-127 for zero).
static Value emitExponent(OpBuilder &b, Location loc, Value x) {
  Value bits = arith::BitcastOp::create(b, loc, b.getI32Type(), x);
  Value biased = arith::ShRUIOp::create(b, loc, bits, i32Const(b, loc, 23));
  biased = arith::AndIOp::create(b, loc, biased, i32Const(b, loc, 0xff));
  return arith::SubIOp::create(b, loc, biased, i32Const(b, loc, 127));
}

/// 2^e as an f32, for an i32 `e` in the normal range [-126, 127].
static Value emitPowerOfTwo(OpBuilder &b, Location loc, Value e) {
  Value biased = arith::AddIOp::create(b, loc, e, i32Const(b, loc, 127));
  Value bits = arith::ShLIOp::create(b, loc, biased, i32Const(b, loc, 23));
  return arith::BitcastOp::create(b, loc, b.getF32Type(), bits);
}

/// Rounds x to a multiple of 2^ulpExp, ties to even: the scaling by powers
/// of two is exact, so the only rounding is roundeven's.
static Value emitRoundToUlp(OpBuilder &b, Location loc, Value x, Value ulpExp) {
  Value negExp = arith::SubIOp::create(b, loc, i32Const(b, loc, 0), ulpExp);
  Value scaled =
      arith::MulFOp::create(b, loc, x, emitPowerOfTwo(b, loc, negExp));
  Value rounded = math::RoundEvenOp::create(b, loc, scaled);
  return arith::MulFOp::create(b, loc, rounded, emitPowerOfTwo(b, loc, ulpExp));
}

Value mlir::conv3d::emitRoundToE4M3(OpBuilder &b, Location loc, Value s) {
  // E4M3 has 3 mantissa bits and a minimum normal exponent of -6: the
  // spacing at exponent e is 2^(max(e, -6) - 3), down to 2^-9.
  Value e = emitExponent(b, loc, s);
  Value clamped = arith::MaxSIOp::create(b, loc, e, i32Const(b, loc, -6));
  Value ulpExp = arith::SubIOp::create(b, loc, clamped, i32Const(b, loc, 3));
  return emitRoundToUlp(b, loc, s, ulpExp);
}

Value mlir::conv3d::emitRoundToE2M1(OpBuilder &b, Location loc, Value a) {
  // E2M1 values are spaced 0.5 below 2, 1 in [2, 4) and 2 in [4, 6]; the
  // nearest with ties to the even code is round-to-nearest-even at that
  // spacing, then at most 6. Adding M = 2^22, 2^23 or 2^24 puts a (>= 0)
  // where the f32 spacing is 0.5, 1 or 2, so the addition itself rounds
  // to nearest even at that spacing and subtracting M is exact: the spec's
  // rounding (ties 0.25 -> 0, 0.75 -> 1, 1.75 -> 2, 3.5 -> 4, 5 -> 4) in
  // full-rate adds, where roundeven is a quarter-rate instruction on GPUs
  // (the adds carry no fast-math flags: never reassociated or contracted).
  // NaN fails both compares, stays NaN through the adds and minimumf; +inf
  // and anything above 2^24 become 6.
  auto constant = [&](float c) { return f32Const(b, loc, c); };
  Value belowTwo = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, a,
                                         constant(2.0f));
  Value belowFour = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, a,
                                          constant(4.0f));
  Value magic = arith::SelectOp::create(
      b, loc, belowTwo, constant(0x1p22f),
      arith::SelectOp::create(b, loc, belowFour, constant(0x1p23f),
                              constant(0x1p24f)));
  Value rounded = arith::SubFOp::create(
      b, loc, arith::AddFOp::create(b, loc, a, magic), magic);
  return arith::MinimumFOp::create(b, loc, rounded, constant(6.0f));
}

Value mlir::conv3d::emitDecodeE2M1(OpBuilder &b, Location loc, Value code) {
  // Exponent e = bits 1-2, mantissa m = bit 0: e > 0 is the f32
  // 2^(e-1) (1 + m/2), e = 0 is m/2; the sign goes to bit 31.
  Type i32 = b.getI32Type();
  auto c = [&](int64_t v) { return i32Const(b, loc, v); };
  Value x = arith::ExtUIOp::create(b, loc, i32, code);
  Value sign = arith::AndIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, x, c(3)), c(1));
  Value e = arith::AndIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, x, c(1)), c(3));
  Value m = arith::AndIOp::create(b, loc, x, c(1));
  Value normal = arith::OrIOp::create(
      b, loc,
      arith::ShLIOp::create(b, loc, arith::AddIOp::create(b, loc, e, c(126)),
                            c(23)),
      arith::ShLIOp::create(b, loc, m, c(22)));
  Value half = arith::MulIOp::create(b, loc, m, c(0x3F000000));
  Value isSubnormal =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, e, c(0));
  Value magnitude = arith::SelectOp::create(b, loc, isSubnormal, half, normal);
  Value bits = arith::OrIOp::create(b, loc, magnitude,
                                    arith::ShLIOp::create(b, loc, sign, c(31)));
  return arith::BitcastOp::create(b, loc, b.getF32Type(), bits);
}

Value mlir::conv3d::emitDecodeE4M3(OpBuilder &b, Location loc, Value bits) {
  // Exponent E = bits 3-6 (bias 7), mantissa M = bits 0-2: E > 0 is the
  // f32 with exponent E - 7 and M in its top mantissa bits, E = 0 is
  // M * 2^-9 (exact); E = 15, M = 7 is NaN.
  Type i32 = b.getI32Type(), f32 = b.getF32Type();
  auto c = [&](int64_t v) { return i32Const(b, loc, v); };
  Value x = arith::ExtUIOp::create(b, loc, i32, bits);
  Value e = arith::AndIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, x, c(3)), c(15));
  Value m = arith::AndIOp::create(b, loc, x, c(7));
  Value normal = arith::BitcastOp::create(
      b, loc, f32,
      arith::OrIOp::create(
          b, loc,
          arith::ShLIOp::create(
              b, loc, arith::AddIOp::create(b, loc, e, c(120)), c(23)),
          arith::ShLIOp::create(b, loc, m, c(20))));
  Value subnormal =
      arith::MulFOp::create(b, loc, arith::UIToFPOp::create(b, loc, f32, m),
                            f32Const(b, loc, 0x1p-9f));
  Value isSubnormal =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, e, c(0));
  Value magnitude =
      arith::SelectOp::create(b, loc, isSubnormal, subnormal, normal);
  Value negative =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                            arith::AndIOp::create(b, loc, x, c(0x80)), c(0));
  Value value = arith::SelectOp::create(
      b, loc, negative, arith::NegFOp::create(b, loc, magnitude), magnitude);
  Value isNaN =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                            arith::AndIOp::create(b, loc, x, c(0x7F)), c(0x7F));
  return arith::SelectOp::create(
      b, loc, isNaN, f32Const(b, loc, std::numeric_limits<float>::quiet_NaN()),
      value);
}

NVFP4BlockScale mlir::conv3d::emitNVFP4BlockScale(OpBuilder &b, Location loc,
                                                  Value blockMax, Value amax) {
  // gs = amax / 2688; s = min(bmax / (6 * gs), 448); scale = E4M3(s) * gs.
  Value gs = arith::DivFOp::create(b, loc, amax, f32Const(b, loc, 2688.0f));
  Value sixGs = arith::MulFOp::create(b, loc, f32Const(b, loc, 6.0f), gs);
  Value s = arith::DivFOp::create(b, loc, blockMax, sixGs);
  s = arith::MinimumFOp::create(b, loc, s, f32Const(b, loc, 448.0f));
  // With amax == 0 the division above is 0/0 or x/0; the block is zero and
  // those values are never used, but keep them finite for the rounding.
  Value zero = f32Const(b, loc, 0.0f);
  Value amaxIsZero =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, amax, zero);
  s = arith::SelectOp::create(b, loc, amaxIsZero, zero, s);
  Value s8 = emitRoundToE4M3(b, loc, s);
  Value s8IsZero =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, s8, zero);
  Value zeroBlock = arith::OrIOp::create(b, loc, amaxIsZero, s8IsZero);
  Value scale = arith::MulFOp::create(b, loc, s8, gs);
  Value inverse = arith::DivFOp::create(b, loc, f32Const(b, loc, 1.0f), scale);
  return {scale, inverse, zeroBlock};
}

Value mlir::conv3d::emitNVFP4Quantize(OpBuilder &b, Location loc, Value value,
                                      const NVFP4BlockScale &scale) {
  Value v = emitFloatCast(b, loc, value, b.getF32Type());
  Value a = arith::MulFOp::create(b, loc, math::AbsFOp::create(b, loc, v),
                                  scale.inverse);
  Value q = emitRoundToE2M1(b, loc, a);
  Value signedQ = math::CopySignOp::create(b, loc, q, v);
  Value out = arith::MulFOp::create(b, loc, signedQ, scale.scale);
  return arith::SelectOp::create(b, loc, scale.zeroBlock,
                                 f32Const(b, loc, 0.0f), out);
}

/// The quantized f32 values `quantized` rounded to `elementType`: 16-bit
/// types in pairs, one packed conversion (cvt.rn.bf16x2.f32 on a GPU)
/// instead of two; the same round-to-nearest-even per element.
static SmallVector<Value> roundToElementType(OpBuilder &b, Location loc,
                                             SmallVector<Value> result,
                                             Type elementType) {
  if (!isa<BFloat16Type, Float16Type>(elementType))
    return llvm::map_to_vector(
        result, [&](Value v) { return emitFloatCast(b, loc, v, elementType); });
  auto pairType = VectorType::get({2}, b.getF32Type());
  auto narrowType = VectorType::get({2}, elementType);
  for (size_t i = 0; i + 1 < result.size(); i += 2) {
    Value pair = vector::FromElementsOp::create(
        b, loc, pairType, ValueRange{result[i], result[i + 1]});
    Value narrow = arith::TruncFOp::create(b, loc, narrowType, pair);
    result[i] = vector::ExtractOp::create(b, loc, narrow, 0);
    result[i + 1] = vector::ExtractOp::create(b, loc, narrow, 1);
  }
  if (result.size() % 2)
    result.back() = emitFloatCast(b, loc, result.back(), elementType);
  return result;
}

SmallVector<Value>
mlir::conv3d::emitNVFP4QuantizeBlock(OpBuilder &b, Location loc,
                                     ArrayRef<Value> elements, Value amax,
                                     Type elementType) {
  Value blockMax = f32Const(b, loc, 0.0f);
  for (Value e : elements)
    blockMax = emitAbsMaxUpdate(b, loc, blockMax, e);
  NVFP4BlockScale scale = emitNVFP4BlockScale(b, loc, blockMax, amax);
  SmallVector<Value> result;
  for (Value e : elements)
    result.push_back(emitNVFP4Quantize(b, loc, e, scale));
  return roundToElementType(b, loc, std::move(result), elementType);
}

/// The elements of a vector value.
static SmallVector<Value> elementsOf(OpBuilder &b, Location loc, Value vec) {
  SmallVector<Value> elements;
  for (int64_t i = 0, e = cast<VectorType>(vec.getType()).getNumElements();
       i < e; ++i)
    elements.push_back(vector::ExtractOp::create(b, loc, vec, i));
  return elements;
}

SmallVector<Value>
mlir::conv3d::emitNVFP4QuantizeVectors(OpBuilder &b, Location loc,
                                       ArrayRef<Value> vectors, Value amax,
                                       Type elementType) {
  SmallVector<Value> elements;
  for (Value vec : vectors)
    llvm::append_range(elements, elementsOf(b, loc, vec));
  SmallVector<Value> quantized =
      emitNVFP4QuantizeBlock(b, loc, elements, amax, elementType);
  SmallVector<Value> result;
  size_t next = 0;
  for (Value vec : vectors) {
    for (int64_t i = 0, e = cast<VectorType>(vec.getType()).getNumElements();
         i < e; ++i)
      vec = vector::InsertOp::create(b, loc, quantized[next++], vec, i);
    result.push_back(vec);
  }
  return result;
}

Value mlir::conv3d::emitAbsMaxUpdateVector(OpBuilder &b, Location loc,
                                           Value acc, Value vector) {
  for (Value e : elementsOf(b, loc, vector))
    acc = emitAbsMaxUpdate(b, loc, acc, e);
  return acc;
}

Value mlir::conv3d::emitNVFP4QuantizeVector(OpBuilder &b, Location loc,
                                            Value vector,
                                            const NVFP4BlockScale &scale,
                                            Type elementType) {
  SmallVector<Value> result;
  for (Value e : elementsOf(b, loc, vector))
    result.push_back(emitNVFP4Quantize(b, loc, e, scale));
  result = roundToElementType(b, loc, std::move(result), elementType);
  for (auto [i, value] : llvm::enumerate(result))
    vector = vector::InsertOp::create(b, loc, value, vector, i);
  return vector;
}

Value mlir::conv3d::emitAbsMaxUpdate(OpBuilder &b, Location loc, Value acc,
                                     Value value) {
  Value v = emitFloatCast(b, loc, value, b.getF32Type());
  return arith::MaxNumFOp::create(b, loc, acc, math::AbsFOp::create(b, loc, v));
}

Value mlir::conv3d::emitFloatCast(OpBuilder &b, Location loc, Value value,
                                  Type type) {
  unsigned from = value.getType().getIntOrFloatBitWidth();
  unsigned to = type.getIntOrFloatBitWidth();
  if (value.getType() == type)
    return value;
  if (from < to)
    return arith::ExtFOp::create(b, loc, type, value);
  if (from > to)
    return arith::TruncFOp::create(b, loc, type, value);
  // bf16 <-> f16: through f32 (exact first step, one rounding).
  Value wide = arith::ExtFOp::create(b, loc, b.getF32Type(), value);
  return arith::TruncFOp::create(b, loc, type, wide);
}

Value mlir::conv3d::emitActivation(OpBuilder &b, Location loc, Value x,
                                   Activation activation) {
  switch (activation) {
  case Activation::none:
    return x;
  case Activation::relu:
    // maximumf propagates NaN, so a NaN accumulator is not hidden.
    return arith::MaximumFOp::create(b, loc, x, f32Const(b, loc, 0.0f));
  case Activation::silu: {
    // x / (1 + exp(-x))
    Value negX = arith::NegFOp::create(b, loc, x);
    Value denom = arith::AddFOp::create(b, loc, f32Const(b, loc, 1.0f),
                                        math::ExpOp::create(b, loc, negX));
    return arith::DivFOp::create(b, loc, x, denom);
  }
  case Activation::gelu_tanh: {
    // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
    Value x3 =
        arith::MulFOp::create(b, loc, arith::MulFOp::create(b, loc, x, x), x);
    Value inner = arith::AddFOp::create(
        b, loc, x,
        arith::MulFOp::create(b, loc, f32Const(b, loc, 0.044715f), x3));
    Value t = math::TanhOp::create(
        b, loc,
        arith::MulFOp::create(b, loc, f32Const(b, loc, 0.7978845608f), inner));
    Value onePlus = arith::AddFOp::create(b, loc, f32Const(b, loc, 1.0f), t);
    return arith::MulFOp::create(
        b, loc, arith::MulFOp::create(b, loc, f32Const(b, loc, 0.5f), x),
        onePlus);
  }
  case Activation::relu_backward:
  case Activation::silu_backward:
  case Activation::gelu_tanh_backward:
    break;
  }
  llvm_unreachable("a derivative epilogue is not an activation function "
                   "(emitEpilogue applies it)");
}

Value mlir::conv3d::emitActivationDerivative(OpBuilder &b, Location loc,
                                             Value z, Activation forward) {
  Value one = f32Const(b, loc, 1.0f);
  switch (forward) {
  case Activation::relu: {
    // 1 where z > 0, else 0 (PyTorch's threshold_backward: 0 at z = 0); a
    // NaN z gives 0, as the comparison is false.
    Value positive = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, z,
                                           f32Const(b, loc, 0.0f));
    return arith::SelectOp::create(b, loc, positive, one,
                                   f32Const(b, loc, 0.0f));
  }
  case Activation::silu: {
    // s (1 + z (1 - s)), s = 1 / (1 + exp(-z)).
    Value s = arith::DivFOp::create(
        b, loc, one,
        arith::AddFOp::create(
            b, loc, one,
            math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, z))));
    Value oneMinusS = arith::SubFOp::create(b, loc, one, s);
    Value inner = arith::AddFOp::create(
        b, loc, one, arith::MulFOp::create(b, loc, z, oneMinusS));
    return arith::MulFOp::create(b, loc, s, inner);
  }
  case Activation::gelu_tanh: {
    // With u = k (z + 0.044715 z^3), t = tanh(u):
    // 0.5 (1 + t) + 0.5 z (1 - t^2) k (1 + 3 * 0.044715 z^2).
    Value k = f32Const(b, loc, 0.7978845608f);
    Value z2 = arith::MulFOp::create(b, loc, z, z);
    Value u = arith::MulFOp::create(
        b, loc, k,
        arith::AddFOp::create(
            b, loc, z,
            arith::MulFOp::create(b, loc, f32Const(b, loc, 0.044715f),
                                  arith::MulFOp::create(b, loc, z2, z))));
    Value t = math::TanhOp::create(b, loc, u);
    Value half = f32Const(b, loc, 0.5f);
    Value first = arith::MulFOp::create(b, loc, half,
                                        arith::AddFOp::create(b, loc, one, t));
    Value sech2 =
        arith::SubFOp::create(b, loc, one, arith::MulFOp::create(b, loc, t, t));
    Value du = arith::MulFOp::create(
        b, loc, k,
        arith::AddFOp::create(
            b, loc, one,
            arith::MulFOp::create(b, loc, f32Const(b, loc, 3 * 0.044715f),
                                  z2)));
    Value second =
        arith::MulFOp::create(b, loc, arith::MulFOp::create(b, loc, half, z),
                              arith::MulFOp::create(b, loc, sech2, du));
    return arith::AddFOp::create(b, loc, first, second);
  }
  default:
    break;
  }
  llvm_unreachable("the derivative of a forward activation only");
}

Value mlir::conv3d::emitEpilogue(OpBuilder &b, Location loc, Value acc,
                                 Value bias, Value residual,
                                 Activation activation, Type outType) {
  Type f32 = b.getF32Type();
  Value x = acc;
  if (bias)
    x = arith::AddFOp::create(b, loc, x, emitFloatCast(b, loc, bias, f32));
  if (isActivationDerivative(activation)) {
    // The chain rule's factor at the pre-activation (the residual operand;
    // the verifiers require it).
    Value z = emitFloatCast(b, loc, residual, f32);
    x = arith::MulFOp::create(
        b, loc, x, emitActivationDerivative(b, loc, z, forwardOf(activation)));
    return emitFloatCast(b, loc, x, outType);
  }
  x = emitActivation(b, loc, x, activation);
  if (residual)
    x = arith::AddFOp::create(b, loc, x, emitFloatCast(b, loc, residual, f32));
  return emitFloatCast(b, loc, x, outType);
}

Value mlir::conv3d::emitRmsNormScale(OpBuilder &b, Location loc,
                                     Value sumSquares, int64_t channels,
                                     float eps) {
  Value mean = arith::DivFOp::create(
      b, loc, sumSquares, f32Const(b, loc, static_cast<float>(channels)));
  Value shifted = arith::AddFOp::create(b, loc, mean, f32Const(b, loc, eps));
  return math::RsqrtOp::create(b, loc, shifted);
}

Value mlir::conv3d::emitInputPrologue(OpBuilder &b, Location loc, Value x,
                                      Value normScale, Value gamma, Value beta,
                                      Activation activation, Type outType) {
  Type f32 = b.getF32Type();
  Value y = emitFloatCast(b, loc, x, f32);
  if (normScale) {
    y = arith::MulFOp::create(b, loc, y, normScale);
    y = arith::MulFOp::create(b, loc, y, emitFloatCast(b, loc, gamma, f32));
    if (beta)
      y = arith::AddFOp::create(b, loc, y, emitFloatCast(b, loc, beta, f32));
  }
  y = emitActivation(b, loc, y, activation);
  return emitFloatCast(b, loc, y, outType);
}

Value mlir::conv3d::emitInputPrologueVector(OpBuilder &b, Location loc, Value x,
                                            Value normScale, Value gamma,
                                            Value beta, Activation activation) {
  SmallVector<Value> xs = elementsOf(b, loc, x), gammas, betas;
  if (gamma)
    gammas = elementsOf(b, loc, gamma);
  if (beta)
    betas = elementsOf(b, loc, beta);
  Type elementType = cast<VectorType>(x.getType()).getElementType();
  SmallVector<Value> ys;
  for (auto [i, xi] : llvm::enumerate(xs))
    ys.push_back(
        emitInputPrologue(b, loc, xi, normScale, gamma ? gammas[i] : Value(),
                          beta ? betas[i] : Value(), activation, elementType));
  return vector::FromElementsOp::create(b, loc, x.getType(), ys);
}
