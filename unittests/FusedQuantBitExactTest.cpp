//===- FusedQuantBitExactTest.cpp - fused NVFP4 operand, bit for bit ------===//
//
// The fused path quantizes the im2col operand inside the tile load. To
// observe that operand exactly, the convolution uses an identity filter:
// F = K and filter[k][f] = (k == f), so output[m][f] = A_q[m][f] * 1 + zeros,
// exact in f32. It is compared bit for bit (with -0 == +0) with the
// independent C++ reference quantizer applied to the reference im2col row,
// for every placement and K order, on data that exercises the edge cases:
// blocks straddling taps (C not a multiple of the block size), outliers and
// tiny blocks whose scales are E4M3 subnormals, amax above the data maximum
// and amax = 0, and blocks whose scale is exactly 1 holding every E2M1
// rounding tie and its bf16 neighbours.
//
//===----------------------------------------------------------------------===//

#include "conv3d/Reference/ReferenceConv.h"
#include "conv3d/Runtime/CudaDriver.h"
#include "conv3d/Runtime/Engine.h"
#include "conv3d/Runtime/HostRunner.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

using namespace mlir::conv3d;

namespace {

struct QuantCase {
  const char *name;
  int64_t batch, depth, height, width, channels;
  std::array<int64_t, 3> window, strides, dilations;
  std::array<int64_t, 6> padding;
  int64_t blockSize;
  ElementType type;
  bool outliers;
  double amaxScale; ///< amax = amaxScale * max|x| (0: amax = 0)
  CpuLowering lowering;
  const char *placement, *qslice, *config;
  Target target = Target::cpu;
  /// Tie data (fillTies) instead of random data; needs bf16 and C a
  /// multiple of the block size.
  bool ties = false;
};

/// The bf16 value `steps` codes away from bf16 value `x` (x > 0).
float bf16Step(float x, int steps) {
  uint32_t bits;
  std::memcpy(&bits, &x, 4);
  bits = (bits >> 16 << 16) + (uint32_t(steps) << 16);
  std::memcpy(&x, &bits, 4);
  return x;
}

/// Blocks of `blockSize` channels whose first element is +-6 and the rest
/// the E2M1 ties of spec/nvfp4.md and their bf16 neighbours, signs random:
/// with amax = 2688 every block's scale is exactly 1 (gs = 1, s = 1), so
/// |v| * inv is the tie itself and the rounding decides alone.
void fillTies(HostTensor &t, int64_t blockSize, unsigned seed) {
  const float ties[] = {0.25f, 0.75f, 1.25f, 1.75f, 2.5f, 3.5f, 5.0f};
  std::vector<float> pool;
  for (float tie : ties)
    for (int steps : {-1, 0, 1})
      pool.push_back(bf16Step(tie, steps));
  std::srand(seed);
  for (int64_t i = 0; i < t.numElements(); ++i) {
    float magnitude = i % blockSize == 0 ? 6.0f : pool[(i * 7) % pool.size()];
    t.set(i, std::rand() % 2 ? -magnitude : magnitude);
  }
}

ConvSpec makeSpec(const QuantCase &c) {
  ConvSpec spec;
  ConvGeometry &g = spec.geometry;
  g.batch = c.batch;
  g.inputSize = {c.depth, c.height, c.width};
  g.channels = c.channels;
  g.window = c.window;
  g.filters = g.gemmK(); // identity filter
  g.strides = c.strides;
  g.dilations = c.dilations;
  g.padLow = {c.padding[0], c.padding[2], c.padding[4]};
  g.padHigh = {c.padding[1], c.padding[3], c.padding[5]};
  spec.inputType = c.type;
  spec.outputType = ElementType::f32;
  spec.inputQuantBlockSize = c.blockSize;
  return spec;
}

class FusedQuantBitExact : public ::testing::TestWithParam<QuantCase> {};

TEST_P(FusedQuantBitExact, OperandMatchesReference) {
  const QuantCase &c = GetParam();
  ConvSpec spec = makeSpec(c);
  ASSERT_FALSE(static_cast<bool>(spec.validate()));
  const ConvGeometry &g = spec.geometry;
  int64_t k = g.gemmK();

  HostTensor input = HostTensor::zeros(spec.inputType, spec.inputShape());
  if (c.ties)
    fillTies(input, c.blockSize, 17);
  else if (c.outliers)
    fillOutlierHeavy(input, 17);
  else
    fillRandomNormal(input, 17, 1.0);
  HostTensor filter = HostTensor::zeros(spec.inputType, spec.filterShape());
  for (int64_t i = 0; i < k; ++i)
    filter.set(i * k + i, 1.0); // QRSCF seen as K x F
  double maxAbs = 0;
  for (int64_t i = 0; i < input.numElements(); ++i)
    maxAbs = std::max(maxAbs, std::fabs(input.get(i)));
  float amax = float(c.amaxScale * maxAbs);

  Engine engine{CacheOptions{}}; // always compile
  CompileOptions options;
  options.target = c.target;
  options.lowering = c.lowering;
  options.quantPlacement = *symbolizeQuantPlacement(c.placement);
  options.qslice = *symbolizeQSliceStrategy(c.qslice);
  options.config = c.config;
  HostTensor output = HostTensor::zeros(ElementType::f32, spec.outputShape());
  fillPoison(output);
  if (c.target != Target::cpu) {
    llvm::Expected<CudaDriver &> driver = CudaDriver::get();
    if (!driver)
      GTEST_SKIP() << llvm::toString(driver.takeError());
  }
  auto conv = engine.compile(spec, options);
  ASSERT_TRUE(static_cast<bool>(conv)) << llvm::toString(conv.takeError());
  HostConvBuffers buffers;
  buffers.input = &input;
  buffers.filter = &filter;
  buffers.amax = amax;
  buffers.output = &output;
  llvm::Error runError = runWithHostBuffers(**conv, buffers);
  ASSERT_FALSE(static_cast<bool>(runError))
      << llvm::toString(std::move(runError));

  ReferenceConvProblem problem;
  problem.geometry = g;
  problem.input = &input;
  problem.filter = &filter;
  problem.inputQuantBlockSize = c.blockSize;
  problem.inputQuantAmax = amax;
  int64_t mismatches = 0, nonZero = 0;
  for (int64_t m = 0; m < g.gemmM(); ++m) {
    std::vector<float> row = referenceQuantizedIm2colRow(problem, m);
    for (int64_t f = 0; f < k; ++f) {
      float got = float(output.get(m * k + f));
      nonZero += row[f] != 0.0f;
      if (!(got == row[f]) && !(std::isnan(got) && std::isnan(row[f]))) {
        if (++mismatches <= 5)
          ADD_FAILURE() << "m=" << m << " k=" << f << ": got " << got
                        << ", reference " << row[f];
      }
    }
  }
  EXPECT_EQ(mismatches, 0);
  // The data must exercise the quantizer (amax = 0 zeroes everything).
  if (c.amaxScale > 0)
    EXPECT_GT(nonZero, g.gemmM());
  else
    EXPECT_EQ(nonZero, 0);
}

constexpr CpuLowering kTiled = CpuLowering::ImplicitGemm;
constexpr CpuLowering kLinalg = CpuLowering::Reference;

// clang-format off
const QuantCase kCases[] = {
  // C = 5, block 16: blocks straddle taps; tile placement is the only one.
  {"straddle_normal", 1, 4, 5, 5, 5, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {2, 0, 1, 1, 1, 1}, 16, ElementType::bf16, false, 1.0, kTiled, "auto", "none", ""},
  {"straddle_outliers", 1, 4, 5, 5, 5, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {2, 0, 1, 1, 1, 1}, 16, ElementType::bf16, true, 1.0, kTiled, "tile", "none", ""},
  {"straddle_amax_above", 2, 3, 4, 4, 3, {3, 3, 3}, {1, 2, 1}, {1, 1, 2}, {1, 1, 2, 0, 1, 2}, 32, ElementType::bf16, true, 3.7, kTiled, "auto", "none", "tile_m=16,tile_n=24,tile_k=64"},
  {"straddle_amax_zero", 1, 3, 4, 4, 5, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1, 1, 1, 1}, 16, ElementType::bf16, false, 0.0, kTiled, "auto", "none", ""},
  {"straddle_f32", 1, 4, 4, 4, 7, {2, 3, 3}, {2, 1, 1}, {1, 1, 1}, {1, 0, 1, 1, 0, 2}, 16, ElementType::f32, true, 1.0, kTiled, "tile", "none", "tile_m=5,tile_n=8,tile_k=32"},
  {"straddle_f16", 1, 4, 4, 4, 6, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {2, 0, 1, 1, 1, 1}, 16, ElementType::f16, true, 1.0, kTiled, "auto", "none", ""},
  {"straddle_linalg", 1, 4, 5, 5, 5, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {2, 0, 1, 1, 1, 1}, 16, ElementType::bf16, true, 1.0, kLinalg, "auto", "none", ""},
  // C a multiple of the block size: tile and prepass placements agree.
  {"aligned_tile", 1, 4, 4, 4, 32, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {2, 0, 1, 1, 1, 1}, 16, ElementType::bf16, true, 1.0, kTiled, "tile", "none", ""},
  {"aligned_prepass", 1, 4, 4, 4, 32, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {2, 0, 1, 1, 1, 1}, 16, ElementType::bf16, true, 1.0, kTiled, "prepass", "none", ""},
  // The prepass as one loop over contiguous blocks (conv3d-quantize-to-loops):
  // f16 and f32 (4 elements per vector access), blocks of 32 and 64, batch
  // > 1, amax above the data maximum and amax = 0.
  {"prepass_f16_b32", 2, 3, 4, 4, 64, {3, 3, 3}, {1, 2, 1}, {1, 1, 1}, {2, 0, 1, 1, 1, 1}, 32, ElementType::f16, true, 3.7, kTiled, "prepass", "none", ""},
  {"prepass_f32_b16", 1, 3, 4, 4, 16, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1, 1, 1, 1}, 16, ElementType::f32, true, 1.0, kTiled, "prepass", "none", ""},
  {"prepass_b64_amax_zero", 1, 3, 3, 3, 64, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 0, 1, 1, 1, 1}, 64, ElementType::bf16, false, 0.0, kTiled, "prepass", "none", ""},
  {"aligned_auto_b32", 2, 3, 3, 3, 64, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 0, 1, 1, 1, 1}, 32, ElementType::bf16, true, 2.0, kTiled, "auto", "none", ""},
  {"aligned_b64_pointwise", 1, 3, 4, 4, 128, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0, 0, 0, 0}, 64, ElementType::bf16, true, 1.0, kTiled, "auto", "none", ""},
  // Every E2M1 tie and its neighbours at scale 1 (amax = 448 * 6 = 2688).
  {"ties_tile", 1, 2, 3, 3, 32, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 0, 1, 1, 1, 1}, 16, ElementType::bf16, false, 448.0, kTiled, "tile", "none", "", Target::cpu, true},
  {"ties_prepass", 1, 2, 3, 3, 32, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 0, 1, 1, 1, 1}, 16, ElementType::bf16, false, 448.0, kTiled, "prepass", "none", "", Target::cpu, true},
  {"ties_linalg", 1, 2, 3, 3, 32, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 0, 1, 1, 1, 1}, 16, ElementType::bf16, false, 448.0, kLinalg, "tile", "none", "", Target::cpu, true},
  // K order with slices outermost, and the separate decomposition.
  {"qslice_fused", 1, 5, 4, 4, 16, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {2, 0, 1, 1, 1, 1}, 16, ElementType::bf16, true, 1.0, kTiled, "tile", "fused", ""},
  {"qslice_separate", 1, 5, 4, 4, 16, {3, 3, 3}, {2, 1, 1}, {2, 1, 1}, {3, 1, 1, 1, 1, 1}, 16, ElementType::bf16, true, 1.0, kTiled, "tile", "separate", ""},
  {"qslice_separate_straddle_rsc", 1, 5, 4, 4, 12, {3, 2, 2}, {1, 1, 1}, {1, 1, 1}, {2, 0, 1, 0, 1, 0}, 16, ElementType::bf16, true, 1.0, kTiled, "tile", "separate", ""},
};
// clang-format on

INSTANTIATE_TEST_SUITE_P(Cases, FusedQuantBitExact, ::testing::ValuesIn(kCases),
                         [](const auto &info) { return info.param.name; });

// The same operand through the sm80 kernel's quantizing loads (tile
// placement), on a GPU; skipped without a driver. Odd C or two stages take
// the register-staged load; otherwise the blocks are quantized in shared
// memory after cp.async (C = 12, 16, 64 and 8 below).
// clang-format off
const QuantCase kGpuCases[] = {
  {"straddle_bf16", 1, 4, 5, 5, 5, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {2, 0, 1, 1, 1, 1}, 16, ElementType::bf16, true, 1.0, kTiled, "tile", "none", "", Target::sm80},
  {"straddle_f16_b32", 2, 3, 4, 4, 3, {3, 3, 3}, {1, 2, 1}, {1, 1, 2}, {1, 1, 2, 0, 1, 2}, 32, ElementType::f16, true, 3.7, kTiled, "tile", "none", "", Target::sm80},
  {"amax_zero", 1, 3, 4, 4, 5, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1, 1, 1, 1}, 16, ElementType::bf16, false, 0.0, kTiled, "tile", "none", "", Target::sm80},
  {"aligned_b64", 1, 4, 4, 4, 64, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 0, 1, 1, 1, 1}, 64, ElementType::bf16, true, 1.0, kTiled, "tile", "none", "", Target::sm80},
  {"qslice_fused", 1, 5, 4, 4, 16, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {2, 0, 1, 1, 1, 1}, 16, ElementType::bf16, true, 1.0, kTiled, "tile", "fused", "", Target::sm80},
  {"shared_straddle_c12", 1, 4, 5, 5, 12, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {2, 0, 1, 1, 1, 1}, 16, ElementType::bf16, true, 1.0, kTiled, "tile", "none", "", Target::sm80},
  {"shared_f16_b32_stages3", 2, 3, 4, 4, 8, {3, 3, 3}, {1, 2, 1}, {1, 1, 2}, {1, 1, 2, 0, 1, 2}, 32, ElementType::f16, true, 3.7, kTiled, "tile", "none", "tile_m=32,tile_n=64,tile_k=64,stages=3,warps_m=2,warps_n=2", Target::sm80},
  {"ties_shared", 1, 2, 3, 3, 32, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 0, 1, 1, 1, 1}, 16, ElementType::bf16, false, 448.0, kTiled, "tile", "none", "", Target::sm80, true},
  {"ties_register", 1, 2, 3, 3, 32, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 0, 1, 1, 1, 1}, 16, ElementType::bf16, false, 448.0, kTiled, "tile", "none", "tile_m=32,tile_n=64,tile_k=32,stages=2,warps_m=2,warps_n=2", Target::sm80, true},
  {"ties_prepass", 1, 2, 3, 3, 32, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 0, 1, 1, 1, 1}, 16, ElementType::bf16, false, 448.0, kTiled, "prepass", "none", "", Target::sm80, true},
  {"register_stages2", 1, 4, 4, 4, 16, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {2, 0, 1, 1, 1, 1}, 16, ElementType::bf16, true, 1.0, kTiled, "tile", "none", "tile_m=64,tile_n=64,tile_k=32,stages=2,warps_m=2,warps_n=2", Target::sm80},
  // The prepass kernel (a thread per contiguous block, 16-byte accesses).
  {"prepass_bf16", 2, 4, 5, 5, 32, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {2, 0, 1, 1, 1, 1}, 16, ElementType::bf16, true, 1.0, kTiled, "prepass", "none", "", Target::sm80},
  {"prepass_f16_b64_amax_above", 1, 3, 4, 4, 64, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 0, 1, 1, 1, 1}, 64, ElementType::f16, true, 2.5, kTiled, "prepass", "none", "", Target::sm80},
};
// clang-format on

INSTANTIATE_TEST_SUITE_P(SM80, FusedQuantBitExact,
                         ::testing::ValuesIn(kGpuCases),
                         [](const auto &info) { return info.param.name; });

// The same operand through the sm90 kernel's in-place quantization of the
// landed TMA tile (tile placement, C >= 64 a multiple of the block size; the
// identity filter is relaid to FQRSC on the device), on an H100 or H200;
// skipped without a driver. Blocks of 16, 32 and 64; both schedules, two
// stages (step t + 1 lands in the stage just released), 256-row tiles;
// C = 80 (the second channel block half TMA's out-of-bounds zeros, whose
// blocks must stay zero); the causal halo; amax = 0; every E2M1 tie; Q
// slices fused into the K loop.
// clang-format off
const QuantCase kSM90Cases[] = {
  {"b16_causal", 1, 4, 5, 5, 64, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {2, 0, 1, 1, 1, 1}, 16, ElementType::bf16, true, 1.0, kTiled, "tile", "none", "", Target::sm90},
  {"b32_f16_pingpong_stages2", 2, 3, 6, 6, 128, {1, 3, 3}, {1, 2, 1}, {1, 1, 1}, {0, 0, 1, 1, 1, 1}, 32, ElementType::f16, true, 3.7, kTiled, "tile", "none", "tile_m=64,tile_n=128,tile_k=64,stages=2,warps_m=4,warps_n=1,schedule=pingpong", Target::sm90},
  {"b16_c80_m256", 1, 3, 9, 9, 80, {1, 3, 3}, {1, 1, 1}, {1, 2, 1}, {0, 0, 2, 2, 1, 1}, 16, ElementType::bf16, true, 1.0, kTiled, "tile", "none", "tile_m=256,tile_n=128,tile_k=64,stages=3,warps_m=8,warps_n=1", Target::sm90},
  {"b64_pointwise", 1, 3, 8, 8, 128, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0, 0, 0, 0}, 64, ElementType::bf16, true, 2.0, kTiled, "tile", "none", "", Target::sm90},
  {"b16_amax_zero", 1, 3, 4, 4, 64, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1, 1, 1, 1}, 16, ElementType::bf16, false, 0.0, kTiled, "tile", "none", "", Target::sm90},
  {"ties", 1, 2, 3, 3, 64, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 0, 1, 1, 1, 1}, 16, ElementType::bf16, false, 448.0, kTiled, "tile", "none", "", Target::sm90, true},
  {"b32_qslice_fused", 1, 5, 4, 4, 64, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {2, 0, 1, 1, 1, 1}, 32, ElementType::bf16, true, 1.0, kTiled, "tile", "fused", "", Target::sm90},
};
// clang-format on

INSTANTIATE_TEST_SUITE_P(SM90, FusedQuantBitExact,
                         ::testing::ValuesIn(kSM90Cases),
                         [](const auto &info) { return info.param.name; });

} // namespace
