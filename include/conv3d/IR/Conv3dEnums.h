//===- Conv3dEnums.h - conv3d enumerations ----------------------*- C++ -*-===//
//
// Plain enums (filter layout, activation, K order, store mode) shared by the
// IR, the geometry type and the runtime; no MLIR IR headers needed.
//
//===----------------------------------------------------------------------===//

#ifndef CONV3D_IR_CONV3DENUMS_H
#define CONV3D_IR_CONV3DENUMS_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/DenseMapInfo.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/LogicalResult.h"
#include "llvm/Support/raw_ostream.h"
#include <optional>

#include "conv3d/IR/Conv3dEnums.h.inc"

#endif // CONV3D_IR_CONV3DENUMS_H
