//===- SM100BlockScaledTma.h - real NVFP4 on sm100: the TMA loads -*- C++ -*-//
//
// The TMA tensor maps of the block-scaled sm100 producer (real NVFP4,
// SM100BlockScaledPlan.h), decided on the host from ConvGeometry: per K step
// (one filter tap x 256 channels) four boxes over the packed bytes of
// conv3d.pack_nvfp4 (CU_TENSOR_MAP_DATA_TYPE_UINT8), on the bf16 kernel's
// coordinates:
//
//   activation codes   rank-5 im2col over [N][D][H][W][C/2], 128 bytes
//                      (256 channels) a pixel, tile_m pixels, 128-byte
//                      swizzle: the ring's A rows;
//   activation scales  rank-5 im2col over [N][D][H][W][stride], 16 bytes
//                      (the step's 16 scales) a pixel, tile_m pixels, no
//                      swizzle, the same corners, coordinates and offsets;
//   filter codes       rank-3 tiled over [F][taps][C/2], box 128 x 1 x
//                      tile_n, 128-byte swizzle: the ring's B rows;
//   filter scales      rank-3 tiled over [F][taps][stride], box 16 x 1 x
//                      tile_n.
//
// Each box is bounded by its pixel's (tap's) bytes, so the last channel
// block of a C that is not a multiple of 256 reads zeros past C (zero codes
// decode to 0), never the next pixel. TMA global strides are multiples of
// 16 bytes: the codes' (C / 2 bytes a pixel) need C a multiple of 32, and
// the scales are read from rows padded to 16 bytes a channel block
// (scaleRowStride: C / 16 rounded up to a multiple of 16), zeros past the
// C / 16 scales. The prepass writes the activation's so (conv3d.pack_nvfp4
// with padded scale rows); the packed filter's dense [F][taps][C / 16]
// scales are copied into padded rows by a prepass of the convolution when
// C is not a multiple of 256 (LowerBlockScaledToSM100.cpp).
//
// scripts/gpu/tma_fp4_im2col.cu encodes the two im2col maps exactly so and
// checks the boxes byte for byte on an sm_90 GPU (TMA is the same unit on
// sm100). The scale boxes land as 16-byte rows, one per GEMM row, in the
// stage's scale areas; the kernel's MMA warp permutes them in place into
// the MMA's scale atoms (BlockScaledPlan::scaleWordAtomOffset) before
// tcgen05.cp (BlockScaledKernel.cpp; LowerBlockScaledToSM100.cpp encodes
// the maps on the host as UINT8 maps).
//
//===----------------------------------------------------------------------===//

#ifndef CONV3D_TARGET_SM100_SM100BLOCKSCALEDTMA_H
#define CONV3D_TARGET_SM100_SM100BLOCKSCALEDTMA_H

#include "conv3d/Target/SM100/SM100BlockScaledPlan.h"

#include "llvm/ADT/SmallVector.h"

#include <array>

namespace mlir::conv3d::sm100::nvfp4 {

/// Bytes of one step's scales of one GEMM row (256 channels / 16).
inline constexpr int64_t kScaleRowBytes = kChannelBlock / kScaleBlock;

/// The bytes between the scale rows of consecutive pixels (filter taps) the
/// kernel reads: a pixel's C / 16 scales padded to whole channel blocks,
/// so that the row stride is a multiple of 16 bytes as TMA requires (C / 16
/// itself when C is a multiple of 256).
inline int64_t scaleRowStride(int64_t channels) {
  return kScaleRowBytes * ((channels + kChannelBlock - 1) / kChannelBlock);
}

/// One TMA tensor map over packed bytes, dimensions innermost first.
struct PackedTensorMap {
  bool im2col = false;
  /// Sizes (dimension 0 in bytes) and the byte strides of dimensions 1 ..
  /// rank - 1 (cuTensorMapEncode*'s globalDim and globalStrides).
  llvm::SmallVector<int64_t, 5> globalDim;
  llvm::SmallVector<int64_t, 4> globalStrides;
  /// im2col: {bytes a pixel (channelsPerPixel), pixels (pixelsPerColumn)};
  /// tiled: the box's sizes (boxDim).
  llvm::SmallVector<int64_t, 5> box;
  bool swizzle128B = false;
  /// im2col only, W first: the bounding box of the base pixels
  /// (pixelBoxLowerCorner, pixelBoxUpperCorner) and the traversal strides
  /// of dimensions 0 .. 4 (elementStrides), as for bf16.
  std::array<int64_t, 3> lowerCorner = {}, upperCorner = {};
  std::array<int64_t, 5> elementStrides = {1, 1, 1, 1, 1};

  /// The bytes one load delivers (out-of-bounds fill included): what the
  /// stage's full barrier expects of it.
  int64_t boxBytes() const;
};

struct BlockScaledTmaPlan {
  PackedTensorMap activationCodes, activationScales, filterCodes, filterScales;
  /// The bytes of one K step's four loads.
  int64_t stepBytes = 0;

  /// The maps for `g` and `plan` (scales in rows of scaleRowStride(C)
  /// bytes), or why TMA cannot load its packed operands: the im2col limits
  /// of ConvGeometry::tmaIm2colProblem (corners, offsets, element
  /// strides). BlockScaledPlan::build made C a multiple of 32.
  static std::optional<std::string> build(const ConvGeometry &g,
                                          const BlockScaledPlan &plan,
                                          BlockScaledTmaPlan &tma);

  /// The dimension-0 coordinates (bytes) of channel block `block` in the
  /// code and scale maps; the other coordinates are the bf16 kernel's.
  static int64_t codesColumn(int64_t block) { return block * kRowBytes; }
  static int64_t scalesColumn(int64_t block) { return block * kScaleRowBytes; }
};

} // namespace mlir::conv3d::sm100::nvfp4

#endif // CONV3D_TARGET_SM100_SM100BLOCKSCALEDTMA_H
