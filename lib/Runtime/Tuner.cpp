//===- Tuner.cpp - choosing a tile configuration by timing
//-----------------===//
//
// Engine::compile with options.tune: what cuDNN's benchmark mode does for
// its algorithms, for our tile configurations. The heuristic's configuration
// is compiled and timed first (it is the baseline and the correctness
// reference), then each of tuningCandidates(); a candidate whose kernel plan
// refuses it is skipped, one whose result differs from the heuristic's
// beyond the output type's tolerance is reported and never chosen. The
// fastest median wins and is remembered under a key that covers everything
// the kernels depend on (cacheKey of the untuned options), in the engine and
// in the disk cache, so a later process compiles the winner directly.
//
// Timing uses random data (never zeros: they can run faster than real
// data), a poisoned output, one untimed run and then `repeat` timed ones
// (CUDA events on GPU targets, HostRunner.h); the L2 is not flushed, which
// ranks configurations the same way for the shapes where it matters (inputs
// larger than the L2).
//
//===----------------------------------------------------------------------===//

#include "EngineImpl.h"

#include "conv3d/IR/Conv3dAttrs.h"
#include "conv3d/IR/Conv3dDialect.h"
#include "conv3d/Reference/ReferenceConv.h"
#include "conv3d/Runtime/CudaDriver.h"
#include "conv3d/Runtime/HostRunner.h"
#include "conv3d/Transforms/ConfigHeuristics.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/FormatVariadic.h"

#include <chrono>
#include <cmath>

using namespace mlir;
using namespace mlir::conv3d;

namespace {

/// Timed runs per candidate: GPU kernels are short and their times steady;
/// CPU runs are long.
int repeatsFor(Target target) { return target == Target::cpu ? 3 : 10; }

/// Random operands for `spec` (and the output's initial contents).
struct TuningData {
  explicit TuningData(const ConvSpec &spec)
      : input(HostTensor::zeros(spec.inputType, spec.inputShape())),
        filter(HostTensor::zeros(spec.inputType, spec.filterShape())),
        bias(HostTensor::zeros(ElementType::f32, {spec.geometry.filters})),
        residual(HostTensor::zeros(spec.outputType, spec.outputShape())),
        init(HostTensor::zeros(spec.outputType, spec.outputShape())) {
    fillRandomNormal(input, 1, 1.0);
    fillRandomNormal(filter, 2, 1.0 / std::sqrt(double(spec.geometry.gemmK())));
    fillRandomNormal(bias, 3, 0.5);
    fillRandomNormal(residual, 4, 1.0);
    if (spec.accumulate)
      fillRandomNormal(init, 5, 1.0);
    else
      fillPoison(init);
    for (int64_t i = 0, e = input.numElements(); i < e; ++i)
      amax = std::max(amax, static_cast<float>(std::fabs(input.get(i))));
  }

  /// Runs `conv` on this data: `result` receives the first run's output,
  /// the median of the timed runs is returned.
  llvm::Expected<double> time(const CompiledConv &conv, const ConvSpec &spec,
                              int repeat, HostTensor &result) const {
    result = init;
    HostConvBuffers buffers;
    buffers.input = &input;
    buffers.filter = &filter;
    buffers.bias = spec.hasBias ? &bias : nullptr;
    buffers.residual = spec.hasResidual ? &residual : nullptr;
    buffers.amax = amax;
    buffers.output = &result;
    HostRunTiming timing;
    timing.repeat = repeat;
    if (llvm::Error error = runWithHostBuffers(conv, buffers, &timing))
      return std::move(error);
    return timing.medianMillis;
  }

  HostTensor input, filter, bias, residual, init;
  float amax = 0.0f;
};

std::vector<double> toDoubles(const HostTensor &tensor) {
  std::vector<double> values(tensor.numElements());
  for (int64_t i = 0, e = tensor.numElements(); i < e; ++i)
    values[i] = tensor.get(i);
  return values;
}

std::string describeTrial(const TuningTrial &trial) {
  std::string name = trial.config.empty() ? "heuristic" : trial.config;
  if (!trial.error.empty())
    return name + ": skipped (" + trial.error + ")";
  return llvm::formatv("{0}: {1:f3} ms", name, trial.medianMillis).str();
}

/// The tuning key's entry text in the disk cache: the configuration, or
/// "heuristic".
constexpr llvm::StringLiteral kHeuristicEntry = "heuristic";

} // namespace

llvm::Expected<std::shared_ptr<const CompiledConv>>
Engine::compileTuned(const ConvSpec &spec, const CompileOptions &options) {
  if (!options.config.empty())
    return llvm::createStringError(
        "tuning chooses the tile configuration: it cannot be combined with "
        "a forced config");
  if (options.target == Target::cpu &&
      options.lowering == CpuLowering::Reference)
    return llvm::createStringError(
        "tuning chooses tile configurations of the implicit-GEMM lowering; "
        "lowering=reference has none");
  if (llvm::Error error = spec.validate())
    return std::move(error);
  // Without a device nothing can be timed: say so before compiling.
  if (options.target != Target::cpu)
    if (llvm::Expected<CudaDriver &> driver = CudaDriver::get(); !driver)
      return llvm::createStringError("tuning runs candidate kernels on the "
                                     "GPU: " +
                                     llvm::toString(driver.takeError()));
  auto start = std::chrono::steady_clock::now();
  CompileOptions base = options;
  base.tune = false;
  std::string key = "tuned configuration\n" + cacheKey(spec, base);
  auto withConfig = [&](llvm::StringRef config) {
    CompileOptions chosen = base;
    chosen.config = config.str();
    return chosen;
  };
  std::string cacheWarning;
  auto finish = [&](std::shared_ptr<const CompiledConv> conv,
                    TuningReport report)
      -> llvm::Expected<std::shared_ptr<const CompiledConv>> {
    CompileStats stats = conv->getStats();
    report.millis = std::chrono::duration<double, std::milli>(
                        std::chrono::steady_clock::now() - start)
                        .count();
    stats.tuning = std::move(report);
    if (!cacheWarning.empty())
      stats.cacheWarning = cacheWarning;
    return conv->withStats(std::move(stats));
  };

  // A remembered choice: this engine's, or one on disk (validated: a
  // damaged entry is a miss and is replaced).
  std::optional<std::string> remembered;
  std::optional<DiskCache> disk;
  std::function<void(llvm::StringRef)> progress;
  {
    std::lock_guard<std::mutex> lock(impl->mutex);
    progress = impl->progress;
    if (!impl->cacheOptions.directory.empty())
      disk.emplace(impl->cacheOptions.directory);
    auto it = impl->tuned.find(key);
    if (it != impl->tuned.end())
      remembered = it->second;
  }
  if (!remembered && disk) {
    if (std::optional<std::string> entry = disk->load(key, &cacheWarning)) {
      std::string error;
      if (*entry == kHeuristicEntry)
        remembered = "";
      else if (parseIGemmConfig(&impl->context, *entry, error))
        remembered = *entry;
      else
        cacheWarning =
            "ignoring tuning entry " + disk->pathFor(key) + ": " + error;
    }
  }
  if (remembered) {
    auto conv = compileConfigured(spec, withConfig(*remembered), true);
    if (conv) {
      TuningReport report;
      report.chosen = *remembered;
      report.remembered = true;
      return finish(*conv, std::move(report));
    }
    // A remembered configuration this compiler refuses is tuned afresh.
    cacheWarning = "the remembered tile configuration " + *remembered +
                   " no longer compiles (" + llvm::toString(conv.takeError()) +
                   "); tuned again";
  }

  // The candidates: the heuristic's configuration first.
  std::vector<std::string> configs = {""};
  {
    std::lock_guard<std::mutex> lock(impl->mutex);
    MLIRContext *context = &impl->context;
    context->getOrLoadDialect<Conv3dDialect>();
    Type elementType =
        spec.inputType == ElementType::f16    ? Type(Float16Type::get(context))
        : spec.inputType == ElementType::bf16 ? Type(BFloat16Type::get(context))
                                              : Type(Float32Type::get(context));
    bool quantizesInTile =
        spec.inputQuantBlockSize && options.quantPlacement == "tile";
    for (IGemmConfigAttr config : tuningCandidates(
             context, spec.geometry, options.target, spec.filterLayout,
             elementType, spec.inputQuantBlockSize, quantizesInTile))
      configs.push_back(formatIGemmConfig(config));
  }
  if (progress)
    progress(
        llvm::formatv("tuning: timing {0} tile configurations", configs.size())
            .str());

  TuningData data(spec);
  std::vector<double> baseline;
  TuningReport report;
  int repeat = repeatsFor(options.target);
  double tolerance = defaultTolerance(spec.outputType);
  for (const std::string &config : configs) {
    TuningTrial trial;
    trial.config = config;
    // The heuristic's kernel is the one an untuned compile would use: keep
    // it; the others are compiled for this trial only.
    auto conv = compileConfigured(spec, withConfig(config), config.empty());
    if (!conv) {
      // The heuristic must compile; a candidate may be refused by a plan.
      if (config.empty())
        return conv.takeError();
      std::string message = llvm::toString(conv.takeError());
      trial.error = llvm::StringRef(message).trim().rsplit('\n').second.str();
      if (trial.error.empty())
        trial.error = message;
    } else {
      HostTensor result;
      llvm::Expected<double> millis = data.time(**conv, spec, repeat, result);
      if (!millis)
        return llvm::createStringError(
            "tuning runs candidate kernels" +
            std::string(options.target == Target::cpu ? "" : " on the GPU") +
            ": " + llvm::toString(millis.takeError()));
      trial.medianMillis = *millis;
      if (config.empty()) {
        baseline = toDoubles(result);
      } else {
        double difference = relativeL2Error(baseline, result);
        if (!(difference <= tolerance))
          trial.error = llvm::formatv("result differs from the heuristic "
                                      "configuration's by {0:e2}",
                                      difference);
      }
    }
    if (progress)
      progress("tuning: " + describeTrial(trial));
    report.trials.push_back(std::move(trial));
  }

  const TuningTrial *best = &report.trials.front();
  for (const TuningTrial &trial : report.trials)
    if (trial.error.empty() && trial.medianMillis < best->medianMillis)
      best = &trial;
  report.chosen = best->config;
  {
    std::lock_guard<std::mutex> lock(impl->mutex);
    if (impl->cacheOptions.inMemory)
      impl->tuned[key] = report.chosen;
  }
  if (disk) {
    llvm::StringRef entry = report.chosen.empty()
                                ? llvm::StringRef(kHeuristicEntry)
                                : llvm::StringRef(report.chosen);
    if (llvm::Error error = disk->store(key, entry))
      cacheWarning = llvm::toString(std::move(error));
  }
  auto conv = compileConfigured(spec, withConfig(report.chosen), true);
  if (!conv)
    return conv.takeError();
  return finish(*conv, std::move(report));
}
