//===- ReferenceConv.cpp - naive reference 3-D convolution ----------------===//

#include "conv3d/Reference/ReferenceConv.h"

#include "conv3d/Quant/NVFP4Reference.h"

#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

using namespace mlir::conv3d;

namespace {
/// The sizes the loops need, read once from the problem.
struct Dims {
  int64_t n, c, f;
  // Groups: filter f reads the cg = c / groups channels of group f / fg.
  int64_t groups = 1, cg, fg;
  // Leading depth frames of `in[0]` that come from the history tensor.
  int64_t history = 0;
  std::array<int64_t, 3> in, win, out, stride, dilation, padLow;

  int64_t taps() const { return win[0] * win[1] * win[2]; }
  /// An im2col row's length: every channel of every tap.
  int64_t k() const { return taps() * c; }
  /// A filter column's length: the channels of one group of every tap.
  int64_t filterK() const { return taps() * cg; }
  /// The input channel filter f reads as its channel c (of its group).
  int64_t channelOf(int64_t f, int64_t c) const { return f / fg * cg + c; }
  int64_t m() const { return n * out[0] * out[1] * out[2]; }
};
} // namespace

[[noreturn]] static void fail(const llvm::Twine &message) {
  llvm::report_fatal_error("referenceConv: " + message);
}

static void expectShape(const HostTensor *tensor, const char *name,
                        const std::vector<int64_t> &expected) {
  if (tensor->shape == expected)
    return;
  auto text = [](const std::vector<int64_t> &shape) {
    std::string s;
    for (int64_t size : shape)
      s += (s.empty() ? "" : "x") + std::to_string(size);
    return s;
  };
  fail(llvm::formatv("{0} has shape {1}, expected {2}", name,
                     text(tensor->shape), text(expected)));
}

/// Checks the problem and extracts its sizes. Only the output sizes come
/// from ConvGeometry.
static Dims checkProblem(const ReferenceConvProblem &p) {
  const ConvGeometry &g = p.geometry;
  Dims d;
  d.n = g.batch;
  d.c = g.channels;
  d.f = g.filters;
  d.in = g.inputSize;
  d.win = g.window;
  d.stride = g.strides;
  d.dilation = g.dilations;
  d.padLow = g.padLow;
  for (unsigned axis = 0; axis < 3; ++axis) {
    if (d.stride[axis] <= 0 || d.dilation[axis] <= 0)
      fail("strides and dilations must be positive");
    if (g.padLow[axis] < 0 || g.padHigh[axis] < 0)
      fail("padding must be non-negative");
    if (d.in[axis] <= 0 || d.win[axis] <= 0)
      fail("input and window sizes must be positive and static");
    d.out[axis] = std::max<int64_t>(g.outputSize(axis), 0);
  }
  if (d.n <= 0 || d.c <= 0 || d.f <= 0)
    fail("batch, channel and filter counts must be positive and static");
  d.groups = g.groups;
  if (d.groups <= 0 || d.c % d.groups != 0 || d.f % d.groups != 0)
    fail("groups must be positive and divide the channel and filter counts");
  d.cg = d.c / d.groups;
  d.fg = d.f / d.groups;
  if (d.groups != 1 && p.inputQuantBlockSize)
    fail("input quantization takes groups = 1 only");
  if (!p.input || !p.filter)
    fail("the input and the filter are required");

  if (p.history) {
    d.history = g.historyDepth;
    if (d.history < 0 || d.history > d.in[0])
      fail("the geometry's history depth must lie in [0, input depth]");
    expectShape(p.history, "history", {d.n, d.history, d.in[1], d.in[2], d.c});
    if (p.history->type != p.input->type)
      fail("history and input must have the same element type");
  } else if (g.historyDepth != 0) {
    fail("the geometry has history frames but no history tensor is given");
  }
  expectShape(p.input, "input",
              {d.n, d.in[0] - d.history, d.in[1], d.in[2], d.c});
  if (p.normGamma) {
    expectShape(p.normGamma, "norm gamma", {d.c});
    if (!(p.normEps > 0.0) || !std::isfinite(p.normEps))
      fail("the norm epsilon must be finite and positive");
  } else if (p.normBeta) {
    fail("norm beta needs norm gamma");
  }
  if (p.normBeta)
    expectShape(p.normBeta, "norm beta", {d.c});
  if ((p.normGamma || p.inputActivation != Activation::none) &&
      p.inputQuantBlockSize)
    fail("an input prologue cannot be combined with input quantization");
  if (p.filterLayout == FilterLayout::qrscf)
    expectShape(p.filter, "filter", {d.win[0], d.win[1], d.win[2], d.cg, d.f});
  else
    expectShape(p.filter, "filter", {d.f, d.win[0], d.win[1], d.win[2], d.cg});
  std::vector<int64_t> outShape = {d.n, d.out[0], d.out[1], d.out[2], d.f};
  if (p.bias)
    expectShape(p.bias, "bias", {d.f});
  if (p.residual)
    expectShape(p.residual, "residual", outShape);
  else if (isActivationDerivative(p.activation))
    fail("a derivative epilogue reads the pre-activation as the residual");
  if (p.init)
    expectShape(p.init, "init", outShape);
  if (p.inputQuantBlockSize && *p.inputQuantBlockSize <= 0)
    fail("the quantization block size must be positive");
  return d;
}

double mlir::conv3d::referenceActivation(Activation activation, double x) {
  switch (activation) {
  case Activation::none:
    return x;
  case Activation::relu:
    return std::max(x, 0.0); // NaN stays NaN
  case Activation::silu:
    return x / (1.0 + std::exp(-x));
  case Activation::gelu_tanh: {
    const double kSqrt2OverPi = std::sqrt(2.0 / M_PI);
    return 0.5 * x *
           (1.0 + std::tanh(kSqrt2OverPi * (x + 0.044715 * x * x * x)));
  }
  case Activation::relu_backward:
  case Activation::silu_backward:
  case Activation::gelu_tanh_backward:
    break;
  }
  llvm_unreachable("a derivative epilogue is not an activation function");
}

double mlir::conv3d::referenceActivationDerivative(Activation forward,
                                                   double z) {
  switch (forward) {
  case Activation::relu:
    return z > 0.0 ? 1.0 : 0.0;
  case Activation::silu: {
    double s = 1.0 / (1.0 + std::exp(-z));
    return s * (1.0 + z * (1.0 - s));
  }
  case Activation::gelu_tanh: {
    const double k = std::sqrt(2.0 / M_PI);
    double t = std::tanh(k * (z + 0.044715 * z * z * z));
    return 0.5 * (1.0 + t) +
           0.5 * z * (1.0 - t * t) * k * (1.0 + 3.0 * 0.044715 * z * z);
  }
  default:
    break;
  }
  llvm_unreachable("the derivative of a forward activation only");
}

/// Output (m, f) from its accumulator (init included): act(acc + bias) +
/// residual, as both the whole reference and its sampled rows compute it.
static double epilogue(const ReferenceConvProblem &p, const Dims &d, int64_t m,
                       int64_t f, double acc) {
  double y = acc;
  if (p.bias)
    y += p.bias->get(f);
  if (isActivationDerivative(p.activation))
    return y * referenceActivationDerivative(forwardOf(p.activation),
                                             p.residual->get(m * d.f + f));
  y = referenceActivation(p.activation, y);
  if (p.residual)
    y += p.residual->get(m * d.f + f);
  return y;
}

/// The filter as doubles in [q][r][s][c][f] order (c of C/groups),
/// whatever its layout, so that both layouts run the very same loops (and
/// give identical results).
static std::vector<double> filterQRSCF(const ReferenceConvProblem &p,
                                       const Dims &d) {
  int64_t kf = d.filterK();
  std::vector<double> w(static_cast<size_t>(kf * d.f));
  for (int64_t k = 0; k < kf; ++k) // k = ((q*R + r)*S + s)*C/G + c
    for (int64_t f = 0; f < d.f; ++f)
      w[k * d.f + f] = p.filter->get(
          p.filterLayout == FilterLayout::qrscf ? k * d.f + f : f * kf + k);
  return w;
}

/// The C values of voxel (n, id, ih, iw) of the convolution's logical input
/// concat(history, input) along depth (id in [0, in[0])), the prologue
/// applied to voxels of the input, written to `out`.
static void logicalVoxel(const ReferenceConvProblem &p, const Dims &d,
                         int64_t n, int64_t id, int64_t ih, int64_t iw,
                         double *out) {
  bool fromHistory = id < d.history;
  const HostTensor *source = fromHistory ? p.history : p.input;
  int64_t depth = fromHistory ? d.history : d.in[0] - d.history;
  int64_t sd = fromHistory ? id : id - d.history;
  int64_t base = (((n * depth + sd) * d.in[1] + ih) * d.in[2] + iw) * d.c;
  for (int64_t c = 0; c < d.c; ++c)
    out[c] = source->get(base + c);
  bool prologue = p.normGamma || p.inputActivation != Activation::none;
  if (fromHistory || !prologue)
    return;
  double scale = 1.0;
  if (p.normGamma) {
    double squares = 0.0;
    for (int64_t c = 0; c < d.c; ++c)
      squares += out[c] * out[c];
    scale = 1.0 / std::sqrt(squares / double(d.c) + p.normEps);
  }
  for (int64_t c = 0; c < d.c; ++c) {
    double y = out[c];
    if (p.normGamma) {
      y = y * scale * p.normGamma->get(c);
      if (p.normBeta)
        y += p.normBeta->get(c);
    }
    out[c] = roundToElementType(referenceActivation(p.inputActivation, y),
                                p.input->type);
  }
}

std::vector<float>
mlir::conv3d::referenceIm2colRow(const ReferenceConvProblem &p, int64_t m) {
  Dims d = checkProblem(p);
  if (m < 0 || m >= d.m())
    fail(llvm::formatv("row {0} is outside [0, {1})", m, d.m()));
  // m = ((n*Do + do)*Ho + ho)*Wo + wo.
  std::array<int64_t, 3> o;
  int64_t rest = m;
  for (int axis = 2; axis >= 0; --axis) {
    o[axis] = rest % d.out[axis];
    rest /= d.out[axis];
  }
  int64_t n = rest;

  std::vector<float> row;
  row.reserve(static_cast<size_t>(d.k()));
  std::vector<double> voxel(static_cast<size_t>(d.c));
  for (int64_t q = 0; q < d.win[0]; ++q) {
    int64_t id = o[0] * d.stride[0] - d.padLow[0] + q * d.dilation[0];
    for (int64_t r = 0; r < d.win[1]; ++r) {
      int64_t ih = o[1] * d.stride[1] - d.padLow[1] + r * d.dilation[1];
      for (int64_t s = 0; s < d.win[2]; ++s) {
        int64_t iw = o[2] * d.stride[2] - d.padLow[2] + s * d.dilation[2];
        bool inside = id >= 0 && id < d.in[0] && ih >= 0 && ih < d.in[1] &&
                      iw >= 0 && iw < d.in[2];
        if (inside)
          logicalVoxel(p, d, n, id, ih, iw, voxel.data());
        for (int64_t c = 0; c < d.c; ++c)
          row.push_back(inside ? static_cast<float>(voxel[c]) : 0.0f);
      }
    }
  }
  return row;
}

std::vector<float>
mlir::conv3d::referenceQuantizedIm2colRow(const ReferenceConvProblem &p,
                                          int64_t m) {
  std::vector<float> row = referenceIm2colRow(p, m);
  if (!p.inputQuantBlockSize)
    return row;
  const size_t blockSize = static_cast<size_t>(*p.inputQuantBlockSize);
  std::vector<float> quantized(row.size());
  for (size_t start = 0; start < row.size(); start += blockSize) {
    // The zero fill past K never changes a block's maximum, so the partial
    // last block is quantized as it is.
    size_t count = std::min(blockSize, row.size() - start);
    nvfp4QuantizeBlock(row.data() + start, quantized.data() + start, count,
                       p.inputQuantAmax);
  }
  if (p.roundQuantizedInput)
    for (float &value : quantized)
      value = static_cast<float>(roundToElementType(value, p.input->type));
  return quantized;
}

std::vector<double> mlir::conv3d::referenceConv(const ReferenceConvProblem &p) {
  const Dims d = checkProblem(p);
  const std::vector<double> w = filterQRSCF(p, d);
  // The logical input concat(history, input), the prologue applied.
  std::vector<double> x(
      static_cast<size_t>(d.n * d.in[0] * d.in[1] * d.in[2] * d.c));
  for (int64_t n = 0, v = 0; n < d.n; ++n)
    for (int64_t id = 0; id < d.in[0]; ++id)
      for (int64_t ih = 0; ih < d.in[1]; ++ih)
        for (int64_t iw = 0; iw < d.in[2]; ++iw, ++v)
          logicalVoxel(p, d, n, id, ih, iw, &x[size_t(v * d.c)]);

  std::vector<double> result(static_cast<size_t>(d.m() * d.f));
  std::vector<double> acc(static_cast<size_t>(d.f));
  int64_t m = 0;
  for (int64_t n = 0; n < d.n; ++n)
    for (int64_t od = 0; od < d.out[0]; ++od)
      for (int64_t oh = 0; oh < d.out[1]; ++oh)
        for (int64_t ow = 0; ow < d.out[2]; ++ow, ++m) {
          for (int64_t f = 0; f < d.f; ++f)
            acc[f] = p.init ? p.init->get(m * d.f + f) : 0.0;

          if (p.inputQuantBlockSize) {
            // The quantized operand depends on the whole row (blocks span
            // taps when C is not a multiple of the block size), so it is
            // formed first; halo entries are its zeros.
            std::vector<float> a = referenceQuantizedIm2colRow(p, m);
            for (int64_t k = 0; k < d.k(); ++k)
              for (int64_t f = 0; f < d.f; ++f)
                acc[f] += double(a[k]) * w[k * d.f + f];
          } else {
            for (int64_t q = 0; q < d.win[0]; ++q) {
              int64_t id = od * d.stride[0] - d.padLow[0] + q * d.dilation[0];
              if (id < 0 || id >= d.in[0])
                continue; // halo: contributes zero
              for (int64_t r = 0; r < d.win[1]; ++r) {
                int64_t ih = oh * d.stride[1] - d.padLow[1] + r * d.dilation[1];
                if (ih < 0 || ih >= d.in[1])
                  continue;
                for (int64_t s = 0; s < d.win[2]; ++s) {
                  int64_t iw =
                      ow * d.stride[2] - d.padLow[2] + s * d.dilation[2];
                  if (iw < 0 || iw >= d.in[2])
                    continue;
                  const double *xv =
                      &x[(((n * d.in[0] + id) * d.in[1] + ih) * d.in[2] + iw) *
                         d.c];
                  const double *wv =
                      &w[((q * d.win[1] + r) * d.win[2] + s) * d.cg * d.f];
                  for (int64_t c = 0; c < d.cg; ++c)
                    for (int64_t f = 0; f < d.f; ++f)
                      acc[f] += xv[d.channelOf(f, c)] * wv[c * d.f + f];
                }
              }
            }
          }

          for (int64_t f = 0; f < d.f; ++f)
            result[m * d.f + f] = epilogue(p, d, m, f, acc[f]);
        }
  return result;
}

std::vector<double>
mlir::conv3d::referenceConvRows(const ReferenceConvProblem &p,
                                llvm::ArrayRef<int64_t> rows) {
  const Dims d = checkProblem(p);
  const std::vector<double> w = filterQRSCF(p, d);
  std::vector<double> result;
  result.reserve(rows.size() * size_t(d.f));
  std::vector<double> acc(static_cast<size_t>(d.f));
  for (int64_t m : rows) {
    // The row as the convolution consumes it (quantized when asked; halo
    // entries are zeros), times the filter.
    std::vector<float> a = referenceQuantizedIm2colRow(p, m);
    for (int64_t f = 0; f < d.f; ++f)
      acc[f] = p.init ? p.init->get(m * d.f + f) : 0.0;
    for (int64_t tap = 0; tap < d.taps(); ++tap)
      for (int64_t c = 0; c < d.cg; ++c)
        for (int64_t f = 0; f < d.f; ++f)
          acc[f] += double(a[tap * d.c + d.channelOf(f, c)]) *
                    w[(tap * d.cg + c) * d.f + f];
    for (int64_t f = 0; f < d.f; ++f)
      result.push_back(epilogue(p, d, m, f, acc[f]));
  }
  return result;
}

double mlir::conv3d::relativeL2Error(const std::vector<double> &reference,
                                     const HostTensor &output,
                                     int64_t *nonFinite) {
  if (int64_t(reference.size()) != output.numElements())
    llvm::report_fatal_error(
        llvm::formatv("relativeL2Error: {0} reference values for {1} outputs",
                      reference.size(), output.numElements()));
  double errorSquares = 0.0, referenceSquares = 0.0;
  int64_t bad = 0;
  for (size_t i = 0; i < reference.size(); ++i) {
    double expected = reference[i];
    // A value beyond the output type's range is that type's infinity: the
    // output cannot hold it either. (Values within range are compared
    // unrounded, so the error still measures the output's rounding.)
    if (double rounded = roundToElementType(expected, output.type);
        std::isinf(rounded) && std::isfinite(expected))
      expected = rounded;
    double actual = output.get(int64_t(i));
    if (!std::isfinite(expected)) {
      // A non-finite reference must be matched in kind (NaN, or the same
      // infinity); it cannot enter the norms.
      bool same =
          std::isnan(expected) ? std::isnan(actual) : actual == expected;
      bad += !same;
      continue;
    }
    if (!std::isfinite(actual)) {
      ++bad;
      continue;
    }
    double diff = actual - expected;
    errorSquares += diff * diff;
    referenceSquares += expected * expected;
  }
  if (nonFinite)
    *nonFinite = bad;
  if (bad)
    return std::numeric_limits<double>::infinity();
  if (referenceSquares == 0.0)
    return std::sqrt(errorSquares);
  return std::sqrt(errorSquares) / std::sqrt(referenceSquares);
}

double mlir::conv3d::defaultTolerance(ElementType outputType) {
  // Rounding the exact result to the output type alone costs a relative L2
  // error of about 0.21 * 2^-p for p fraction bits (an error uniform within
  // half an ulp, weighted by magnitude; measured on normal data by
  // ReferenceConvTest.OutputRoundingStaysWithinTolerance): ~1.7e-3 for bf16
  // (p = 7) and ~2.1e-4 for f16 (p = 10). The tolerances leave ~2.4x room
  // for that plus f32 accumulation and epilogue rounding, and stay far below
  // what a wrong tap, channel or halo element produces (1e-2 and up). f32
  // outputs only see accumulation-order differences, ~1e-6 for K in the
  // thousands.
  switch (outputType) {
  case ElementType::bf16:
    return 4e-3;
  case ElementType::f16:
    return 5e-4;
  case ElementType::f32:
    return 2e-5;
  }
  llvm_unreachable("unknown element type");
}
