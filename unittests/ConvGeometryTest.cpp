//===- ConvGeometryTest.cpp - the geometry of a 3-D convolution -----------===//

#include "RandomGeometry.h"

#include "conv3d/Geometry/ConvGeometry.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace mlir::conv3d;

namespace {

/// PyTorch's Conv3d output size formula.
int64_t torchOutputSize(int64_t size, int64_t padLow, int64_t padHigh,
                        int64_t dilation, int64_t kernel, int64_t stride) {
  double numerator =
      double(size + padLow + padHigh - dilation * (kernel - 1) - 1);
  return int64_t(std::floor(numerator / double(stride))) + 1;
}

ConvGeometry randomGeometry(std::mt19937_64 &rng) {
  unittest::GeometryLimits limits;
  limits.batch = 3;
  limits.channels = 6;
  limits.filters = 5;
  limits.padding = 7;
  return unittest::randomGeometry(rng, limits);
}

TEST(ConvGeometry, OutputSizeMatchesPyTorch) {
  for (int64_t size = 1; size <= 9; ++size)
    for (int64_t kernel = 1; kernel <= 4; ++kernel)
      for (int64_t stride = 1; stride <= 3; ++stride)
        for (int64_t dilation = 1; dilation <= 3; ++dilation)
          for (int64_t lo = 0; lo <= 3; ++lo)
            for (int64_t hi = 0; hi <= 3; ++hi) {
              ConvGeometry g;
              g.inputSize = {size, 1, 1};
              g.window = {kernel, 1, 1};
              g.strides = {stride, 1, 1};
              g.dilations = {dilation, 1, 1};
              g.padLow = {lo, 0, 0};
              g.padHigh = {hi, 0, 0};
              int64_t expected =
                  torchOutputSize(size, lo, hi, dilation, kernel, stride);
              bool fits = size + lo + hi >= dilation * (kernel - 1) + 1;
              if (fits) {
                ASSERT_EQ(g.outputSize(0), expected)
                    << size << " " << kernel << " " << stride << " " << dilation
                    << " " << lo << " " << hi;
                ASSERT_FALSE(g.validate()) << *g.validate();
              } else {
                ASSERT_LE(g.outputSize(0), 0);
                auto error = g.validate();
                ASSERT_TRUE(error);
                EXPECT_NE(error->find("empty output"), std::string::npos)
                    << *error;
              }
              EXPECT_EQ(g.outputSize(1), 1);
              EXPECT_EQ(g.effectiveWindow(0), dilation * (kernel - 1) + 1);
            }
}

TEST(ConvGeometry, ShapesAndGemmView) {
  std::array<int64_t, 5> input = {2, 9, 10, 11, 6};
  std::array<int64_t, 5> qrscf = {3, 2, 1, 6, 8};
  std::array<int64_t, 5> fqrsc = {8, 3, 2, 1, 6};
  std::array<int64_t, 6> padding = {1, 2, 0, 1, 3, 0};
  ConvGeometry a = ConvGeometry::fromShapes(input, qrscf, FilterLayout::qrscf,
                                            {1, 2, 3}, {2, 1, 1}, padding);
  ConvGeometry b = ConvGeometry::fromShapes(input, fqrsc, FilterLayout::fqrsc,
                                            {1, 2, 3}, {2, 1, 1}, padding);
  for (const ConvGeometry &g : {a, b}) {
    EXPECT_EQ(g.inputShape(), input);
    EXPECT_EQ(g.filterShape(FilterLayout::qrscf), qrscf);
    EXPECT_EQ(g.filterShape(FilterLayout::fqrsc), fqrsc);
    EXPECT_EQ(g.padding(), padding);
    EXPECT_EQ(g.padLow, (std::array<int64_t, 3>{1, 0, 3}));
    EXPECT_EQ(g.padHigh, (std::array<int64_t, 3>{2, 1, 0}));
    // D: (9+3-5)/1+1 = 8, H: (10+1-2)/2+1 = 5, W: (11+3-1)/3+1 = 5.
    EXPECT_EQ(g.outputShape(), (std::array<int64_t, 5>{2, 8, 5, 5, 8}));
    EXPECT_EQ(g.gemmM(), 2 * 8 * 5 * 5);
    EXPECT_EQ(g.gemmN(), 8);
    EXPECT_EQ(g.gemmK(), 3 * 2 * 1 * 6);
    EXPECT_DOUBLE_EQ(g.flops(), 2.0 * 400 * 8 * 36);
    EXPECT_TRUE(g.hasStaticShape());
    EXPECT_FALSE(g.validate());
  }
  ConvGeometry dynamic = a;
  dynamic.inputSize[1] = ConvGeometry::kDynamic;
  EXPECT_FALSE(dynamic.hasStaticShape());
  EXPECT_EQ(dynamic.gemmM(), ConvGeometry::kDynamic);
  EXPECT_EQ(dynamic.outputSize(1), ConvGeometry::kDynamic);
  EXPECT_EQ(dynamic.outputSize(0), 8);
  EXPECT_FALSE(dynamic.validate());
}

TEST(ConvGeometry, DecompositionsInvertRowMajorLinearization) {
  std::mt19937_64 rng(1);
  ScalarIndexMath math;
  for (int trial = 0; trial < 30; ++trial) {
    ConvGeometry g = randomGeometry(rng);
    auto out = g.outputShape();
    int64_t m = 0;
    for (int64_t n = 0; n < out[0]; ++n)
      for (int64_t d = 0; d < out[1]; ++d)
        for (int64_t h = 0; h < out[2]; ++h)
          for (int64_t w = 0; w < out[3]; ++w, ++m) {
            auto idx = g.decomposeM(math, m);
            ASSERT_EQ(idx, (std::array<int64_t, 4>{n, d, h, w}));
            ASSERT_EQ(decomposeOutputPosition(math, m, out), idx);
          }
    ASSERT_EQ(m, g.gemmM());
    int64_t k = 0;
    for (int64_t q = 0; q < g.window[0]; ++q)
      for (int64_t r = 0; r < g.window[1]; ++r)
        for (int64_t s = 0; s < g.window[2]; ++s)
          for (int64_t c = 0; c < g.channels; ++c, ++k)
            ASSERT_EQ(g.decomposeK(math, k),
                      (std::array<int64_t, 4>{q, r, s, c}));
    ASSERT_EQ(k, g.gemmK());
  }
}

TEST(ConvGeometry, InputCoordinates) {
  ConvGeometry g;
  g.strides = {3, 1, 2};
  g.dilations = {2, 1, 4};
  g.padLow = {1, 0, 5};
  ScalarIndexMath math;
  EXPECT_EQ(g.inputCoord(math, kDepth, 4, 2), 4 * 3 - 1 + 2 * 2);
  EXPECT_EQ(g.inputCoord(math, kHeight, 4, 2), 6);
  EXPECT_EQ(g.inputCoord(math, kWidth, 0, 1), -1);
}

TEST(ConvGeometry, ValidOutputRangeMatchesBruteForce) {
  std::mt19937_64 rng(2);
  ScalarIndexMath math;
  int emptyRanges = 0, partialRanges = 0;
  for (int trial = 0; trial < 500; ++trial) {
    ConvGeometry g = randomGeometry(rng);
    ASSERT_FALSE(g.validate()) << *g.validate();
    for (unsigned axis = 0; axis < 3; ++axis) {
      int64_t outSize = g.outputSize(axis);
      for (int64_t tap = 0; tap < g.window[axis]; ++tap) {
        int64_t lo = -1, hi = -1, count = 0;
        for (int64_t o = 0; o < outSize; ++o) {
          int64_t coord = g.inputCoord(math, axis, o, tap);
          if (coord < 0 || coord >= g.inputSize[axis])
            continue;
          if (lo < 0)
            lo = o;
          hi = o + 1;
          ++count;
        }
        ASSERT_EQ(count, hi - lo) << "valid outputs are not contiguous";
        auto range = g.validOutputRange(axis, tap);
        if (count == 0) {
          ++emptyRanges;
          EXPECT_EQ(range.first, range.second);
          EXPECT_GE(range.first, 0);
          EXPECT_LE(range.second, outSize);
        } else {
          partialRanges += count < outSize;
          EXPECT_EQ(range, std::make_pair(lo, hi))
              << "axis " << axis << " tap " << tap << " size "
              << g.inputSize[axis] << " window " << g.window[axis] << " stride "
              << g.strides[axis] << " dilation " << g.dilations[axis] << " pad "
              << g.padLow[axis] << "," << g.padHigh[axis];
        }
      }
    }
  }
  // The sweep must reach taps that see only the halo and partial ranges.
  EXPECT_GT(emptyRanges, 10);
  EXPECT_GT(partialRanges, 100);
}

TEST(ConvGeometry, ValidateNamesTheProblem) {
  auto errorFor = [](auto mutate) {
    ConvGeometry g;
    g.inputSize = {4, 4, 4};
    g.window = {3, 3, 3};
    g.channels = 2;
    g.filters = 2;
    mutate(g);
    auto error = g.validate();
    return error ? *error : std::string("<valid>");
  };
  EXPECT_EQ(errorFor([](ConvGeometry &) {}), "<valid>");
  auto expectMention = [](const std::string &error, const char *text) {
    EXPECT_NE(error.find(text), std::string::npos) << error;
  };
  expectMention(errorFor([](ConvGeometry &g) { g.padLow[1] = -1; }),
                "padding along height must be non-negative");
  expectMention(errorFor([](ConvGeometry &g) { g.padHigh[2] = -2; }),
                "padding along width");
  expectMention(errorFor([](ConvGeometry &g) { g.strides[0] = 0; }),
                "stride along depth must be positive, got 0");
  expectMention(errorFor([](ConvGeometry &g) { g.dilations[2] = -1; }),
                "dilation along width must be positive");
  expectMention(errorFor([](ConvGeometry &g) { g.window[1] = 5; }),
                "empty output");
  expectMention(errorFor([](ConvGeometry &g) {
                  g.window[2] = 3;
                  g.dilations[2] = 2;
                }),
                "spans 5 but the padded input has 4");
  // Padding can make a large window fit.
  EXPECT_EQ(errorFor([](ConvGeometry &g) {
              g.window[1] = 5;
              g.padLow[1] = 1;
              g.padHigh[1] = 0;
            }),
            "<valid>");
  expectMention(errorFor([](ConvGeometry &g) { g.channels = 0; }),
                "channel count must be positive, got 0");
  expectMention(errorFor([](ConvGeometry &g) { g.channels = -3; }),
                "channel count must be positive");
  expectMention(errorFor([](ConvGeometry &g) { g.filters = 0; }),
                "filter count must be positive");
  expectMention(errorFor([](ConvGeometry &g) { g.batch = 0; }),
                "batch size must be positive");
  expectMention(errorFor([](ConvGeometry &g) { g.window[0] = 0; }),
                "filter window along depth must be positive");
  expectMention(errorFor([](ConvGeometry &g) { g.inputSize[2] = 0; }),
                "input width must be positive");
  expectMention(
      errorFor([](ConvGeometry &g) { g.channels = ConvGeometry::kDynamic; }),
      "must be static");
}

} // namespace

TEST(ConvGeometry, GroupsMakeABatchOfPerGroupGemms) {
  // X3D's depthwise 3x3x3 layer and a grouped one of 8 channels per group.
  ConvGeometry g = ConvGeometry::fromShapes(
      {2, 16, 14, 14, 432}, {3, 3, 3, 1, 432}, FilterLayout::qrscf, {1, 1, 1},
      {1, 1, 1}, {1, 1, 1, 1, 1, 1}, /*groups=*/432);
  EXPECT_FALSE(g.validate());
  EXPECT_TRUE(g.isGrouped());
  EXPECT_TRUE(g.isDepthwise());
  EXPECT_EQ(g.channelsPerGroup(), 1);
  EXPECT_EQ(g.filtersPerGroup(), 1);
  EXPECT_EQ(g.gemmBatch(), 432);
  EXPECT_EQ(g.gemmM(), 2 * 16 * 14 * 14);
  EXPECT_EQ(g.gemmN(), 1);
  EXPECT_EQ(g.gemmK(), 27);
  EXPECT_DOUBLE_EQ(g.flops(), 2.0 * 432 * (2 * 16 * 14 * 14) * 27);
  EXPECT_EQ(g.filterShape(FilterLayout::qrscf),
            (std::array<int64_t, 5>{3, 3, 3, 1, 432}));
  EXPECT_EQ(g.filterShape(FilterLayout::fqrsc),
            (std::array<int64_t, 5>{432, 3, 3, 3, 1}));

  g = ConvGeometry::fromShapes({1, 8, 28, 28, 256}, {3, 3, 3, 8, 512},
                               FilterLayout::qrscf, {1, 1, 1}, {1, 1, 1},
                               {1, 1, 1, 1, 1, 1}, /*groups=*/32);
  EXPECT_FALSE(g.validate());
  EXPECT_FALSE(g.isDepthwise());
  EXPECT_EQ(g.gemmN(), 16);
  EXPECT_EQ(g.gemmK(), 27 * 8);
  // k -> (q, r, s, c) runs over the channels of one group.
  ScalarIndexMath math;
  EXPECT_EQ(g.decomposeK(math, 27 * 8 - 1),
            (std::array<int64_t, 4>{2, 2, 2, 7}));

  // Dense convolutions are one group.
  g.groups = 1;
  EXPECT_EQ(g.gemmN(), 512);
  EXPECT_EQ(g.gemmK(), 27 * 256);
}

TEST(ConvGeometry, GroupsValidation) {
  ConvGeometry g;
  g.channels = 12;
  g.filters = 8;
  g.groups = 0;
  EXPECT_EQ(g.validate(), "groups must be positive, got 0");
  g.groups = 5;
  EXPECT_EQ(g.validate(), "the 12 input channels do not split into 5 groups "
                          "(C must be a multiple of groups)");
  g.groups = 3;
  EXPECT_EQ(g.validate(), "the 8 filters do not split into 3 groups (F must "
                          "be a multiple of groups)");
  g.groups = 4;
  EXPECT_FALSE(g.validate());
}
