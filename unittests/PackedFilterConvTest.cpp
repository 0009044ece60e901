//===- PackedFilterConvTest.cpp - a packed NVFP4 filter in fake mode ------===//
//
// nvfp4-mode=fake multiplies a packed filter (ConvSpec::packedFilter,
// filter_quant) as its dequantized values: compiled and run on the CPU, the
// convolution must equal, bit for bit, the same convolution given the
// fake-quantized filter (Engine::quantizeFilter's fake overload), since
// unpacking reproduces those values exactly (spec/nvfp4.md).
//
//===----------------------------------------------------------------------===//

#include "conv3d/Runtime/Engine.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

using namespace mlir::conv3d;

namespace {

TEST(PackedFilterConv, FakeModeEqualsTheFakeQuantizedFilterOnCpu) {
  Engine engine{CacheOptions{}};
  ConvSpec spec;
  spec.geometry.batch = 2;
  spec.geometry.inputSize = {4, 6, 5};
  spec.geometry.channels = 48;
  spec.geometry.window = {3, 3, 3};
  spec.geometry.filters = 24;
  spec.geometry.padLow = {2, 1, 1};
  spec.geometry.padHigh = {0, 1, 1};
  spec.filterLayout = FilterLayout::fqrsc;
  spec.inputType = ElementType::bf16;
  spec.outputType = ElementType::f32;
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
    ConvArgs args;
    args.input = x.data();
    args.filter = packed->codes.data();
    args.filterScales = packed->scales.data();
    args.filterAmax = amax;
    args.output = fromPacked.data();
    ASSERT_FALSE(bool((*packedConv)->run(args)));
    ConvArgs fakeArgs;
    fakeArgs.input = x.data();
    fakeArgs.filter = fake->data();
    fakeArgs.output = fromFake.data();
    ASSERT_FALSE(bool((*fakeConv)->run(fakeArgs)));
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

TEST(PackedFilterConv, RunNeedsTheScales) {
  Engine engine{CacheOptions{}};
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
  auto conv = engine.compile(spec, CompileOptions{});
  ASSERT_TRUE(bool(conv)) << llvm::toString(conv.takeError());
  HostTensor x = HostTensor::zeros(spec.inputType, spec.inputShape());
  HostTensor out = HostTensor::zeros(spec.outputType, spec.outputShape());
  std::vector<uint8_t> codes(8 * 9 * 8);
  ConvArgs args;
  args.input = x.data();
  args.filter = codes.data();
  args.output = out.data();
  llvm::Error error = (*conv)->run(args);
  ASSERT_TRUE(bool(error));
  EXPECT_NE(llvm::toString(std::move(error)).find("filter scales"),
            std::string::npos);
}

} // namespace
