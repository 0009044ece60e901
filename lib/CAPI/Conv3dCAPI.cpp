//===- Conv3dCAPI.cpp - C API of conv3d-mlir ------------------------------===//

#include "conv3d/CAPI/conv3d.h"

#include "conv3d/Runtime/CausalConv3dStream.h"
#include "conv3d/Runtime/CudaDriver.h"
#include "conv3d/Runtime/Engine.h"
#include "conv3d/Runtime/Explain.h"
#include "conv3d/Support/HostTensor.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <cstring>

using namespace mlir::conv3d;

struct conv3d_engine {
  explicit conv3d_engine(CacheOptions cache) : engine(std::move(cache)) {}
  Engine engine;
};

struct conv3d_conv {
  std::shared_ptr<const CompiledConv> conv;
};

static void setError(char *buffer, size_t size, const std::string &message) {
  if (!buffer || size == 0)
    return;
  size_t n = std::min(size - 1, message.size());
  std::memcpy(buffer, message.data(), n);
  buffer[n] = '\0';
}

static std::optional<ElementType> toElementType(int32_t type) {
  switch (type) {
  case CONV3D_BF16:
    return ElementType::bf16;
  case CONV3D_F16:
    return ElementType::f16;
  case CONV3D_F32:
    return ElementType::f32;
  }
  return std::nullopt;
}

static llvm::Expected<ConvSpec> toSpec(const conv3d_spec &c) {
  ConvSpec spec;
  ConvGeometry &g = spec.geometry;
  g.batch = c.batch;
  g.inputSize = {c.depth, c.height, c.width};
  g.channels = c.channels;
  g.window = {c.window[0], c.window[1], c.window[2]};
  g.filters = c.filters;
  g.groups = c.groups == 0 ? 1 : c.groups;
  g.strides = {c.strides[0], c.strides[1], c.strides[2]};
  g.dilations = {c.dilations[0], c.dilations[1], c.dilations[2]};
  g.padLow = {c.padding[0], c.padding[2], c.padding[4]};
  g.padHigh = {c.padding[1], c.padding[3], c.padding[5]};
  std::optional<ElementType> in = toElementType(c.input_type);
  std::optional<ElementType> out = toElementType(c.output_type);
  if (!in || !out)
    return llvm::createStringError("unknown element type code");
  spec.inputType = *in;
  spec.outputType = *out;
  if (c.filter_layout != CONV3D_QRSCF && c.filter_layout != CONV3D_FQRSC)
    return llvm::createStringError("unknown filter layout code");
  spec.filterLayout = c.filter_layout == CONV3D_QRSCF ? FilterLayout::qrscf
                                                      : FilterLayout::fqrsc;
  if (c.activation < CONV3D_ACT_NONE || c.activation > CONV3D_ACT_GELU_TANH)
    return llvm::createStringError("unknown activation code");
  spec.activation = static_cast<Activation>(c.activation);
  spec.hasBias = c.has_bias;
  spec.hasResidual = c.has_residual;
  spec.accumulate = c.accumulate;
  if (c.quant_block_size)
    spec.inputQuantBlockSize = c.quant_block_size;
  if (llvm::Error error = spec.validate())
    return std::move(error);
  return spec;
}

/// The options text in the pipelines' own spelling (parsePipelineOptions:
/// one parser for conv3d-opt, the C API and Python).
static llvm::Expected<CompileOptions> toOptions(llvm::StringRef text) {
  return parsePipelineOptions(text);
}

/// `spec` with `ext` applied (the spec's depth is the input's own).
static llvm::Expected<ConvSpec> toSpec(const conv3d_spec &c,
                                       const conv3d_input_ext *ext) {
  if (!ext)
    return toSpec(c);
  if (ext->history_depth < 0)
    return llvm::createStringError("history_depth must be >= 0, got " +
                                   std::to_string(ext->history_depth));
  conv3d_spec base = c;
  // The geometry's depth is the concatenation's (a depth past int64 fails
  // validation below as a dynamic size).
  if (__builtin_add_overflow(c.depth, ext->history_depth, &base.depth))
    return llvm::createStringError("depth + history_depth overflows int64");
  llvm::Expected<ConvSpec> spec = toSpec(base);
  if (!spec)
    return spec.takeError();
  spec->geometry.historyDepth = ext->history_depth;
  if (ext->input_activation < CONV3D_ACT_NONE ||
      ext->input_activation > CONV3D_ACT_GELU_TANH)
    return llvm::createStringError("unknown input activation code");
  spec->inputActivation = static_cast<Activation>(ext->input_activation);
  spec->hasNorm = ext->has_norm;
  spec->hasNormBeta = ext->has_norm_beta;
  spec->normEps = ext->norm_eps;
  if (llvm::Error error = spec->validate())
    return std::move(error);
  return spec;
}

/// `spec` with both extensions applied, for a convolution of `kind`.
static llvm::Expected<ConvSpec> toSpec(const conv3d_spec &c,
                                       const conv3d_input_ext *inputExt,
                                       const conv3d_filter_ext *filterExt,
                                       ConvKind kind = ConvKind::fprop) {
  llvm::Expected<ConvSpec> spec = toSpec(c, inputExt);
  if (!spec || (!filterExt && kind == ConvKind::fprop))
    return spec;
  if (filterExt)
    spec->packedFilter = filterExt->packed_filter;
  spec->kind = kind;
  if (llvm::Error error = spec->validate())
    return std::move(error);
  return spec;
}

/// The spec (with both extensions, of `kind`) and the options of a
/// compilation request, or none after writing why to `error`.
static std::optional<std::pair<ConvSpec, CompileOptions>>
toRequest(const conv3d_spec &spec, const conv3d_input_ext *inputExt,
          const conv3d_filter_ext *filterExt, ConvKind kind,
          const char *options, char *error, size_t errorSize) {
  llvm::Expected<ConvSpec> parsed = toSpec(spec, inputExt, filterExt, kind);
  if (!parsed) {
    setError(error, errorSize, llvm::toString(parsed.takeError()));
    return std::nullopt;
  }
  llvm::Expected<CompileOptions> parsedOptions =
      toOptions(options ? options : "");
  if (!parsedOptions) {
    setError(error, errorSize, llvm::toString(parsedOptions.takeError()));
    return std::nullopt;
  }
  return std::pair{std::move(*parsed), std::move(*parsedOptions)};
}

/// The compilation of toRequest's request on `engine`: what every
/// conv3d_compile* returns once its own arguments are checked.
static conv3d_conv *compileRequest(conv3d_engine &engine,
                                   const conv3d_spec &spec,
                                   const conv3d_input_ext *inputExt,
                                   const conv3d_filter_ext *filterExt,
                                   ConvKind kind, const char *options,
                                   char *error, size_t errorSize) {
  auto request =
      toRequest(spec, inputExt, filterExt, kind, options, error, errorSize);
  if (!request)
    return nullptr;
  auto conv = engine.engine.compile(request->first, request->second);
  if (!conv) {
    setError(error, errorSize, llvm::toString(conv.takeError()));
    return nullptr;
  }
  return new conv3d_conv{std::move(*conv)};
}

extern "C" const char *conv3d_version(void) { return CONV3D_VERSION; }

extern "C" int conv3d_cuda_device(conv3d_device_info *info, char *error,
                                  size_t errorSize) {
  if (!info) {
    setError(error, errorSize, "conv3d_cuda_device: null argument");
    return 1;
  }
  llvm::Expected<CudaDriver &> driver = CudaDriver::get();
  llvm::Expected<DeviceInfo> device =
      driver ? driver->deviceInfo()
             : llvm::Expected<DeviceInfo>(driver.takeError());
  if (!device) {
    setError(error, errorSize, llvm::toString(device.takeError()));
    return 1;
  }
  info->ordinal = device->ordinal;
  info->cc_major = device->ccMajor;
  info->cc_minor = device->ccMinor;
  info->multiprocessors = device->multiprocessors;
  setError(info->name, sizeof(info->name), device->name);
  return 0;
}

extern "C" int conv3d_cuda_pool_memory(conv3d_pool_memory *memory,
                                       int reset_high, char *error,
                                       size_t errorSize) {
  if (!memory) {
    setError(error, errorSize, "conv3d_cuda_pool_memory: null argument");
    return 1;
  }
  llvm::Expected<CudaDriver &> driver = CudaDriver::get();
  llvm::Expected<CudaDriver::PoolMemory> pool =
      driver ? driver->poolMemory(reset_high != 0)
             : llvm::Expected<CudaDriver::PoolMemory>(driver.takeError());
  if (!pool) {
    setError(error, errorSize, llvm::toString(pool.takeError()));
    return 1;
  }
  memory->reserved = pool->reserved;
  memory->used = pool->used;
  memory->used_high = pool->usedHigh;
  memory->graph_used = pool->graphUsed;
  memory->graph_used_high = pool->graphUsedHigh;
  memory->graph_reported = pool->graphReported ? 1 : 0;
  return 0;
}

extern "C" conv3d_engine *conv3d_engine_create(void) {
  return new conv3d_engine(CacheOptions::fromEnvironment());
}

extern "C" conv3d_engine *
conv3d_engine_create_with_cache(const char *cache_directory) {
  // The directory is the caller's; its bound still comes from
  // $CONV3D_CACHE_MAX_MB.
  CacheOptions cache = CacheOptions::fromEnvironment();
  cache.directory = cache_directory ? cache_directory : "";
  return new conv3d_engine(std::move(cache));
}

extern "C" void conv3d_engine_destroy(conv3d_engine *engine) { delete engine; }

extern "C" int conv3d_spec_geometry(const conv3d_spec *spec,
                                    int64_t output_shape[5], double *flops,
                                    char *error, size_t errorSize) {
  if (!spec || !output_shape || !flops) {
    setError(error, errorSize, "conv3d_spec_geometry: null argument");
    return 1;
  }
  // toSpec validates the geometry (ConvSpec::validate).
  return conv3d_spec_geometry_ext(spec, /*ext=*/nullptr, output_shape, flops,
                                  error, errorSize);
}

extern "C" conv3d_conv *conv3d_compile(conv3d_engine *engine,
                                       const conv3d_spec *spec,
                                       const char *options, char *error,
                                       size_t errorSize) {
  return conv3d_compile_filter_ext(engine, spec, /*inputExt=*/nullptr,
                                   /*filterExt=*/nullptr, options, error,
                                   errorSize);
}

extern "C" double conv3d_compile_millis(const conv3d_conv *conv) {
  return conv ? conv->conv->getStats().totalMillis : 0.0;
}

extern "C" const char *conv3d_conv_config(const conv3d_conv *conv) {
  return conv ? conv->conv->getOptions().config.c_str() : "";
}

extern "C" int conv3d_compile_source(const conv3d_conv *conv) {
  if (!conv)
    return CONV3D_COMPILED;
  switch (conv->conv->getStats().source) {
  case CacheSource::Compiled:
    return CONV3D_COMPILED;
  case CacheSource::Memory:
    return CONV3D_FROM_MEMORY_CACHE;
  case CacheSource::Disk:
    return CONV3D_FROM_DISK_CACHE;
  }
  return CONV3D_COMPILED;
}

extern "C" void conv3d_conv_destroy(conv3d_conv *conv) { delete conv; }

/// The calling thread's last run failure (conv3d_last_error).
static thread_local std::string lastRunError;

/// Records a failed run's message for conv3d_last_error and in the caller's
/// buffer; returns conv3d_run's failure status.
static int failRun(char *error, size_t errorSize, std::string message) {
  setError(error, errorSize, message);
  lastRunError = std::move(message);
  return 1;
}

extern "C" const char *conv3d_last_error(void) { return lastRunError.c_str(); }

/// conv3d_run's operands as ConvArgs; the other entry points add theirs.
static ConvArgs forwardArgs(const void *input, const void *filter,
                            const void *bias, const void *residual, float amax,
                            void *output, void *stream) {
  ConvArgs args;
  args.input = input;
  args.filter = filter;
  args.bias = bias;
  args.residual = residual;
  args.amax = amax;
  args.output = output;
  args.stream = stream;
  return args;
}

/// Runs `conv` on `args`: 0, or failRun's status with the run's message.
static int runRecorded(const conv3d_conv &conv, const ConvArgs &args,
                       char *error, size_t errorSize) {
  if (llvm::Error e = conv.conv->runUnchecked(args))
    return failRun(error, errorSize, llvm::toString(std::move(e)));
  return 0;
}

extern "C" int conv3d_run(const conv3d_conv *conv, const void *input,
                          const void *filter, const void *bias,
                          const void *residual, float amax, void *output,
                          void *stream, char *error, size_t errorSize) {
  if (!conv)
    return failRun(error, errorSize, "conv3d_run: null convolution");
  return runRecorded(
      *conv, forwardArgs(input, filter, bias, residual, amax, output, stream),
      error, errorSize);
}

extern "C" int conv3d_run_packed(const conv3d_run_args *packed) {
  if (!packed)
    return failRun(nullptr, 0, "conv3d_run_packed: null arguments");
  // Copied out through an untyped pointer: the caller's bytes may have any
  // alignment (a copy through the typed one may assume its alignment).
  const void *bytes = packed;
  conv3d_run_args args;
  std::memcpy(&args, bytes, sizeof(args));
  return conv3d_run(args.conv, args.input, args.filter, args.bias,
                    args.residual, args.amax, args.output, args.stream,
                    args.error, args.error_size);
}

//===----------------------------------------------------------------------===//
// Training: the gradients
//===----------------------------------------------------------------------===//

extern "C" conv3d_conv *conv3d_compile_kind(conv3d_engine *engine,
                                            const conv3d_spec *spec,
                                            int32_t kind, const char *options,
                                            char *error, size_t errorSize) {
  if (!engine || !spec) {
    setError(error, errorSize, "conv3d_compile_kind: null engine or spec");
    return nullptr;
  }
  std::optional<ConvKind> parsedKind =
      symbolizeConvKind(static_cast<uint32_t>(kind));
  if (!parsedKind) {
    setError(error, errorSize,
             "conv3d_compile_kind: kind must be CONV3D_KIND_FPROP, _DGRAD or "
             "_WGRAD, got " +
                 std::to_string(kind));
    return nullptr;
  }
  return compileRequest(*engine, *spec, /*inputExt=*/nullptr,
                        /*filterExt=*/nullptr, *parsedKind, options, error,
                        errorSize);
}

extern "C" int conv3d_conv_kind(const conv3d_conv *conv) {
  return conv ? static_cast<int>(conv->conv->getSpec().kind)
              : CONV3D_KIND_FPROP;
}

extern "C" int conv3d_run_gradient(const conv3d_conv *conv, const void *input,
                                   const void *filter, const void *gradOutput,
                                   void *output, void *stream, char *error,
                                   size_t errorSize) {
  if (!conv)
    return failRun(error, errorSize, "conv3d_run_gradient: null convolution");
  ConvKind kind = conv->conv->getSpec().kind;
  if (kind == ConvKind::fprop)
    return failRun(error, errorSize,
                   "conv3d_run_gradient: the convolution was compiled for "
                   "fprop; run it with conv3d_run");
  if (kind == ConvKind::dgrad && input)
    return failRun(error, errorSize,
                   "conv3d_run_gradient: dgrad reads grad_output and the "
                   "filter; the input must be null");
  if (kind == ConvKind::wgrad && filter)
    return failRun(error, errorSize,
                   "conv3d_run_gradient: wgrad reads the input and "
                   "grad_output; the filter must be null");
  if (kind == ConvKind::dgrad && conv->conv->getSpec().hasResidual)
    return failRun(error, errorSize,
                   "conv3d_run_gradient: the dgrad was compiled through an "
                   "activation; run it with "
                   "conv3d_run_dgrad_through_activation");
  ConvArgs args =
      forwardArgs(input, filter, /*bias=*/nullptr,
                  /*residual=*/nullptr, /*amax=*/0.0f, output, stream);
  args.gradOutput = gradOutput;
  return runRecorded(*conv, args, error, errorSize);
}

extern "C" int conv3d_run_dgrad_through_activation(
    const conv3d_conv *conv, const void *filter, const void *gradOutput,
    const void *preActivation, void *output, void *stream, char *error,
    size_t errorSize) {
  if (!conv)
    return failRun(error, errorSize,
                   "conv3d_run_dgrad_through_activation: null convolution");
  const ConvSpec &spec = conv->conv->getSpec();
  if (spec.kind != ConvKind::dgrad || !spec.hasResidual)
    return failRun(error, errorSize,
                   "conv3d_run_dgrad_through_activation: the convolution was "
                   "not compiled as a dgrad through an activation (kind "
                   "dgrad, an activation and has_residual)");
  ConvArgs args = forwardArgs(/*input=*/nullptr, filter, /*bias=*/nullptr,
                              preActivation, /*amax=*/0.0f, output, stream);
  args.gradOutput = gradOutput;
  return runRecorded(*conv, args, error, errorSize);
}

//===----------------------------------------------------------------------===//
// History, input prologue, causal streams
//===----------------------------------------------------------------------===//

struct conv3d_causal_stream {
  std::unique_ptr<CausalConv3dStream> stream;
};

extern "C" int conv3d_spec_geometry_ext(const conv3d_spec *spec,
                                        const conv3d_input_ext *ext,
                                        int64_t output_shape[5], double *flops,
                                        char *error, size_t errorSize) {
  if (!spec || !output_shape || !flops) {
    setError(error, errorSize, "conv3d_spec_geometry_ext: null argument");
    return 1;
  }
  llvm::Expected<ConvSpec> parsed = toSpec(*spec, ext);
  if (!parsed) {
    setError(error, errorSize, llvm::toString(parsed.takeError()));
    return 1;
  }
  std::array<int64_t, 5> shape = parsed->geometry.outputShape();
  std::copy(shape.begin(), shape.end(), output_shape);
  *flops = parsed->geometry.flops();
  return 0;
}

extern "C" conv3d_conv *conv3d_compile_ext(conv3d_engine *engine,
                                           const conv3d_spec *spec,
                                           const conv3d_input_ext *ext,
                                           const char *options, char *error,
                                           size_t errorSize) {
  return conv3d_compile_filter_ext(engine, spec, ext, nullptr, options, error,
                                   errorSize);
}

extern "C" conv3d_conv *
conv3d_compile_filter_ext(conv3d_engine *engine, const conv3d_spec *spec,
                          const conv3d_input_ext *inputExt,
                          const conv3d_filter_ext *filterExt,
                          const char *options, char *error, size_t errorSize) {
  if (!engine || !spec) {
    setError(error, errorSize, "conv3d_compile: null engine or spec");
    return nullptr;
  }
  return compileRequest(*engine, *spec, inputExt, filterExt, ConvKind::fprop,
                        options, error, errorSize);
}

extern "C" char *conv3d_explain(conv3d_engine *engine, const conv3d_spec *spec,
                                const conv3d_input_ext *inputExt,
                                const conv3d_filter_ext *filterExt,
                                const char *options, int32_t format,
                                char *error, size_t errorSize) {
  if (!engine || !spec) {
    setError(error, errorSize, "conv3d_explain: null engine or spec");
    return nullptr;
  }
  if (format != CONV3D_EXPLAIN_TEXT && format != CONV3D_EXPLAIN_JSON) {
    setError(error, errorSize,
             "conv3d_explain: format must be CONV3D_EXPLAIN_TEXT or "
             "CONV3D_EXPLAIN_JSON, got " +
                 std::to_string(format));
    return nullptr;
  }
  auto request = toRequest(*spec, inputExt, filterExt, ConvKind::fprop, options,
                           error, errorSize);
  if (!request)
    return nullptr;
  llvm::Expected<Explanation> explanation =
      engine->engine.explain(request->first, request->second);
  if (!explanation) {
    setError(error, errorSize, llvm::toString(explanation.takeError()));
    return nullptr;
  }
  std::string text;
  if (format == CONV3D_EXPLAIN_JSON)
    llvm::raw_string_ostream(text) << explanation->toJSON();
  else
    text = explanation->toText();
  return strdup(text.c_str());
}

extern "C" void conv3d_string_destroy(char *text) { free(text); }

extern "C" int conv3d_run_ext(const conv3d_conv *conv, const void *input,
                              const void *history, const void *filter,
                              const void *norm_gamma, const void *norm_beta,
                              const void *bias, const void *residual,
                              float amax, void *output, void *stream,
                              char *error, size_t errorSize) {
  if (!conv)
    return failRun(error, errorSize, "conv3d_run_ext: null convolution");
  ConvArgs args =
      forwardArgs(input, filter, bias, residual, amax, output, stream);
  args.history = history;
  args.normGamma = norm_gamma;
  args.normBeta = norm_beta;
  if (llvm::Error e = conv->conv->runUnchecked(args))
    return failRun(error, errorSize, llvm::toString(std::move(e)));
  return 0;
}

/// A copy of the weight `what` a causal stream reads (`shape` of `type`), from
/// the caller's `data` of `size` bytes; none when the spec has none. An error
/// naming it when it is missing, given without the spec having it, or of
/// another size than the copy reads (checked before anything is read).
static llvm::Expected<std::optional<HostTensor>>
copyWeight(llvm::StringRef what, bool used, const void *data, size_t size,
           ElementType type, std::vector<int64_t> shape) {
  if (used != (data != nullptr))
    return llvm::createStringError(
        "the " + what +
        (used ? " is missing" : " is given but the spec has none"));
  if (!used)
    return std::nullopt;
  int64_t count = numElementsOf(shape);
  size_t needed = size_t(count) * elementSize(type);
  if (size != needed)
    return llvm::createStringError(
        llvm::formatv(
            "the {0} has {1} bytes; the spec reads {2} ({3} {4} values)", what,
            size, needed, count, stringifyElementType(type))
            .str());
  HostTensor tensor = HostTensor::zeros(type, std::move(shape));
  std::memcpy(tensor.data(), data, needed);
  return tensor;
}

extern "C" conv3d_causal_stream *conv3d_causal_stream_create(
    conv3d_engine *engine, const conv3d_spec *spec, const conv3d_input_ext *ext,
    const char *options, const void *filter, size_t filterSize,
    const void *bias, size_t biasSize, const void *norm_gamma,
    size_t normGammaSize, const void *norm_beta, size_t normBetaSize,
    char *error, size_t errorSize) {
  if (!engine || !spec || !filter) {
    setError(error, errorSize,
             "conv3d_causal_stream_create: null engine, spec or filter");
    return nullptr;
  }
  auto request = toRequest(*spec, ext, /*filterExt=*/nullptr, ConvKind::fprop,
                           options, error, errorSize);
  if (!request)
    return nullptr;
  // The weights are copied into tensors of the spec's shapes, each after
  // its caller-given size is checked against the bytes the copy reads.
  const auto &[s, parsedOptions] = *request;
  const int64_t filters = s.geometry.filters, channels = s.geometry.channels;
  auto refuse = [&](llvm::Error reason) -> conv3d_causal_stream * {
    setError(error, errorSize,
             "conv3d_causal_stream_create: " +
                 llvm::toString(std::move(reason)));
    return nullptr;
  };
  auto filterCopy = copyWeight("filter", true, filter, filterSize, s.inputType,
                               s.filterShape());
  if (!filterCopy)
    return refuse(filterCopy.takeError());
  auto biasCopy = copyWeight("bias", s.hasBias, bias, biasSize,
                             ElementType::f32, {filters});
  if (!biasCopy)
    return refuse(biasCopy.takeError());
  auto gammaCopy = copyWeight("norm gamma", s.hasNorm, norm_gamma,
                              normGammaSize, ElementType::f32, {channels});
  if (!gammaCopy)
    return refuse(gammaCopy.takeError());
  auto betaCopy = copyWeight("norm beta", s.hasNormBeta, norm_beta,
                             normBetaSize, ElementType::f32, {channels});
  if (!betaCopy)
    return refuse(betaCopy.takeError());
  auto pointer = [](std::optional<HostTensor> &copy) {
    return copy ? &*copy : nullptr;
  };
  CausalConvWeights causalWeights;
  causalWeights.filter = pointer(*filterCopy);
  causalWeights.bias = pointer(*biasCopy);
  causalWeights.normGamma = pointer(*gammaCopy);
  causalWeights.normBeta = pointer(*betaCopy);
  auto stream = CausalConv3dStream::create(engine->engine, s, parsedOptions,
                                           causalWeights);
  if (!stream) {
    setError(error, errorSize, llvm::toString(stream.takeError()));
    return nullptr;
  }
  return new conv3d_causal_stream{std::move(*stream)};
}

extern "C" int64_t
conv3d_causal_stream_output_frames(const conv3d_causal_stream *stream,
                                   int64_t length) {
  return stream && length > 0 ? stream->stream->outputFramesFor(length) : 0;
}

extern "C" int conv3d_causal_stream_step(conv3d_causal_stream *stream,
                                         const void *chunk, int64_t length,
                                         const void *residual, void *output,
                                         char *error, size_t errorSize) {
  return conv3d_causal_stream_step_async(stream, chunk, length, residual,
                                         output, nullptr, error, errorSize);
}

extern "C" int conv3d_causal_stream_step_async(conv3d_causal_stream *stream,
                                               const void *chunk,
                                               int64_t length,
                                               const void *residual,
                                               void *output, void *cuStream,
                                               char *error, size_t errorSize) {
  if (!stream) {
    setError(error, errorSize, "conv3d_causal_stream_step: null stream");
    return 1;
  }
  if (llvm::Error e =
          stream->stream->step(chunk, length, residual, output, cuStream)) {
    setError(error, errorSize, llvm::toString(std::move(e)));
    return 1;
  }
  return 0;
}

extern "C" void conv3d_causal_stream_reset(conv3d_causal_stream *stream) {
  if (stream)
    stream->stream->reset();
}

extern "C" int64_t
conv3d_causal_stream_frames_seen(const conv3d_causal_stream *stream) {
  return stream ? stream->stream->framesSeen() : 0;
}

extern "C" int64_t
conv3d_causal_stream_cached_frames(const conv3d_causal_stream *stream) {
  return stream ? stream->stream->cachedFrames() : 0;
}

extern "C" void conv3d_causal_stream_destroy(conv3d_causal_stream *stream) {
  delete stream;
}

//===----------------------------------------------------------------------===//
// A packed NVFP4 filter
//===----------------------------------------------------------------------===//

extern "C" int conv3d_packed_filter_sizes(const conv3d_spec *spec,
                                          size_t *codesBytes,
                                          size_t *scalesBytes, char *error,
                                          size_t errorSize) {
  if (!spec || !codesBytes || !scalesBytes) {
    setError(error, errorSize, "conv3d_packed_filter_sizes: null argument");
    return 1;
  }
  // The spec's own validation says which specs a packed filter fits.
  conv3d_filter_ext packed = {/*packed_filter=*/1};
  llvm::Expected<ConvSpec> parsed = toSpec(*spec, nullptr, &packed);
  if (!parsed) {
    setError(error, errorSize, llvm::toString(parsed.takeError()));
    return 1;
  }
  auto count = [](const std::vector<int64_t> &shape) {
    size_t n = 1;
    for (int64_t size : shape)
      n *= size_t(size);
    return n;
  };
  *codesBytes = count(parsed->packedFilterShape());
  *scalesBytes = count(parsed->filterScalesShape());
  return 0;
}

extern "C" int conv3d_quantize_filter(
    conv3d_engine *engine, const conv3d_spec *spec, const void *filter,
    float filterAmax, const char *options, void *codes, size_t codesSize,
    void *scales, size_t scalesSize, char *error, size_t errorSize) {
  if (!engine || !spec || !filter || !codes || !scales) {
    setError(error, errorSize,
             "conv3d_quantize_filter: null engine, spec, filter, codes or "
             "scales");
    return 1;
  }
  auto request = toRequest(*spec, /*inputExt=*/nullptr, /*filterExt=*/nullptr,
                           ConvKind::fprop, options, error, errorSize);
  if (!request)
    return 1;
  const auto &[parsed, parsedOptions] = *request;
  HostTensor filterCopy =
      HostTensor::zeros(parsed.inputType, parsed.filterShape());
  std::memcpy(filterCopy.data(), filter, filterCopy.sizeInBytes());
  llvm::Expected<Engine::PackedNVFP4> packed = engine->engine.quantizeFilter(
      parsed, filterCopy, filterAmax, parsedOptions);
  if (!packed) {
    setError(error, errorSize, llvm::toString(packed.takeError()));
    return 1;
  }
  struct {
    const char *what;
    const std::vector<uint8_t> &bytes;
    void *buffer;
    size_t size;
  } outputs[] = {{"codes", packed->codes, codes, codesSize},
                 {"scales", packed->scales, scales, scalesSize}};
  for (const auto &output : outputs)
    if (output.size < output.bytes.size()) {
      setError(error, errorSize,
               std::string("conv3d_quantize_filter: the ") + output.what +
                   " buffer holds " + std::to_string(output.size) +
                   " bytes, the packed filter needs " +
                   std::to_string(output.bytes.size()));
      return 1;
    }
  for (const auto &output : outputs)
    std::memcpy(output.buffer, output.bytes.data(), output.bytes.size());
  return 0;
}

extern "C" int conv3d_run_packed_filter(const conv3d_run_args *args,
                                        const void *filterScales,
                                        float filterAmax) {
  if (!args)
    return failRun(nullptr, 0, "conv3d_run_packed_filter: null arguments");
  if (!args->conv)
    return failRun(args->error, args->error_size,
                   "conv3d_run_packed_filter: null convolution");
  if (!args->conv->conv->getSpec().packedFilter)
    return failRun(
        args->error, args->error_size,
        "conv3d_run_packed_filter: the convolution was compiled without a "
        "packed filter (conv3d_filter_ext.packed_filter); run it with "
        "conv3d_run");
  ConvArgs run =
      forwardArgs(args->input, args->filter, args->bias, args->residual,
                  args->amax, args->output, args->stream);
  run.filterScales = filterScales;
  run.filterAmax = filterAmax;
  if (llvm::Error e = args->conv->conv->runUnchecked(run))
    return failRun(args->error, args->error_size, llvm::toString(std::move(e)));
  return 0;
}
