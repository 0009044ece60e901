//===- Emulate.cpp - conv3d-run --emulate ---------------------------------===//
//
// The PTX emulator is a CUDA driver of its own (lib/Emulator): the runtime
// opens it instead of libcuda when $CONV3D_CUDA_DRIVER names it, so the
// whole run -- compilation, lowered host code, descriptors, launches, the
// reference check -- is the GPU run, with the kernels executed on the host.
//
//===----------------------------------------------------------------------===//

#include "Flags.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <cstdlib>

using namespace mlir::conv3d;

llvm::Error conv3d_run::enableEmulation(CompileOptions &options,
                                        const char *argv0) {
  const char *arch = nullptr;
  switch (options.target) {
  case Target::sm80:
  case Target::sm90:
    arch = "90";
    break;
  case Target::sm100:
    arch = "100";
    break;
  default:
    return llvm::createStringError("needs a GPU target (--target=sm80, sm90 "
                                   "or sm100)");
  }
  // The emulated driver beside this tool's library folder, unless one is
  // named already.
  const char *named = std::getenv("CONV3D_CUDA_DRIVER");
  if (!named || !*named) {
    std::string exe = llvm::sys::fs::getMainExecutable(
        argv0, reinterpret_cast<void *>(&enableEmulation));
    llvm::SmallString<256> path(
        llvm::sys::path::parent_path(llvm::sys::path::parent_path(exe)));
    llvm::sys::path::append(path, "lib", "libconv3d-emulated-cuda.so");
    if (!llvm::sys::fs::exists(path))
      return llvm::createStringError("the emulated driver " + path +
                                     " is missing (build the "
                                     "Conv3dEmulatedCuda target)");
    setenv("CONV3D_CUDA_DRIVER", path.c_str(), 1);
  }
  setenv("CONV3D_EMULATOR_ARCH", arch, 0);
  // The emulator runs PTX.
  options.gpuBinaryFormat = GpuBinaryFormat::Isa;
  return llvm::Error::success();
}
