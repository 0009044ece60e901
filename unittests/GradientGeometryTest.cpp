//===- GradientGeometryTest.cpp - gradients as forward convolutions -------===//
//
// The stride-phase data gradient and the weight gradient as a forward
// convolution must each compute exactly the forward's multiply-adds, no
// more (no zeros multiplied), no fewer. Checked per axis by enumerating the
// (input row, output row, tap) triples of both formulations on random
// geometries; the reference gradients are checked against the forward
// reference by the adjoint identity <dy, conv(x, w)> = <dgrad(dy, w), x> =
// <wgrad(x, dy), w>.
//
//===----------------------------------------------------------------------===//

#include "RandomGeometry.h"

#include "conv3d/Geometry/GradientGeometry.h"
#include "conv3d/Reference/ReferenceConv.h"
#include "conv3d/Reference/ReferenceGradients.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <tuple>
#include <vector>

using namespace mlir::conv3d;

namespace {

using Term =
    std::tuple<int64_t, int64_t, int64_t>; // input row, output row, tap

ConvGeometry randomGeometry(std::mt19937_64 &rng, int64_t maxSize = 12) {
  unittest::GeometryLimits limits;
  limits.inputSize = maxSize;
  return unittest::randomGeometry(rng, limits);
}

std::vector<Term> forwardTerms(const ConvGeometry &g, unsigned axis) {
  std::vector<Term> terms;
  for (int64_t o = 0; o < g.outputSize(axis); ++o)
    for (int64_t t = 0; t < g.window[axis]; ++t) {
      int64_t i = o * g.strides[axis] - g.padLow[axis] + t * g.dilations[axis];
      if (i >= 0 && i < g.inputSize[axis])
        terms.emplace_back(i, o, t);
    }
  std::sort(terms.begin(), terms.end());
  return terms;
}

TEST(GradientGeometry, DgradPhasesComputeExactlyTheForwardTerms) {
  std::mt19937_64 rng(22);
  for (int trial = 0; trial < 3000; ++trial) {
    ConvGeometry g = randomGeometry(rng);
    ASSERT_FALSE(g.validate()) << *g.validate();
    for (unsigned axis = 0; axis < 3; ++axis) {
      std::vector<Term> fromPhases;
      std::vector<int64_t> covered(g.inputSize[axis], 0);
      for (int64_t phase = 0; phase < g.strides[axis]; ++phase) {
        DgradAxisPhase p = dgradAxisPhase(g, axis, phase);
        for (int64_t j = 0; j < p.size; ++j)
          ++covered[p.phase + j * g.strides[axis]];
        if (p.size == 0 || p.contributesNothing())
          continue;
        // The sub-convolution is a valid forward convolution with J outputs.
        ConvGeometry sub;
        sub.inputSize = {p.sliceSize, 1, 1};
        sub.window = {p.taps, 1, 1};
        sub.dilations = {p.dilation, 1, 1};
        sub.padLow = {p.padLow, 0, 0};
        sub.padHigh = {p.padHigh, 0, 0};
        ASSERT_FALSE(sub.validate()) << *sub.validate();
        ASSERT_EQ(sub.outputSize(0), p.size) << "trial " << trial;
        ASSERT_GE(p.sliceBegin, 0);
        ASSERT_LE(p.sliceBegin + p.sliceSize, g.outputSize(axis));
        for (int64_t j = 0; j < p.size; ++j)
          for (int64_t k = 0; k < p.taps; ++k) {
            int64_t y = j - p.padLow + k * p.dilation;
            if (y >= 0 && y < p.sliceSize)
              fromPhases.emplace_back(p.phase + j * g.strides[axis],
                                      y + p.sliceBegin, p.forwardTap(k));
          }
      }
      std::sort(fromPhases.begin(), fromPhases.end());
      ASSERT_EQ(fromPhases, forwardTerms(g, axis)) << "trial " << trial;
      for (int64_t c : covered)
        ASSERT_EQ(c, 1) << "every input row lies in exactly one phase";
    }
  }
}

TEST(GradientGeometry, DgradPhaseGeometryIsTheInputBlock) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 500; ++trial) {
    ConvGeometry g = randomGeometry(rng);
    int64_t positions = 0;
    DgradPhases phases = dgradPhases(g);
    for (const DgradPhase &phase : phases.phases) {
      positions += phase.axes[0].size * phase.axes[1].size * phase.axes[2].size;
      ASSERT_FALSE(phase.contributesNothing());
      ConvGeometry sub = dgradPhaseGeometry(g, phase);
      ASSERT_FALSE(sub.validate()) << *sub.validate();
      std::array<int64_t, 5> expected = {g.batch, phase.axes[0].size,
                                         phase.axes[1].size, phase.axes[2].size,
                                         g.channels};
      ASSERT_EQ(sub.outputShape(), expected);
    }
    // The phases that contribute cover every position, or `complete`
    // says not (the rest is zero).
    int64_t all = g.inputSize[0] * g.inputSize[1] * g.inputSize[2];
    ASSERT_EQ(positions == all, phases.complete) << "trial " << trial;
    ASSERT_LE(int64_t(phases.phases.size()),
              g.window[0] * g.window[1] * g.window[2]);
  }
  // A huge stride enumerates only the phases its taps reach.
  ConvGeometry wide;
  wide.inputSize = {2, 4000, 4000};
  wide.window = {2, 3, 3};
  wide.strides = {1, 1 << 20, 1 << 20};
  wide.padLow = {0, 1, 1};
  wide.padHigh = {0, 1 << 20, 1 << 20};
  DgradPhases few = dgradPhases(wide);
  EXPECT_EQ(few.phases.size(), 4u); // taps 1 and 2 reach rows 0 and 1
  EXPECT_FALSE(few.complete);
}

TEST(GradientGeometry, StrideOneIsOneRotatedConvolution) {
  ConvGeometry g;
  g.inputSize = {8, 8, 8};
  g.window = {3, 3, 3};
  g.padLow = {1, 1, 1};
  g.padHigh = {1, 1, 1};
  DgradPhases phases = dgradPhases(g);
  ASSERT_EQ(phases.phases.size(), 1u);
  EXPECT_TRUE(phases.complete);
  for (const DgradAxisPhase &p : phases.phases[0].axes) {
    EXPECT_EQ(p.taps, 3);
    EXPECT_EQ(p.padLow, 1); // (k-1)*dil - pad
    EXPECT_EQ(p.padHigh, 1);
    EXPECT_EQ(p.forwardTap(0), 2); // rotated
  }
}

TEST(GradientGeometry, WgradForwardComputesExactlyTheForwardTerms) {
  std::mt19937_64 rng(23);
  for (int trial = 0; trial < 3000; ++trial) {
    ConvGeometry g = randomGeometry(rng);
    WgradForward w = wgradAsForward(g);
    bool anyEmptyAxis = false;
    for (unsigned axis = 0; axis < 2; ++axis)
      anyEmptyAxis |= forwardTerms(g, axis).empty();
    // `empty` says the taps read only padding along some axis; where they
    // straddle the input without touching it, the forward form reads only
    // its padding too (both term sets below are empty).
    ASSERT_TRUE(!w.empty || anyEmptyAxis) << "trial " << trial;
    if (w.empty)
      continue;
    ASSERT_FALSE(w.geometry.validate()) << *w.geometry.validate();
    // The QRSCF gradient, its S x C columns as the width.
    std::array<int64_t, 5> expected = {1, g.window[0], g.window[1],
                                       g.window[2] * g.channels, g.filters};
    ASSERT_EQ(w.geometry.outputShape(), expected) << "trial " << trial;
    // Width and batch are the channels; each width tap and input channel
    // is one input column.
    EXPECT_EQ(w.geometry.batch, 1);
    EXPECT_EQ(w.geometry.channels,
              (g.outputSize(kWidth) * g.batch + 7) / 8 * 8);
    EXPECT_EQ(w.geometry.inputSize[kWidth], g.window[kWidth] * g.channels);
    EXPECT_EQ(w.geometry.window[kWidth], 1);
    for (unsigned axis = 0; axis < 2; ++axis) {
      const ConvGeometry &f = w.geometry;
      std::vector<Term> terms;
      for (int64_t t = 0; t < f.outputSize(axis); ++t)
        for (int64_t o = 0; o < f.window[axis]; ++o) {
          int64_t i =
              t * f.strides[axis] - f.padLow[axis] + o * f.dilations[axis];
          if (i >= 0 && i < f.inputSize[axis])
            terms.emplace_back(i, o, t);
        }
      std::sort(terms.begin(), terms.end());
      ASSERT_EQ(terms, forwardTerms(g, axis)) << "trial " << trial;
    }
  }
}

TEST(GradientGeometry, TransposedRoundTrip) {
  std::mt19937_64 rng(5);
  for (int trial = 0; trial < 2000; ++trial) {
    ConvGeometry g = randomGeometry(rng);
    std::array<int64_t, 3> outputPadding;
    for (unsigned a = 0; a < 3; ++a)
      outputPadding[a] = g.transposedOutputPadding(a);
    ASSERT_FALSE(g.transposedProblem(outputPadding));
    std::array<int64_t, 5> out = g.outputShape();
    ConvGeometry t = ConvGeometry::fromTransposed(
        out, g.filterShape(FilterLayout::qrscf), FilterLayout::qrscf, g.strides,
        g.dilations, g.padding(), outputPadding);
    ASSERT_EQ(t.inputShape(), g.inputShape()) << "trial " << trial;
    ASSERT_EQ(t.outputShape(), out);
  }
  ConvGeometry g;
  g.strides = {2, 2, 2};
  auto problem = g.transposedProblem({0, 2, 0});
  ASSERT_TRUE(problem);
  EXPECT_NE(problem->find("output padding along height"), std::string::npos);
}

double dot(const std::vector<double> &a, const HostTensor &b) {
  double sum = 0;
  for (size_t i = 0; i < a.size(); ++i)
    sum += a[i] * b.get(i);
  return sum;
}

TEST(ReferenceGradients, AdjointOfTheForwardReference) {
  std::mt19937_64 rng(31);
  for (int trial = 0; trial < 60; ++trial) {
    ConvGeometry g = randomGeometry(rng, 7);
    FilterLayout layout = trial % 2 ? FilterLayout::fqrsc : FilterLayout::qrscf;
    auto toVec = [](std::array<int64_t, 5> a) {
      return std::vector<int64_t>(a.begin(), a.end());
    };
    HostTensor x = HostTensor::zeros(ElementType::f32, toVec(g.inputShape()));
    HostTensor w =
        HostTensor::zeros(ElementType::f32, toVec(g.filterShape(layout)));
    HostTensor dy = HostTensor::zeros(ElementType::f32, toVec(g.outputShape()));
    fillRandomNormal(x, 1000 + trial);
    fillRandomNormal(w, 2000 + trial);
    fillRandomNormal(dy, 3000 + trial);
    ReferenceConvProblem p;
    p.geometry = g;
    p.filterLayout = layout;
    p.input = &x;
    p.filter = &w;
    std::vector<double> y = referenceConv(p);
    double forward = dot(y, dy);
    double data = dot(referenceConvBackwardData(g, layout, dy, w), x);
    double weight = dot(referenceConvBackwardFilter(g, layout, x, dy), w);
    double yNorm = 0, dyNorm = 0;
    for (size_t i = 0; i < y.size(); ++i) {
      yNorm += y[i] * y[i];
      dyNorm += dy.get(i) * dy.get(i);
    }
    double scale = 1e-9 * (1 + std::sqrt(yNorm * dyNorm));
    EXPECT_NEAR(data, forward, scale) << "trial " << trial;
    EXPECT_NEAR(weight, forward, scale) << "trial " << trial;
  }
}

} // namespace

TEST(GradientGeometry, WgradHeightWidthFoldKeepsTheDepthAndFoldsTheRest) {
  std::mt19937_64 rng(29);
  for (int trial = 0; trial < 3000; ++trial) {
    ConvGeometry g = randomGeometry(rng);
    WgradForward width = wgradAsForward(g);
    WgradForward w = wgradAsForward(g, WgradFold::HeightWidth);
    EXPECT_EQ(w.fold, WgradFold::HeightWidth);
    // The same taps read only padding whatever the fold.
    ASSERT_EQ(w.empty, width.empty) << "trial " << trial;
    if (w.empty)
      continue;
    ASSERT_FALSE(w.geometry.validate()) << *w.geometry.validate();
    // The QRSCF gradient, its R x S x C columns as the width.
    std::array<int64_t, 5> expected = {
        1, g.window[0], 1, g.window[1] * g.window[2] * g.channels, g.filters};
    ASSERT_EQ(w.geometry.outputShape(), expected) << "trial " << trial;
    // Height, width and batch are the channels; the gather makes the one
    // input row the height taps read.
    EXPECT_EQ(w.geometry.channels,
              (g.outputSize(kHeight) * g.outputSize(kWidth) * g.batch + 7) / 8 *
                  8);
    EXPECT_EQ(w.geometry.inputSize[kHeight], 1);
    EXPECT_EQ(w.geometry.window[kHeight], 1);
    EXPECT_EQ(w.geometry.window[kWidth], 1);
    EXPECT_EQ(w.gatheredInputElements(), w.geometry.inputSize[kDepth] *
                                             w.geometry.inputSize[kWidth] *
                                             w.geometry.channels);
    // Depth is the width fold's: the window of output depths, its stride
    // and dilation swapped, the padding its own.
    for (auto field : {&ConvGeometry::inputSize, &ConvGeometry::window,
                       &ConvGeometry::strides, &ConvGeometry::dilations,
                       &ConvGeometry::padLow, &ConvGeometry::padHigh})
      EXPECT_EQ((w.geometry.*field)[kDepth], (width.geometry.*field)[kDepth])
          << "trial " << trial;
  }
}
