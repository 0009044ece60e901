//===- QSliceAccuracyTest.cpp - Q-slice strategies keep f32 sums ----------===//
//
// With bf16 output, both Q-slice strategies must be as accurate as the
// undecomposed convolution: their error against the float64 reference stays
// within 1.05x of its error. Rounding the partial sums of each slice to bf16
// (what chaining slices through a bf16 output would do) fails this by a wide
// margin; keeping them in f32 passes.
//
//===----------------------------------------------------------------------===//

#include "conv3d/Reference/ReferenceConv.h"
#include "conv3d/Runtime/Engine.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace mlir::conv3d;

namespace {

struct SliceCase {
  const char *name;
  int64_t batch, depth, hw, channels, filters;
  std::array<int64_t, 3> window;
  int64_t depthStride, depthDilation;
  std::array<int64_t, 2> depthPadding;
};

double runError(Engine &engine, const ConvSpec &spec, const char *qslice,
                const HostTensor &input, const HostTensor &filter,
                const std::vector<double> &reference) {
  CompileOptions options;
  options.qslice = *symbolizeQSliceStrategy(qslice);
  auto conv = engine.compile(spec, options);
  EXPECT_TRUE(static_cast<bool>(conv)) << llvm::toString(conv.takeError());
  if (!conv)
    return INFINITY;
  HostTensor output = HostTensor::zeros(spec.outputType, spec.outputShape());
  fillPoison(output);
  ConvBuffers args;
  args.input = input;
  args.filter = filter;
  args.output = output;
  llvm::Error error = (*conv)->run(args);
  EXPECT_FALSE(static_cast<bool>(error)) << llvm::toString(std::move(error));
  return relativeL2Error(reference, output);
}

class QSliceAccuracy : public ::testing::TestWithParam<SliceCase> {};

TEST_P(QSliceAccuracy, WithinFivePercentOfUndecomposed) {
  const SliceCase &c = GetParam();
  ConvSpec spec;
  ConvGeometry &g = spec.geometry;
  g.batch = c.batch;
  g.inputSize = {c.depth, c.hw, c.hw};
  g.channels = c.channels;
  g.filters = c.filters;
  g.window = c.window;
  g.strides = {c.depthStride, 1, 1};
  g.dilations = {c.depthDilation, 1, 1};
  g.padLow = {c.depthPadding[0], 1, 1};
  g.padHigh = {c.depthPadding[1], 1, 1};
  spec.inputType = spec.outputType = ElementType::bf16;
  ASSERT_FALSE(static_cast<bool>(spec.validate()));

  HostTensor input = HostTensor::zeros(spec.inputType, spec.inputShape());
  HostTensor filter = HostTensor::zeros(spec.inputType, spec.filterShape());
  fillRandomNormal(input, 5, 1.0);
  fillRandomNormal(filter, 6, 1.0 / std::sqrt(double(g.gemmK())));
  ReferenceConvProblem problem;
  problem.geometry = g;
  problem.input = &input;
  problem.filter = &filter;
  std::vector<double> reference = referenceConv(problem);

  Engine engine{CacheOptions{}}; // always compile
  double none = runError(engine, spec, "none", input, filter, reference);
  double fused = runError(engine, spec, "fused", input, filter, reference);
  double separate =
      runError(engine, spec, "separate", input, filter, reference);
  RecordProperty("error_none", std::to_string(none));
  RecordProperty("error_fused", std::to_string(fused));
  RecordProperty("error_separate", std::to_string(separate));
  std::printf("[%s] rel. L2 error: none %.4e  fused %.4e (x%.4f)  separate "
              "%.4e (x%.4f)\n",
              c.name, none, fused, fused / none, separate, separate / none);
  EXPECT_LT(none, defaultTolerance(ElementType::bf16));
  EXPECT_LE(fused, 1.05 * none);
  EXPECT_LE(separate, 1.05 * none);

  // Control: the bound is tight enough to catch the mistake it guards
  // against. Chaining the slices through a bf16 output (round after every
  // slice) is simulated from exact per-slice sums of the reference.
  HostTensor chained = HostTensor::zeros(ElementType::bf16, spec.outputShape());
  for (int64_t q = 0; q < g.window[0]; ++q) {
    HostTensor sliceFilter = filter;
    int64_t perSlice = filter.numElements() / g.window[0]; // QRSCF
    for (int64_t i = 0; i < filter.numElements(); ++i)
      if (i / perSlice != q)
        sliceFilter.set(i, 0.0);
    problem.filter = &sliceFilter;
    std::vector<double> part = referenceConv(problem);
    for (int64_t i = 0; i < chained.numElements(); ++i)
      chained.set(i, chained.get(i) + part[i]); // rounds to bf16 each time
  }
  double chainedError = relativeL2Error(reference, chained);
  std::printf("[%s] chained through bf16: %.4e (x%.2f)\n", c.name, chainedError,
              chainedError / none);
  EXPECT_GT(chainedError, 1.05 * none);
}

// clang-format off
const SliceCase kCases[] = {
  {"causal_3x3x3", 1, 8, 12, 32, 32, {3, 3, 3}, 1, 1, {2, 0}},
  {"symmetric_3x3x3", 2, 6, 10, 24, 40, {3, 3, 3}, 1, 1, {1, 1}},
  {"strided_depth", 1, 9, 10, 16, 24, {3, 3, 3}, 2, 1, {1, 1}},
  {"dilated_depth", 1, 9, 8, 16, 16, {3, 3, 3}, 1, 2, {4, 0}},
  {"deep_5x3x3", 1, 10, 8, 8, 32, {5, 3, 3}, 1, 1, {4, 0}},
  {"wide_channels", 1, 5, 8, 96, 96, {3, 3, 3}, 1, 1, {2, 0}},
};
// clang-format on

INSTANTIATE_TEST_SUITE_P(Cases, QSliceAccuracy, ::testing::ValuesIn(kCases),
                         [](const auto &info) { return info.param.name; });

} // namespace
