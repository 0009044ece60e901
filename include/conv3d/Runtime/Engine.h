//===- Engine.h - compile convolutions once, run them many times -*- C++
//-*-===//
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
#include "conv3d/Runtime/KernelCache.h"
#include "conv3d/Support/HostTensor.h"

#include "llvm/Support/Error.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mlir {
class MLIRContext;
} // namespace mlir

namespace mlir::conv3d {

class JitFunction;
struct Explanation; // conv3d/Runtime/Explain.h

/// A buffer of the caller's with the extents it holds: a row-major,
/// contiguous tensor of `shape` whose elements take `elementBytes` bytes
/// (2 for bf16 and f16, 4 for f32, 1 for packed NVFP4 codes and scales).
/// CompiledConv::run checks both against the spec before the compiled code
/// touches the memory.
template <typename Pointer> struct BufferRefOf {
  Pointer data = nullptr;
  llvm::SmallVector<int64_t, 5> shape;
  size_t elementBytes = 0;

  BufferRefOf() = default;
  BufferRefOf(Pointer data, llvm::ArrayRef<int64_t> shape, size_t elementBytes)
      : data(data), shape(shape), elementBytes(elementBytes) {}
  /// `shape` elements of T (uint16_t for bf16 and f16, float, uint8_t).
  template <typename T>
  BufferRefOf(T *data, llvm::ArrayRef<int64_t> shape)
      : BufferRefOf(data, shape, sizeof(T)) {}
  /// A host tensor's data with its shape and element size.
  template <typename Tensor,
            typename = decltype(std::declval<Tensor &>().sizeInBytes())>
  BufferRefOf(Tensor &tensor)
      : BufferRefOf(tensor.data(), tensor.shape, elementSize(tensor.type)) {}
};
using ConstBufferRef = BufferRefOf<const void *>;
using BufferRef = BufferRefOf<void *>;

/// The caller's buffers with their extents, for CompiledConv::run to check
/// (the checked form of ConvArgs): host memory for the CPU target, device
/// memory for GPU targets, in the layouts of the spec. Buffers the spec has
/// no use for stay empty.
struct ConvBuffers {
  ConstBufferRef input;
  ConstBufferRef filter;       ///< with spec.packedFilter: the i8 codes
  ConstBufferRef filterScales; ///< with spec.packedFilter
  ConstBufferRef bias;
  ConstBufferRef residual;
  ConstBufferRef history;
  ConstBufferRef normGamma;
  ConstBufferRef normBeta;
  /// dgrad and wgrad: the output's gradient (the spec's outputShape()).
  ConstBufferRef gradOutput;
  /// What the spec writes (ConvSpec::resultShape()): the output, or the
  /// input's or the filter's gradient.
  BufferRef output;
  float amax = 0.0f;       ///< when spec.inputQuantBlockSize
  float filterAmax = 0.0f; ///< when spec.packedFilter
  /// As ConvArgs::stream.
  void *stream = nullptr;
};

/// Pointers to the caller's buffers, in the layouts of the spec (NDHWC input,
/// QRSCF/FQRSC filter, NDHWF output and residual, F-element f32 bias): host
/// memory for the CPU target, device memory for GPU targets. Without
/// extents nothing can be checked: CompiledConv::runUnchecked takes it,
/// for callers that have checked the buffers themselves; others use
/// ConvBuffers and CompiledConv::run.
struct ConvArgs {
  const void *input = nullptr;
  const void *filter = nullptr;   ///< with spec.packedFilter: the i8 codes
  const void *bias = nullptr;     ///< when spec.hasBias
  const void *residual = nullptr; ///< when spec.hasResidual
  float amax = 0.0f;              ///< when spec.inputQuantBlockSize
  void *output = nullptr;
  /// N x Dh x H x W x C frames preceding the input, in the input's type,
  /// when spec.geometry.historyDepth > 0.
  const void *history = nullptr;
  const void *normGamma = nullptr; ///< C f32 values, when spec.hasNorm
  const void *normBeta = nullptr;  ///< C f32 values, when spec.hasNormBeta
  /// GPU targets: the CUstream the kernels are enqueued on; run() returns
  /// without synchronizing it. Null: an internal stream, synchronized
  /// before run() returns (a blocking call). The legacy default stream,
  /// whose CUDA handle is 0, is kLegacyDefaultStream here.
  void *stream = nullptr;
  /// When spec.packedFilter: the filter's E4M3 scales and its amax (the
  /// members come last so that positional initializers keep their meaning).
  const void *filterScales = nullptr;
  float filterAmax = 0.0f;
  /// dgrad and wgrad: the output's gradient. `output` is then the input's
  /// (dgrad) or the filter's (wgrad) gradient.
  const void *gradOutput = nullptr;
};

/// CU_STREAM_LEGACY: CUDA's handle for the legacy default stream (what a 0
/// CUstream means to CUDA itself, e.g. PyTorch's default stream), usable
/// wherever the driver takes a stream.
inline void *const kLegacyDefaultStream = reinterpret_cast<void *>(0x1);

/// One tile configuration the tuner tried.
struct TuningTrial {
  /// The configuration (`key=value,...`); empty for the heuristic's.
  std::string config;
  /// Median run time; meaningful when `error` is empty.
  double medianMillis = 0;
  /// Why the configuration was not a contender: a kernel plan refused it,
  /// or its result differed from the heuristic configuration's.
  std::string error;
};

/// How a tuned compilation chose its configuration.
struct TuningReport {
  /// The configuration compiled; empty: the heuristic's won.
  std::string chosen;
  /// The choice was remembered (this engine, or the disk cache) and nothing
  /// was timed.
  bool remembered = false;
  /// Time spent compiling and timing the candidates.
  double millis = 0;
  std::vector<TuningTrial> trials;
};

struct CompileStats {
  double pipelineMillis = 0; ///< MLIR passes (or reading the disk cache)
  double jitMillis = 0;      ///< LLVM code generation
  double totalMillis = 0;
  /// Whether the pipeline ran or a cache supplied the compiled code.
  CacheSource source = CacheSource::Compiled;
  /// Why a compiled convolution could not be stored in the disk cache
  /// (compilation itself succeeded), or which damaged entry it replaced;
  /// empty otherwise, or without a disk cache.
  std::string cacheWarning;
  /// Set by a compilation with `options.tune`.
  std::optional<TuningReport> tuning;
};

/// A compiled convolution. Safe to run from several threads at once.
class CompiledConv {
public:
  CompiledConv(ConvSpec spec, CompileOptions options,
               std::shared_ptr<const JitFunction> function, CompileStats stats);
  ~CompiledConv();

  const ConvSpec &getSpec() const { return spec; }
  const CompileOptions &getOptions() const { return options; }
  const CompileStats &getStats() const { return stats; }

  /// Runs the convolution on the caller's buffers after checking each one's
  /// extents against the spec (convBufferExtent): a missing buffer, one of
  /// another shape or element size, or one the spec has no use for is an
  /// error naming it, never a run past the end of a buffer.
  llvm::Error run(const ConvBuffers &buffers) const;

  /// Runs the convolution on buffers the caller vouches for: each pointer
  /// must hold what convBufferExtent says (the C API and Python check the
  /// extents themselves; the streaming decoder and the host runner own
  /// their buffers). Only missing buffers are detected.
  llvm::Error runUnchecked(const ConvArgs &args) const;

  /// The same compiled code with other stats (a cache hit).
  std::shared_ptr<const CompiledConv> withStats(CompileStats stats) const;

private:
  ConvSpec spec;
  CompileOptions options;
  std::shared_ptr<const JitFunction> function;
  CompileStats stats;
  /// convParameters(spec), computed once for run().
  llvm::SmallVector<ConvParameter, 9> parameters;
};

/// An arbitrary function of a module, compiled for `conv3d-run --module`.
/// Memref and tensor arguments are static-shaped buffers (dynamic sizes
/// take the shapes compileFunction was given); results become trailing
/// out-parameter buffers.
class CompiledFunction {
public:
  struct Argument {
    bool isBuffer = true;
    /// Scalars: index or i64 (false: f32).
    bool isInteger = false;
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
  /// An engine with the cache of `$CONV3D_CACHE_DIR` & co.
  /// (CacheOptions::fromEnvironment).
  Engine();
  explicit Engine(CacheOptions cache);
  ~Engine();
  Engine(const Engine &) = delete;
  Engine &operator=(const Engine &) = delete;

  /// Compiles a convolution for `options.target`, or returns it from the
  /// engine's memory cache or the disk cache (KernelCache.h). Safe to call
  /// from several threads (compilations are serialized).
  ///
  /// With `options.tune`, the configuration is chosen by timing: the
  /// heuristic's and `tuningCandidates`' configurations are compiled and run
  /// on random data (device buffers the engine allocates for GPU targets,
  /// so tuning a GPU target needs a GPU), each checked against the
  /// heuristic's result, and the fastest is compiled. The choice is kept
  /// per convolution in the engine and in the disk cache, so tuning happens
  /// once per convolution and machine (stats().tuning says what was timed).
  llvm::Expected<std::shared_ptr<const CompiledConv>>
  compile(const ConvSpec &spec, const CompileOptions &options);

  /// Receives progress lines of long work (each tuning trial as it
  /// finishes); none by default.
  void setProgressHandler(std::function<void(llvm::StringRef)> handler);

  /// The text of one compilation stage.
  llvm::Expected<std::string>
  emit(const ConvSpec &spec, const CompileOptions &options, EmitStage stage);

  /// Which kernel family runs each convolution of `spec` under `options`
  /// and why: its configuration, its predicted time (none until the cost
  /// model lands) and every family's verdict (Explain.h). Runs the graph
  /// passes only: no GPU or CUDA toolkit needed, any target.
  llvm::Expected<Explanation> explain(const ConvSpec &spec,
                                      const CompileOptions &options);

  /// NVFP4 fake quantization of a filter in the convolution's K order per
  /// output channel (`conv3d.quantize` with the filter's K axes), compiled
  /// and run on the CPU: the offline counterpart of input quantization.
  llvm::Expected<HostTensor> quantizeFilter(const ConvSpec &spec,
                                            const HostTensor &filter,
                                            int64_t blockSize, float amax);

  /// Real NVFP4 packing (conv3d.pack_nvfp4) of `x`, blocks of `blockSize`
  /// along its last dimension (a multiple of it), compiled for
  /// `options.target` and run there: on the host for cpu, on the GPU (a
  /// plain kernel, any sm_80+ device; sm100 is refused as for every run)
  /// with `x` copied in and the results copied out. The packing prepass of
  /// the real NVFP4 path, exposed so that it can be checked bit for bit
  /// against the reference (conv3d-run --pack-nvfp4).
  struct PackedNVFP4 {
    std::vector<uint8_t> codes;  ///< two E2M1 codes per byte
    std::vector<uint8_t> scales; ///< one E4M3 byte per block
  };
  llvm::Expected<PackedNVFP4> packNVFP4(const HostTensor &x, int64_t blockSize,
                                        float amax,
                                        const CompileOptions &options);

  /// Real NVFP4 quantization of a filter (`nvfp4-mode=real`): the filter,
  /// FQRSC (K-major, as the block-scaled tcgen05.mma reads FP4 operands),
  /// packed once by conv3d.pack_nvfp4 along C in blocks of 16 (block16 of
  /// kind::mxf4nvf4), compiled for `options.target` and run there as
  /// packNVFP4 is: the codes (F x Q x R x S x C/2) and scales
  /// (F x Q x R x S x C/16) a convolution's `filter_quant` operands take.
  /// Refuses a QRSCF filter and C not a multiple of 16.
  llvm::Expected<PackedNVFP4> quantizeFilter(const ConvSpec &spec,
                                             const HostTensor &filter,
                                             float amax,
                                             const CompileOptions &options);

  /// Compiles function `entry` of an MLIR module given as text;
  /// `sourceName` names it in diagnostics. `argumentShapes` holds the shape
  /// of each argument the function will be called with (none for scalars
  /// or unknown): a tensor or memref argument of dynamic sizes is compiled
  /// for that shape. Recursive functions are refused (the JIT'ed code has
  /// no bound on its stack).
  llvm::Expected<std::unique_ptr<CompiledFunction>> compileFunction(
      llvm::StringRef source, llvm::StringRef entry,
      const CompileOptions &options, llvm::StringRef sourceName = "<module>",
      llvm::ArrayRef<std::optional<std::vector<int64_t>>> argumentShapes = {});

  MLIRContext &getContext();
  const CacheOptions &getCacheOptions() const;

  /// The text a compiled convolution is cached under (its hash names the
  /// disk entry): spec, every option, the compiler's identity and, for GPU
  /// targets, the chip and the ptxas that builds the binary.
  std::string cacheKey(const ConvSpec &spec,
                       const CompileOptions &options) const;

private:
  /// compile() without tuning; `remember` keeps the result in the memory
  /// and disk caches (the tuner's losing candidates are not kept).
  llvm::Expected<std::shared_ptr<const CompiledConv>>
  compileConfigured(const ConvSpec &spec, const CompileOptions &options,
                    bool remember);
  /// compile() with options.tune (Tuner.cpp).
  llvm::Expected<std::shared_ptr<const CompiledConv>>
  compileTuned(const ConvSpec &spec, const CompileOptions &options);

  struct Impl;
  std::unique_ptr<Impl> impl;
};

} // namespace mlir::conv3d

#endif // CONV3D_RUNTIME_ENGINE_H
