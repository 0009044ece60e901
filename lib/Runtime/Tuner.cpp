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
#include "conv3d/Runtime/TuningProblem.h"
#include "conv3d/Target/KernelFamily.h"
#include "conv3d/Target/TmaChecks.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>

using namespace mlir;
using namespace mlir::conv3d;

namespace {

/// Timed runs per candidate: about 50 ms of kernel time (at least 3, at
/// most 10 runs): short GPU kernels get ten, long CPU runs three.
int repeatsFor(double firstMillis) {
  return static_cast<int>(
      std::clamp(std::ceil(50.0 / std::max(firstMillis, 1e-3)), 3.0, 10.0));
}

/// Random values (never zeros) for `tensor`: a random block of up to 2^20
/// elements repeated, which times like fresh data and, unlike drawing every
/// element, takes no time on the gigabyte tensors of large convolutions.
void fillRepeatedRandom(HostTensor &tensor, uint64_t seed, double stddev) {
  int64_t n = tensor.numElements();
  HostTensor block =
      HostTensor::zeros(tensor.type, {std::min<int64_t>(n, int64_t(1) << 20)});
  fillRandomNormal(block, seed, stddev);
  for (size_t at = 0; at < tensor.bytes.size(); at += block.bytes.size())
    std::copy_n(block.bytes.begin(),
                std::min(block.bytes.size(), tensor.bytes.size() - at),
                tensor.bytes.begin() + at);
}

/// Random operands for `spec` (and the output's initial contents).
struct TuningData {
  explicit TuningData(const ConvSpec &spec)
      : input(HostTensor::zeros(spec.inputType, spec.inputShape())),
        filter(HostTensor::zeros(spec.inputType, spec.filterShape())),
        bias(HostTensor::zeros(ElementType::f32, {spec.geometry.filters})),
        residual(HostTensor::zeros(spec.outputType, spec.outputShape())),
        output(HostTensor::zeros(spec.outputType, spec.outputShape())),
        history(HostTensor::zeros(spec.inputType, spec.historyShape())),
        normGamma(
            HostTensor::zeros(ElementType::f32, {spec.geometry.channels})),
        normBeta(
            HostTensor::zeros(ElementType::f32, {spec.geometry.channels})) {
    fillRepeatedRandom(input, 1, 1.0);
    fillRepeatedRandom(filter, 2,
                       1.0 / std::sqrt(double(spec.geometry.gemmK())));
    fillRandomNormal(bias, 3, 0.5);
    if (spec.hasResidual)
      fillRepeatedRandom(residual, 4, 1.0);
    if (spec.accumulate)
      fillRepeatedRandom(output, 5, 1.0);
    else
      fillPoison(output);
    for (int64_t i = 0, e = std::min<int64_t>(input.numElements(), 1 << 20);
         i < e; ++i)
      amax = std::max(amax, static_cast<float>(std::fabs(input.get(i))));
    buffers.input = &input;
    buffers.filter = &filter;
    buffers.bias = spec.hasBias ? &bias : nullptr;
    buffers.residual = spec.hasResidual ? &residual : nullptr;
    if (spec.geometry.historyDepth > 0) {
      fillRepeatedRandom(history, 6, 1.0);
      buffers.history = &history;
    }
    if (spec.hasNorm) {
      fillRandomNormal(normGamma, 7, 1.0);
      buffers.normGamma = &normGamma;
    }
    if (spec.hasNormBeta) {
      fillRandomNormal(normBeta, 8, 0.5);
      buffers.normBeta = &normBeta;
    }
    if (spec.packedFilter) {
      // A packed filter of random codes (every nibble is an E2M1 value)
      // and scales from 2^-2 to 2^2 (E4M3 bytes 0x28 to 0x48), with the
      // amax that makes its values about as large as the filter's.
      packed.codes.resize(filter.numElements() / 2);
      packed.scales.resize(packed.codes.size() / 8);
      std::mt19937_64 rng(9);
      for (uint8_t &code : packed.codes)
        code = uint8_t(rng());
      for (uint8_t &scale : packed.scales)
        scale = uint8_t(0x28 + rng() % 0x21);
      buffers.packedFilter = &packed;
      buffers.filterAmax =
          float(2688.0 / 3.0 / std::sqrt(double(spec.geometry.gemmK())));
    }
    buffers.amax = amax;
    buffers.output = &output;
  }

  HostTensor input, filter, bias, residual, output;
  HostTensor history, normGamma, normBeta;
  Engine::PackedNVFP4 packed;
  float amax = 0.0f;
  HostConvBuffers buffers;
};

/// The elements candidates' results are compared on: about 2^20, evenly
/// strided with an odd stride, so every output tile of a GPU kernel (its
/// rows are contiguous runs of at least 512 elements) is sampled.
std::vector<int64_t> sampleIndices(int64_t numElements) {
  int64_t stride = std::max<int64_t>(1, numElements >> 20) | 1;
  std::vector<int64_t> indices;
  for (int64_t i = 0; i < numElements; i += stride)
    indices.push_back(i);
  return indices;
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

ConvProblem mlir::conv3d::tuningProblem(MLIRContext *context,
                                        const ConvSpec &spec,
                                        const CompileOptions &options) {
  // The convolution as its kernels see it. A packed filter is unpacked
  // (nvfp4-mode=fake) before any kernel sees it. The input prologue is not
  // a fact here: it runs in a prepass unless prologue-placement=fused, and
  // then the candidates of a kernel that does not apply it fail to compile
  // and are skipped, as a plan's refusals are.
  ConvProblem problem;
  problem.geometry = spec.geometry;
  problem.filterLayout = spec.filterLayout;
  problem.inputType =
      spec.inputType == ElementType::f16    ? Type(Float16Type::get(context))
      : spec.inputType == ElementType::bf16 ? Type(BFloat16Type::get(context))
                                            : Type(Float32Type::get(context));
  problem.quantBlockSize = spec.inputQuantBlockSize;
  problem.quantizesInTile = spec.inputQuantBlockSize &&
                            options.quantPlacement == QuantPlacement::Tile;
  problem.hasHistory = spec.geometry.historyDepth != 0;
  // On sm90, conv3d-relayout-filter pads C to a multiple of 8 for the TMA
  // kernel: the candidates are those of the convolution the kernels see.
  if (options.target == Target::sm90)
    if (std::optional<int64_t> channels = tmaPaddedChannels(problem))
      problem.geometry.channels = *channels;
  return problem;
}

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
      disk.emplace(impl->cacheOptions.directory, impl->cacheOptions.maxBytes);
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
    ConvProblem problem = tuningProblem(context, spec, options);
    for (IGemmConfigAttr config :
         tuningCandidates(context, problem, options.target))
      configs.push_back(formatIGemmConfig(config));
  }
  if (progress)
    progress(
        llvm::formatv("tuning: timing {0} tile configurations", configs.size())
            .str());

  auto runError = [&](llvm::Error error) {
    return llvm::createStringError(
        "tuning runs candidate kernels" +
        std::string(options.target == Target::cpu ? "" : " on the GPU") + ": " +
        llvm::toString(std::move(error)));
  };
  TuningData data(spec);
  auto session = ConvRunSession::create(options.target, data.buffers);
  if (!session)
    return runError(session.takeError());
  std::vector<int64_t> samples = sampleIndices(data.output.numElements());
  std::vector<double> baseline;
  HostTensor result;
  TuningReport report;
  int repeat = 0;
  double tolerance = spec.checkTolerance();
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
      if (config.empty()) {
        // One untimed run of the heuristic's kernel sizes the repeats.
        auto first = (*session)->run(**conv, 1, &result);
        if (!first)
          return runError(first.takeError());
        repeat = repeatsFor(*first);
      }
      llvm::Expected<double> millis = (*session)->run(**conv, repeat, &result);
      if (!millis)
        return runError(millis.takeError());
      trial.medianMillis = *millis;
      // The sampled output (unwritten elements are NaN poison) within the
      // output type's tolerance of the heuristic's result.
      std::vector<double> sampled;
      HostTensor picked =
          HostTensor::zeros(result.type, {int64_t(samples.size())});
      for (auto [i, index] : llvm::enumerate(samples)) {
        sampled.push_back(result.get(index));
        picked.set(i, result.get(index));
      }
      if (config.empty()) {
        baseline = std::move(sampled);
      } else {
        double difference = relativeL2Error(baseline, picked);
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
