//===- Registration.h - what this host compiler registers -------*- C++ -*-===//

#ifndef HOST_COMPILER_REGISTRATION_H
#define HOST_COMPILER_REGISTRATION_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

/// The host's own dialects (func, linalg, tensor, arith) plus conv3d's
/// dialect, the interface models its pipelines need, and its passes:
/// nothing else of MLIR's.
void registerHostCompiler(mlir::DialectRegistry &registry);

#endif // HOST_COMPILER_REGISTRATION_H
