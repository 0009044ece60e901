//===- SpecRunner.cpp - conv3d-run on a convolution spec ------------------===//

#include "Runners.h"

#include "conv3d/Quant/NVFP4Reference.h"
#include "conv3d/Reference/ReferenceConv.h"
#include "conv3d/Runtime/Engine.h"
#include "conv3d/Runtime/HostRunner.h"
#include "conv3d/Support/Npy.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <random>
#include <set>
#include <tuple>
#include <unistd.h>

using namespace mlir::conv3d;
using namespace conv3d_run;

double conv3d_run::median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

int conv3d_run::fail(const llvm::Twine &message, int code) {
  llvm::errs() << "conv3d-run: error: " << message << "\n";
  return code;
}

void conv3d_run::progress(const RunRequest &request,
                          const llvm::Twine &message) {
  if (!request.quiet)
    llvm::errs() << "conv3d-run: " << message << "\n";
}

llvm::Expected<HostTensor>
conv3d_run::initialOutput(const ConvSpec &spec,
                          const std::vector<int64_t> &shape, uint64_t seed) {
  llvm::Expected<HostTensor> init =
      HostTensor::allocate(spec.outputType, shape, "output");
  if (!init)
    return init.takeError();
  if (spec.accumulate)
    fillRandomNormal(*init, seed, 1.0);
  else
    fillPoison(*init);
  return init;
}

/// Checks, before anything is allocated, that the host buffers a run needs
/// together (input, filter, bias, residual, initial and computed output,
/// and the float64 reference when checking) fit the machine's memory: a
/// spec too large is an error naming the bytes, never an out-of-memory
/// abort. (Each allocation is checked on its own too: HostTensor::allocate.)
static llvm::Error checkHostMemory(const ConvSpec &spec, bool check) {
  auto bytes = [](const std::vector<int64_t> &shape, ElementType type,
                  const char *what) {
    return tensorBytes(shape, int64_t(elementSize(type)), what);
  };
  llvm::Expected<int64_t> input =
      bytes(spec.inputShape(), spec.inputType, "input");
  if (!input)
    return input.takeError();
  llvm::Expected<int64_t> filter =
      bytes(spec.filterShape(), spec.inputType, "filter");
  if (!filter)
    return filter.takeError();
  llvm::Expected<int64_t> output =
      bytes(spec.outputShape(), spec.outputType, "output");
  if (!output)
    return output.takeError();
  llvm::Expected<int64_t> reference =
      tensorBytes(spec.outputShape(), 8, "float64 reference");
  if (!reference)
    return reference.takeError();
  int64_t outputs = 0, total = 0;
  bool overflow = llvm::MulOverflow(*output, int64_t(3), outputs) ||
                  llvm::AddOverflow(*input, *filter, total) ||
                  llvm::AddOverflow(total, outputs, total) ||
                  (check && llvm::AddOverflow(total, *reference, total));
  if (overflow)
    return llvm::createStringError("the spec's host buffers exceed 2^63 bytes");
  int64_t physical = physicalMemoryBytes();
  if (total > physical)
    return llvm::createStringError(llvm::formatv(
        "the spec's host buffers need {0} bytes (input {1}, filter {2}, "
        "output {3} x 3{4}); this machine has {5}",
        total, *input, *filter, *output,
        check ? llvm::formatv(", float64 reference {0}", *reference).str()
              : std::string(),
        physical));
  return llvm::Error::success();
}

llvm::Expected<HostTensor>
conv3d_run::loadOrRandom(const std::string &path, llvm::StringRef what,
                         ElementType type, const std::vector<int64_t> &shape,
                         uint64_t seed, double stddev) {
  if (path.empty()) {
    llvm::Expected<HostTensor> tensor = HostTensor::allocate(type, shape, what);
    if (tensor)
      fillRandomNormal(*tensor, seed, stddev);
    return tensor;
  }
  llvm::Expected<HostTensor> tensor = readNpy(path, type);
  if (!tensor)
    return tensor.takeError();
  if (tensor->shape != shape) {
    std::string expected, got;
    for (int64_t s : shape)
      expected += (expected.empty() ? "" : "x") + std::to_string(s);
    for (int64_t s : tensor->shape)
      got += (got.empty() ? "" : "x") + std::to_string(s);
    return llvm::createStringError(what.str() + " file '" + path +
                                   "' has shape " + got + ", expected " +
                                   expected);
  }
  return tensor;
}

static float maxAbs(const HostTensor &tensor) {
  double result = 0;
  for (int64_t i = 0, e = tensor.numElements(); i < e; ++i)
    if (std::isfinite(tensor.get(i)))
      result = std::max(result, std::fabs(tensor.get(i)));
  return static_cast<float>(result);
}

/// The output rows a sampled check compares: the first and the last, the
/// rows around flat output offsets 2^31 and 2^32 (where 32-bit index
/// arithmetic would break), and random ones: `count` distinct rows (or
/// all, or more when the fixed ones alone exceed it), sorted.
static std::vector<int64_t> sampleRows(const ConvGeometry &g, int64_t count,
                                       uint64_t seed) {
  int64_t rows = g.gemmM(), filters = g.filters;
  std::vector<int64_t> picked = {0, rows - 1};
  for (int64_t boundary : {int64_t(1) << 31, int64_t(1) << 32}) {
    int64_t row = boundary / filters;
    for (int64_t r = row - 1; r <= row + 1; ++r)
      if (r >= 0 && r < rows)
        picked.push_back(r);
  }
  int64_t wanted = std::min(count, rows);
  std::set<int64_t> unique(picked.begin(), picked.end());
  if (wanted * 2 >= rows) {
    for (int64_t row = 0; int64_t(unique.size()) < wanted; ++row)
      unique.insert(row);
  } else {
    std::mt19937_64 rng(seed ^ 0x5eed);
    std::uniform_int_distribution<int64_t> any(0, rows - 1);
    while (int64_t(unique.size()) < wanted)
      unique.insert(any(rng));
  }
  return std::vector<int64_t>(unique.begin(), unique.end());
}

/// The elements of `rows` (all F outputs of each) of an NDHWF output.
static HostTensor gatherRows(const HostTensor &output,
                             llvm::ArrayRef<int64_t> rows) {
  int64_t filters = output.shape.back();
  size_t rowBytes = size_t(filters) * elementSize(output.type);
  HostTensor gathered =
      HostTensor::zeros(output.type, {int64_t(rows.size()), filters});
  for (auto [i, row] : llvm::enumerate(rows))
    std::memcpy(gathered.bytes.data() + i * rowBytes,
                output.bytes.data() + size_t(row) * rowBytes, rowBytes);
  return gathered;
}

void conv3d_run::printResult(const RunRequest &request, const Measurement &m) {
  const ConvSpec &spec = request.spec;
  // No timed run (--emulate): no rate.
  double gflops =
      m.runMillis > 0 ? spec.geometry.flops() / (m.runMillis * 1e6) : 0.0;
  if (request.json) {
    llvm::json::Object object{
        {"status", m.passed ? "ok" : "check_failed"},
        {"spec", spec.describe()},
        {"options", request.options.describe()},
        {"compile_ms", m.compileMillis},
        {"compile_source", stringifyCacheSource(m.compileSource)},
        {"run_ms", m.runMillis},
        {"repeat", request.repeat},
        {"gflops", gflops}};
    if (!request.presetName.empty())
      object["preset"] = request.presetName;
    if (!m.tunedConfig.empty()) {
      object["tuned_config"] = m.tunedConfig;
      object["tune_ms"] = m.tuneMillis;
      object["tune_remembered"] = m.tuneRemembered;
    }
    if (m.relativeError) {
      object["rel_l2"] = *m.relativeError;
      object["tolerance"] = m.tolerance;
    }
    llvm::outs() << llvm::json::Value(std::move(object)) << "\n";
    return;
  }
  auto printRun = [&] {
    llvm::outs() << llvm::formatv("run: {0:f3} ms (median of {1}), {2:f2} "
                                  "GFLOP/s\n",
                                  m.runMillis, request.repeat, gflops);
  };
  auto printCheck = [&] {
    llvm::outs() << llvm::formatv(
        "check: rel. L2 error {0:e3} vs reference (tolerance {1:e1}): {2}\n",
        *m.relativeError, m.tolerance, m.passed ? "PASS" : "FAIL");
  };
  // --quiet: the result's last line only (the check's verdict, or the run
  // time without a check).
  if (request.quiet) {
    m.relativeError ? printCheck() : printRun();
    return;
  }
  llvm::outs() << "conv: " << spec.describe() << "\n";
  llvm::outs() << "options: " << request.options.describe() << "\n";
  llvm::outs() << llvm::formatv("compile: {0:f1} ms", m.compileMillis);
  if (m.compileSource != CacheSource::Compiled)
    llvm::outs() << " (" << stringifyCacheSource(m.compileSource) << ")";
  llvm::outs() << "\n";
  if (!m.tunedConfig.empty())
    llvm::outs() << llvm::formatv(
        "tuned config: {0} ({1})\n", m.tunedConfig,
        m.tuneRemembered
            ? "remembered"
            : llvm::formatv("tuned in {0:f0} ms", m.tuneMillis).str());
  printRun();
  if (m.relativeError)
    printCheck();
}

int conv3d_run::runSpec(const RunRequest &request) {
  const ConvSpec &spec = request.spec;
  Engine engine(request.cache);
  if (!request.emit.empty()) {
    EmitStage stage = request.emit == "mlir"      ? EmitStage::Mlir
                      : request.emit == "lowered" ? EmitStage::Lowered
                      : request.emit == "ptx"     ? EmitStage::Ptx
                                                  : EmitStage::Llvm;
    llvm::Expected<std::string> text =
        engine.emit(spec, request.options, stage);
    if (!text)
      return fail(llvm::toString(text.takeError()));
    llvm::outs() << *text;
    return kOk;
  }

  // A sampled check (--check-rows) holds no whole reference.
  if (llvm::Error error =
          checkHostMemory(spec, request.check && request.checkRows == 0))
    return fail(llvm::toString(std::move(error)));
  // Data: given files or fresh random values (never zeros); the output is
  // poisoned so that unwritten elements show as NaN.
  uint64_t seed = request.seed;
  double filterScale = 1.0 / std::sqrt(double(spec.geometry.gemmK()));
  auto input = loadOrRandom(request.inputPath, "input", spec.inputType,
                            spec.inputShape(), seed, 1.0);
  if (!input)
    return fail(llvm::toString(input.takeError()));
  auto filter = loadOrRandom(request.filterPath, "filter", spec.inputType,
                             spec.filterShape(), seed + 1, filterScale);
  if (!filter)
    return fail(llvm::toString(filter.takeError()));
  llvm::Expected<HostTensor> biasOr =
      HostTensor::allocate(ElementType::f32, {spec.geometry.filters}, "bias");
  if (!biasOr)
    return fail(llvm::toString(biasOr.takeError()));
  HostTensor bias = std::move(*biasOr);
  fillRandomNormal(bias, seed + 2, 0.5);
  // The residual is only allocated when used.
  HostTensor residual;
  if (spec.hasResidual) {
    llvm::Expected<HostTensor> residualOr =
        HostTensor::allocate(spec.outputType, spec.outputShape(), "residual");
    if (!residualOr)
      return fail(llvm::toString(residualOr.takeError()));
    residual = std::move(*residualOr);
    fillRandomNormal(residual, seed + 3, 1.0);
  }
  // History frames (the previous chunk's transformed input) and the
  // prologue's per-channel vectors, only when used.
  HostTensor history, normGamma, normBeta;
  if (spec.geometry.historyDepth > 0) {
    llvm::Expected<HostTensor> historyOr =
        HostTensor::allocate(spec.inputType, spec.historyShape(), "history");
    if (!historyOr)
      return fail(llvm::toString(historyOr.takeError()));
    history = std::move(*historyOr);
    fillRandomNormal(history, seed + 5, 1.0);
  }
  for (auto [tensor, used, offset] :
       {std::tuple{&normGamma, spec.hasNorm, 6},
        std::tuple{&normBeta, spec.hasNormBeta, 7}}) {
    if (!used)
      continue;
    llvm::Expected<HostTensor> vector = HostTensor::allocate(
        ElementType::f32, {spec.geometry.channels}, "norm vector");
    if (!vector)
      return fail(llvm::toString(vector.takeError()));
    *tensor = std::move(*vector);
    fillRandomNormal(*tensor, seed + offset, 1.0);
  }
  llvm::Expected<HostTensor> initOr =
      initialOutput(spec, spec.outputShape(), seed + 4);
  if (!initOr)
    return fail(llvm::toString(initOr.takeError()));
  HostTensor init = std::move(*initOr);
  float amax = request.amax ? *request.amax : maxAbs(*input);

  // A packed NVFP4 filter (--packed-filter, nvfp4-mode=real): packed once
  // on the host, checked against the reference packer. The reference
  // convolution reads the values it decodes to, the reference quantizer's
  // fake quantization of the filter (spec/nvfp4.md), in f32 for real NVFP4.
  std::optional<Engine::PackedNVFP4> packedFilter;
  float packedFilterAmax = 0.0f;
  // Real NVFP4 (the block-scaled sm100 kernel) multiplies the decoded
  // values themselves; fake mode rounds them to the input type.
  bool realNVFP4 = request.options.nvfp4Mode == NVFP4Mode::Real;
  if (spec.packedFilter) {
    packedFilterAmax =
        request.filterAmax ? *request.filterAmax : maxAbs(*filter);
    progress(request, llvm::formatv("packing the filter (real NVFP4, block "
                                    "16, amax {0})",
                                    packedFilterAmax));
    llvm::Expected<Engine::PackedNVFP4> packed = engine.quantizeFilter(
        spec, *filter, packedFilterAmax, CompileOptions{});
    if (!packed)
      return fail(llvm::toString(packed.takeError()));
    NVFP4Packed expected = referencePackNVFP4(*filter, 16, packedFilterAmax);
    if (packed->codes != expected.codes || packed->scales != expected.scales)
      return fail("the filter packing differs from the reference packer",
                  kCheckFailed);
    progress(request, "filter packing matches the reference bit for bit");
    // Only the sm100 block-scaled kernel multiplies the codes themselves,
    // and conv3d-run does not run sm100 code (it is assembled only).
    if (realNVFP4 && !request.emulate)
      return fail("a packed NVFP4 filter is multiplied only by the sm100 "
                  "block-scaled kernel, which conv3d-run compiles "
                  "(--emit=ptx) and runs in the PTX emulator (--emulate) "
                  "only: no sm_100 GPU has run it");
    packedFilter = std::move(*packed);
    if (realNVFP4) {
      // The decoded values as f32: the block-scaled kernel multiplies them
      // exactly, not rounded to the input type as fake quantization is.
      HostTensor exact = HostTensor::zeros(ElementType::f32, filter->shape);
      for (int64_t i = 0, e = exact.numElements(); i < e; ++i)
        exact.set(i, filter->get(i));
      *filter = referenceQuantize(exact, 16, packedFilterAmax, 1, 4);
    } else {
      *filter = referenceQuantize(*filter, 16, packedFilterAmax, 1, 4);
    }
  } else if (request.filterQuantBlockSize) {
    float filterAmax =
        request.filterAmax ? *request.filterAmax : maxAbs(*filter);
    progress(request, llvm::formatv("quantizing the filter (NVFP4, block "
                                    "{0}, amax {1})",
                                    *request.filterQuantBlockSize, filterAmax));
    llvm::Expected<HostTensor> quantized = engine.quantizeFilter(
        spec, *filter, *request.filterQuantBlockSize, filterAmax);
    if (!quantized)
      return fail(llvm::toString(quantized.takeError()));
    // The offline quantization must match the reference quantizer exactly.
    unsigned first = spec.filterLayout == FilterLayout::qrscf ? 0 : 1;
    HostTensor expected = referenceQuantize(
        *filter, *request.filterQuantBlockSize, filterAmax, first, first + 3);
    if (expected.bytes != quantized->bytes)
      return fail("offline filter quantization differs from the reference "
                  "quantizer",
                  kCheckFailed);
    progress(request, "filter quantization matches the reference bit for bit");
    *filter = std::move(*quantized);
  }

  if (!request.cache.warning.empty() && !request.cache.directory.empty())
    llvm::WithColor::warning(llvm::errs(), "conv3d-run")
        << "disk cache: " << request.cache.warning << "\n";
  progress(request, "compiling " + spec.describe());
  if (!request.quiet)
    engine.setProgressHandler(
        [&](llvm::StringRef line) { progress(request, line); });
  llvm::Expected<std::shared_ptr<const CompiledConv>> conv =
      engine.compile(spec, request.options);
  if (!conv)
    return fail(llvm::toString(conv.takeError()));
  Measurement m;
  const CompileStats &stats = (*conv)->getStats();
  m.compileMillis = stats.totalMillis;
  m.compileSource = stats.source;
  if (stats.source == CacheSource::Disk)
    progress(request, llvm::formatv("loaded from the disk cache in {0:f1} ms",
                                    m.compileMillis));
  else
    progress(request, llvm::formatv("compiled in {0:f1} ms", m.compileMillis));
  if (!stats.cacheWarning.empty())
    llvm::WithColor::warning(llvm::errs(), "conv3d-run")
        << "disk cache: " << stats.cacheWarning << "\n";
  if (stats.tuning) {
    m.tunedConfig =
        stats.tuning->chosen.empty() ? "heuristic" : stats.tuning->chosen;
    m.tuneMillis = stats.tuning->millis;
    m.tuneRemembered = stats.tuning->remembered;
  }

  HostTensor result = init;
  HostConvBuffers buffers;
  buffers.input = &*input;
  buffers.filter = &*filter;
  buffers.packedFilter = packedFilter ? &*packedFilter : nullptr;
  buffers.filterAmax = packedFilterAmax;
  buffers.bias = spec.hasBias ? &bias : nullptr;
  buffers.residual = spec.hasResidual ? &residual : nullptr;
  buffers.history = spec.geometry.historyDepth > 0 ? &history : nullptr;
  buffers.normGamma = spec.hasNorm ? &normGamma : nullptr;
  buffers.normBeta = spec.hasNormBeta ? &normBeta : nullptr;
  buffers.amax = amax;
  buffers.output = &result;
  HostRunTiming timing;
  timing.repeat = request.repeat;
  if (llvm::Error error = runWithHostBuffers(**conv, buffers, &timing))
    return fail(llvm::toString(std::move(error)));
  m.runMillis = timing.medianMillis;

  // The reference problem; real NVFP4 reads the quantized input unrounded.
  auto referenceOf = [&] {
    ReferenceConvProblem problem = referenceProblem(spec, buffers, &init);
    problem.roundQuantizedInput = !realNVFP4;
    return problem;
  };
  if (request.check && request.checkRows > 0) {
    std::vector<int64_t> rows =
        sampleRows(spec.geometry, request.checkRows, seed);
    progress(request, llvm::formatv("checking {0} output rows against the "
                                    "reference",
                                    rows.size()));
    std::vector<double> reference = referenceConvRows(referenceOf(), rows);
    m.recordCheck(relativeL2Error(reference, gatherRows(result, rows)),
                  spec.checkTolerance());
  } else if (request.check) {
    progress(request, "checking against the reference");
    std::vector<double> reference = referenceConv(referenceOf());
    m.recordCheck(relativeL2Error(reference, result), spec.checkTolerance());
  }
  return finishRun(request, m, result);
}

int conv3d_run::finishRun(const RunRequest &request, const Measurement &m,
                          const HostTensor &output) {
  if (!request.outputPath.empty())
    if (llvm::Error error = writeNpyF32(request.outputPath, output))
      return fail(llvm::toString(std::move(error)));
  printResult(request, m);
  return m.passed ? kOk : kCheckFailed;
}
