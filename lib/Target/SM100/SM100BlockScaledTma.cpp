//===- SM100BlockScaledTma.cpp - real NVFP4 sm100 TMA maps ----------------===//

#include "conv3d/Target/SM100/SM100BlockScaledTma.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir::conv3d;
using namespace mlir::conv3d::sm100;
using namespace mlir::conv3d::sm100::nvfp4;

int64_t PackedTensorMap::boxBytes() const {
  int64_t bytes = 1;
  for (int64_t size : box)
    bytes *= size;
  return bytes;
}

/// The NDHWC activation's map with `pixelBytes` bytes a voxel, boxes of
/// `boxBytes` a pixel and `rows` pixels.
static PackedTensorMap activationMap(const ConvGeometry &g, int64_t pixelBytes,
                                     int64_t boxBytes, int64_t rows,
                                     bool swizzle) {
  PackedTensorMap map;
  map.im2col = true;
  map.globalDim = {pixelBytes, g.inputSize[2], g.inputSize[1], g.inputSize[0],
                   g.batch};
  int64_t stride = pixelBytes;
  for (unsigned dim = 1; dim < 5; ++dim) {
    map.globalStrides.push_back(stride);
    stride *= map.globalDim[dim];
  }
  map.box = {boxBytes, rows};
  map.swizzle128B = swizzle;
  std::array<int64_t, 3> lower = g.tmaIm2colLowerCorner(),
                         upper = g.tmaIm2colUpperCorner();
  for (unsigned axis = 0; axis < 3; ++axis) {
    map.lowerCorner[axis] = lower[2 - axis];
    map.upperCorner[axis] = upper[2 - axis];
    map.elementStrides[axis + 1] = g.strides[2 - axis];
  }
  return map;
}

/// The FQRSC filter's map as [F][taps][tapBytes], boxes of `boxBytes` of
/// one tap of `rows` filters.
static PackedTensorMap filterMap(const ConvGeometry &g, int64_t taps,
                                 int64_t tapBytes, int64_t boxBytes,
                                 int64_t rows, bool swizzle) {
  PackedTensorMap map;
  map.globalDim = {tapBytes, taps, g.filters};
  map.globalStrides = {tapBytes, taps * tapBytes};
  map.box = {boxBytes, 1, rows};
  map.swizzle128B = swizzle;
  return map;
}

std::optional<std::string>
BlockScaledTmaPlan::build(const ConvGeometry &g, const BlockScaledPlan &plan,
                          BlockScaledTmaPlan &tma) {
  // BlockScaledPlan::build made C a multiple of 32: rows of codes are
  // multiples of 16 bytes; scales come in padded rows (scaleRowStride).
  // What is left are the im2col limits, as for bf16 (elementBytes only
  // enters the row check).
  if (std::optional<std::string> problem =
          g.tmaIm2colProblem(/*elementBytes=*/2))
    return problem;
  int64_t codeBytes = g.channels / 2, scaleBytes = scaleRowStride(g.channels);
  int64_t taps = g.window[0] * g.window[1] * g.window[2];
  tma.activationCodes =
      activationMap(g, codeBytes, kRowBytes, plan.tileM, /*swizzle=*/true);
  tma.activationScales = activationMap(g, scaleBytes, kScaleRowBytes,
                                       plan.tileM, /*swizzle=*/false);
  tma.filterCodes =
      filterMap(g, taps, codeBytes, kRowBytes, plan.tileN, /*swizzle=*/true);
  tma.filterScales = filterMap(g, taps, scaleBytes, kScaleRowBytes, plan.tileN,
                               /*swizzle=*/false);
  tma.stepBytes = tma.activationCodes.boxBytes() +
                  tma.activationScales.boxBytes() + tma.filterCodes.boxBytes() +
                  tma.filterScales.boxBytes();
  return std::nullopt;
}
