//===- CausalConv3dStream.cpp - chunked causal 3-D convolution ------------===//

#include "conv3d/Runtime/CausalConv3dStream.h"

#include "conv3d/Reference/ReferenceConv.h"
#include "conv3d/Runtime/CudaDriver.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

using namespace mlir;
using namespace mlir::conv3d;

static llvm::Error streamError(const llvm::Twine &message) {
  return llvm::createStringError(("CausalConv3dStream: " + message).str());
}

static std::string shapeText(const std::vector<int64_t> &shape) {
  std::string text;
  for (int64_t size : shape)
    text += (text.empty() ? "" : "x") + std::to_string(size);
  return text;
}

/// Checks that `tensor` (named `what`) has `shape` and `type`.
static llvm::Error checkTensor(const HostTensor *tensor, llvm::StringRef what,
                               const std::vector<int64_t> &shape,
                               ElementType type) {
  if (!tensor)
    return streamError("missing " + what);
  if (tensor->shape != shape || tensor->type != type)
    return streamError(llvm::formatv(
        "{0} is {1} {2}; the spec needs {3} {4}", what,
        shapeText(tensor->shape), stringifyElementType(tensor->type),
        shapeText(shape), stringifyElementType(type)));
  return llvm::Error::success();
}

static int64_t ceilDivNonNegative(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

CausalConv3dStream::CausalConv3dStream(Engine &engine, ConvSpec spec,
                                       CompileOptions options)
    : engine(engine), spec(std::move(spec)), options(std::move(options)) {}

CausalConv3dStream::~CausalConv3dStream() {
  if (!onDevice())
    return;
  llvm::Expected<CudaDriver &> driver = CudaDriver::get();
  if (!driver) {
    llvm::consumeError(driver.takeError());
    return;
  }
  for (void *buffer : {deviceFilter, deviceBias, deviceGamma, deviceBeta,
                       deviceIdentity, deviceCache[0], deviceCache[1]})
    if (buffer)
      llvm::consumeError(driver->free(buffer));
}

/// A device copy of `tensor`.
static llvm::Expected<void *> upload(CudaDriver &driver,
                                     const HostTensor &tensor) {
  llvm::Expected<void *> buffer = driver.allocate(tensor.sizeInBytes());
  if (!buffer)
    return buffer.takeError();
  if (llvm::Error error =
          driver.copyToDevice(*buffer, tensor.data(), tensor.sizeInBytes())) {
    llvm::consumeError(driver.free(*buffer));
    return std::move(error);
  }
  return *buffer;
}

llvm::Error CausalConv3dStream::uploadWeights() {
  llvm::Expected<CudaDriver &> driver = CudaDriver::get();
  if (!driver)
    return streamError(llvm::formatv("{0} needs the CUDA driver: {1}",
                                     stringifyTarget(options.target),
                                     llvm::toString(driver.takeError())));
  const ConvGeometry &g = spec.geometry;
  // The identity filter (FQRSC, F = C) of the cache's 1x1x1 transform.
  std::optional<HostTensor> identity;
  if (spec.hasPrologue()) {
    identity =
        HostTensor::zeros(spec.inputType, {g.channels, 1, 1, 1, g.channels});
    for (int64_t c = 0; c < g.channels; ++c)
      identity->set(c * g.channels + c, 1.0);
  }
  struct {
    bool used;
    const HostTensor *host;
    void **device;
  } weights[] = {
      {true, &filter, &deviceFilter},
      {spec.hasBias, &bias, &deviceBias},
      {spec.hasNorm, &normGamma, &deviceGamma},
      {spec.hasNormBeta, &normBeta, &deviceBeta},
      {identity.has_value(), identity ? &*identity : nullptr, &deviceIdentity}};
  for (const auto &weight : weights) {
    if (!weight.used)
      continue;
    llvm::Expected<void *> buffer = upload(*driver, *weight.host);
    if (!buffer)
      return buffer.takeError();
    *weight.device = *buffer;
  }
  int64_t span = (g.window[kDepth] - 1) * g.dilations[kDepth];
  size_t cacheBytes = size_t(g.batch) * span * g.inputSize[1] * g.inputSize[2] *
                      g.channels * elementSize(spec.inputType);
  if (cacheBytes > 0)
    for (void *&buffer : deviceCache) {
      llvm::Expected<void *> allocated = driver->allocate(cacheBytes);
      if (!allocated)
        return allocated.takeError();
      buffer = *allocated;
    }
  // A host-to-device cuMemcpy may return before its DMA completes; the
  // kernels run on streams that do not wait for the legacy one.
  return driver->synchronize(nullptr);
}

llvm::Error CausalConv3dStream::updateDeviceCache(const void *chunk,
                                                  int64_t length,
                                                  int64_t keepFrom,
                                                  int64_t total, void *stream) {
  const ConvGeometry &g = spec.geometry;
  int64_t keep = total - keepFrom;
  if (keep == 0)
    return llvm::Error::success();
  llvm::Expected<CudaDriver &> driver = CudaDriver::get();
  if (!driver)
    return driver.takeError();
  size_t planeBytes = size_t(g.inputSize[1]) * g.inputSize[2] * g.channels *
                      elementSize(spec.inputType);
  // Frames [keepFrom, seen) come from the cache, [seen, total) from the
  // chunk.
  int64_t historyDepth = deviceCacheDepth;
  int64_t fromCache = std::max<int64_t>(0, seen - keepFrom);
  int64_t fromChunk = keep - fromCache;
  int64_t chunkStart = keepFrom + fromCache - seen;
  auto *next = static_cast<uint8_t *>(deviceCache[1 - cacheSlot]);
  auto *old = static_cast<const uint8_t *>(deviceCache[cacheSlot]);
  auto *in = static_cast<const uint8_t *>(chunk);
  // The chunk's kept frames through the prologue: a 1x1x1 convolution with
  // the identity filter, whose loader applies the prologue as the stream's
  // convolution does (the f32 sum of one product is exact, and so is its
  // rounding back to the input type).
  std::shared_ptr<const CompiledConv> transform;
  if (fromChunk > 0 && spec.hasPrologue()) {
    ConvSpec identity = spec;
    identity.geometry = ConvGeometry::fromShapes(
        {1, fromChunk, g.inputSize[1], g.inputSize[2], g.channels},
        {g.channels, 1, 1, 1, g.channels}, FilterLayout::fqrsc, {1, 1, 1},
        {1, 1, 1}, {0, 0, 0, 0, 0, 0});
    identity.filterLayout = FilterLayout::fqrsc;
    identity.outputType = spec.inputType;
    identity.hasBias = identity.hasResidual = identity.accumulate = false;
    identity.activation = Activation::none;
    CompileOptions identityOptions = options;
    identityOptions.config.clear();
    identityOptions.tune = false;
    llvm::Expected<std::shared_ptr<const CompiledConv>> compiled =
        engine.compile(identity, identityOptions);
    if (!compiled)
      return compiled.takeError();
    transform = *compiled;
  }
  bool copied = false;
  for (int64_t n = 0; n < g.batch; ++n) {
    uint8_t *dst = next + n * keep * planeBytes;
    if (fromCache > 0) {
      copied = true;
      if (llvm::Error error = driver->copy(
              dst,
              old + (n * historyDepth + keepFrom - (seen - historyDepth)) *
                        planeBytes,
              fromCache * planeBytes, stream))
        return error;
    }
    if (fromChunk == 0)
      continue;
    const uint8_t *src = in + (n * length + chunkStart) * planeBytes;
    dst += fromCache * planeBytes;
    if (!transform) {
      copied = true;
      if (llvm::Error error =
              driver->copy(dst, src, fromChunk * planeBytes, stream))
        return error;
      continue;
    }
    ConvArgs args;
    args.input = src;
    args.filter = deviceIdentity;
    args.normGamma = deviceGamma;
    args.normBeta = deviceBeta;
    args.output = dst;
    args.stream = stream;
    if (llvm::Error error = transform->runUnchecked(args))
      return error;
  }
  // Without a stream, a device-to-device cuMemcpy may return before it
  // completes (on the legacy stream, which the engine's own stream does not
  // wait for): finish it before the next step's convolution reads the
  // cache.
  if (copied && !stream)
    return driver->synchronize(nullptr);
  return llvm::Error::success();
}

llvm::Expected<std::unique_ptr<CausalConv3dStream>>
CausalConv3dStream::create(Engine &engine, const ConvSpec &spec,
                           const CompileOptions &options,
                           const CausalConvWeights &weights) {
  if (llvm::Error error = spec.validate())
    return streamError(llvm::toString(std::move(error)));
  const ConvGeometry &g = spec.geometry;
  int64_t causal = (g.window[kDepth] - 1) * g.dilations[kDepth];
  if (g.padLow[kDepth] != causal || g.padHigh[kDepth] != 0)
    return streamError(llvm::formatv(
        "needs causal depth padding [(Q-1)*dilation, 0] = [{0}, 0], got "
        "[{1}, {2}]",
        causal, g.padLow[kDepth], g.padHigh[kDepth]));
  if (g.historyDepth != 0)
    return streamError("the spec must not have history frames: the stream "
                       "supplies them");
  if (spec.accumulate)
    return streamError("accumulation onto the output is not supported");
  if (spec.inputQuantBlockSize)
    return streamError("NVFP4 input quantization is not supported");
  std::unique_ptr<CausalConv3dStream> stream(
      new CausalConv3dStream(engine, spec, options));
  if (llvm::Error error = checkTensor(weights.filter, "filter",
                                      spec.filterShape(), spec.inputType))
    return std::move(error);
  stream->filter = *weights.filter;
  struct Vector {
    bool used;
    const HostTensor *given;
    HostTensor *copy;
    const char *what;
    int64_t size;
  } vectors[] = {{spec.hasBias, weights.bias, &stream->bias, "bias", g.filters},
                 {spec.hasNorm, weights.normGamma, &stream->normGamma,
                  "norm gamma", g.channels},
                 {spec.hasNormBeta, weights.normBeta, &stream->normBeta,
                  "norm beta", g.channels}};
  for (const Vector &vector : vectors) {
    if (!vector.used) {
      if (vector.given)
        return streamError(std::string("a ") + vector.what +
                           " was given but the spec has none");
      continue;
    }
    if (llvm::Error error = checkTensor(vector.given, vector.what,
                                        {vector.size}, ElementType::f32))
      return std::move(error);
    *vector.copy = *vector.given;
  }
  if (stream->onDevice())
    if (llvm::Error error = stream->uploadWeights())
      return std::move(error);
  return std::move(stream);
}

int64_t CausalConv3dStream::outputFramesFor(int64_t length) const {
  int64_t stride = spec.geometry.strides[kDepth];
  int64_t total;
  // A length no sequence can reach (step() refuses it) gives no frames.
  if (length < 0 || __builtin_add_overflow(seen, length, &total) ||
      total > std::numeric_limits<int64_t>::max() - stride)
    return 0;
  return ceilDivNonNegative(total, stride) - ceilDivNonNegative(seen, stride);
}

int64_t CausalConv3dStream::cachedFrames() const {
  if (onDevice())
    return deviceCacheDepth;
  return cache ? cache->shape[1] : 0;
}

void CausalConv3dStream::reset() {
  cache.reset();
  deviceCacheDepth = 0;
  seen = 0;
}

llvm::Expected<std::shared_ptr<const CompiledConv>>
CausalConv3dStream::compileStep(int64_t length, int64_t windowStart,
                                int64_t historyDepth, int64_t outputs) {
  ConvSpec stepSpec = spec;
  ConvGeometry &sg = stepSpec.geometry;
  sg.inputSize[kDepth] = length;
  sg.padLow[kDepth] = std::max<int64_t>(0, -windowStart);
  sg.padHigh[kDepth] = 0;
  sg.addHistory(historyDepth);
  if (sg.outputSize(kDepth) != outputs)
    return streamError(llvm::formatv(
        "internal inconsistency: the step convolution gives {0} frames, "
        "the sequence {1}",
        sg.outputSize(kDepth), outputs));
  return engine.compile(stepSpec, options);
}

llvm::Expected<HostTensor>
CausalConv3dStream::step(const HostTensor &chunk, const HostTensor *residual) {
  const ConvGeometry &g = spec.geometry;
  if (chunk.shape.size() != 5)
    return streamError(
        llvm::formatv("a chunk must have rank 5 (N x L x H x W x C), got {0}",
                      shapeText(chunk.shape)));
  int64_t length = chunk.shape[1];
  if (length < 1)
    return streamError("a chunk must have at least one frame");
  std::vector<int64_t> expected = {g.batch, length, g.inputSize[1],
                                   g.inputSize[2], g.channels};
  if (llvm::Error error =
          checkTensor(&chunk, "chunk", expected, spec.inputType))
    return std::move(error);
  std::vector<int64_t> outShape = {g.batch, outputFramesFor(length),
                                   g.outputSize(1), g.outputSize(2), g.filters};
  if (residual && !spec.hasResidual)
    return streamError("a residual was given but the spec has none");
  if (residual)
    if (llvm::Error error =
            checkTensor(residual, "residual", outShape, spec.outputType))
      return std::move(error);
  llvm::Expected<HostTensor> output =
      HostTensor::allocate(spec.outputType, outShape, "stream output");
  if (!output)
    return output.takeError();
  // Elements the convolution fails to write show up as NaN.
  fillPoison(*output);
  if (!onDevice()) {
    if (llvm::Error error =
            step(chunk.data(), length, residual ? residual->data() : nullptr,
                 output->data()))
      return std::move(error);
    return std::move(*output);
  }
  // GPU targets: device copies of the chunk, residual and (poisoned)
  // output.
  llvm::Expected<CudaDriver &> driver = CudaDriver::get();
  if (!driver)
    return driver.takeError();
  std::vector<void *> buffers;
  llvm::scope_exit freeBuffers([&] {
    for (void *buffer : buffers)
      llvm::consumeError(driver->free(buffer));
  });
  auto toDevice = [&](const HostTensor *tensor) -> llvm::Expected<void *> {
    if (!tensor || tensor->sizeInBytes() == 0)
      return nullptr;
    llvm::Expected<void *> buffer = upload(*driver, *tensor);
    if (buffer)
      buffers.push_back(*buffer);
    return buffer;
  };
  llvm::Expected<void *> deviceChunk = toDevice(&chunk);
  if (!deviceChunk)
    return deviceChunk.takeError();
  llvm::Expected<void *> deviceResidual = toDevice(residual);
  if (!deviceResidual)
    return deviceResidual.takeError();
  llvm::Expected<void *> deviceOutput = toDevice(&*output);
  if (!deviceOutput)
    return deviceOutput.takeError();
  // The uploads complete before the kernels (on other streams) read them.
  if (llvm::Error error = driver->synchronize(nullptr))
    return std::move(error);
  if (llvm::Error error =
          step(*deviceChunk, length, *deviceResidual, *deviceOutput))
    return std::move(error);
  if (*deviceOutput)
    if (llvm::Error error = driver->copyToHost(output->data(), *deviceOutput,
                                               output->sizeInBytes()))
      return std::move(error);
  return std::move(*output);
}

llvm::Error CausalConv3dStream::step(const void *chunk, int64_t length,
                                     const void *residual, void *output,
                                     void *stream) {
  const ConvGeometry &g = spec.geometry;
  if (length < 1)
    return streamError("a chunk must have at least one frame");
  // The sequence's frame count and the chunk's element count must fit.
  int64_t total, elements = g.batch;
  for (int64_t size : {length, g.inputSize[1], g.inputSize[2], g.channels})
    if (__builtin_mul_overflow(elements, size, &elements))
      return streamError("the chunk's element count overflows int64");
  if (__builtin_add_overflow(seen, length, &total) ||
      total > std::numeric_limits<int64_t>::max() - g.strides[kDepth])
    return streamError("the sequence's frame count overflows int64");
  if (!chunk || (!output && outputFramesFor(length) > 0))
    return streamError("missing chunk or output buffer");
  if (spec.hasResidual && !residual && outputFramesFor(length) > 0)
    return streamError("missing residual");

  // Frames [seen, seen + length) arrive; output t is the window ending at
  // frame t*stride, which starts at t*stride - span.
  int64_t stride = g.strides[kDepth];
  int64_t span = (g.window[kDepth] - 1) * g.dilations[kDepth];
  int64_t firstOutput = ceilDivNonNegative(seen, stride);
  int64_t windowStart = firstOutput * stride - span;
  int64_t historyDepth = cachedFrames();
  int64_t outputs = outputFramesFor(length);

  // The frames later windows still need: [keepFrom, total), from the cache
  // (which holds [seen - historyDepth, seen)) and from the chunk, after the
  // prologue (what the convolution reads).
  int64_t nextFirst = ceilDivNonNegative(total, stride);
  int64_t keepFrom = std::max<int64_t>(0, nextFirst * stride - span);
  int64_t keep = total - keepFrom;
  if (onDevice()) {
    if (outputs > 0) {
      llvm::Expected<std::shared_ptr<const CompiledConv>> conv =
          compileStep(length, windowStart, historyDepth, outputs);
      if (!conv)
        return conv.takeError();
      ConvArgs args;
      args.input = chunk;
      args.filter = deviceFilter;
      args.bias = deviceBias;
      args.residual = spec.hasResidual ? residual : nullptr;
      args.history = historyDepth > 0 ? deviceCache[cacheSlot] : nullptr;
      args.normGamma = deviceGamma;
      args.normBeta = deviceBeta;
      args.output = output;
      args.stream = stream;
      if (llvm::Error error = (*conv)->runUnchecked(args))
        return error;
    } else if (residual) {
      return streamError("a residual was given for a chunk without output "
                         "frames");
    }
    // The next cache goes to the other buffer: the convolution above may
    // still be reading this one on the stream.
    if (llvm::Error error =
            updateDeviceCache(chunk, length, keepFrom, total, stream))
      return error;
    cacheSlot = keep > 0 ? 1 - cacheSlot : cacheSlot;
    deviceCacheDepth = keep;
    seen = total;
    return llvm::Error::success();
  }
  int64_t plane = g.inputSize[1] * g.inputSize[2] * g.channels;
  size_t elementBytes = elementSize(spec.inputType);
  llvm::Expected<HostTensor> nextCache = HostTensor::allocate(
      spec.inputType,
      {g.batch, keep, g.inputSize[1], g.inputSize[2], g.channels},
      "stream cache");
  if (!nextCache)
    return nextCache.takeError();
  // The chunk's frames that the cache keeps, read in place.
  HostTensor tail = HostTensor::zeros(spec.inputType, {plane});
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t frame = keepFrom; frame < total; ++frame) {
      int64_t dst = (n * keep + (frame - keepFrom)) * plane;
      if (frame < seen) {
        int64_t src =
            (n * historyDepth + (frame - (seen - historyDepth))) * plane;
        std::memcpy(
            static_cast<uint8_t *>(nextCache->data()) + dst * elementBytes,
            static_cast<const uint8_t *>(cache->data()) + src * elementBytes,
            plane * elementBytes);
        continue;
      }
      int64_t src = (n * length + (frame - seen)) * plane;
      std::memcpy(tail.data(),
                  static_cast<const uint8_t *>(chunk) + src * elementBytes,
                  plane * elementBytes);
      for (int64_t pixel = 0; pixel < plane; pixel += g.channels) {
        double scale = 1.0;
        if (spec.hasNorm) {
          double squares = 0.0;
          for (int64_t c = 0; c < g.channels; ++c) {
            double x = tail.get(pixel + c);
            squares += x * x;
          }
          scale = 1.0 / std::sqrt(squares / double(g.channels) + spec.normEps);
        }
        for (int64_t c = 0; c < g.channels; ++c) {
          double y = tail.get(pixel + c);
          if (spec.hasNorm) {
            y = y * scale * normGamma.get(c);
            if (spec.hasNormBeta)
              y += normBeta.get(c);
          }
          nextCache->set(dst + pixel + c,
                         referenceActivation(spec.inputActivation, y));
        }
      }
    }
  }

  if (outputs > 0) {
    llvm::Expected<std::shared_ptr<const CompiledConv>> conv =
        compileStep(length, windowStart, historyDepth, outputs);
    if (!conv)
      return conv.takeError();
    ConvArgs args;
    args.input = chunk;
    args.filter = filter.data();
    args.bias = spec.hasBias ? bias.data() : nullptr;
    args.residual = spec.hasResidual ? residual : nullptr;
    args.history = historyDepth > 0 ? cache->data() : nullptr;
    args.normGamma = spec.hasNorm ? normGamma.data() : nullptr;
    args.normBeta = spec.hasNormBeta ? normBeta.data() : nullptr;
    args.output = output;
    if (llvm::Error error = (*conv)->runUnchecked(args))
      return error;
  } else if (residual) {
    return streamError("a residual was given for a chunk without output "
                       "frames");
  }
  cache = std::move(*nextCache);
  seen = total;
  return llvm::Error::success();
}
