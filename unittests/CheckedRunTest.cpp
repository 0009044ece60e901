//===- CheckedRunTest.cpp - CompiledConv::run checks its buffers ----------===//
//
// The C++ API takes each buffer with its extents (ConvBuffers) and checks
// them against the spec before the compiled code runs: a wrong output
// buffer is an error naming it, not a write past its end in JIT code
// (issue 26, item 9). The checked run computes what the reference does.
//
//===----------------------------------------------------------------------===//

#include "conv3d/Reference/ReferenceConv.h"
#include "conv3d/Runtime/Engine.h"

#include "gtest/gtest.h"

#include <cstring>

using namespace mlir::conv3d;

namespace {

/// A causal 3x3x3 f32 convolution with a bias (the README's C++ example,
/// smaller).
ConvSpec smallSpec() {
  ConvSpec spec;
  spec.geometry.batch = 1;
  spec.geometry.inputSize = {5, 6, 6};
  spec.geometry.channels = 8;
  spec.geometry.window = {3, 3, 3};
  spec.geometry.filters = 16;
  spec.geometry.padLow = {2, 1, 1};
  spec.geometry.padHigh = {0, 1, 1};
  spec.inputType = ElementType::f32;
  spec.outputType = ElementType::f32;
  spec.hasBias = true;
  return spec;
}

class CheckedRun : public ::testing::Test {
protected:
  void SetUp() override {
    auto compiled = engine.compile(spec, CompileOptions{});
    ASSERT_TRUE(bool(compiled)) << llvm::toString(compiled.takeError());
    conv = *compiled;
    fillRandomNormal(input, 61);
    fillRandomNormal(filter, 62, 0.2);
    fillRandomNormal(bias, 63);
    fillPoison(output);
    buffers.input = input;
    buffers.filter = filter;
    buffers.bias = bias;
    buffers.output = output;
  }

  std::string errorOf(const ConvBuffers &given) {
    llvm::Error error = conv->run(given);
    return error ? llvm::toString(std::move(error)) : "";
  }

  Engine engine{CacheOptions{}};
  ConvSpec spec = smallSpec();
  std::shared_ptr<const CompiledConv> conv;
  HostTensor input = HostTensor::zeros(spec.inputType, spec.inputShape());
  HostTensor filter = HostTensor::zeros(spec.inputType, spec.filterShape());
  HostTensor bias = HostTensor::zeros(ElementType::f32, {16});
  HostTensor output = HostTensor::zeros(spec.outputType, spec.outputShape());
  ConvBuffers buffers;
};

TEST_F(CheckedRun, ComputesTheReference) {
  ASSERT_EQ(errorOf(buffers), "");
  ReferenceConvProblem problem;
  problem.geometry = spec.geometry;
  problem.input = &input;
  problem.filter = &filter;
  problem.bias = &bias;
  EXPECT_LT(relativeL2Error(referenceConv(problem), output), 1e-5);
}

TEST_F(CheckedRun, RefusesAnOutputOfAnotherShape) {
  // The README's snippet as first written sized the output like the input
  // (10 frames where the convolution writes 8): the JIT code would have
  // written past a smaller buffer.
  HostTensor small = HostTensor::zeros(ElementType::f32, {1, 3, 6, 6, 16});
  buffers.output = small;
  EXPECT_EQ(errorOf(buffers),
            "output buffer: the convolution takes 1x5x6x6x16 elements of 4 "
            "bytes; the buffer given holds 1x3x6x6x16 elements of 4 bytes");
}

TEST_F(CheckedRun, RefusesAnotherElementSize) {
  std::vector<uint16_t> halves(numElementsOf(spec.outputShape()));
  buffers.output = {halves.data(), spec.outputShape()};
  EXPECT_EQ(errorOf(buffers),
            "output buffer: the convolution takes 1x5x6x6x16 elements of 4 "
            "bytes; the buffer given holds 1x5x6x6x16 elements of 2 bytes");
}

TEST_F(CheckedRun, RefusesMissingAndUnusedBuffers) {
  ConvBuffers noBias = buffers;
  noBias.bias = {};
  EXPECT_EQ(errorOf(noBias), "missing bias buffer");
  ConvBuffers extra = buffers;
  extra.residual = output;
  EXPECT_EQ(errorOf(extra), "residual buffer given, but the spec has none");
  ConvBuffers flatFilter = buffers;
  flatFilter.filter = {filter.data(), {numElementsOf(spec.filterShape())}, 4};
  EXPECT_EQ(errorOf(flatFilter),
            "filter buffer: the convolution takes 3x3x3x8x16 elements of 4 "
            "bytes; the buffer given holds 3456 elements of 4 bytes");
}

TEST_F(CheckedRun, ExtentsOfEachParameter) {
  ConvSpec packed = spec;
  packed.filterLayout = FilterLayout::fqrsc;
  packed.packedFilter = true;
  auto codes = convBufferExtent(packed, ConvParameter::Filter);
  ASSERT_TRUE(codes.has_value());
  EXPECT_EQ(codes->shape, (std::vector<int64_t>{16, 3, 3, 3, 4}));
  EXPECT_EQ(codes->elementBytes, 1u);
  auto bias = convBufferExtent(packed, ConvParameter::Bias);
  ASSERT_TRUE(bias.has_value());
  EXPECT_EQ(bias->shape, (std::vector<int64_t>{16}));
  EXPECT_EQ(bias->elementBytes, 4u);
  EXPECT_FALSE(convBufferExtent(packed, ConvParameter::Amax).has_value());
}

} // namespace
