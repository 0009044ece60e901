//===- Conv3dDialectDoc.td - the dialect's reference page --*- tablegen -*-===//
//
// Only for `mlir-tblgen -gen-dialect-doc` (docs/reference/Conv3dDialect.md):
// the graph-level ops, the tile ops and the attributes in one page.
//
//===----------------------------------------------------------------------===//

include "conv3d/IR/Conv3dOps.td"
include "conv3d/IR/Conv3dTileOps.td"
