//===- SM90HaloPlanTest.cpp - the sm90 halo mainloop's plan ---------------===//
//
// SM90KernelPlan for mainloop = halo, without a GPU: the patch geometry
// (columns rounded to whole swizzle atoms, rows of the window's reach), the
// channel blocks (32 where C is an odd multiple of 32), the two rings'
// disjoint, aligned shared memory, the transaction bytes, the refusal of a
// single patch stage (which would deadlock) and the 64-byte-swizzle
// descriptor bits.
//
//===----------------------------------------------------------------------===//

#include "conv3d/Target/SM90/SM90KernelPlan.h"

#include <gtest/gtest.h>

using namespace mlir::conv3d;
using namespace mlir::conv3d::sm90;

namespace {

ConvGeometry geometry(int64_t c, int64_t f,
                      std::array<int64_t, 3> dilations = {1, 1, 1}) {
  return ConvGeometry::fromShapes({1, 23, 120, 208, c}, {3, 3, 3, c, f},
                                  FilterLayout::qrscf, {1, 1, 1}, dilations,
                                  {0, 0, 1, 1, 1, 1});
}

std::optional<std::string> buildHalo(const ConvGeometry &g, int64_t tileM,
                                     int64_t tileN, int64_t stages,
                                     SM90KernelPlan &plan,
                                     bool tmaStore = true) {
  return SM90KernelPlan::build(
      g, tileM, tileN, 64, stages, 8, 1, KOrder::taps_outer, 1, 8, plan,
      KernelSchedule::cooperative, tmaStore, std::nullopt, 1, Mainloop::halo);
}

TEST(SM90HaloPlan, NinetySixChannelsInBlocksOf32) {
  SM90KernelPlan plan;
  ASSERT_EQ(buildHalo(geometry(96, 96), 256, 96, 8, plan), std::nullopt);
  EXPECT_TRUE(plan.halo);
  EXPECT_EQ(plan.haloOutRows, 4);
  EXPECT_EQ(plan.haloChannels, 32);
  EXPECT_EQ(plan.operandRowBytes, 64);
  // 64 + 2 columns, rounded up to 8; 4 + 2 rows.
  EXPECT_EQ(plan.haloColumns, 72);
  EXPECT_EQ(plan.haloRows, 6);
  EXPECT_EQ(plan.channelBlocks, 3);
  EXPECT_EQ(plan.aSteps, 3 * 3);
  EXPECT_EQ(plan.tapsPerAStep, 9);
  EXPECT_EQ(plan.totalSteps, 81);
  EXPECT_EQ(plan.aStageBytes, 72 * 6 * 64);
  EXPECT_EQ(plan.bStageBytes, 96 * 64);
  // The full barrier of a filter stage expects one box of filter rows.
  EXPECT_EQ(plan.stepBytes, 96 * 64);
  EXPECT_EQ(plan.aStages, 3);
  EXPECT_TRUE(plan.tmaStore);
  EXPECT_EQ(plan.storeBoxColumns, 32);
}

TEST(SM90HaloPlan, RingsAndBarriersAreDisjointAndAligned) {
  for (auto [c, f, tileM, tileN] : {std::array<int64_t, 4>{96, 96, 256, 96},
                                    {64, 64, 256, 64},
                                    {128, 64, 128, 64},
                                    {32, 32, 256, 32}}) {
    SM90KernelPlan plan;
    ASSERT_EQ(buildHalo(geometry(c, f), tileM, tileN, 6, plan), std::nullopt)
        << c << " " << f;
    EXPECT_EQ(plan.aStageBytes % 1024, 0);
    EXPECT_EQ(plan.bStageBytes % 1024, 0);
    // A ring, B ring, staging, B barriers, A barriers.
    EXPECT_EQ(plan.pipelineBytes,
              plan.aStages * plan.aStageBytes + plan.stages * plan.bStageBytes);
    EXPECT_EQ(plan.stagingOffset, plan.pipelineBytes);
    EXPECT_GE(plan.barrierOffset, plan.stagingOffset + plan.stagingBytes);
    EXPECT_EQ(plan.aBarrierOffset, plan.barrierOffset + 16 * plan.stages);
    EXPECT_LE(plan.aBarrierOffset + 16 * plan.aStages + kAlignmentSlack,
              plan.sharedBytes);
    EXPECT_LE(plan.sharedBytes, kMaxSharedBytes);
    EXPECT_GE(plan.aStages, 2);
    EXPECT_EQ(plan.stagingBytes, tileM * tileN * 2);
  }
}

TEST(SM90HaloPlan, DilationWidensThePatch) {
  SM90KernelPlan plan;
  ASSERT_EQ(buildHalo(geometry(64, 64, {1, 2, 3}), 128, 64, 4, plan),
            std::nullopt);
  // 64 + 2 * 3 = 70 columns -> 72; 2 + 2 * 2 = 6 rows.
  EXPECT_EQ(plan.haloColumns, 72);
  EXPECT_EQ(plan.haloRows, 6);
  EXPECT_EQ(plan.haloChannels, 64);
  EXPECT_EQ(plan.operandRowBytes, 128);
}

TEST(SM90HaloPlan, RefusesOnePatchStage) {
  // Two 55296-byte patches do not fit beside 8 stages of 256 filter rows
  // and a 128 KiB staging tile; one would deadlock.
  SM90KernelPlan plan;
  std::optional<std::string> problem =
      buildHalo(geometry(64, 256), 256, 256, 8, plan);
  ASSERT_TRUE(problem.has_value());
  EXPECT_NE(problem->find("needs two patches"), std::string::npos) << *problem;
  // With 2 filter stages it fits.
  EXPECT_EQ(buildHalo(geometry(64, 256), 256, 128, 2, plan), std::nullopt);
  EXPECT_GE(plan.aStages, 2);
}

TEST(SM90HaloPlan, DeepestFilterRingBesideTwoPatches) {
  // 64-byte rows (C = 96): 8 stages fit beside three patches.
  EXPECT_EQ(SM90KernelPlan::deepestHaloStages(geometry(96, 96), 256, 96), 8);
  // 128-byte rows: two 55296-byte patches, a 48 KiB staging tile and 12 KiB
  // filter stages leave room for 5.
  EXPECT_EQ(SM90KernelPlan::deepestHaloStages(geometry(64, 96), 256, 96), 5);
  EXPECT_EQ(SM90KernelPlan::deepestHaloStages(geometry(64, 96), 256, 96, 4), 4);
  // A 128 KiB staging tile beside two patches leaves no room at all.
  EXPECT_EQ(SM90KernelPlan::deepestHaloStages(geometry(64, 256), 256, 256),
            std::nullopt);
  for (int64_t stages = 2; stages <= 8; ++stages) {
    std::optional<int64_t> deepest =
        SM90KernelPlan::deepestHaloStages(geometry(64, 96), 256, 96, stages);
    SM90KernelPlan plan;
    ASSERT_TRUE(deepest.has_value());
    EXPECT_EQ(buildHalo(geometry(64, 96), 256, 96, *deepest, plan),
              std::nullopt);
  }
}

TEST(SM90HaloPlan, StoreBoxColumns) {
  EXPECT_EQ(SM90KernelPlan::storeBoxColumnsFor(192), 64);
  EXPECT_EQ(SM90KernelPlan::storeBoxColumnsFor(96), 32);
  EXPECT_EQ(SM90KernelPlan::storeBoxColumnsFor(40), 0);
}

TEST(SM90HaloPlan, NamesWhatItRefuses) {
  SM90KernelPlan plan;
  auto strided = ConvGeometry::fromShapes(
      {1, 8, 64, 130, 64}, {3, 3, 3, 64, 64}, FilterLayout::qrscf, {1, 1, 2},
      {1, 1, 1}, {1, 1, 1, 1, 1, 1});
  EXPECT_NE(buildHalo(strided, 256, 64, 4, plan)->find("unit strides"),
            std::string::npos);
  EXPECT_NE(buildHalo(geometry(64, 64), 256, 64, 4, plan, /*tmaStore=*/false)
                ->find("stores its tiles with TMA"),
            std::string::npos);
  EXPECT_NE(buildHalo(geometry(64, 40), 256, 40, 4, plan)
                ->find("must be a multiple of 32"),
            std::string::npos);
  EXPECT_NE(SM90KernelPlan::build(geometry(64, 64), 256, 64, 64, 4, 8, 1,
                                  KOrder::taps_outer, 2, 8, plan,
                                  KernelSchedule::cooperative, true,
                                  std::nullopt, 1, Mainloop::halo)
                ->find("split_k = 1"),
            std::string::npos);
  EXPECT_NE(SM90KernelPlan::build(geometry(64, 64), 256, 64, 64, 4, 8, 1,
                                  KOrder::taps_outer, 1, 8, plan,
                                  KernelSchedule::cooperative, true, 16, 1,
                                  Mainloop::halo)
                ->find("does not quantize"),
            std::string::npos);
  auto wide = ConvGeometry::fromShapes({1, 8, 64, 400, 64}, {3, 3, 3, 64, 64},
                                       FilterLayout::qrscf, {1, 1, 1},
                                       {1, 1, 100}, {1, 1, 1, 1, 0, 0});
  EXPECT_NE(buildHalo(wide, 256, 64, 4, plan)->find("at most 256"),
            std::string::npos);
}

TEST(SM90HaloPlan, SixtyFourByteSwizzleDescriptor) {
  // Stride byte offset 8 rows x 64 B = 512 >> 4 = 32 in bits 32-45, layout
  // 2 (64-byte swizzle) in bits 62-63, leading byte offset 1.
  EXPECT_EQ(SM90KernelPlan::descriptorTemplate(64), 0x8000002000010000ull);
  EXPECT_EQ(SM90KernelPlan::descriptorTemplate(128), 0x4000004000010000ull);
}

} // namespace
