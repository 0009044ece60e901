//===- ConfigHeuristics.h - choosing a tile configuration -------*- C++ -*-===//

#ifndef CONV3D_TRANSFORMS_CONFIGHEURISTICS_H
#define CONV3D_TRANSFORMS_CONFIGHEURISTICS_H

#include "conv3d/Geometry/ConvGeometry.h"
#include "conv3d/IR/Conv3dAttrs.h"
#include "conv3d/IR/Conv3dOps.h"
#include "conv3d/Pipelines/Pipelines.h"

#include <optional>

namespace mlir::conv3d {

/// The heuristic tile configuration of a convolution for `target`. With
/// NVFP4 input quantization, tile_k is a multiple of the block size (tile
/// loads quantize whole blocks).
IGemmConfigAttr selectIGemmConfig(MLIRContext *context,
                                  const ConvGeometry &geometry, Target target,
                                  std::optional<int64_t> quantBlockSize);

/// The sm90 kernel's ring depth for a tile: as many stages as fit beside
/// the epilogue's staging (in column halves or quarters when whole rows
/// would leave fewer than 4), between 2 and 6. SM90KernelPlan splits the
/// staging the same way.
int64_t sm90StagesFor(int64_t tileM, int64_t tileN, KernelSchedule schedule);

/// What a tuner times for a convolution on `target`, besides the heuristic
/// configuration (which it always times first, and which is not repeated
/// here): variations of the tile shape, pipeline depth and schedule for the
/// kernel that runs it (the sm80 kernel where the sm90 kernel cannot take
/// the convolution, with `kernel` set accordingly). A candidate may still be
/// refused by a kernel plan (e.g. shared memory): the tuner skips those.
SmallVector<IGemmConfigAttr>
tuningCandidates(MLIRContext *context, const ConvGeometry &geometry,
                 Target target, FilterLayout layout, Type elementType,
                 std::optional<int64_t> quantBlockSize, bool quantizesInTile);

/// Why the TMA im2col kernel of `kernel` (sm90: wgmma, sm100: tcgen05)
/// cannot compute a convolution, or none: the host-side `canImplement` of
/// those kernels, made where the configuration is chosen so that a
/// convolution they cannot take gets an sm80 configuration instead.
/// `tileQuantBlockSize`: the input is NVFP4-quantized in the tile load with
/// blocks of that size (the sm90 kernel takes blocks that lie inside one of
/// its K steps: 16, 32 or 64 dividing C; the sm100 kernel none).
std::optional<std::string>
getTmaKernelProblem(const ConvGeometry &geometry, FilterLayout layout,
                    Type elementType, std::optional<int64_t> tileQuantBlockSize,
                    Target kernel);

/// Why the sm90 kernel's halo mainloop (mainloop = halo) cannot compute a
/// convolution, or none (the operand checks; SM90KernelPlan::build checks
/// the tile configuration). Tiled TMA takes any padding and dilation, so
/// unlike the im2col mainloop it takes C from 32 up (channel blocks of 32
/// or 64) and geometries outside TMA im2col's corner ranges.
std::optional<std::string> getHaloKernelProblem(const ConvGeometry &geometry,
                                                FilterLayout layout,
                                                Type elementType,
                                                bool quantizesInTile);

/// The NVFP4 block size of `conv`'s input quantization in the tile load,
/// or none when it has none.
std::optional<int64_t> inputQuantBlockSize(ConvOp conv);

/// The heuristic configuration of `conv` for `target`, falling back to the
/// sm80 kernel (with a remark naming the reason) when the target's kernel
/// cannot take it.
IGemmConfigAttr selectIGemmConfigForConv(ConvOp conv, Target target);

/// `config` for the kernel family `kernel`.
IGemmConfigAttr withKernel(IGemmConfigAttr config, Target kernel);

/// Why `config` cannot serve `geometry` (a message), or none. Checks what
/// the verifier cannot know in general: quantization block alignment and
/// the K order / split-K combination.
std::optional<std::string>
checkConfigForConv(IGemmConfigAttr config, const ConvGeometry &geometry,
                   std::optional<int64_t> quantBlockSize);

} // namespace mlir::conv3d

#endif // CONV3D_TRANSFORMS_CONFIGHEURISTICS_H
