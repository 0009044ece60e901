//===- CudaDriver.cpp - the CUDA driver API, opened at run time -----------===//
//
// libcuda is never linked: it is opened with dlopen and every function is
// looked up with dlsym, under the versioned name cuda.h's macros give it
// (cuMemAlloc is cuMemAlloc_v2), so a binary built here runs its CPU paths on
// machines without a driver. cuda.h is included for types and prototypes
// only.
//
//===----------------------------------------------------------------------===//

#include "conv3d/Runtime/CudaDriver.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <cuda.h>
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>

using namespace mlir::conv3d;
using llvm::Error;
using llvm::Expected;

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
  X(cuTensorMapEncodeIm2col)

namespace {

/// The driver's entry points, null where the library lacks one.
struct DriverApi {
#define CONV3D_DECLARE(fn) decltype(&fn) fn = nullptr;
  CONV3D_CUDA_REQUIRED_FUNCTIONS(CONV3D_DECLARE)
  CONV3D_CUDA_OTHER_FUNCTIONS(CONV3D_DECLARE)
#undef CONV3D_DECLARE
};

#define CONV3D_NAME(fn) CONV3D_STR(fn),
// clang-format off
const char *const kDriverSymbols[] = {
    CONV3D_CUDA_REQUIRED_FUNCTIONS(CONV3D_NAME)
    CONV3D_CUDA_OTHER_FUNCTIONS(CONV3D_NAME)};
// clang-format on
#undef CONV3D_NAME

Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// The CudaError of a failed call, named by its real symbol.
Error checkResult(const DriverApi &api, CUresult result, const char *call) {
  if (result == CUDA_SUCCESS)
    return Error::success();
  const char *name = nullptr;
  const char *description = nullptr;
  if (api.cuGetErrorName)
    api.cuGetErrorName(result, &name);
  if (api.cuGetErrorString)
    api.cuGetErrorString(result, &description);
  return llvm::make_error<CudaError>(
      call, static_cast<int>(result),
      name ? std::string(name) : "CUresult " + std::to_string(result),
      description ? description : "no description");
}

template <typename Fn, typename... Args>
Error callDriver(const DriverApi &api, Fn *fn, const char *call, Args... args) {
  if (!fn)
    return makeError(llvm::Twine(call) +
                     " is not exported by the CUDA driver (too old?)");
  return checkResult(api, fn(args...), call);
}

} // namespace

/// Calls a driver function through `api` (a DriverApi in scope); the error
/// names the real symbol.
#define CONV3D_CU(fn, ...) callDriver(api, api.fn, CONV3D_STR(fn), __VA_ARGS__)

//===----------------------------------------------------------------------===//
// CudaError and DeviceInfo
//===----------------------------------------------------------------------===//

char CudaError::ID = 0;

CudaError::CudaError(std::string call, int result, std::string name,
                     std::string description)
    : call(std::move(call)), result(result), name(std::move(name)),
      description(std::move(description)) {}

void CudaError::log(llvm::raw_ostream &os) const {
  os << call << " failed: " << name << " (" << description << ")";
}

std::error_code CudaError::convertToErrorCode() const {
  return llvm::inconvertibleErrorCode();
}

std::string DeviceInfo::chip() const {
  return "sm_" + std::to_string(ccMajor) + std::to_string(ccMinor);
}

//===----------------------------------------------------------------------===//
// The driver's state and the current-context guard
//===----------------------------------------------------------------------===//

struct CudaDriver::Impl {
  void *library = nullptr;
  DriverApi api;
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
  /// The dynamic shared memory limit each function was raised to.
  llvm::DenseMap<CUfunction, uint32_t> sharedLimits;
  /// Device copies of tensor maps, suballocated from slabs.
  std::map<std::array<uint64_t, 16>, CUdeviceptr> tensorMaps;
  CUdeviceptr slab = 0;
  size_t slabUsed = 0;
};

namespace {

/// Makes the primary context current for a scope. A thread without a
/// context keeps it current afterwards (cuCtxSetCurrent, so later calls cost
/// one query); a thread with another context of its own gets that one back
/// (cuCtxPushCurrent / cuCtxPopCurrent).
class ContextScope {
public:
  static Expected<ContextScope> enter(const CudaDriver::Impl &impl) {
    const DriverApi &api = impl.api;
    CUcontext current = nullptr;
    if (Error err = CONV3D_CU(cuCtxGetCurrent, &current))
      return std::move(err);
    if (current == impl.context)
      return ContextScope(nullptr);
    if (!current) {
      if (Error err = CONV3D_CU(cuCtxSetCurrent, impl.context))
        return std::move(err);
      return ContextScope(nullptr);
    }
    if (Error err = CONV3D_CU(cuCtxPushCurrent, impl.context))
      return std::move(err);
    return ContextScope(&api);
  }
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

/// Drops the error if it is a CudaError with result `tolerated`.
Error tolerate(Error error, CUresult tolerated) {
  return llvm::handleErrors(
      std::move(error), [&](std::unique_ptr<CudaError> cudaError) -> Error {
        if (cudaError->getResult() == static_cast<int>(tolerated))
          return Error::success();
        return Error(std::move(cudaError));
      });
}

CUdeviceptr toDevice(const void *ptr) {
  return reinterpret_cast<CUdeviceptr>(ptr);
}

Expected<int> deviceOrdinalFromEnvironment() {
  const char *value = std::getenv("CONV3D_CUDA_DEVICE");
  if (!value || !*value)
    return 0;
  int ordinal = 0;
  if (!llvm::to_integer(value, ordinal, 10) || ordinal < 0)
    return makeError(llvm::Twine("CONV3D_CUDA_DEVICE='") + value +
                     "' is not a device ordinal");
  return ordinal;
}

/// Opens the driver, looks up its functions and retains the primary context
/// of device `ordinal` (-1: from the environment).
Expected<std::unique_ptr<CudaDriver::Impl>> openDriver(int ordinal) {
  void *library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char *reason = dlerror();
    std::string firstReason = reason ? reason : "unknown reason";
    library = dlopen("libcuda.so", RTLD_NOW | RTLD_LOCAL);
    if (!library)
      return makeError("no CUDA driver: libcuda.so.1 not found (" +
                       firstReason + ")");
  }

  auto impl = std::make_unique<CudaDriver::Impl>();
  impl->library = library;
  DriverApi &api = impl->api;
#define CONV3D_LOAD(fn)                                                        \
  api.fn = reinterpret_cast<decltype(api.fn)>(dlsym(library, CONV3D_STR(fn)));
  CONV3D_CUDA_REQUIRED_FUNCTIONS(CONV3D_LOAD)
  CONV3D_CUDA_OTHER_FUNCTIONS(CONV3D_LOAD)
#undef CONV3D_LOAD
  // Drivers before 12.8 have only the first version; its signature is the
  // same.
  if (!api.cuEventElapsedTime)
    api.cuEventElapsedTime = reinterpret_cast<decltype(api.cuEventElapsedTime)>(
        dlsym(library, "cuEventElapsedTime"));

#define CONV3D_REQUIRE(fn)                                                     \
  if (!api.fn)                                                                 \
    return makeError(                                                          \
        "the CUDA driver (libcuda) does not export " CONV3D_STR(fn));
  CONV3D_CUDA_REQUIRED_FUNCTIONS(CONV3D_REQUIRE)
#undef CONV3D_REQUIRE

  if (Error err = CONV3D_CU(cuInit, 0u))
    return std::move(err);
  DeviceInfo &info = impl->info;
  if (Error err = CONV3D_CU(cuDriverGetVersion, &info.driverVersion))
    return std::move(err);

  if (ordinal < 0) {
    Expected<int> fromEnvironment = deviceOrdinalFromEnvironment();
    if (!fromEnvironment)
      return fromEnvironment.takeError();
    ordinal = *fromEnvironment;
  }
  int count = 0;
  if (Error err = CONV3D_CU(cuDeviceGetCount, &count))
    return std::move(err);
  if (ordinal >= count)
    return makeError("CUDA device " + llvm::Twine(ordinal) +
                     " requested, but the driver sees " + llvm::Twine(count) +
                     " device(s)");
  info.ordinal = ordinal;
  if (Error err = CONV3D_CU(cuDeviceGet, &impl->device, ordinal))
    return std::move(err);
  // Retaining does not make the context current; ContextScope does, per call.
  if (Error err =
          CONV3D_CU(cuDevicePrimaryCtxRetain, &impl->context, impl->device))
    return std::move(err);

  char name[256] = {};
  if (Error err =
          CONV3D_CU(cuDeviceGetName, name, int(sizeof(name) - 1), impl->device))
    return std::move(err);
  info.name = name;
  if (Error err = CONV3D_CU(cuDeviceTotalMem, &info.totalMemory, impl->device))
    return std::move(err);
  int memoryPools = 0;
  std::pair<int *, CUdevice_attribute> attributes[] = {
      {&info.ccMajor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR},
      {&info.ccMinor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR},
      {&info.multiprocessors, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT},
      {&info.maxSharedMemoryPerBlockOptin,
       CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN},
      {&memoryPools, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED}};
  for (auto [value, attribute] : attributes)
    if (Error err =
            CONV3D_CU(cuDeviceGetAttribute, value, attribute, impl->device))
      return std::move(err);
  impl->memoryPools = memoryPools != 0;
  if (impl->memoryPools && api.cuMemPoolCreate && api.cuMemPoolSetAttribute &&
      api.cuMemAllocFromPoolAsync) {
    CUmemPoolProps props = {};
    props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    props.location.id = ordinal;
    CUmemoryPool pool = nullptr;
    cuuint64_t keepAll = ~cuuint64_t(0);
    // Without the pool, allocations fall back to the default one.
    if (api.cuMemPoolCreate(&pool, &props) == CUDA_SUCCESS) {
      if (api.cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                                    &keepAll) == CUDA_SUCCESS)
        impl->pool = pool;
    }
  }
  return std::move(impl);
}

/// The process-wide driver: created once, never destroyed (JIT-compiled
/// destructors may still unload modules at exit).
struct DriverSingleton {
  std::mutex mutex;
  std::atomic<CudaDriver *> driver{nullptr};
  bool attempted = false;
  std::string error;
  int requestedDevice = -1;
};

DriverSingleton &getSingleton() {
  static auto *singleton = new DriverSingleton();
  return *singleton;
}

/// Errors recorded by the mgpu* wrappers, per thread: lowered host code runs
/// on the thread that calls it, which takes its errors afterwards.
thread_local std::optional<std::string> deferredError;

} // namespace

//===----------------------------------------------------------------------===//
// Singleton, deferred errors, diagnostics
//===----------------------------------------------------------------------===//

CudaDriver::CudaDriver(std::unique_ptr<Impl> impl) : impl(std::move(impl)) {}
CudaDriver::~CudaDriver() = default;

Expected<CudaDriver &> CudaDriver::get() {
  DriverSingleton &singleton = getSingleton();
  if (CudaDriver *driver = singleton.driver.load(std::memory_order_acquire))
    return *driver;
  std::lock_guard<std::mutex> lock(singleton.mutex);
  if (!singleton.attempted) {
    singleton.attempted = true;
    Expected<std::unique_ptr<Impl>> impl =
        openDriver(singleton.requestedDevice);
    if (impl)
      singleton.driver.store(new CudaDriver(std::move(*impl)),
                             std::memory_order_release);
    else
      singleton.error = llvm::toString(impl.takeError());
  }
  if (CudaDriver *driver = singleton.driver.load(std::memory_order_relaxed))
    return *driver;
  return makeError(singleton.error);
}

Error CudaDriver::requestDevice(int ordinal) {
  if (ordinal < 0)
    return makeError("CUDA device " + llvm::Twine(ordinal) +
                     " is not a device ordinal");
  DriverSingleton &singleton = getSingleton();
  std::lock_guard<std::mutex> lock(singleton.mutex);
  if (CudaDriver *driver = singleton.driver.load(std::memory_order_relaxed)) {
    int current = driver->impl->info.ordinal;
    if (ordinal == current)
      return Error::success();
    return makeError("CUDA device " + llvm::Twine(ordinal) +
                     " requested, but the driver already runs on device " +
                     llvm::Twine(current));
  }
  singleton.requestedDevice = ordinal;
  return Error::success();
}

Error CudaDriver::takeDeferredError() {
  if (!deferredError)
    return Error::success();
  std::string message = std::move(*deferredError);
  deferredError.reset();
  return makeError(message);
}

void CudaDriver::deferError(Error error) {
  if (!error)
    return;
  if (deferredError) {
    llvm::consumeError(std::move(error));
    return;
  }
  deferredError = llvm::toString(std::move(error));
}

bool CudaDriver::hasDeferredError() { return deferredError.has_value(); }

llvm::ArrayRef<const char *> CudaDriver::getDriverSymbolNames() {
  return kDriverSymbols;
}

Expected<std::vector<std::string>>
CudaDriver::findMissingSymbols(llvm::StringRef path) {
  std::string pathString = path.str();
  void *library = dlopen(pathString.c_str(), RTLD_LAZY | RTLD_LOCAL);
  if (!library) {
    const char *reason = dlerror();
    return makeError("cannot open " + path + ": " +
                     (reason ? reason : "unknown reason"));
  }
  std::vector<std::string> missing;
  for (const char *symbol : kDriverSymbols)
    if (!dlsym(library, symbol))
      missing.push_back(symbol);
  dlclose(library);
  return missing;
}

//===----------------------------------------------------------------------===//
// Device, memory, streams, events
//===----------------------------------------------------------------------===//

Expected<DeviceInfo> CudaDriver::deviceInfo() { return impl->info; }

Expected<void *> CudaDriver::allocate(size_t bytes, void *stream) {
  if (bytes == 0)
    return nullptr;
  const DriverApi &api = impl->api;
  auto scope = ContextScope::enter(*impl);
  if (!scope)
    return scope.takeError();
  CUdeviceptr ptr = 0;
  if (stream && impl->memoryPools) {
    if (Error err = impl->pool
                        ? CONV3D_CU(cuMemAllocFromPoolAsync, &ptr, bytes,
                                    impl->pool, static_cast<CUstream>(stream))
                        : CONV3D_CU(cuMemAllocAsync, &ptr, bytes,
                                    static_cast<CUstream>(stream)))
      return std::move(err);
    std::lock_guard<std::mutex> lock(impl->mutex);
    impl->streamOrdered.insert(ptr);
  } else if (Error err = CONV3D_CU(cuMemAlloc, &ptr, bytes)) {
    return std::move(err);
  }
  return reinterpret_cast<void *>(ptr);
}

Expected<void *> CudaDriver::allocateManaged(size_t bytes) {
  if (bytes == 0)
    return nullptr;
  const DriverApi &api = impl->api;
  auto scope = ContextScope::enter(*impl);
  if (!scope)
    return scope.takeError();
  CUdeviceptr ptr = 0;
  if (Error err = CONV3D_CU(cuMemAllocManaged, &ptr, bytes,
                            unsigned(CU_MEM_ATTACH_GLOBAL)))
    return std::move(err);
  return reinterpret_cast<void *>(ptr);
}

Error CudaDriver::free(void *ptr, void *stream) {
  if (!ptr)
    return Error::success();
  const DriverApi &api = impl->api;
  auto scope = ContextScope::enter(*impl);
  if (!scope)
    return scope.takeError();
  bool streamOrdered;
  {
    std::lock_guard<std::mutex> lock(impl->mutex);
    streamOrdered = impl->streamOrdered.erase(toDevice(ptr));
  }
  if (streamOrdered)
    return CONV3D_CU(cuMemFreeAsync, toDevice(ptr),
                     static_cast<CUstream>(stream));
  return CONV3D_CU(cuMemFree, toDevice(ptr));
}

Error CudaDriver::copyToDevice(void *dst, const void *src, size_t bytes,
                               void *stream) {
  if (bytes == 0)
    return Error::success();
  const DriverApi &api = impl->api;
  auto scope = ContextScope::enter(*impl);
  if (!scope)
    return scope.takeError();
  if (stream)
    return CONV3D_CU(cuMemcpyHtoDAsync, toDevice(dst), src, bytes,
                     static_cast<CUstream>(stream));
  return CONV3D_CU(cuMemcpyHtoD, toDevice(dst), src, bytes);
}

Error CudaDriver::copyToHost(void *dst, const void *src, size_t bytes,
                             void *stream) {
  if (bytes == 0)
    return Error::success();
  const DriverApi &api = impl->api;
  auto scope = ContextScope::enter(*impl);
  if (!scope)
    return scope.takeError();
  if (stream)
    return CONV3D_CU(cuMemcpyDtoHAsync, dst, toDevice(src), bytes,
                     static_cast<CUstream>(stream));
  return CONV3D_CU(cuMemcpyDtoH, dst, toDevice(src), bytes);
}

Error CudaDriver::copy(void *dst, const void *src, size_t bytes, void *stream) {
  if (bytes == 0)
    return Error::success();
  const DriverApi &api = impl->api;
  auto scope = ContextScope::enter(*impl);
  if (!scope)
    return scope.takeError();
  if (stream)
    return CONV3D_CU(cuMemcpyAsync, toDevice(dst), toDevice(src), bytes,
                     static_cast<CUstream>(stream));
  return CONV3D_CU(cuMemcpy, toDevice(dst), toDevice(src), bytes);
}

Error CudaDriver::memsetD8(void *dst, uint8_t value, size_t count,
                           void *stream) {
  if (count == 0)
    return Error::success();
  const DriverApi &api = impl->api;
  auto scope = ContextScope::enter(*impl);
  if (!scope)
    return scope.takeError();
  if (stream)
    return CONV3D_CU(cuMemsetD8Async, toDevice(dst), (unsigned char)value,
                     count, static_cast<CUstream>(stream));
  return CONV3D_CU(cuMemsetD8, toDevice(dst), (unsigned char)value, count);
}

Error CudaDriver::memsetD16(void *dst, uint16_t value, size_t count,
                            void *stream) {
  if (count == 0)
    return Error::success();
  const DriverApi &api = impl->api;
  auto scope = ContextScope::enter(*impl);
  if (!scope)
    return scope.takeError();
  if (stream)
    return CONV3D_CU(cuMemsetD16Async, toDevice(dst), (unsigned short)value,
                     count, static_cast<CUstream>(stream));
  return CONV3D_CU(cuMemsetD16, toDevice(dst), (unsigned short)value, count);
}

Error CudaDriver::memsetD32(void *dst, uint32_t value, size_t count,
                            void *stream) {
  if (count == 0)
    return Error::success();
  const DriverApi &api = impl->api;
  auto scope = ContextScope::enter(*impl);
  if (!scope)
    return scope.takeError();
  if (stream)
    return CONV3D_CU(cuMemsetD32Async, toDevice(dst), (unsigned)value, count,
                     static_cast<CUstream>(stream));
  return CONV3D_CU(cuMemsetD32, toDevice(dst), (unsigned)value, count);
}

Error CudaDriver::hostRegister(void *ptr, size_t bytes) {
  if (!ptr || bytes == 0)
    return Error::success();
  const DriverApi &api = impl->api;
  auto scope = ContextScope::enter(*impl);
  if (!scope)
    return scope.takeError();
  return tolerate(CONV3D_CU(cuMemHostRegister, ptr, bytes, 0u),
                  CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
}

Error CudaDriver::hostUnregister(void *ptr) {
  if (!ptr)
    return Error::success();
  const DriverApi &api = impl->api;
  auto scope = ContextScope::enter(*impl);
  if (!scope)
    return scope.takeError();
  return CONV3D_CU(cuMemHostUnregister, ptr);
}

Expected<void *> CudaDriver::createStream() {
  const DriverApi &api = impl->api;
  auto scope = ContextScope::enter(*impl);
  if (!scope)
    return scope.takeError();
  CUstream stream = nullptr;
  if (Error err =
          CONV3D_CU(cuStreamCreate, &stream, unsigned(CU_STREAM_NON_BLOCKING)))
    return std::move(err);
  return static_cast<void *>(stream);
}

Error CudaDriver::destroyStream(void *stream) {
  if (!stream)
    return Error::success();
  const DriverApi &api = impl->api;
  auto scope = ContextScope::enter(*impl);
  if (!scope)
    return scope.takeError();
  return CONV3D_CU(cuStreamDestroy, static_cast<CUstream>(stream));
}

Error CudaDriver::synchronize(void *stream) {
  const DriverApi &api = impl->api;
  auto scope = ContextScope::enter(*impl);
  if (!scope)
    return scope.takeError();
  return CONV3D_CU(cuStreamSynchronize, static_cast<CUstream>(stream));
}

Error CudaDriver::waitEvent(void *stream, void *event) {
  const DriverApi &api = impl->api;
  auto scope = ContextScope::enter(*impl);
  if (!scope)
    return scope.takeError();
  return CONV3D_CU(cuStreamWaitEvent, static_cast<CUstream>(stream),
                   static_cast<CUevent>(event), 0u);
}

Expected<void *> CudaDriver::createEvent(bool timing) {
  const DriverApi &api = impl->api;
  auto scope = ContextScope::enter(*impl);
  if (!scope)
    return scope.takeError();
  CUevent event = nullptr;
  unsigned flags = timing ? CU_EVENT_DEFAULT : CU_EVENT_DISABLE_TIMING;
  if (Error err = CONV3D_CU(cuEventCreate, &event, flags))
    return std::move(err);
  return static_cast<void *>(event);
}

Error CudaDriver::recordEvent(void *event, void *stream) {
  const DriverApi &api = impl->api;
  auto scope = ContextScope::enter(*impl);
  if (!scope)
    return scope.takeError();
  return CONV3D_CU(cuEventRecord, static_cast<CUevent>(event),
                   static_cast<CUstream>(stream));
}

Error CudaDriver::synchronizeEvent(void *event) {
  const DriverApi &api = impl->api;
  auto scope = ContextScope::enter(*impl);
  if (!scope)
    return scope.takeError();
  return CONV3D_CU(cuEventSynchronize, static_cast<CUevent>(event));
}

Expected<float> CudaDriver::elapsedMillis(void *start, void *end) {
  const DriverApi &api = impl->api;
  auto scope = ContextScope::enter(*impl);
  if (!scope)
    return scope.takeError();
  float millis = 0;
  if (Error err =
          CONV3D_CU(cuEventElapsedTime, &millis, static_cast<CUevent>(start),
                    static_cast<CUevent>(end)))
    return std::move(err);
  return millis;
}

Error CudaDriver::destroyEvent(void *event) {
  if (!event)
    return Error::success();
  const DriverApi &api = impl->api;
  auto scope = ContextScope::enter(*impl);
  if (!scope)
    return scope.takeError();
  return CONV3D_CU(cuEventDestroy, static_cast<CUevent>(event));
}

//===----------------------------------------------------------------------===//
// Modules and launches
//===----------------------------------------------------------------------===//

Expected<void *> CudaDriver::loadModule(const void *image) {
  if (!image)
    return makeError("loadModule: no image");
  const DriverApi &api = impl->api;
  auto scope = ContextScope::enter(*impl);
  if (!scope)
    return scope.takeError();
  CUmodule module = nullptr;
  if (Error err = CONV3D_CU(cuModuleLoadData, &module, image))
    return std::move(err);
  return static_cast<void *>(module);
}

Expected<void *> CudaDriver::loadModuleJIT(const void *ptx, int optLevel) {
  if (!ptx)
    return makeError("loadModuleJIT: no PTX");
  const DriverApi &api = impl->api;
  auto scope = ContextScope::enter(*impl);
  if (!scope)
    return scope.takeError();
  char log[8192] = {};
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER,
                            CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                            CU_JIT_OPTIMIZATION_LEVEL};
  void *values[] = {
      log, reinterpret_cast<void *>(uintptr_t(sizeof(log) - 1)),
      reinterpret_cast<void *>(uintptr_t(std::clamp(optLevel, 0, 4)))};
  CUmodule module = nullptr;
  if (Error err =
          CONV3D_CU(cuModuleLoadDataEx, &module, ptx, 3u, options, values)) {
    llvm::StringRef jitLog = llvm::StringRef(log).trim();
    if (jitLog.empty())
      return std::move(err);
    return makeError(llvm::toString(std::move(err)) + "; JIT log: " + jitLog);
  }
  return static_cast<void *>(module);
}

Error CudaDriver::unloadModule(void *module) {
  if (!module)
    return Error::success();
  const DriverApi &api = impl->api;
  auto scope = ContextScope::enter(*impl);
  if (!scope)
    return scope.takeError();
  {
    // A later module's functions may reuse the handles.
    std::lock_guard<std::mutex> lock(impl->mutex);
    impl->sharedLimits.clear();
  }
  return CONV3D_CU(cuModuleUnload, static_cast<CUmodule>(module));
}

Expected<void *> CudaDriver::getFunction(void *module, llvm::StringRef name) {
  if (!module)
    return makeError("getFunction(" + name + "): no module");
  const DriverApi &api = impl->api;
  auto scope = ContextScope::enter(*impl);
  if (!scope)
    return scope.takeError();
  CUfunction function = nullptr;
  std::string nameString = name.str();
  if (Error err = CONV3D_CU(cuModuleGetFunction, &function,
                            static_cast<CUmodule>(module), nameString.c_str()))
    return makeError("kernel '" + name +
                     "': " + llvm::toString(std::move(err)));
  return static_cast<void *>(function);
}

namespace {

Error checkDims(llvm::StringRef what, LaunchDims dims) {
  if (dims[0] == 0 || dims[1] == 0 || dims[2] == 0)
    return makeError("launch: " + what + " (" + llvm::Twine(dims[0]) + ", " +
                     llvm::Twine(dims[1]) + ", " + llvm::Twine(dims[2]) +
                     ") is empty");
  return Error::success();
}

/// Static plus dynamic shared memory above the default 48 KiB needs the
/// function's dynamic limit raised first. The static part is not known here
/// (lowered kernels keep a few bytes of it), so every function that asks for
/// dynamic shared memory is raised, once.
Error prepareSharedMemory(CudaDriver::Impl &impl, CUfunction function,
                          uint32_t bytes) {
  if (bytes == 0)
    return Error::success();
  if (bytes > uint32_t(impl.info.maxSharedMemoryPerBlockOptin))
    return makeError("launch: " + llvm::Twine(bytes) +
                     " bytes of dynamic shared memory requested; " +
                     impl.info.name + " allows at most " +
                     llvm::Twine(impl.info.maxSharedMemoryPerBlockOptin) +
                     " per block");
  {
    std::lock_guard<std::mutex> lock(impl.mutex);
    auto it = impl.sharedLimits.find(function);
    if (it != impl.sharedLimits.end() && it->second >= bytes)
      return Error::success();
  }
  const DriverApi &api = impl.api;
  if (Error err = CONV3D_CU(cuFuncSetAttribute, function,
                            CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                            int(bytes)))
    return err;
  std::lock_guard<std::mutex> lock(impl.mutex);
  uint32_t &limit = impl.sharedLimits[function];
  limit = std::max(limit, bytes);
  return Error::success();
}

} // namespace

Error CudaDriver::launch(void *function, LaunchDims grid, LaunchDims block,
                         uint32_t sharedBytes, void *stream, void **params) {
  if (!function)
    return makeError("launch: no function");
  if (Error err = checkDims("grid", grid))
    return err;
  if (Error err = checkDims("block", block))
    return err;
  const DriverApi &api = impl->api;
  auto scope = ContextScope::enter(*impl);
  if (!scope)
    return scope.takeError();
  auto *cuFunction = static_cast<CUfunction>(function);
  if (Error err = prepareSharedMemory(*impl, cuFunction, sharedBytes))
    return err;
  return CONV3D_CU(cuLaunchKernel, cuFunction, grid[0], grid[1], grid[2],
                   block[0], block[1], block[2], sharedBytes,
                   static_cast<CUstream>(stream), params,
                   static_cast<void **>(nullptr));
}

Error CudaDriver::launchCluster(void *function, LaunchDims cluster,
                                LaunchDims grid, LaunchDims block,
                                uint32_t sharedBytes, void *stream,
                                void **params) {
  if (!function)
    return makeError("launch: no function");
  if (Error err = checkDims("cluster", cluster))
    return err;
  if (Error err = checkDims("grid", grid))
    return err;
  if (Error err = checkDims("block", block))
    return err;
  for (int i = 0; i < 3; ++i)
    if (grid[i] % cluster[i] != 0)
      return makeError("launch: grid dimension " + llvm::Twine(i) + " (" +
                       llvm::Twine(grid[i]) +
                       " blocks) is not a multiple of the cluster's (" +
                       llvm::Twine(cluster[i]) + ")");
  const DriverApi &api = impl->api;
  auto scope = ContextScope::enter(*impl);
  if (!scope)
    return scope.takeError();
  auto *cuFunction = static_cast<CUfunction>(function);
  if (Error err = prepareSharedMemory(*impl, cuFunction, sharedBytes))
    return err;
  // Clusters of more than 8 blocks are "non-portable" and must be allowed.
  if (cluster[0] * cluster[1] * cluster[2] > 8)
    if (Error err =
            CONV3D_CU(cuFuncSetAttribute, cuFunction,
                      CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1))
      return err;

  CUlaunchAttribute attribute;
  std::memset(&attribute, 0, sizeof(attribute));
  attribute.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  attribute.value.clusterDim.x = cluster[0];
  attribute.value.clusterDim.y = cluster[1];
  attribute.value.clusterDim.z = cluster[2];
  CUlaunchConfig config;
  std::memset(&config, 0, sizeof(config));
  config.gridDimX = grid[0];
  config.gridDimY = grid[1];
  config.gridDimZ = grid[2];
  config.blockDimX = block[0];
  config.blockDimY = block[1];
  config.blockDimZ = block[2];
  config.sharedMemBytes = sharedBytes;
  config.hStream = static_cast<CUstream>(stream);
  config.attrs = &attribute;
  config.numAttrs = 1;
  return CONV3D_CU(cuLaunchKernelEx, &config, cuFunction, params,
                   static_cast<void **>(nullptr));
}

//===----------------------------------------------------------------------===//
// TMA descriptors
//===----------------------------------------------------------------------===//

static_assert(sizeof(TensorMap) == sizeof(CUtensorMap) &&
                  alignof(TensorMap) >= alignof(CUtensorMap),
              "TensorMap must match CUtensorMap");
static_assert(unsigned(TensorMapDataType::U6x16Align16B) ==
                      CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B &&
                  unsigned(TensorMapDataType::BFloat16) ==
                      CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 &&
                  unsigned(TensorMapInterleave::B32) ==
                      CU_TENSOR_MAP_INTERLEAVE_32B &&
                  unsigned(TensorMapSwizzle::B128Atom64B) ==
                      CU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B &&
                  unsigned(TensorMapSwizzle::B128) ==
                      CU_TENSOR_MAP_SWIZZLE_128B &&
                  unsigned(TensorMapL2Promotion::B256) ==
                      CU_TENSOR_MAP_L2_PROMOTION_L2_256B &&
                  unsigned(TensorMapOobFill::NanRequestZeroFma) ==
                      CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA,
              "TMA enums must match cuda.h");

namespace {

llvm::SmallVector<uint32_t, 5>
elementStridesOrOnes(llvm::ArrayRef<uint32_t> elementStrides, size_t rank) {
  if (elementStrides.empty())
    return llvm::SmallVector<uint32_t, 5>(rank, 1);
  return llvm::SmallVector<uint32_t, 5>(elementStrides);
}

} // namespace

Error CudaDriver::encodeTiled(const TiledTensorMapParams &params,
                              TensorMap &out) {
  if (Error err = verifyTensorMapParams(params))
    return err;
  const DriverApi &api = impl->api;
  auto scope = ContextScope::enter(*impl);
  if (!scope)
    return scope.takeError();
  llvm::SmallVector<uint32_t, 5> elementStrides =
      elementStridesOrOnes(params.elementStrides, params.globalDim.size());
  CUtensorMap map;
  if (Error err =
          CONV3D_CU(cuTensorMapEncodeTiled, &map,
                    static_cast<CUtensorMapDataType>(params.dataType),
                    cuuint32_t(params.globalDim.size()), params.globalAddress,
                    params.globalDim.data(), params.globalStrides.data(),
                    params.boxDim.data(), elementStrides.data(),
                    static_cast<CUtensorMapInterleave>(params.interleave),
                    static_cast<CUtensorMapSwizzle>(params.swizzle),
                    static_cast<CUtensorMapL2promotion>(params.l2Promotion),
                    static_cast<CUtensorMapFloatOOBfill>(params.oobFill)))
    return err;
  std::memcpy(out.opaque.data(), &map, sizeof(map));
  return Error::success();
}

Error CudaDriver::encodeIm2col(const Im2colTensorMapParams &params,
                               TensorMap &out) {
  if (Error err = verifyTensorMapParams(params))
    return err;
  const DriverApi &api = impl->api;
  auto scope = ContextScope::enter(*impl);
  if (!scope)
    return scope.takeError();
  llvm::SmallVector<uint32_t, 5> elementStrides =
      elementStridesOrOnes(params.elementStrides, params.globalDim.size());
  CUtensorMap map;
  if (Error err = CONV3D_CU(
          cuTensorMapEncodeIm2col, &map,
          static_cast<CUtensorMapDataType>(params.dataType),
          cuuint32_t(params.globalDim.size()), params.globalAddress,
          params.globalDim.data(), params.globalStrides.data(),
          params.pixelBoxLowerCorner.data(), params.pixelBoxUpperCorner.data(),
          cuuint32_t(params.channelsPerPixel),
          cuuint32_t(params.pixelsPerColumn), elementStrides.data(),
          static_cast<CUtensorMapInterleave>(params.interleave),
          static_cast<CUtensorMapSwizzle>(params.swizzle),
          static_cast<CUtensorMapL2promotion>(params.l2Promotion),
          static_cast<CUtensorMapFloatOOBfill>(params.oobFill)))
    return err;
  std::memcpy(out.opaque.data(), &map, sizeof(map));
  return Error::success();
}

Expected<TensorMap>
CudaDriver::encodeTiled(const TiledTensorMapParams &params) {
  TensorMap map;
  if (Error err = encodeTiled(params, map))
    return std::move(err);
  return map;
}

Expected<TensorMap>
CudaDriver::encodeIm2col(const Im2colTensorMapParams &params) {
  TensorMap map;
  if (Error err = encodeIm2col(params, map))
    return std::move(err);
  return map;
}

Expected<void *> CudaDriver::uploadTensorMap(const TensorMap &map) {
  const DriverApi &api = impl->api;
  auto scope = ContextScope::enter(*impl);
  if (!scope)
    return scope.takeError();
  std::lock_guard<std::mutex> lock(impl->mutex);
  auto it = impl->tensorMaps.find(map.opaque);
  if (it != impl->tensorMaps.end())
    return reinterpret_cast<void *>(it->second);

  constexpr size_t kSlabBytes = 64 * 1024; // 512 maps
  if (!impl->slab || impl->slabUsed + sizeof(TensorMap) > kSlabBytes) {
    CUdeviceptr slab = 0;
    if (Error err = CONV3D_CU(cuMemAlloc, &slab, kSlabBytes))
      return std::move(err);
    impl->slab = slab;
    impl->slabUsed = 0;
  }
  CUdeviceptr copy = impl->slab + impl->slabUsed;
  // A copy from pageable memory may return before it lands; synchronizing
  // the null stream makes the map visible to kernels on any stream.
  if (Error err =
          CONV3D_CU(cuMemcpyHtoD, copy, map.opaque.data(), sizeof(TensorMap)))
    return std::move(err);
  if (Error err =
          CONV3D_CU(cuStreamSynchronize, static_cast<CUstream>(nullptr)))
    return std::move(err);
  impl->slabUsed += sizeof(TensorMap);
  impl->tensorMaps.emplace(map.opaque, copy);
  return reinterpret_cast<void *>(copy);
}
