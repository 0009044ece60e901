//===- host-overhead.cpp - host time per call of a cached convolution -----===//
//
//   conv3d-host-overhead [--target=sm90|sm80|cpu] [--calls=N] [--rounds=N]
//
// A micro-benchmark of what a framework pays per call once a convolution is
// compiled: CompiledConv::run (the C++ API; the C API's conv3d_run is a thin
// shell over it) on a small convolution enqueued on a borrowed stream, so
// that the GPU keeps up and the loop measures the host side; and, on GPU
// targets, the pieces of it that the runtime owns: a TMA descriptor found
// by its parameters (three per sm90 launch) and the device query of the
// persistent launch. Each figure is the best of several rounds (the least
// disturbed by other processes). The GPU time per call is printed too: when
// it is not below the host time, the loop measured the GPU, not the host.
//
// On GPU targets the run is also timed behind a spin kernel: the stream is
// held busy (a PTX kernel polling %globaltimer) while a burst of calls is
// enqueued, so the host time of the burst has no queue back-pressure and no
// idle-GPU wake-up in it, whatever the kernel's own duration; the GPU time
// of the queued burst, measured by events after the spin, is the kernel's
// time per call. The Python package's share is scripts/gpu/hit_path.py.
//
//===----------------------------------------------------------------------===//

#include "conv3d/Runtime/CudaDriver.h"
#include "conv3d/Runtime/Engine.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <limits>
#include <memory>
#include <vector>

using namespace llvm;
using namespace mlir::conv3d;

extern "C" int64_t conv3dMultiprocessorCount();

static cl::OptionCategory category("conv3d-host-overhead options");
static cl::opt<std::string> targetName("target",
                                       cl::desc("cpu, sm80 or sm90 (default: "
                                                "sm90)"),
                                       cl::init("sm90"), cl::cat(category));
static cl::opt<unsigned> calls("calls", cl::desc("Calls per round"),
                               cl::init(20000), cl::cat(category));
static cl::opt<unsigned> rounds("rounds", cl::desc("Rounds (best is kept)"),
                                cl::init(5), cl::cat(category));

namespace {

/// The best per-call time of `fn` in microseconds; `sync` runs after each
/// round, outside the timed part.
double bestMicros(const std::function<bool()> &fn,
                  const std::function<void()> &sync) {
  double best = std::numeric_limits<double>::infinity();
  for (unsigned i = 0; i < std::max(1u, calls / 10); ++i)
    if (!fn())
      return -1;
  sync();
  for (unsigned round = 0; round < rounds; ++round) {
    auto start = std::chrono::steady_clock::now();
    for (unsigned i = 0; i < calls; ++i)
      if (!fn())
        return -1;
    auto stop = std::chrono::steady_clock::now();
    sync();
    best = std::min(
        best, std::chrono::duration<double, std::micro>(stop - start).count() /
                  calls);
  }
  return best;
}

/// Spins until %globaltimer has advanced by `ns` nanoseconds: holds a stream
/// busy while the host enqueues work behind it.
constexpr const char kSpinPtx[] = R"(
.version 7.0
.target sm_80
.address_size 64
.visible .entry conv3d_host_overhead_spin(.param .u64 ns) {
  .reg .u64 %start, %now, %ns, %end;
  .reg .pred %wait;
  ld.param.u64 %ns, [ns];
  mov.u64 %start, %globaltimer;
  add.u64 %end, %start, %ns;
SPIN:
  mov.u64 %now, %globaltimer;
  setp.lt.u64 %wait, %now, %end;
  @%wait bra SPIN;
  ret;
}
)";

struct GatedTimes {
  double hostMicros = std::numeric_limits<double>::infinity();
  double gpuMicros = std::numeric_limits<double>::infinity();
};

/// A stream held busy by a spin kernel while bursts of calls are enqueued
/// behind it. It owns the spin kernel's module and two events (not
/// copyable: one owner unloads and destroys them).
class BusyStream {
public:
  static Expected<std::unique_ptr<BusyStream>> create(CudaDriver &driver,
                                                      void *stream) {
    Expected<void *> module = driver.loadModuleJIT(kSpinPtx, 1);
    if (!module)
      return module.takeError();
    Expected<void *> spin =
        driver.getFunction(*module, "conv3d_host_overhead_spin");
    if (!spin)
      return spin.takeError();
    Expected<void *> begin = driver.createEvent(), end = driver.createEvent();
    if (!begin)
      return begin.takeError();
    if (!end)
      return end.takeError();
    return std::unique_ptr<BusyStream>(
        new BusyStream(driver, stream, *module, *spin, *begin, *end));
  }
  BusyStream(const BusyStream &) = delete;
  BusyStream &operator=(const BusyStream &) = delete;

  /// Launches the spin kernel for `ns` nanoseconds (0: a bare launch).
  Error spin(uint64_t ns) {
    void *params[] = {&ns};
    return driver.launch(spinFunction, {1, 1, 1}, {1, 1, 1}, 0, stream, params);
  }

  /// The best host and GPU time per call of `fn` in bursts of `burst` calls
  /// behind a spin of `spinMillis`; an error when a burst took longer to
  /// enqueue than most of the spin (the GPU could have caught up, or the
  /// queue pushed back).
  Expected<GatedTimes> time(const std::function<bool()> &fn, unsigned burst,
                            double spinMillis) {
    GatedTimes best;
    for (unsigned round = 0; round < rounds; ++round) {
      if (Error e = driver.synchronize(stream))
        return std::move(e);
      if (Error e = spin(uint64_t(spinMillis * 1e6)))
        return std::move(e);
      if (Error e = driver.recordEvent(begin, stream))
        return std::move(e);
      auto start = std::chrono::steady_clock::now();
      for (unsigned i = 0; i < burst; ++i)
        if (!fn())
          return createStringError("the call failed");
      auto stop = std::chrono::steady_clock::now();
      if (Error e = driver.recordEvent(end, stream))
        return std::move(e);
      if (Error e = driver.synchronizeEvent(end))
        return std::move(e);
      double hostMicros =
          std::chrono::duration<double, std::micro>(stop - start).count();
      if (hostMicros >= 0.8 * spinMillis * 1e3)
        return createStringError("a burst of %u calls took %.0f us to "
                                 "enqueue; the spin lasts %.0f us",
                                 burst, hostMicros, spinMillis * 1e3);
      Expected<float> millis = driver.elapsedMillis(begin, end);
      if (!millis)
        return millis.takeError();
      best.hostMicros = std::min(best.hostMicros, hostMicros / burst);
      best.gpuMicros = std::min(best.gpuMicros, double(*millis) * 1e3 / burst);
    }
    return best;
  }

  ~BusyStream() {
    consumeError(driver.synchronize(stream));
    consumeError(driver.destroyEvent(begin));
    consumeError(driver.destroyEvent(end));
    consumeError(driver.unloadModule(module));
  }

private:
  BusyStream(CudaDriver &driver, void *stream, void *module, void *function,
             void *begin, void *end)
      : driver(driver), stream(stream), module(module), spinFunction(function),
        begin(begin), end(end) {}

  CudaDriver &driver;
  void *stream, *module, *spinFunction, *begin, *end;
};

int fail(const Twine &message) {
  WithColor::error(errs(), "conv3d-host-overhead") << message << "\n";
  return 1;
}

} // namespace

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(argc, argv,
                              "conv3d-host-overhead: host time per call of a "
                              "compiled convolution\n");
  std::optional<Target> target = symbolizeTarget(targetName);
  if (!target || *target == Target::sm100)
    return fail("--target=" + targetName + ": expected cpu, sm80 or sm90");
  bool gpu = *target != Target::cpu;

  // 1x2x8x8x64 bf16 * 3x3x3x64x64 (FQRSC), padding 1, bias: a few
  // microseconds of GPU time. The CPU target takes a tiny f32 one.
  ConvSpec spec;
  spec.geometry.batch = 1;
  spec.geometry.inputSize =
      gpu ? std::array<int64_t, 3>{2, 8, 8} : std::array<int64_t, 3>{1, 2, 2};
  spec.geometry.channels = gpu ? 64 : 4;
  spec.geometry.window =
      gpu ? std::array<int64_t, 3>{3, 3, 3} : std::array<int64_t, 3>{1, 1, 1};
  spec.geometry.filters = gpu ? 64 : 4;
  if (gpu) {
    spec.geometry.padLow = {1, 1, 1};
    spec.geometry.padHigh = {1, 1, 1};
  }
  spec.filterLayout = FilterLayout::fqrsc;
  spec.inputType = spec.outputType = gpu ? ElementType::bf16 : ElementType::f32;
  spec.hasBias = true;

  Engine engine;
  CompileOptions options;
  options.target = *target;
  auto conv = engine.compile(spec, options);
  if (!conv)
    return fail(toString(conv.takeError()));

  auto elements = [](const std::vector<int64_t> &shape) {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  };
  size_t elementBytes = gpu ? 2 : 4;
  size_t inBytes = elements(spec.inputShape()) * elementBytes,
         filterBytes = elements(spec.filterShape()) * elementBytes,
         outBytes = elements(spec.outputShape()) * elementBytes,
         biasBytes = spec.geometry.filters * 4;

  std::vector<char> hostIn(inBytes), hostFilter(filterBytes), hostOut(outBytes),
      hostBias(biasBytes);
  ConvArgs args{hostIn.data(), hostFilter.data(), hostBias.data(), nullptr,
                0.f,           hostOut.data()};
  CudaDriver *driver = nullptr;
  std::vector<void *> deviceBuffers;
  std::function<void()> sync = [] {};
  if (gpu) {
    Expected<CudaDriver &> found = CudaDriver::get();
    if (!found)
      return fail(toString(found.takeError()));
    driver = &*found;
    for (size_t bytes : {inBytes, filterBytes, biasBytes, outBytes}) {
      Expected<void *> buffer = driver->allocate(bytes);
      if (!buffer)
        return fail(toString(buffer.takeError()));
      if (Error e = driver->memsetD8(*buffer, 0, bytes))
        return fail(toString(std::move(e)));
      deviceBuffers.push_back(*buffer);
    }
    Expected<void *> stream = driver->createStream();
    if (!stream)
      return fail(toString(stream.takeError()));
    args = {deviceBuffers[0], deviceBuffers[1], deviceBuffers[2], nullptr, 0.f,
            deviceBuffers[3]};
    args.stream = *stream;
    sync = [&] { consumeError(driver->synchronize(args.stream)); };
  }

  std::string firstError;
  auto run = [&]() -> bool {
    if (Error e = (*conv)->runUnchecked(args)) {
      firstError = toString(std::move(e));
      return false;
    }
    return true;
  };
  double runUs = bestMicros(run, sync);
  if (runUs < 0)
    return fail("run: " + firstError);
  outs() << "target " << stringifyTarget(*target) << ", " << spec.describe()
         << "\n";
  outs() << format("  CompiledConv::run (host, per call)   %7.2f us\n", runUs);

  if (gpu) {
    // GPU time per call, to tell a host-bound loop from a GPU-bound one.
    Expected<void *> begin = driver->createEvent(), end = driver->createEvent();
    if (!begin || !end)
      return fail("events: " +
                  toString(begin ? end.takeError() : begin.takeError()));
    consumeError(driver->recordEvent(*begin, args.stream));
    for (unsigned i = 0; i < 200; ++i)
      if (!run())
        return fail("run: " + firstError);
    consumeError(driver->recordEvent(*end, args.stream));
    consumeError(driver->synchronizeEvent(*end));
    Expected<float> millis = driver->elapsedMillis(*begin, *end);
    if (millis)
      outs() << format("  GPU time per call                     %7.2f us%s\n",
                       *millis * 1e3 / 200,
                       *millis * 1e3 / 200 >= runUs
                           ? " (not below the host time: GPU-bound loop)"
                           : "");
    else
      consumeError(millis.takeError());

    // Behind a busy GPU: the host side alone, and the kernel's time.
    Expected<std::unique_ptr<BusyStream>> busy =
        BusyStream::create(*driver, args.stream);
    if (!busy)
      return fail("spin kernel: " + toString(busy.takeError()));
    Expected<GatedTimes> gated = (*busy)->time(run, /*burst=*/100,
                                               /*spinMillis=*/20);
    if (!gated) {
      std::string why = toString(gated.takeError());
      return fail("run behind a busy GPU: " +
                  (firstError.empty() ? why : firstError));
    }
    auto bareLaunch = [&]() -> bool {
      if (Error e = (*busy)->spin(0)) {
        firstError = toString(std::move(e));
        return false;
      }
      return true;
    };
    Expected<GatedTimes> bare = (*busy)->time(bareLaunch, /*burst=*/100,
                                              /*spinMillis=*/20);
    if (!bare) {
      std::string why = toString(bare.takeError());
      return fail("bare launch behind a busy GPU: " +
                  (firstError.empty() ? why : firstError));
    }
    outs() << "  behind a busy GPU (bursts of 100 calls queued behind a spin "
              "kernel: no back-pressure):\n";
    outs() << format("    CompiledConv::run (host, per call)  %7.2f us\n",
                     gated->hostMicros);
    outs() << format("    its GPU time per call                %7.2f us\n",
                     gated->gpuMicros);
    outs() << format("    CudaDriver::launch of a 1-thread kernel (host) "
                     "%7.2f us\n",
                     bare->hostMicros);

    // The runtime's pieces of a launch.
    Im2colTensorMapParams params;
    params.dataType = TensorMapDataType::BFloat16;
    params.globalAddress = deviceBuffers[0];
    params.globalDim = {64, 8, 8, 2, 1};
    params.globalStrides = {64 * 2, 8 * 64 * 2, 8 * 8 * 64 * 2,
                            2 * 8 * 8 * 64 * 2};
    params.pixelBoxLowerCorner = {-1, -1, -1};
    params.pixelBoxUpperCorner = {-1, -1, -1};
    params.channelsPerPixel = 64;
    params.pixelsPerColumn = 128;
    params.swizzle = TensorMapSwizzle::B128;
    if (driver->deviceInfo()->ccMajor >= 9) {
      auto descriptor = [&]() -> bool {
        Expected<void *> map = driver->deviceTensorMap(params, args.stream);
        if (!map) {
          firstError = toString(map.takeError());
          return false;
        }
        return true;
      };
      auto encode = [&]() -> bool {
        Expected<TensorMap> map = driver->encodeIm2col(params);
        if (!map) {
          firstError = toString(map.takeError());
          return false;
        }
        return true;
      };
      double hit = bestMicros(descriptor, sync);
      double encoding = bestMicros(encode, sync);
      if (hit < 0 || encoding < 0)
        return fail("TMA descriptor: " + firstError);
      outs() << format("  TMA descriptor, cached (per map)      %7.2f us\n",
                       hit);
      outs() << format("  TMA descriptor, verify + encode only  %7.2f us\n",
                       encoding);
    }
    double query =
        bestMicros([] { return conv3dMultiprocessorCount() > 0; }, sync);
    outs() << format("  multiprocessor count query            %7.2f us\n",
                     query);
    for (void *buffer : deviceBuffers)
      consumeError(driver->free(buffer));
  }
  return 0;
}
