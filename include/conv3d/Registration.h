//===- Registration.h - registering conv3d with a host ----------*- C++ -*-===//
//
// Two levels. A host compiler registers only what conv3d adds:
//
//   mlir::DialectRegistry registry;
//   registry.insert<func::FuncDialect, linalg::LinalgDialect, ...>(); // its
//   own mlir::conv3d::registerConv3dDialects(registry);
//   mlir::conv3d::registerConv3dPipelineDependencies(registry);
//   mlir::conv3d::registerConv3dPasses();
//
// The tools (conv3d-opt, the engine) register everything, upstream's too.
//
//===----------------------------------------------------------------------===//

#ifndef CONV3D_REGISTRATION_H
#define CONV3D_REGISTRATION_H

namespace mlir {
class DialectRegistry;
class MLIRContext;
} // namespace mlir

namespace mlir::conv3d {

/// The conv3d dialect and its interface models (bufferization of its ops),
/// and nothing of upstream's.
void registerConv3dDialects(DialectRegistry &registry);

/// The upstream interface models and dialect extensions the conv3d pipelines
/// rely on, for a host that does not register all of MLIR's: bufferization
/// and buffer-deallocation models of arith, cf, func, linalg, scf, tensor,
/// vector and gpu; memref allocation and value-bounds models; the
/// ConvertToLLVM interfaces of the dialects the pipelines leave for
/// `convert-to-llvm`; the LLVM IR translations of builtin, llvm, gpu and
/// nvvm (for the JIT and the GPU binary) and the NVVM target attribute.
/// Registering them twice (a host that already has some) is harmless.
void registerConv3dPipelineDependencies(DialectRegistry &registry);

/// conv3d's passes (`conv3d-*`) and pipelines (`conv3d-cpu-pipeline`,
/// `conv3d-gpu-pipeline`, `conv3d-graph-pipeline`), and the upstream pass
/// groups its pipelines are written with (transforms, conversions,
/// bufferization, linalg, scf, memref, arith, gpu), which the pipeline
/// builders parse by name.
void registerConv3dPasses();

/// The conv3d dialect, every upstream dialect, their interface models and the
/// LLVM IR translations, so that tools and the JIT can parse, transform and
/// translate any module this project produces or accepts.
void registerAllDialects(DialectRegistry &registry);

/// Upstream passes and pipelines plus conv3d's own.
void registerAllPasses();

} // namespace mlir::conv3d

#endif // CONV3D_REGISTRATION_H
