//===- TuningCandidatesTest.cpp - what the tuner times --------------------===//
//
// The tuner's candidates are configurations the kernels accept: for the
// sm90 kernel every candidate's plan builds (shared memory fits, warp
// layouts and schedules are valid), the heuristic's own configuration is not
// repeated, nothing is timed twice, NVFP4 tile loads keep whole blocks, and
// convolutions the sm90 kernel cannot take get sm80 candidates. The text
// form of a configuration reads back as the same attribute.
//
//===----------------------------------------------------------------------===//

#include "conv3d/IR/Conv3dAttrs.h"
#include "conv3d/IR/Conv3dDialect.h"
#include "conv3d/Target/Families.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::conv3d;

namespace {

struct TuningCandidatesTest : ::testing::Test {
  TuningCandidatesTest() { context.getOrLoadDialect<Conv3dDialect>(); }

  ConvProblem problem(const ConvGeometry &g,
                      FilterLayout layout = FilterLayout::fqrsc,
                      std::optional<int64_t> block = std::nullopt,
                      bool quantizesInTile = false) {
    ConvProblem problem;
    problem.geometry = g;
    problem.filterLayout = layout;
    problem.inputType = BFloat16Type::get(&context);
    problem.quantBlockSize = block;
    problem.quantizesInTile = quantizesInTile;
    return problem;
  }

  SmallVector<IGemmConfigAttr>
  candidates(const ConvGeometry &g, Target target,
             FilterLayout layout = FilterLayout::fqrsc,
             std::optional<int64_t> block = std::nullopt) {
    return tuningCandidates(&context, problem(g, layout, block), target);
  }

  MLIRContext context;
};

ConvGeometry geometry(std::array<int64_t, 5> input,
                      std::array<int64_t, 5> filter,
                      std::array<int64_t, 3> stride = {1, 1, 1},
                      std::array<int64_t, 6> padding = {0, 0, 1, 1, 1, 1}) {
  return ConvGeometry::fromShapes(input, filter, FilterLayout::qrscf, stride,
                                  {1, 1, 1}, padding);
}

// The suite's sm90 shapes: wide, narrow, pointwise, strided.
std::vector<ConvGeometry> sm90Shapes() {
  return {geometry({1, 23, 60, 104, 384}, {3, 3, 3, 384, 384}),
          geometry({1, 23, 480, 832, 96}, {3, 3, 3, 96, 96}),
          geometry({8, 16, 56, 56, 64}, {3, 3, 3, 64, 64}, {1, 1, 1},
                   {1, 1, 1, 1, 1, 1}),
          geometry({1, 21, 60, 104, 384}, {1, 1, 1, 384, 384}, {1, 1, 1},
                   {0, 0, 0, 0, 0, 0}),
          geometry({1, 23, 60, 104, 384}, {3, 1, 1, 384, 384}, {2, 1, 1},
                   {0, 0, 0, 0, 0, 0}),
          geometry({1, 4, 6, 6, 64}, {3, 3, 3, 64, 40})};
}

TEST_F(TuningCandidatesTest, SM90CandidatesAreValidPlans) {
  for (const ConvGeometry &g : sm90Shapes()) {
    SmallVector<IGemmConfigAttr> configs = candidates(g, Target::sm90);
    ASSERT_FALSE(configs.empty());
    IGemmConfigAttr heuristic = heuristicConfig(&context, getSM90Im2colFamily(),
                                                problem(g), Target::sm90);
    for (auto [i, config] : llvm::enumerate(configs)) {
      EXPECT_EQ(config.getKernel(), Target::sm90);
      EXPECT_NE(config, heuristic);
      for (size_t j = 0; j < i; ++j)
        EXPECT_NE(config, configs[j]);
      sm90::SM90KernelPlan plan;
      std::optional<std::string> problem = sm90::SM90KernelPlan::build(
          g, config.getTileM(), config.getTileN(), config.getTileK(),
          config.getStages(), config.getWarpsM(), config.getWarpsN(),
          config.getKOrder(), config.getSplitK(), /*epilogueAlignment=*/16,
          plan, config.getSchedule(), /*outputTakesTmaStore=*/true,
          std::nullopt, config.getClusterM(), config.getMainloop());
      EXPECT_FALSE(problem) << formatIGemmConfig(config) << ": " << *problem;
    }
  }
}

TEST_F(TuningCandidatesTest, SM90TriesBothSchedulesAndNarrowerTiles) {
  ConvGeometry pointwise = sm90Shapes()[3];
  SmallVector<IGemmConfigAttr> configs = candidates(pointwise, Target::sm90);
  auto has = [&](int64_t tileM, int64_t tileN, KernelSchedule schedule) {
    return llvm::any_of(configs, [&](IGemmConfigAttr c) {
      return c.getTileM() == tileM && c.getTileN() == tileN &&
             c.getSchedule() == schedule;
    });
  };
  // F = 384: 192- and 128-wide N tiles, cooperative and ping-pong.
  EXPECT_TRUE(has(128, 128, KernelSchedule::pingpong));
  EXPECT_TRUE(has(128, 192, KernelSchedule::pingpong));
  EXPECT_TRUE(has(256, 128, KernelSchedule::cooperative));
}

TEST_F(TuningCandidatesTest, FallbackConvolutionsGetSM80Candidates) {
  // C = 32 is under one 64-channel TMA im2col box (the halo mainloop takes
  // it: its candidates come too); a QRSCF filter is not K-major.
  ConvGeometry narrow = geometry({1, 16, 32, 32, 32}, {3, 3, 3, 32, 32});
  for (auto [g, layout] : {std::pair{narrow, FilterLayout::fqrsc},
                           std::pair{sm90Shapes()[0], FilterLayout::qrscf}}) {
    SmallVector<IGemmConfigAttr> configs = candidates(g, Target::sm90, layout);
    ASSERT_FALSE(configs.empty());
    int64_t halo = 0;
    for (IGemmConfigAttr config : configs) {
      if (config.getMainloop() == Mainloop::halo) {
        EXPECT_EQ(config.getKernel(), Target::sm90);
        ++halo;
        continue;
      }
      EXPECT_EQ(config.getKernel(), Target::sm80);
      EXPECT_LE(config.getTileM() / config.getWarpsM(), 64);
      EXPECT_LE(config.getTileN() / config.getWarpsN(), 64);
    }
    EXPECT_EQ(halo > 0, layout == FilterLayout::fqrsc);
  }
}

TEST_F(TuningCandidatesTest, QuantizedTileLoadsKeepWholeBlocks) {
  ConvGeometry g = geometry({1, 6, 16, 16, 64}, {3, 3, 3, 64, 64});
  for (Target target : {Target::cpu, Target::sm80})
    for (IGemmConfigAttr config :
         candidates(g, target, FilterLayout::qrscf, /*block=*/64))
      EXPECT_EQ(config.getTileK() % 64, 0) << formatIGemmConfig(config);
}

TEST_F(TuningCandidatesTest, SM90QuantizesInItsTilesBlocksInsideAStep) {
  auto tileCandidates = [&](const ConvGeometry &g, int64_t block) {
    return tuningCandidates(
        &context, problem(g, FilterLayout::fqrsc, block, true), Target::sm90);
  };
  // Blocks of 16 and 64 dividing C: the sm90 kernel's candidates, each a
  // valid plan with the quantization.
  ConvGeometry c64 = geometry({1, 6, 16, 16, 64}, {3, 3, 3, 64, 64});
  ConvGeometry c128 = geometry({1, 6, 16, 16, 128}, {3, 3, 3, 128, 128});
  for (auto [g, block] :
       {std::pair{c64, int64_t(16)}, std::pair{c128, int64_t(64)}}) {
    SmallVector<IGemmConfigAttr> configs = tileCandidates(g, block);
    ASSERT_FALSE(configs.empty());
    for (IGemmConfigAttr config : configs) {
      EXPECT_EQ(config.getKernel(), Target::sm90) << formatIGemmConfig(config);
      sm90::SM90KernelPlan plan;
      EXPECT_FALSE(sm90::SM90KernelPlan::build(
          g, config.getTileM(), config.getTileN(), config.getTileK(),
          config.getStages(), config.getWarpsM(), config.getWarpsN(),
          config.getKOrder(), config.getSplitK(), /*epilogueAlignment=*/16,
          plan, config.getSchedule(), false, block))
          << formatIGemmConfig(config);
    }
  }
  // Blocks that straddle taps (C = 72, blocks of 16) or span two K steps
  // (blocks of 128): the sm80 kernel's (for blocks of 128, those whose
  // tile_k holds whole blocks: none of the sm80 candidates today).
  ConvGeometry c72 = geometry({1, 6, 16, 16, 72}, {3, 3, 3, 72, 64});
  EXPECT_FALSE(tileCandidates(c72, 16).empty());
  for (auto [g, block] :
       {std::pair{c72, int64_t(16)}, std::pair{c128, int64_t(128)}}) {
    SmallVector<IGemmConfigAttr> configs = tileCandidates(g, block);
    for (IGemmConfigAttr config : configs) {
      EXPECT_EQ(config.getKernel(), Target::sm80) << formatIGemmConfig(config);
      EXPECT_EQ(config.getTileK() % block, 0) << formatIGemmConfig(config);
    }
  }
}

TEST_F(TuningCandidatesTest, CpuCandidatesFitTheProblem) {
  ConvGeometry tiny =
      geometry({1, 3, 3, 3, 4}, {1, 1, 1, 4, 2}, {1, 1, 1}, {0, 0, 0, 0, 0, 0});
  for (IGemmConfigAttr config : candidates(tiny, Target::cpu)) {
    EXPECT_LE(config.getTileN(), tiny.gemmN());
    EXPECT_LE(config.getTileK(), tiny.gemmK());
  }
}

TEST_F(TuningCandidatesTest, ConfigTextRoundTrips) {
  for (const ConvGeometry &g : sm90Shapes())
    for (IGemmConfigAttr config : candidates(g, Target::sm90)) {
      std::string text = formatIGemmConfig(config), error;
      EXPECT_EQ(parseIGemmConfig(&context, text, error), config)
          << text << ": " << error;
      EXPECT_EQ(text.find(' '), std::string::npos) << text;
    }
  // Defaulted parameters are left out.
  IGemmConfigAttr plain = IGemmConfigAttr::get(
      &context, 64, 32, 16, 1, 1, 1, KOrder::taps_outer, 1, Target::cpu,
      KernelSchedule::cooperative, 1, Mainloop::im2col);
  EXPECT_EQ(formatIGemmConfig(plain), "tile_m=64,tile_n=32,tile_k=16");
}

} // namespace
