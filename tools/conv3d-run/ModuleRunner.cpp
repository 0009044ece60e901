//===- ModuleRunner.cpp - conv3d-run on a function of an .mlir file -------===//

#include "Runners.h"

#include "conv3d/Runtime/Engine.h"
#include "conv3d/Support/Npy.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cmath>
#include <limits>

using namespace mlir::conv3d;
using namespace conv3d_run;

static std::string formatShape(const std::vector<int64_t> &shape) {
  std::string text;
  for (int64_t s : shape)
    text += (text.empty() ? "" : "x") + std::to_string(s);
  return text.empty() ? "scalar" : text;
}

/// The value of scalar argument `index` from its --arg text: an f32 (a
/// finite number within its range) or an integer (index, i64), exactly.
static llvm::Expected<double> parseScalar(llvm::StringRef text, bool integer,
                                          size_t index) {
  auto refuse = [&](const llvm::Twine &why) {
    return llvm::createStringError(
        llvm::formatv("argument {0} is {1}; --arg '{2}' {3}", index,
                      integer ? "an integer" : "an f32", text, why.str())
            .str());
  };
  if (integer) {
    int64_t value;
    if (text.getAsInteger(10, value))
      return refuse("is not an integer that fits in 64 bits");
    // The JIT call passes scalars as doubles: beyond 2^53 they would round.
    if (value > (int64_t(1) << 53) || value < -(int64_t(1) << 53))
      return refuse("is beyond +-2^53, which this tool passes exactly");
    return double(value);
  }
  double value;
  if (text.getAsDouble(value))
    return refuse("is not a number");
  if (!std::isfinite(value) ||
      std::fabs(value) > double(std::numeric_limits<float>::max()))
    return refuse(llvm::formatv("is not a finite f32 (at most {0:e} in "
                                "magnitude)",
                                double(std::numeric_limits<float>::max())));
  return value;
}

int conv3d_run::runModule(const RunRequest &request) {
  auto file = llvm::MemoryBuffer::getFile(request.modulePath);
  if (!file)
    return fail("cannot read '" + request.modulePath +
                "': " + file.getError().message());
  // Arguments of dynamic shape are compiled for the shapes of the .npy
  // files given for them.
  std::vector<std::optional<std::vector<int64_t>>> shapes;
  for (const std::string &arg : request.argPaths) {
    std::optional<std::vector<int64_t>> shape;
    if (llvm::sys::fs::is_regular_file(arg)) {
      llvm::Expected<std::vector<int64_t>> read = readNpyShape(arg);
      if (!read)
        return fail(llvm::toString(read.takeError()));
      shape = std::move(*read);
    }
    shapes.push_back(std::move(shape));
  }
  Engine engine;
  auto start = std::chrono::steady_clock::now();
  llvm::Expected<std::unique_ptr<CompiledFunction>> function =
      engine.compileFunction((*file)->getBuffer(), request.entry,
                             request.options, request.modulePath, shapes);
  if (!function)
    return fail(llvm::toString(function.takeError()));
  double compileMillis = std::chrono::duration<double, std::milli>(
                             std::chrono::steady_clock::now() - start)
                             .count();

  const auto &arguments = (*function)->getArguments();
  size_t numInputs = 0, numResults = 0;
  for (const auto &arg : arguments)
    (arg.isResult ? numResults : numInputs)++;
  if (request.argPaths.size() != numInputs)
    return fail(llvm::formatv("'{0}' takes {1} arguments, {2} --arg given",
                              request.entry, numInputs,
                              request.argPaths.size()));
  if (request.resultPaths.size() > numResults)
    return fail(llvm::formatv("'{0}' has {1} results, {2} --result given",
                              request.entry, numResults,
                              request.resultPaths.size()));

  std::vector<HostTensor> tensors;
  tensors.reserve(arguments.size());
  std::vector<void *> buffers;
  std::vector<double> scalars;
  size_t nextArg = 0;
  for (auto [i, arg] : llvm::enumerate(arguments)) {
    if (!arg.isBuffer) {
      llvm::Expected<double> value =
          parseScalar(request.argPaths[nextArg++], arg.isInteger, i);
      if (!value)
        return fail(llvm::toString(value.takeError()));
      scalars.push_back(*value);
      continue;
    }
    if (arg.isResult) {
      llvm::Expected<HostTensor> result = HostTensor::allocate(
          arg.type, arg.shape, llvm::formatv("result argument {0}", i).str());
      if (!result)
        return fail(llvm::toString(result.takeError()));
      tensors.push_back(std::move(*result));
      fillPoison(tensors.back());
    } else {
      llvm::Expected<HostTensor> tensor =
          readNpy(request.argPaths[nextArg++], arg.type);
      if (!tensor)
        return fail(llvm::toString(tensor.takeError()));
      if (tensor->shape != arg.shape)
        return fail(llvm::formatv("argument {0} needs shape {1}, '{2}' has "
                                  "{3}",
                                  i, formatShape(arg.shape),
                                  request.argPaths[nextArg - 1],
                                  formatShape(tensor->shape)));
      tensors.push_back(std::move(*tensor));
    }
    buffers.push_back(tensors.back().data());
  }

  std::vector<double> times;
  for (int i = 0; i < request.repeat; ++i) {
    auto runStart = std::chrono::steady_clock::now();
    if (llvm::Error error = (*function)->run(buffers, scalars))
      return fail(llvm::toString(std::move(error)));
    times.push_back(std::chrono::duration<double, std::milli>(
                        std::chrono::steady_clock::now() - runStart)
                        .count());
  }

  size_t nextResult = 0, nextTensor = 0;
  for (const auto &arg : arguments) {
    if (!arg.isBuffer)
      continue;
    const HostTensor &tensor = tensors[nextTensor++];
    if (!arg.isResult)
      continue;
    if (nextResult < request.resultPaths.size()) {
      const std::string &path = request.resultPaths[nextResult];
      if (llvm::Error error = writeNpyF32(path, tensor))
        return fail(llvm::toString(std::move(error)));
      if (!request.quiet)
        llvm::errs() << "conv3d-run: wrote result " << nextResult << " ("
                     << formatShape(arg.shape) << ") to " << path << "\n";
    }
    ++nextResult;
  }
  if (request.json)
    llvm::outs() << llvm::formatv("{{\"status\":\"ok\",\"entry\":\"{0}\","
                                  "\"compile_ms\":{1},\"run_ms\":{2}}\n",
                                  request.entry, compileMillis, median(times));
  else if (!request.quiet)
    llvm::outs() << llvm::formatv("{0}: compile {1:f1} ms, run {2:f3} ms "
                                  "(median of {3})\n",
                                  request.entry, compileMillis, median(times),
                                  request.repeat);
  return kOk;
}
