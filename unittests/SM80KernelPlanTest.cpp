//===- SM80KernelPlanTest.cpp - sm80 layouts, checked without a GPU -------===//
//
// The shared-memory swizzle must be a bijection inside each row and make
// every ldmatrix phase (8 rows at one logical chunk) conflict-free; the
// ldmatrix lane addresses must cover exactly the fragments mma.sync expects.
//
//===----------------------------------------------------------------------===//

#include "conv3d/Target/SM80/SM80KernelPlan.h"

#include <gtest/gtest.h>

#include <set>

using namespace mlir::conv3d;
using namespace mlir::conv3d::sm80;

namespace {

TEST(SwizzledTile, BijectiveWithinEachRow) {
  ScalarLayoutMath math;
  for (int64_t cols = 8; cols <= 512; cols += 8) {
    SwizzledTile tile{16, cols};
    for (int64_t row = 0; row < tile.rows; ++row) {
      std::set<int64_t> seen;
      for (int64_t col = 0; col < cols; ++col) {
        int64_t offset = tile.offset(math, row, col);
        ASSERT_GE(offset, row * cols) << "cols " << cols << " row " << row;
        ASSERT_LT(offset, (row + 1) * cols)
            << "cols " << cols << " row " << row;
        seen.insert(offset);
      }
      EXPECT_EQ(static_cast<int64_t>(seen.size()), cols) << "cols " << cols;
    }
  }
}

TEST(SwizzledTile, LdmatrixPhasesAreConflictFree) {
  ScalarLayoutMath math;
  for (int64_t cols = 8; cols <= 512; cols += 8) {
    SwizzledTile tile{64, cols};
    for (int64_t row0 = 0; row0 < tile.rows; row0 += 8)
      for (int64_t chunk = 0; chunk < tile.chunksPerRow(); ++chunk) {
        std::set<int64_t> slots;
        for (int64_t r = row0; r < row0 + 8; ++r) {
          int64_t byte = tile.offset(math, r, chunk * 8) * 2;
          EXPECT_EQ(byte % 16, 0);
          slots.insert((byte / 16) % 8);
        }
        EXPECT_EQ(slots.size(), 8u) << "cols " << cols << " rows " << row0
                                    << ".." << row0 + 7 << " chunk " << chunk;
      }
  }
}

TEST(Fragments, AAddressesCoverTheMmaOperand) {
  // ldmatrix.x4: lane l addresses row l of the concatenated matrices; thread
  // t then holds, from matrix j, the pair at (row t/4, cols 2*(t%4)) of it.
  // The resulting a0..a3 must be A[g][2t..], A[g+8][2t..], A[g][2t+8..],
  // A[g+8][2t+8..] with g = t/4, t = t%4 (PTX ISA, mma.m16n8k16).
  ScalarLayoutMath math;
  std::array<std::array<int64_t, 2>, 32> rowStart;
  for (int64_t lane = 0; lane < 32; ++lane)
    rowStart[lane] = SM80KernelPlan::aFragmentAddress(math, lane, 0, 0);
  for (int64_t t = 0; t < 32; ++t)
    for (int64_t j = 0; j < 4; ++j) {
      auto [row, col] = rowStart[8 * j + t / 4];
      col += 2 * (t % 4);
      int64_t expectRow = t / 4 + (j % 2) * 8,
              expectCol = 2 * (t % 4) + (j / 2) * 8;
      EXPECT_EQ(row, expectRow) << "t " << t << " a" << j;
      EXPECT_EQ(col, expectCol) << "t " << t << " a" << j;
    }
}

TEST(Fragments, BAddressesCoverTheMmaOperand) {
  // b0, b1 of an n8 tile: thread t holds B[k = 2*(t%4) (+8)][n = t/4].
  // [k][n] storage with .trans: lane l addresses k-row l of the matrices,
  // and thread t gets (row 2*(t%4), col t/4) of each. [n][k] storage
  // without .trans: lane l addresses n-row l; thread t gets (row t/4, cols
  // 2*(t%4)).
  ScalarLayoutMath math;
  for (int64_t t = 0; t < 32; ++t)
    for (int64_t j = 0; j < 4; ++j) {
      int64_t expectK = 2 * (t % 4) + (j % 2) * 8;
      int64_t expectN = t / 4 + (j / 2) * 8;
      auto kn =
          SM80KernelPlan::bFragmentAddress(math, 8 * j + 2 * (t % 4), 0, 0);
      EXPECT_EQ(kn[0], expectK) << "trans t " << t << " m" << j;
      EXPECT_EQ(kn[1] + t / 4, expectN) << "trans t " << t << " m" << j;
      auto nk = SM80KernelPlan::bFragmentAddressKContiguous(math, 8 * j + t / 4,
                                                            0, 0);
      EXPECT_EQ(nk[0], expectN) << "t " << t << " m" << j;
      EXPECT_EQ(nk[1] + 2 * (t % 4), expectK) << "t " << t << " m" << j;
    }
}

TEST(Fragments, AccumulatorPositionsTileTheWarpTile) {
  ScalarLayoutMath math;
  std::set<std::pair<int64_t, int64_t>> seen;
  for (int64_t lane = 0; lane < 32; ++lane)
    for (int64_t e = 0; e < 4; ++e) {
      auto [row, col] = SM80KernelPlan::accumulatorPosition(math, lane, e);
      EXPECT_LT(row, kMmaM);
      EXPECT_LT(col, kMmaN);
      seen.insert({row, col});
    }
  EXPECT_EQ(seen.size(), static_cast<size_t>(kMmaM * kMmaN));
}

ConvGeometry geometry(int64_t c, int64_t f) {
  ConvGeometry g;
  g.batch = 1;
  g.inputSize = {8, 16, 16};
  g.channels = c;
  g.window = {3, 3, 3};
  g.filters = f;
  g.padLow = g.padHigh = {1, 1, 1};
  return g;
}

TEST(Plan, InputPrologueLoadPaths) {
  SM80KernelPlan plan;
  // 3+ stages and 16-byte chunks: the cp.async ring, transformed in place
  // one stage ahead.
  ASSERT_FALSE(SM80KernelPlan::build(geometry(64, 64), FilterLayout::qrscf, 128,
                                     64, 32, 3, 2, 2, KOrder::taps_outer, 1,
                                     std::nullopt, plan, {},
                                     /*inputPrologue=*/true));
  EXPECT_TRUE(plan.inputPrologue);
  EXPECT_TRUE(plan.prologueInShared);
  EXPECT_TRUE(plan.a.async);
  EXPECT_EQ(plan.a.vector, 8);
  // Two stages: no stage to transform ahead; register-staged.
  ASSERT_FALSE(SM80KernelPlan::build(geometry(64, 64), FilterLayout::qrscf, 128,
                                     64, 32, 2, 2, 2, KOrder::taps_outer, 1,
                                     std::nullopt, plan, {},
                                     /*inputPrologue=*/true));
  EXPECT_FALSE(plan.prologueInShared);
  EXPECT_FALSE(plan.a.async);
  EXPECT_EQ(plan.a.vector, 8);
  // C = 3: one-element accesses, register-staged whatever the stages.
  ASSERT_FALSE(SM80KernelPlan::build(geometry(3, 8), FilterLayout::qrscf, 64, 8,
                                     16, 4, 4, 1, KOrder::taps_outer, 1,
                                     std::nullopt, plan, {},
                                     /*inputPrologue=*/true));
  EXPECT_FALSE(plan.prologueInShared);
  EXPECT_FALSE(plan.a.async);
  // No prologue: neither.
  ASSERT_FALSE(SM80KernelPlan::build(geometry(64, 64), FilterLayout::qrscf, 128,
                                     64, 32, 3, 2, 2, KOrder::taps_outer, 1,
                                     std::nullopt, plan));
  EXPECT_FALSE(plan.inputPrologue);
  EXPECT_FALSE(plan.prologueInShared);
  EXPECT_TRUE(plan.a.async);
}

TEST(Plan, PicksLoadPaths) {
  SM80KernelPlan plan;
  ASSERT_FALSE(SM80KernelPlan::build(geometry(64, 96), FilterLayout::qrscf, 128,
                                     96, 32, 4, 2, 2, KOrder::taps_outer, 1,
                                     std::nullopt, plan));
  EXPECT_TRUE(plan.a.async);
  EXPECT_EQ(plan.a.vector, 8);
  EXPECT_EQ(plan.b.vector, 8);
  EXPECT_EQ(plan.mmaTilesN, 6);
  EXPECT_EQ(plan.outputVector, 8);
  // C = 3: element-wise, register-staged; F = 5: narrow filter loads.
  ASSERT_FALSE(SM80KernelPlan::build(geometry(3, 5), FilterLayout::qrscf, 64, 8,
                                     16, 4, 4, 1, KOrder::taps_outer, 1,
                                     std::nullopt, plan));
  EXPECT_FALSE(plan.a.async);
  EXPECT_EQ(plan.a.vector, 1);
  EXPECT_FALSE(plan.b.async);
  EXPECT_EQ(plan.outputVector, 1);
  // C = 6: 4-byte cp.async.
  ASSERT_FALSE(SM80KernelPlan::build(geometry(6, 16), FilterLayout::qrscf, 64,
                                     16, 32, 3, 2, 1, KOrder::taps_outer, 1,
                                     std::nullopt, plan));
  EXPECT_TRUE(plan.a.async);
  EXPECT_EQ(plan.a.vector, 2);
  // NVFP4 with 3+ stages: cp.async, then whole blocks quantized in shared
  // memory (128 x 32 / 16 = 256 blocks, 2 per thread).
  ASSERT_FALSE(SM80KernelPlan::build(geometry(64, 64), FilterLayout::qrscf, 128,
                                     64, 32, 3, 2, 2, KOrder::taps_outer, 1, 16,
                                     plan));
  EXPECT_TRUE(plan.a.async);
  EXPECT_EQ(plan.a.vector, 8);
  EXPECT_TRUE(plan.quantizeInShared);
  EXPECT_EQ(plan.quantUnitsPerTile, 256);
  EXPECT_EQ(plan.quantUnitsPerThread, 2);
  // Two stages leave no step to quantize ahead: whole blocks per thread,
  // through registers.
  ASSERT_FALSE(SM80KernelPlan::build(geometry(64, 64), FilterLayout::qrscf, 128,
                                     64, 32, 2, 2, 2, KOrder::taps_outer, 1, 16,
                                     plan));
  EXPECT_FALSE(plan.a.async);
  EXPECT_FALSE(plan.quantizeInShared);
  EXPECT_EQ(plan.a.unit, 16);
  EXPECT_EQ(plan.a.unitsPerThread, 2);
  // C = 5 cannot be copied asynchronously: registers.
  ASSERT_FALSE(SM80KernelPlan::build(geometry(5, 64), FilterLayout::qrscf, 64,
                                     64, 32, 4, 2, 2, KOrder::taps_outer, 1, 16,
                                     plan));
  EXPECT_FALSE(plan.a.async);
  EXPECT_FALSE(plan.quantizeInShared);
}

TEST(Plan, NarrowsAccessesToTheOperandsAlignment) {
  SM80KernelPlan plan;
  // Identity layouts: 16-byte copies and stores.
  ASSERT_FALSE(SM80KernelPlan::build(geometry(64, 64), FilterLayout::qrscf, 128,
                                     64, 32, 3, 2, 2, KOrder::taps_outer, 1,
                                     std::nullopt, plan));
  EXPECT_EQ(plan.a.vector, 8);
  EXPECT_EQ(plan.b.vector, 8);
  EXPECT_EQ(plan.outputVector, 8);
  // Offsets or strides aligned to 4, 2 and 2 elements only.
  OperandAlignment alignment;
  alignment.input = 4;
  alignment.filter = 2;
  alignment.epilogue = 2;
  ASSERT_FALSE(SM80KernelPlan::build(geometry(64, 64), FilterLayout::qrscf, 128,
                                     64, 32, 3, 2, 2, KOrder::taps_outer, 1,
                                     std::nullopt, plan, alignment));
  EXPECT_EQ(plan.a.vector, 4);
  EXPECT_TRUE(plan.a.async);
  EXPECT_EQ(plan.b.vector, 2);
  EXPECT_EQ(plan.outputVector, 1);
}

TEST(Plan, CachesNarrowGroupSlicesInL1) {
  // A group's input slice of 8, 16 or 32 channels (at most 64 bytes a
  // voxel) is copied through L1; a wider slice, a dense input and the
  // filter through L2 only.
  for (int64_t channels : {8, 16, 32, 64}) {
    for (bool slice : {false, true}) {
      SM80KernelPlan plan;
      OperandAlignment alignment;
      alignment.inputChannelSlice = slice;
      ASSERT_FALSE(SM80KernelPlan::build(
          geometry(channels, 16), FilterLayout::qrscf, 128, 16, 32, 4, 4, 1,
          KOrder::taps_outer, 1, std::nullopt, plan, alignment));
      EXPECT_EQ(plan.a.vector, 8);
      EXPECT_EQ(plan.a.cacheInL1, slice && channels <= 32) << channels;
      EXPECT_FALSE(plan.b.cacheInL1);
    }
  }
}

TEST(Plan, RejectsInconsistentKOrderAndQuantization) {
  SM80KernelPlan plan;
  EXPECT_NE(SM80KernelPlan::build(geometry(64, 64), FilterLayout::qrscf, 128,
                                  64, 32, 3, 2, 2, KOrder::qslice_outer, 2,
                                  std::nullopt, plan)
                .value_or("")
                .find("split_k = 2 needs k_order = taps_outer"),
            std::string::npos);
  EXPECT_NE(SM80KernelPlan::build(geometry(64, 64), FilterLayout::qrscf, 128,
                                  64, 32, 3, 2, 2, KOrder::taps_outer, 1, 64,
                                  plan)
                .value_or("")
                .find("tile_k (32) to be a multiple of the NVFP4 block size "
                      "(64)"),
            std::string::npos);
  // R*S*C = 9*8 = 72 is not a multiple of 16: blocks would cross slices.
  EXPECT_NE(SM80KernelPlan::build(geometry(8, 64), FilterLayout::qrscf, 128, 64,
                                  32, 3, 2, 2, KOrder::qslice_outer, 1, 16,
                                  plan)
                .value_or("")
                .find("qslice_outer splits NVFP4 blocks"),
            std::string::npos);
}

TEST(Plan, RejectsWithReasons) {
  SM80KernelPlan plan;
  auto error = [&](int64_t tm, int64_t tn, int64_t tk, int64_t stages,
                   int64_t wm, int64_t wn) {
    return SM80KernelPlan::build(geometry(64, 64), FilterLayout::qrscf, tm, tn,
                                 tk, stages, wm, wn, KOrder::taps_outer, 1,
                                 std::nullopt, plan)
        .value_or("");
  };
  EXPECT_NE(error(17, 64, 32, 3, 1, 1).find("tile_m (17)"), std::string::npos);
  EXPECT_NE(error(64, 12, 32, 3, 1, 1).find("tile_n (12)"), std::string::npos);
  EXPECT_NE(error(64, 64, 24, 3, 1, 1).find("tile_k (24)"), std::string::npos);
  EXPECT_NE(error(64, 64, 32, 1, 1, 1).find("at least 2 pipeline stages"),
            std::string::npos);
  EXPECT_NE(error(128, 128, 32, 3, 1, 1).find("accumulator registers"),
            std::string::npos);
  EXPECT_NE(error(256, 256, 256, 8, 8, 4).find("shared memory"),
            std::string::npos);
}

} // namespace
