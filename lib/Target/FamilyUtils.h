//===- FamilyUtils.h - what the kernel families share -----------*- C++ -*-===//
//
// Internal to lib/Target: tile arithmetic the heuristics and the candidate
// lists of several families use, and the refusals they share.
//
//===----------------------------------------------------------------------===//

#ifndef CONV3D_LIB_TARGET_FAMILYUTILS_H
#define CONV3D_LIB_TARGET_FAMILYUTILS_H

#include "conv3d/Target/KernelFamily.h"

namespace mlir::conv3d::families {

/// The multiprocessors the heuristics balance tiles over (an H100's): the
/// heuristics were measured there (bench/RESULTS.md).
inline constexpr int64_t kH100SMs = 132;

inline int64_t roundUp(int64_t value, int64_t multiple) {
  return ceilDiv(value, multiple) * multiple;
}

/// N tile for a GPU target: F itself when it fits (rounded up to the MMA's
/// N granularity of 8), else the largest multiple of 32 up to `maxTile`
/// that divides F (96, 128, 192...: no ragged last tile), else `maxTile`.
int64_t pickTileN(int64_t filters, int64_t maxTile);

/// N tiles up to `maxTile` worth timing for F = `filters`: F itself (when
/// it fits), the largest multiples of 32 dividing F up to 128 and up to
/// `maxTile`, and 64.
SmallVector<int64_t> candidateTileNs(int64_t filters, int64_t maxTile);

/// The sm90 kernel's ring depth for a tile: as many stages as fit beside
/// the epilogue's staging (in column halves or quarters when whole rows
/// would leave fewer than 4), between 2 and 6. SM90KernelPlan splits the
/// staging the same way.
int64_t sm90StagesFor(int64_t tileM, int64_t tileN, KernelSchedule schedule);

/// A configuration of the implicit-GEMM attribute with tile_k rounded up to
/// the NVFP4 block size of `problem` (tile loads quantize whole blocks).
IGemmConfigAttr
makeConfig(MLIRContext *context, const ConvProblem &problem, int64_t tileM,
           int64_t tileN, int64_t tileK, int64_t stages, int64_t warpsM,
           int64_t warpsN, Target kernel,
           KernelSchedule schedule = KernelSchedule::cooperative,
           Mainloop mainloop = Mainloop::im2col);

/// Why a family other than the block-scaled one cannot take a packed NVFP4
/// filter, or none.
std::optional<std::string> packedFilterProblem(const ConvProblem &problem);

/// Why a tensor-core kernel that computes dense convolutions only cannot
/// take a grouped one (groups > 1), or none: computed as dense, a grouped
/// convolution would read every channel.
std::optional<std::string> groupsProblem(const ConvProblem &problem);

/// What every TMA family (sm90-im2col, sm90-halo, sm100) refuses before its
/// own checks, or none: a packed filter, a grouped convolution, an input
/// prologue.
std::optional<std::string> tmaOperandProblem(const ConvProblem &problem);

/// Why the TMA im2col kernel of `kernel` (sm90-im2col, sm100) cannot take
/// `problem`, or none: tmaOperandProblem, the operand and descriptor checks
/// of tmaIm2colProblem and, on memrefs, the layouts.
std::optional<std::string> tmaIm2colFamilyProblem(const ConvProblem &problem,
                                                  Target kernel);

} // namespace mlir::conv3d::families

#endif // CONV3D_LIB_TARGET_FAMILYUTILS_H
