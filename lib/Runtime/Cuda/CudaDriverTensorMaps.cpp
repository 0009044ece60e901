//===- CudaDriverTensorMaps.cpp - TMA descriptors -------------------------===//
//
// Encoding TMA descriptors (tiled and im2col) and keeping device copies of
// them. The parameters are checked by verifyTensorMapParams first
// (TensorMapParams.cpp) because the driver answers a bad one with a bare
// CUDA_ERROR_INVALID_VALUE. The public enums and TensorMap mirror cuda.h's
// without including it, so the static_asserts below hold them to it.
//
//===----------------------------------------------------------------------===//

#include "CudaDriverImpl.h"

#include "llvm/ADT/SmallString.h"

#include <cstring>

using namespace mlir::conv3d;
using namespace mlir::conv3d::cuda;
using llvm::Error;
using llvm::Expected;

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

//===----------------------------------------------------------------------===//
// Encoding
//===----------------------------------------------------------------------===//

Error CudaDriver::encodeTiled(const TiledTensorMapParams &params,
                              TensorMap &out) {
  if (Error err = verifyTensorMapParams(params))
    return err;
  return withContext(*impl, [&](const DriverApi &api) -> Error {
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
  });
}

Error CudaDriver::encodeIm2col(const Im2colTensorMapParams &params,
                               TensorMap &out) {
  if (Error err = verifyTensorMapParams(params))
    return err;
  return withContext(*impl, [&](const DriverApi &api) -> Error {
    llvm::SmallVector<uint32_t, 5> elementStrides =
        elementStridesOrOnes(params.elementStrides, params.globalDim.size());
    CUtensorMap map;
    if (Error err =
            CONV3D_CU(cuTensorMapEncodeIm2col, &map,
                      static_cast<CUtensorMapDataType>(params.dataType),
                      cuuint32_t(params.globalDim.size()), params.globalAddress,
                      params.globalDim.data(), params.globalStrides.data(),
                      params.pixelBoxLowerCorner.data(),
                      params.pixelBoxUpperCorner.data(),
                      cuuint32_t(params.channelsPerPixel),
                      cuuint32_t(params.pixelsPerColumn), elementStrides.data(),
                      static_cast<CUtensorMapInterleave>(params.interleave),
                      static_cast<CUtensorMapSwizzle>(params.swizzle),
                      static_cast<CUtensorMapL2promotion>(params.l2Promotion),
                      static_cast<CUtensorMapFloatOOBfill>(params.oobFill)))
      return err;
    std::memcpy(out.opaque.data(), &map, sizeof(map));
    return Error::success();
  });
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

//===----------------------------------------------------------------------===//
// Device copies
//===----------------------------------------------------------------------===//
//
// Each slot of mapSlots has a device copy and a pinned host mirror that the
// copy is uploaded from (a slot's mirror never changes while an upload from
// it may be in flight: slots are rewritten only after cuCtxSynchronize).
// With the kernel's stream known, the upload is a cuMemcpyHtoDAsync on it:
// ordered before the kernel, no synchronization. An event recorded after it
// lets kernels on other streams wait for it until it is known complete.

namespace {

/// A cache key: the bytes of a map's parameters or content. The hit path
/// (lowered host code asks for its maps on every launch) builds it on the
/// stack: no allocation before the lookup.
using MapKey = llvm::SmallString<512>;

/// The bytes of `values`, appended to a cache key.
template <typename Range> void appendKey(MapKey &key, const Range &range) {
  uint64_t count = std::size(range);
  key.append(reinterpret_cast<const char *>(&count),
             reinterpret_cast<const char *>(&count) + sizeof(count));
  for (auto value : range) {
    int64_t word = int64_t(value);
    key.append(reinterpret_cast<const char *>(&word),
               reinterpret_cast<const char *>(&word) + sizeof(word));
  }
}

void keyOf(const TiledTensorMapParams &params, MapKey &key) {
  key = "tiled";
  appendKey(key,
            std::initializer_list<uint64_t>{
                uint64_t(params.dataType),
                uint64_t(reinterpret_cast<uintptr_t>(params.globalAddress)),
                uint64_t(params.interleave), uint64_t(params.swizzle),
                uint64_t(params.l2Promotion), uint64_t(params.oobFill)});
  appendKey(key, params.globalDim);
  appendKey(key, params.globalStrides);
  appendKey(key, params.boxDim);
  appendKey(key, params.elementStrides);
}

void keyOf(const Im2colTensorMapParams &params, MapKey &key) {
  key = "im2col";
  appendKey(key,
            std::initializer_list<uint64_t>{
                uint64_t(params.dataType),
                uint64_t(reinterpret_cast<uintptr_t>(params.globalAddress)),
                params.channelsPerPixel, params.pixelsPerColumn,
                uint64_t(params.interleave), uint64_t(params.swizzle),
                uint64_t(params.l2Promotion), uint64_t(params.oobFill)});
  appendKey(key, params.globalDim);
  appendKey(key, params.globalStrides);
  appendKey(key, params.pixelBoxLowerCorner);
  appendKey(key, params.pixelBoxUpperCorner);
  appendKey(key, params.elementStrides);
}

void keyOf(const TensorMap &map, MapKey &key) {
  key = "content";
  key.append(reinterpret_cast<const char *>(map.opaque.data()),
             reinterpret_cast<const char *>(map.opaque.data()) +
                 sizeof(map.opaque));
}

void *slotAddress(const CudaDriver::Impl &impl, size_t slot) {
  return reinterpret_cast<void *>(impl.mapDevice + slot * sizeof(TensorMap));
}

/// Makes slot `slot`'s upload visible to a kernel on `stream` (null: a
/// stream not known here, so it waits for it). Called with impl.mutex held.
Error readyFor(CudaDriver::Impl &impl, const DriverApi &api, size_t slot,
               CUstream stream) {
  CudaDriver::Impl::PendingUpload &pending = impl.mapUploads[slot];
  // Even on the upload's own stream: a stream handle may have been destroyed
  // and reused since, so the event is the only reliable order.
  if (!pending.event)
    return Error::success();
  CUresult state =
      api.cuEventQuery ? api.cuEventQuery(pending.event) : CUDA_ERROR_NOT_READY;
  if (state == CUDA_ERROR_NOT_READY) {
    if (stream)
      return CONV3D_CU(cuStreamWaitEvent, stream, pending.event, 0u);
    if (Error err = CONV3D_CU(cuEventSynchronize, pending.event))
      return err;
  } else if (Error err = checkResult(api, state, "cuEventQuery")) {
    return err;
  }
  CUevent event = std::exchange(pending.event, nullptr);
  return CONV3D_CU(cuEventDestroy, event);
}

/// Writes `map` into a new slot and uploads it for `stream`; the slot's
/// address. Called with impl.mutex held.
Expected<size_t> uploadIntoNewSlot(CudaDriver::Impl &impl, const DriverApi &api,
                                   const TensorMap &map, CUstream stream) {
  if (!impl.mapDevice) {
    size_t bytes = impl.mapSlots.capacity() * sizeof(TensorMap);
    CUdeviceptr device = 0;
    if (Error err = CONV3D_CU(cuMemAlloc, &device, bytes))
      return std::move(err);
    void *host = nullptr;
    if (Error err = CONV3D_CU(cuMemAllocHost, &host, bytes))
      return std::move(err);
    impl.mapDevice = device;
    impl.mapHost = static_cast<TensorMap *>(host);
    impl.mapUploads.resize(impl.mapSlots.capacity());
  }
  TensorMapSlots::Allocation allocation = impl.mapSlots.allocate();
  if (allocation.droppedEnd > allocation.droppedBegin)
    impl.mapEpoch.fetch_add(1, std::memory_order_acq_rel);
  if (allocation.reusesRetired) {
    // Kernels enqueued on any stream may still read the retired maps.
    if (Error err = callDriver(api, api.cuCtxSynchronize, "cuCtxSynchronize"))
      return std::move(err);
    for (size_t slot = allocation.droppedBegin; slot < allocation.droppedEnd;
         ++slot)
      if (CUevent event = std::exchange(impl.mapUploads[slot].event, nullptr))
        if (Error err = CONV3D_CU(cuEventDestroy, event))
          return std::move(err);
  }
  size_t slot = allocation.slot;
  impl.mapHost[slot] = map;
  CUdeviceptr device = toDevice(slotAddress(impl, slot));
  if (!stream) {
    // Pinned source: the copy has landed when cuMemcpyHtoD returns.
    if (Error err = CONV3D_CU(cuMemcpyHtoD, device, &impl.mapHost[slot],
                              sizeof(TensorMap)))
      return std::move(err);
    return slot;
  }
  if (Error err = CONV3D_CU(cuMemcpyHtoDAsync, device, &impl.mapHost[slot],
                            sizeof(TensorMap), stream))
    return std::move(err);
  CUevent event = nullptr;
  if (Error err =
          CONV3D_CU(cuEventCreate, &event, unsigned(CU_EVENT_DISABLE_TIMING)))
    return std::move(err);
  impl.mapUploads[slot] = {event, stream};
  if (Error err = CONV3D_CU(cuEventRecord, event, stream))
    return std::move(err);
  return slot;
}

/// Whether `stream` is being captured into a CUDA graph; false for the
/// legacy and per-thread default streams (which cannot be) and when the
/// driver cannot tell.
bool isCapturing(const DriverApi &api, CUstream stream) {
  if (!stream || stream == CU_STREAM_LEGACY || stream == CU_STREAM_PER_THREAD ||
      !api.cuStreamIsCapturing)
    return false;
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  return api.cuStreamIsCapturing(stream, &status) == CUDA_SUCCESS &&
         status == CU_STREAM_CAPTURE_STATUS_ACTIVE;
}

/// The calling thread's stream capture mode set to relaxed for a scope, so
/// that the driver calls of a map lookup (event queries and waits, the
/// slots' first allocation) do not invalidate a capture in progress.
class RelaxedCaptureMode {
public:
  explicit RelaxedCaptureMode(const DriverApi &api) : api(api) {
    swapped = api.cuThreadExchangeStreamCaptureMode &&
              api.cuThreadExchangeStreamCaptureMode(&mode) == CUDA_SUCCESS;
  }
  RelaxedCaptureMode(const RelaxedCaptureMode &) = delete;
  ~RelaxedCaptureMode() {
    if (swapped)
      (void)api.cuThreadExchangeStreamCaptureMode(&mode);
  }

private:
  const DriverApi &api;
  CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
  bool swapped = false;
};

/// The runtime's own non-blocking stream, which maps are uploaded on while
/// the launch's stream is being captured. Called with impl.mutex held.
Expected<CUstream> captureUploadStream(CudaDriver::Impl &impl,
                                       const DriverApi &api) {
  if (!impl.captureUploadStream)
    if (Error err = CONV3D_CU(cuStreamCreate, &impl.captureUploadStream,
                              unsigned(CU_STREAM_NON_BLOCKING)))
      return std::move(err);
  return impl.captureUploadStream;
}

/// The device copy of the map that `encode` produces, found by `key` (the
/// encoding parameters) without encoding when it is held.
template <typename EncodeFn>
Expected<void *> deviceMapFor(CudaDriver::Impl &impl, llvm::StringRef key,
                              void *stream, bool *complete, EncodeFn encode) {
  CUstream cuStream = static_cast<CUstream>(stream);
  bool ignored;
  bool &known = complete ? *complete : ignored;
  known = false;
  {
    // The hit path: no driver call once the upload is known complete.
    std::lock_guard<std::mutex> lock(impl.mutex);
    if (std::optional<size_t> slot = impl.mapSlots.lookup(key))
      if (!impl.mapUploads[*slot].event) {
        known = true;
        return slotAddress(impl, *slot);
      }
  }
  return withContext(impl, [&](const DriverApi &api) -> Expected<void *> {
    std::lock_guard<std::mutex> lock(impl.mutex);
    // While `cuStream` is being captured into a CUDA graph (torch.compile's
    // mode="reduce-overhead", torch.cuda.graph), an upload or an event
    // recorded on it would land in the graph, and querying such an event,
    // or any event in the default capture modes, invalidates the capture.
    // The maps must be in device memory before any replay: during a capture
    // they are uploaded on the runtime's own stream and waited for on the
    // host, with the thread's capture mode relaxed meanwhile.
    bool capturing = isCapturing(api, cuStream);
    std::optional<RelaxedCaptureMode> relaxed;
    CUstream uploadStream = cuStream, waitStream = cuStream;
    if (capturing) {
      relaxed.emplace(api);
      Expected<CUstream> own = captureUploadStream(impl, api);
      if (!own)
        return own.takeError();
      uploadStream = *own;
      waitStream = nullptr; // readyFor waits on the host
    }
    if (std::optional<size_t> slot = impl.mapSlots.lookup(key)) {
      if (Error err = readyFor(impl, api, *slot, waitStream))
        return std::move(err);
      known = !impl.mapUploads[*slot].event;
      return slotAddress(impl, *slot);
    }
    Expected<TensorMap> map = encode();
    if (!map)
      return map.takeError();
    MapKey content;
    keyOf(*map, content);
    std::optional<size_t> slot = impl.mapSlots.lookup(content);
    if (slot) {
      if (Error err = readyFor(impl, api, *slot, waitStream))
        return std::move(err);
    } else {
      Expected<size_t> fresh = uploadIntoNewSlot(impl, api, *map, uploadStream);
      if (!fresh)
        return fresh.takeError();
      slot = *fresh;
      impl.mapSlots.alias(content, *slot);
      if (capturing)
        if (Error err = readyFor(impl, api, *slot, waitStream))
          return std::move(err);
    }
    if (key != content)
      impl.mapSlots.alias(key, *slot);
    known = !impl.mapUploads[*slot].event;
    return slotAddress(impl, *slot);
  });
}

} // namespace

Expected<void *> CudaDriver::uploadTensorMap(const TensorMap &map,
                                             void *stream) {
  MapKey key;
  keyOf(map, key);
  return deviceMapFor(*impl, key, stream, /*complete=*/nullptr,
                      [&]() -> Expected<TensorMap> { return map; });
}

Expected<void *> CudaDriver::deviceTensorMap(const TiledTensorMapParams &params,
                                             void *stream, bool *complete) {
  MapKey key;
  keyOf(params, key);
  return deviceMapFor(*impl, key, stream, complete,
                      [&] { return encodeTiled(params); });
}

Expected<void *>
CudaDriver::deviceTensorMap(const Im2colTensorMapParams &params, void *stream,
                            bool *complete) {
  MapKey key;
  keyOf(params, key);
  return deviceMapFor(*impl, key, stream, complete,
                      [&] { return encodeIm2col(params); });
}

uint64_t CudaDriver::tensorMapEpoch() const {
  return impl->mapEpoch.load(std::memory_order_acquire);
}
