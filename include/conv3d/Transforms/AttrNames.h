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

} // namespace mlir::conv3d

#endif // CONV3D_TRANSFORMS_ATTRNAMES_H
