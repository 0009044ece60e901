//===- Engine.h - compile convolutions once, run them many times -*- C++ -*-===//
//
// The C++ API of conv3d-mlir:
//
//   mlir::conv3d::Engine engine;
//   ConvSpec spec = ...;                          // geometry, dtypes, epilogue
//   auto conv = engine.compile(spec, options);    // llvm::Expected<...>
//   if (!conv) { report(conv.takeError()); ... }
//   if (llvm::Error e = (*conv)->run(args)) ...   // many times
//
// Errors come back as llvm::Error with a message; nothing aborts.
//
//===----------------------------------------------------------------------===//

#ifndef CONV3D_RUNTIME_ENGINE_H
#define CONV3D_RUNTIME_ENGINE_H

#include "conv3d/Runtime/ConvSpec.h"
#include "conv3d/Support/HostTensor.h"

#include "llvm/Support/Error.h"

#include <memory>
#include <string>
#include <vector>

namespace mlir {
class MLIRContext;
} // namespace mlir

namespace mlir::conv3d {

class JitFunction;

/// Pointers to the caller's buffers, in the layouts of the spec (NDHWC input,
/// QRSCF/FQRSC filter, NDHWF output and residual, F-element f32 bias): host
/// memory for the CPU target, device memory for GPU targets.
struct ConvArgs {
  const void *input = nullptr;
  const void *filter = nullptr;
  const void *bias = nullptr;     ///< when spec.hasBias
  const void *residual = nullptr; ///< when spec.hasResidual
  float amax = 0.0f;              ///< when spec.inputQuantBlockSize
  void *output = nullptr;
  /// GPU targets: the CUstream the kernels are enqueued on; run() returns
  /// without synchronizing it. Null: an internal stream, synchronized
  /// before run() returns.
  void *stream = nullptr;
};

struct CompileStats {
  double pipelineMillis = 0; ///< MLIR passes
  double jitMillis = 0;      ///< LLVM code generation
  double totalMillis = 0;
};

/// A compiled convolution. Safe to run from several threads at once.
class CompiledConv {
public:
  CompiledConv(ConvSpec spec, CompileOptions options,
               std::unique_ptr<JitFunction> function, CompileStats stats);
  ~CompiledConv();

  const ConvSpec &getSpec() const { return spec; }
  const CompileOptions &getOptions() const { return options; }
  const CompileStats &getStats() const { return stats; }

  /// Runs the convolution on the caller's buffers.
  llvm::Error run(const ConvArgs &args) const;

private:
  ConvSpec spec;
  CompileOptions options;
  std::unique_ptr<JitFunction> function;
  CompileStats stats;
};

/// An arbitrary function of a module, compiled for `conv3d-run --module`.
/// Memref and tensor arguments are static-shaped buffers; results become
/// trailing out-parameter buffers.
class CompiledFunction {
public:
  struct Argument {
    bool isBuffer = true;
    ElementType type = ElementType::f32;
    std::vector<int64_t> shape; ///< for buffers
    bool isResult = false;      ///< an out-parameter made from a result
  };

  CompiledFunction(std::vector<Argument> arguments,
                   std::unique_ptr<JitFunction> function);
  ~CompiledFunction();

  const std::vector<Argument> &getArguments() const { return arguments; }
  /// `buffers[i]` points at buffer argument i's data; `scalars[i]` holds
  /// scalar argument i.
  llvm::Error run(llvm::ArrayRef<void *> buffers,
                  llvm::ArrayRef<double> scalars) const;

private:
  std::vector<Argument> arguments;
  std::unique_ptr<JitFunction> function;
};

/// Stages `Engine::emit` can print.
enum class EmitStage {
  Mlir,    ///< the conv3d module handed to the pipeline
  Lowered, ///< after the conv3d passes, before the LLVM conversion
  Llvm,    ///< LLVM IR of the host code
  Ptx,     ///< GPU targets: the device code's PTX
};

class Engine {
public:
  Engine();
  ~Engine();
  Engine(const Engine &) = delete;
  Engine &operator=(const Engine &) = delete;

  /// Compiles a convolution for `options.target`.
  llvm::Expected<std::shared_ptr<const CompiledConv>>
  compile(const ConvSpec &spec, const CompileOptions &options);

  /// The text of one compilation stage.
  llvm::Expected<std::string> emit(const ConvSpec &spec,
                                   const CompileOptions &options,
                                   EmitStage stage);

  /// NVFP4 fake quantization of a filter in the convolution's K order per
  /// output channel (`conv3d.quantize` with the filter's K axes), compiled
  /// and run on the CPU: the offline counterpart of input quantization.
  llvm::Expected<HostTensor> quantizeFilter(const ConvSpec &spec,
                                            const HostTensor &filter,
                                            int64_t blockSize, float amax);

  /// Compiles function `entry` of an MLIR module given as text;
  /// `sourceName` names it in diagnostics.
  llvm::Expected<std::unique_ptr<CompiledFunction>>
  compileFunction(llvm::StringRef source, llvm::StringRef entry,
                  const CompileOptions &options,
                  llvm::StringRef sourceName = "<module>");

  MLIRContext &getContext();

private:
  struct Impl;
  std::unique_ptr<Impl> impl;
};

} // namespace mlir::conv3d

#endif // CONV3D_RUNTIME_ENGINE_H
