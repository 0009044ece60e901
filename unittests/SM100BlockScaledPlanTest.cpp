//===- SM100BlockScaledPlanTest.cpp - real NVFP4 sm100 plan ---------------===//
//
// The block-scaled descriptors against words assembled by hand from the PTX
// ISA's tables, and the plan's layouts and diagnostics. The data path is
// replayed in SM100ScheduleModelTest.cpp (SM100BlockScaledModel).
//
//===----------------------------------------------------------------------===//

#include "conv3d/Target/SM100/SM100BlockScaledPlan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <tuple>
#include <vector>

using namespace mlir::conv3d;
using namespace mlir::conv3d::sm100;
using namespace mlir::conv3d::sm100::nvfp4;

namespace {

ConvGeometry geometry(int64_t c, int64_t f) {
  ConvGeometry g;
  g.batch = 1;
  g.inputSize = {4, 8, 8};
  g.channels = c;
  g.window = {3, 3, 3};
  g.filters = f;
  g.padLow = g.padHigh = {1, 1, 1};
  return g;
}

TEST(SM100BlockScaledPlan, InstructionDescriptorBits) {
  // .kind::mxf4nvf4, M = 128, N = 256: A E2M1 = 1 at bits 7-9 (0x80), B
  // E2M1 = 1 at bits 10-11 (0x400), N >> 3 = 32 at 17-22 (0x400000), UE4M3
  // = 0 at bit 23, M >> 4 = 8 at 24-28 (0x08000000); no D format (bits 4-5
  // are B's scale-factor ID).
  Tcgen05BlockScaledInstrDescriptor d;
  EXPECT_EQ(d.encode(), 0x08400480u);
  // The dense kind::f16 word of the same shape has the f32 D format at bit 4.
  Tcgen05InstrDescriptor dense;
  EXPECT_EQ(dense.encode(), 0x08400490u);
  d.bScaleId = 1;
  d.aScaleId = 2;
  EXPECT_EQ(d.encode(), 0x08400480u | 0x10u | 0x40000000u);
  d = {};
  d.scaleFormat = Tcgen05ScaleFormat::UE8M0;
  d.n = 64;
  EXPECT_EQ(d.encode(), 0x80u | 0x400u | (8u << 17) | (1u << 23) | (8u << 24));
}

TEST(SM100BlockScaledPlan, ScaleAtomDescriptor) {
  // No swizzle (bits 61-63 = 0), bits 46-48 = 0b001, 8-row core matrices of
  // 16-byte rows: stride byte offset 128 (>> 4 = 8 at bits 32-45).
  uint64_t d = BlockScaledPlan::scaleAtomDescriptor(0x4A00);
  EXPECT_EQ(d & 0x3FFF, 0x4A0u);
  EXPECT_EQ((d >> 32) & 0x3FFF, 8u);
  EXPECT_EQ((d >> 46) & 7, 1u);
  EXPECT_EQ(d >> 61, 0u);
}

TEST(SM100BlockScaledPlan, ScaleAtomIsAPermutation) {
  // Every (row, K block) of a 128-row atom has its own byte, and row m's
  // scales land in TMEM lane m (the lane its MMA row reads).
  std::set<int64_t> seen;
  for (int64_t row = 0; row < kAtomRows; ++row) {
    for (int64_t block = 0; block < kScalesPerMma; ++block)
      EXPECT_TRUE(seen.insert(scaleAtomOffset(row, block)).second);
    int64_t atomRow = scaleAtomOffset(row, 0) / kAtomRowBytes;
    auto [lane, column] = scaleTmemWord(100, row);
    EXPECT_EQ(lane % kAtomLanes, atomRow);
    EXPECT_EQ(lane, row);
    EXPECT_EQ(column, 100 + (scaleAtomOffset(row, 0) % kAtomRowBytes) / 4);
  }
  EXPECT_EQ(int64_t(seen.size()), kAtomBytes);
  EXPECT_EQ(*seen.rbegin(), kAtomBytes - 1);
  // Rows past 128 (B of a 256-wide tile): the second atom, 4 columns on.
  EXPECT_EQ(scaleTmemWord(100, 128 + 37),
            std::make_pair(int64_t(37), int64_t(101 + 4)));
}

// The natural scale rows of a tile (16 bytes a row, as a TMA box lands
// them) permute word for word into the scale area's atoms: distinct,
// aligned, inside the area, each word where the atoms keep its 4 scales.
TEST(SM100BlockScaledPlan, ScaleWordsPermuteIntoTheAtoms) {
  for (int64_t rows : {128, 96, 16, 256, 160}) {
    int64_t atoms = (rows + kAtomRows - 1) / kAtomRows;
    int64_t areaBytes = kMmasPerStep * atoms * kAtomBytes;
    ASSERT_LE(16 * rows, areaBytes) << "the natural rows fit the area";
    std::set<int64_t> offsets;
    for (int64_t row = 0; row < rows; ++row)
      for (int64_t mma = 0; mma < kMmasPerStep; ++mma) {
        int64_t offset = BlockScaledPlan::scaleWordAtomOffset(row, mma, rows);
        EXPECT_EQ(offset % 4, 0);
        EXPECT_GE(offset, 0);
        EXPECT_LT(offset + 4, areaBytes + 1);
        offsets.insert(offset);
        for (int64_t b = 0; b < kScalesPerMma; ++b)
          EXPECT_EQ(offset + b, BlockScaledPlan::scaleAtomBase(
                                    mma, row / kAtomRows, atoms) +
                                    scaleAtomOffset(row, b));
      }
    EXPECT_EQ(int64_t(offsets.size()), kMmasPerStep * rows) << rows;
  }
  // Row 33's word for MMA 2 of a 128-row tile: atom 2 (1024), lane row 1
  // (16), second row group (4).
  EXPECT_EQ(BlockScaledPlan::scaleWordAtomOffset(33, 2, 128), 1044);
}

TEST(SM100BlockScaledPlan, Layouts) {
  BlockScaledPlan plan;
  ASSERT_FALSE(BlockScaledPlan::build(geometry(320, 96), 128, 128, 4, plan));
  EXPECT_EQ(plan.channelBlocks, 2);
  EXPECT_EQ(plan.totalSteps, 27 * 2);
  EXPECT_EQ(plan.aStageBytes, 128 * 128);
  EXPECT_EQ(plan.bStageBytes, 128 * 128);
  EXPECT_EQ(plan.aScaleStageBytes, 4 * 512);
  EXPECT_EQ(plan.bScaleStageBytes, 4 * 512);
  // 2 x 128 accumulator columns + 4 MMAs x (4 + 4) scale columns = 288.
  EXPECT_EQ(plan.accumulatorBuffers, 2);
  EXPECT_EQ(plan.scaleColumn, 256);
  EXPECT_EQ(plan.tmemColumns, 512);
  EXPECT_EQ(plan.aScaleTmemColumn(1), 256 + 8);
  EXPECT_EQ(plan.bScaleTmemColumn(1), 256 + 12);
  EXPECT_EQ(plan.instructionDescriptor(), 0x08200480u);

  // tile_n = 256: 512 + 48 columns do not fit two accumulators.
  ASSERT_FALSE(BlockScaledPlan::build(geometry(64, 256), 128, 256, 2, plan));
  EXPECT_EQ(plan.accumulatorBuffers, 1);
  EXPECT_EQ(plan.bScaleColumns, 8);
  EXPECT_EQ(plan.scaleColumn + 4 * (4 + 8), 304);
  EXPECT_EQ(plan.tmemColumns, 512);
}

/// The kernel's shared memory: the code rings (the shared producer's
/// aStage/bStage arithmetic: stage s of A at s * aStageBytes, B after the
/// A ring) on 1024-byte swizzle atoms, then the scale rings, each area
/// disjoint, then the staging tile, barriers and the TMEM slot.
TEST(SM100BlockScaledPlan, KernelLayout) {
  for (auto [c, f, tileN, stages] :
       {std::tuple{256, 64, 64, 6}, std::tuple{512, 256, 256, 2},
        std::tuple{256, 48, 48, 4}, std::tuple{768, 16, 16, 8}}) {
    ConvGeometry g = geometry(c, f);
    BlockScaledPlan plan;
    ASSERT_FALSE(BlockScaledPlan::build(g, 128, tileN, stages, plan, 8))
        << c << " " << tileN;
    const SM100KernelPlan &k = plan.kernel;
    EXPECT_EQ(k.tileM, 128);
    EXPECT_EQ(k.tileN, tileN);
    EXPECT_EQ(k.stages, stages);
    EXPECT_EQ(k.ctaGroup, 1);
    EXPECT_EQ(k.totalSteps, 27 * (c / 256));
    EXPECT_EQ(k.stepsPerSlice, 9 * (c / 256));
    EXPECT_EQ(k.accumulatorBuffers, plan.accumulatorBuffers);
    EXPECT_EQ(k.tmemColumns, plan.tmemColumns);
    EXPECT_EQ(k.pipelineBytes, plan.pipelineBytes);
    EXPECT_EQ(k.stepBytes, (128 + tileN) * (128 + 16));
    EXPECT_EQ(k.outputVector, f % 8 == 0 ? 8 : 1);
    std::vector<std::pair<int64_t, int64_t>> areas;
    for (int64_t s = 0; s < stages; ++s) {
      EXPECT_EQ(plan.aCodesOffset(s), s * k.aStageBytes);
      EXPECT_EQ(plan.bCodesOffset(s),
                stages * k.aStageBytes + s * k.bStageBytes);
      EXPECT_EQ(plan.aCodesOffset(s) % 1024, 0);
      EXPECT_EQ(plan.bCodesOffset(s) % 1024, 0);
      EXPECT_EQ(plan.aScalesOffset(s) % 128, 0);
      EXPECT_EQ(plan.bScalesOffset(s) % 128, 0);
      areas.push_back({plan.aCodesOffset(s), plan.aStageBytes});
      areas.push_back({plan.bCodesOffset(s), plan.bStageBytes});
      areas.push_back({plan.aScalesOffset(s), plan.aScaleStageBytes});
      areas.push_back({plan.bScalesOffset(s), plan.bScaleStageBytes});
    }
    std::sort(areas.begin(), areas.end());
    int64_t end = 0;
    for (auto [offset, bytes] : areas) {
      EXPECT_EQ(offset, end) << "areas tile the pipeline without gaps";
      end = offset + bytes;
    }
    EXPECT_EQ(end, plan.pipelineBytes);
    EXPECT_EQ(k.stagingOffset, plan.pipelineBytes);
    EXPECT_GE(k.barrierOffset, k.stagingOffset + k.stagingBytes);
    EXPECT_EQ(k.tmemSlotOffset,
              k.barrierOffset + 8 * (2 * stages + 2 * k.accumulatorBuffers));
    EXPECT_LE(k.sharedBytes, kMaxSharedBytes);
  }
  // 128 x 64, 6 stages: 6 x 28672 ring bytes, a 128 x 68 f32 staging tile,
  // 16 barriers, the TMEM slot and the alignment slack.
  BlockScaledPlan plan;
  ASSERT_FALSE(BlockScaledPlan::build(geometry(256, 64), 128, 64, 6, plan));
  EXPECT_EQ(plan.kernel.sharedBytes,
            6 * 28672 + 128 * 68 * 4 + 16 * 8 + 8 + 1024);
}

TEST(SM100BlockScaledPlan, MaxStages) {
  // tile_n = 64: 6 stages fit with the whole staging tile (208008 bytes);
  // the limit stops there.
  EXPECT_EQ(BlockScaledPlan::maxStages(geometry(256, 64), 64, 6), 6);
  // tile_n = 256: 55296 bytes a stage; 4 stages leave room only for a
  // staging tile in 8-column chunks (6144 bytes): 3 stages and 64-column
  // chunks instead.
  EXPECT_EQ(BlockScaledPlan::maxStages(geometry(256, 256), 256, 8), 3);
  BlockScaledPlan plan;
  ASSERT_FALSE(BlockScaledPlan::build(geometry(256, 256), 128, 256, 3, plan));
  EXPECT_EQ(plan.kernel.chunkColumns, 64);
  // No plan at all (C % 32 != 0): 0.
  EXPECT_EQ(BlockScaledPlan::maxStages(geometry(48, 64), 64, 6), 0);
}

TEST(SM100BlockScaledPlan, Diagnostics) {
  BlockScaledPlan plan;
  auto problem = [&](int64_t c, int64_t tileM, int64_t tileN, int64_t stages) {
    return BlockScaledPlan::build(geometry(c, 64), tileM, tileN, stages, plan)
        .value_or("");
  };
  EXPECT_EQ(problem(64, 256, 128, 3),
            "tile_m must be 128 for the block-scaled MMA (kind::mxf4nvf4 has "
            "M = 128 with cta_group::1), got 256");
  EXPECT_EQ(problem(64, 128, 120, 3),
            "tile_n = 120 is not a kind::mxf4nvf4 shape for M = 128 (a "
            "multiple of 16 from 16 to 256)");
  EXPECT_EQ(problem(64, 128, 128, 1), "needs at least 2 stages, got 1");
  EXPECT_EQ(problem(48, 128, 128, 3),
            "C = 48 is not a multiple of 32: rows of packed FP4 codes must "
            "be multiples of 16 bytes for TMA");
  EXPECT_EQ(problem(64, 128, 256, 5),
            "5 stages of packed FP4 tiles and scale atoms (276480 bytes) "
            "and the epilogue's staging (6144 bytes) need 283752 bytes of "
            "shared memory; a block has 232448");
}

} // namespace
