//===- Runners.h - the modes of conv3d-run ----------------------*- C++ -*-===//

#ifndef CONV3D_TOOLS_CONV3D_RUN_RUNNERS_H
#define CONV3D_TOOLS_CONV3D_RUN_RUNNERS_H

#include "Flags.h"

#include "conv3d/Runtime/KernelCache.h"
#include "conv3d/Support/HostTensor.h"

#include "llvm/ADT/Twine.h"

namespace conv3d_run {

/// Compiles the spec, runs it on random or given data, checks and times it.
int runSpec(const RunRequest &request);

/// --pack-nvfp4: packs the spec's input to real NVFP4 on the target and
/// compares the bytes with the reference packer.
int runPackNVFP4(const RunRequest &request);

/// --list-configs: prints the heuristic's tile configuration and the
/// tuner's other candidates for the spec, without compiling or running.
int runListConfigs(const RunRequest &request);

/// --explain: prints which kernel family runs the spec's convolutions and
/// why (Engine::explain), as text or, with --json, JSON.
int runExplain(const RunRequest &request);

/// Runs a function of an .mlir file on .npy arguments.
int runModule(const RunRequest &request);

/// --kind=dgrad|wgrad: a gradient spec, checked against the reference
/// gradients (GradientRunner.cpp).
int runGradient(const RunRequest &request);

/// What a spec run measured, for printResult.
struct Measurement {
  double compileMillis = 0;
  mlir::conv3d::CacheSource compileSource = mlir::conv3d::CacheSource::Compiled;
  double runMillis = 0;
  std::optional<double> relativeError;
  double tolerance = 0;
  bool passed = true;
  /// --tune: the configuration chosen ("heuristic" or key=value pairs),
  /// the time tuning took and whether the choice was remembered.
  std::string tunedConfig;
  double tuneMillis = 0;
  bool tuneRemembered = false;

  /// The check's result: the output's relative L2 error against the
  /// reference and the largest one accepted.
  void recordCheck(double error, double acceptedError) {
    relativeError = error;
    tolerance = acceptedError;
    passed = error <= acceptedError;
  }
};

/// Prints a spec run's result (text, --quiet's last line, or --json).
void printResult(const RunRequest &request, const Measurement &m);

/// The end of a spec run: `output` written to --output when asked, the
/// result printed; the exit code (kCheckFailed when the check failed).
int finishRun(const RunRequest &request, const Measurement &m,
              const mlir::conv3d::HostTensor &output);

/// Loads `path` as `type` with `shape`, or makes random normal data.
llvm::Expected<mlir::conv3d::HostTensor>
loadOrRandom(const std::string &path, llvm::StringRef what,
             mlir::conv3d::ElementType type, const std::vector<int64_t> &shape,
             uint64_t seed, double stddev);

/// Median of run times in milliseconds.
double median(std::vector<double> values);

/// Prints `message` as conv3d-run's error and returns `code`.
int fail(const llvm::Twine &message, int code = kUsageError);

/// Prints a step of the run unless --quiet.
void progress(const RunRequest &request, const llvm::Twine &message);

/// The output buffer (`shape`) that `spec`'s run writes: random values with
/// `seed` when the convolution accumulates onto it, else poisoned (NaN) so
/// that what the run does not write shows in the check.
llvm::Expected<mlir::conv3d::HostTensor>
initialOutput(const mlir::conv3d::ConvSpec &spec,
              const std::vector<int64_t> &shape, uint64_t seed);

} // namespace conv3d_run

#endif // CONV3D_TOOLS_CONV3D_RUN_RUNNERS_H
