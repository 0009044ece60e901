//===- AllocationSizeTest.cpp - sizes checked before allocations ----------===//
//
// Every buffer the tools and the engine allocate from a user's sizes is
// checked first: int64 overflow of the byte count, the machine's memory,
// and buffers handed to the runner against the spec. Each case used to
// abort ("LLVM ERROR: out of memory"), overflow silently, or let a kernel
// write past a buffer.
//
//===----------------------------------------------------------------------===//

#include "conv3d/Reference/ReferenceConv.h"
#include "conv3d/Runtime/Engine.h"
#include "conv3d/Runtime/HostRunner.h"
#include "conv3d/Support/HostTensor.h"

#include <gtest/gtest.h>

using namespace mlir::conv3d;

namespace {

std::string errorOf(llvm::Error error) {
  return error ? llvm::toString(std::move(error)) : std::string();
}

template <typename T> std::string errorOf(llvm::Expected<T> value) {
  return value ? std::string() : llvm::toString(value.takeError());
}

TEST(TensorBytes, OverflowAndNegativeSizesAreErrors) {
  EXPECT_EQ(*tensorBytes({2, 3, 4}, 2), 48);
  EXPECT_EQ(*tensorBytes({}, 4), 4);
  EXPECT_EQ(*tensorBytes({5, 0, 7}, 4), 0);
  // 2^62 elements fit int64; their f32 bytes (2^64) do not.
  EXPECT_EQ(*tensorBytes({int64_t(1) << 62}, 1), int64_t(1) << 62);
  EXPECT_EQ(
      errorOf(tensorBytes({int64_t(1) << 31, int64_t(1) << 31}, 4, "output")),
      "output of shape 2147483648x2147483648 needs more than 2^63 bytes");
  // A product that wraps to a small positive number is caught too.
  EXPECT_NE(errorOf(tensorBytes({int64_t(1) << 32, int64_t(1) << 32, 3}, 1)),
            "");
  EXPECT_EQ(errorOf(tensorBytes({4, -1}, 2, "filter")),
            "filter of shape 4x-1 has a negative size");
}

TEST(HostTensorAllocate, RefusesWhatNoHostHoldsNamingTheBytes) {
  llvm::Expected<HostTensor> small =
      HostTensor::allocate(ElementType::bf16, {2, 3});
  ASSERT_TRUE(static_cast<bool>(small));
  EXPECT_EQ(small->sizeInBytes(), 12u);
  // 2^40 f32 elements: 4 TiB.
  EXPECT_EQ(errorOf(HostTensor::allocate(ElementType::f32, {int64_t(1) << 40},
                                         "input"))
                .rfind("input of shape 1099511627776 (f32) needs "
                       "4398046511104 bytes of host memory; this machine "
                       "has ",
                       0),
            0u);
  EXPECT_EQ(errorOf(HostTensor::allocate(ElementType::f32, {int64_t(1) << 62},
                                         "output")),
            "output of shape 4611686018427387904 needs more than 2^63 bytes");
  EXPECT_NE(errorOf(HostTensor::allocate(ElementType::f16, {-3})), "");
  EXPECT_NE(errorOf(checkHostMemory(INT64_MAX, "a buffer")), "");
  EXPECT_EQ(errorOf(checkHostMemory(4096, "a buffer")), "");
}

TEST(ConvSpecValidate, BuffersWhoseBytesOverflowAreRefused) {
  // Input and output of 2^62 elements each are within the geometry's
  // limit, but as f32 they take 2^64 bytes: the engine refuses them before
  // compiling, naming the buffer.
  ConvSpec spec;
  spec.geometry.batch = 1;
  spec.geometry.inputSize = {int64_t(1) << 31, int64_t(1) << 31, 1};
  spec.geometry.channels = 1;
  spec.geometry.window = {1, 1, 1};
  spec.geometry.filters = 1;
  spec.inputType = ElementType::f32;
  spec.outputType = ElementType::f32;
  EXPECT_EQ(errorOf(spec.validate()), "input of shape "
                                      "1x2147483648x2147483648x1x1 needs "
                                      "more than 2^63 bytes");
  Engine engine(CacheOptions{});
  EXPECT_EQ(errorOf(engine.compile(spec, CompileOptions())),
            "input of shape 1x2147483648x2147483648x1x1 needs more than "
            "2^63 bytes");
  // In bf16 the operands fit; the f32 accumulator a split-K or Q-sliced
  // lowering allocates (the output's shape) still does not.
  spec.inputType = spec.outputType = ElementType::bf16;
  spec.geometry.inputSize = {int64_t(1) << 31, int64_t(1) << 30, 1};
  EXPECT_EQ(errorOf(spec.validate()),
            "f32 accumulator of shape 1x2147483648x1073741824x1x1 needs "
            "more than 2^63 bytes");
}

TEST(RunWithHostBuffers, BuffersMustMatchTheSpec) {
  // A buffer smaller than the spec's would be read or written past its end
  // by the kernel; one of another shape or type is refused, naming both.
  ConvSpec spec;
  spec.geometry.batch = 1;
  spec.geometry.inputSize = {3, 4, 4};
  spec.geometry.channels = 4;
  spec.geometry.window = {1, 3, 3};
  spec.geometry.filters = 8;
  spec.geometry.padLow = {0, 1, 1};
  spec.geometry.padHigh = {0, 1, 1};
  spec.inputType = spec.outputType = ElementType::f32;
  spec.hasBias = true;
  Engine engine(CacheOptions{});
  auto conv = engine.compile(spec, CompileOptions());
  ASSERT_TRUE(static_cast<bool>(conv)) << llvm::toString(conv.takeError());

  HostTensor input = HostTensor::zeros(spec.inputType, spec.inputShape());
  fillRandomNormal(input, 1);
  HostTensor filter = HostTensor::zeros(spec.inputType, spec.filterShape());
  fillRandomNormal(filter, 2);
  HostTensor bias = HostTensor::zeros(ElementType::f32, {8});
  fillRandomNormal(bias, 3);
  HostTensor output = HostTensor::zeros(spec.outputType, spec.outputShape());
  fillPoison(output);
  HostConvBuffers buffers;
  buffers.input = &input;
  buffers.filter = &filter;
  buffers.bias = &bias;
  buffers.output = &output;
  ASSERT_EQ(errorOf(runWithHostBuffers(**conv, buffers)), "");
  EXPECT_LT(
      relativeL2Error(referenceConv(referenceProblem(spec, buffers, nullptr)),
                      output),
      defaultTolerance(spec.outputType));

  HostTensor smallOutput = HostTensor::zeros(spec.outputType, {1, 3, 4, 4, 4});
  buffers.output = &smallOutput;
  EXPECT_EQ(errorOf(runWithHostBuffers(**conv, buffers)),
            "output buffer is 1x3x4x4x4 f32 (768 bytes); the spec needs "
            "1x3x4x4x8 f32 (1536 bytes)");
  buffers.output = &output;
  HostTensor bf16Input =
      HostTensor::zeros(ElementType::bf16, spec.inputShape());
  buffers.input = &bf16Input;
  EXPECT_EQ(errorOf(runWithHostBuffers(**conv, buffers)),
            "input buffer is 1x3x4x4x4 bf16 (384 bytes); the spec needs "
            "1x3x4x4x4 f32 (768 bytes)");
  buffers.input = &input;
  buffers.bias = nullptr;
  EXPECT_EQ(errorOf(runWithHostBuffers(**conv, buffers)),
            "missing bias buffer");
}

} // namespace
