//===- StagedTranspose.h - transposing host generics via shared memory -*- C++
//-*-===//
//
// Internal to lib/Conversion (conv3d-lower-host-ops-to-gpu).
//
//===----------------------------------------------------------------------===//

#ifndef CONV3D_LIB_CONVERSION_GPU_STAGEDTRANSPOSE_H
#define CONV3D_LIB_CONVERSION_GPU_STAGEDTRANSPOSE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::conv3d {

/// Lowers each host linalg.generic of `func` marked
/// conv3d.gpu_transpose_dims (and shaped as StagedTranspose.cpp says) to a
/// kernel that stages 32 x 32 tiles in shared memory; leaves the others.
void lowerStagedTransposes(func::FuncOp func);

} // namespace mlir::conv3d

#endif // CONV3D_LIB_CONVERSION_GPU_STAGEDTRANSPOSE_H
