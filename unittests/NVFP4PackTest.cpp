//===- NVFP4PackTest.cpp - NVFP4 codes and scale bytes --------------------===//
//
// The packed form (codes + E4M3 scale bytes) must decode to exactly the
// fake-quantized values of the scalar reference: that is what makes the
// real block-scaled MMA compute the fake-quantized convolution.
//
//===----------------------------------------------------------------------===//

#include "conv3d/Quant/NVFP4Reference.h"
#include "conv3d/Runtime/Engine.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

using namespace mlir::conv3d;

namespace {

uint32_t bitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

TEST(NVFP4Pack, E4M3EncodeInvertsDecode) {
  for (unsigned code = 0; code <= 0x7E; ++code) {
    float value = nvfp4DecodeE4M3(uint8_t(code));
    EXPECT_EQ(nvfp4RoundE4M3(value), value) << code;
    EXPECT_EQ(nvfp4EncodeE4M3(value), code) << value;
  }
  EXPECT_EQ(nvfp4DecodeE4M3(0x7E), 448.0f);
  EXPECT_EQ(nvfp4DecodeE4M3(0x01), std::ldexp(1.0f, -9));
  EXPECT_EQ(nvfp4DecodeE4M3(0x08), std::ldexp(1.0f, -6));
  EXPECT_EQ(nvfp4DecodeE4M3(0x38), 1.0f);
  EXPECT_TRUE(std::isnan(nvfp4DecodeE4M3(0x7F)));
}

TEST(NVFP4Pack, E2M1EncodeInvertsDecode) {
  const float magnitudes[8] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6};
  for (unsigned code = 0; code < 16; ++code) {
    float value = nvfp4DecodeE2M1(uint8_t(code));
    EXPECT_EQ(std::fabs(value), magnitudes[code & 7]);
    EXPECT_EQ(std::signbit(value), code >= 8);
    EXPECT_EQ(nvfp4EncodeE2M1(value), code);
  }
  EXPECT_EQ(nvfp4EncodeE2M1(std::nanf("")), 0);
}

/// Checks that the codes of `values` decode to nvfp4QuantizeBlock's result
/// bit for bit (NaN inputs, which FP4 cannot hold, encode as +0).
void expectDecodesToFakeQuant(const std::vector<float> &values, float amax) {
  size_t n = values.size();
  std::vector<float> fake(n);
  std::vector<uint8_t> codes(n, 0xFF);
  uint8_t scaleBits = 0xFF;
  nvfp4QuantizeBlock(values.data(), fake.data(), n, amax);
  nvfp4EncodeBlock(values.data(), codes.data(), n, amax, scaleBits);
  float gs = amax / 2688.0f;
  float scale = nvfp4DecodeE4M3(scaleBits) * gs;
  for (size_t i = 0; i < n; ++i) {
    ASSERT_LT(codes[i], 16);
    if (std::isnan(values[i])) {
      EXPECT_EQ(codes[i], 0);
      continue;
    }
    float q = nvfp4DecodeE2M1(codes[i]);
    float magnitude = std::fabs(q) * scale;
    float decoded = std::copysign(magnitude, q);
    // A zero block's fake values are +0; its codes are +0 too.
    EXPECT_EQ(bitsOf(decoded), bitsOf(fake[i]))
        << "element " << i << " of " << values[i] << " amax " << amax;
  }
}

TEST(NVFP4Pack, RandomBlocksDecodeToFakeQuant) {
  std::mt19937_64 rng(42);
  std::normal_distribution<float> normal;
  for (int trial = 0; trial < 4000; ++trial) {
    // Block magnitudes from 2^-40 to 2^20 relative to amax (subnormal
    // scales, flushes to zero, saturation at 448).
    float spread = std::ldexp(1.0f, int(rng() % 60) - 40);
    std::vector<float> block(16);
    for (float &v : block)
      v = normal(rng) * spread;
    float amax = std::ldexp(1.0f, int(rng() % 20) - 10) * (1 + normal(rng) / 8);
    expectDecodesToFakeQuant(block, std::fabs(amax));
  }
}

TEST(NVFP4Pack, EdgeBlocks) {
  const float inf = std::numeric_limits<float>::infinity();
  expectDecodesToFakeQuant(std::vector<float>(16, 1.0f), 0.0f);
  expectDecodesToFakeQuant({-0.0f, 0.0f, -1e-30f, 1e-30f}, 1.0f);
  expectDecodesToFakeQuant({1.0f, -inf, 3.0f, std::nanf("")}, 10.0f);
  expectDecodesToFakeQuant({0.25f, 0.75f, 1.25f, 1.75f, 2.5f, 3.5f, 5.0f},
                           2688.0f);
  // A partial block (count < 16) is zero-filled.
  expectDecodesToFakeQuant({-6.0f, 2.0f, 0.1f}, 6.0f);
}

TEST(NVFP4Pack, TensorLayout) {
  HostTensor x = HostTensor::zeros(ElementType::f32, {2, 32});
  for (int64_t i = 0; i < x.numElements(); ++i)
    x.set(i, double((i * 7) % 13) - 6.0);
  NVFP4Packed packed = referencePackNVFP4(x, 16, 2688.0f);
  ASSERT_EQ(packed.codes.size(), 32u);
  ASSERT_EQ(packed.scales.size(), 4u);
  for (int64_t b = 0; b < 4; ++b) {
    std::vector<float> block(16);
    for (int64_t j = 0; j < 16; ++j)
      block[j] = float(x.get(b * 16 + j));
    std::vector<uint8_t> codes(16);
    uint8_t scale;
    nvfp4EncodeBlock(block.data(), codes.data(), 16, 2688.0f, scale);
    EXPECT_EQ(packed.scales[b], scale);
    for (int64_t j = 0; j < 16; j += 2) {
      uint8_t byte = packed.codes[(b * 16 + j) / 2];
      EXPECT_EQ(byte & 0xF, codes[j]) << "element " << b * 16 + j;
      EXPECT_EQ(byte >> 4, codes[j + 1]) << "element " << b * 16 + j + 1;
    }
  }
  // amax 2688 makes gs = 1: the first block's maximum 6 has scale 1.
  EXPECT_EQ(packed.scales[0], nvfp4EncodeE4M3(1.0f));
}

} // namespace

//===----------------------------------------------------------------------===//
// Engine::packNVFP4 (the compiled prepass) on the CPU target
//===----------------------------------------------------------------------===//

namespace {

TEST(NVFP4Pack, EngineMatchesReferenceOnCpu) {
  Engine engine{CacheOptions{}};
  for (auto [type, blockSize] : {std::pair{ElementType::bf16, int64_t(16)},
                                 std::pair{ElementType::f32, int64_t(64)}}) {
    HostTensor x = HostTensor::zeros(type, {3, 5, 128});
    fillRandomNormal(x, 11, 2.0);
    x.set(7, std::nan(""));
    x.set(300, -INFINITY);
    llvm::Expected<Engine::PackedNVFP4> packed =
        engine.packNVFP4(x, blockSize, 9.0f, CompileOptions{});
    ASSERT_TRUE(bool(packed)) << llvm::toString(packed.takeError());
    NVFP4Packed expected = referencePackNVFP4(x, blockSize, 9.0f);
    EXPECT_EQ(packed->codes, expected.codes);
    EXPECT_EQ(packed->scales, expected.scales);
  }
}

TEST(NVFP4Pack, EngineErrors) {
  Engine engine{CacheOptions{}};
  HostTensor x = HostTensor::zeros(ElementType::bf16, {4, 48});
  auto message = [&](const HostTensor &t, int64_t blockSize, float amax,
                     Target target) {
    CompileOptions options;
    options.target = target;
    llvm::Expected<Engine::PackedNVFP4> packed =
        engine.packNVFP4(t, blockSize, amax, options);
    return packed ? std::string() : llvm::toString(packed.takeError());
  };
  EXPECT_EQ(message(x, 8, 1.0f, Target::cpu),
            "NVFP4 block size must be 16, 32, 64, 128 or 256, got 8");
  EXPECT_EQ(message(x, 32, 1.0f, Target::cpu),
            "NVFP4 packing needs a non-empty tensor whose last dimension is a "
            "multiple of the block size 32");
  EXPECT_EQ(message(x, 16, -1.0f, Target::cpu),
            "NVFP4 amax must be finite and >= 0");
  EXPECT_EQ(message(x, 16, INFINITY, Target::cpu),
            "NVFP4 amax must be finite and >= 0");
  EXPECT_NE(message(x, 16, 1.0f, Target::sm100).find("never run"),
            std::string::npos);
}

} // namespace

//===----------------------------------------------------------------------===//
// Engine::quantizeFilter, real NVFP4: the filter packed once, K-major
//===----------------------------------------------------------------------===//

namespace {

ConvSpec filterSpec(int64_t channels, FilterLayout layout, ElementType type) {
  ConvSpec spec;
  spec.geometry.batch = 1;
  spec.geometry.inputSize = {4, 6, 6};
  spec.geometry.channels = channels;
  spec.geometry.window = {3, 3, 2};
  spec.geometry.filters = 24;
  spec.filterLayout = layout;
  spec.inputType = type;
  spec.outputType = type;
  return spec;
}

// The packed filter is the reference packer's bytes, and decodes to the
// fake quantization of the filter in the convolution's K order per output
// channel (axes Q, R, S, C of FQRSC), the values nvfp4-mode=fake multiplies.
TEST(NVFP4Pack, QuantizeFilterRealMatchesReferenceOnCpu) {
  Engine engine{CacheOptions{}};
  ConvSpec spec = filterSpec(64, FilterLayout::fqrsc, ElementType::f32);
  HostTensor w = HostTensor::zeros(spec.inputType, spec.filterShape());
  fillRandomNormal(w, 23, 0.5);
  float amax = 1.75f; // below max |w|: some blocks saturate at 448
  llvm::Expected<Engine::PackedNVFP4> packed =
      engine.quantizeFilter(spec, w, amax, CompileOptions{});
  ASSERT_TRUE(bool(packed)) << llvm::toString(packed.takeError());
  NVFP4Packed expected = referencePackNVFP4(w, 16, amax);
  EXPECT_EQ(packed->codes, expected.codes);
  EXPECT_EQ(packed->scales, expected.scales);

  HostTensor fake = referenceQuantize(w, 16, amax, 1, 4);
  float gs = amax / 2688.0f;
  int64_t mismatches = 0;
  for (int64_t i = 0; i < w.numElements(); ++i) {
    uint8_t byte = packed->codes[i / 2];
    uint8_t code = i % 2 ? byte >> 4 : byte & 0xF;
    float scale = nvfp4DecodeE4M3(packed->scales[i / 16]) * gs;
    mismatches += bitsOf(nvfp4DecodeE2M1(code) * scale) !=
                  bitsOf(static_cast<float>(fake.get(i)));
  }
  EXPECT_EQ(mismatches, 0);
}

TEST(NVFP4Pack, QuantizeFilterRealErrors) {
  Engine engine{CacheOptions{}};
  auto message = [&](const ConvSpec &spec, const HostTensor &w) {
    llvm::Expected<Engine::PackedNVFP4> packed =
        engine.quantizeFilter(spec, w, 1.0f, CompileOptions{});
    return packed ? std::string() : llvm::toString(packed.takeError());
  };
  ConvSpec qrscf = filterSpec(64, FilterLayout::qrscf, ElementType::bf16);
  EXPECT_EQ(
      message(qrscf, HostTensor::zeros(ElementType::bf16, qrscf.filterShape())),
      "a real NVFP4 filter is packed K-major: the spec's filter layout "
      "must be fqrsc, not qrscf");
  ConvSpec c24 = filterSpec(24, FilterLayout::fqrsc, ElementType::bf16);
  EXPECT_EQ(
      message(c24, HostTensor::zeros(ElementType::bf16, c24.filterShape())),
      "a real NVFP4 filter needs C to be a multiple of the block size 16 "
      "(each scale covers 16 channels of one tap), got C = 24");
  ConvSpec spec = filterSpec(64, FilterLayout::fqrsc, ElementType::bf16);
  EXPECT_EQ(message(spec, HostTensor::zeros(ElementType::bf16, {24, 64})),
            "filter buffer does not match the spec's filter shape and dtype");
}

} // namespace
