//===- Registration.h - register everything conv3d tools need ---*- C++ -*-===//

#ifndef CONV3D_REGISTRATION_H
#define CONV3D_REGISTRATION_H

namespace mlir {
class DialectRegistry;
class MLIRContext;
} // namespace mlir

namespace mlir::conv3d {

/// The conv3d dialect, every upstream dialect, their interface models and the
/// LLVM IR translations, so that tools and the JIT can parse, transform and
/// translate any module this project produces or accepts.
void registerAllDialects(DialectRegistry &registry);

/// Upstream passes and pipelines plus conv3d's own.
void registerAllPasses();

} // namespace mlir::conv3d

#endif // CONV3D_REGISTRATION_H
