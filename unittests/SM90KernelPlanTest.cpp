//===- SM90KernelPlanTest.cpp - sm90 plan and descriptors, without a GPU --===//
//
// The wgmma shared-memory descriptor against the PTX ISA's encoding
// (hand-assembled words), the shared-memory layout of the TMA ring, the
// staging tile and the barriers (aligned, disjoint, within the block's
// limit, column chunks only when needed), the K steps, the NVFP4 in-tile
// quantization's share of the rows and its swizzled block addresses, and the
// TMA im2col corners and limits of ConvGeometry.
//
//===----------------------------------------------------------------------===//

#include "conv3d/Target/SM90/SM90KernelPlan.h"
#include "conv3d/Target/SM80/SM80KernelPlan.h"

#include <gtest/gtest.h>

#include <set>

using namespace mlir::conv3d;
using namespace mlir::conv3d::sm90;

namespace {

ConvGeometry wanMid() {
  return ConvGeometry::fromShapes({1, 23, 60, 104, 384}, {3, 3, 3, 384, 384},
                                  FilterLayout::qrscf, {1, 1, 1}, {1, 1, 1},
                                  {0, 0, 1, 1, 1, 1});
}

TEST(SM90Descriptor, MatchesThePtxEncoding) {
  // Start address 0x400 >> 4 = 0x40 in bits 0-13, leading byte offset 16 >>
  // 4 = 1 in bits 16-29, stride byte offset 1024 >> 4 = 64 in bits 32-45,
  // layout 1 (128-byte swizzle) in bits 62-63.
  EXPECT_EQ(SM90KernelPlan::sharedMemoryDescriptor(0x400),
            0x4000004000010040ull);
  // The address field is 14 bits of address >> 4 (shared windows < 256 KiB);
  // a k16 slice 32 bytes further adds 2.
  EXPECT_EQ(SM90KernelPlan::sharedMemoryDescriptor(0x400 + 32) -
                SM90KernelPlan::sharedMemoryDescriptor(0x400),
            2u);
  EXPECT_EQ(SM90KernelPlan::sharedMemoryDescriptor(0x3FFF0) & 0x3FFF, 0x3FFFu);
  EXPECT_EQ(SM90KernelPlan::descriptorTemplate() & 0x3FFF, 0u);
}

TEST(SM90Plan, WanMidLayout) {
  SM90KernelPlan plan;
  ASSERT_EQ(SM90KernelPlan::build(wanMid(), 128, 192, 64, 4, 8, 1,
                                  KOrder::taps_outer, 1, 8, plan),
            std::nullopt);
  EXPECT_EQ(plan.consumerGroups, 2);
  EXPECT_EQ(plan.mmaTilesM, 1);
  EXPECT_EQ(plan.threads, 384);
  EXPECT_EQ(plan.channelBlocks, 6);
  EXPECT_EQ(plan.taps, 27);
  EXPECT_EQ(plan.stepsPerSlice, 9 * 6);
  EXPECT_EQ(plan.totalSteps, 27 * 6);
  EXPECT_EQ(plan.aStageBytes, 128 * 128);
  EXPECT_EQ(plan.bStageBytes, 192 * 128);
  EXPECT_EQ(plan.stepBytes, plan.aStageBytes + plan.bStageBytes);
  // Every stage starts on a 1024-byte swizzle atom.
  EXPECT_EQ(plan.aStageBytes % 1024, 0);
  EXPECT_EQ(plan.bStageBytes % 1024, 0);
  // Ring, staging and barriers are disjoint and fit with the alignment
  // slack.
  EXPECT_EQ(plan.stagingOffset, plan.pipelineBytes);
  EXPECT_EQ(plan.barrierOffset, plan.stagingOffset + plan.stagingBytes);
  EXPECT_EQ(plan.sharedBytes, plan.barrierOffset + 2 * 4 * 8 + kAlignmentSlack);
  EXPECT_LE(plan.sharedBytes, kMaxSharedBytes);
  EXPECT_EQ(plan.outputVector, 8);
}

TEST(SM90Plan, WideTilesStageInColumnChunks) {
  SM90KernelPlan plan;
  // 128 x 192 with 4 stages: whole rows of staging do not fit beside the
  // ring, halves do.
  ASSERT_EQ(SM90KernelPlan::build(wanMid(), 128, 192, 64, 4, 8, 1,
                                  KOrder::taps_outer, 1, 8, plan),
            std::nullopt);
  EXPECT_EQ(plan.epilogueChunks, 2);
  EXPECT_EQ(plan.stagingStride, 96 + 4);
  // With 2 stages whole rows fit.
  ASSERT_EQ(SM90KernelPlan::build(wanMid(), 128, 192, 64, 2, 8, 1,
                                  KOrder::taps_outer, 1, 8, plan),
            std::nullopt);
  EXPECT_EQ(plan.epilogueChunks, 1);
  EXPECT_EQ(plan.stagingStride, 192 + 4);
}

TEST(SM90Plan, TwoWgmmasPerWarpgroupFor256Rows) {
  SM90KernelPlan plan;
  ASSERT_EQ(SM90KernelPlan::build(wanMid(), 256, 96, 64, 3, 8, 1,
                                  KOrder::taps_outer, 1, 8, plan),
            std::nullopt);
  EXPECT_EQ(plan.consumerGroups, 2);
  EXPECT_EQ(plan.mmaTilesM, 2);
  ASSERT_EQ(SM90KernelPlan::build(wanMid(), 64, 96, 64, 3, 4, 1,
                                  KOrder::taps_outer, 1, 8, plan),
            std::nullopt);
  EXPECT_EQ(plan.consumerGroups, 1);
  EXPECT_EQ(plan.threads, 256);
}

TEST(SM90Plan, TmaStoreStagesWholeBoxesInSixteenBits) {
  SM90KernelPlan plan;
  // 128 x 192: three 64-column boxes of 128 rows x 128 bytes (49152 B)
  // after the 4-stage ring, 1024-aligned, barriers after them.
  ASSERT_EQ(SM90KernelPlan::build(wanMid(), 128, 192, 64, 4, 8, 1,
                                  KOrder::taps_outer, 1, 8, plan,
                                  KernelSchedule::cooperative,
                                  /*outputTakesTmaStore=*/true),
            std::nullopt);
  EXPECT_TRUE(plan.tmaStore);
  EXPECT_EQ(plan.epilogueChunks, 3);
  EXPECT_EQ(plan.stagingBytes, 128 * 192 * 2);
  EXPECT_EQ(plan.stagingOffset, 4 * (128 + 192) * 128);
  EXPECT_EQ(plan.stagingOffset % 1024, 0);
  EXPECT_EQ(plan.barrierOffset, plan.stagingOffset + plan.stagingBytes);
  // Ping-pong: one staging tile per consumer warpgroup.
  ASSERT_EQ(SM90KernelPlan::build(wanMid(), 128, 128, 64, 3, 4, 1,
                                  KOrder::taps_outer, 1, 8, plan,
                                  KernelSchedule::pingpong, true),
            std::nullopt);
  EXPECT_TRUE(plan.tmaStore);
  EXPECT_EQ(plan.barrierOffset, plan.stagingOffset + 2 * 128 * 128 * 2);
  EXPECT_EQ(plan.storeBoxColumns, 64);
  // 96 columns: three 32-column boxes (64-byte swizzle), none ragged.
  ASSERT_EQ(SM90KernelPlan::build(wanMid(), 256, 96, 64, 3, 8, 1,
                                  KOrder::taps_outer, 1, 8, plan,
                                  KernelSchedule::cooperative, true),
            std::nullopt);
  EXPECT_TRUE(plan.tmaStore);
  EXPECT_EQ(plan.storeBoxColumns, 32);
  EXPECT_EQ(plan.epilogueChunks, 3);
  EXPECT_EQ(plan.stagingBytes, 256 * 96 * 2);
  // 40 columns would need a ragged box, which would overwrite the next
  // tile's columns; split-K adds partial sums: both keep the staged f32
  // epilogue.
  ASSERT_EQ(SM90KernelPlan::build(wanMid(), 128, 40, 64, 4, 8, 1,
                                  KOrder::taps_outer, 1, 8, plan,
                                  KernelSchedule::cooperative, true),
            std::nullopt);
  EXPECT_FALSE(plan.tmaStore);
  ASSERT_EQ(SM90KernelPlan::build(wanMid(), 128, 128, 64, 4, 8, 1,
                                  KOrder::taps_outer, 2, 8, plan,
                                  KernelSchedule::cooperative, true),
            std::nullopt);
  EXPECT_FALSE(plan.tmaStore);
  // 256 x 256 with 2 stages: the whole 16-bit tile (131072 B) does not fit
  // beside the ring; the f32 staging in column quarters does.
  ASSERT_EQ(SM90KernelPlan::build(wanMid(), 256, 256, 64, 2, 8, 1,
                                  KOrder::taps_outer, 1, 8, plan,
                                  KernelSchedule::cooperative, true),
            std::nullopt);
  EXPECT_FALSE(plan.tmaStore);
  EXPECT_EQ(plan.epilogueChunks, 4);
}

TEST(SM90Plan, NamesWhatItRefuses) {
  SM90KernelPlan plan;
  auto refuse = [&](int64_t tileM, int64_t tileN, int64_t tileK, int64_t stages,
                    int64_t warpsM, int64_t warpsN, KOrder order,
                    int64_t splitK) {
    std::optional<std::string> message =
        SM90KernelPlan::build(wanMid(), tileM, tileN, tileK, stages, warpsM,
                              warpsN, order, splitK, 8, plan);
    return message.value_or("<accepted>");
  };
  EXPECT_NE(refuse(128, 128, 32, 4, 8, 1, KOrder::taps_outer, 1)
                .find("tile_k must be 64"),
            std::string::npos);
  EXPECT_NE(refuse(128, 128, 64, 4, 4, 2, KOrder::taps_outer, 1)
                .find("warp layout must be 4x1 or 8x1"),
            std::string::npos);
  EXPECT_NE(refuse(64, 128, 64, 4, 8, 1, KOrder::taps_outer, 1)
                .find("tile_m = 64 must be a multiple of 128"),
            std::string::npos);
  EXPECT_NE(
      refuse(128, 100, 64, 4, 8, 1, KOrder::taps_outer, 1).find("tile_n = 100"),
      std::string::npos);
  EXPECT_NE(refuse(128, 128, 64, 1, 8, 1, KOrder::taps_outer, 1)
                .find("at least 2 stages"),
            std::string::npos);
  EXPECT_NE(refuse(128, 128, 64, 4, 8, 1, KOrder::qslice_outer, 2)
                .find("split_k > 1 needs k_order = taps_outer"),
            std::string::npos);
  EXPECT_NE(refuse(256, 256, 64, 6, 8, 1, KOrder::taps_outer, 1)
                .find("bytes of shared memory"),
            std::string::npos);
}

TEST(SM90Plan, TileQuantizationShares) {
  struct Case {
    int64_t tileM, warpsM;
    KernelSchedule schedule;
    int64_t blockSize, rows, perThread;
  };
  // Cooperative: a warpgroup quantizes its tile_m / 2 rows; ping-pong: the
  // whole tile. 64 / blockSize blocks a row, over 128 threads.
  for (Case c : {Case{128, 8, KernelSchedule::cooperative, 16, 64, 2},
                 Case{256, 8, KernelSchedule::cooperative, 16, 128, 4},
                 Case{128, 4, KernelSchedule::pingpong, 32, 128, 2},
                 Case{64, 4, KernelSchedule::cooperative, 32, 64, 1},
                 Case{128, 8, KernelSchedule::cooperative, 64, 64, 1}}) {
    SM90KernelPlan plan;
    ASSERT_EQ(SM90KernelPlan::build(wanMid(), c.tileM, 128, 64, 3, c.warpsM, 1,
                                    KOrder::taps_outer, 1, 8, plan, c.schedule,
                                    false, c.blockSize),
              std::nullopt);
    EXPECT_EQ(plan.quantBlockSize, c.blockSize);
    EXPECT_EQ(plan.quantRows, c.rows);
    EXPECT_EQ(plan.quantBlocksPerThread, c.perThread);
    EXPECT_EQ(plan.quantBlocks(), c.rows * 64 / c.blockSize);
  }
  SM90KernelPlan plain;
  ASSERT_EQ(SM90KernelPlan::build(wanMid(), 128, 128, 64, 3, 8, 1,
                                  KOrder::taps_outer, 1, 8, plain),
            std::nullopt);
  EXPECT_FALSE(plain.quantBlockSize.has_value());
}

TEST(SM90Plan, TileQuantizationRefusesBlocksAcrossSteps) {
  for (int64_t blockSize : {128, 256, 24}) {
    SM90KernelPlan plan;
    std::optional<std::string> problem = SM90KernelPlan::build(
        wanMid(), 128, 128, 64, 3, 8, 1, KOrder::taps_outer, 1, 8, plan,
        KernelSchedule::cooperative, false, blockSize);
    ASSERT_TRUE(problem.has_value()) << blockSize;
    EXPECT_NE(problem->find("do not tile a 64-channel K step"),
              std::string::npos);
  }
}

/// The in-place quantization reads every 16-byte chunk of the warpgroup's
/// rows exactly once, a block's chunks in its own row at the TMA 128-byte
/// swizzle of its logical chunks, and each 8-thread wavefront of a 16-byte
/// access (threads 8w .. 8w+7, same chunk index v) hits 8 distinct
/// 16-byte bank groups.
TEST(SM90Plan, TileQuantizationAddressesAreSwizzledAndConflictFree) {
  sm80::ScalarLayoutMath math;
  for (int64_t blockSize : {16, 32, 64}) {
    for (int64_t tileM : {128, 256}) {
      SM90KernelPlan plan;
      ASSERT_EQ(SM90KernelPlan::build(
                    wanMid(), tileM, 64, 64, 3, 8, 1, KOrder::taps_outer, 1, 8,
                    plan, KernelSchedule::cooperative, false, blockSize),
                std::nullopt);
      int64_t chunksPerBlock = blockSize / 8;
      std::set<int64_t> seen;
      for (int64_t id = 0; id < plan.quantBlocks(); ++id) {
        int64_t row = id / (64 / blockSize);
        for (int64_t v = 0; v < chunksPerBlock; ++v) {
          int64_t offset = plan.quantChunkOffset(math, id, v);
          EXPECT_EQ(offset % 16, 0);
          EXPECT_EQ(offset / kRowBytes, row);
          int64_t logical = (id % (64 / blockSize)) * chunksPerBlock + v;
          EXPECT_EQ((offset % kRowBytes) / 16, logical ^ (row % 8));
          EXPECT_TRUE(seen.insert(offset).second);
        }
      }
      EXPECT_EQ(int64_t(seen.size()), plan.quantRows * kRowBytes / 16);
      // Wavefronts of the threads' i-th round.
      for (int64_t i = 0; i < plan.quantBlocksPerThread; ++i)
        for (int64_t w = 0; w < kWarpgroupThreads; w += 8)
          for (int64_t v = 0; v < chunksPerBlock; ++v) {
            std::set<int64_t> banks;
            int64_t active = 0;
            for (int64_t t = w; t < w + 8; ++t) {
              int64_t id = t + i * kWarpgroupThreads;
              if (id >= plan.quantBlocks())
                continue;
              ++active;
              banks.insert((plan.quantChunkOffset(math, id, v) / 16) % 8);
            }
            EXPECT_EQ(int64_t(banks.size()), active)
                << "block " << blockSize << " round " << i << " threads " << w;
          }
    }
  }
}

TEST(ConvGeometryTma, CornersOfCausalAndSymmetricPadding) {
  // Causal depth padding 2, symmetric 1 in H and W, 3x3x3: lower corners
  // -pad_lo, upper corners pad_hi - (k - 1) * dil (TOOLCHAIN.md).
  ConvGeometry g = ConvGeometry::fromShapes(
      {1, 10, 32, 32, 64}, {3, 3, 3, 64, 64}, FilterLayout::qrscf, {1, 1, 1},
      {1, 1, 1}, {2, 0, 1, 1, 1, 1});
  EXPECT_EQ(g.tmaIm2colLowerCorner(), (std::array<int64_t, 3>{-2, -1, -1}));
  EXPECT_EQ(g.tmaIm2colUpperCorner(), (std::array<int64_t, 3>{-2, -1, -1}));
  EXPECT_EQ(g.tmaIm2colProblem(2), std::nullopt);
  // Dilation 8 in W: upper corner 1 - 16 = -15, still inside.
  g.dilations = {1, 1, 8};
  EXPECT_EQ(g.tmaIm2colUpperCorner()[2], -15);
  EXPECT_EQ(g.tmaIm2colProblem(2), std::nullopt);
}

TEST(ConvGeometryTma, NamesEachLimit) {
  auto problem = [](ConvGeometry g) {
    return g.tmaIm2colProblem(2).value_or("<accepted>");
  };
  ConvGeometry base = ConvGeometry::fromShapes(
      {1, 40, 40, 40, 64}, {3, 3, 3, 64, 64}, FilterLayout::qrscf, {1, 1, 1},
      {1, 1, 1}, {1, 1, 1, 1, 1, 1});
  ConvGeometry g = base;
  g.padLow[1] = 20; // lower corner -20
  EXPECT_NE(problem(g).find("height padding"), std::string::npos);
  g = base;
  g.dilations[0] = 16; // (3 - 1) * 16 = 32 > 31; corner 1 - 32 = -31 too
  EXPECT_NE(problem(g).find("outside [-16, 15]"), std::string::npos);
  g = base;
  g.window[2] = 1;
  g.dilations[2] = 1;
  g.strides[2] = 9;
  EXPECT_NE(problem(g).find("element stride limit of 8"), std::string::npos);
  g = base;
  g.channels = 60; // 120 bytes per pixel
  EXPECT_NE(problem(g).find("multiple of 16 bytes"), std::string::npos);
}

TEST(SM90Plan, ClusterOfTwo) {
  // The layout is the single-block one: each block's stage holds the whole
  // filter tile (its half loaded, the peer's multicast) and the full barrier
  // expects it whole; only the cluster size changes.
  SM90KernelPlan single, pair;
  ASSERT_EQ(SM90KernelPlan::build(wanMid(), 128, 96, 64, 4, 8, 1,
                                  KOrder::taps_outer, 1, 8, single),
            std::nullopt);
  ASSERT_EQ(SM90KernelPlan::build(wanMid(), 128, 96, 64, 4, 8, 1,
                                  KOrder::taps_outer, 1, 8, pair,
                                  KernelSchedule::cooperative,
                                  /*outputTakesTmaStore=*/false,
                                  /*quantBlockSize=*/std::nullopt,
                                  /*clusterM=*/2),
            std::nullopt);
  EXPECT_EQ(single.clusterM, 1);
  EXPECT_EQ(pair.clusterM, 2);
  EXPECT_EQ(pair.stepBytes, single.stepBytes);
  EXPECT_EQ(pair.sharedBytes, single.sharedBytes);
  // Each half of the filter stage starts on a 1024-byte swizzle atom.
  EXPECT_EQ(pair.bStageBytes / 2 % 1024, 0);
  // A stage is released by the consumer warps of both blocks.
  EXPECT_EQ(pair.warpsPerTile, single.warpsPerTile);

  auto problem = [](int64_t tileN, KOrder order, int64_t clusterM) {
    SM90KernelPlan plan;
    return SM90KernelPlan::build(wanMid(), 128, tileN, 64, 4, 8, 1, order, 1, 8,
                                 plan, KernelSchedule::cooperative, false,
                                 /*quantBlockSize=*/std::nullopt, clusterM);
  };
  EXPECT_NE(problem(40, KOrder::taps_outer, 2), std::nullopt);
  EXPECT_EQ(problem(40, KOrder::taps_outer, 1), std::nullopt);
  EXPECT_NE(problem(64, KOrder::qslice_outer, 2), std::nullopt);
  EXPECT_NE(problem(64, KOrder::taps_outer, 3), std::nullopt);
}

} // namespace
