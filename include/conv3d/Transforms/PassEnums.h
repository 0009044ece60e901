//===- PassEnums.h - the choices the conv3d passes take ---------*- C++ -*-===//
//
// QSliceStrategy, QuantPlacement, ProloguePlacement, NVFP4Mode and
// WgradFoldPolicy with their string tables (stringifyX / symbolizeX), from
// PassEnums.td; no MLIR IR headers, so the pipelines' options and the
// runtime include it cheaply.
//
//===----------------------------------------------------------------------===//

#ifndef CONV3D_TRANSFORMS_PASSENUMS_H
#define CONV3D_TRANSFORMS_PASSENUMS_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/DenseMapInfo.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>

#include "conv3d/Transforms/PassEnums.h.inc"

#endif // CONV3D_TRANSFORMS_PASSENUMS_H
