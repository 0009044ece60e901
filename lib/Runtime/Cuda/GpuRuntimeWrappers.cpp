//===- GpuRuntimeWrappers.cpp - the mgpu* C functions of lowered code -----===//
//
// MLIR's gpu-to-llvm and nvgpu-to-nvvm lowerings turn GPU operations into
// calls of these functions (signatures as MLIR 22 declares them). They are
// thin shells over CudaDriver. They cannot return errors, so a failure is
// recorded as the calling thread's deferred error (the first one wins) and
// the function returns null or does nothing; while an error is pending,
// launches, copies, memsets and allocations are skipped, so that nothing
// runs on the results of a failed step. Nothing here aborts.
//
//===----------------------------------------------------------------------===//

#include "conv3d/Runtime/CudaDriver.h"
#include "conv3d/Runtime/TensorMapMemo.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Twine.h"

#include <atomic>
#include <cstring>
#include <limits>

using namespace mlir::conv3d;
using llvm::Error;
using llvm::Expected;

namespace {

/// The stream conv3dSetCurrentStream lends to the calling thread.
thread_local void *currentStream = nullptr;

void defer(const char *wrapper, Error error) {
  if (!error)
    return;
  if (CudaDriver::hasDeferredError()) {
    llvm::consumeError(std::move(error));
    return;
  }
  CudaDriver::deferError(llvm::createStringError(
      llvm::inconvertibleErrorCode(),
      llvm::Twine(wrapper) + ": " + llvm::toString(std::move(error))));
}

void defer(const char *wrapper, const llvm::Twine &message) {
  defer(wrapper,
        llvm::createStringError(llvm::inconvertibleErrorCode(), message));
}

/// The driver, or null after recording why there is none.
CudaDriver *getDriver(const char *wrapper) {
  Expected<CudaDriver &> driver = CudaDriver::get();
  if (driver)
    return &*driver;
  defer(wrapper, driver.takeError());
  return nullptr;
}

/// The driver for a wrapper that does work, or null: after a failed call of
/// this thread (its error stands and the work is skipped) or when there is
/// no driver.
CudaDriver *activeDriver(const char *wrapper) {
  if (CudaDriver::hasDeferredError())
    return nullptr;
  return getDriver(wrapper);
}

template <typename T>
T valueOr(const char *wrapper, Expected<T> value, T fallback) {
  if (value)
    return *value;
  defer(wrapper, value.takeError());
  return fallback;
}

/// Grid, block and cluster extents arrive as MLIR index values.
bool toDims(const char *wrapper, const char *what, int64_t x, int64_t y,
            int64_t z, LaunchDims &dims) {
  constexpr int64_t kMax = std::numeric_limits<uint32_t>::max();
  for (int64_t value : {x, y, z}) {
    if (value < 1 || value > kMax) {
      defer(wrapper, llvm::Twine(what) + " (" + llvm::Twine(x) + ", " +
                         llvm::Twine(y) + ", " + llvm::Twine(z) +
                         ") is out of range");
      return false;
    }
  }
  dims = {uint32_t(x), uint32_t(y), uint32_t(z)};
  return true;
}

/// A ranked memref descriptor as MLIR lays it out: {allocated, aligned,
/// offset, sizes[rank], strides[rank]} (StridedMemRefType).
struct MemRefView {
  char *aligned;
  int64_t offset;
  llvm::ArrayRef<int64_t> sizes;
  llvm::ArrayRef<int64_t> strides;
};

MemRefView viewMemRef(int64_t rank, void *descriptor) {
  auto *pointers = static_cast<char **>(descriptor);
  auto *words = reinterpret_cast<int64_t *>(pointers + 2);
  return {pointers[1], words[0], llvm::ArrayRef<int64_t>(words + 1, rank),
          llvm::ArrayRef<int64_t>(words + 1 + rank, rank)};
}

/// The bytes a memref's elements span: its lowest element's address and the
/// byte count up to and including its highest; 0 bytes when it is empty.
std::pair<char *, uint64_t> memRefExtent(int64_t rank, void *descriptor,
                                         int64_t elementSizeBytes) {
  MemRefView view = viewMemRef(rank, descriptor);
  int64_t low = view.offset, high = view.offset;
  for (int64_t i = 0; i < rank; ++i) {
    if (view.sizes[i] == 0)
      return {nullptr, 0};
    int64_t reach = (view.sizes[i] - 1) * view.strides[i];
    (reach < 0 ? low : high) += reach;
  }
  return {view.aligned + low * elementSizeBytes,
          uint64_t(high - low + 1) * uint64_t(elementSizeBytes)};
}

} // namespace

//===----------------------------------------------------------------------===//
// The borrowed stream
//===----------------------------------------------------------------------===//

extern "C" void conv3dSetCurrentStream(void *stream) { currentStream = stream; }

extern "C" void *conv3dGetCurrentStream() { return currentStream; }

ScopedCurrentStream::ScopedCurrentStream(void *stream)
    : previous(currentStream) {
  currentStream = stream;
}

ScopedCurrentStream::~ScopedCurrentStream() { currentStream = previous; }

//===----------------------------------------------------------------------===//
// Modules and launches
//===----------------------------------------------------------------------===//

extern "C" void *mgpuModuleLoad(void *data, int64_t /*sizeBytes*/) {
  const char *self = "mgpuModuleLoad";
  CudaDriver *driver = activeDriver(self);
  if (!driver)
    return nullptr;
  return valueOr<void *>(self, driver->loadModule(data), nullptr);
}

extern "C" void *mgpuModuleLoadJIT(void *data, int optLevel) {
  const char *self = "mgpuModuleLoadJIT";
  CudaDriver *driver = activeDriver(self);
  if (!driver)
    return nullptr;
  return valueOr<void *>(self, driver->loadModuleJIT(data, optLevel), nullptr);
}

extern "C" void mgpuModuleUnload(void *module) {
  const char *self = "mgpuModuleUnload";
  if (!module)
    return;
  if (CudaDriver *driver = getDriver(self))
    defer(self, driver->unloadModule(module));
}

extern "C" void *mgpuModuleGetFunction(void *module, const char *name) {
  const char *self = "mgpuModuleGetFunction";
  CudaDriver *driver = activeDriver(self);
  if (!driver)
    return nullptr;
  if (!module) {
    defer(self, llvm::Twine("no module for kernel '") + (name ? name : "") +
                    "' (loading it failed?)");
    return nullptr;
  }
  return valueOr<void *>(self, driver->getFunction(module, name ? name : ""),
                         nullptr);
}

extern "C" void mgpuLaunchKernel(void *function, int64_t gridX, int64_t gridY,
                                 int64_t gridZ, int64_t blockX, int64_t blockY,
                                 int64_t blockZ, int32_t smem, void *stream,
                                 void **params, void **extra,
                                 int64_t /*paramsCount*/) {
  const char *self = "mgpuLaunchKernel";
  CudaDriver *driver = activeDriver(self);
  if (!driver)
    return;
  LaunchDims grid, block;
  if (!function)
    return defer(self, "no function (looking it up failed?)");
  if (extra)
    return defer(self, "'extra' launch arguments are not supported");
  if (smem < 0)
    return defer(self,
                 "negative dynamic shared memory size " + llvm::Twine(smem));
  if (!toDims(self, "grid", gridX, gridY, gridZ, grid) ||
      !toDims(self, "block", blockX, blockY, blockZ, block))
    return;
  defer(self,
        driver->launch(function, grid, block, uint32_t(smem), stream, params));
}

extern "C" void mgpuLaunchClusterKernel(
    void *function, int64_t clusterX, int64_t clusterY, int64_t clusterZ,
    int64_t gridX, int64_t gridY, int64_t gridZ, int64_t blockX, int64_t blockY,
    int64_t blockZ, int32_t smem, void *stream, void **params, void **extra) {
  const char *self = "mgpuLaunchClusterKernel";
  CudaDriver *driver = activeDriver(self);
  if (!driver)
    return;
  LaunchDims cluster, grid, block;
  if (!function)
    return defer(self, "no function (looking it up failed?)");
  if (extra)
    return defer(self, "'extra' launch arguments are not supported");
  if (smem < 0)
    return defer(self,
                 "negative dynamic shared memory size " + llvm::Twine(smem));
  if (!toDims(self, "cluster", clusterX, clusterY, clusterZ, cluster) ||
      !toDims(self, "grid", gridX, gridY, gridZ, grid) ||
      !toDims(self, "block", blockX, blockY, blockZ, block))
    return;
  defer(self, driver->launchCluster(function, cluster, grid, block,
                                    uint32_t(smem), stream, params));
}

//===----------------------------------------------------------------------===//
// Streams and events
//===----------------------------------------------------------------------===//

extern "C" void *mgpuStreamCreate() {
  const char *self = "mgpuStreamCreate";
  if (currentStream)
    return currentStream;
  CudaDriver *driver = activeDriver(self);
  if (!driver)
    return nullptr;
  return valueOr<void *>(self, driver->createStream(), nullptr);
}

extern "C" void mgpuStreamDestroy(void *stream) {
  const char *self = "mgpuStreamDestroy";
  if (!stream || stream == currentStream)
    return;
  if (CudaDriver *driver = getDriver(self))
    defer(self, driver->destroyStream(stream));
}

extern "C" void mgpuStreamSynchronize(void *stream) {
  const char *self = "mgpuStreamSynchronize";
  if (stream && stream == currentStream)
    return;
  if (CudaDriver *driver = getDriver(self))
    defer(self, driver->synchronize(stream));
}

extern "C" void mgpuStreamWaitEvent(void *stream, void *event) {
  const char *self = "mgpuStreamWaitEvent";
  if (!event)
    return defer(self, "no event");
  if (CudaDriver *driver = getDriver(self))
    defer(self, driver->waitEvent(stream, event));
}

extern "C" void *mgpuEventCreate() {
  const char *self = "mgpuEventCreate";
  CudaDriver *driver = activeDriver(self);
  if (!driver)
    return nullptr;
  return valueOr<void *>(self, driver->createEvent(/*timing=*/false), nullptr);
}

extern "C" void mgpuEventDestroy(void *event) {
  const char *self = "mgpuEventDestroy";
  if (!event)
    return;
  if (CudaDriver *driver = getDriver(self))
    defer(self, driver->destroyEvent(event));
}

extern "C" void mgpuEventSynchronize(void *event) {
  const char *self = "mgpuEventSynchronize";
  if (!event)
    return defer(self, "no event");
  if (CudaDriver *driver = getDriver(self))
    defer(self, driver->synchronizeEvent(event));
}

extern "C" void mgpuEventRecord(void *event, void *stream) {
  const char *self = "mgpuEventRecord";
  if (!event)
    return defer(self, "no event");
  if (CudaDriver *driver = getDriver(self))
    defer(self, driver->recordEvent(event, stream));
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

extern "C" void *mgpuMemAlloc(uint64_t sizeBytes, void *stream,
                              bool isHostShared) {
  const char *self = "mgpuMemAlloc";
  CudaDriver *driver = activeDriver(self);
  if (!driver || sizeBytes == 0)
    return nullptr;
  // The lowered code passes an i64: above its range, a size computation
  // went negative.
  if (sizeBytes > uint64_t(std::numeric_limits<int64_t>::max())) {
    defer(self, "a request for " + llvm::Twine(sizeBytes) +
                    " bytes (a negative size)");
    return nullptr;
  }
  if (isHostShared)
    return valueOr<void *>(self, driver->allocateManaged(sizeBytes), nullptr);
  return valueOr<void *>(self, driver->allocate(sizeBytes, stream), nullptr);
}

extern "C" void mgpuMemFree(void *ptr, void *stream) {
  const char *self = "mgpuMemFree";
  if (!ptr)
    return;
  if (CudaDriver *driver = getDriver(self))
    defer(self, driver->free(ptr, stream));
}

extern "C" void mgpuMemcpy(void *dst, void *src, size_t sizeBytes,
                           void *stream) {
  const char *self = "mgpuMemcpy";
  if (CudaDriver *driver = activeDriver(self))
    defer(self, driver->copy(dst, src, sizeBytes, stream));
}

extern "C" void mgpuMemset32(void *dst, unsigned int value, size_t count,
                             void *stream) {
  const char *self = "mgpuMemset32";
  if (CudaDriver *driver = activeDriver(self))
    defer(self, driver->memsetD32(dst, value, count, stream));
}

extern "C" void mgpuMemset16(void *dst, unsigned short value, size_t count,
                             void *stream) {
  const char *self = "mgpuMemset16";
  if (CudaDriver *driver = activeDriver(self))
    defer(self, driver->memsetD16(dst, value, count, stream));
}

extern "C" void mgpuMemHostRegister(void *ptr, uint64_t sizeBytes) {
  const char *self = "mgpuMemHostRegister";
  if (CudaDriver *driver = activeDriver(self))
    defer(self, driver->hostRegister(ptr, sizeBytes));
}

extern "C" void mgpuMemHostRegisterMemRef(int64_t rank, void *descriptor,
                                          int64_t elementSizeBytes) {
  const char *self = "mgpuMemHostRegisterMemRef";
  CudaDriver *driver = activeDriver(self);
  if (!driver)
    return;
  if (!descriptor || rank < 0 || elementSizeBytes <= 0)
    return defer(self, "bad memref (rank " + llvm::Twine(rank) +
                           ", element size " + llvm::Twine(elementSizeBytes) +
                           ")");
  auto [ptr, bytes] = memRefExtent(rank, descriptor, elementSizeBytes);
  defer(self, driver->hostRegister(ptr, bytes));
}

extern "C" void mgpuMemHostUnregister(void *ptr) {
  const char *self = "mgpuMemHostUnregister";
  if (!ptr)
    return;
  if (CudaDriver *driver = getDriver(self))
    defer(self, driver->hostUnregister(ptr));
}

extern "C" void mgpuMemHostUnregisterMemRef(int64_t rank, void *descriptor,
                                            int64_t elementSizeBytes) {
  const char *self = "mgpuMemHostUnregisterMemRef";
  if (!descriptor || rank < 0 || elementSizeBytes <= 0)
    return defer(self, "bad memref (rank " + llvm::Twine(rank) +
                           ", element size " + llvm::Twine(elementSizeBytes) +
                           ")");
  auto [ptr, bytes] = memRefExtent(rank, descriptor, elementSizeBytes);
  if (bytes == 0)
    return;
  if (CudaDriver *driver = getDriver(self))
    defer(self, driver->hostUnregister(ptr));
}

//===----------------------------------------------------------------------===//
// TMA and devices
//===----------------------------------------------------------------------===//

extern "C" void *mgpuTensorMapEncodeTiledMemref(
    int64_t rank, void *descriptor, int64_t dataType, int64_t interleave,
    int64_t swizzle, int64_t l2Promotion, int64_t oobFill, int64_t *boxDims) {
  const char *self = "mgpuTensorMapEncodeTiledMemref";
  CudaDriver *driver = activeDriver(self);
  if (!driver)
    return nullptr;
  if (!descriptor || !boxDims || rank < 1 || rank > 5) {
    defer(self, "bad memref or box (rank " + llvm::Twine(rank) + ")");
    return nullptr;
  }
  if (dataType < 0 || dataType > int64_t(TensorMapDataType::U6x16Align16B) ||
      interleave < 0 || swizzle < 0 || l2Promotion < 0 || oobFill < 0) {
    defer(self, "unknown data type or layout enum");
    return nullptr;
  }
  TiledTensorMapParams params;
  params.dataType = TensorMapDataType(dataType);
  params.interleave = TensorMapInterleave(interleave);
  params.swizzle = TensorMapSwizzle(swizzle);
  params.l2Promotion = TensorMapL2Promotion(l2Promotion);
  params.oobFill = TensorMapOobFill(oobFill);
  unsigned bits = getTensorMapElementBits(params.dataType);
  if (bits % 8 != 0) {
    defer(self, "packed sub-byte data types need an explicit descriptor");
    return nullptr;
  }
  int64_t elementBytes = bits / 8;

  // The memref lists dimensions outermost first, the driver innermost first.
  MemRefView view = viewMemRef(rank, descriptor);
  if (view.strides[rank - 1] != 1) {
    defer(self, "the memref's innermost dimension has stride " +
                    llvm::Twine(view.strides[rank - 1]) +
                    "; TMA needs it contiguous");
    return nullptr;
  }
  params.globalAddress = view.aligned + view.offset * elementBytes;
  for (int64_t i = rank - 1; i >= 0; --i) {
    params.globalDim.push_back(uint64_t(view.sizes[i]));
    params.boxDim.push_back(uint32_t(boxDims[i]));
    if (i != rank - 1)
      params.globalStrides.push_back(uint64_t(view.strides[i] * elementBytes));
  }
  return valueOr<void *>(self, driver->deviceTensorMap(params, currentStream),
                         nullptr);
}

/// The device copy of the map `params` encode (the driver's cache, keyed by
/// the parameters; uploaded on the borrowed stream the kernel is launched
/// on), or records the error and returns 0: host code skips the launch on
/// 0, so a refused descriptor is an error from the run, never a kernel
/// fault.
template <typename Params>
static int64_t deviceMapOrDefer(const char *self, CudaDriver &driver,
                                const Params &params, bool *complete) {
  return reinterpret_cast<int64_t>(valueOr<void *>(
      self, driver.deviceTensorMap(params, currentStream, complete), nullptr));
}

/// The calling thread's recent descriptors, by the raw arguments of the
/// conv3dTma* call that asked (its first word names the function).
static thread_local TensorMapMemo mapMemo;

/// What `find(complete)` answers for the conv3dTma* call with arguments
/// `words`, remembered when the map's upload is known complete: lowered host
/// code asks for the same maps on every launch, and a repeated call is
/// answered without building parameters or a key, or taking the driver's
/// lock. As in the other wrappers, nothing while an error is pending.
template <typename FindFn>
static int64_t memoizedMap(const char *self, llvm::ArrayRef<int64_t> words,
                           FindFn find) {
  CudaDriver *driver = activeDriver(self);
  if (!driver)
    return 0;
  uint64_t epoch = driver->tensorMapEpoch();
  if (void *map = mapMemo.lookup(words, epoch))
    return reinterpret_cast<int64_t>(map);
  bool complete = false;
  int64_t map = find(*driver, &complete);
  if (map && complete)
    mapMemo.remember(words, epoch, reinterpret_cast<void *>(map));
  return map;
}

/// Tags of the conv3dTma* functions in their memo keys.
enum : int64_t {
  kIm2colTag = 1,
  kIm2colSliceTag,
  kTiledTag,
  kTiled5dTag,
};

/// An im2col map of `dims` (C, the spatial dimensions innermost first, then
/// the images) with element strides `strides` of dimensions 1 and up, pixel
/// box corners and traversal strides of the spatial dimensions.
static int64_t
im2colMapOrDefer(const char *self, CudaDriver &driver, bool *complete,
                 int64_t address, int64_t dataType,
                 llvm::ArrayRef<int64_t> dims, llvm::ArrayRef<int64_t> strides,
                 llvm::ArrayRef<int64_t> lower, llvm::ArrayRef<int64_t> upper,
                 llvm::ArrayRef<int64_t> traversal, int64_t channelsPerPixel,
                 int64_t pixelsPerColumn, int64_t swizzle) {
  Im2colTensorMapParams params;
  params.dataType = TensorMapDataType(dataType);
  params.globalAddress = reinterpret_cast<void *>(address);
  unsigned bytes = getTensorMapElementBits(params.dataType) / 8;
  for (int64_t dim : dims)
    params.globalDim.push_back(uint64_t(dim));
  for (int64_t stride : strides)
    params.globalStrides.push_back(uint64_t(stride * bytes));
  for (auto [lo, hi] : llvm::zip(lower, upper)) {
    params.pixelBoxLowerCorner.push_back(int(lo));
    params.pixelBoxUpperCorner.push_back(int(hi));
  }
  params.channelsPerPixel = uint32_t(channelsPerPixel);
  params.pixelsPerColumn = uint32_t(pixelsPerColumn);
  params.elementStrides = {1};
  for (int64_t stride : traversal)
    params.elementStrides.push_back(uint32_t(stride));
  params.elementStrides.push_back(1);
  params.swizzle = TensorMapSwizzle(swizzle);
  return deviceMapOrDefer(self, driver, params, complete);
}

extern "C" int64_t conv3dTmaIm2colDescriptor(
    int64_t address, int64_t dataType, int64_t n, int64_t d, int64_t h,
    int64_t w, int64_t c, int64_t pitchN, int64_t pitchD, int64_t pitchH,
    int64_t pitchW, int64_t lowerD, int64_t lowerH, int64_t lowerW,
    int64_t upperD, int64_t upperH, int64_t upperW, int64_t strideD,
    int64_t strideH, int64_t strideW, int64_t channelsPerPixel,
    int64_t pixelsPerColumn, int64_t swizzle) {
  const char *self = "conv3dTmaIm2colDescriptor";
  int64_t words[] = {kIm2colTag,
                     address,
                     dataType,
                     n,
                     d,
                     h,
                     w,
                     c,
                     pitchN,
                     pitchD,
                     pitchH,
                     pitchW,
                     lowerD,
                     lowerH,
                     lowerW,
                     upperD,
                     upperH,
                     upperW,
                     strideD,
                     strideH,
                     strideW,
                     channelsPerPixel,
                     pixelsPerColumn,
                     swizzle};
  return memoizedMap(self, words, [&](CudaDriver &driver, bool *complete) {
    // NDHWC with contiguous channels.
    return im2colMapOrDefer(self, driver, complete, address, dataType,
                            {c, w, h, d, n}, {pitchW, pitchH, pitchD, pitchN},
                            {lowerW, lowerH, lowerD}, {upperW, upperH, upperD},
                            {strideW, strideH, strideD}, channelsPerPixel,
                            pixelsPerColumn, swizzle);
  });
}

extern "C" int64_t conv3dTmaIm2colSliceDescriptor(
    int64_t address, int64_t dataType, int64_t slices, int64_t h, int64_t w,
    int64_t c, int64_t pitchSlice, int64_t pitchH, int64_t pitchW,
    int64_t lowerH, int64_t lowerW, int64_t upperH, int64_t upperW,
    int64_t strideH, int64_t strideW, int64_t channelsPerPixel,
    int64_t pixelsPerColumn, int64_t swizzle) {
  const char *self = "conv3dTmaIm2colSliceDescriptor";
  int64_t words[] = {kIm2colSliceTag,
                     address,
                     dataType,
                     slices,
                     h,
                     w,
                     c,
                     pitchSlice,
                     pitchH,
                     pitchW,
                     lowerH,
                     lowerW,
                     upperH,
                     upperW,
                     strideH,
                     strideW,
                     channelsPerPixel,
                     pixelsPerColumn,
                     swizzle};
  return memoizedMap(self, words, [&](CudaDriver &driver, bool *complete) {
    // The depth slices of an NDHWC tensor as the images of a rank-4 NHWC
    // one.
    return im2colMapOrDefer(
        self, driver, complete, address, dataType, {c, w, h, slices},
        {pitchW, pitchH, pitchSlice}, {lowerW, lowerH}, {upperW, upperH},
        {strideW, strideH}, channelsPerPixel, pixelsPerColumn, swizzle);
  });
}

/// A tiled map of `dims` (innermost first) with element strides `strides`
/// of dimensions 1 and up, and boxes of `box`.
static int64_t tiledMapOrDefer(const char *self, CudaDriver &driver,
                               bool *complete, int64_t address,
                               int64_t dataType, llvm::ArrayRef<int64_t> dims,
                               llvm::ArrayRef<int64_t> strides,
                               llvm::ArrayRef<int64_t> box, int64_t swizzle) {
  TiledTensorMapParams params;
  params.dataType = TensorMapDataType(dataType);
  params.globalAddress = reinterpret_cast<void *>(address);
  unsigned bytes = getTensorMapElementBits(params.dataType) / 8;
  for (int64_t dim : dims)
    params.globalDim.push_back(uint64_t(dim));
  for (int64_t stride : strides)
    params.globalStrides.push_back(uint64_t(stride * bytes));
  for (int64_t size : box)
    params.boxDim.push_back(uint32_t(size));
  params.swizzle = TensorMapSwizzle(swizzle);
  return deviceMapOrDefer(self, driver, params, complete);
}

extern "C" int64_t conv3dTmaTiledDescriptor(int64_t address, int64_t dataType,
                                            int64_t dim0, int64_t dim1,
                                            int64_t dim2, int64_t stride1,
                                            int64_t stride2, int64_t box0,
                                            int64_t box1, int64_t box2,
                                            int64_t swizzle) {
  const char *self = "conv3dTmaTiledDescriptor";
  int64_t words[] = {kTiledTag, address, dataType, dim0, dim1, dim2,
                     stride1,   stride2, box0,     box1, box2, swizzle};
  return memoizedMap(self, words, [&](CudaDriver &driver, bool *complete) {
    return tiledMapOrDefer(self, driver, complete, address, dataType,
                           {dim0, dim1, dim2}, {stride1, stride2},
                           {box0, box1, box2}, swizzle);
  });
}

extern "C" int64_t conv3dTmaTiled5dDescriptor(
    int64_t address, int64_t dataType, int64_t dim0, int64_t dim1, int64_t dim2,
    int64_t dim3, int64_t dim4, int64_t stride1, int64_t stride2,
    int64_t stride3, int64_t stride4, int64_t box0, int64_t box1, int64_t box2,
    int64_t box3, int64_t box4, int64_t swizzle) {
  const char *self = "conv3dTmaTiled5dDescriptor";
  int64_t words[] = {kTiled5dTag, address, dataType, dim0,    dim1,    dim2,
                     dim3,        dim4,    stride1,  stride2, stride3, stride4,
                     box0,        box1,    box2,     box3,    box4,    swizzle};
  return memoizedMap(self, words, [&](CudaDriver &driver, bool *complete) {
    return tiledMapOrDefer(self, driver, complete, address, dataType,
                           {dim0, dim1, dim2, dim3, dim4},
                           {stride1, stride2, stride3, stride4},
                           {box0, box1, box2, box3, box4}, swizzle);
  });
}

extern "C" int64_t conv3dMultiprocessorCount() {
  const char *self = "conv3dMultiprocessorCount";
  // Asked on every persistent launch; the device never changes once the
  // driver is up, so its count is read once (DeviceInfo is a copy with a
  // name string).
  static std::atomic<int64_t> cached{0};
  if (int64_t count = cached.load(std::memory_order_relaxed);
      count && !CudaDriver::hasDeferredError())
    return count;
  CudaDriver *driver = activeDriver(self);
  if (!driver)
    return 1;
  Expected<DeviceInfo> info = driver->deviceInfo();
  if (!info) {
    defer(self, info.takeError());
    return 1;
  }
  int64_t count = std::max(1, info->multiprocessors);
  cached.store(count, std::memory_order_relaxed);
  return count;
}

extern "C" void mgpuSetDefaultDevice(int32_t device) {
  defer("mgpuSetDefaultDevice", CudaDriver::requestDevice(device));
}

//===----------------------------------------------------------------------===//
// Symbols for the JIT
//===----------------------------------------------------------------------===//

std::vector<std::pair<std::string, void *>>
mlir::conv3d::getGpuRuntimeSymbols() {
#define CONV3D_SYMBOL(name)                                                    \
  { #name, reinterpret_cast < void *>(&name) }
  return {
      CONV3D_SYMBOL(conv3dSetCurrentStream),
      CONV3D_SYMBOL(conv3dGetCurrentStream),
      CONV3D_SYMBOL(mgpuModuleLoad),
      CONV3D_SYMBOL(mgpuModuleLoadJIT),
      CONV3D_SYMBOL(mgpuModuleUnload),
      CONV3D_SYMBOL(mgpuModuleGetFunction),
      CONV3D_SYMBOL(mgpuLaunchKernel),
      CONV3D_SYMBOL(mgpuLaunchClusterKernel),
      CONV3D_SYMBOL(mgpuStreamCreate),
      CONV3D_SYMBOL(mgpuStreamDestroy),
      CONV3D_SYMBOL(mgpuStreamSynchronize),
      CONV3D_SYMBOL(mgpuStreamWaitEvent),
      CONV3D_SYMBOL(mgpuEventCreate),
      CONV3D_SYMBOL(mgpuEventDestroy),
      CONV3D_SYMBOL(mgpuEventSynchronize),
      CONV3D_SYMBOL(mgpuEventRecord),
      CONV3D_SYMBOL(mgpuMemAlloc),
      CONV3D_SYMBOL(mgpuMemFree),
      CONV3D_SYMBOL(mgpuMemcpy),
      CONV3D_SYMBOL(mgpuMemset32),
      CONV3D_SYMBOL(mgpuMemset16),
      CONV3D_SYMBOL(mgpuMemHostRegister),
      CONV3D_SYMBOL(mgpuMemHostRegisterMemRef),
      CONV3D_SYMBOL(mgpuMemHostUnregister),
      CONV3D_SYMBOL(mgpuMemHostUnregisterMemRef),
      CONV3D_SYMBOL(mgpuTensorMapEncodeTiledMemref),
      CONV3D_SYMBOL(mgpuSetDefaultDevice),
      CONV3D_SYMBOL(conv3dTmaIm2colDescriptor),
      CONV3D_SYMBOL(conv3dTmaIm2colSliceDescriptor),
      CONV3D_SYMBOL(conv3dTmaTiledDescriptor),
      CONV3D_SYMBOL(conv3dTmaTiled5dDescriptor),
      CONV3D_SYMBOL(conv3dMultiprocessorCount),
  };
#undef CONV3D_SYMBOL
}
