//===- SM100BlockScaledTmaTest.cpp - real NVFP4 sm100 TMA maps ------------===//
//
// The tensor maps of the block-scaled producer against values worked out by
// hand from the packed layouts of conv3d.pack_nvfp4 (and as
// scripts/gpu/tma_fp4_im2col.cu encodes the im2col ones), and the
// diagnostics for what TMA cannot load.
//
//===----------------------------------------------------------------------===//

#include "conv3d/Target/SM100/SM100BlockScaledTma.h"

#include "llvm/ADT/ArrayRef.h"

#include <gtest/gtest.h>

using namespace mlir::conv3d;
using namespace mlir::conv3d::sm100;
using namespace mlir::conv3d::sm100::nvfp4;

namespace {

using Values = std::vector<int64_t>;

Values values(llvm::ArrayRef<int64_t> array) {
  return Values(array.begin(), array.end());
}

ConvGeometry causalGeometry(int64_t c) {
  ConvGeometry g;
  g.batch = 2;
  g.inputSize = {5, 9, 11};
  g.channels = c;
  g.window = {3, 3, 3};
  g.filters = 96;
  g.padLow = {2, 1, 1};
  g.padHigh = {0, 1, 1};
  return g;
}

TEST(SM100BlockScaledTma, Maps) {
  ConvGeometry g = causalGeometry(512);
  BlockScaledPlan plan;
  ASSERT_FALSE(BlockScaledPlan::build(g, 128, 96, 3, plan));
  BlockScaledTmaPlan tma;
  ASSERT_FALSE(BlockScaledTmaPlan::build(g, plan, tma));

  // Codes: 256 bytes a voxel; 128 bytes (256 channels) of 128 pixels a box.
  const PackedTensorMap &a = tma.activationCodes;
  EXPECT_TRUE(a.im2col);
  EXPECT_TRUE(a.swizzle128B);
  EXPECT_EQ(values(a.globalDim), (Values{256, 11, 9, 5, 2}));
  EXPECT_EQ(values(a.globalStrides), (Values{256, 2816, 25344, 126720}));
  EXPECT_EQ(values(a.box), (Values{128, 128}));
  // Scales: 32 bytes a voxel; the step's 16 of 128 pixels a box.
  const PackedTensorMap &as = tma.activationScales;
  EXPECT_TRUE(as.im2col);
  EXPECT_FALSE(as.swizzle128B);
  EXPECT_EQ(values(as.globalDim), (Values{32, 11, 9, 5, 2}));
  EXPECT_EQ(values(as.globalStrides), (Values{32, 352, 3168, 15840}));
  EXPECT_EQ(values(as.box), (Values{16, 128}));
  // Both im2col maps: the bf16 kernel's corners (W, H, D) of padding
  // (2, 0), (1, 1), (1, 1) and a 3x3x3 window, unit strides.
  for (const PackedTensorMap *map : {&a, &as}) {
    EXPECT_EQ(map->lowerCorner, (std::array<int64_t, 3>{-1, -1, -2}));
    EXPECT_EQ(map->upperCorner, (std::array<int64_t, 3>{-1, -1, -2}));
    EXPECT_EQ(map->elementStrides, (std::array<int64_t, 5>{1, 1, 1, 1, 1}));
  }
  // The filter, [F][27 taps][C/2] and [F][27 taps][C/16].
  const PackedTensorMap &b = tma.filterCodes;
  EXPECT_FALSE(b.im2col);
  EXPECT_TRUE(b.swizzle128B);
  EXPECT_EQ(values(b.globalDim), (Values{256, 27, 96}));
  EXPECT_EQ(values(b.globalStrides), (Values{256, 6912}));
  EXPECT_EQ(values(b.box), (Values{128, 1, 96}));
  const PackedTensorMap &bs = tma.filterScales;
  EXPECT_FALSE(bs.swizzle128B);
  EXPECT_EQ(values(bs.globalDim), (Values{32, 27, 96}));
  EXPECT_EQ(values(bs.globalStrides), (Values{32, 864}));
  EXPECT_EQ(values(bs.box), (Values{16, 1, 96}));

  // The A and B boxes are the plan's stage rows; the scales add 16 bytes a
  // row.
  EXPECT_EQ(a.boxBytes(), plan.aStageBytes);
  EXPECT_EQ(b.boxBytes(), plan.bStageBytes);
  EXPECT_EQ(tma.stepBytes, 128 * 128 + 96 * 128 + 128 * 16 + 96 * 16);
  // What the kernel's full barrier expects of a step.
  EXPECT_EQ(plan.stepBytes(), tma.stepBytes);
  EXPECT_EQ(plan.kernel.stepBytes, tma.stepBytes);
  EXPECT_EQ(BlockScaledTmaPlan::codesColumn(1), 128);
  EXPECT_EQ(BlockScaledTmaPlan::scalesColumn(1), 16);
}

// Every TMA global stride is a multiple of 16 bytes, as cuTensorMapEncode*
// requires, for every C the maps are built for.
TEST(SM100BlockScaledTma, StridesAreSixteenByteMultiples) {
  for (int64_t c : {32, 96, 192, 256, 320, 384, 512, 768, 1024, 2304}) {
    ConvGeometry g = causalGeometry(c);
    BlockScaledPlan plan;
    ASSERT_FALSE(BlockScaledPlan::build(g, 128, 64, 2, plan));
    BlockScaledTmaPlan tma;
    ASSERT_FALSE(BlockScaledTmaPlan::build(g, plan, tma)) << "C = " << c;
    for (const PackedTensorMap *map :
         {&tma.activationCodes, &tma.activationScales, &tma.filterCodes,
          &tma.filterScales})
      for (int64_t stride : map->globalStrides)
        EXPECT_EQ(stride % 16, 0) << "C = " << c;
  }
}

TEST(SM100BlockScaledTma, Diagnostics) {
  auto problem = [](const ConvGeometry &g) -> std::string {
    BlockScaledPlan plan;
    if (std::optional<std::string> planProblem =
            BlockScaledPlan::build(g, 128, 64, 2, plan))
      return "plan: " + *planProblem;
    BlockScaledTmaPlan tma;
    return BlockScaledTmaPlan::build(g, plan, tma).value_or("");
  };
  // C = 96 and 320 have rows of codes (48, 160 bytes) TMA loads as they
  // are; their scales (6, 20 bytes a voxel) come in rows padded to 16 and
  // 32 bytes.
  EXPECT_EQ(problem(causalGeometry(96)), "");
  EXPECT_EQ(problem(causalGeometry(320)), "");
  EXPECT_EQ(scaleRowStride(96), 16);
  EXPECT_EQ(scaleRowStride(256), 16);
  EXPECT_EQ(scaleRowStride(320), 32);
  {
    BlockScaledPlan plan;
    ASSERT_FALSE(BlockScaledPlan::build(causalGeometry(320), 128, 64, 2, plan));
    BlockScaledTmaPlan tma;
    ASSERT_FALSE(BlockScaledTmaPlan::build(causalGeometry(320), plan, tma));
    EXPECT_EQ(tma.activationScales.globalStrides[0], 32);
    EXPECT_EQ(tma.filterScales.globalStrides[0], 32);
  }
  ConvGeometry padded = causalGeometry(256);
  padded.padLow[1] = padded.padHigh[1] = 20;
  EXPECT_EQ(problem(padded), "the height padding (20, 20) and window put a "
                             "TMA im2col corner outside [-16, 15]");
  ConvGeometry twoByThree = causalGeometry(256);
  twoByThree.strides = {1, 2, 3};
  BlockScaledPlan plan;
  ASSERT_FALSE(BlockScaledPlan::build(twoByThree, 128, 64, 2, plan));
  BlockScaledTmaPlan tma;
  ASSERT_FALSE(BlockScaledTmaPlan::build(twoByThree, plan, tma));
  EXPECT_EQ(tma.activationScales.elementStrides,
            (std::array<int64_t, 5>{1, 3, 2, 1, 1}));

  ConvGeometry strided = causalGeometry(256);
  strided.strides = {1, 9, 1};
  strided.inputSize[1] = 40;
  EXPECT_EQ(problem(strided),
            "the height stride 9 exceeds TMA's element stride limit of 8");
}

} // namespace
