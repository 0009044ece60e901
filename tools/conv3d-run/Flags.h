//===- Flags.h - conv3d-run command line ------------------------*- C++ -*-===//

#ifndef CONV3D_TOOLS_CONV3D_RUN_FLAGS_H
#define CONV3D_TOOLS_CONV3D_RUN_FLAGS_H

#include "conv3d/Runtime/ConvSpec.h"
#include "conv3d/Runtime/KernelCache.h"

#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace conv3d_run {

/// Exit statuses, documented in --help.
enum ExitCode { kOk = 0, kCheckFailed = 1, kUsageError = 2 };

/// What the command line asks for, after parsing and validation.
struct RunRequest {
  // Spec mode.
  mlir::conv3d::ConvSpec spec;
  mlir::conv3d::CompileOptions options;
  mlir::conv3d::CacheOptions cache;
  std::string presetName;
  std::string inputPath, filterPath, outputPath;
  /// --kind=dgrad|wgrad: the output's gradient; dgrad with --activation:
  /// the pre-activation (--pre-activation).
  std::string gradOutputPath, preActivationPath;
  std::optional<float> amax;
  std::optional<int64_t> filterQuantBlockSize;
  std::optional<float> filterAmax;
  /// --pack-nvfp4: pack the input to real NVFP4 (codes + scale bytes) on
  /// the target and compare with the reference packer instead of running
  /// the convolution; the NVFP4 block size.
  std::optional<int64_t> packBlockSize;
  /// --list-configs: print the heuristic's and the tuner's candidate tile
  /// configurations instead of running.
  bool listConfigs = false;
  // Module mode.
  std::string modulePath, entry;
  std::vector<std::string> argPaths, resultPaths;
  // Both.
  bool check = true;
  /// Spec mode: check this many sampled output rows (0: the whole output).
  int64_t checkRows = 0;
  int repeat = 1;
  bool json = false;
  std::string emit;
  /// --explain: print the kernel choice and why instead of running.
  bool explain = false;
  /// --emulate: the kernels run in the PTX emulator (sm100's included).
  bool emulate = false;
  uint64_t seed = 0;
  bool quiet = false;

  bool isModuleMode() const { return !modulePath.empty(); }
};

/// --emulate: makes the runtime open the emulated driver beside this tool
/// (lib/libconv3d-emulated-cuda.so, presenting a device of the target's
/// architecture) and compiles kernels to PTX, which it runs (Emulate.cpp).
llvm::Error enableEmulation(mlir::conv3d::CompileOptions &options,
                            const char *argv0);

/// Parses argv (llvm::cl) into a request; errors name the offending flag.
llvm::Expected<RunRequest> parseCommandLine(int argc, char **argv);

} // namespace conv3d_run

#endif // CONV3D_TOOLS_CONV3D_RUN_FLAGS_H
