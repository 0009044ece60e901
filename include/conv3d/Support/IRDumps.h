//===- IRDumps.h - IR in error messages only on request ---------*- C++ -*-===//
//
// A compile error names its problem in one line; the IR of the operation it
// is about (MLIR's "see current operation" note, the generic form of often
// pages of IR) helps the compiler's developers, not its users. Every tool
// and the engine (so the C API and Python) leave it out unless the user
// asks with one environment variable.
//
//===----------------------------------------------------------------------===//

#ifndef CONV3D_SUPPORT_IRDUMPS_H
#define CONV3D_SUPPORT_IRDUMPS_H

#include "llvm/ADT/StringRef.h"

namespace mlir::conv3d {

/// Set to 1 to attach the failing operation's IR to compile errors.
inline constexpr llvm::StringLiteral kDumpIROnErrorVariable =
    "CONV3D_DUMP_IR_ON_ERROR";

/// Whether $CONV3D_DUMP_IR_ON_ERROR is 1.
bool dumpIROnErrorRequested();

/// The line added to a compile error whose IR was left out, naming the
/// variable that brings it back.
llvm::StringRef dumpIROnErrorHint();

} // namespace mlir::conv3d

#endif // CONV3D_SUPPORT_IRDUMPS_H
