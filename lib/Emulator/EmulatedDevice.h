//===- EmulatedDevice.h - the emulated CUDA driver's state ------*- C++ -*-===//
//
// libconv3d-emulated-cuda.so implements the part of the CUDA driver API the
// project's runtime calls (CudaDriverImpl.h's table), on the host: device
// memory is an arena of host memory shared with the PTX emulator (a memfd
// both processes map), modules are PTX text, and cuLaunchKernel runs the
// kernel in the PTX emulator (tools/ptx-emulator, Python). The runtime opens
// it instead of libcuda when $CONV3D_CUDA_DRIVER names it (conv3d-run
// --emulate does), so everything above the driver -- lowered host code,
// descriptor encoding parameters, launch grids, shared memory sizes -- is
// the code that runs on a GPU.
//
// Plain C++ (no LLVM): the library is dlopen'ed into processes that may not
// carry LLVM.
//
//===----------------------------------------------------------------------===//

#ifndef CONV3D_LIB_EMULATOR_EMULATEDDEVICE_H
#define CONV3D_LIB_EMULATOR_EMULATEDDEVICE_H

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace conv3d_emulator {

/// Device memory: one memfd-backed arena mapped MAP_SHARED here and in the
/// emulator's process, with a first-fit allocator. New allocations are
/// filled with 0xff bytes (NaN in every floating type), as uninitialized
/// device memory would hold anything.
class Arena {
public:
  bool open(size_t bytes, std::string &error);
  void *allocate(size_t bytes);
  bool free(void *ptr);
  /// Whether [ptr, ptr + bytes) lies in one live allocation.
  bool contains(const void *ptr, size_t bytes) const;
  bool owns(const void *ptr) const;
  int fd() const { return fd_; }
  uintptr_t base() const { return reinterpret_cast<uintptr_t>(base_); }
  size_t size() const { return size_; }
  /// Live allocations (address, bytes).
  std::vector<std::pair<uintptr_t, size_t>> live() const;

private:
  int fd_ = -1;
  char *base_ = nullptr;
  size_t size_ = 0;
  std::map<uintptr_t, size_t> used_;
  std::map<uintptr_t, size_t> free_;
};

struct Function;

struct Module {
  std::string ptx;
  std::string path; ///< the PTX written out for the emulator
  /// Its functions: as in CUDA, they live as long as the module
  /// (cuModuleUnload frees them).
  std::vector<std::unique_ptr<Function>> functions;
};

struct Function {
  Module *module = nullptr;
  std::string name;
  /// Parameter sizes in bytes, from the .entry's declaration.
  std::vector<size_t> paramSizes;
  int maxDynamicShared = 48 * 1024;
};

/// The process-wide state, created by cuInit.
struct Device {
  std::mutex mutex;
  Arena arena;
  int ccMajor = 9, ccMinor = 0;
  int multiprocessors = 4;
  std::string name;
  std::string workDir;     ///< temporary files (PTX, launch descriptions)
  std::string emulatorDir; ///< the ptxemu package's parent folder
  std::string python;
  bool keepFiles = false;
  int launches = 0;
};

/// The device (null before a successful cuInit).
Device *device();
/// The calling thread's last error message, for cuGetErrorString.
void setLastError(const std::string &message);
const char *lastError();
/// Records `message` and returns `result`.
CUresult fail(CUresult result, const std::string &message);

/// Runs a launch in the emulator (EmulatedLaunch.cpp).
CUresult launch(Function *function, const unsigned grid[3],
                const unsigned block[3], const unsigned cluster[3],
                unsigned sharedBytes, void **params);

} // namespace conv3d_emulator

#endif // CONV3D_LIB_EMULATOR_EMULATEDDEVICE_H
