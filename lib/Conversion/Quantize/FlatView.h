//===- FlatView.h - 1-D views for the prepass loops -------------*- C++ -*-===//
//
// The prepass loops (conv3d-quantize-to-loops) walk their contiguous
// operands as flat buffers.
//
//===----------------------------------------------------------------------===//

#ifndef CONV3D_LIB_CONVERSION_QUANTIZE_FLATVIEW_H
#define CONV3D_LIB_CONVERSION_QUANTIZE_FLATVIEW_H

#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::conv3d {

/// `memref` (identity layout) as a 1-D view of its elements.
inline Value flatView(OpBuilder &b, Location loc, Value memref) {
  auto type = cast<MemRefType>(memref.getType());
  if (type.getRank() == 1)
    return memref;
  SmallVector<ReassociationIndices> all(1);
  for (int64_t d = 0; d < type.getRank(); ++d)
    all[0].push_back(d);
  return memref::CollapseShapeOp::create(b, loc, memref, all);
}

} // namespace mlir::conv3d

#endif // CONV3D_LIB_CONVERSION_QUANTIZE_FLATVIEW_H
