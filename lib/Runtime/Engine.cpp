//===- Engine.cpp - compile convolutions once, run them many times --------===//

#include "conv3d/Runtime/Engine.h"

#include "EngineImpl.h"
#include "JitFunction.h"
#include "ModuleChecks.h"

#include "conv3d/IR/Conv3dAttrs.h"
#include "conv3d/Pipelines/Pipelines.h"
#include "conv3d/Registration.h"
#include "conv3d/Runtime/ConvModuleBuilder.h"
#include "conv3d/Runtime/CudaDriver.h"
#include "conv3d/Support/IRDumps.h"

#include "mlir/Bytecode/BytecodeWriter.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/ExecutionEngine/CRunnerUtils.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"

#include <chrono>
#include <cmath>
#include <mutex>

using namespace mlir;
using namespace mlir::conv3d;

namespace {

/// Collects the diagnostics emitted while it is alive, for error messages.
class DiagnosticCollector {
public:
  explicit DiagnosticCollector(MLIRContext &context)
      : context(context), handler(&context, [this](Diagnostic &diag) {
          if (!text.empty())
            text += "\n";
          llvm::raw_string_ostream os(text);
          os << diag.getLocation() << ": " << diag;
          for (Diagnostic &note : diag.getNotes())
            os << "\n  note: " << note;
          return success();
        }) {}

  /// `what` failed, with the diagnostics; `hint` adds the line naming
  /// $CONV3D_DUMP_IR_ON_ERROR when the context leaves the IR out.
  llvm::Error error(llvm::StringRef what, bool hint = false) const {
    std::string message = what.str() + (text.empty() ? "" : ":\n" + text);
    if (hint && !context.shouldPrintOpOnDiagnostic())
      message += "\n" + dumpIROnErrorHint().str();
    return llvm::createStringError(message);
  }

private:
  MLIRContext &context;
  std::string text;
  ScopedDiagnosticHandler handler;
};

double millisSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - start)
      .count();
}

llvm::Error runPipeline(MLIRContext &context, ModuleOp module,
                        llvm::function_ref<void(OpPassManager &)> build,
                        llvm::StringRef what) {
  DiagnosticCollector diagnostics(context);
  PassManager pm(&context);
  build(pm);
  if (failed(pm.run(module)))
    return diagnostics.error(what, /*hint=*/true);
  return llvm::Error::success();
}

std::vector<JitArgument> convArguments(const ConvSpec &spec) {
  std::vector<JitArgument> args;
  for (ConvParameter parameter : convParameters(spec)) {
    if (std::optional<ConvBufferExtent> buffer =
            convBufferExtent(spec, parameter))
      args.push_back({JitArgument::Kind::Buffer, std::move(buffer->shape)});
    else
      args.push_back({JitArgument::Kind::F32, {}});
  }
  return args;
}

bool isGpuTarget(Target target) { return target != Target::cpu; }

/// Options with the GPU chip filled in: the device's when a driver is
/// present (sm80 code runs on any sm_80+ chip), else the target's own.
CompileOptions resolveGpuChip(CompileOptions options) {
  if (!isGpuTarget(options.target) || !options.gpuChip.empty())
    return options;
  if (options.target == Target::sm80) {
    llvm::Expected<CudaDriver &> driver = CudaDriver::get();
    if (driver) {
      if (llvm::Expected<DeviceInfo> info = driver->deviceInfo())
        options.gpuChip = info->chip();
      else
        llvm::consumeError(info.takeError());
    } else {
      llvm::consumeError(driver.takeError());
    }
  }
  return options;
}

/// The whole pipeline of a target, to the LLVM dialect.
void buildPipeline(OpPassManager &pm, const CompileOptions &options) {
  if (isGpuTarget(options.target))
    buildConv3dGpuPipeline(pm, options);
  else
    buildConv3dCpuPipeline(pm, options);
}

/// Whether the driver's device is an sm_100 one: only the PTX emulator's
/// driver presents one here (conv3d-run --emulate); no sm_100 GPU has run
/// the sm100 kernels.
bool hasSm100Device() {
  llvm::Expected<CudaDriver &> driver = CudaDriver::get();
  if (!driver) {
    llvm::consumeError(driver.takeError());
    return false;
  }
  llvm::Expected<DeviceInfo> info = driver->deviceInfo();
  if (!info) {
    llvm::consumeError(info.takeError());
    return false;
  }
  return info->ccMajor == 10;
}

/// Whether `options` name a target and chip that can be compiled, and for
/// `runs`, run.
llvm::Error checkTarget(const CompileOptions &options, bool runs) {
  if (options.target == Target::sm90 && !options.gpuChip.empty() &&
      options.gpuChip != "sm_90a")
    return llvm::createStringError(
        "the sm90 kernel uses sm_90a instructions (wgmma, setmaxnreg); "
        "--gpu-chip=" +
        options.gpuChip + " cannot run it (use sm_90a, or --target=sm80)");
  if (options.target == Target::sm100 && !options.gpuChip.empty() &&
      options.gpuChip != "sm_100a")
    return llvm::createStringError(
        "the sm100 kernel uses sm_100a instructions (tcgen05); --gpu-chip=" +
        options.gpuChip + " cannot run it (use sm_100a, or --target=sm80)");
  if (options.target == Target::sm100 && runs && !hasSm100Device())
    return llvm::createStringError(
        "target 'sm100' is generated and assembled, never run: no sm_100 GPU "
        "has executed its code; emit it (--emit=mlir, lowered, llvm or ptx), "
        "run it in the PTX emulator (conv3d-run --emulate) or run "
        "--target=sm90 (H100/H200), sm80 (any sm_80+ GPU) or cpu");
  return llvm::Error::success();
}

/// GPU targets need the CUDA toolkit: libdevice for the device code's math
/// and ptxas for cubins.
llvm::Error checkToolkit(const CompileOptions &options, bool needsPtxas) {
  if (!isGpuTarget(options.target))
    return llvm::Error::success();
  return verifyCudaToolkit(options, needsPtxas);
}

/// Runtime symbols the JIT'ed host code of a target calls. memref.copy of
/// strided views (a data gradient's phases inserted at strided positions)
/// lowers to upstream's `memrefCopy`: libConv3d.so links it, but a host that
/// loads the library without RTLD_GLOBAL (Python's ctypes) hides it from
/// the JIT's process lookup, so it is given by address.
std::vector<std::pair<std::string, void *>>
runtimeSymbols(const CompileOptions &options) {
  std::vector<std::pair<std::string, void *>> symbols = {
      {"memrefCopy", reinterpret_cast<void *>(&memrefCopy)}};
  if (isGpuTarget(options.target))
    llvm::append_range(symbols, getGpuRuntimeSymbols());
  return symbols;
}

} // namespace

llvm::Error mlir::conv3d::checkEngineTarget(const CompileOptions &options,
                                            bool runs) {
  return checkTarget(options, runs);
}

llvm::Error
mlir::conv3d::runEnginePipeline(MLIRContext &context, ModuleOp module,
                                llvm::function_ref<void(OpPassManager &)> build,
                                llvm::StringRef what) {
  return runPipeline(context, module, build, what);
}

//===----------------------------------------------------------------------===//
// CompiledConv
//===----------------------------------------------------------------------===//

CompiledConv::CompiledConv(ConvSpec spec, CompileOptions options,
                           std::shared_ptr<const JitFunction> function,
                           CompileStats stats)
    : spec(std::move(spec)), options(std::move(options)),
      function(std::move(function)), stats(std::move(stats)),
      parameters(convParameters(this->spec)) {}

CompiledConv::~CompiledConv() = default;

std::shared_ptr<const CompiledConv>
CompiledConv::withStats(CompileStats newStats) const {
  return std::make_shared<const CompiledConv>(spec, options, function,
                                              std::move(newStats));
}

llvm::Error CompiledConv::run(const ConvBuffers &buffers) const {
  std::pair<ConvParameter, const ConstBufferRef *> inputs[] = {
      {ConvParameter::Input, &buffers.input},
      {ConvParameter::Filter, &buffers.filter},
      {ConvParameter::FilterScales, &buffers.filterScales},
      {ConvParameter::Bias, &buffers.bias},
      {ConvParameter::Residual, &buffers.residual},
      {ConvParameter::History, &buffers.history},
      {ConvParameter::NormGamma, &buffers.normGamma},
      {ConvParameter::NormBeta, &buffers.normBeta},
      {ConvParameter::GradOutput, &buffers.gradOutput}};
  auto check = [&](ConvParameter parameter, const void *data,
                   llvm::ArrayRef<int64_t> shape,
                   size_t elementBytes) -> llvm::Error {
    bool used = llvm::is_contained(parameters, parameter);
    llvm::StringRef name = convParameterName(parameter);
    if (!used && data)
      return llvm::createStringError(name.str() +
                                     " buffer given, but the spec has none");
    if (!used)
      return llvm::Error::success();
    if (!data)
      return llvm::createStringError("missing " + name.str() + " buffer");
    return checkConvBuffer(spec, parameter, shape, elementBytes);
  };
  for (auto [parameter, buffer] : inputs)
    if (llvm::Error error =
            check(parameter, buffer->data, buffer->shape, buffer->elementBytes))
      return error;
  if (llvm::Error error =
          check(ConvParameter::Output, buffers.output.data,
                buffers.output.shape, buffers.output.elementBytes))
    return error;
  ConvArgs args;
  args.input = buffers.input.data;
  args.filter = buffers.filter.data;
  args.filterScales = buffers.filterScales.data;
  args.bias = buffers.bias.data;
  args.residual = buffers.residual.data;
  args.history = buffers.history.data;
  args.normGamma = buffers.normGamma.data;
  args.normBeta = buffers.normBeta.data;
  args.gradOutput = buffers.gradOutput.data;
  args.output = buffers.output.data;
  args.amax = buffers.amax;
  args.filterAmax = buffers.filterAmax;
  args.stream = buffers.stream;
  return runUnchecked(args);
}

llvm::Error CompiledConv::runUnchecked(const ConvArgs &args) const {
  auto missing = [](const char *name) {
    return llvm::createStringError(std::string("missing ") + name + " buffer");
  };
  bool needsInput = spec.kind != ConvKind::dgrad;
  bool needsFilter = spec.kind != ConvKind::wgrad;
  if (needsInput && !args.input)
    return missing("input");
  if (needsFilter && !args.filter)
    return missing("filter");
  if (spec.kind != ConvKind::fprop && !args.gradOutput)
    return missing("grad_output");
  if (!args.output)
    return missing("output");
  if (spec.packedFilter && !args.filterScales)
    return missing("filter scales");
  if (spec.hasBias && !args.bias)
    return missing("bias");
  if (spec.hasResidual && !args.residual)
    return missing("residual");
  if (spec.geometry.historyDepth > 0 && !args.history)
    return missing("history");
  if (spec.hasNorm && !args.normGamma)
    return missing("norm gamma");
  if (spec.hasNormBeta && !args.normBeta)
    return missing("norm beta");
  llvm::SmallVector<void *, 8> buffers;
  llvm::SmallVector<double, 2> scalars;
  for (ConvParameter parameter : parameters) {
    switch (parameter) {
    case ConvParameter::Input:
      buffers.push_back(const_cast<void *>(args.input));
      break;
    case ConvParameter::Filter:
      buffers.push_back(const_cast<void *>(args.filter));
      break;
    case ConvParameter::FilterScales:
      buffers.push_back(const_cast<void *>(args.filterScales));
      break;
    case ConvParameter::FilterAmax:
      scalars.push_back(args.filterAmax);
      break;
    case ConvParameter::Bias:
      buffers.push_back(const_cast<void *>(args.bias));
      break;
    case ConvParameter::Residual:
      buffers.push_back(const_cast<void *>(args.residual));
      break;
    case ConvParameter::Amax:
      scalars.push_back(args.amax);
      break;
    case ConvParameter::Output:
      buffers.push_back(args.output);
      break;
    case ConvParameter::History:
      buffers.push_back(const_cast<void *>(args.history));
      break;
    case ConvParameter::NormGamma:
      buffers.push_back(const_cast<void *>(args.normGamma));
      break;
    case ConvParameter::NormBeta:
      buffers.push_back(const_cast<void *>(args.normBeta));
      break;
    case ConvParameter::GradOutput:
      buffers.push_back(const_cast<void *>(args.gradOutput));
      break;
    }
  }
  if (!isGpuTarget(options.target))
    return function->call(buffers, scalars);
  // Driver failures inside the JIT'ed host code are deferred, not fatal.
  llvm::consumeError(CudaDriver::takeDeferredError());
  ScopedCurrentStream streamScope(args.stream);
  if (llvm::Error error = function->call(buffers, scalars))
    return error;
  return CudaDriver::takeDeferredError();
}

//===----------------------------------------------------------------------===//
// CompiledFunction
//===----------------------------------------------------------------------===//

CompiledFunction::CompiledFunction(std::vector<Argument> arguments,
                                   std::unique_ptr<JitFunction> function)
    : arguments(std::move(arguments)), function(std::move(function)) {}

CompiledFunction::~CompiledFunction() = default;

llvm::Error CompiledFunction::run(llvm::ArrayRef<void *> buffers,
                                  llvm::ArrayRef<double> scalars) const {
  return function->call(buffers, scalars);
}

//===----------------------------------------------------------------------===//
// Engine
//===----------------------------------------------------------------------===//

Engine::Engine() : Engine(CacheOptions::fromEnvironment()) {}

Engine::Engine(CacheOptions cache) {
  static std::once_flag once;
  std::call_once(once, [] { registerAllPasses(); });
  impl = std::make_unique<Impl>(std::move(cache));
}

Engine::~Engine() = default;

MLIRContext &Engine::getContext() { return impl->context; }

const CacheOptions &Engine::getCacheOptions() const {
  return impl->cacheOptions;
}

/// cacheKey() of options whose GPU chip is already resolved.
static std::string cacheKeyOfResolved(const ConvSpec &spec,
                                      const CompileOptions &resolved) {
  std::string key = "spec: " + spec.describe() +
                    "\noptions: " + resolved.fingerprint() +
                    "\ncompiler: " + compilerIdentity().str() + "\n";
  if (isGpuTarget(resolved.target)) {
    key += "chip: " + gpuChipFor(resolved) +
           "\nptxas: " + fileIdentity(ptxasPathFor(resolved)) + "\n";
  }
  return key;
}

std::string Engine::cacheKey(const ConvSpec &spec,
                             const CompileOptions &options) const {
  return cacheKeyOfResolved(spec, resolveGpuChip(options));
}

/// The module attribute naming the cache key (its hash) a lowered module was
/// compiled for.
static constexpr llvm::StringLiteral kCacheKeyAttr = "conv3d.cache_key";

/// The lowered module stored in the disk cache under `key`, if any; an
/// entry that cannot be trusted sets `warning` (it is replaced after the
/// compilation).
static OwningOpRef<ModuleOp>
loadCachedModule(MLIRContext &context, const DiskCache &disk,
                 llvm::StringRef key, llvm::ArrayRef<JitArgument> arguments,
                 std::string &warning) {
  std::optional<std::string> bytes = disk.load(key, &warning);
  if (!bytes)
    return nullptr;
  // An entry that does not parse (e.g. written by a damaged process) is a
  // miss; it is overwritten after the compilation.
  ScopedDiagnosticHandler silence(&context,
                                  [](Diagnostic &) { return success(); });
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(*bytes, ParserConfig(&context));
  // The module must be the one compiled for this key: an entry whose file
  // holds another convolution's module (a valid entry copied or crafted
  // under this name) would run with the wrong buffer sizes.
  auto stamp = module ? (*module)->getAttrOfType<StringAttr>(kCacheKeyAttr)
                      : StringAttr();
  if (module && (!stamp || stamp.getValue() != DiskCache::entryName(key))) {
    warning = "ignoring cache entry " + disk.pathFor(key) +
              ": it holds a module compiled for another convolution";
    return nullptr;
  }
  // Its function must take exactly the spec's buffers and scalars.
  if (module) {
    if (llvm::Error error =
            verifyJitSignature(*module, kConvFunctionName, arguments)) {
      warning = "ignoring cache entry " + disk.pathFor(key) + ": " +
                llvm::toString(std::move(error));
      return nullptr;
    }
  }
  return module;
}

void Engine::setProgressHandler(std::function<void(llvm::StringRef)> handler) {
  std::lock_guard<std::mutex> lock(impl->mutex);
  impl->progress = std::move(handler);
}

llvm::Expected<std::shared_ptr<const CompiledConv>>
Engine::compile(const ConvSpec &spec, const CompileOptions &options) {
  // The tuner times forward convolutions on forward operands.
  if (options.tune && spec.kind != ConvKind::fprop)
    return llvm::createStringError(
        "tune=true is for fprop only; " + stringifyConvKind(spec.kind).str() +
        " compiles its forward convolutions with the rules' configurations");
  if (options.tune)
    return compileTuned(spec, options);
  return compileConfigured(spec, options, /*remember=*/true);
}

llvm::Expected<std::shared_ptr<const CompiledConv>>
Engine::compileConfigured(const ConvSpec &spec, const CompileOptions &options,
                          bool remember) {
  if (llvm::Error error = spec.validate())
    return std::move(error);
  if (llvm::Error error = checkTarget(options, /*runs=*/true))
    return std::move(error);
  CompileOptions resolved = resolveGpuChip(options);
  std::string key = cacheKeyOfResolved(spec, resolved);
  std::lock_guard<std::mutex> lock(impl->mutex);
  auto start = std::chrono::steady_clock::now();
  const CacheOptions &cache = impl->cacheOptions;
  if (cache.inMemory) {
    auto it = impl->memory.find(key);
    if (it != impl->memory.end()) {
      CompileStats stats;
      stats.source = CacheSource::Memory;
      stats.totalMillis = millisSince(start);
      return it->second->withStats(std::move(stats));
    }
  }

  CompileStats stats;
  std::optional<DiskCache> disk;
  if (!cache.directory.empty() && remember)
    disk.emplace(cache.directory, cache.maxBytes);
  OwningOpRef<ModuleOp> module;
  std::string ignoredEntry;
  if (disk && (module = loadCachedModule(impl->context, *disk, key,
                                         convArguments(spec), ignoredEntry))) {
    stats.source = CacheSource::Disk;
  } else {
    // Only a compilation needs the toolkit; a cached kernel runs without.
    if (llvm::Error error = checkToolkit(options, /*needsPtxas=*/true))
      return std::move(error);
    module = buildConvModule(&impl->context, spec);
    if (llvm::Error error = runPipeline(
            impl->context, *module,
            [&](OpPassManager &pm) { buildPipeline(pm, resolved); },
            "compiling " + spec.describe() + " (" + resolved.describe() + ")"))
      return std::move(error);
    if (disk) {
      (*module)->setAttr(
          kCacheKeyAttr,
          StringAttr::get(&impl->context, DiskCache::entryName(key)));
      std::string bytes;
      llvm::raw_string_ostream os(bytes);
      if (failed(writeBytecodeToFile(*module, os)))
        stats.cacheWarning = "the lowered module has no bytecode form";
      else if (llvm::Error error = disk->store(key, bytes))
        stats.cacheWarning = llvm::toString(std::move(error));
      else if (!ignoredEntry.empty())
        stats.cacheWarning = ignoredEntry + "; recompiled and replaced";
    }
  }
  stats.pipelineMillis = millisSince(start);
  auto jitStart = std::chrono::steady_clock::now();
  auto function =
      JitFunction::create(*module, kConvFunctionName, convArguments(spec),
                          runtimeSymbols(resolved));
  if (!function)
    return function.takeError();
  if (isGpuTarget(resolved.target))
    if (llvm::Error error = CudaDriver::takeDeferredError())
      return std::move(error); // e.g. the module load in a constructor
  stats.jitMillis = millisSince(jitStart);
  stats.totalMillis = millisSince(start);
  auto compiled = std::make_shared<const CompiledConv>(
      spec, resolved, std::shared_ptr<const JitFunction>(std::move(*function)),
      std::move(stats));
  if (cache.inMemory && remember)
    impl->memory[key] = compiled;
  return compiled;
}

llvm::Expected<std::string> Engine::emit(const ConvSpec &spec,
                                         const CompileOptions &options,
                                         EmitStage stage) {
  if (llvm::Error error = spec.validate())
    return std::move(error);
  if (llvm::Error error = checkTarget(options, /*runs=*/false))
    return std::move(error);
  if (stage == EmitStage::Ptx && !isGpuTarget(options.target))
    return llvm::createStringError("--emit=ptx needs a GPU target");
  if (stage == EmitStage::Llvm || stage == EmitStage::Ptx)
    if (llvm::Error error =
            checkToolkit(options, /*needsPtxas=*/stage == EmitStage::Llvm))
      return std::move(error);
  CompileOptions resolved = options;
  if (stage == EmitStage::Ptx)
    resolved.gpuBinaryFormat = GpuBinaryFormat::Isa;
  std::lock_guard<std::mutex> lock(impl->mutex);
  OwningOpRef<ModuleOp> module = buildConvModule(&impl->context, spec);
  std::string text;
  llvm::raw_string_ostream os(text);
  if (stage == EmitStage::Mlir) {
    module->print(os);
    return text;
  }
  if (llvm::Error error = runPipeline(
          impl->context, *module,
          [&](OpPassManager &pm) {
            if (stage != EmitStage::Lowered)
              buildPipeline(pm, resolved);
            else if (isGpuTarget(resolved.target))
              buildConv3dGpuLoweringPipeline(pm, resolved);
            else
              buildConv3dCpuLoweringPipeline(pm, resolved);
          },
          "compiling " + spec.describe()))
    return std::move(error);
  if (stage == EmitStage::Lowered) {
    module->print(os);
    return text;
  }
  if (stage == EmitStage::Ptx) {
    // One PTX module per kernel, each preceded by a marker line.
    module->walk([&](gpu::BinaryOp binary) {
      for (Attribute object : binary.getObjects())
        os << "// conv3d: gpu.module @" << binary.getSymName() << "\n"
           << cast<gpu::ObjectAttr>(object).getObject().getValue() << "\n";
    });
    return text;
  }
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(*module, llvmContext);
  if (!llvmModule)
    return llvm::createStringError("translation to LLVM IR failed");
  llvmModule->print(os, nullptr);
  return text;
}

llvm::Expected<HostTensor> Engine::quantizeFilter(const ConvSpec &spec,
                                                  const HostTensor &filter,
                                                  int64_t blockSize,
                                                  float amax) {
  if (llvm::Error error = spec.validate())
    return std::move(error);
  if (filter.type != spec.inputType || filter.shape != spec.filterShape())
    return llvm::createStringError(
        "filter buffer does not match the spec's filter shape and dtype");
  if (!isValidNVFP4BlockSize(blockSize))
    return llvm::createStringError(
        "NVFP4 block size must be 16, 32, 64, 128 or 256, got " +
        std::to_string(blockSize));
  if (!(amax >= 0.0f) || !std::isfinite(amax))
    return llvm::createStringError("NVFP4 amax must be finite and >= 0");
  std::unique_ptr<JitFunction> function;
  {
    std::lock_guard<std::mutex> lock(impl->mutex);
    OwningOpRef<ModuleOp> module =
        buildFilterQuantizeModule(&impl->context, spec, blockSize);
    CompileOptions options;
    options.lowering = CpuLowering::Reference;
    if (llvm::Error error = runPipeline(
            impl->context, *module,
            [&](OpPassManager &pm) { buildConv3dCpuPipeline(pm, options); },
            "compiling the filter quantization"))
      return std::move(error);
    auto created =
        JitFunction::create(*module, kQuantizeFunctionName,
                            {{JitArgument::Kind::Buffer, spec.filterShape()},
                             {JitArgument::Kind::F32, {}},
                             {JitArgument::Kind::Buffer, spec.filterShape()}});
    if (!created)
      return created.takeError();
    function = std::move(*created);
  }
  HostTensor out = HostTensor::zeros(filter.type, filter.shape);
  if (llvm::Error error = function->call(
          {const_cast<void *>(filter.data()), out.data()}, {amax}))
    return std::move(error);
  return out;
}

llvm::Expected<Engine::PackedNVFP4>
Engine::quantizeFilter(const ConvSpec &spec, const HostTensor &filter,
                       float amax, const CompileOptions &options) {
  if (llvm::Error error = spec.validate())
    return std::move(error);
  if (filter.type != spec.inputType || filter.shape != spec.filterShape())
    return llvm::createStringError(
        "filter buffer does not match the spec's filter shape and dtype");
  // The blocks of the K order per output channel are C-contiguous runs of
  // one tap only in FQRSC, the K-major layout kind::mxf4nvf4 reads.
  if (spec.filterLayout != FilterLayout::fqrsc)
    return llvm::createStringError(
        "a real NVFP4 filter is packed K-major: the spec's filter layout must "
        "be fqrsc, not qrscf");
  constexpr int64_t kBlock = 16;
  if (spec.geometry.channels % kBlock != 0)
    return llvm::createStringError(
        "a real NVFP4 filter needs C to be a multiple of the block size 16 "
        "(each scale covers 16 channels of one tap), got C = " +
        std::to_string(spec.geometry.channels));
  return packNVFP4(filter, kBlock, amax, options);
}

llvm::Expected<Engine::PackedNVFP4>
Engine::packNVFP4(const HostTensor &x, int64_t blockSize, float amax,
                  const CompileOptions &options) {
  if (!isValidNVFP4BlockSize(blockSize))
    return llvm::createStringError(
        "NVFP4 block size must be 16, 32, 64, 128 or 256, got " +
        std::to_string(blockSize));
  if (x.shape.empty() || x.shape.back() % blockSize != 0 ||
      x.numElements() == 0)
    return llvm::createStringError(
        "NVFP4 packing needs a non-empty tensor whose last dimension is a "
        "multiple of the block size " +
        std::to_string(blockSize));
  if (!(amax >= 0.0f) || !std::isfinite(amax))
    return llvm::createStringError("NVFP4 amax must be finite and >= 0");
  if (llvm::Error error = checkTarget(options, /*runs=*/true))
    return std::move(error);
  if (llvm::Error error = checkToolkit(options, /*needsPtxas=*/true))
    return std::move(error);
  CompileOptions resolved = resolveGpuChip(options);
  std::vector<int64_t> codesShape = x.shape, scalesShape = x.shape;
  codesShape.back() /= 2;
  scalesShape.back() /= blockSize;
  std::unique_ptr<JitFunction> function;
  {
    std::lock_guard<std::mutex> lock(impl->mutex);
    OwningOpRef<ModuleOp> module =
        buildNVFP4PackModule(&impl->context, x.type, x.shape, blockSize);
    if (llvm::Error error = runPipeline(
            impl->context, *module,
            [&](OpPassManager &pm) { buildPipeline(pm, resolved); },
            "compiling the NVFP4 packing (" + resolved.describe() + ")"))
      return std::move(error);
    auto created =
        JitFunction::create(*module, kPackNVFP4FunctionName,
                            {{JitArgument::Kind::Buffer, x.shape},
                             {JitArgument::Kind::F32, {}},
                             {JitArgument::Kind::Buffer, codesShape},
                             {JitArgument::Kind::Buffer, scalesShape}},
                            runtimeSymbols(resolved));
    if (!created)
      return created.takeError();
    function = std::move(*created);
  }
  PackedNVFP4 packed;
  // Poisoned, so that bytes the kernel fails to write show up.
  packed.codes.assign(size_t(numElementsOf(codesShape)), 0xEE);
  packed.scales.assign(size_t(numElementsOf(scalesShape)), 0xEE);
  if (!isGpuTarget(resolved.target)) {
    if (llvm::Error error =
            function->call({const_cast<void *>(x.data()), packed.codes.data(),
                            packed.scales.data()},
                           {amax}))
      return std::move(error);
    return packed;
  }
  if (llvm::Error error = CudaDriver::takeDeferredError())
    return std::move(error); // e.g. the module load in a constructor
  llvm::Expected<CudaDriver &> driver = CudaDriver::get();
  if (!driver)
    return driver.takeError();
  std::vector<void *> device;
  llvm::scope_exit release([&] {
    for (void *ptr : device)
      llvm::consumeError(driver->free(ptr));
  });
  std::pair<void *, size_t> buffers[] = {
      {const_cast<void *>(x.data()), x.sizeInBytes()},
      {packed.codes.data(), packed.codes.size()},
      {packed.scales.data(), packed.scales.size()}};
  for (auto [host, bytes] : buffers) {
    llvm::Expected<void *> ptr = driver->allocate(bytes);
    if (!ptr)
      return ptr.takeError();
    device.push_back(*ptr);
    if (llvm::Error error = driver->copyToDevice(*ptr, host, bytes))
      return std::move(error);
  }
  {
    ScopedCurrentStream streamScope(nullptr);
    if (llvm::Error error = function->call(device, {amax}))
      return std::move(error);
  }
  if (llvm::Error error = CudaDriver::takeDeferredError())
    return std::move(error);
  for (int i = 1; i < 3; ++i)
    if (llvm::Error error =
            driver->copyToHost(buffers[i].first, device[i], buffers[i].second))
      return std::move(error);
  return packed;
}

/// The ElementType of a float type, if it is one the runtime handles.
static std::optional<ElementType> toElementType(Type type) {
  if (type.isBF16())
    return ElementType::bf16;
  if (type.isF16())
    return ElementType::f16;
  if (type.isF32())
    return ElementType::f32;
  return std::nullopt;
}

llvm::Expected<std::unique_ptr<CompiledFunction>> Engine::compileFunction(
    llvm::StringRef source, llvm::StringRef entry,
    const CompileOptions &options, llvm::StringRef sourceName,
    llvm::ArrayRef<std::optional<std::vector<int64_t>>> argumentShapes) {
  if (isGpuTarget(options.target))
    return llvm::createStringError(
        "functions of a module run on the CPU target (--target=cpu)");
  std::lock_guard<std::mutex> lock(impl->mutex);
  MLIRContext &context = impl->context;
  DiagnosticCollector parseDiagnostics(context);
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(source, ParserConfig(&context), sourceName);
  if (!module)
    return parseDiagnostics.error("cannot parse the module");
  auto func = module->lookupSymbol<func::FuncOp>(entry);
  if (!func)
    return llvm::createStringError("no function '" + entry.str() +
                                   "' in the module");
  if (func.isExternal())
    return llvm::createStringError("function '" + entry.str() +
                                   "' has no body");
  if (llvm::Error error = checkNoRecursion(func))
    return std::move(error);
  if (llvm::Error error = specializeArgumentShapes(func, argumentShapes))
    return std::move(error);
  unsigned numInputs = func.getNumArguments();
  func->setAttr("llvm.emit_c_interface", UnitAttr::get(&context));

  PipelineOptions pipeline = options;
  pipeline.resultsToOutParams = true;
  if (llvm::Error error = runPipeline(
          context, *module,
          [&](OpPassManager &pm) {
            buildConv3dCpuLoweringPipeline(pm, pipeline);
          },
          "compiling function '" + entry.str() + "'"))
    return std::move(error);

  // After bufferization every tensor is a memref and every memref result a
  // trailing out-parameter.
  func = module->lookupSymbol<func::FuncOp>(entry);
  if (func.getNumResults() != 0)
    return llvm::createStringError(
        "function '" + entry.str() +
        "' returns scalars; only tensor and memref results are supported");
  std::vector<CompiledFunction::Argument> arguments;
  std::vector<JitArgument> jitArguments;
  for (auto [i, type] : llvm::enumerate(func.getArgumentTypes())) {
    CompiledFunction::Argument arg;
    arg.isResult = i >= numInputs;
    if (auto memref = dyn_cast<MemRefType>(type)) {
      std::optional<ElementType> elem = toElementType(memref.getElementType());
      if (elem && memref.getLayout().isIdentity() && !memref.hasStaticShape())
        return llvm::createStringError(
            arg.isResult
                ? llvm::formatv("result {0} of '{1}' has type {2}: its sizes "
                                "do not follow from the arguments' shapes",
                                i - numInputs, entry, type)
                      .str()
                : llvm::formatv("argument {0} of '{1}' has type {2} and no "
                                "shape was given for it (pass it as an .npy "
                                "file)",
                                i, entry, type)
                      .str());
      if (!elem || !memref.getLayout().isIdentity())
        return llvm::createStringError(
            llvm::formatv("argument {0} of '{1}' has type {2}; only "
                          "contiguous bf16/f16/f32 buffers are supported",
                          i, entry, type)
                .str());
      arg.type = *elem;
      arg.shape.assign(memref.getShape().begin(), memref.getShape().end());
      jitArguments.push_back({JitArgument::Kind::Buffer, arg.shape});
    } else if (type.isF32()) {
      arg.isBuffer = false;
      jitArguments.push_back({JitArgument::Kind::F32, {}});
    } else if (type.isIndex() || type.isInteger(64)) {
      arg.isBuffer = false;
      arg.isInteger = true;
      jitArguments.push_back({JitArgument::Kind::I64, {}});
    } else {
      return llvm::createStringError(
          llvm::formatv("argument {0} of '{1}' has unsupported type {2}", i,
                        entry, type)
              .str());
    }
    arguments.push_back(std::move(arg));
  }

  if (llvm::Error error = runPipeline(
          context, *module,
          [&](OpPassManager &pm) { buildConv3dHostToLLVMPipeline(pm); },
          "lowering function '" + entry.str() + "' to LLVM"))
    return std::move(error);
  auto function = JitFunction::create(*module, entry, std::move(jitArguments));
  if (!function)
    return function.takeError();
  return std::make_unique<CompiledFunction>(std::move(arguments),
                                            std::move(*function));
}
