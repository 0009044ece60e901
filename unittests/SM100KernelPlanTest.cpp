//===- SM100KernelPlanTest.cpp - sm100 plan and descriptors, without a GPU ===//
//
// The tcgen05 shared-memory and instruction descriptors against words
// hand-assembled from the PTX ISA's tables (tcgen05 "Shared memory
// descriptor" and "Instruction descriptor", .kind::f16), the valid MMA
// shapes, and the plan: TMEM columns and double buffering, the shared-memory
// layout of the ring, staging tile, barriers and TMEM address slot
// (aligned, disjoint, within the block's limit), the K steps, and the
// refusals.
//
//===----------------------------------------------------------------------===//

#include "conv3d/Target/SM100/SM100KernelPlan.h"

#include <gtest/gtest.h>

using namespace mlir::conv3d;
using namespace mlir::conv3d::sm100;

namespace {

ConvGeometry wanMid() {
  return ConvGeometry::fromShapes({1, 23, 60, 104, 384}, {384, 3, 3, 3, 384},
                                  FilterLayout::fqrsc, {1, 1, 1}, {1, 1, 1},
                                  {0, 0, 1, 1, 1, 1});
}

TEST(Tcgen05SmemDescriptor, MatchesThePtxEncoding) {
  // K-major, 128-byte swizzle, at 0x400: start address 0x400 >> 4 = 0x40 in
  // bits 0-13; leading byte offset 16 >> 4 = 1 in bits 16-29 (unused by
  // swizzled K-major layouts); stride byte offset 1024 >> 4 = 0x40 in bits
  // 32-45; the fixed 0b001 in bits 46-48 (bit 46); base offset 0 (49-51);
  // relative leading offset (bit 52 = 0); swizzle 2 (128 bytes) in bits
  // 61-63 (bit 62).
  EXPECT_EQ(SM100KernelPlan::sharedMemoryDescriptor(0x400),
            0x4000404000010040ull);
  // wgmma's encoding of the same tile (layout 1 in bits 62-63 sets the same
  // bit 62) lacks the fixed bit 46: the two words differ there only.
  EXPECT_EQ(SM100KernelPlan::sharedMemoryDescriptor(0x400) ^
                0x4000004000010040ull,
            uint64_t(1) << 46);
  // A k16 slice is 32 bytes further: +2 in the address field.
  EXPECT_EQ(SM100KernelPlan::sharedMemoryDescriptor(0x400 + 32) -
                SM100KernelPlan::sharedMemoryDescriptor(0x400),
            2u);
  EXPECT_EQ(SM100KernelPlan::descriptorTemplate() & 0x3FFF, 0u);
  EXPECT_EQ(SM100KernelPlan::sharedMemoryDescriptor(0x3FFF0) & 0x3FFF, 0x3FFFu);

  // Every other field in its place.
  Tcgen05SmemDescriptor d;
  d.address = 0;
  d.leadingByteOffset = 0;
  d.strideByteOffset = 0;
  d.swizzle = Tcgen05Swizzle::None;
  EXPECT_EQ(d.encode(), uint64_t(1) << 46);
  d.swizzle = Tcgen05Swizzle::Swizzle32B;
  EXPECT_EQ(d.encode(), (uint64_t(1) << 46) | (uint64_t(6) << 61));
  d.swizzle = Tcgen05Swizzle::Swizzle64B;
  EXPECT_EQ(d.encode(), (uint64_t(1) << 46) | (uint64_t(4) << 61));
  d.swizzle = Tcgen05Swizzle::None;
  d.baseOffset = 5;
  d.absoluteLeading = true;
  EXPECT_EQ(d.encode(),
            (uint64_t(1) << 46) | (uint64_t(5) << 49) | (uint64_t(1) << 52));
  d = Tcgen05SmemDescriptor();
  d.address = 0;
  d.leadingByteOffset = 0x3FFF0; // 14 bits of >> 4
  d.strideByteOffset = 0;
  d.swizzle = Tcgen05Swizzle::None;
  EXPECT_EQ(d.encode(), (uint64_t(0x3FFF) << 16) | (uint64_t(1) << 46));
}

TEST(Tcgen05InstrDescriptor, MatchesThePtxEncoding) {
  // bf16 A and B, f32 D, K-major A and B, M = 128, N = 256: D format 1 in
  // bits 4-5 (0x10), A format 1 in bits 7-9 (0x80), B format 1 in bits
  // 10-12 (0x400), N >> 3 = 32 in bits 17-22 (0x400000), M >> 4 = 8 in bits
  // 24-28 (0x8000000).
  Tcgen05InstrDescriptor bf16;
  EXPECT_EQ(bf16.encode(), 0x08400490u);
  // f16 operands, M = 128, N = 96: 0x10 | (12 << 17) | (8 << 24).
  Tcgen05InstrDescriptor f16{Tcgen05AccFormat::F32,
                             Tcgen05Format::F16,
                             Tcgen05Format::F16,
                             false,
                             false,
                             false,
                             false,
                             128,
                             96};
  EXPECT_EQ(f16.encode(), 0x08180010u);
  // Negation and MN-major bits 13-16; M = 256 (cta_group::2) is 16 << 24;
  // an f16 accumulator clears bits 4-5.
  Tcgen05InstrDescriptor flags{Tcgen05AccFormat::F16,
                               Tcgen05Format::F16,
                               Tcgen05Format::BF16,
                               true,
                               true,
                               true,
                               true,
                               256,
                               16};
  EXPECT_EQ(flags.encode(),
            (1u << 10) | (0xFu << 13) | (2u << 17) | (16u << 24));
  // The plan's descriptor is the bf16 one for its tile.
  SM100KernelPlan plan;
  ASSERT_EQ(SM100KernelPlan::build(wanMid(), 128, 192, 64, 4, 4, 1,
                                   KOrder::taps_outer, 1, 8, plan),
            std::nullopt);
  EXPECT_EQ(plan.instructionDescriptor(/*bf16=*/true),
            0x10u | 0x80u | 0x400u | (24u << 17) | (8u << 24));
  EXPECT_EQ(plan.instructionDescriptor(/*bf16=*/false),
            0x10u | (24u << 17) | (8u << 24));
}

TEST(Tcgen05InstrDescriptor, ValidShapes) {
  EXPECT_EQ(Tcgen05InstrDescriptor::shapeProblem(128, 256, 1), std::nullopt);
  EXPECT_EQ(Tcgen05InstrDescriptor::shapeProblem(128, 16, 1), std::nullopt);
  EXPECT_EQ(Tcgen05InstrDescriptor::shapeProblem(64, 8, 1), std::nullopt);
  EXPECT_EQ(Tcgen05InstrDescriptor::shapeProblem(256, 16, 2), std::nullopt);
  EXPECT_EQ(Tcgen05InstrDescriptor::shapeProblem(128, 32, 2), std::nullopt);
  EXPECT_NE(Tcgen05InstrDescriptor::shapeProblem(128, 24, 1), std::nullopt);
  EXPECT_NE(Tcgen05InstrDescriptor::shapeProblem(128, 272, 1), std::nullopt);
  EXPECT_NE(Tcgen05InstrDescriptor::shapeProblem(256, 128, 1), std::nullopt);
  EXPECT_NE(Tcgen05InstrDescriptor::shapeProblem(128, 48, 2), std::nullopt);
  EXPECT_NE(Tcgen05InstrDescriptor::shapeProblem(96, 64, 1), std::nullopt);
}

TEST(SM100Plan, WanMidLayout) {
  SM100KernelPlan plan;
  ASSERT_EQ(SM100KernelPlan::build(wanMid(), 128, 192, 64, 4, 4, 1,
                                   KOrder::taps_outer, 1, 8, plan),
            std::nullopt);
  EXPECT_EQ(kThreads, 192);
  EXPECT_EQ(plan.channelBlocks, 6);
  EXPECT_EQ(plan.taps, 27);
  EXPECT_EQ(plan.stepsPerSlice, 9 * 6);
  EXPECT_EQ(plan.totalSteps, 27 * 6);
  // Two accumulators of 192 columns: 384, allocated as 512.
  EXPECT_EQ(plan.accumulatorBuffers, 2);
  EXPECT_EQ(plan.tmemColumns, 512);
  EXPECT_EQ(plan.aStageBytes, 128 * 128);
  EXPECT_EQ(plan.bStageBytes, 192 * 128);
  EXPECT_EQ(plan.stepBytes, plan.aStageBytes + plan.bStageBytes);
  EXPECT_EQ(plan.aStageBytes % 1024, 0);
  EXPECT_EQ(plan.bStageBytes % 1024, 0);
  // Ring, staging, 2 x 4 stage barriers + 2 x 2 accumulator barriers, the
  // TMEM slot: disjoint, within the limit with the alignment slack.
  EXPECT_EQ(plan.stagingOffset, plan.pipelineBytes);
  EXPECT_EQ(plan.barrierOffset, plan.stagingOffset + plan.stagingBytes);
  EXPECT_EQ(plan.fullBarrierOffset(3), plan.barrierOffset + 24);
  EXPECT_EQ(plan.emptyBarrierOffset(0), plan.barrierOffset + 32);
  EXPECT_EQ(plan.accFullBarrierOffset(1), plan.barrierOffset + 72);
  EXPECT_EQ(plan.accEmptyBarrierOffset(1), plan.barrierOffset + 88);
  EXPECT_EQ(plan.tmemSlotOffset, plan.barrierOffset + 96);
  EXPECT_EQ(plan.sharedBytes, plan.tmemSlotOffset + 8 + kAlignmentSlack);
  EXPECT_LE(plan.sharedBytes, kMaxSharedBytes);
  EXPECT_EQ(plan.stagingBytes, 128 * plan.stagingStride * 4);
  EXPECT_EQ(plan.stagingStride, plan.chunkColumns + 4);
  EXPECT_EQ(plan.chunkColumns * plan.epilogueChunks, 192);
  EXPECT_EQ(plan.chunkColumns % plan.loadColumns, 0);
  EXPECT_EQ(plan.outputVector, 8);
}

TEST(SM100Plan, CtaPair) {
  // tile_m = 256: cta_group::2 over two CTAs. Each loads 128 rows of A and
  // half of B's 192 rows; the even CTA's full barrier expects both CTAs'
  // bytes; each stages its own 128 rows; the MMA is M = 256 (16 << 24).
  SM100KernelPlan plan;
  ASSERT_EQ(SM100KernelPlan::build(wanMid(), 256, 192, 64, 4, 4, 1,
                                   KOrder::taps_outer, 1, 8, plan),
            std::nullopt);
  EXPECT_EQ(plan.ctaGroup, 2);
  EXPECT_EQ(plan.aStageBytes, 128 * 128);
  EXPECT_EQ(plan.bStageBytes, 96 * 128);
  EXPECT_EQ(plan.bStageBytes % 1024, 0);
  EXPECT_EQ(plan.stepBytes, 2 * (128 + 96) * 128);
  EXPECT_EQ(plan.stagingBytes, 128 * plan.stagingStride * 4);
  EXPECT_EQ(plan.accumulatorBuffers, 2);
  EXPECT_EQ(plan.tmemColumns, 512);
  EXPECT_EQ(plan.instructionDescriptor(/*bf16=*/true),
            0x10u | 0x80u | 0x400u | (24u << 17) | (16u << 24));
  EXPECT_LE(plan.sharedBytes, kMaxSharedBytes);
  // cta_group::2 with M = 256 takes N in multiples of 16.
  EXPECT_NE(SM100KernelPlan::build(wanMid(), 256, 24, 64, 4, 4, 1,
                                   KOrder::taps_outer, 1, 8, plan)
                .value_or("")
                .find("N = 24 is not a tcgen05.mma shape for M = 256"),
            std::string::npos);
}

TEST(SM100Plan, TmemColumns) {
  SM100KernelPlan plan;
  auto build = [&](int64_t tileN) {
    return SM100KernelPlan::build(wanMid(), 128, tileN, 64, 2, 4, 1,
                                  KOrder::taps_outer, 1, 8, plan);
  };
  // Powers of two of at least 32 columns, two buffers up to 256 columns.
  ASSERT_EQ(build(16), std::nullopt);
  EXPECT_EQ(plan.accumulatorBuffers, 2);
  EXPECT_EQ(plan.tmemColumns, 32);
  ASSERT_EQ(build(96), std::nullopt);
  EXPECT_EQ(plan.tmemColumns, 256);
  ASSERT_EQ(build(128), std::nullopt);
  EXPECT_EQ(plan.tmemColumns, 256);
  ASSERT_EQ(build(256), std::nullopt);
  EXPECT_EQ(plan.accumulatorBuffers, 2);
  EXPECT_EQ(plan.tmemColumns, 512);
}

TEST(SM100Plan, StagingChunksOnlyWhenNeeded) {
  SM100KernelPlan plan;
  // 2 stages of 128 x 128: whole rows of staging fit.
  ASSERT_EQ(SM100KernelPlan::build(wanMid(), 128, 128, 64, 2, 4, 1,
                                   KOrder::taps_outer, 1, 8, plan),
            std::nullopt);
  EXPECT_EQ(plan.epilogueChunks, 1);
  EXPECT_EQ(plan.loadColumns, 32);
  // 4 stages (192 KiB of ring) leave room for 32-column chunks only.
  ASSERT_EQ(SM100KernelPlan::build(wanMid(), 128, 256, 64, 4, 4, 1,
                                   KOrder::taps_outer, 1, 8, plan),
            std::nullopt);
  EXPECT_EQ(plan.epilogueChunks, 8);
  EXPECT_EQ(plan.chunkColumns, 32);
  EXPECT_LE(plan.sharedBytes, kMaxSharedBytes);
  // The most stages that fit, what the heuristic asks for.
  EXPECT_EQ(SM100KernelPlan::maxStages(128, 256, 6), 4);
  EXPECT_EQ(SM100KernelPlan::maxStages(128, 64, 6), 6);
  EXPECT_EQ(SM100KernelPlan::maxStages(128, 192, 6), 5);
  // A 48-column tile splits no further than one chunk (24 would not be a
  // multiple of 16) and loads 16 columns at a time.
  ASSERT_EQ(SM100KernelPlan::build(wanMid(), 128, 48, 64, 6, 4, 1,
                                   KOrder::taps_outer, 1, 8, plan),
            std::nullopt);
  EXPECT_EQ(plan.loadColumns, 16);
}

TEST(SM100Plan, Refusals) {
  SM100KernelPlan plan;
  auto build = [&](int64_t tileM, int64_t tileN, int64_t tileK, int64_t stages,
                   int64_t warpsM, int64_t warpsN,
                   KOrder kOrder = KOrder::taps_outer, int64_t splitK = 1) {
    return SM100KernelPlan::build(wanMid(), tileM, tileN, tileK, stages, warpsM,
                                  warpsN, kOrder, splitK, 8, plan)
        .value_or("");
  };
  EXPECT_NE(build(128, 128, 32, 4, 4, 1).find("tile_k must be 64"),
            std::string::npos);
  EXPECT_NE(build(128, 128, 64, 4, 8, 1).find("warp layout must be 4x1"),
            std::string::npos);
  EXPECT_NE(build(64, 128, 64, 4, 4, 1).find("tile_m must be 128"),
            std::string::npos);
  EXPECT_NE(build(384, 128, 64, 4, 4, 1).find("or 256 (cta_group::2"),
            std::string::npos);
  EXPECT_NE(build(128, 24, 64, 4, 4, 1).find("tile_n = 24: N = 24"),
            std::string::npos);
  EXPECT_NE(build(128, 128, 64, 1, 4, 1).find("at least 2 stages"),
            std::string::npos);
  EXPECT_NE(build(128, 128, 64, 4, 4, 1, KOrder::qslice_outer, 2)
                .find("split_k > 1 needs k_order = taps_outer"),
            std::string::npos);
  EXPECT_NE(build(128, 256, 64, 5, 4, 1).find("bytes of shared memory"),
            std::string::npos);
}

} // namespace
