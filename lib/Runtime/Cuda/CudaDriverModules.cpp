//===- CudaDriverModules.cpp - modules, functions and kernel launches -----===//
//
// Loading compiled kernels (cubin, fatbin, or PTX for the driver's JIT) and
// launching them, with or without thread block clusters. The launches check
// what the driver would only report as CUDA_ERROR_INVALID_VALUE (empty
// extents, a grid that is not a multiple of the cluster, more dynamic shared
// memory than the device allows) so that the message names the problem, and
// raise a function's dynamic shared memory limit themselves, because MLIR's
// lowered host code passes mgpuLaunchKernel the byte count alone and has no
// step that would raise it.
//
//===----------------------------------------------------------------------===//

#include "CudaDriverImpl.h"

#include <algorithm>
#include <cstring>
#include <string>

using namespace mlir::conv3d;
using namespace mlir::conv3d::cuda;
using llvm::Error;
using llvm::Expected;

//===----------------------------------------------------------------------===//
// Modules and functions
//===----------------------------------------------------------------------===//

Expected<void *> CudaDriver::loadModule(const void *image) {
  if (!image)
    return makeError("loadModule: no image");
  return withContext(*impl, [&](const DriverApi &api) -> Expected<void *> {
    CUmodule module = nullptr;
    if (Error err = CONV3D_CU(cuModuleLoadData, &module, image))
      return std::move(err);
    return static_cast<void *>(module);
  });
}

Expected<void *> CudaDriver::loadModuleJIT(const void *ptx, int optLevel) {
  if (!ptx)
    return makeError("loadModuleJIT: no PTX");
  return withContext(*impl, [&](const DriverApi &api) -> Expected<void *> {
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
  });
}

Error CudaDriver::unloadModule(void *module) {
  if (!module)
    return Error::success();
  return withContext(*impl, [&](const DriverApi &api) {
    {
      // A later module's functions may reuse the handles.
      std::lock_guard<std::mutex> lock(impl->mutex);
      impl->sharedLimits.clear();
      impl->functions.erase(static_cast<CUmodule>(module));
    }
    return CONV3D_CU(cuModuleUnload, static_cast<CUmodule>(module));
  });
}

Expected<void *> CudaDriver::getFunction(void *module, llvm::StringRef name) {
  if (!module)
    return makeError("getFunction(" + name + "): no module");
  // Lowered host code asks on every launch; the answer is fixed until the
  // module is unloaded.
  auto cuModule = static_cast<CUmodule>(module);
  {
    std::lock_guard<std::mutex> lock(impl->mutex);
    auto found = impl->functions.find(cuModule);
    if (found != impl->functions.end())
      if (auto it = found->second.find(name); it != found->second.end())
        return static_cast<void *>(it->second);
  }
  return withContext(*impl, [&](const DriverApi &api) -> Expected<void *> {
    CUfunction function = nullptr;
    std::string nameString = name.str();
    if (Error err = CONV3D_CU(cuModuleGetFunction, &function, cuModule,
                              nameString.c_str()))
      return makeError("kernel '" + name +
                       "': " + llvm::toString(std::move(err)));
    std::lock_guard<std::mutex> lock(impl->mutex);
    impl->functions[cuModule][name] = function;
    return static_cast<void *>(function);
  });
}

//===----------------------------------------------------------------------===//
// Launches
//===----------------------------------------------------------------------===//

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
  return withContext(*impl, [&](const DriverApi &api) {
    auto *cuFunction = static_cast<CUfunction>(function);
    if (Error err = prepareSharedMemory(*impl, cuFunction, sharedBytes))
      return err;
    return CONV3D_CU(cuLaunchKernel, cuFunction, grid[0], grid[1], grid[2],
                     block[0], block[1], block[2], sharedBytes,
                     static_cast<CUstream>(stream), params,
                     static_cast<void **>(nullptr));
  });
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
  return withContext(*impl, [&](const DriverApi &api) {
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
  });
}
