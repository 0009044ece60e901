//===- ReferenceConvTest.cpp - naive reference convolution ----------------===//

#include "RandomGeometry.h"

#include "conv3d/Quant/NVFP4Reference.h"
#include "conv3d/Reference/ReferenceConv.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

using namespace mlir::conv3d;

namespace {

ConvGeometry makeGeometry(int64_t n, std::array<int64_t, 3> in, int64_t c,
                          std::array<int64_t, 3> window, int64_t f,
                          std::array<int64_t, 3> stride,
                          std::array<int64_t, 3> dilation,
                          std::array<int64_t, 3> padLow,
                          std::array<int64_t, 3> padHigh) {
  ConvGeometry g;
  g.batch = n;
  g.inputSize = in;
  g.channels = c;
  g.window = window;
  g.filters = f;
  g.strides = stride;
  g.dilations = dilation;
  g.padLow = padLow;
  g.padHigh = padHigh;
  return g;
}

/// Random operands of `g` with every epilogue input: an `inputType` input,
/// a bf16 QRSCF filter, f32 bias, bf16 residual and f32 init, drawn with
/// seeds `seed` to `seed` + 4.
struct EpilogueOperands {
  HostTensor x, w, bias, residual, init;

  EpilogueOperands(const ConvGeometry &g, ElementType inputType,
                   uint64_t seed) {
    auto vec = [](auto shape) {
      return std::vector<int64_t>(shape.begin(), shape.end());
    };
    std::vector<int64_t> outShape = vec(g.outputShape());
    x = HostTensor::zeros(inputType, vec(g.inputShape()));
    w = HostTensor::zeros(ElementType::bf16,
                          vec(g.filterShape(FilterLayout::qrscf)));
    bias = HostTensor::zeros(ElementType::f32, {g.filters});
    residual = HostTensor::zeros(ElementType::bf16, outShape);
    init = HostTensor::zeros(ElementType::f32, outShape);
    fillRandomNormal(x, seed);
    fillRandomNormal(w, seed + 1, 0.3);
    fillRandomNormal(bias, seed + 2);
    fillRandomNormal(residual, seed + 3);
    fillRandomNormal(init, seed + 4);
  }
};

/// The FQRSC form of a QRSCF filter.
HostTensor transposeToFQRSC(const HostTensor &qrscf) {
  const auto &s = qrscf.shape; // Q R S C F
  HostTensor out =
      HostTensor::zeros(qrscf.type, {s[4], s[0], s[1], s[2], s[3]});
  int64_t k = s[0] * s[1] * s[2] * s[3];
  for (int64_t i = 0; i < k; ++i)
    for (int64_t f = 0; f < s[4]; ++f)
      out.set(f * k + i, qrscf.get(i * s[4] + f));
  return out;
}

/// An independent formulation: materialize the zero-padded input, then
/// correlate without any bounds checks.
std::vector<double> paddedConv(const ConvGeometry &g, const HostTensor &x,
                               const HostTensor &w) {
  std::array<int64_t, 3> padded, out;
  for (int a = 0; a < 3; ++a) {
    padded[a] = g.inputSize[a] + g.padLow[a] + g.padHigh[a];
    out[a] =
        (padded[a] - g.dilations[a] * (g.window[a] - 1) - 1) / g.strides[a] + 1;
  }
  const int64_t C = g.channels, F = g.filters;
  std::vector<double> p(g.batch * padded[0] * padded[1] * padded[2] * C, 0.0);
  for (int64_t n = 0; n < g.batch; ++n)
    for (int64_t d = 0; d < g.inputSize[0]; ++d)
      for (int64_t h = 0; h < g.inputSize[1]; ++h)
        for (int64_t ww = 0; ww < g.inputSize[2]; ++ww)
          for (int64_t c = 0; c < C; ++c)
            p[(((n * padded[0] + d + g.padLow[0]) * padded[1] + h +
                g.padLow[1]) *
                   padded[2] +
               ww + g.padLow[2]) *
                  C +
              c] = x.get((((n * g.inputSize[0] + d) * g.inputSize[1] + h) *
                              g.inputSize[2] +
                          ww) *
                             C +
                         c);
  std::vector<double> y;
  for (int64_t n = 0; n < g.batch; ++n)
    for (int64_t od = 0; od < out[0]; ++od)
      for (int64_t oh = 0; oh < out[1]; ++oh)
        for (int64_t ow = 0; ow < out[2]; ++ow)
          for (int64_t f = 0; f < F; ++f) {
            double sum = 0;
            for (int64_t q = 0; q < g.window[0]; ++q)
              for (int64_t r = 0; r < g.window[1]; ++r)
                for (int64_t s = 0; s < g.window[2]; ++s)
                  for (int64_t c = 0; c < C; ++c) {
                    int64_t pd = od * g.strides[0] + q * g.dilations[0];
                    int64_t ph = oh * g.strides[1] + r * g.dilations[1];
                    int64_t pw = ow * g.strides[2] + s * g.dilations[2];
                    double xv =
                        p[(((n * padded[0] + pd) * padded[1] + ph) * padded[2] +
                           pw) *
                              C +
                          c];
                    double wv = w.get(
                        ((((q * g.window[1]) + r) * g.window[2] + s) * C + c) *
                            F +
                        f);
                    sum += xv * wv;
                  }
            y.push_back(sum);
          }
  return y;
}

void expectClose(const std::vector<double> &a, const std::vector<double> &b,
                 double relative = 1e-12) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i)
    ASSERT_NEAR(a[i], b[i], relative * (1 + std::fabs(b[i]))) << i;
}

TEST(ReferenceConv, HandComputedStridedDilatedPadded) {
  // 1x3x3x3x2 input, 3x3x3 window, stride 2, dilation 2, padding 2 on
  // every side: output 2x2x2. Output o reads input coordinate
  // 2o - 2 + 2*tap, so only even coordinates 0 and 2 are ever read:
  // coordinate 0 by tap 1 - o and coordinate 2 by tap 2 - o.
  ConvGeometry g = makeGeometry(1, {3, 3, 3}, 2, {3, 3, 3}, 2, {2, 2, 2},
                                {2, 2, 2}, {2, 2, 2}, {2, 2, 2});
  ASSERT_EQ(g.outputShape(), (std::array<int64_t, 5>{1, 2, 2, 2, 2}));
  HostTensor x = HostTensor::zeros(ElementType::f32, {1, 3, 3, 3, 2});
  auto xIndex = [](int d, int h, int w, int c) {
    return ((d * 3 + h) * 3 + w) * 2 + c;
  };
  x.set(xIndex(0, 0, 0, 0), 2.0);
  x.set(xIndex(2, 2, 2, 1), 1.0);
  x.set(xIndex(1, 1, 1, 0), 100.0); // odd coordinates: never read
  x.set(xIndex(2, 1, 2, 1), 100.0);
  HostTensor w = HostTensor::zeros(ElementType::f32, {3, 3, 3, 2, 2});
  auto wValue = [](int q, int r, int s, int c, int f) {
    return 1.0 + q + 3 * r + 9 * s + 27 * c + 81 * f;
  };
  for (int q = 0; q < 3; ++q)
    for (int r = 0; r < 3; ++r)
      for (int s = 0; s < 3; ++s)
        for (int c = 0; c < 2; ++c)
          for (int f = 0; f < 2; ++f)
            w.set(((((q * 3) + r) * 3 + s) * 2 + c) * 2 + f,
                  wValue(q, r, s, c, f));

  ReferenceConvProblem p;
  p.geometry = g;
  p.input = &x;
  p.filter = &w;
  std::vector<double> y = referenceConv(p);
  ASSERT_EQ(y.size(), 16u);
  auto yIndex = [](int od, int oh, int ow, int f) {
    return ((od * 2 + oh) * 2 + ow) * 2 + f;
  };
  // y[0,0,0,0] = 2 * w[1,1,1,0,0] + w[2,2,2,1,0] = 2 * 14 + 54.
  EXPECT_EQ(y[yIndex(0, 0, 0, 0)], 82.0);
  // y[0,1,1,0] = 2 * w[1,0,0,0,0] + w[2,1,1,1,0] = 2 * 2 + 42.
  EXPECT_EQ(y[yIndex(0, 1, 1, 0)], 46.0);
  // y[1,1,1,1] = 2 * w[0,0,0,0,1] + w[1,1,1,1,1] = 2 * 82 + 122.
  EXPECT_EQ(y[yIndex(1, 1, 1, 1)], 286.0);
  const int t0[2] = {1, 0}, t2[2] = {2, 1};
  for (int od = 0; od < 2; ++od)
    for (int oh = 0; oh < 2; ++oh)
      for (int ow = 0; ow < 2; ++ow)
        for (int f = 0; f < 2; ++f)
          EXPECT_EQ(y[yIndex(od, oh, ow, f)],
                    2 * wValue(t0[od], t0[oh], t0[ow], 0, f) +
                        wValue(t2[od], t2[oh], t2[ow], 1, f));

  // The same filter in FQRSC gives identical results.
  HostTensor wt = transposeToFQRSC(w);
  p.filter = &wt;
  p.filterLayout = FilterLayout::fqrsc;
  EXPECT_EQ(referenceConv(p), y);
}

TEST(ReferenceConv, MatchesExplicitlyPaddedConvolution) {
  std::mt19937_64 rng(31);
  for (int trial = 0; trial < 40; ++trial) {
    unittest::GeometryLimits limits;
    limits.channels = 5;
    limits.window = 3;
    limits.stride = 3;
    limits.padding = 4;
    limits.inputSize = 7;
    ConvGeometry g = unittest::randomGeometry(rng, limits);
    ASSERT_FALSE(g.validate()) << *g.validate();
    auto in = g.inputShape();
    auto fs = g.filterShape(FilterLayout::qrscf);
    HostTensor x = HostTensor::zeros(
        ElementType::bf16, std::vector<int64_t>(in.begin(), in.end()));
    HostTensor w = HostTensor::zeros(
        ElementType::f32, std::vector<int64_t>(fs.begin(), fs.end()));
    fillRandomNormal(x, 100 + trial);
    fillRandomUniform(w, 200 + trial, -1, 1);
    ReferenceConvProblem p;
    p.geometry = g;
    p.input = &x;
    p.filter = &w;
    std::vector<double> y = referenceConv(p);
    expectClose(y, paddedConv(g, x, w));
    HostTensor wt = transposeToFQRSC(w);
    p.filter = &wt;
    p.filterLayout = FilterLayout::fqrsc;
    EXPECT_EQ(referenceConv(p), y);
  }
}

/// A 1x1x1 convolution of one value with weight 1: acc = value.
double epilogueOf(double value, Activation activation) {
  ConvGeometry g; // all sizes 1
  HostTensor x = HostTensor::zeros(ElementType::f32, {1, 1, 1, 1, 1});
  HostTensor w = HostTensor::zeros(ElementType::f32, {1, 1, 1, 1, 1});
  x.set(0, value);
  w.set(0, 1.0);
  ReferenceConvProblem p;
  p.geometry = g;
  p.input = &x;
  p.filter = &w;
  p.activation = activation;
  return referenceConv(p)[0];
}

TEST(ReferenceConv, Activations) {
  EXPECT_EQ(epilogueOf(1.5, Activation::none), 1.5);
  EXPECT_EQ(epilogueOf(-2.0, Activation::none), -2.0);
  EXPECT_EQ(epilogueOf(1.5, Activation::relu), 1.5);
  EXPECT_EQ(epilogueOf(-2.0, Activation::relu), 0.0);
  EXPECT_NEAR(epilogueOf(1.0, Activation::silu), 0.7310585786300049, 1e-15);
  EXPECT_NEAR(epilogueOf(-2.0, Activation::silu), -0.2384058440442351, 1e-15);
  EXPECT_NEAR(epilogueOf(1.0, Activation::gelu_tanh), 0.8411919906082768,
              1e-15);
  EXPECT_NEAR(epilogueOf(-1.0, Activation::gelu_tanh), -0.15880800939172324,
              1e-15);
  EXPECT_EQ(epilogueOf(0.0, Activation::gelu_tanh), 0.0);
}

TEST(ReferenceConv, InitBiasActivationResidual) {
  ConvGeometry g = makeGeometry(2, {4, 3, 5}, 3, {2, 3, 1}, 4, {1, 2, 1},
                                {1, 1, 2}, {1, 1, 0}, {0, 1, 0});
  EpilogueOperands operands(g, ElementType::f16, /*seed=*/1);
  auto &[x, w, bias, residual, init] = operands;

  ReferenceConvProblem p;
  p.geometry = g;
  p.input = &x;
  p.filter = &w;
  std::vector<double> base = referenceConv(p);
  ASSERT_EQ(int64_t(base.size()), init.numElements());

  p.bias = &bias;
  p.residual = &residual;
  p.init = &init;
  for (Activation act : {Activation::none, Activation::relu, Activation::silu,
                         Activation::gelu_tanh}) {
    p.activation = act;
    std::vector<double> y = referenceConv(p);
    std::vector<double> expected(y.size());
    for (size_t i = 0; i < y.size(); ++i) {
      double v = init.get(i) + base[i] + bias.get(int64_t(i % 4));
      switch (act) {
      case Activation::none:
        break;
      case Activation::relu:
        v = v > 0 ? v : 0;
        break;
      case Activation::silu:
        v = v / (1 + std::exp(-v));
        break;
      case Activation::gelu_tanh:
        v = 0.5 * v *
            (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
        break;
      default:
        FAIL() << "a forward activation only";
      }
      expected[i] = v + residual.get(int64_t(i));
    }
    expectClose(y, expected);
  }

  // The derivative epilogues: (acc + bias) * act'(residual), the factor
  // checked against a central difference of the forward activation (not
  // the closed forms the reference uses).
  for (Activation act : {Activation::relu_backward, Activation::silu_backward,
                         Activation::gelu_tanh_backward}) {
    p.activation = act;
    std::vector<double> y = referenceConv(p);
    std::vector<double> expected(y.size());
    const double h = 1e-5;
    for (size_t i = 0; i < y.size(); ++i) {
      double z = residual.get(int64_t(i));
      double slope = (referenceActivation(forwardOf(act), z + h) -
                      referenceActivation(forwardOf(act), z - h)) /
                     (2 * h);
      expected[i] = (init.get(i) + base[i] + bias.get(int64_t(i % 4))) * slope;
    }
    expectClose(y, expected, 1e-8);
  }
}

ReferenceConvProblem quantProblem(const ConvGeometry &g, const HostTensor &x,
                                  const HostTensor &w, int64_t blockSize,
                                  float amax) {
  ReferenceConvProblem p;
  p.geometry = g;
  p.input = &x;
  p.filter = &w;
  p.inputQuantBlockSize = blockSize;
  p.inputQuantAmax = amax;
  return p;
}

double maxAbs(const HostTensor &t) {
  double m = 0;
  for (int64_t i = 0; i < t.numElements(); ++i)
    m = std::max(m, std::fabs(t.get(i)));
  return m;
}

TEST(ReferenceConv, QuantizedInputEqualsQuantizingAlongChannels) {
  // With C a multiple of the block size every block is whole channels of
  // one voxel, so quantizing the NDHWC tensor along C is the same (the halo
  // blocks are all zero and stay zero).
  for (int64_t blockSize : {16, 32}) {
    ConvGeometry g = makeGeometry(1, {3, 4, 4}, 32, {3, 3, 3}, 5, {1, 2, 1},
                                  {1, 1, 2}, {1, 1, 2}, {1, 0, 2});
    auto in = g.inputShape();
    auto fs = g.filterShape(FilterLayout::qrscf);
    HostTensor x = HostTensor::zeros(
        ElementType::bf16, std::vector<int64_t>(in.begin(), in.end()));
    HostTensor w = HostTensor::zeros(
        ElementType::bf16, std::vector<int64_t>(fs.begin(), fs.end()));
    fillOutlierHeavy(x, 7);
    fillRandomNormal(w, 8);
    float amax = float(maxAbs(x));
    ReferenceConvProblem p = quantProblem(g, x, w, blockSize, amax);
    std::vector<double> fused = referenceConv(p);

    HostTensor xq = referenceQuantize(x, blockSize, amax, 4, 4);
    ReferenceConvProblem plain;
    plain.geometry = g;
    plain.input = &xq;
    plain.filter = &w;
    EXPECT_EQ(fused, referenceConv(plain));
    // And quantization did change something.
    plain.input = &x;
    EXPECT_NE(fused, referenceConv(plain));
  }
}

TEST(ReferenceConv, Im2colRowsFollowTheKOrder) {
  ConvGeometry g = makeGeometry(2, {3, 4, 5}, 3, {2, 3, 2}, 2, {2, 1, 2},
                                {1, 2, 1}, {1, 2, 0}, {0, 1, 1});
  auto in = g.inputShape();
  HostTensor x = HostTensor::zeros(ElementType::bf16,
                                   std::vector<int64_t>(in.begin(), in.end()));
  fillRandomNormal(x, 3);
  HostTensor w = HostTensor::zeros(ElementType::f32, {2, 3, 2, 3, 2});
  ReferenceConvProblem p;
  p.geometry = g;
  p.input = &x;
  p.filter = &w;
  const int64_t Do = g.outputSize(0), Ho = g.outputSize(1),
                Wo = g.outputSize(2);
  int64_t m = 0, haloEntries = 0;
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t od = 0; od < Do; ++od)
      for (int64_t oh = 0; oh < Ho; ++oh)
        for (int64_t ow = 0; ow < Wo; ++ow, ++m) {
          std::vector<float> row = referenceIm2colRow(p, m);
          ASSERT_EQ(int64_t(row.size()), g.gemmK());
          int64_t k = 0;
          for (int64_t q = 0; q < 2; ++q)
            for (int64_t r = 0; r < 3; ++r)
              for (int64_t s = 0; s < 2; ++s)
                for (int64_t c = 0; c < 3; ++c, ++k) {
                  int64_t d = od * 2 - 1 + q, h = oh - 2 + 2 * r,
                          wi = ow * 2 + s;
                  bool inside =
                      d >= 0 && d < 3 && h >= 0 && h < 4 && wi >= 0 && wi < 5;
                  double expected =
                      inside ? x.get((((n * 3 + d) * 4 + h) * 5 + wi) * 3 + c)
                             : 0.0;
                  haloEntries += !inside;
                  ASSERT_EQ(row[k], expected) << m << " " << k;
                }
        }
  EXPECT_GT(haloEntries, 0);
}

TEST(ReferenceConv, QuantizedRowsSpanTapsAndFeedTheConvolution) {
  // C = 3 and blocks of 16: blocks straddle window taps, K = 54 leaves a
  // partial last block of 6.
  ConvGeometry g = makeGeometry(1, {3, 3, 4}, 3, {2, 3, 3}, 4, {1, 1, 1},
                                {1, 1, 1}, {1, 1, 1}, {0, 1, 1});
  auto in = g.inputShape();
  auto fs = g.filterShape(FilterLayout::qrscf);
  HostTensor x = HostTensor::zeros(ElementType::f16,
                                   std::vector<int64_t>(in.begin(), in.end()));
  HostTensor w = HostTensor::zeros(ElementType::bf16,
                                   std::vector<int64_t>(fs.begin(), fs.end()));
  fillOutlierHeavy(x, 11);
  fillRandomNormal(w, 12);
  float amax = float(maxAbs(x));
  ReferenceConvProblem p = quantProblem(g, x, w, 16, amax);
  std::vector<double> y = referenceConv(p);
  const int64_t K = g.gemmK(), F = g.filters;
  ASSERT_EQ(K, 54);
  bool changed = false;
  for (int64_t m = 0; m < g.gemmM(); ++m) {
    std::vector<float> row = referenceIm2colRow(p, m);
    std::vector<float> qrow = referenceQuantizedIm2colRow(p, m);
    ASSERT_EQ(qrow.size(), row.size());
    for (int64_t start = 0; start < K; start += 16) {
      int64_t count = std::min<int64_t>(16, K - start);
      std::vector<float> block(16, 0.0f), out(16);
      std::copy(row.begin() + start, row.begin() + start + count,
                block.begin()); // explicitly zero-filled to 16
      nvfp4QuantizeBlock(block.data(), out.data(), 16, amax);
      for (int64_t j = 0; j < count; ++j) {
        ASSERT_EQ(qrow[start + j], roundToElementType(out[j], ElementType::f16))
            << m << " " << start + j;
        changed |= qrow[start + j] != row[start + j];
        if (row[start + j] == 0)
          ASSERT_EQ(qrow[start + j], 0.0f);
      }
    }
    for (int64_t f = 0; f < F; ++f) {
      double sum = 0;
      for (int64_t k = 0; k < K; ++k)
        sum += double(qrow[k]) * w.get(k * F + f);
      ASSERT_NEAR(y[m * F + f], sum, 1e-12 * (1 + std::fabs(sum)));
    }
  }
  EXPECT_TRUE(changed);
  // Real NVFP4 (roundQuantizedInput = false): the decoded values
  // themselves, not rounded to f16.
  p.roundQuantizedInput = false;
  bool unrounded = false;
  for (int64_t m = 0; m < g.gemmM(); ++m) {
    std::vector<float> row = referenceIm2colRow(p, m);
    std::vector<float> qrow = referenceQuantizedIm2colRow(p, m);
    for (int64_t start = 0; start < K; start += 16) {
      int64_t count = std::min<int64_t>(16, K - start);
      std::vector<float> block(16, 0.0f), out(16);
      std::copy(row.begin() + start, row.begin() + start + count,
                block.begin());
      nvfp4QuantizeBlock(block.data(), out.data(), 16, amax);
      for (int64_t j = 0; j < count; ++j) {
        ASSERT_EQ(qrow[start + j], out[j]) << m << " " << start + j;
        unrounded |=
            out[j] != float(roundToElementType(out[j], ElementType::f16));
      }
    }
  }
  EXPECT_TRUE(unrounded);
  p.roundQuantizedInput = true;
  // Without quantization the rows come back unchanged.
  p.inputQuantBlockSize.reset();
  EXPECT_EQ(referenceQuantizedIm2colRow(p, 3), referenceIm2colRow(p, 3));
}

TEST(ReferenceConv, RowsAreTheWholeConvolutionsRows) {
  // The sampled check's rows are exactly the whole reference's, with every
  // epilogue input, both layouts and NVFP4 quantization.
  ConvGeometry g = makeGeometry(2, {4, 3, 5}, 20, {2, 3, 1}, 4, {1, 2, 1},
                                {1, 1, 2}, {1, 1, 0}, {0, 1, 0});
  EpilogueOperands operands(g, ElementType::bf16, /*seed=*/11);
  auto &[x, w, bias, residual, init] = operands;
  HostTensor wf = transposeToFQRSC(w);
  int64_t rows = g.gemmM();
  std::vector<int64_t> picked = {rows - 1, 0, 7, rows / 2, 7};
  for (int variant = 0; variant < 4; ++variant) {
    ReferenceConvProblem p;
    p.geometry = g;
    p.input = &x;
    p.filter = variant % 2 ? &wf : &w;
    p.filterLayout = variant % 2 ? FilterLayout::fqrsc : FilterLayout::qrscf;
    p.activation = Activation::silu;
    if (variant >= 2) {
      p.bias = &bias;
      p.residual = &residual;
      p.init = &init;
      p.inputQuantBlockSize = 16;
      p.inputQuantAmax = float(maxAbs(x));
    }
    std::vector<double> whole = referenceConv(p);
    std::vector<double> sampled = referenceConvRows(p, picked);
    ASSERT_EQ(sampled.size(), picked.size() * 4);
    for (size_t i = 0; i < picked.size(); ++i)
      for (int64_t f = 0; f < 4; ++f)
        EXPECT_EQ(sampled[i * 4 + f], whole[picked[i] * 4 + f])
            << "variant " << variant << " row " << picked[i] << " f " << f;
  }
}

TEST(ReferenceConv, RelativeL2Error) {
  HostTensor out = HostTensor::zeros(ElementType::bf16, {2});
  out.set(0, 3.0);
  out.set(1, 5.0);
  int64_t bad = -1;
  EXPECT_DOUBLE_EQ(relativeL2Error({3.0, 4.0}, out, &bad), 0.2);
  EXPECT_EQ(bad, 0);
  EXPECT_EQ(relativeL2Error({3.0, 5.0}, out), 0.0);
  // An all-zero reference falls back to the absolute norm.
  EXPECT_DOUBLE_EQ(relativeL2Error({0.0, 0.0}, out), std::sqrt(34.0));

  const double inf = std::numeric_limits<double>::infinity();
  out.set(1, std::nan(""));
  EXPECT_EQ(relativeL2Error({3.0, 5.0}, out, &bad), inf);
  EXPECT_EQ(bad, 1);
  out.set(1, -inf);
  EXPECT_EQ(relativeL2Error({3.0, 5.0}, out, &bad), inf);
  EXPECT_EQ(bad, 1);
  // Non-finite references must be matched in kind.
  EXPECT_EQ(relativeL2Error({3.0, -inf}, out, &bad), 0.0);
  EXPECT_EQ(bad, 0);
  EXPECT_EQ(relativeL2Error({3.0, inf}, out, &bad), inf);
  EXPECT_EQ(bad, 1);
  out.set(1, 7.0);
  EXPECT_EQ(relativeL2Error({3.0, std::nan("")}, out, &bad), inf);
  EXPECT_EQ(bad, 1);
}

TEST(ReferenceConv, OutputRoundingStaysWithinTolerance) {
  EXPECT_EQ(defaultTolerance(ElementType::bf16), 4e-3);
  EXPECT_EQ(defaultTolerance(ElementType::f16), 5e-4);
  EXPECT_EQ(defaultTolerance(ElementType::f32), 2e-5);
  // Rounding exact normal data to the output type: the error the
  // tolerances must absorb (documented in defaultTolerance).
  HostTensor exact = HostTensor::zeros(ElementType::f32, {100000});
  fillRandomNormal(exact, 77);
  std::vector<double> reference(100000);
  for (int64_t i = 0; i < 100000; ++i)
    reference[i] = exact.get(i) * (1 + 0x1p-30); // not representable
  const struct {
    ElementType type;
    double lo, hi;
  } cases[] = {{ElementType::bf16, 1.4e-3, 2.0e-3},
               {ElementType::f16, 1.7e-4, 2.5e-4},
               {ElementType::f32, 0, 1e-7}};
  for (const auto &c : cases) {
    HostTensor out = HostTensor::zeros(c.type, {100000});
    for (int64_t i = 0; i < 100000; ++i)
      out.set(i, reference[i]);
    double error = relativeL2Error(reference, out);
    EXPECT_GE(error, c.lo) << stringifyElementType(c.type).str();
    EXPECT_LE(error, c.hi) << stringifyElementType(c.type).str();
    EXPECT_LT(error, defaultTolerance(c.type) / 2);
  }
}

} // namespace

TEST(ReferenceConv, GroupedEqualsDenseConvolutionsOfChannelSlices) {
  // A grouped convolution is G dense ones: group g's filters over input
  // channels [g*C/G, (g+1)*C/G). Each dense one is the reference's
  // groups = 1 path on copies of the slices; random shapes, strides,
  // dilations, paddings, group counts (depthwise included) and the
  // epilogue, both layouts; the sampled rows agree with the whole.
  std::mt19937_64 rng(7);
  unittest::GeometryLimits limits;
  limits.groups = 4;
  limits.channels = 3;
  limits.filters = 3;
  limits.window = 3;
  limits.stride = 2;
  limits.dilation = 2;
  limits.padding = 2;
  limits.inputSize = 6;
  for (int trial = 0; trial < 30; ++trial) {
    ConvGeometry g = unittest::randomGeometry(rng, limits);
    ASSERT_FALSE(g.validate()) << *g.validate();
    auto in = g.inputShape();
    auto fs = g.filterShape(FilterLayout::qrscf);
    ASSERT_EQ(fs[3], g.channels / g.groups);
    auto os = g.outputShape();
    std::vector<int64_t> outShape(os.begin(), os.end());
    HostTensor x = HostTensor::zeros(
        ElementType::f32, std::vector<int64_t>(in.begin(), in.end()));
    HostTensor w = HostTensor::zeros(
        ElementType::f32, std::vector<int64_t>(fs.begin(), fs.end()));
    HostTensor bias = HostTensor::zeros(ElementType::f32, {g.filters});
    HostTensor residual = HostTensor::zeros(ElementType::f32, outShape);
    fillRandomNormal(x, 300 + trial);
    fillRandomUniform(w, 400 + trial, -1, 1);
    fillRandomNormal(bias, 500 + trial);
    fillRandomNormal(residual, 600 + trial);
    ReferenceConvProblem p;
    p.geometry = g;
    p.input = &x;
    p.filter = &w;
    p.bias = &bias;
    p.residual = &residual;
    p.activation = Activation::gelu_tanh;
    std::vector<double> y = referenceConv(p);

    int64_t cg = g.channels / g.groups, fg = g.filters / g.groups;
    int64_t voxels = g.batch * g.inputSize[0] * g.inputSize[1] * g.inputSize[2];
    int64_t taps = g.window[0] * g.window[1] * g.window[2];
    int64_t m = g.gemmM();
    for (int64_t group = 0; group < g.groups; ++group) {
      ConvGeometry dense = g;
      dense.groups = 1;
      dense.channels = cg;
      dense.filters = fg;
      HostTensor xs = HostTensor::zeros(
          ElementType::f32,
          {g.batch, g.inputSize[0], g.inputSize[1], g.inputSize[2], cg});
      for (int64_t v = 0; v < voxels; ++v)
        for (int64_t c = 0; c < cg; ++c)
          xs.set(v * cg + c, x.get(v * g.channels + group * cg + c));
      HostTensor ws = HostTensor::zeros(
          ElementType::f32, {g.window[0], g.window[1], g.window[2], cg, fg});
      for (int64_t k = 0; k < taps * cg; ++k)
        for (int64_t f = 0; f < fg; ++f)
          ws.set(k * fg + f, w.get(k * g.filters + group * fg + f));
      HostTensor bs = HostTensor::zeros(ElementType::f32, {fg});
      HostTensor rs =
          HostTensor::zeros(ElementType::f32, {outShape[0], outShape[1],
                                               outShape[2], outShape[3], fg});
      for (int64_t f = 0; f < fg; ++f)
        bs.set(f, bias.get(group * fg + f));
      for (int64_t row = 0; row < m; ++row)
        for (int64_t f = 0; f < fg; ++f)
          rs.set(row * fg + f, residual.get(row * g.filters + group * fg + f));
      ReferenceConvProblem d = p;
      d.geometry = dense;
      d.input = &xs;
      d.filter = &ws;
      d.bias = &bs;
      d.residual = &rs;
      std::vector<double> ys = referenceConv(d);
      for (int64_t row = 0; row < m; ++row)
        for (int64_t f = 0; f < fg; ++f)
          ASSERT_NEAR(y[row * g.filters + group * fg + f], ys[row * fg + f],
                      1e-12 * (1 + std::fabs(ys[row * fg + f])))
              << "trial " << trial << " group " << group << " row " << row;
    }

    HostTensor wt = transposeToFQRSC(w);
    p.filter = &wt;
    p.filterLayout = FilterLayout::fqrsc;
    EXPECT_EQ(referenceConv(p), y) << "trial " << trial;
    std::vector<int64_t> rows = {0, m - 1, m / 2};
    std::vector<double> sampled = referenceConvRows(p, rows);
    for (size_t i = 0; i < rows.size(); ++i)
      for (int64_t f = 0; f < g.filters; ++f)
        EXPECT_NEAR(sampled[i * g.filters + f], y[rows[i] * g.filters + f],
                    1e-12 * (1 + std::fabs(y[rows[i] * g.filters + f])));
  }
}
