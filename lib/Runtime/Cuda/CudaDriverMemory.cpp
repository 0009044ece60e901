//===- CudaDriverMemory.cpp - memory, streams and events ------------------===//
//
// Device memory, copies and fills, page-locked host memory, streams and
// events. Given a stream, a call uses the stream-ordered (...Async) form of
// the driver function; without one, the synchronous form, followed by a wait
// for the null stream where that form may return early (see `completed`), so
// the work is done on return.
//
// Stream-ordered allocations come from the runtime's own memory pool, which
// keeps what is freed: repeated calls then reuse their temporaries instead
// of mapping pages again each time.
//
//===----------------------------------------------------------------------===//

#include "CudaDriverImpl.h"

using namespace mlir::conv3d;
using namespace mlir::conv3d::cuda;
using llvm::Error;
using llvm::Expected;

namespace {

/// The driver's "synchronous" copies and fills are synchronous only with the
/// null stream: a copy from pageable host memory may return before its DMA
/// lands, and device-to-device copies and fills do not wait at all. The
/// runtime's streams are non-blocking, so nothing orders their work after
/// such a call; an H200 ran kernels that read an output's initial contents
/// before they arrived. Waiting for the null stream makes a call without a
/// stream complete on return.
Error completed(const DriverApi &api, Error issued) {
  if (issued)
    return issued;
  return CONV3D_CU(cuStreamSynchronize, static_cast<CUstream>(nullptr));
}

/// Drops the error if it is a CudaError with result `tolerated`.
Error tolerate(Error error, CUresult tolerated) {
  return llvm::handleErrors(
      std::move(error), [&](std::unique_ptr<CudaError> cudaError) -> Error {
        if (cudaError->getResult() == static_cast<int>(tolerated))
          return Error::success();
        return Error(std::move(cudaError));
      });
}

/// Names the bytes an allocation asked for in its error, which the driver's
/// message does not: "cuMemAlloc_v2 of 1125899906842624 bytes failed:
/// CUDA_ERROR_OUT_OF_MEMORY (out of memory)".
Error namingBytes(Error error, size_t bytes) {
  return llvm::handleErrors(
      std::move(error), [&](std::unique_ptr<CudaError> cudaError) -> Error {
        return llvm::make_error<CudaError>(cudaError->getCall().str() + " of " +
                                               std::to_string(bytes) + " bytes",
                                           cudaError->getResult(),
                                           cudaError->getName().str(),
                                           cudaError->getDescription().str());
      });
}

} // namespace

void mlir::conv3d::cuda::setUpMemoryPool(CudaDriver::Impl &impl) {
  const DriverApi &api = impl.api;
  if (!impl.memoryPools || !api.cuMemPoolCreate || !api.cuMemPoolSetAttribute ||
      !api.cuMemAllocFromPoolAsync)
    return;
  CUmemPoolProps props = {};
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  props.location.id = impl.info.ordinal;
  CUmemoryPool pool = nullptr;
  cuuint64_t keepAll = ~cuuint64_t(0);
  // Without the pool, allocations fall back to the default one.
  if (api.cuMemPoolCreate(&pool, &props) == CUDA_SUCCESS) {
    if (api.cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                                  &keepAll) == CUDA_SUCCESS)
      impl.pool = pool;
  }
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

Expected<void *> CudaDriver::allocate(size_t bytes, void *stream) {
  if (bytes == 0)
    return nullptr;
  return withContext(*impl, [&](const DriverApi &api) -> Expected<void *> {
    CUdeviceptr ptr = 0;
    if (stream && impl->memoryPools) {
      if (Error err = impl->pool
                          ? CONV3D_CU(cuMemAllocFromPoolAsync, &ptr, bytes,
                                      impl->pool, static_cast<CUstream>(stream))
                          : CONV3D_CU(cuMemAllocAsync, &ptr, bytes,
                                      static_cast<CUstream>(stream)))
        return namingBytes(std::move(err), bytes);
      std::lock_guard<std::mutex> lock(impl->mutex);
      impl->streamOrdered.insert(ptr);
    } else if (Error err = CONV3D_CU(cuMemAlloc, &ptr, bytes)) {
      return namingBytes(std::move(err), bytes);
    }
    return reinterpret_cast<void *>(ptr);
  });
}

Expected<CudaDriver::PoolMemory> CudaDriver::poolMemory(bool resetHigh) {
  return withContext(*impl, [&](const DriverApi &api) -> Expected<PoolMemory> {
    if (!impl->pool)
      return llvm::createStringError(
          "the CUDA runtime allocates without a memory pool of its own on "
          "this device (%s): there is no pool to report",
          impl->memoryPools ? "creating one failed" : "no memory pools");
    if (!api.cuMemPoolGetAttribute)
      return llvm::createStringError(
          "the CUDA driver has no cuMemPoolGetAttribute");
    PoolMemory memory;
    for (auto [attribute, field] :
         {std::pair{CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &memory.reserved},
          std::pair{CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &memory.used},
          std::pair{CU_MEMPOOL_ATTR_USED_MEM_HIGH, &memory.usedHigh}}) {
      cuuint64_t value = 0;
      if (Error err =
              CONV3D_CU(cuMemPoolGetAttribute, impl->pool, attribute, &value))
        return std::move(err);
      *field = value;
    }
    // Graph memory: reported where the driver has the attributes (CUDA
    // 11.4); a driver without them leaves graphReported false rather than
    // failing the call.
    if (api.cuDeviceGetGraphMemAttribute && api.cuDeviceSetGraphMemAttribute) {
      cuuint64_t used = 0, high = 0;
      if (api.cuDeviceGetGraphMemAttribute(impl->device,
                                           CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT,
                                           &used) == CUDA_SUCCESS &&
          api.cuDeviceGetGraphMemAttribute(impl->device,
                                           CU_GRAPH_MEM_ATTR_USED_MEM_HIGH,
                                           &high) == CUDA_SUCCESS) {
        memory.graphReported = true;
        memory.graphUsed = used;
        memory.graphUsedHigh = high;
      }
    }
    if (resetHigh) {
      // The driver takes only zero, and then reports the current use.
      cuuint64_t zero = 0;
      if (Error err = CONV3D_CU(cuMemPoolSetAttribute, impl->pool,
                                CU_MEMPOOL_ATTR_USED_MEM_HIGH, &zero))
        return std::move(err);
      if (memory.graphReported)
        if (Error err = CONV3D_CU(cuDeviceSetGraphMemAttribute, impl->device,
                                  CU_GRAPH_MEM_ATTR_USED_MEM_HIGH, &zero))
          return std::move(err);
    }
    return memory;
  });
}

Expected<void *> CudaDriver::allocateManaged(size_t bytes) {
  if (bytes == 0)
    return nullptr;
  return withContext(*impl, [&](const DriverApi &api) -> Expected<void *> {
    CUdeviceptr ptr = 0;
    if (Error err = CONV3D_CU(cuMemAllocManaged, &ptr, bytes,
                              unsigned(CU_MEM_ATTACH_GLOBAL)))
      return namingBytes(std::move(err), bytes);
    return reinterpret_cast<void *>(ptr);
  });
}

Error CudaDriver::free(void *ptr, void *stream) {
  if (!ptr)
    return Error::success();
  return withContext(*impl, [&](const DriverApi &api) {
    bool streamOrdered;
    {
      std::lock_guard<std::mutex> lock(impl->mutex);
      streamOrdered = impl->streamOrdered.erase(toDevice(ptr));
    }
    if (streamOrdered)
      return CONV3D_CU(cuMemFreeAsync, toDevice(ptr),
                       static_cast<CUstream>(stream));
    return CONV3D_CU(cuMemFree, toDevice(ptr));
  });
}

Error CudaDriver::copyToDevice(void *dst, const void *src, size_t bytes,
                               void *stream) {
  if (bytes == 0)
    return Error::success();
  return withContext(*impl, [&](const DriverApi &api) {
    if (stream)
      return CONV3D_CU(cuMemcpyHtoDAsync, toDevice(dst), src, bytes,
                       static_cast<CUstream>(stream));
    return completed(api, CONV3D_CU(cuMemcpyHtoD, toDevice(dst), src, bytes));
  });
}

Error CudaDriver::copyToHost(void *dst, const void *src, size_t bytes,
                             void *stream) {
  if (bytes == 0)
    return Error::success();
  return withContext(*impl, [&](const DriverApi &api) {
    if (stream)
      return CONV3D_CU(cuMemcpyDtoHAsync, dst, toDevice(src), bytes,
                       static_cast<CUstream>(stream));
    // cuMemcpyDtoH returns once the copy has landed: no wait to add.
    return CONV3D_CU(cuMemcpyDtoH, dst, toDevice(src), bytes);
  });
}

Error CudaDriver::copy(void *dst, const void *src, size_t bytes, void *stream) {
  if (bytes == 0)
    return Error::success();
  return withContext(*impl, [&](const DriverApi &api) {
    if (stream)
      return CONV3D_CU(cuMemcpyAsync, toDevice(dst), toDevice(src), bytes,
                       static_cast<CUstream>(stream));
    return completed(api,
                     CONV3D_CU(cuMemcpy, toDevice(dst), toDevice(src), bytes));
  });
}

Error CudaDriver::memsetD8(void *dst, uint8_t value, size_t count,
                           void *stream) {
  if (count == 0)
    return Error::success();
  return withContext(*impl, [&](const DriverApi &api) {
    if (stream)
      return CONV3D_CU(cuMemsetD8Async, toDevice(dst), (unsigned char)value,
                       count, static_cast<CUstream>(stream));
    return completed(
        api, CONV3D_CU(cuMemsetD8, toDevice(dst), (unsigned char)value, count));
  });
}

Error CudaDriver::memsetD16(void *dst, uint16_t value, size_t count,
                            void *stream) {
  if (count == 0)
    return Error::success();
  return withContext(*impl, [&](const DriverApi &api) {
    if (stream)
      return CONV3D_CU(cuMemsetD16Async, toDevice(dst), (unsigned short)value,
                       count, static_cast<CUstream>(stream));
    return completed(api, CONV3D_CU(cuMemsetD16, toDevice(dst),
                                    (unsigned short)value, count));
  });
}

Error CudaDriver::memsetD32(void *dst, uint32_t value, size_t count,
                            void *stream) {
  if (count == 0)
    return Error::success();
  return withContext(*impl, [&](const DriverApi &api) {
    if (stream)
      return CONV3D_CU(cuMemsetD32Async, toDevice(dst), (unsigned)value, count,
                       static_cast<CUstream>(stream));
    return completed(
        api, CONV3D_CU(cuMemsetD32, toDevice(dst), (unsigned)value, count));
  });
}

Error CudaDriver::hostRegister(void *ptr, size_t bytes) {
  if (!ptr || bytes == 0)
    return Error::success();
  return withContext(*impl, [&](const DriverApi &api) {
    return tolerate(CONV3D_CU(cuMemHostRegister, ptr, bytes, 0u),
                    CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
  });
}

Error CudaDriver::hostUnregister(void *ptr) {
  if (!ptr)
    return Error::success();
  return withContext(*impl, [&](const DriverApi &api) {
    return CONV3D_CU(cuMemHostUnregister, ptr);
  });
}

//===----------------------------------------------------------------------===//
// Streams and events
//===----------------------------------------------------------------------===//

Expected<void *> CudaDriver::createStream() {
  return withContext(*impl, [&](const DriverApi &api) -> Expected<void *> {
    CUstream stream = nullptr;
    if (Error err = CONV3D_CU(cuStreamCreate, &stream,
                              unsigned(CU_STREAM_NON_BLOCKING)))
      return std::move(err);
    return static_cast<void *>(stream);
  });
}

Error CudaDriver::destroyStream(void *stream) {
  if (!stream)
    return Error::success();
  return withContext(*impl, [&](const DriverApi &api) {
    return CONV3D_CU(cuStreamDestroy, static_cast<CUstream>(stream));
  });
}

Error CudaDriver::synchronize(void *stream) {
  return withContext(*impl, [&](const DriverApi &api) {
    return CONV3D_CU(cuStreamSynchronize, static_cast<CUstream>(stream));
  });
}

Error CudaDriver::waitEvent(void *stream, void *event) {
  return withContext(*impl, [&](const DriverApi &api) {
    return CONV3D_CU(cuStreamWaitEvent, static_cast<CUstream>(stream),
                     static_cast<CUevent>(event), 0u);
  });
}

Expected<void *> CudaDriver::createEvent(bool timing) {
  return withContext(*impl, [&](const DriverApi &api) -> Expected<void *> {
    CUevent event = nullptr;
    unsigned flags = timing ? CU_EVENT_DEFAULT : CU_EVENT_DISABLE_TIMING;
    if (Error err = CONV3D_CU(cuEventCreate, &event, flags))
      return std::move(err);
    return static_cast<void *>(event);
  });
}

Error CudaDriver::recordEvent(void *event, void *stream) {
  return withContext(*impl, [&](const DriverApi &api) {
    return CONV3D_CU(cuEventRecord, static_cast<CUevent>(event),
                     static_cast<CUstream>(stream));
  });
}

Error CudaDriver::synchronizeEvent(void *event) {
  return withContext(*impl, [&](const DriverApi &api) {
    return CONV3D_CU(cuEventSynchronize, static_cast<CUevent>(event));
  });
}

Expected<float> CudaDriver::elapsedMillis(void *start, void *end) {
  return withContext(*impl, [&](const DriverApi &api) -> Expected<float> {
    float millis = 0;
    if (Error err =
            CONV3D_CU(cuEventElapsedTime, &millis, static_cast<CUevent>(start),
                      static_cast<CUevent>(end)))
      return std::move(err);
    return millis;
  });
}

Error CudaDriver::destroyEvent(void *event) {
  if (!event)
    return Error::success();
  return withContext(*impl, [&](const DriverApi &api) {
    return CONV3D_CU(cuEventDestroy, static_cast<CUevent>(event));
  });
}
