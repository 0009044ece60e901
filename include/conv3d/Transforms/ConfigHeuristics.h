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

/// Why the TMA im2col kernel of `kernel` (sm90: wgmma, sm100: tcgen05)
/// cannot compute a convolution, or none: the host-side `canImplement` of
/// those kernels, made where the configuration is chosen so that a
/// convolution they cannot take gets an sm80 configuration instead.
std::optional<std::string>
getTmaKernelProblem(const ConvGeometry &geometry, FilterLayout layout,
                    Type elementType, bool quantizesInTile, Target kernel);

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
