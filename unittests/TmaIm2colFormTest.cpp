//===- TmaIm2colFormTest.cpp - TMA im2col forms and their coordinates -----===//
//
// ConvGeometry::chooseTmaIm2colForm (the TMA kernels' canImplement for the
// input) and the coordinates the producer gives each im2col load
// (tmaIm2colLoadCoords, validTapRange), checked against a host model of a
// TMA im2col load: it walks the descriptor's bounding box from the load's
// coordinates with the traversal strides (W, then H, then D and the batch),
// adds the im2col offsets and reads zeros out of bounds. Every row of every
// tile must read exactly the input element the convolution's im2col matrix
// holds there.
//
//===----------------------------------------------------------------------===//

#include "conv3d/Geometry/ConvGeometry.h"

#include <gtest/gtest.h>

#include <optional>
#include <random>
#include <vector>

using namespace mlir::conv3d;

namespace {

/// What one row of an im2col load reads: (n * batchSlices + d, h, w), or
/// nothing (a zero). batchSlices is the input's batch stride in depth
/// strides (D when dense).
using Pixel = std::optional<std::array<int64_t, 3>>;

/// A TMA im2col load of `rows` pixels as the PTX ISA describes it, for the
/// descriptor of `form` over `g`'s input: corners from the geometry,
/// traversal strides of H and W (and D for rank 5). The rank-4 tensor's
/// outer dimension holds the slices of all images, batchSlices apart.
std::vector<Pixel> tmaIm2colLoad(const ConvGeometry &g, TmaIm2colForm form,
                                 std::array<int64_t, 4> coords,
                                 std::array<int64_t, 3> offsets, int64_t rows,
                                 int64_t batchSlices) {
  bool volume = form == TmaIm2colForm::volume;
  // Spatial axes innermost first: W, H (, D); then the outermost dimension.
  std::vector<unsigned> axes = {kWidth, kHeight};
  if (volume)
    axes.push_back(kDepth);
  size_t spatial = axes.size();
  int64_t outer =
      volume ? g.batch : (g.batch - 1) * batchSlices + g.inputSize[kDepth];
  std::array<int64_t, 3> lower = g.tmaIm2colLowerCorner(),
                         upper = g.tmaIm2colUpperCorner();
  std::vector<int64_t> at(coords.begin(), coords.begin() + spatial + 1);
  std::vector<Pixel> pixels;
  for (int64_t i = 0; i < rows; ++i) {
    std::array<int64_t, 3> read = {0, 0, 0}; // per axis D, H, W
    bool inside = at[spatial] >= 0 && at[spatial] < outer;
    for (size_t j = 0; j < spatial; ++j) {
      unsigned axis = axes[j];
      read[axis] = at[j] + offsets[j];
      inside &= read[axis] >= 0 && read[axis] < g.inputSize[axis];
    }
    int64_t outerIndex =
        volume ? at[spatial] * batchSlices + read[kDepth] : at[spatial];
    pixels.push_back(inside ? Pixel({outerIndex, read[kHeight], read[kWidth]})
                            : std::nullopt);
    // Next pixel of the bounding box: the innermost axis steps by its
    // traversal stride and wraps to its lower corner past its upper one.
    size_t j = 0;
    for (; j < spatial; ++j) {
      unsigned axis = axes[j];
      at[j] += g.strides[axis];
      if (at[j] <= g.inputSize[axis] - 1 + upper[axis])
        break;
      at[j] = lower[axis];
    }
    if (j == spatial)
      ++at[spatial];
  }
  return pixels;
}

/// What the im2col matrix holds at row m, tap (q, r, s).
Pixel im2colEntry(const ConvGeometry &g, int64_t m,
                  const std::array<int64_t, 3> &qrs, int64_t batchSlices) {
  ScalarIndexMath math;
  auto pos = g.decomposeM(math, m);
  std::array<int64_t, 3> in;
  for (unsigned axis = 0; axis < 3; ++axis) {
    in[axis] = g.inputCoord(math, axis, pos[axis + 1], qrs[axis]);
    if (in[axis] < 0 || in[axis] >= g.inputSize[axis])
      return std::nullopt;
  }
  return Pixel({pos[0] * batchSlices + in[kDepth], in[kHeight], in[kWidth]});
}

/// Checks every load of every tile of `tileM` rows of `g` in `form`: the
/// volume form's tiles cut M, the per-depth-slice form's each output depth
/// slice (the scheduler's rows: TmaKernel's tileOrigin), whose steps are
/// the taps validTapRange gives. `batchSlices`: the input's batch stride in
/// depth strides (a view into a deeper tensor has more than D).
void checkLoads(const ConvGeometry &g, TmaIm2colForm form, int64_t tileM,
                int64_t batchSlices = 0) {
  if (batchSlices == 0)
    batchSlices = g.inputSize[kDepth];
  ScalarIndexMath math;
  struct Tile {
    int64_t m0, rowEnd;
  };
  std::vector<Tile> tiles;
  if (form == TmaIm2colForm::volume) {
    for (int64_t m0 = 0; m0 < g.gemmM(); m0 += tileM)
      tiles.push_back({m0, std::min(m0 + tileM, g.gemmM())});
  } else {
    int64_t size = g.outputSliceSize();
    for (int64_t slice = 0; slice < g.batch * g.outputSize(kDepth); ++slice)
      for (int64_t in = 0; in < size; in += tileM)
        tiles.push_back(
            {slice * size + in, slice * size + std::min(in + tileM, size)});
  }
  for (const Tile &tile : tiles) {
    auto pos = g.decomposeM(math, tile.m0);
    auto [qBegin, qEnd] = g.validTapRange(math, kDepth, pos[1]);
    if (form == TmaIm2colForm::volume) {
      qBegin = 0;
      qEnd = g.window[kDepth];
    }
    for (int64_t q = 0; q < g.window[kDepth]; ++q) {
      // A skipped depth tap reads only padding on every row of the tile.
      if (q < qBegin || q >= qEnd) {
        for (int64_t m = tile.m0; m < tile.rowEnd; ++m)
          for (int64_t r = 0; r < g.window[kHeight]; ++r)
            for (int64_t s = 0; s < g.window[kWidth]; ++s)
              ASSERT_FALSE(
                  im2colEntry(g, m, {q, r, s}, batchSlices).has_value())
                  << "skipped tap q = " << q << " reads row " << m;
        continue;
      }
      for (int64_t r = 0; r < g.window[kHeight]; ++r)
        for (int64_t s = 0; s < g.window[kWidth]; ++s) {
          auto [coords, offsets] =
              g.tmaIm2colLoadCoords(math, form, pos, {q, r, s}, batchSlices);
          int64_t maxOffset = form == TmaIm2colForm::volume ? 31 : 255;
          for (int64_t offset : offsets)
            ASSERT_TRUE(offset >= 0 && offset <= maxOffset);
          std::vector<Pixel> rows =
              tmaIm2colLoad(g, form, coords, offsets, tileM, batchSlices);
          for (int64_t m = tile.m0; m < tile.rowEnd; ++m)
            ASSERT_EQ(rows[m - tile.m0],
                      im2colEntry(g, m, {q, r, s}, batchSlices))
                << "row " << m << " of the tile at " << tile.m0 << ", tap ("
                << q << ", " << r << ", " << s << ")";
        }
    }
  }
}

ConvGeometry base() {
  return ConvGeometry::fromShapes({1, 40, 40, 40, 64}, {3, 3, 3, 64, 64},
                                  FilterLayout::qrscf, {1, 1, 1}, {1, 1, 1},
                                  {1, 1, 1, 1, 1, 1});
}

std::optional<TmaIm2colForm> formOf(const ConvGeometry &g,
                                    std::string *why = nullptr) {
  std::string reason;
  std::optional<TmaIm2colForm> form = g.chooseTmaIm2colForm(2, reason);
  if (why)
    *why = reason;
  return form;
}

TEST(TmaIm2colForm, Rank5WhereItsLimitsHold) {
  std::string why = "stale";
  EXPECT_EQ(formOf(base(), &why), TmaIm2colForm::volume);
  EXPECT_EQ(why, "");
}

TEST(TmaIm2colForm, DepthSlicesPastRank5Limits) {
  std::string why;
  ConvGeometry g = base();
  g.padLow[kDepth] = 20; // any depth padding
  EXPECT_EQ(formOf(g, &why), TmaIm2colForm::depthSlices);
  EXPECT_EQ(why, "the depth padding (20, 1) and window put a TMA im2col corner "
                 "outside [-16, 15]");
  g = base();
  g.dilations[kDepth] = 16; // (Q - 1) * dil_d = 32: no depth offsets
  g.padHigh[kDepth] = 32;
  EXPECT_EQ(formOf(g, &why), TmaIm2colForm::depthSlices);
  g = base();
  g.strides[kDepth] = 9; // depth strides are coordinates
  EXPECT_EQ(formOf(g, &why), TmaIm2colForm::depthSlices);
  EXPECT_NE(why.find("depth stride 9"), std::string::npos);
  g = base();
  g.padLow[kHeight] = 127; // rank 4's corners reach -128
  EXPECT_EQ(formOf(g), TmaIm2colForm::depthSlices);
  g = base();
  g.dilations[kWidth] = 60; // offset 120, upper corner 1 - 120
  EXPECT_EQ(formOf(g), TmaIm2colForm::depthSlices);
}

TEST(TmaIm2colForm, RowTilesPerDepthSlice) {
  // Per depth slice every (n, do) starts its own tiles: a weight gradient's
  // old forward form, batch 128 x 3 slices of 3 x 3 rows, ran 384 tiles of
  // 128 rows, 9 rows each, where the volume has 27.
  ConvGeometry g = ConvGeometry::fromShapes(
      {128, 21, 60, 3, 112}, {21, 60, 1, 112, 512}, FilterLayout::qrscf,
      {1, 1, 1}, {1, 1, 1}, {1, 1, 1, 1, 0, 0});
  ASSERT_EQ(formOf(g), TmaIm2colForm::depthSlices);
  EXPECT_EQ(g.outputSliceSize(), 9);
  EXPECT_EQ(g.tmaTilesPerSlice(128), 1);
  EXPECT_EQ(g.tmaRowTiles(128, TmaIm2colForm::depthSlices), 128 * 3);
  EXPECT_EQ(g.tmaRowTiles(128, TmaIm2colForm::volume), 27);
  // Slices of 300 rows: 3 tiles of 128, 4 under 2-block clusters.
  ConvGeometry h = base();
  h.batch = 2;
  h.inputSize = {4, 10, 30};
  h.padLow = h.padHigh = {1, 1, 1};
  ASSERT_EQ(h.outputSliceSize(), 300);
  EXPECT_EQ(h.tmaTilesPerSlice(128), 3);
  EXPECT_EQ(h.tmaTilesPerSlice(128, 2), 4);
  EXPECT_EQ(h.tmaRowTiles(128, TmaIm2colForm::depthSlices, 2),
            2 * h.outputSize(kDepth) * 4);
}

TEST(TmaIm2colForm, NeitherFormNamesBoth) {
  std::string why;
  ConvGeometry g = base();
  g.padLow[kHeight] = 129; // lower corner -129
  EXPECT_EQ(formOf(g, &why), std::nullopt);
  EXPECT_EQ(why, "the height padding (129, 1) and window put a TMA im2col "
                 "corner outside [-16, 15]; per-depth-slice descriptors: the "
                 "height padding (129, 1) and window put a TMA im2col corner "
                 "outside [-128, 127]");
  g = base();
  g.dilations[kWidth] = 128; // offset 256 > 255 (corner 257 - 256 fits)
  g.padHigh[kWidth] = 257;
  g.padLow[kWidth] = 0;
  EXPECT_EQ(formOf(g, &why), std::nullopt);
  EXPECT_NE(why.find("TMA im2col offsets reach 255"), std::string::npos);
  // The same problem for both forms is named once.
  g = base();
  g.window[kHeight] = 1;
  g.strides[kHeight] = 9;
  EXPECT_EQ(formOf(g, &why), std::nullopt);
  EXPECT_EQ(why, "the height stride 9 exceeds TMA's element stride limit of 8");
  g = base();
  g.channels = 60;
  EXPECT_EQ(formOf(g, &why), std::nullopt);
  EXPECT_EQ(why, "a pixel's 60 channels are not a multiple of 16 bytes (TMA's "
                 "global stride granularity)");
}

TEST(TmaIm2colForm, ValidTapRangeMatchesBruteForce) {
  std::mt19937_64 rng(7);
  auto pick = [&](int64_t lo, int64_t hi) {
    return lo + int64_t(rng() % uint64_t(hi - lo + 1));
  };
  ScalarIndexMath math;
  for (int trial = 0; trial < 2000; ++trial) {
    ConvGeometry g;
    g.window[0] = pick(1, 6);
    g.strides[0] = pick(1, 12);
    g.dilations[0] = pick(1, 20);
    g.padLow[0] = pick(0, 40);
    g.padHigh[0] = pick(0, 40);
    g.inputSize[0] = pick(1, 30);
    if (g.outputSize(0) < 1)
      continue;
    for (int64_t out = 0; out < g.outputSize(0); ++out) {
      auto [lo, hi] = g.validTapRange(math, 0, out);
      ASSERT_LE(0, lo);
      ASSERT_LE(lo, hi);
      ASSERT_LE(hi, g.window[0]);
      for (int64_t q = 0; q < g.window[0]; ++q) {
        int64_t d = g.inputCoord(math, 0, out, q);
        bool inside = d >= 0 && d < g.inputSize[0];
        // Inside taps are contiguous in q, so the range holds exactly them.
        ASSERT_EQ(inside, q >= lo && q < hi)
            << "out " << out << " tap " << q << " input " << d;
      }
    }
  }
}

TEST(TmaIm2colForm, Rank5LoadsReadTheIm2colMatrix) {
  // Causal depth padding, stride 2 in H, dilation 2 in W, batch 2, tiles
  // across rows, images and the end of M.
  ConvGeometry g = ConvGeometry::fromShapes({2, 5, 7, 9, 64}, {3, 3, 3, 64, 8},
                                            FilterLayout::qrscf, {1, 2, 1},
                                            {1, 1, 2}, {2, 0, 1, 1, 2, 2});
  ASSERT_EQ(formOf(g), TmaIm2colForm::volume);
  checkLoads(g, TmaIm2colForm::volume, 16);
  checkLoads(g, TmaIm2colForm::volume, 64);
}

TEST(TmaIm2colForm, DepthSliceLoadsReadTheIm2colMatrix) {
  // Past rank 5: H padding 20, W dilation 12 (offsets 24, corner -21),
  // depth padding 18 with stride 3 and dilation 5, so that whole slices of
  // taps fall in the padding; tiles shorter and longer than a slice.
  ConvGeometry g = ConvGeometry::fromShapes({2, 9, 6, 11, 64}, {3, 3, 3, 64, 8},
                                            FilterLayout::qrscf, {3, 2, 1},
                                            {5, 1, 12}, {18, 4, 20, 1, 3, 0});
  ASSERT_EQ(formOf(g), TmaIm2colForm::depthSlices);
  for (int64_t tileM : {5, 16, 64})
    checkLoads(g, TmaIm2colForm::depthSlices, tileM);
  // The same input as a view into a tensor of 13 slices an image (a
  // separate Q-slice's).
  checkLoads(g, TmaIm2colForm::depthSlices, 16, /*batchSlices=*/13);
}

TEST(TmaIm2colForm, RandomDepthSliceGeometries) {
  std::mt19937_64 rng(11);
  auto pick = [&](int64_t lo, int64_t hi) {
    return lo + int64_t(rng() % uint64_t(hi - lo + 1));
  };
  int checked = 0;
  while (checked < 60) {
    ConvGeometry g;
    g.batch = pick(1, 2);
    g.channels = 64;
    g.filters = 8;
    for (unsigned axis = 0; axis < 3; ++axis) {
      g.window[axis] = pick(1, 3);
      g.strides[axis] = pick(1, axis == kDepth ? 10 : 4);
      g.dilations[axis] = pick(1, axis == kDepth ? 20 : 9);
      g.padLow[axis] = pick(0, 24);
      g.padHigh[axis] = pick(0, 24);
      g.inputSize[axis] = pick(1, 9);
    }
    if (g.validate() || formOf(g) != TmaIm2colForm::depthSlices)
      continue;
    checkLoads(g, TmaIm2colForm::depthSlices, pick(1, 3) * 8);
    ++checked;
  }
}

} // namespace
