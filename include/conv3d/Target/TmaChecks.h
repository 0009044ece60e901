//===- TmaChecks.h - what the TMA-fed kernels can load ----------*- C++ -*-===//
//
// The checks the TMA-fed families (sm90-im2col, sm90-halo, sm100) share:
// their canImplement is made of these, and the lowerings check their i32
// tile indices with tileIndexProblem once the scheduler has counted tiles.
//
//===----------------------------------------------------------------------===//

#ifndef CONV3D_TARGET_TMACHECKS_H
#define CONV3D_TARGET_TMACHECKS_H

#include "conv3d/Target/KernelFamily.h"

namespace mlir::conv3d {

/// Why the TMA im2col kernel of `kernel` (sm90: wgmma, sm100: tcgen05)
/// cannot compute a convolution, or none: operand types, the K-major
/// filter, tile quantization (the sm90 kernel takes blocks that lie inside
/// one of its K steps: 16, 32 or 64 dividing C; the sm100 kernel none), C
/// of at least one 64-channel box, and the im2col descriptor's limits (per
/// depth slice on sm90 only).
std::optional<std::string>
tmaIm2colProblem(const ConvGeometry &geometry, FilterLayout layout,
                 Type elementType, std::optional<int64_t> tileQuantBlockSize,
                 Target kernel);

/// Why the sm90 halo mainloop cannot compute a convolution, or none (the
/// operand checks; its plan checks the tile configuration). Tiled TMA takes
/// any padding and dilation, so unlike the im2col mainloop it takes C from
/// 32 up (channel blocks of 32 or 64) and geometries outside TMA im2col's
/// corner ranges.
std::optional<std::string> haloProblem(const ConvGeometry &geometry,
                                       FilterLayout layout, Type elementType,
                                       bool quantizesInTile);

/// Why TMA cannot load the memref operands `layouts` describes, or none:
/// 16-byte aligned offsets and strides, a history of static depth, and the
/// strides per-depth-slice views need.
std::optional<std::string> tmaLayoutProblem(const ConvProblem &problem,
                                            const OperandLayouts &layouts);

/// Why `numTiles` tiles over M rows (plus a tile of `tileM`) do not fit the
/// TMA kernels' i32 tile indices and rows, or none.
std::optional<std::string> tileIndexProblem(const ConvGeometry &geometry,
                                            int64_t tileM, int64_t numTiles);

/// The channel count the TMA kernels see for `problem` when C is not a
/// multiple of 8 (TMA strides are multiples of 16 bytes):
/// conv3d-relayout-filter pads the input and the FQRSC filter with zero
/// channels up to the next multiple of 8 where nothing else reads the
/// channels (no history operand, input prologue, NVFP4 quantization or
/// packed filter) and the shape is static. None where nothing is padded.
/// The pass and the tuner's view of a spec both ask this.
std::optional<int64_t> tmaPaddedChannels(const ConvProblem &problem);

/// Whether an sm90 kernel reads `relaidOut`: a problem as
/// conv3d-relayout-filter would leave it (an FQRSC filter, channels padded
/// by tmaPaddedChannels), so that the relayout pays. The im2col family
/// wherever it can implement it (tmaIm2colProblem says where narrow
/// channels pay); else the halo family where it would choose the problem,
/// or where `config` (when given) asks for the halo mainloop. Elsewhere the
/// sm80 kernel reads the operands as they are: a padding pass (a copy of
/// the whole input) or a transpose would cost more than it saves. The halo
/// kernel took C = 45 3x3x3 layers from 0.31-0.58x cuDNN on sm80 to
/// 1.32-1.70x (bench/RESULTS.md, issue 21).
bool sm90ReadsRelaidOut(MLIRContext *context, const ConvProblem &relaidOut,
                        IGemmConfigAttr config);

} // namespace mlir::conv3d

#endif // CONV3D_TARGET_TMACHECKS_H
