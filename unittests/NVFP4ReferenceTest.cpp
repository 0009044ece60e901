//===- NVFP4ReferenceTest.cpp - scalar NVFP4 semantics --------------------===//

#include "conv3d/Quant/NVFP4Reference.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

using namespace mlir::conv3d;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();

/// The value of positive E4M3 (FN) code 0 .. 0x7E, from the format's
/// definition: bias 7, 3 fraction bits, exponent field 0 is subnormal.
float decodeE4M3(unsigned code) {
  unsigned e = code >> 3, m = code & 7;
  if (e == 0)
    return std::ldexp(float(m), -9);
  return std::ldexp(1.0f + float(m) / 8.0f, int(e) - 7);
}

/// Nearest E4M3 value by exhaustive search, ties to the even code.
float bruteForceE4M3(float s) {
  float best = 0;
  double bestDistance = INFINITY;
  for (unsigned code = 0; code <= 0x7E; ++code) {
    double distance = std::fabs(double(decodeE4M3(code)) - double(s));
    if (distance < bestDistance ||
        (distance == bestDistance && code % 2 == 0)) {
      best = decodeE4M3(code);
      bestDistance = distance;
    }
  }
  return best;
}

uint32_t bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof(b));
  return b;
}

std::vector<float> quantize(const std::vector<float> &values, float amax) {
  std::vector<float> out(values.size(), -12345.0f);
  nvfp4QuantizeBlock(values.data(), out.data(), values.size(), amax);
  return out;
}

TEST(NVFP4Reference, E2M1TiesGoToTheEvenCode) {
  // The ties listed in spec/nvfp4.md.
  EXPECT_EQ(nvfp4RoundE2M1(0.25f), 0.0f);
  EXPECT_EQ(nvfp4RoundE2M1(0.75f), 1.0f);
  EXPECT_EQ(nvfp4RoundE2M1(1.25f), 1.0f);
  EXPECT_EQ(nvfp4RoundE2M1(1.75f), 2.0f);
  EXPECT_EQ(nvfp4RoundE2M1(2.5f), 2.0f);
  EXPECT_EQ(nvfp4RoundE2M1(3.5f), 4.0f);
  EXPECT_EQ(nvfp4RoundE2M1(5.0f), 4.0f);
  // One float off each tie goes to the nearer neighbour.
  const float ties[] = {0.25f, 0.75f, 1.25f, 1.75f, 2.5f, 3.5f, 5.0f};
  const float below[] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f};
  const float above[] = {0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
  for (int i = 0; i < 7; ++i) {
    EXPECT_EQ(nvfp4RoundE2M1(std::nextafter(ties[i], 0.0f)), below[i]);
    EXPECT_EQ(nvfp4RoundE2M1(std::nextafter(ties[i], 10.0f)), above[i]);
  }
}

TEST(NVFP4Reference, E2M1ValuesAndSaturation) {
  for (float v : {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f})
    EXPECT_EQ(nvfp4RoundE2M1(v), v);
  EXPECT_EQ(nvfp4RoundE2M1(5.5f), 6.0f);
  EXPECT_EQ(nvfp4RoundE2M1(6.5f), 6.0f);
  EXPECT_EQ(nvfp4RoundE2M1(1e30f), 6.0f);
  EXPECT_EQ(nvfp4RoundE2M1(kInf), 6.0f);
  EXPECT_EQ(nvfp4RoundE2M1(1e-30f), 0.0f);
  EXPECT_EQ(nvfp4RoundE2M1(0.4f), 0.5f);
  EXPECT_EQ(nvfp4RoundE2M1(2.9f), 3.0f);
  EXPECT_TRUE(std::isnan(nvfp4RoundE2M1(kNaN)));
}

TEST(NVFP4Reference, E4M3RepresentablesAndMidpoints) {
  for (unsigned code = 0; code <= 0x7E; ++code) {
    float v = decodeE4M3(code);
    ASSERT_EQ(nvfp4RoundE4M3(v), v) << "code " << code;
  }
  EXPECT_EQ(decodeE4M3(0x7E), 448.0f);
  EXPECT_EQ(decodeE4M3(0x01), 0x1p-9f);
  EXPECT_EQ(decodeE4M3(0x08), 0x1p-6f);
  for (unsigned code = 0; code < 0x7E; ++code) {
    float lo = decodeE4M3(code), hi = decodeE4M3(code + 1);
    float mid = (lo + hi) / 2; // exact: one more bit than E4M3 has
    ASSERT_EQ(nvfp4RoundE4M3(mid), code % 2 == 0 ? lo : hi) << "code " << code;
    ASSERT_EQ(nvfp4RoundE4M3(std::nextafter(mid, 0.0f)), lo) << code;
    ASSERT_EQ(nvfp4RoundE4M3(std::nextafter(mid, 500.0f)), hi) << code;
  }
}

TEST(NVFP4Reference, E4M3SubnormalsAndFlushToZero) {
  EXPECT_EQ(nvfp4RoundE4M3(0x1p-10f), 0.0f); // half of 2^-9: tie to code 0
  EXPECT_EQ(nvfp4RoundE4M3(std::nextafter(0x1p-10f, 1.0f)), 0x1p-9f);
  EXPECT_EQ(nvfp4RoundE4M3(0x1p-11f), 0.0f);
  EXPECT_EQ(nvfp4RoundE4M3(1e-30f), 0.0f);
  EXPECT_EQ(nvfp4RoundE4M3(0x1p-140f), 0.0f); // f32 subnormal input
  EXPECT_EQ(nvfp4RoundE4M3(0.0f), 0.0f);
  EXPECT_EQ(nvfp4RoundE4M3(2.5f * 0x1p-9f), 2 * 0x1p-9f);
  EXPECT_EQ(nvfp4RoundE4M3(3.5f * 0x1p-9f), 4 * 0x1p-9f);
  EXPECT_EQ(nvfp4RoundE4M3(7.5f * 0x1p-9f), 0x1p-6f); // into the normals
  EXPECT_EQ(nvfp4RoundE4M3(0.3f), 0.3125f);
  EXPECT_EQ(nvfp4RoundE4M3(448.0f), 448.0f);
  EXPECT_EQ(nvfp4RoundE4M3(420.0f), 416.0f);
  EXPECT_EQ(nvfp4RoundE4M3(432.0f), 448.0f); // tie 416|448 -> even 448
  EXPECT_TRUE(std::isnan(nvfp4RoundE4M3(kNaN)));
}

TEST(NVFP4Reference, E4M3SweepMatchesExhaustiveSearch) {
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> linear(0.0f, 448.0f);
  std::uniform_real_distribution<float> exponent(-12.0f, 8.8f);
  for (int i = 0; i < 20000; ++i) {
    float s = i % 2 ? linear(rng) : std::exp2(exponent(rng));
    s = std::min(s, 448.0f);
    ASSERT_EQ(nvfp4RoundE4M3(s), bruteForceE4M3(s)) << s;
  }
}

TEST(NVFP4Reference, BlockWithUnitScale) {
  // amax = 2688 makes gs = 1; bmax = 6 makes s = s8 = scale = 1, so the
  // outputs are the E2M1 roundings themselves.
  std::vector<float> in = {0.3f,  -0.75f, 1.25f, 2.6f,  5.0f,  6.0f,
                           -3.4f, 0.0f,   0.25f, 1.75f, -3.5f, 2.5f,
                           0.2f,  4.4f,   1.1f,  -0.6f};
  std::vector<float> expected = {0.5f,  -1.0f, 1.0f, 3.0f, 4.0f,  6.0f,
                                 -3.0f, 0.0f,  0.0f, 2.0f, -4.0f, 2.0f,
                                 0.0f,  4.0f,  1.0f, -0.5f};
  EXPECT_EQ(quantize(in, 2688.0f), expected);
  // amax above the data maximum: gs = 4, s = 0.25 = s8, scale = 1 again.
  EXPECT_EQ(quantize(in, 4 * 2688.0f), expected);
}

TEST(NVFP4Reference, BlockScaleIsRoundedToE4M3) {
  // gs = 1, bmax = 1.8: s = 0.3 rounds to s8 = 0.3125 = scale and
  // inv = 3.2f. 0.078125 * 3.2f rounds in f32 to exactly 0.25, a tie that
  // goes to 0.
  std::vector<float> in = {1.8f, 0.5f, -1.0f, 0.078125f, 0.2f};
  std::vector<float> out = quantize(in, 2688.0f);
  EXPECT_EQ(out[0], 6 * 0.3125f);
  EXPECT_EQ(out[1], 1.5f * 0.3125f);
  EXPECT_EQ(out[2], -3 * 0.3125f);
  EXPECT_EQ(out[3], 0.0f);
  EXPECT_EQ(out[4], 0.5f * 0.3125f);
}

TEST(NVFP4Reference, ZeroAmaxAndZeroScaleGiveZeros) {
  std::vector<float> in = {1.0f, kNaN, -kInf, kInf, -2.0f};
  for (float v : quantize(in, 0.0f))
    EXPECT_EQ(bits(v), 0u); // +0, no NaN, no Inf

  // gs = 1: s = 2^-11 and the tie s = 2^-10 both round to s8 = 0.
  for (float bmax : {6 * 0x1p-11f, 6 * 0x1p-10f}) {
    std::vector<float> tiny = {bmax, -bmax / 2, kNaN, 0.0f};
    for (float v : quantize(tiny, 2688.0f))
      EXPECT_EQ(bits(v), 0u) << bmax;
  }
  // Just above the tie the scale is the smallest subnormal, 2^-9.
  float bmax = 6 * 0x1p-10f * (1 + 0x1p-20f);
  std::vector<float> out = quantize({bmax, -bmax / 3}, 2688.0f);
  EXPECT_EQ(out[0], 3 * 0x1p-9f);
  EXPECT_EQ(out[1], -1 * 0x1p-9f);
}

TEST(NVFP4Reference, SubnormalScales) {
  // With gs = 1 and bmax = 6 * m * 2^-9, s8 is subnormal code m and
  // values at 6, 3 and 1 times the scale come back exactly.
  for (int m = 1; m <= 7; ++m) {
    float scale = m * 0x1p-9f;
    std::vector<float> in = {6 * scale, -3 * scale, scale, 0.5f * scale};
    EXPECT_EQ(quantize(in, 2688.0f), in) << m;
  }
  // s = 2.5 * 2^-9 ties to code 2, s = 3.5 * 2^-9 to code 4; the block
  // maximum then saturates at 6 * s8.
  EXPECT_EQ(quantize({15 * 0x1p-9f}, 2688.0f)[0], 12 * 0x1p-9f);
  EXPECT_EQ(quantize({21 * 0x1p-9f}, 2688.0f)[0], 24 * 0x1p-9f);
}

TEST(NVFP4Reference, NaNStaysInPlace) {
  // bmax ignores the NaN: s = 3 / 6 = 0.5, scale 0.5.
  std::vector<float> in = {kNaN, 1.0f, -2.0f, 3.0f, kNaN};
  std::vector<float> out = quantize(in, 2688.0f);
  EXPECT_TRUE(std::isnan(out[0]));
  EXPECT_EQ(out[1], 1.0f);
  EXPECT_EQ(out[2], -2.0f);
  EXPECT_EQ(out[3], 3.0f);
  EXPECT_TRUE(std::isnan(out[4]));
  // The same as with the NaNs replaced by zeros, everywhere else.
  std::vector<float> zeroed = quantize({0.0f, 1.0f, -2.0f, 3.0f, 0.0f}, 2688.f);
  for (int i = 1; i < 4; ++i)
    EXPECT_EQ(out[i], zeroed[i]);
}

TEST(NVFP4Reference, InfinitySetsTheMaximumScale) {
  // amax = 10.5 makes gs = 2^-8; an infinity makes s = 448, so the scale is
  // 1.75 and infinities come out as +-6 * 1.75.
  std::vector<float> in = {kInf, 1.75f, -3.5f, 0.1f, -kInf, 7.0f};
  std::vector<float> out = quantize(in, 10.5f);
  EXPECT_EQ(out[0], 10.5f);
  EXPECT_EQ(out[1], 1.75f);
  EXPECT_EQ(out[2], -3.5f);
  EXPECT_EQ(out[3], 0.0f);
  EXPECT_EQ(out[4], -10.5f);
  EXPECT_EQ(out[5], 7.0f);
}

TEST(NVFP4Reference, KeepsF32Subnormals) {
  // amax = 2688 * 2^-131 gives the subnormal gs = 2^-131; bmax = 3 * 2^-126
  // gives s8 = 16 and scale 2^-127, so outputs are f32 subnormals that a
  // flush-to-zero mode would lose.
  std::vector<float> in = {3 * 0x1p-126f, 0x1p-128f, -1.5f * 0x1p-127f};
  std::vector<float> out = quantize(in, 2688 * 0x1p-131f);
  EXPECT_EQ(out[0], 3 * 0x1p-126f);
  EXPECT_EQ(out[1], 0x1p-128f);
  EXPECT_EQ(out[2], -1.5f * 0x1p-127f);
}

TEST(NVFP4Reference, PartialBlockEqualsZeroPaddedBlock) {
  std::mt19937 rng(5);
  std::normal_distribution<float> normal;
  std::vector<float> full(16, 0.0f);
  for (int i = 0; i < 5; ++i)
    full[i] = normal(rng);
  std::vector<float> partial(full.begin(), full.begin() + 5);
  std::vector<float> a = quantize(full, 4.0f), b = quantize(partial, 4.0f);
  for (int i = 0; i < 5; ++i)
    EXPECT_EQ(a[i], b[i]);
}

TEST(NVFP4Reference, OutputsAreNearestGridPoints) {
  // Property check on random blocks: each |out| is q * scale for an E2M1
  // magnitude q, and no other grid point is closer to |v| (up to f32
  // rounding of a = |v| / scale).
  const float grid[] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6};
  std::mt19937 rng(9);
  std::normal_distribution<float> normal;
  for (int trial = 0; trial < 2000; ++trial) {
    std::vector<float> in(16);
    float spread = std::exp2(float(int(rng() % 20)) - 10);
    for (float &v : in)
      v = normal(rng) * spread;
    float amax = spread * 4;
    std::vector<float> out = quantize(in, amax);
    float bmax = 0;
    for (float v : in)
      bmax = std::max(bmax, std::fabs(v));
    float gs = amax / 2688.0f;
    float s8 = nvfp4RoundE4M3(std::min(bmax / (6.0f * gs), 448.0f));
    ASSERT_GT(s8, 0.0f);
    float scale = s8 * gs;
    for (size_t i = 0; i < in.size(); ++i) {
      double q = std::fabs(double(out[i])) / double(scale);
      bool onGrid = false;
      for (float g : grid)
        onGrid |= std::fabs(q - g) <= 1e-6 * g;
      ASSERT_TRUE(onGrid) << in[i] << " -> " << out[i];
      ASSERT_TRUE(out[i] == 0 || std::signbit(out[i]) == std::signbit(in[i]));
      double a = std::fabs(double(in[i])) / double(scale);
      for (float g : grid)
        ASSERT_LE(std::fabs(a - std::round(q * 2) / 2),
                  std::fabs(a - g) + 1e-5 * a)
            << in[i];
    }
  }
}

TEST(NVFP4Reference, TensorBlocksRunAlongTheChosenAxes) {
  HostTensor x = HostTensor::zeros(ElementType::bf16, {3, 40});
  fillRandomNormal(x, 17);
  const float amax = 3.0f;
  HostTensor y = referenceQuantize(x, 16, amax, 1, 1);
  ASSERT_EQ(y.shape, x.shape);
  ASSERT_EQ(y.type, ElementType::bf16);
  for (int64_t row = 0; row < 3; ++row) {
    for (int64_t start = 0; start < 40; start += 16) {
      int64_t count = std::min<int64_t>(16, 40 - start);
      std::vector<float> block;
      for (int64_t j = 0; j < count; ++j)
        block.push_back(float(x.get(row * 40 + start + j)));
      std::vector<float> expected = quantize(block, amax);
      for (int64_t j = 0; j < count; ++j)
        ASSERT_EQ(y.get(row * 40 + start + j),
                  roundToElementType(expected[j], ElementType::bf16));
    }
  }

  // Blocks along axis 0 of a [40, 3] tensor are columns.
  HostTensor xt = HostTensor::zeros(ElementType::f32, {40, 3});
  for (int64_t i = 0; i < 40; ++i)
    for (int64_t j = 0; j < 3; ++j)
      xt.set(i * 3 + j, x.get(j * 40 + i));
  HostTensor yt = referenceQuantize(xt, 16, amax, 0, 0);
  for (int64_t i = 0; i < 40; ++i)
    for (int64_t j = 0; j < 3; ++j)
      ASSERT_EQ(roundToElementType(yt.get(i * 3 + j), ElementType::bf16),
                y.get(j * 40 + i));

  // Axes [1, 2] of [2, 3, 8] form rows of 24: blocks of 16 and 8.
  HostTensor x3 = HostTensor::zeros(ElementType::f16, {2, 3, 8});
  fillRandomNormal(x3, 23);
  HostTensor y3 = referenceQuantize(x3, 16, amax, 1, 2);
  HostTensor x2 = HostTensor::zeros(ElementType::f16, {2, 24});
  x2.bytes = x3.bytes;
  HostTensor y2 = referenceQuantize(x2, 16, amax, 1, 1);
  EXPECT_EQ(y3.bytes, y2.bytes);
  // ... which differs from blocks of 8 along the last axis alone.
  HostTensor y8 = referenceQuantize(x3, 16, amax, 2, 2);
  EXPECT_NE(y3.bytes, y8.bytes);
}

} // namespace
