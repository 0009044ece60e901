//===- HostRunner.cpp - run a compiled convolution on host tensors --------===//

#include "conv3d/Runtime/HostRunner.h"

#include "conv3d/Runtime/CudaDriver.h"

#include <algorithm>
#include <chrono>

using namespace mlir;
using namespace mlir::conv3d;

static double median(std::vector<double> values) {
  if (values.empty())
    return 0;
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

static llvm::Error runOnHost(const CompiledConv &conv,
                             const HostConvBuffers &buffers,
                             HostRunTiming *timing) {
  HostTensor initial = *buffers.output;
  ConvArgs args;
  args.input = buffers.input->data();
  args.filter = buffers.filter->data();
  args.bias = buffers.bias ? buffers.bias->data() : nullptr;
  args.residual = buffers.residual ? buffers.residual->data() : nullptr;
  args.amax = buffers.amax;
  args.output = buffers.output->data();
  if (llvm::Error error = conv.run(args))
    return error;
  if (!timing || timing->repeat <= 0)
    return llvm::Error::success();
  HostTensor scratch = initial;
  args.output = scratch.data();
  std::vector<double> times;
  for (int i = 0; i < timing->repeat; ++i) {
    scratch.bytes = initial.bytes;
    auto start = std::chrono::steady_clock::now();
    if (llvm::Error error = conv.run(args))
      return error;
    times.push_back(std::chrono::duration<double, std::milli>(
                        std::chrono::steady_clock::now() - start)
                        .count());
  }
  timing->medianMillis = median(times);
  return llvm::Error::success();
}

namespace {
/// Device allocations and a stream, released on scope exit.
class DeviceScope {
public:
  explicit DeviceScope(CudaDriver &driver) : driver(driver) {}
  ~DeviceScope() {
    for (void *ptr : allocations)
      llvm::consumeError(driver.free(ptr));
    for (void *event : events)
      llvm::consumeError(driver.destroyEvent(event));
    if (stream)
      llvm::consumeError(driver.destroyStream(stream));
  }

  llvm::Expected<void *> upload(const HostTensor *tensor) {
    if (!tensor)
      return nullptr;
    llvm::Expected<void *> ptr = driver.allocate(tensor->sizeInBytes());
    if (!ptr)
      return ptr.takeError();
    allocations.push_back(*ptr);
    if (llvm::Error error =
            driver.copyToDevice(*ptr, tensor->data(), tensor->sizeInBytes()))
      return std::move(error);
    return *ptr;
  }

  llvm::Expected<void *> event() {
    llvm::Expected<void *> e = driver.createEvent();
    if (e)
      events.push_back(*e);
    return e;
  }

  CudaDriver &driver;
  std::vector<void *> allocations, events;
  void *stream = nullptr;
};
} // namespace

static llvm::Error runOnDevice(const CompiledConv &conv,
                               const HostConvBuffers &buffers,
                               HostRunTiming *timing) {
  llvm::Expected<CudaDriver &> driver = CudaDriver::get();
  if (!driver)
    return driver.takeError();
  DeviceScope scope(*driver);
  ConvArgs args;
  args.amax = buffers.amax;
  const HostTensor *tensors[] = {buffers.input, buffers.filter, buffers.bias,
                                 buffers.residual, buffers.output};
  const void **slots[] = {&args.input, &args.filter, &args.bias,
                          &args.residual};
  for (int i = 0; i < 5; ++i) {
    llvm::Expected<void *> ptr = scope.upload(tensors[i]);
    if (!ptr)
      return ptr.takeError();
    if (i < 4)
      *slots[i] = *ptr;
    else
      args.output = *ptr;
  }
  llvm::Expected<void *> stream = driver->createStream();
  if (!stream)
    return stream.takeError();
  scope.stream = *stream;
  args.stream = *stream;
  if (llvm::Error error = conv.run(args))
    return error;
  if (llvm::Error error = driver->synchronize(*stream))
    return error;
  if (llvm::Error error = driver->copyToHost(
          buffers.output->data(), args.output, buffers.output->sizeInBytes()))
    return error;
  if (!timing || timing->repeat <= 0)
    return llvm::Error::success();

  llvm::Expected<void *> begin = scope.event();
  if (!begin)
    return begin.takeError();
  llvm::Expected<void *> end = scope.event();
  if (!end)
    return end.takeError();
  std::vector<double> times;
  for (int i = 0; i < timing->repeat; ++i) {
    if (llvm::Error e = driver->recordEvent(*begin, *stream))
      return e;
    if (llvm::Error e = conv.run(args))
      return e;
    if (llvm::Error e = driver->recordEvent(*end, *stream))
      return e;
    if (llvm::Error e = driver->synchronizeEvent(*end))
      return e;
    llvm::Expected<float> ms = driver->elapsedMillis(*begin, *end);
    if (!ms)
      return ms.takeError();
    times.push_back(*ms);
  }
  timing->medianMillis = median(times);
  return llvm::Error::success();
}

/// Each buffer must be exactly what the spec says: a kernel trusts the
/// spec's sizes and would read or write past a smaller buffer.
static llvm::Error checkBuffers(const ConvSpec &spec,
                                const HostConvBuffers &buffers) {
  auto shapeText = [](const std::vector<int64_t> &shape, ElementType type) {
    std::string text;
    for (int64_t size : shape)
      text += (text.empty() ? "" : "x") + std::to_string(size);
    return text + " " + stringifyElementType(type).str();
  };
  auto check = [&](const HostTensor *tensor, const char *what, bool needed,
                   ElementType type,
                   const std::vector<int64_t> &shape) -> llvm::Error {
    if (!needed)
      return llvm::Error::success();
    if (!tensor)
      return llvm::createStringError(std::string("missing ") + what +
                                     " buffer");
    llvm::Expected<int64_t> bytes =
        tensorBytes(shape, int64_t(elementSize(type)), what);
    if (!bytes)
      return bytes.takeError();
    if (tensor->type != type || tensor->shape != shape ||
        int64_t(tensor->sizeInBytes()) != *bytes)
      return llvm::createStringError(
          std::string(what) + " buffer is " +
          shapeText(tensor->shape, tensor->type) + " (" +
          std::to_string(tensor->sizeInBytes()) + " bytes); the spec needs " +
          shapeText(shape, type) + " (" + std::to_string(*bytes) + " bytes)");
    return llvm::Error::success();
  };
  if (llvm::Error error = check(buffers.input, "input", true, spec.inputType,
                                spec.inputShape()))
    return error;
  if (llvm::Error error = check(buffers.filter, "filter", true, spec.inputType,
                                spec.filterShape()))
    return error;
  if (llvm::Error error = check(buffers.bias, "bias", spec.hasBias,
                                ElementType::f32, {spec.geometry.filters}))
    return error;
  if (llvm::Error error = check(buffers.residual, "residual", spec.hasResidual,
                                spec.outputType, spec.outputShape()))
    return error;
  return check(buffers.output, "output", true, spec.outputType,
               spec.outputShape());
}

llvm::Error mlir::conv3d::runWithHostBuffers(const CompiledConv &conv,
                                             const HostConvBuffers &buffers,
                                             HostRunTiming *timing) {
  if (llvm::Error error = checkBuffers(conv.getSpec(), buffers))
    return error;
  if (conv.getOptions().target == Target::cpu)
    return runOnHost(conv, buffers, timing);
  return runOnDevice(conv, buffers, timing);
}

ReferenceConvProblem
mlir::conv3d::referenceProblem(const ConvSpec &spec,
                               const HostConvBuffers &buffers,
                               const HostTensor *init) {
  ReferenceConvProblem problem;
  problem.geometry = spec.geometry;
  problem.filterLayout = spec.filterLayout;
  problem.input = buffers.input;
  problem.filter = buffers.filter;
  problem.bias = spec.hasBias ? buffers.bias : nullptr;
  problem.residual = spec.hasResidual ? buffers.residual : nullptr;
  problem.init = spec.accumulate ? init : nullptr;
  problem.activation = spec.activation;
  problem.inputQuantBlockSize = spec.inputQuantBlockSize;
  problem.inputQuantAmax = buffers.amax;
  return problem;
}
