//===- CausalConv3dStreamTest.cpp - chunked causal conv = full sequence ---===//
//
// A CausalConv3dStream fed a random sequence in random chunkings (one-frame
// chunks, chunks shorter than the cache, the whole sequence at once) must
// return, concatenated along depth, the full-sequence causal convolution of
// the float64 reference (which knows nothing about chunks: causal padding,
// the prologue on every frame), within the dtype's tolerance. Also: depth
// stride 2 and dilation 2, reset(), and the errors of bad specs and chunks.
// The same on the GPU targets (sm80, and sm90 whose history and prologue
// convolutions run on the sm80 kernel) where a CUDA driver is present: the
// cache stays on the device.
//
//===----------------------------------------------------------------------===//

#include "conv3d/Runtime/CausalConv3dStream.h"
#include "conv3d/Reference/ReferenceConv.h"
#include "conv3d/Runtime/CudaDriver.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

using namespace mlir::conv3d;

namespace {

struct StreamCase {
  const char *name;
  int64_t frames, hw, channels, filters, window;
  int64_t depthStride, depthDilation;
  ElementType type;
  bool norm, beta, bias;
  Activation inputActivation;
};

ConvSpec specOf(const StreamCase &c, int64_t frames) {
  ConvSpec spec;
  ConvGeometry &g = spec.geometry;
  g.batch = 2;
  g.inputSize = {frames, c.hw, c.hw};
  g.channels = c.channels;
  g.filters = c.filters;
  g.window = {c.window, 3, 3};
  g.strides = {c.depthStride, 1, 1};
  g.dilations = {c.depthDilation, 1, 1};
  g.padLow = {(c.window - 1) * c.depthDilation, 1, 1};
  g.padHigh = {0, 1, 1};
  spec.inputType = spec.outputType = c.type;
  spec.hasBias = c.bias;
  spec.hasNorm = c.norm;
  spec.hasNormBeta = c.beta;
  spec.normEps = 1e-5f;
  spec.inputActivation = c.inputActivation;
  spec.activation = Activation::relu;
  return spec;
}

/// Frames [begin, end) of an N x D x ... tensor.
HostTensor frames(const HostTensor &t, int64_t begin, int64_t end) {
  std::vector<int64_t> shape = t.shape;
  shape[1] = end - begin;
  HostTensor out = HostTensor::zeros(t.type, shape);
  int64_t plane = t.shape[2] * t.shape[3] * t.shape[4];
  for (int64_t n = 0; n < t.shape[0]; ++n)
    for (int64_t i = 0; i < (end - begin) * plane; ++i)
      out.set(n * shape[1] * plane + i,
              t.get((n * t.shape[1] + begin) * plane + i));
  return out;
}

/// Appends output frames `part` to `all` along depth.
void append(HostTensor &all, const HostTensor &part) {
  if (all.shape.empty()) {
    all = part;
    return;
  }
  std::vector<int64_t> shape = all.shape;
  shape[1] += part.shape[1];
  HostTensor joined = HostTensor::zeros(all.type, shape);
  int64_t plane = shape[2] * shape[3] * shape[4];
  for (int64_t n = 0; n < shape[0]; ++n) {
    for (int64_t i = 0; i < all.shape[1] * plane; ++i)
      joined.set(n * shape[1] * plane + i,
                 all.get(n * all.shape[1] * plane + i));
    for (int64_t i = 0; i < part.shape[1] * plane; ++i)
      joined.set((n * shape[1] + all.shape[1]) * plane + i,
                 part.get(n * part.shape[1] * plane + i));
  }
  all = std::move(joined);
}

/// Feeds a random sequence to a stream of `c` on `target` in several
/// chunkings and compares each result with the float64 reference.
void checkChunkings(const StreamCase &c, Target target) {
  ConvSpec full = specOf(c, c.frames);
  ASSERT_FALSE(static_cast<bool>(full.validate()));
  HostTensor input = HostTensor::zeros(c.type, full.inputShape());
  HostTensor filter = HostTensor::zeros(c.type, full.filterShape());
  HostTensor bias = HostTensor::zeros(ElementType::f32, {c.filters});
  HostTensor gamma = HostTensor::zeros(ElementType::f32, {c.channels});
  HostTensor beta = HostTensor::zeros(ElementType::f32, {c.channels});
  fillRandomNormal(input, 11, 1.0);
  fillRandomNormal(filter, 12, 1.0 / std::sqrt(double(full.geometry.gemmK())));
  fillRandomNormal(bias, 13, 0.5);
  fillRandomNormal(gamma, 14, 1.0);
  fillRandomNormal(beta, 15, 0.5);

  ReferenceConvProblem problem;
  problem.geometry = full.geometry;
  problem.input = &input;
  problem.filter = &filter;
  problem.bias = c.bias ? &bias : nullptr;
  problem.activation = full.activation;
  problem.normGamma = c.norm ? &gamma : nullptr;
  problem.normBeta = c.beta ? &beta : nullptr;
  problem.normEps = full.normEps;
  problem.inputActivation = c.inputActivation;
  std::vector<double> reference = referenceConv(problem);

  Engine engine{CacheOptions{}};
  CausalConvWeights weights;
  weights.filter = &filter;
  weights.bias = c.bias ? &bias : nullptr;
  weights.normGamma = c.norm ? &gamma : nullptr;
  weights.normBeta = c.beta ? &beta : nullptr;
  // The stream's spec carries a nominal chunk length of one frame.
  CompileOptions options;
  options.target = target;
  auto stream =
      CausalConv3dStream::create(engine, specOf(c, 1), options, weights);
  ASSERT_TRUE(static_cast<bool>(stream)) << llvm::toString(stream.takeError());

  std::mt19937_64 rng(21);
  std::vector<std::vector<int64_t>> chunkings = {
      {c.frames},                                // all at once
      std::vector<int64_t>(size_t(c.frames), 1), // one frame at a time
  };
  for (int trial = 0; trial < 3; ++trial) { // random lengths
    std::vector<int64_t> lengths;
    for (int64_t left = c.frames; left > 0;) {
      int64_t length = std::min<int64_t>(left, 1 + int64_t(rng() % 4));
      lengths.push_back(length);
      left -= length;
    }
    chunkings.push_back(lengths);
  }
  for (const std::vector<int64_t> &lengths : chunkings) {
    (*stream)->reset();
    EXPECT_EQ((*stream)->cachedFrames(), 0);
    HostTensor output;
    int64_t at = 0;
    std::string text;
    for (int64_t length : lengths) {
      text += std::to_string(length) + " ";
      int64_t expectedFrames = (*stream)->outputFramesFor(length);
      auto part = (*stream)->step(frames(input, at, at + length));
      ASSERT_TRUE(static_cast<bool>(part)) << llvm::toString(part.takeError());
      EXPECT_EQ(part->shape[1], expectedFrames);
      EXPECT_LE((*stream)->cachedFrames(), (c.window - 1) * c.depthDilation);
      append(output, *part);
      at += length;
    }
    EXPECT_EQ((*stream)->framesSeen(), c.frames);
    ASSERT_EQ(output.shape, full.outputShape()) << "chunks: " << text;
    double error = relativeL2Error(reference, output);
    EXPECT_LE(error, defaultTolerance(c.type)) << "chunks: " << text;
  }
}

class CausalStream : public ::testing::TestWithParam<StreamCase> {};

TEST_P(CausalStream, ChunkingsEqualTheFullSequence) {
  checkChunkings(GetParam(), Target::cpu);
}

class CausalStreamGpu : public ::testing::TestWithParam<StreamCase> {};

TEST_P(CausalStreamGpu, ChunkingsEqualTheFullSequenceOnSm80AndSm90) {
  auto driver = CudaDriver::get();
  if (!driver)
    GTEST_SKIP() << llvm::toString(driver.takeError());
  for (Target target : {Target::sm80, Target::sm90}) {
    SCOPED_TRACE(stringifyTarget(target).str());
    checkChunkings(GetParam(), target);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Streams, CausalStreamGpu,
    ::testing::Values(
        StreamCase{"wan_bf16", 7, 4, 8, 8, 3, 1, 1, ElementType::bf16, true,
                   false, true, Activation::silu},
        StreamCase{"beta_gelu_stride2_bf16", 9, 4, 16, 8, 3, 2, 1,
                   ElementType::bf16, true, true, false, Activation::gelu_tanh},
        StreamCase{"stride2_dilation2_norm_f16", 9, 3, 4, 4, 2, 2, 2,
                   ElementType::f16, true, true, true, Activation::silu},
        StreamCase{"relu_no_norm_bf16", 8, 3, 8, 8, 3, 1, 2, ElementType::bf16,
                   false, false, false, Activation::relu},
        StreamCase{"plain_bf16", 6, 3, 8, 8, 3, 1, 1, ElementType::bf16, false,
                   false, true, Activation::none},
        StreamCase{"one_tap_no_cache_bf16", 5, 3, 8, 8, 1, 1, 1,
                   ElementType::bf16, true, false, false, Activation::silu}),
    [](const ::testing::TestParamInfo<StreamCase> &info) {
      return std::string(info.param.name);
    });

INSTANTIATE_TEST_SUITE_P(
    Streams, CausalStream,
    ::testing::Values(
        StreamCase{"wan_bf16", 7, 4, 8, 8, 3, 1, 1, ElementType::bf16, true,
                   false, true, Activation::silu},
        StreamCase{"beta_gelu_f32", 6, 3, 6, 5, 3, 1, 1, ElementType::f32, true,
                   true, false, Activation::gelu_tanh},
        StreamCase{"stride2_f32", 9, 3, 4, 4, 3, 2, 1, ElementType::f32, false,
                   false, true, Activation::none},
        StreamCase{"dilation2_relu_f32", 8, 3, 4, 4, 3, 1, 2, ElementType::f32,
                   false, false, false, Activation::relu},
        StreamCase{"stride2_dilation2_norm_f16", 9, 3, 4, 4, 2, 2, 2,
                   ElementType::f16, true, true, true, Activation::silu},
        StreamCase{"one_tap_no_cache_f32", 5, 3, 4, 4, 1, 1, 1,
                   ElementType::f32, true, false, false, Activation::silu}),
    [](const ::testing::TestParamInfo<StreamCase> &info) {
      return std::string(info.param.name);
    });

StreamCase basicCase() {
  return {"basic",
          4,
          3,
          4,
          4,
          3,
          1,
          1,
          ElementType::f32,
          true,
          false,
          false,
          Activation::silu};
}

std::string createError(const ConvSpec &spec, const CausalConvWeights &weights,
                        CompileOptions options = {}) {
  Engine engine{CacheOptions{}};
  auto stream = CausalConv3dStream::create(engine, spec, options, weights);
  if (stream)
    return "";
  return llvm::toString(stream.takeError());
}

TEST(CausalStreamErrors, BadSpecsAndWeights) {
  ConvSpec spec = specOf(basicCase(), 1);
  HostTensor filter = HostTensor::zeros(spec.inputType, spec.filterShape());
  HostTensor gamma = HostTensor::zeros(ElementType::f32, {4});
  CausalConvWeights weights{&filter, nullptr, &gamma, nullptr};
  EXPECT_EQ(createError(spec, weights), "");

  ConvSpec notCausal = spec;
  notCausal.geometry.padLow[0] = 1;
  notCausal.geometry.padHigh[0] = 1;
  EXPECT_EQ(createError(notCausal, weights),
            "CausalConv3dStream: needs causal depth padding [(Q-1)*dilation, "
            "0] = [2, 0], got [1, 1]");
  ConvSpec accumulate = spec;
  accumulate.accumulate = true;
  EXPECT_EQ(createError(accumulate, weights),
            "CausalConv3dStream: accumulation onto the output is not "
            "supported");
  // GPU targets need the driver (the weights go to the device at creation).
  CompileOptions gpu;
  gpu.target = Target::sm80;
  auto driver = CudaDriver::get();
  if (driver)
    EXPECT_EQ(createError(spec, weights, gpu), "");
  else
    EXPECT_EQ(createError(spec, weights, gpu),
              "CausalConv3dStream: sm80 needs the CUDA driver: " +
                  llvm::toString(driver.takeError()));
  ConvSpec badEps = spec;
  badEps.normEps = 0;
  EXPECT_NE(createError(badEps, weights)
                .find("epsilon must be finite and "
                      "positive"),
            std::string::npos);
  CausalConvWeights noGamma{&filter, nullptr, nullptr, nullptr};
  EXPECT_EQ(createError(spec, noGamma),
            "CausalConv3dStream: missing norm gamma");
  HostTensor wrongFilter =
      HostTensor::zeros(ElementType::bf16, spec.filterShape());
  CausalConvWeights badFilter{&wrongFilter, nullptr, &gamma, nullptr};
  EXPECT_EQ(createError(spec, badFilter),
            "CausalConv3dStream: filter is 3x3x3x4x4 bf16; the spec needs "
            "3x3x3x4x4 f32");
  HostTensor bias = HostTensor::zeros(ElementType::f32, {4});
  CausalConvWeights extraBias{&filter, &bias, &gamma, nullptr};
  EXPECT_EQ(createError(spec, extraBias),
            "CausalConv3dStream: a bias was given but the spec has none");
}

TEST(CausalStreamErrors, BadChunksLeaveTheStreamUnchanged) {
  ConvSpec spec = specOf(basicCase(), 1);
  HostTensor filter = HostTensor::zeros(spec.inputType, spec.filterShape());
  HostTensor gamma = HostTensor::zeros(ElementType::f32, {4});
  fillRandomNormal(filter, 1);
  fillRandomNormal(gamma, 2);
  Engine engine{CacheOptions{}};
  auto stream = CausalConv3dStream::create(engine, spec, CompileOptions{},
                                           {&filter, nullptr, &gamma, nullptr});
  ASSERT_TRUE(static_cast<bool>(stream)) << llvm::toString(stream.takeError());
  HostTensor good = HostTensor::zeros(ElementType::f32, {2, 2, 3, 3, 4});
  fillRandomNormal(good, 3);
  ASSERT_TRUE(static_cast<bool>((*stream)->step(good)));
  EXPECT_EQ((*stream)->framesSeen(), 2);
  EXPECT_EQ((*stream)->cachedFrames(), 2);

  auto expectError = [&](const HostTensor &chunk, const std::string &message) {
    auto result = (*stream)->step(chunk);
    ASSERT_FALSE(static_cast<bool>(result));
    EXPECT_EQ(llvm::toString(result.takeError()), message);
    EXPECT_EQ((*stream)->framesSeen(), 2);
    EXPECT_EQ((*stream)->cachedFrames(), 2);
  };
  expectError(HostTensor::zeros(ElementType::f32, {2, 2, 3, 4, 4}),
              "CausalConv3dStream: chunk is 2x2x3x4x4 f32; the spec needs "
              "2x2x3x3x4 f32");
  expectError(HostTensor::zeros(ElementType::bf16, {2, 2, 3, 3, 4}),
              "CausalConv3dStream: chunk is 2x2x3x3x4 bf16; the spec needs "
              "2x2x3x3x4 f32");
  expectError(HostTensor::zeros(ElementType::f32, {2, 0, 3, 3, 4}),
              "CausalConv3dStream: a chunk must have at least one frame");
  expectError(HostTensor::zeros(ElementType::f32, {2, 3, 3, 4}),
              "CausalConv3dStream: a chunk must have rank 5 (N x L x H x W x "
              "C), got 2x3x3x4");
  // Raw buffers: a length whose element count overflows is refused before
  // anything is read.
  llvm::Error huge = (*stream)->step(
      good.data(), std::numeric_limits<int64_t>::max(), nullptr, nullptr);
  EXPECT_EQ(llvm::toString(std::move(huge)),
            "CausalConv3dStream: the chunk's element count overflows int64");
  EXPECT_EQ((*stream)->outputFramesFor(std::numeric_limits<int64_t>::max()), 0);
  EXPECT_EQ((*stream)->framesSeen(), 2);
  HostTensor residual = HostTensor::zeros(ElementType::f32, {2, 1, 3, 3, 4});
  auto withResidual = (*stream)->step(good, &residual);
  ASSERT_FALSE(static_cast<bool>(withResidual));
  EXPECT_EQ(llvm::toString(withResidual.takeError()),
            "CausalConv3dStream: a residual was given but the spec has none");
}

} // namespace
