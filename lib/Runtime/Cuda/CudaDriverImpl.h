//===- CudaDriverImpl.h - CudaDriver's private state, shared ----*- C++ -*-===//
//
// CudaDriver is implemented in several files, one per concern (loading,
// memory and streams, modules and launches, tensor maps); this header holds
// what they all need and the public header must not show: the table of
// driver entry points, the Impl struct, the checked-call macro and the
// current-context guard. It includes cuda.h, so it stays inside the runtime
// library, whose targets alone have cuda.h on their include path.
//
//===----------------------------------------------------------------------===//

#ifndef CONV3D_LIB_RUNTIME_CUDA_CUDADRIVERIMPL_H
#define CONV3D_LIB_RUNTIME_CUDA_CUDADRIVERIMPL_H

#include "conv3d/Runtime/CudaDriver.h"
#include "conv3d/Runtime/TensorMapSlots.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/Twine.h"

#include <cuda.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <type_traits>
#include <utility>

// Stringifies after macro expansion: CONV3D_STR(cuMemAlloc) is
// "cuMemAlloc_v2", the symbol that cuda.h's prototype of cuMemAlloc names.
#define CONV3D_STR_IMPL(x) #x
#define CONV3D_STR(x) CONV3D_STR_IMPL(x)

// Every driver function this library calls. Passing the names through a macro
// expands cuda.h's aliases, so the members below are declared, and the
// symbols looked up, under their real versioned names; code that writes
// `api.cuMemAlloc` gets `api.cuMemAlloc_v2` the same way.
#define CONV3D_CUDA_REQUIRED_FUNCTIONS(X)                                      \
  X(cuGetErrorName)                                                            \
  X(cuGetErrorString)                                                          \
  X(cuInit)                                                                    \
  X(cuDriverGetVersion)                                                        \
  X(cuDeviceGetCount)                                                          \
  X(cuDeviceGet)                                                               \
  X(cuDeviceGetName)                                                           \
  X(cuDeviceGetAttribute)                                                      \
  X(cuDeviceTotalMem)                                                          \
  X(cuDevicePrimaryCtxRetain)                                                  \
  X(cuCtxGetCurrent)                                                           \
  X(cuCtxSetCurrent)                                                           \
  X(cuCtxPushCurrent)                                                          \
  X(cuCtxPopCurrent)

// Looked up too, but only an error when called: an older driver may lack a
// few (cuEventElapsedTime_v2 is 12.8+).
#define CONV3D_CUDA_OTHER_FUNCTIONS(X)                                         \
  X(cuMemAlloc)                                                                \
  X(cuMemAllocManaged)                                                         \
  X(cuMemAllocAsync)                                                           \
  X(cuMemAllocFromPoolAsync)                                                   \
  X(cuMemPoolCreate)                                                           \
  X(cuMemPoolSetAttribute)                                                     \
  X(cuMemPoolGetAttribute)                                                     \
  X(cuDeviceGetGraphMemAttribute)                                              \
  X(cuDeviceSetGraphMemAttribute)                                              \
  X(cuMemFree)                                                                 \
  X(cuMemFreeAsync)                                                            \
  X(cuMemcpy)                                                                  \
  X(cuMemcpyAsync)                                                             \
  X(cuMemcpyHtoD)                                                              \
  X(cuMemcpyHtoDAsync)                                                         \
  X(cuMemcpyDtoH)                                                              \
  X(cuMemcpyDtoHAsync)                                                         \
  X(cuMemsetD8)                                                                \
  X(cuMemsetD8Async)                                                           \
  X(cuMemsetD16)                                                               \
  X(cuMemsetD16Async)                                                          \
  X(cuMemsetD32)                                                               \
  X(cuMemsetD32Async)                                                          \
  X(cuMemHostRegister)                                                         \
  X(cuMemHostUnregister)                                                       \
  X(cuStreamCreate)                                                            \
  X(cuStreamDestroy)                                                           \
  X(cuStreamSynchronize)                                                       \
  X(cuStreamWaitEvent)                                                         \
  X(cuEventCreate)                                                             \
  X(cuEventDestroy)                                                            \
  X(cuEventRecord)                                                             \
  X(cuEventSynchronize)                                                        \
  X(cuEventElapsedTime)                                                        \
  X(cuModuleLoadData)                                                          \
  X(cuModuleLoadDataEx)                                                        \
  X(cuModuleUnload)                                                            \
  X(cuModuleGetFunction)                                                       \
  X(cuFuncSetAttribute)                                                        \
  X(cuLaunchKernel)                                                            \
  X(cuLaunchKernelEx)                                                          \
  X(cuTensorMapEncodeTiled)                                                    \
  X(cuTensorMapEncodeIm2col)                                                   \
  X(cuMemAllocHost)                                                            \
  X(cuEventQuery)                                                              \
  X(cuCtxSynchronize)                                                          \
  X(cuStreamIsCapturing)                                                       \
  X(cuThreadExchangeStreamCaptureMode)

// A named namespace, not an anonymous one: CudaDriver::Impl has external
// linkage and holds a DriverApi, so the type must be the same one in every
// file that includes this header.
namespace mlir::conv3d::cuda {

/// The driver's entry points, null where the library lacks one.
struct DriverApi {
#define CONV3D_DECLARE(fn) decltype(&fn) fn = nullptr;
  CONV3D_CUDA_REQUIRED_FUNCTIONS(CONV3D_DECLARE)
  CONV3D_CUDA_OTHER_FUNCTIONS(CONV3D_DECLARE)
#undef CONV3D_DECLARE
};

llvm::Error makeError(const llvm::Twine &message);

/// The CudaError of a failed call, named by its real symbol.
llvm::Error checkResult(const DriverApi &api, CUresult result,
                        const char *call);

template <typename Fn, typename... Args>
llvm::Error callDriver(const DriverApi &api, Fn *fn, const char *call,
                       Args... args) {
  if (!fn)
    return makeError(llvm::Twine(call) +
                     " is not exported by the CUDA driver (too old?)");
  return checkResult(api, fn(args...), call);
}

inline CUdeviceptr toDevice(const void *ptr) {
  return reinterpret_cast<CUdeviceptr>(ptr);
}

} // namespace mlir::conv3d::cuda

/// Calls a driver function through `api` (a DriverApi in scope); the error
/// names the real symbol.
#define CONV3D_CU(fn, ...)                                                     \
  ::mlir::conv3d::cuda::callDriver(api, api.fn, CONV3D_STR(fn), __VA_ARGS__)

namespace mlir::conv3d {

struct CudaDriver::Impl {
  void *library = nullptr;
  cuda::DriverApi api;
  CUdevice device = 0;
  CUcontext context = nullptr;
  DeviceInfo info;
  bool memoryPools = false;
  /// The runtime's own stream-ordered pool (null: the device's default).
  /// It keeps freed memory instead of returning it at every synchronization,
  /// so the temporaries of repeated calls (the NVFP4 prepass, split-K and
  /// Q-slice workspaces) cost no page mapping after the first call.
  CUmemoryPool pool = nullptr;

  std::mutex mutex; // guards everything below
  /// Allocations made by cuMemAllocAsync, which cuMemFreeAsync frees.
  llvm::DenseSet<CUdeviceptr> streamOrdered;
  /// The functions getFunction found, per module (until it is unloaded).
  llvm::DenseMap<CUmodule, llvm::StringMap<CUfunction>> functions;
  /// The dynamic shared memory limit each function was raised to.
  llvm::DenseMap<CUfunction, uint32_t> sharedLimits;
  /// Device copies of tensor maps (CudaDriverTensorMaps.cpp): which slot
  /// holds which map, found by content or by encoding parameters; a bounded
  /// number of slots in two generations.
  static constexpr size_t kTensorMapsPerGeneration = 2048;
  TensorMapSlots mapSlots{kTensorMapsPerGeneration};
  /// Advanced (under `mutex`) whenever mapSlots reuses a generation; read
  /// without the lock by CudaDriver::tensorMapEpoch.
  std::atomic<uint64_t> mapEpoch{0};
  CUdeviceptr mapDevice = 0;    ///< mapSlots.capacity() maps
  TensorMap *mapHost = nullptr; ///< pinned mirror the uploads copy from
  /// A slot's upload possibly in flight on `stream` (event null once known
  /// complete): a kernel that asks for the map meanwhile waits for `event`.
  struct PendingUpload {
    CUevent event = nullptr;
    CUstream stream = nullptr;
  };
  std::vector<PendingUpload> mapUploads;
  /// A non-blocking stream of the runtime's own, which maps are uploaded on
  /// (and waited for) while the launch's stream is being captured into a CUDA
  /// graph (CudaDriverTensorMaps.cpp); created on first need.
  CUstream captureUploadStream = nullptr;
};

namespace cuda {

/// Creates the runtime's own stream-ordered pool where the device and the
/// driver support one (CudaDriverMemory.cpp); without one, `impl.pool` stays
/// null and stream-ordered allocations use the device's default pool.
void setUpMemoryPool(CudaDriver::Impl &impl);

/// Makes the primary context current for a scope. A thread without a
/// context keeps it current afterwards (cuCtxSetCurrent, so later calls cost
/// one query); a thread with another context of its own gets that one back
/// (cuCtxPushCurrent / cuCtxPopCurrent).
class ContextScope {
public:
  static llvm::Expected<ContextScope> enter(const CudaDriver::Impl &impl);
  ContextScope(ContextScope &&other)
      : popWith(std::exchange(other.popWith, nullptr)) {}
  ContextScope(const ContextScope &) = delete;
  ~ContextScope() {
    CUcontext popped = nullptr;
    if (popWith)
      (void)popWith->cuCtxPopCurrent(&popped);
  }

private:
  explicit ContextScope(const DriverApi *popWith) : popWith(popWith) {}
  const DriverApi *popWith;
};

/// Runs `body(api)` with the primary context current. Every CudaDriver
/// method that calls the driver goes through here, so none can forget the
/// context or pop it early: it is popped only after `body` has returned, so
/// locks taken inside are released first. `body` returns llvm::Error or
/// llvm::Expected<T>; a failure to make the context current is returned as
/// that type, without running `body`.
template <typename Body>
auto withContext(const CudaDriver::Impl &impl, Body &&body)
    -> std::invoke_result_t<Body &, const DriverApi &> {
  using Result = std::invoke_result_t<Body &, const DriverApi &>;
  static_assert(std::is_constructible_v<Result, llvm::Error>,
                "withContext's body must return llvm::Error or Expected");
  llvm::Expected<ContextScope> scope = ContextScope::enter(impl);
  if (!scope)
    return scope.takeError();
  return body(impl.api);
}

} // namespace cuda
} // namespace mlir::conv3d

#endif // CONV3D_LIB_RUNTIME_CUDA_CUDADRIVERIMPL_H
