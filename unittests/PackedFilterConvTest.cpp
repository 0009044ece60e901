//===- PackedFilterConvTest.cpp - a packed NVFP4 filter in fake mode ------===//
//
// nvfp4-mode=fake multiplies a packed filter (ConvSpec::packedFilter,
// filter_quant) as its dequantized values: compiled and run on the CPU, the
// convolution must equal, bit for bit, the same convolution given the
// fake-quantized filter (Engine::quantizeFilter's fake overload), since
// unpacking reproduces those values exactly (spec/nvfp4.md). The GPU cases
// (skipped without a driver; sm90 on a compute capability 9.0 GPU only)
// run both through HostRunner, which uploads the codes and scales.
//
//===----------------------------------------------------------------------===//

#include "conv3d/Runtime/CudaDriver.h"
#include "conv3d/Runtime/Engine.h"
#include "conv3d/Runtime/HostRunner.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstring>

using namespace mlir::conv3d;

namespace {

/// A causal 3x3x3 bf16 convolution (depth padding (2, 0), 1 elsewhere) of
/// `channels` into `filters` FQRSC filters with an f32 output, the layout a
/// packed NVFP4 filter takes.
ConvSpec causalSpec(int64_t batch, std::array<int64_t, 3> inputSize,
                    int64_t channels, int64_t filters) {
  ConvSpec spec;
  spec.geometry.batch = batch;
  spec.geometry.inputSize = inputSize;
  spec.geometry.channels = channels;
  spec.geometry.window = {3, 3, 3};
  spec.geometry.filters = filters;
  spec.geometry.padLow = {2, 1, 1};
  spec.geometry.padHigh = {0, 1, 1};
  spec.filterLayout = FilterLayout::fqrsc;
  spec.inputType = ElementType::bf16;
  spec.outputType = ElementType::f32;
  return spec;
}

TEST(PackedFilterConv, FakeModeEqualsTheFakeQuantizedFilterOnCpu) {
  Engine engine{CacheOptions{}};
  ConvSpec spec = causalSpec(2, {4, 6, 5}, 48, 24);
  HostTensor x = HostTensor::zeros(spec.inputType, spec.inputShape());
  HostTensor w = HostTensor::zeros(spec.inputType, spec.filterShape());
  fillRandomNormal(x, 31, 1.0);
  fillRandomNormal(w, 32, 0.2);
  float amax = 0.5f; // below max |w|: some blocks saturate
  llvm::Expected<Engine::PackedNVFP4> packed =
      engine.quantizeFilter(spec, w, amax, CompileOptions{});
  ASSERT_TRUE(bool(packed)) << llvm::toString(packed.takeError());
  llvm::Expected<HostTensor> fake = engine.quantizeFilter(spec, w, 16, amax);
  ASSERT_TRUE(bool(fake)) << llvm::toString(fake.takeError());
  ConvSpec packedSpec = spec;
  packedSpec.packedFilter = true;

  for (CpuLowering lowering :
       {CpuLowering::ImplicitGemm, CpuLowering::Reference}) {
    CompileOptions options;
    options.lowering = lowering;
    auto packedConv = engine.compile(packedSpec, options);
    ASSERT_TRUE(bool(packedConv)) << llvm::toString(packedConv.takeError());
    auto fakeConv = engine.compile(spec, options);
    ASSERT_TRUE(bool(fakeConv)) << llvm::toString(fakeConv.takeError());
    HostTensor fromPacked =
        HostTensor::zeros(ElementType::f32, spec.outputShape());
    HostTensor fromFake =
        HostTensor::zeros(ElementType::f32, spec.outputShape());
    fillPoison(fromPacked);
    fillPoison(fromFake);
    ConvBuffers args;
    args.input = x;
    args.filter = {packed->codes.data(), packedSpec.packedFilterShape()};
    args.filterScales = {packed->scales.data(), packedSpec.filterScalesShape()};
    args.filterAmax = amax;
    args.output = fromPacked;
    llvm::Error packedRun = (*packedConv)->run(args);
    ASSERT_FALSE(bool(packedRun)) << llvm::toString(std::move(packedRun));
    ConvBuffers fakeArgs;
    fakeArgs.input = x;
    fakeArgs.filter = *fake;
    fakeArgs.output = fromFake;
    llvm::Error fakeRun = (*fakeConv)->run(fakeArgs);
    ASSERT_FALSE(bool(fakeRun)) << llvm::toString(std::move(fakeRun));
    EXPECT_EQ(
        std::memcmp(fromPacked.data(), fromFake.data(), fromFake.bytes.size()),
        0)
        << "lowering " << int(lowering);
    int64_t nonzero = 0;
    for (int64_t i = 0; i < fromFake.numElements(); ++i)
      nonzero += std::isfinite(fromFake.get(i)) && fromFake.get(i) != 0;
    EXPECT_GT(nonzero, fromFake.numElements() / 2);
  }
}

class PackedFilterConvGpu : public ::testing::TestWithParam<Target> {};

TEST_P(PackedFilterConvGpu, FakeModeEqualsTheFakeQuantizedFilter) {
  llvm::Expected<CudaDriver &> driver = CudaDriver::get();
  if (!driver)
    GTEST_SKIP() << llvm::toString(driver.takeError());
  llvm::Expected<DeviceInfo> info = driver->deviceInfo();
  ASSERT_TRUE(bool(info)) << llvm::toString(info.takeError());
  if (GetParam() == Target::sm90 && info->chip() != "sm_90")
    GTEST_SKIP() << "the sm90 kernel runs on sm_90, this is " << info->chip();
  Engine engine{CacheOptions{}};
  ConvSpec spec = causalSpec(2, {5, 9, 10}, 64, 48);
  spec.hasBias = true;
  HostTensor x = HostTensor::zeros(spec.inputType, spec.inputShape());
  HostTensor w = HostTensor::zeros(spec.inputType, spec.filterShape());
  HostTensor bias = HostTensor::zeros(ElementType::f32, {48});
  fillRandomNormal(x, 41, 1.0);
  fillRandomNormal(w, 42, 0.2);
  fillRandomNormal(bias, 43, 0.5);
  float amax = 0.5f;
  llvm::Expected<Engine::PackedNVFP4> packed =
      engine.quantizeFilter(spec, w, amax, CompileOptions{});
  ASSERT_TRUE(bool(packed)) << llvm::toString(packed.takeError());
  llvm::Expected<HostTensor> fake = engine.quantizeFilter(spec, w, 16, amax);
  ASSERT_TRUE(bool(fake)) << llvm::toString(fake.takeError());
  ConvSpec packedSpec = spec;
  packedSpec.packedFilter = true;
  CompileOptions options;
  options.target = GetParam();

  auto runOnce = [&](const ConvSpec &s, HostTensor &out) {
    auto conv = engine.compile(s, options);
    ASSERT_TRUE(bool(conv)) << llvm::toString(conv.takeError());
    fillPoison(out);
    HostConvBuffers buffers;
    buffers.input = &x;
    buffers.filter = &*fake;
    if (s.packedFilter) {
      buffers.packedFilter = &*packed;
      buffers.filterAmax = amax;
    }
    buffers.bias = &bias;
    buffers.output = &out;
    llvm::Error error = runWithHostBuffers(**conv, buffers);
    ASSERT_FALSE(bool(error)) << llvm::toString(std::move(error));
  };
  HostTensor fromPacked =
      HostTensor::zeros(ElementType::f32, spec.outputShape());
  HostTensor fromFake = HostTensor::zeros(ElementType::f32, spec.outputShape());
  runOnce(packedSpec, fromPacked);
  runOnce(spec, fromFake);
  EXPECT_EQ(
      std::memcmp(fromPacked.data(), fromFake.data(), fromFake.bytes.size()),
      0);
  int64_t nonzero = 0;
  for (int64_t i = 0; i < fromFake.numElements(); ++i)
    nonzero += std::isfinite(fromFake.get(i)) && fromFake.get(i) != 0;
  EXPECT_GT(nonzero, fromFake.numElements() / 2);
}

INSTANTIATE_TEST_SUITE_P(Targets, PackedFilterConvGpu,
                         ::testing::Values(Target::sm80, Target::sm90),
                         [](const ::testing::TestParamInfo<Target> &info) {
                           return stringifyTarget(info.param).str();
                         });

/// A small f32 convolution with a packed NVFP4 filter (16 channels, 8 1x3x3
/// filters: 576 code bytes, 72 scale bytes), for the run-time checks.
ConvSpec smallPackedSpec() {
  ConvSpec spec;
  spec.geometry.batch = 1;
  spec.geometry.inputSize = {2, 4, 4};
  spec.geometry.channels = 16;
  spec.geometry.window = {1, 3, 3};
  spec.geometry.filters = 8;
  spec.filterLayout = FilterLayout::fqrsc;
  spec.inputType = ElementType::f32;
  spec.outputType = ElementType::f32;
  spec.packedFilter = true;
  return spec;
}

TEST(PackedFilterConv, HostRunnerChecksThePackedFilter) {
  Engine engine{CacheOptions{}};
  ConvSpec spec = smallPackedSpec();
  auto conv = engine.compile(spec, CompileOptions{});
  ASSERT_TRUE(bool(conv)) << llvm::toString(conv.takeError());
  HostTensor x = HostTensor::zeros(spec.inputType, spec.inputShape());
  HostTensor out = HostTensor::zeros(spec.outputType, spec.outputShape());
  HostConvBuffers buffers;
  buffers.input = &x;
  buffers.output = &out;
  auto errorOf = [&] {
    llvm::Error error = runWithHostBuffers(**conv, buffers);
    return error ? llvm::toString(std::move(error)) : std::string();
  };
  EXPECT_EQ(errorOf(), "missing packed filter (codes and scales)");
  Engine::PackedNVFP4 packed;
  packed.codes.resize(8 * 9 * 8);
  packed.scales.resize(8 * 9);
  buffers.packedFilter = &packed;
  EXPECT_EQ(errorOf(), "");
  packed.scales.resize(8 * 9 - 1);
  EXPECT_EQ(errorOf(), "packed filter scales are 71 bytes; the spec needs 72");
  packed.codes.resize(8 * 9 * 8 + 1);
  EXPECT_EQ(errorOf(), "packed filter codes are 577 bytes; the spec needs 576");
  ConvSpec plain = spec;
  plain.packedFilter = false;
  auto plainConv = engine.compile(plain, CompileOptions{});
  ASSERT_TRUE(bool(plainConv)) << llvm::toString(plainConv.takeError());
  HostTensor w = HostTensor::zeros(plain.inputType, plain.filterShape());
  buffers.filter = &w;
  llvm::Error error = runWithHostBuffers(**plainConv, buffers);
  ASSERT_TRUE(bool(error));
  EXPECT_EQ(llvm::toString(std::move(error)),
            "a packed filter is given but the spec has none");
}

TEST(PackedFilterConv, RunNeedsTheScales) {
  Engine engine{CacheOptions{}};
  ConvSpec spec = smallPackedSpec();
  auto conv = engine.compile(spec, CompileOptions{});
  ASSERT_TRUE(bool(conv)) << llvm::toString(conv.takeError());
  HostTensor x = HostTensor::zeros(spec.inputType, spec.inputShape());
  HostTensor out = HostTensor::zeros(spec.outputType, spec.outputShape());
  std::vector<uint8_t> codes(8 * 9 * 8);
  ConvArgs args;
  args.input = x.data();
  args.filter = codes.data();
  args.output = out.data();
  llvm::Error error = (*conv)->runUnchecked(args);
  ASSERT_TRUE(bool(error));
  EXPECT_NE(llvm::toString(std::move(error)).find("filter scales"),
            std::string::npos);
}

} // namespace
