//===- ReferenceGradients.cpp - naive reference conv gradients ------------===//

#include "conv3d/Reference/ReferenceGradients.h"
#include "conv3d/Reference/ReferenceConv.h"

#include "llvm/Support/ErrorHandling.h"

#include <array>

using namespace mlir::conv3d;

namespace {

/// Visits every multiply-add of the forward convolution that reads an input
/// element: fn(inputIndex, filterIndex, outputIndex), linear row-major
/// indices into the NDHWC input, the filter in `layout` and the NDHWF
/// output.
template <typename Fn>
void forEachForwardTerm(const ConvGeometry &g, FilterLayout layout, Fn fn) {
  const std::array<int64_t, 5> out = g.outputShape();
  const int64_t C = g.channels, F = g.filters;
  const auto &in = g.inputSize;
  const auto &win = g.window;
  for (int64_t n = 0; n < g.batch; ++n)
    for (int64_t od = 0; od < out[1]; ++od)
      for (int64_t oh = 0; oh < out[2]; ++oh)
        for (int64_t ow = 0; ow < out[3]; ++ow)
          for (int64_t q = 0; q < win[0]; ++q)
            for (int64_t r = 0; r < win[1]; ++r)
              for (int64_t s = 0; s < win[2]; ++s) {
                int64_t d =
                    od * g.strides[0] - g.padLow[0] + q * g.dilations[0];
                int64_t h =
                    oh * g.strides[1] - g.padLow[1] + r * g.dilations[1];
                int64_t w =
                    ow * g.strides[2] - g.padLow[2] + s * g.dilations[2];
                if (d < 0 || d >= in[0] || h < 0 || h >= in[1] || w < 0 ||
                    w >= in[2])
                  continue;
                int64_t inBase =
                    (((n * in[0] + d) * in[1] + h) * in[2] + w) * C;
                int64_t outBase =
                    (((n * out[1] + od) * out[2] + oh) * out[3] + ow) * F;
                for (int64_t c = 0; c < C; ++c)
                  for (int64_t f = 0; f < F; ++f) {
                    int64_t filterIndex =
                        layout == FilterLayout::qrscf
                            ? (((q * win[1] + r) * win[2] + s) * C + c) * F + f
                            : (((f * win[0] + q) * win[1] + r) * win[2] + s) *
                                      C +
                                  c;
                    fn(inBase + c, filterIndex, outBase + f);
                  }
              }
}

std::vector<double> startFrom(const HostTensor *init, int64_t count) {
  std::vector<double> result(count, 0.0);
  if (!init)
    return result;
  if (init->numElements() != count)
    llvm::report_fatal_error("reference gradient: init has the wrong size");
  for (int64_t i = 0; i < count; ++i)
    result[i] = init->get(i);
  return result;
}

void checkCount(const HostTensor &t, int64_t count, const char *what) {
  if (t.numElements() != count)
    llvm::report_fatal_error(llvm::Twine("reference gradient: ") + what +
                             " has the wrong size");
}

int64_t product(const std::array<int64_t, 5> &shape) {
  return shape[0] * shape[1] * shape[2] * shape[3] * shape[4];
}

} // namespace

std::vector<double> mlir::conv3d::referenceConvBackwardData(
    const ConvGeometry &forward, FilterLayout layout,
    const HostTensor &gradOutput, const HostTensor &filter,
    const HostTensor *init, const HostTensor *preActivation,
    Activation activation) {
  checkCount(gradOutput, product(forward.outputShape()), "grad_output");
  checkCount(filter, product(forward.filterShape(layout)), "filter");
  std::vector<double> dx = startFrom(init, product(forward.inputShape()));
  forEachForwardTerm(forward, layout, [&](int64_t i, int64_t k, int64_t o) {
    dx[i] += gradOutput.get(o) * filter.get(k);
  });
  if (activation == Activation::none)
    return dx;
  if (!preActivation || isActivationDerivative(activation))
    llvm::report_fatal_error("referenceConvBackwardData: an activation needs "
                             "the pre-activation and is a forward one");
  checkCount(*preActivation, int64_t(dx.size()), "pre-activation");
  for (size_t i = 0; i < dx.size(); ++i)
    dx[i] *= referenceActivationDerivative(activation,
                                           preActivation->get(int64_t(i)));
  return dx;
}

std::vector<double> mlir::conv3d::referenceConvBackwardFilter(
    const ConvGeometry &forward, FilterLayout layout, const HostTensor &input,
    const HostTensor &gradOutput, const HostTensor *init) {
  checkCount(input, product(forward.inputShape()), "input");
  checkCount(gradOutput, product(forward.outputShape()), "grad_output");
  std::vector<double> dw =
      startFrom(init, product(forward.filterShape(layout)));
  forEachForwardTerm(forward, layout, [&](int64_t i, int64_t k, int64_t o) {
    dw[k] += input.get(i) * gradOutput.get(o);
  });
  return dw;
}
