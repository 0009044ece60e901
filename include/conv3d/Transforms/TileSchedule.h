//===- TileSchedule.h - which K tiles a block of output rows needs -*- C++
//-*-===//
//
// Shared by the implicit-GEMM loop nest (run on the CPU) and the GPU kernels,
// so that both skip exactly the same work.
//
//===----------------------------------------------------------------------===//

#ifndef CONV3D_TRANSFORMS_TILESCHEDULE_H
#define CONV3D_TRANSFORMS_TILESCHEDULE_H

#include "conv3d/Geometry/ConvGeometry.h"

#include "mlir/IR/Builders.h"

namespace mlir::conv3d {

/// i1: whether some row m in [m0, min(m0 + tileM, M)) has an output depth in
/// [lo, hi). Rows of one batch are ordered by depth; a tile that spans two
/// batches is conservatively active.
Value emitTileReadsDepthRange(OpBuilder &b, Location loc,
                              const ConvGeometry &geometry, int64_t tileM,
                              Value m0, int64_t lo, int64_t hi);

/// The depth slices [begin, end) an M tile starting at m0 reads outside the
/// padding halo. The active slices are contiguous: both ends of a slice's
/// valid output range decrease with q.
std::pair<Value, Value> emitActiveSliceRange(OpBuilder &b, Location loc,
                                             const ConvGeometry &geometry,
                                             int64_t tileM, Value m0);

} // namespace mlir::conv3d

#endif // CONV3D_TRANSFORMS_TILESCHEDULE_H
