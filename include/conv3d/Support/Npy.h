//===- Npy.h - NumPy .npy reader and writer ---------------------*- C++ -*-===//
//
// Just enough of the .npy format (versions 1.0, 2.0 and 3.0) to exchange
// float tensors with Python: little-endian float32 or float64, C order, any
// rank. No dependency beyond LLVM Support.
//
//===----------------------------------------------------------------------===//

#ifndef CONV3D_SUPPORT_NPY_H
#define CONV3D_SUPPORT_NPY_H

#include "conv3d/Support/HostTensor.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <vector>

namespace mlir::conv3d {

/// Reads a '<f4' or '<f8' C-order array and converts every value to
/// `target` with one round-to-nearest-even step (f8 data is never rounded
/// through f32 first).
llvm::Expected<HostTensor> readNpy(llvm::StringRef path, ElementType target);

/// The shape in the header of a .npy file (its data is not read).
llvm::Expected<std::vector<int64_t>> readNpyShape(llvm::StringRef path);

/// Writes `values` (row-major, numElementsOf(shape) of them) as '<f4'.
llvm::Error writeNpyF32(llvm::StringRef path, const std::vector<int64_t> &shape,
                        const std::vector<float> &values);
/// Writes `tensor` as '<f4' (bf16 and f16 values convert exactly).
llvm::Error writeNpyF32(llvm::StringRef path, const HostTensor &tensor);

} // namespace mlir::conv3d

#endif // CONV3D_SUPPORT_NPY_H
