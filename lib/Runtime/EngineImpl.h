//===- EngineImpl.h - the engine's state (internal) -------------*- C++ -*-===//
//
// Shared by Engine.cpp (compilation and the caches), Tuner.cpp (tuned
// compilation) and Explain.cpp (the kernel choice, explained).
//
//===----------------------------------------------------------------------===//

#ifndef CONV3D_LIB_RUNTIME_ENGINEIMPL_H
#define CONV3D_LIB_RUNTIME_ENGINEIMPL_H

#include "conv3d/Registration.h"
#include "conv3d/Runtime/Engine.h"
#include "conv3d/Support/IRDumps.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringMap.h"

#include <functional>
#include <mutex>

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace mlir::conv3d {

struct Engine::Impl {
  static DialectRegistry makeRegistry() {
    DialectRegistry registry;
    registerAllDialects(registry);
    return registry;
  }

  explicit Impl(CacheOptions cacheOptions)
      : context(makeRegistry()), cacheOptions(std::move(cacheOptions)) {
    // Errors carry the IR of the operation they are about only on request.
    context.printOpOnDiagnostic(dumpIROnErrorRequested());
  }

  MLIRContext context;
  CacheOptions cacheOptions;
  /// One compilation at a time on the shared context; also guards the maps
  /// and the progress handler.
  std::mutex mutex;
  /// Compiled convolutions by cache key.
  llvm::StringMap<std::shared_ptr<const CompiledConv>> memory;
  /// Tuned configurations by tuning key (Tuner.cpp); "" = the heuristic's.
  llvm::StringMap<std::string> tuned;
  std::function<void(llvm::StringRef)> progress;
};

struct ConvProblem;

/// Whether `options` name a target and chip that can be compiled, and for
/// `runs`, run (Engine.cpp).
llvm::Error checkEngineTarget(const CompileOptions &options, bool runs);

/// Runs the passes `build` adds on `module`; on failure the error is `what`
/// followed by the diagnostics (Engine.cpp).
llvm::Error runEnginePipeline(MLIRContext &context, ModuleOp module,
                              llvm::function_ref<void(OpPassManager &)> build,
                              llvm::StringRef what);

} // namespace mlir::conv3d

#endif // CONV3D_LIB_RUNTIME_ENGINEIMPL_H
