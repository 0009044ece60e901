//===- ElementType.cpp - host element types and their rounding ------------===//
//
// One generic encoder rounds a double into any IEEE-style binary format
// (bf16, f16, f32) in a single step. It scales the magnitude so that the
// format's last mantissa bit has weight 1, which is exact in double for every
// format here, and then rounds that number to an integer. Rounding once from
// the double is what makes double -> bf16 free of double rounding, and the
// integer rounding does not depend on the floating-point environment.
//
//===----------------------------------------------------------------------===//

#include "conv3d/Support/ElementType.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/ErrorHandling.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

using namespace mlir::conv3d;

llvm::StringRef mlir::conv3d::stringifyElementType(ElementType type) {
  switch (type) {
  case ElementType::bf16:
    return "bf16";
  case ElementType::f16:
    return "f16";
  case ElementType::f32:
    return "f32";
  }
  llvm_unreachable("unknown element type");
}

std::optional<ElementType>
mlir::conv3d::parseElementType(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<ElementType>>(name)
      .Case("bf16", ElementType::bf16)
      .Case("f16", ElementType::f16)
      .Case("f32", ElementType::f32)
      .Default(std::nullopt);
}

size_t mlir::conv3d::elementSize(ElementType type) {
  switch (type) {
  case ElementType::bf16:
  case ElementType::f16:
    return 2;
  case ElementType::f32:
    return 4;
  }
  llvm_unreachable("unknown element type");
}

namespace {
/// An IEEE 754 binary format: `exponentBits` exponent bits with bias
/// 2^(exponentBits-1) - 1, `mantissaBits` stored fraction bits, all-ones
/// exponent for infinities and NaNs.
struct BinaryFormat {
  int exponentBits;
  int mantissaBits;

  int bias() const { return (1 << (exponentBits - 1)) - 1; }
  /// Exponent of the smallest normal number (also the subnormal binade).
  int minExponent() const { return 1 - bias(); }
  uint32_t maxBiasedExponent() const { return (1u << exponentBits) - 1; }
};
} // namespace

static constexpr BinaryFormat kBF16{8, 7};
static constexpr BinaryFormat kF16{5, 10};
static constexpr BinaryFormat kF32{8, 23};

/// Rounds a non-negative y < 2^53 to the nearest integer, ties to even.
/// floor() and the subtraction are exact for such y.
static uint64_t roundHalfToEven(double y) {
  double whole = std::floor(y);
  double fraction = y - whole;
  auto n = static_cast<uint64_t>(whole);
  if (fraction > 0.5 || (fraction == 0.5 && (n & 1)))
    ++n;
  return n;
}

static uint32_t encode(double value, BinaryFormat fmt) {
  const int m = fmt.mantissaBits;
  const uint32_t signBit =
      std::signbit(value) ? 1u << (fmt.exponentBits + m) : 0u;
  const uint32_t infBits = fmt.maxBiasedExponent() << m;
  if (std::isnan(value))
    return signBit | infBits | (1u << (m - 1)); // quiet NaN
  double magnitude = std::fabs(value);
  if (std::isinf(magnitude))
    return signBit | infBits;
  if (magnitude == 0.0)
    return signBit;

  // Below the normal range the spacing stays that of the smallest binade.
  int exponent = std::max(std::ilogb(magnitude), fmt.minExponent());
  // Scale so that one unit in the last place is 1; y < 2^(m+1) and the
  // scaling by a power of two is exact (no double over- or underflow for
  // the formats above).
  uint64_t n = roundHalfToEven(std::ldexp(magnitude, m - exponent));
  const uint64_t hidden = uint64_t(1) << m;
  if (n == 2 * hidden) { // rounded up into the next binade
    n = hidden;
    ++exponent;
  }
  if (n < hidden) // subnormal (or zero): exponent field 0
    return signBit | static_cast<uint32_t>(n);
  int64_t biased = int64_t(exponent) + fmt.bias();
  if (biased >= int64_t(fmt.maxBiasedExponent()))
    return signBit | infBits; // overflow rounds to infinity
  return signBit | (static_cast<uint32_t>(biased) << m) |
         static_cast<uint32_t>(n - hidden);
}

static double decode(uint32_t bits, BinaryFormat fmt) {
  const int m = fmt.mantissaBits;
  const bool negative = (bits >> (fmt.exponentBits + m)) & 1;
  const uint32_t biased = (bits >> m) & fmt.maxBiasedExponent();
  const uint32_t fraction = bits & ((1u << m) - 1);
  double magnitude;
  if (biased == fmt.maxBiasedExponent())
    magnitude = fraction ? std::numeric_limits<double>::quiet_NaN()
                         : std::numeric_limits<double>::infinity();
  else if (biased == 0)
    magnitude = std::ldexp(double(fraction), fmt.minExponent() - m);
  else
    magnitude =
        std::ldexp(double(fraction + (1u << m)), int(biased) - fmt.bias() - m);
  return negative ? -magnitude : magnitude;
}

uint16_t mlir::conv3d::toBF16Bits(double value) {
  return static_cast<uint16_t>(encode(value, kBF16));
}

uint16_t mlir::conv3d::toF16Bits(double value) {
  return static_cast<uint16_t>(encode(value, kF16));
}

float mlir::conv3d::bf16BitsToFloat(uint16_t bits) {
  // bf16 is the upper half of a float; this also keeps NaN payloads.
  uint32_t wide = uint32_t(bits) << 16;
  float result;
  std::memcpy(&result, &wide, sizeof(result));
  return result;
}

float mlir::conv3d::f16BitsToFloat(uint16_t bits) {
  return static_cast<float>(decode(bits, kF16));
}

double mlir::conv3d::roundToElementType(double value, ElementType type) {
  switch (type) {
  case ElementType::bf16:
    return bf16BitsToFloat(toBF16Bits(value));
  case ElementType::f16:
    return f16BitsToFloat(toF16Bits(value));
  case ElementType::f32: {
    // Same value as (double)(float)value, without relying on the FP
    // environment or on out-of-range float conversions (undefined in C++).
    uint32_t bits = encode(value, kF32);
    float result;
    std::memcpy(&result, &bits, sizeof(result));
    return result;
  }
  }
  llvm_unreachable("unknown element type");
}
