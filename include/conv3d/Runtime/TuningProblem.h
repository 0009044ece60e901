//===- TuningProblem.h - a spec as the kernel families see it ---*- C++ -*-===//

#ifndef CONV3D_RUNTIME_TUNINGPROBLEM_H
#define CONV3D_RUNTIME_TUNINGPROBLEM_H

#include "conv3d/Runtime/ConvSpec.h"
#include "conv3d/Target/KernelFamily.h"

namespace mlir::conv3d {

/// The convolution of `spec` as its kernels see it when the tuner times
/// candidates for it (Tuner.cpp), or conv3d-run --list-configs lists and
/// predicts them.
ConvProblem tuningProblem(MLIRContext *context, const ConvSpec &spec,
                          const CompileOptions &options);

} // namespace mlir::conv3d

#endif // CONV3D_RUNTIME_TUNINGPROBLEM_H
