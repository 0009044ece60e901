//===- ElementTypeTest.cpp - element types and their rounding -------------===//

#include "conv3d/Support/ElementType.h"
#include "conv3d/Support/HostTensor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

using namespace mlir::conv3d;

namespace {

double fromBits64(uint64_t bits) {
  double d;
  std::memcpy(&d, &bits, sizeof(d));
  return d;
}
uint64_t bits64(double d) {
  uint64_t bits;
  std::memcpy(&bits, &d, sizeof(bits));
  return bits;
}
uint32_t bits32(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof(bits));
  return bits;
}

bool isBF16NaN(uint16_t b) { return (b & 0x7F80) == 0x7F80 && (b & 0x7F); }
bool isF16NaN(uint16_t b) { return (b & 0x7C00) == 0x7C00 && (b & 0x3FF); }

/// bf16 rounding of a double in bf16's normal range by integer arithmetic on
/// the double's bits: round the 52-bit fraction to 7 bits (nearest even),
/// then rebias the exponent from 1023 to 127.
uint16_t bf16Oracle(double d) {
  uint64_t b = bits64(d);
  uint64_t sign = b >> 63;
  uint64_t magnitude = b & ~(uint64_t(1) << 63);
  uint64_t rounded =
      (magnitude + ((uint64_t(1) << 44) - 1) + ((magnitude >> 45) & 1)) >> 45;
  // rounded = biased11 << 7 | fraction7, with a carry into the exponent.
  uint64_t exponent = (rounded >> 7) - 1023 + 127;
  return uint16_t((sign << 15) | (exponent << 7) | (rounded & 0x7F));
}

uint16_t f16Native(double d) {
  _Float16 h = static_cast<_Float16>(d); // libgcc __truncdfhf2, one rounding
  uint16_t bits;
  std::memcpy(&bits, &h, sizeof(bits));
  return bits;
}

TEST(ElementType, NamesAndSizes) {
  for (ElementType type :
       {ElementType::bf16, ElementType::f16, ElementType::f32}) {
    EXPECT_EQ(parseElementType(stringifyElementType(type)), type);
  }
  EXPECT_EQ(stringifyElementType(ElementType::bf16), "bf16");
  EXPECT_EQ(stringifyElementType(ElementType::f16), "f16");
  EXPECT_EQ(stringifyElementType(ElementType::f32), "f32");
  EXPECT_FALSE(parseElementType("f64"));
  EXPECT_FALSE(parseElementType("BF16"));
  EXPECT_FALSE(parseElementType(""));
  EXPECT_EQ(elementSize(ElementType::bf16), 2u);
  EXPECT_EQ(elementSize(ElementType::f16), 2u);
  EXPECT_EQ(elementSize(ElementType::f32), 4u);
}

TEST(ElementType, BF16TiesRoundToEven) {
  EXPECT_EQ(toBF16Bits(1.0), 0x3F80);
  // 1 + 2^-8 is halfway between 1 (even) and 1 + 2^-7 (odd).
  EXPECT_EQ(toBF16Bits(1.0 + 0x1p-8), 0x3F80);
  // 1 + 3*2^-8 is halfway between 1 + 2^-7 (odd) and 1 + 2^-6 (even).
  EXPECT_EQ(toBF16Bits(1.0 + 3 * 0x1p-8), 0x3F82);
  EXPECT_EQ(toBF16Bits(-(1.0 + 0x1p-8)), 0xBF80);
  // Just off the tie goes to the nearer neighbour.
  EXPECT_EQ(toBF16Bits(std::nextafter(1.0 + 0x1p-8, 2.0)), 0x3F81);
  EXPECT_EQ(toBF16Bits(std::nextafter(1.0 + 3 * 0x1p-8, 0.0)), 0x3F81);
}

TEST(ElementType, BF16FromDoubleRoundsOnce) {
  // Through float, 1 + 2^-8 + 2^-30 first becomes the tie 1 + 2^-8 and then
  // rounds down to 1; rounded once it is above the tie and rounds up.
  double x = 1.0 + 0x1p-8 + 0x1p-30;
  EXPECT_EQ(toBF16Bits(static_cast<float>(x)), 0x3F80); // double rounding
  EXPECT_EQ(toBF16Bits(x), 0x3F81);
  EXPECT_EQ(roundToElementType(x, ElementType::bf16), 1.0 + 0x1p-7);
  double y = 1.0 + 3 * 0x1p-8 - 0x1p-30; // below a tie that rounds up
  EXPECT_EQ(toBF16Bits(y), 0x3F81);
}

TEST(ElementType, BF16SpecialValues) {
  EXPECT_EQ(toBF16Bits(0.0), 0x0000);
  EXPECT_EQ(toBF16Bits(-0.0), 0x8000);
  EXPECT_EQ(toBF16Bits(std::numeric_limits<double>::infinity()), 0x7F80);
  EXPECT_EQ(toBF16Bits(-std::numeric_limits<double>::infinity()), 0xFF80);
  // Largest finite bf16 is (2 - 2^-7) * 2^127; the tie with 2^128 overflows.
  EXPECT_EQ(toBF16Bits((2.0 - 0x1p-7) * 0x1p127), 0x7F7F);
  EXPECT_EQ(toBF16Bits((2.0 - 0x1p-8) * 0x1p127), 0x7F80);
  EXPECT_EQ(toBF16Bits(std::nextafter((2.0 - 0x1p-8) * 0x1p127, 0.0)), 0x7F7F);
  EXPECT_EQ(toBF16Bits(1e300), 0x7F80);
  EXPECT_EQ(toBF16Bits(-1e300), 0xFF80);
  // Subnormals: the smallest is 2^-133; half of it ties to 0.
  EXPECT_EQ(toBF16Bits(0x1p-133), 0x0001);
  EXPECT_EQ(toBF16Bits(0x1p-134), 0x0000);
  EXPECT_EQ(toBF16Bits(0x1p-134 + 0x1p-160), 0x0001);
  EXPECT_EQ(toBF16Bits(3 * 0x1p-134), 0x0002);
  EXPECT_EQ(toBF16Bits(0x1p-126), 0x0080);            // smallest normal
  EXPECT_EQ(toBF16Bits(0x1p-126 - 0x1p-134), 0x0080); // tie into the normals
  EXPECT_EQ(toBF16Bits(1e-300), 0x0000);
  EXPECT_EQ(toBF16Bits(-1e-300), 0x8000);
  // NaN stays NaN, even when the payload sits only in bits that truncation
  // would drop.
  EXPECT_TRUE(isBF16NaN(toBF16Bits(std::nan(""))));
  EXPECT_TRUE(isBF16NaN(toBF16Bits(fromBits64(0x7FF0000000000001ull))));
  EXPECT_TRUE(isBF16NaN(toBF16Bits(fromBits64(0xFFF0000000000001ull))));
  EXPECT_TRUE(std::isnan(bf16BitsToFloat(0x7FC0)));
  EXPECT_TRUE(std::isinf(bf16BitsToFloat(0xFF80)));
}

TEST(ElementType, BF16MatchesBitOracle) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 200000; ++i) {
    // Random doubles with exponents inside bf16's normal range.
    uint64_t fraction = rng() & ((uint64_t(1) << 52) - 1);
    uint64_t exponent = 1023 - 120 + rng() % 240;
    if (i % 4 == 0) // hit ties and near-ties often
      fraction &= ~((uint64_t(1) << 40) - 1);
    uint64_t sign = rng() & 1;
    double d = fromBits64((sign << 63) | (exponent << 52) | fraction);
    ASSERT_EQ(toBF16Bits(d), bf16Oracle(d)) << d;
  }
}

TEST(ElementType, BF16DecodesAndReencodesEveryPattern) {
  for (uint32_t b = 0; b <= 0xFFFF; ++b) {
    float f = bf16BitsToFloat(uint16_t(b));
    EXPECT_EQ(bits32(f), b << 16);
    if (!std::isnan(f))
      ASSERT_EQ(toBF16Bits(f), b);
    else
      ASSERT_TRUE(isBF16NaN(toBF16Bits(f)));
  }
}

TEST(ElementType, F16RoundingCases) {
  EXPECT_EQ(toF16Bits(1.0), 0x3C00);
  EXPECT_EQ(toF16Bits(1.0 + 0x1p-11), 0x3C00);     // tie to even
  EXPECT_EQ(toF16Bits(1.0 + 3 * 0x1p-11), 0x3C02); // tie to even
  // Double rounding through float would give 0x3C00 here.
  double x = 1.0 + 0x1p-11 + 0x1p-40;
  EXPECT_EQ(toF16Bits(static_cast<float>(x)), 0x3C00);
  EXPECT_EQ(toF16Bits(x), 0x3C01);
  // Overflow: max 65504; the tie at 65520 goes to infinity.
  EXPECT_EQ(toF16Bits(65504.0), 0x7BFF);
  EXPECT_EQ(toF16Bits(65519.99), 0x7BFF);
  EXPECT_EQ(toF16Bits(65520.0), 0x7C00);
  EXPECT_EQ(toF16Bits(-1e10), 0xFC00);
  // Subnormals, spacing 2^-24.
  EXPECT_EQ(toF16Bits(0x1p-24), 0x0001);
  EXPECT_EQ(toF16Bits(0x1p-25), 0x0000);
  EXPECT_EQ(toF16Bits(-0x1p-25), 0x8000);
  EXPECT_EQ(toF16Bits(0x1p-25 + 0x1p-50), 0x0001);
  EXPECT_EQ(toF16Bits(3 * 0x1p-25), 0x0002);
  EXPECT_EQ(toF16Bits(0x1p-14), 0x0400);
  EXPECT_EQ(toF16Bits(0x1p-14 - 0x1p-25), 0x0400);
  EXPECT_EQ(toF16Bits(0x1p-14 - 0x1p-24), 0x03FF);
  EXPECT_EQ(toF16Bits(-0.0), 0x8000);
  EXPECT_TRUE(isF16NaN(toF16Bits(std::nan(""))));
  EXPECT_TRUE(isF16NaN(toF16Bits(fromBits64(0x7FF0000000000001ull))));
  EXPECT_EQ(f16BitsToFloat(0x0001), 0x1p-24f);
  EXPECT_EQ(f16BitsToFloat(0x7BFF), 65504.0f);
  EXPECT_EQ(f16BitsToFloat(0xC000), -2.0f);
  EXPECT_TRUE(std::isinf(f16BitsToFloat(0x7C00)));
  EXPECT_TRUE(std::isnan(f16BitsToFloat(0x7E00)));
}

TEST(ElementType, F16MatchesCompilerConversion) {
  // Every pattern decodes to what the compiler's _Float16 holds and
  // re-encodes to itself.
  for (uint32_t b = 0; b <= 0xFFFF; ++b) {
    _Float16 h;
    uint16_t b16 = uint16_t(b);
    std::memcpy(&h, &b16, sizeof(h));
    float expected = static_cast<float>(h);
    float actual = f16BitsToFloat(b16);
    if (std::isnan(expected)) {
      ASSERT_TRUE(std::isnan(actual));
      ASSERT_TRUE(isF16NaN(toF16Bits(actual)));
      continue;
    }
    ASSERT_EQ(bits32(actual), bits32(expected)) << b;
    ASSERT_EQ(toF16Bits(actual), b16);
  }
  // Random doubles around the f16 range, compared with the one-step
  // double -> half conversion of the runtime library.
  std::mt19937_64 rng(11);
  for (int i = 0; i < 200000; ++i) {
    uint64_t fraction = rng() & ((uint64_t(1) << 52) - 1);
    if (i % 4 == 0)
      fraction &= ~((uint64_t(1) << 36) - 1);
    uint64_t exponent = 1023 - 30 + rng() % 50;
    double d = fromBits64(((rng() & 1) << 63) | (exponent << 52) | fraction);
    ASSERT_EQ(toF16Bits(d), f16Native(d)) << d;
  }
}

TEST(ElementType, RoundToF32IsFloatCast) {
  std::mt19937_64 rng(3);
  for (int i = 0; i < 100000; ++i) {
    double d = fromBits64(rng());
    if (std::isnan(d) || std::fabs(d) > 3e38)
      continue;
    double expected = static_cast<double>(static_cast<float>(d));
    ASSERT_EQ(bits64(roundToElementType(d, ElementType::f32)), bits64(expected))
        << d;
  }
  EXPECT_TRUE(std::isinf(roundToElementType(1e300, ElementType::f32)));
  EXPECT_EQ(roundToElementType(1.0 + 0x1p-24, ElementType::f32), 1.0);
  EXPECT_EQ(roundToElementType(1.0 + 0x1p-24 + 0x1p-40, ElementType::f32),
            1.0 + 0x1p-23);
  EXPECT_EQ(roundToElementType(0x1p-150, ElementType::f32), 0.0); // tie
  EXPECT_EQ(roundToElementType(0x1p-149, ElementType::f32), 0x1p-149);
}

TEST(HostTensor, StoresRoundedValues) {
  HostTensor t = HostTensor::zeros(ElementType::bf16, {2, 3});
  EXPECT_EQ(t.numElements(), 6);
  EXPECT_EQ(t.sizeInBytes(), 12u);
  for (int64_t i = 0; i < 6; ++i)
    EXPECT_EQ(t.get(i), 0.0);
  t.set(4, 1.0 + 0x1p-8 + 0x1p-30);
  EXPECT_EQ(t.get(4), 1.0 + 0x1p-7);
  uint16_t raw;
  std::memcpy(&raw, static_cast<const uint8_t *>(t.data()) + 8, 2);
  EXPECT_EQ(raw, 0x3F81);

  HostTensor h = HostTensor::zeros(ElementType::f16, {});
  EXPECT_EQ(h.numElements(), 1);
  h.set(0, 65520.0);
  EXPECT_TRUE(std::isinf(h.get(0)));

  HostTensor f = HostTensor::zeros(ElementType::f32, {0, 4});
  EXPECT_EQ(f.numElements(), 0);
  EXPECT_EQ(f.sizeInBytes(), 0u);
}

TEST(HostTensor, FillsAreDeterministicAndRounded) {
  for (ElementType type :
       {ElementType::bf16, ElementType::f16, ElementType::f32}) {
    HostTensor a = HostTensor::zeros(type, {1000});
    HostTensor b = HostTensor::zeros(type, {1000});
    fillPoison(a);
    for (int64_t i = 0; i < a.numElements(); ++i)
      ASSERT_TRUE(std::isnan(a.get(i)));
    fillRandomNormal(a, 42, 2.0);
    fillRandomNormal(b, 42, 2.0);
    EXPECT_EQ(a.bytes, b.bytes);
    double sum = 0, squares = 0;
    for (int64_t i = 0; i < a.numElements(); ++i) {
      double v = a.get(i);
      EXPECT_EQ(roundToElementType(v, type), v);
      sum += v;
      squares += v * v;
    }
    EXPECT_NEAR(sum / 1000, 0.0, 0.3);
    EXPECT_NEAR(std::sqrt(squares / 1000), 2.0, 0.2);
    fillRandomNormal(b, 43, 2.0);
    EXPECT_NE(a.bytes, b.bytes);

    fillRandomUniform(a, 5, -3.0, -1.0);
    for (int64_t i = 0; i < a.numElements(); ++i) {
      EXPECT_GE(a.get(i), -3.0);
      EXPECT_LE(a.get(i), -1.0);
    }
  }
}

TEST(HostTensor, OutlierHeavyCoversTheCategories) {
  HostTensor t = HostTensor::zeros(ElementType::bf16, {64, 64});
  fillPoison(t); // previous contents must not leak into the result
  fillOutlierHeavy(t, 1);
  double amax = 0;
  int64_t zeros = 0, outliers = 0, small = 0;
  for (int64_t i = 0; i < t.numElements(); ++i) {
    double v = std::fabs(t.get(i));
    ASSERT_TRUE(std::isfinite(v));
    amax = std::max(amax, v);
    zeros += v == 0;
    outliers += v >= 10;
    small += v > 0 && v <= 1e-3;
  }
  EXPECT_GT(zeros, 100);
  EXPECT_GT(outliers, 5);
  EXPECT_GT(small, t.numElements() / 2);
  EXPECT_LE(amax, 1000.0);
  // Block scales s = bmax * 448 / amax of the 16-element groups: some must
  // round to 0 in E4M3 (< 2^-10), some be E4M3 subnormals, some normal.
  int belowHalf = 0, subnormal = 0, normal = 0;
  for (int64_t g = 0; g < t.numElements() / 16; ++g) {
    double bmax = 0;
    for (int64_t i = 0; i < 16; ++i)
      bmax = std::max(bmax, std::fabs(t.get(16 * g + i)));
    if (bmax == 0)
      continue;
    double s = bmax * 448 / amax;
    belowHalf += s < 0x1p-10;
    subnormal += s >= 0x1p-9 && s < 0x1p-6;
    normal += s >= 0x1p-6;
  }
  EXPECT_GT(belowHalf, 5);
  EXPECT_GT(subnormal, 5);
  EXPECT_GT(normal, 5);
}

} // namespace
