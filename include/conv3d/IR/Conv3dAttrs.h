//===- Conv3dAttrs.h - conv3d attributes ------------------------*- C++ -*-===//

#ifndef CONV3D_IR_CONV3DATTRS_H
#define CONV3D_IR_CONV3DATTRS_H

#include "conv3d/IR/Conv3dEnums.h"
#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"

#define GET_ATTRDEF_CLASSES
#include "conv3d/IR/Conv3dAttrs.h.inc"

namespace mlir::conv3d {

/// The NVFP4 block sizes `spec/nvfp4.md` allows.
bool isValidNVFP4BlockSize(int64_t blockSize);

/// Parses a tile configuration written as `key=value` pairs separated by
/// commas (`tile_m=64,tile_n=32,tile_k=16,stages=3,k_order=qslice_outer`),
/// the form taken by pass options and `conv3d-run --config`. On failure,
/// returns null and sets `error` to a message naming the problem.
IGemmConfigAttr parseIGemmConfig(MLIRContext *context, StringRef text,
                                 std::string &error);

/// The `key=value,...` text of `config` that parseIGemmConfig reads back as
/// the same attribute (parameters at their defaults are left out), for
/// options, logs and the tuner's cache entries.
std::string formatIGemmConfig(IGemmConfigAttr config);

} // namespace mlir::conv3d

#endif // CONV3D_IR_CONV3DATTRS_H
