//===- ConfigHeuristics.h - choosing a tile configuration -------*- C++ -*-===//
//
// conv3d-select-config's decisions on a convolution op, over the kernel
// families of the target layer (conv3d/Target/KernelFamily.h), which own
// the heuristics and the "can this kernel take it" checks.
//
//===----------------------------------------------------------------------===//

#ifndef CONV3D_TRANSFORMS_CONFIGHEURISTICS_H
#define CONV3D_TRANSFORMS_CONFIGHEURISTICS_H

#include "conv3d/Geometry/ConvGeometry.h"
#include "conv3d/IR/Conv3dAttrs.h"
#include "conv3d/IR/Conv3dOps.h"
#include "conv3d/Target/KernelFamily.h"
#include "conv3d/Transforms/PassEnums.h"

#include <optional>

namespace mlir::conv3d {

/// The NVFP4 block size of `conv`'s input quantization in the tile load,
/// or none when it has none.
std::optional<int64_t> inputQuantBlockSize(ConvOp conv);

/// The kernel family and configuration of `conv` for `target` (selectKernel
/// on the op's facts, choosing by `policy` under the Q-slice strategy
/// `qslice`: selectUnderQSlice), with a remark on `conv` for each note of the
/// chosen family and for a fallback to another chip's kernel (the sm80
/// kernel where the target's own cannot take the convolution), naming the
/// reason.
KernelSelection
selectKernelForConv(ConvOp conv, Target target,
                    SelectionPolicy policy = SelectionPolicy::CostModel,
                    QSliceStrategy qslice = QSliceStrategy::Auto);

/// Prepares a selection for `problem` under the Q-slice strategy `strategy`
/// and returns the policy to choose by. A forced `fused` strategy reorders
/// the chosen configuration's K loop (k_order = qslice_outer): `problem`
/// then needs that order (ConvProblem::needsQSliceOrder, which the sm90 halo
/// mainloop refuses), and the choice is the rules', whose configurations
/// take it, where the cost model's split-K candidates do not. Other
/// strategies keep `policy`. conv3d-qslice, conv3d-select-config and explain
/// ask this.
SelectionPolicy selectUnderQSlice(ConvProblem &problem, QSliceStrategy strategy,
                                  SelectionPolicy policy);

/// selectKernelForConv's configuration.
IGemmConfigAttr
selectIGemmConfigForConv(ConvOp conv, Target target,
                         SelectionPolicy policy = SelectionPolicy::CostModel,
                         QSliceStrategy qslice = QSliceStrategy::Auto);

/// Why `config` cannot serve `geometry` (a message), or none. Checks what
/// the verifier cannot know in general: quantization block alignment and
/// the K order / split-K combination.
std::optional<std::string>
checkConfigForConv(IGemmConfigAttr config, const ConvGeometry &geometry,
                   std::optional<int64_t> quantBlockSize);

} // namespace mlir::conv3d

#endif // CONV3D_TRANSFORMS_CONFIGHEURISTICS_H
