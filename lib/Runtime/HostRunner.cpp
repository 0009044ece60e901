//===- HostRunner.cpp - run a compiled convolution on host tensors --------===//

#include "conv3d/Runtime/HostRunner.h"

#include "conv3d/Runtime/CudaDriver.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <chrono>
#include <iterator>
#include <tuple>

using namespace mlir;
using namespace mlir::conv3d;

static double median(std::vector<double> values) {
  if (values.empty())
    return 0;
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

namespace {
/// Median of the timed runs of `run` (host clock on the CPU target; CUDA
/// events on `stream` otherwise).
llvm::Expected<double> timeRuns(const CompiledConv &conv, const ConvArgs &args,
                                int repeat, CudaDriver *driver, void *begin,
                                void *end) {
  std::vector<double> times;
  for (int i = 0; i < repeat; ++i) {
    if (!driver) {
      auto start = std::chrono::steady_clock::now();
      if (llvm::Error error = conv.runUnchecked(args))
        return std::move(error);
      times.push_back(std::chrono::duration<double, std::milli>(
                          std::chrono::steady_clock::now() - start)
                          .count());
      continue;
    }
    if (llvm::Error e = driver->recordEvent(begin, args.stream))
      return std::move(e);
    if (llvm::Error e = conv.runUnchecked(args))
      return std::move(e);
    if (llvm::Error e = driver->recordEvent(end, args.stream))
      return std::move(e);
    if (llvm::Error e = driver->synchronizeEvent(end))
      return std::move(e);
    llvm::Expected<float> ms = driver->elapsedMillis(begin, end);
    if (!ms)
      return ms.takeError();
    times.push_back(*ms);
  }
  return median(times);
}
} // namespace

struct ConvRunSession::Device {
  explicit Device(CudaDriver &driver) : driver(driver) {}
  ~Device() {
    for (void *ptr : allocations)
      llvm::consumeError(driver.free(ptr));
    for (void *event : {begin, end})
      if (event)
        llvm::consumeError(driver.destroyEvent(event));
    if (stream)
      llvm::consumeError(driver.destroyStream(stream));
  }

  llvm::Expected<void *> upload(const HostTensor *tensor) {
    if (!tensor)
      return nullptr;
    return upload(tensor->data(), tensor->sizeInBytes());
  }

  llvm::Expected<void *> upload(const void *data, size_t bytes) {
    llvm::Expected<void *> ptr = driver.allocate(bytes);
    if (!ptr)
      return ptr.takeError();
    allocations.push_back(*ptr);
    if (llvm::Error error = driver.copyToDevice(*ptr, data, bytes))
      return std::move(error);
    return *ptr;
  }

  CudaDriver &driver;
  std::vector<void *> allocations;
  void *stream = nullptr, *begin = nullptr, *end = nullptr;
  /// The output's initial contents, copied to the output before each
  /// checked run.
  void *initial = nullptr;
};

ConvRunSession::ConvRunSession() = default;
ConvRunSession::~ConvRunSession() = default;

llvm::Expected<std::unique_ptr<ConvRunSession>>
ConvRunSession::create(Target target, const HostConvBuffers &buffers) {
  // Of input, filter and grad_output, a forward reads the first two, a
  // gradient one of them and grad_output.
  int operands = (buffers.input != nullptr) +
                 (buffers.filter || buffers.packedFilter) +
                 (buffers.gradOutput != nullptr);
  if (operands != 2 || !buffers.output)
    return llvm::createStringError(
        "missing input, filter, grad_output or output buffer");
  std::unique_ptr<ConvRunSession> session(new ConvRunSession());
  session->buffers = buffers;
  session->initialOutput = *buffers.output;
  ConvArgs &args = session->args;
  args.amax = buffers.amax;
  args.filterAmax = buffers.filterAmax;
  const Engine::PackedNVFP4 *packed = buffers.packedFilter;
  if (target == Target::cpu) {
    args.input = buffers.input ? buffers.input->data() : nullptr;
    args.gradOutput = buffers.gradOutput ? buffers.gradOutput->data() : nullptr;
    args.filter = packed           ? packed->codes.data()
                  : buffers.filter ? buffers.filter->data()
                                   : nullptr;
    args.filterScales = packed ? packed->scales.data() : nullptr;
    args.bias = buffers.bias ? buffers.bias->data() : nullptr;
    args.residual = buffers.residual ? buffers.residual->data() : nullptr;
    args.history = buffers.history ? buffers.history->data() : nullptr;
    args.normGamma = buffers.normGamma ? buffers.normGamma->data() : nullptr;
    args.normBeta = buffers.normBeta ? buffers.normBeta->data() : nullptr;
    args.output = buffers.output->data();
    return std::move(session);
  }
  llvm::Expected<CudaDriver &> driver = CudaDriver::get();
  if (!driver)
    return driver.takeError();
  session->device = std::make_unique<Device>(*driver);
  Device &device = *session->device;
  // A packed filter's codes and scales are uploaded below, in place of the
  // filter's values.
  const HostTensor *tensors[] = {
      buffers.input,    packed ? nullptr : buffers.filter,
      buffers.bias,     buffers.residual,
      buffers.history,  buffers.normGamma,
      buffers.normBeta, buffers.gradOutput,
      buffers.output};
  const void **slots[] = {&args.input,    &args.filter,    &args.bias,
                          &args.residual, &args.history,   &args.normGamma,
                          &args.normBeta, &args.gradOutput};
  constexpr int kInputs = std::size(slots);
  for (int i = 0; i <= kInputs; ++i) {
    llvm::Expected<void *> ptr = device.upload(tensors[i]);
    if (!ptr)
      return ptr.takeError();
    if (i < kInputs)
      *slots[i] = *ptr;
    else
      device.initial = *ptr;
  }
  if (packed) {
    for (auto [slot, bytes] :
         {std::pair{&args.filter, &packed->codes},
          std::pair{&args.filterScales, &packed->scales}}) {
      llvm::Expected<void *> ptr = device.upload(bytes->data(), bytes->size());
      if (!ptr)
        return ptr.takeError();
      *slot = *ptr;
    }
  }
  llvm::Expected<void *> output =
      driver->allocate(buffers.output->sizeInBytes());
  if (!output)
    return output.takeError();
  device.allocations.push_back(*output);
  args.output = *output;
  for (void **slot : {&device.stream, &device.begin, &device.end}) {
    llvm::Expected<void *> created =
        slot == &device.stream ? driver->createStream() : driver->createEvent();
    if (!created)
      return created.takeError();
    *slot = *created;
  }
  args.stream = device.stream;
  return std::move(session);
}

llvm::Expected<double> ConvRunSession::run(const CompiledConv &conv, int repeat,
                                           HostTensor *result) {
  if (!device) {
    // The CPU target runs on the host tensors: the output starts from its
    // initial contents each time.
    *buffers.output = initialOutput;
    if (llvm::Error error = conv.runUnchecked(args))
      return std::move(error);
    if (result && result != buffers.output)
      *result = *buffers.output;
    HostTensor scratch = initialOutput;
    ConvArgs timed = args;
    timed.output = scratch.data();
    return timeRuns(conv, timed, repeat, nullptr, nullptr, nullptr);
  }
  CudaDriver &driver = device->driver;
  size_t bytes = initialOutput.sizeInBytes();
  if (llvm::Error error =
          driver.copy(args.output, device->initial, bytes, device->stream))
    return std::move(error);
  if (llvm::Error error = conv.runUnchecked(args))
    return std::move(error);
  if (llvm::Error error = driver.synchronize(device->stream))
    return std::move(error);
  if (result) {
    if (result->sizeInBytes() != bytes)
      *result = initialOutput;
    if (llvm::Error error =
            driver.copyToHost(result->data(), args.output, bytes))
      return std::move(error);
  }
  return timeRuns(conv, args, repeat, &driver, device->begin, device->end);
}

/// A packed filter's codes and scales have the spec's byte counts, and are
/// given exactly when the spec has one.
static llvm::Error checkPackedFilter(const ConvSpec &spec,
                                     const HostConvBuffers &buffers) {
  if (!spec.packedFilter)
    return buffers.packedFilter
               ? llvm::createStringError(
                     "a packed filter is given but the spec has none")
               : llvm::Error::success();
  if (!buffers.packedFilter)
    return llvm::createStringError("missing packed filter (codes and scales)");
  for (auto [bytes, shape, what] :
       {std::tuple{&buffers.packedFilter->codes, spec.packedFilterShape(),
                   "packed filter codes"},
        std::tuple{&buffers.packedFilter->scales, spec.filterScalesShape(),
                   "packed filter scales"}}) {
    llvm::Expected<int64_t> needed = tensorBytes(shape, 1, what);
    if (!needed)
      return needed.takeError();
    if (int64_t(bytes->size()) != *needed)
      return llvm::createStringError(
          llvm::formatv("{0} are {1} bytes; the spec needs {2}", what,
                        bytes->size(), *needed));
  }
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
  if (llvm::Error error =
          check(buffers.input, "input", spec.kind != ConvKind::dgrad,
                spec.inputType, spec.inputShape()))
    return error;
  if (llvm::Error error =
          check(buffers.filter, "filter",
                !spec.packedFilter && spec.kind != ConvKind::wgrad,
                spec.inputType, spec.filterShape()))
    return error;
  if (llvm::Error error =
          check(buffers.gradOutput, "grad_output", spec.kind != ConvKind::fprop,
                spec.inputType, spec.outputShape()))
    return error;
  if (llvm::Error error = checkPackedFilter(spec, buffers))
    return error;
  if (llvm::Error error = check(buffers.bias, "bias", spec.hasBias,
                                ElementType::f32, {spec.geometry.filters}))
    return error;
  // (dgrad's residual is the pre-activation: the input gradient's shape.)
  if (llvm::Error error = check(buffers.residual, "residual", spec.hasResidual,
                                spec.residualType(), spec.resultShape()))
    return error;
  if (llvm::Error error =
          check(buffers.history, "history", spec.geometry.historyDepth > 0,
                spec.inputType, spec.historyShape()))
    return error;
  if (llvm::Error error = check(buffers.normGamma, "norm gamma", spec.hasNorm,
                                ElementType::f32, {spec.geometry.channels}))
    return error;
  if (llvm::Error error = check(buffers.normBeta, "norm beta", spec.hasNormBeta,
                                ElementType::f32, {spec.geometry.channels}))
    return error;
  return check(buffers.output, "output", true, spec.outputType,
               spec.resultShape());
}

llvm::Error mlir::conv3d::runWithHostBuffers(const CompiledConv &conv,
                                             const HostConvBuffers &buffers,
                                             HostRunTiming *timing) {
  if (llvm::Error error = checkBuffers(conv.getSpec(), buffers))
    return error;
  auto session = ConvRunSession::create(conv.getOptions().target, buffers);
  if (!session)
    return session.takeError();
  int repeat = timing ? std::max(timing->repeat, 0) : 0;
  llvm::Expected<double> millis = (*session)->run(conv, repeat, buffers.output);
  if (!millis)
    return millis.takeError();
  if (timing)
    timing->medianMillis = *millis;
  return llvm::Error::success();
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
  problem.history = spec.geometry.historyDepth > 0 ? buffers.history : nullptr;
  problem.normGamma = spec.hasNorm ? buffers.normGamma : nullptr;
  problem.normBeta = spec.hasNormBeta ? buffers.normBeta : nullptr;
  problem.normEps = spec.normEps;
  problem.inputActivation = spec.inputActivation;
  return problem;
}
