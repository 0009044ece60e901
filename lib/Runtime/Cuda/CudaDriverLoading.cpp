//===- CudaDriverLoading.cpp - opening libcuda, choosing the device -------===//
//
// libcuda is never linked: it is opened with dlopen and every function is
// looked up with dlsym, under the versioned name cuda.h's macros give it
// (cuMemAlloc is cuMemAlloc_v2), so a binary built here runs its CPU paths on
// machines without a driver. cuda.h is included for types and prototypes
// only.
//
// This file is the driver's life: opening the library, the device and its
// primary context, the process-wide singleton (created once, its failure
// remembered), the per-thread deferred errors of the mgpu* wrappers, and the
// context guard every other file enters through withContext.
//
//===----------------------------------------------------------------------===//

#include "CudaDriverImpl.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <optional>

using namespace mlir::conv3d;
using namespace mlir::conv3d::cuda;
using llvm::Error;
using llvm::Expected;

//===----------------------------------------------------------------------===//
// Checked calls, CudaError and DeviceInfo
//===----------------------------------------------------------------------===//

Error mlir::conv3d::cuda::makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

Error mlir::conv3d::cuda::checkResult(const DriverApi &api, CUresult result,
                                      const char *call) {
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
// The current-context guard
//===----------------------------------------------------------------------===//

Expected<ContextScope> ContextScope::enter(const CudaDriver::Impl &impl) {
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

//===----------------------------------------------------------------------===//
// Opening the driver
//===----------------------------------------------------------------------===//

namespace {

#define CONV3D_NAME(fn) CONV3D_STR(fn),
// clang-format off
const char *const kDriverSymbols[] = {
    CONV3D_CUDA_REQUIRED_FUNCTIONS(CONV3D_NAME)
    CONV3D_CUDA_OTHER_FUNCTIONS(CONV3D_NAME)};
// clang-format on
#undef CONV3D_NAME

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

Expected<std::unique_ptr<CudaDriver::Impl>> openDriverLibrary(void *library,
                                                              int ordinal);

/// Opens the driver ($CONV3D_CUDA_DRIVER, else libcuda), looks up its
/// functions and retains the primary context of device `ordinal` (-1: from
/// the environment).
Expected<std::unique_ptr<CudaDriver::Impl>> openDriver(int ordinal) {
  // Another implementation of the driver API, such as the PTX emulator's
  // (lib/Emulator, which conv3d-run --emulate selects).
  if (const char *path = std::getenv("CONV3D_CUDA_DRIVER"); path && *path) {
    void *library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!library) {
      const char *reason = dlerror();
      return makeError(
          llvm::Twine("CONV3D_CUDA_DRIVER='") + path +
          "' cannot be opened: " + (reason ? reason : "unknown reason"));
    }
    return openDriverLibrary(library, ordinal);
  }
  void *library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char *reason = dlerror();
    std::string firstReason = reason ? reason : "unknown reason";
    library = dlopen("libcuda.so", RTLD_NOW | RTLD_LOCAL);
    if (!library)
      return makeError("no CUDA driver: libcuda.so.1 not found (" +
                       firstReason + ")");
  }
  return openDriverLibrary(library, ordinal);
}

/// Looks up the driver's functions in the opened `library` and retains the
/// primary context of device `ordinal` (-1: from the environment).
Expected<std::unique_ptr<CudaDriver::Impl>> openDriverLibrary(void *library,
                                                              int ordinal) {
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
  setUpMemoryPool(*impl);
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

// Filled in once by openDriver, so it needs neither the context nor a lock.
Expected<DeviceInfo> CudaDriver::deviceInfo() { return impl->info; }
