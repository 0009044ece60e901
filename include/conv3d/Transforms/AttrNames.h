//===- AttrNames.h - discardable attributes the passes set ------*- C++ -*-===//
//
// Light on purpose: the runtime reads these without the passes' headers.
//
//===----------------------------------------------------------------------===//

#ifndef CONV3D_TRANSFORMS_ATTRNAMES_H
#define CONV3D_TRANSFORMS_ATTRNAMES_H

#include "llvm/ADT/StringRef.h"

namespace mlir::conv3d {

/// The module attribute conv3d-check-allocations records (the first pass
/// of the host-to-LLVM pipeline): the bytes of all static host allocations
/// of the module, an i64, which the engine checks against the machine's
/// memory before running the code.
inline constexpr llvm::StringLiteral kHostAllocationBytesAttrName =
    "conv3d.host_allocation_bytes";

/// On a linalg.generic that gathers a transpose (conv3d-lower-conv-gradients'
/// weight-gradient operands): array<i64: a, b>, a the dimension along which
/// its reads are contiguous, b the output's innermost.
/// conv3d-lower-host-ops-to-gpu stages such a generic's 32 x 32 tiles of
/// (a, b) in shared memory, so that both its reads and its writes are
/// coalesced; every other lowering ignores it.
inline constexpr llvm::StringLiteral kGpuTransposeDimsAttrName =
    "conv3d.gpu_transpose_dims";

} // namespace mlir::conv3d

#endif // CONV3D_TRANSFORMS_ATTRNAMES_H
