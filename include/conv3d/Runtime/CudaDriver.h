//===- CudaDriver.h - the CUDA driver API, opened at run time ---*- C++ -*-===//
//
// The project's own CUDA runtime. libcuda is opened with dlopen on first use
// and every entry point is looked up with dlsym, so every binary builds, links
// and runs its CPU paths on machines without a GPU driver: there
// CudaDriver::get() returns an error instead of aborting.
//
//   auto driver = CudaDriver::get();          // llvm::Expected<CudaDriver &>
//   if (!driver) return driver.takeError();   // "no CUDA driver: ..."
//   auto ptr = driver->allocate(bytes);       // llvm::Expected<void *>
//
// Driver handles (CUstream, CUevent, CUmodule, CUfunction) and device
// pointers are passed as `void *`, so this header does not need cuda.h.
// A stream argument of nullptr means the legacy null stream, synchronously.
//
// The second half of this header is the C interface that MLIR's lowered host
// code calls (`mgpu*`, see GpuRuntimeWrappers.cpp). Those functions cannot
// return errors: a failure is recorded as a deferred error of the calling
// thread, which the C++ side takes with CudaDriver::takeDeferredError() after
// the JIT-compiled call returns.
//
//===----------------------------------------------------------------------===//

#ifndef CONV3D_RUNTIME_CUDADRIVER_H
#define CONV3D_RUNTIME_CUDADRIVER_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace mlir::conv3d {

/// A failed driver call: "cuMemAlloc_v2 failed: CUDA_ERROR_OUT_OF_MEMORY (out
/// of memory)". `getResult()` is the CUresult.
class CudaError : public llvm::ErrorInfo<CudaError> {
public:
  static char ID;
  CudaError(std::string call, int result, std::string name,
            std::string description);
  void log(llvm::raw_ostream &os) const override;
  std::error_code convertToErrorCode() const override;
  llvm::StringRef getCall() const { return call; }
  int getResult() const { return result; }
  llvm::StringRef getName() const { return name; }
  llvm::StringRef getDescription() const { return description; }

private:
  std::string call;
  int result;
  std::string name;
  std::string description;
};

/// The device the driver was initialized on.
struct DeviceInfo {
  int ordinal = 0;
  std::string name;
  int ccMajor = 0;
  int ccMinor = 0;
  int multiprocessors = 0;
  int maxSharedMemoryPerBlockOptin = 0; ///< bytes
  size_t totalMemory = 0;               ///< bytes
  int driverVersion = 0;                ///< cuDriverGetVersion, e.g. 13000
  /// The compute capability as a target name: "sm_90".
  std::string chip() const;
};

/// Grid, block or cluster extents: {x, y, z}.
using LaunchDims = std::array<uint32_t, 3>;

//===----------------------------------------------------------------------===//
// TMA descriptors. The enum values are those of cuda.h's CUtensorMap* enums.
//===----------------------------------------------------------------------===//

enum class TensorMapDataType : uint32_t {
  UInt8 = 0,
  UInt16,
  UInt32,
  Int32,
  UInt64,
  Int64,
  Float16,
  Float32,
  Float64,
  BFloat16,
  Float32Ftz,
  TFloat32,
  TFloat32Ftz,
  U4x16Align8B,  ///< 16 packed 4-bit values in 8 bytes
  U4x16Align16B, ///< 16 packed 4-bit values in 16 bytes
  U6x16Align16B, ///< 16 packed 6-bit values in 16 bytes
};
enum class TensorMapInterleave : uint32_t { None = 0, B16, B32 };
enum class TensorMapSwizzle : uint32_t {
  None = 0,
  B32,
  B64,
  B128,
  B128Atom32B,
  B128Atom32BFlip8B,
  B128Atom64B,
};
enum class TensorMapL2Promotion : uint32_t { None = 0, B64, B128, B256 };
enum class TensorMapOobFill : uint32_t { None = 0, NanRequestZeroFma };

/// Bits per element of a TMA data type (4 or 8 for the packed types, whose
/// dimensions count individual values).
unsigned getTensorMapElementBits(TensorMapDataType type);

/// An encoded CUtensorMap: 128 opaque bytes, 128-byte aligned like cuda.h's.
/// Passed to a kernel by value (a `__grid_constant__` parameter) or through
/// CudaDriver::uploadTensorMap.
struct alignas(128) TensorMap {
  std::array<uint64_t, 16> opaque{};
};

/// cuTensorMapEncodeTiled's parameters. Every array lists dimensions
/// innermost (contiguous) first, as the driver does; the rank is
/// globalDim.size().
struct TiledTensorMapParams {
  TensorMapDataType dataType = TensorMapDataType::BFloat16;
  void *globalAddress = nullptr;                 ///< device address
  llvm::SmallVector<uint64_t, 5> globalDim;      ///< elements per dimension
  llvm::SmallVector<uint64_t, 4> globalStrides;  ///< bytes, of dims 1..rank-1
  llvm::SmallVector<uint32_t, 5> boxDim;         ///< elements per dimension
  llvm::SmallVector<uint32_t, 5> elementStrides; ///< empty: all ones
  TensorMapInterleave interleave = TensorMapInterleave::None;
  TensorMapSwizzle swizzle = TensorMapSwizzle::None;
  TensorMapL2Promotion l2Promotion = TensorMapL2Promotion::None;
  TensorMapOobFill oobFill = TensorMapOobFill::None;
};

/// cuTensorMapEncodeIm2col's parameters (rank 3 to 5: C, the rank-2 spatial
/// dimensions, N). Innermost first as above; the pixel box corners list the
/// spatial dimensions innermost first too ({W, H, D} for rank 5; see
/// TOOLCHAIN.md, "TMA im2col for 3-D convolution").
struct Im2colTensorMapParams {
  TensorMapDataType dataType = TensorMapDataType::BFloat16;
  void *globalAddress = nullptr;
  llvm::SmallVector<uint64_t, 5> globalDim;
  llvm::SmallVector<uint64_t, 4> globalStrides;
  llvm::SmallVector<int, 3> pixelBoxLowerCorner;
  llvm::SmallVector<int, 3> pixelBoxUpperCorner;
  uint32_t channelsPerPixel = 0;
  uint32_t pixelsPerColumn = 0;
  llvm::SmallVector<uint32_t, 5> elementStrides; ///< empty: all ones
  TensorMapInterleave interleave = TensorMapInterleave::None;
  TensorMapSwizzle swizzle = TensorMapSwizzle::None;
  TensorMapL2Promotion l2Promotion = TensorMapL2Promotion::None;
  TensorMapOobFill oobFill = TensorMapOobFill::None;
};

/// The documented requirements of the driver (ranks, ranges, 16-byte
/// alignment of the address and the strides, swizzle spans), checked without
/// a driver. The encode functions run these first.
llvm::Error verifyTensorMapParams(const TiledTensorMapParams &params);
llvm::Error verifyTensorMapParams(const Im2colTensorMapParams &params);

//===----------------------------------------------------------------------===//
// CudaDriver
//===----------------------------------------------------------------------===//

/// The driver API of one device's primary context. A process-wide singleton,
/// created on first use and never destroyed; every method may be called from
/// any thread and makes the primary context current for its duration.
class CudaDriver {
public:
  /// The driver, initialized on first call: dlopen("libcuda.so.1") (then
  /// "libcuda.so"), cuInit, the device of mgpuSetDefaultDevice, else of
  /// $CONV3D_CUDA_DEVICE, else 0, and its primary context. A failure is
  /// remembered and returned again by later calls.
  static llvm::Expected<CudaDriver &> get();

  /// Takes the first error recorded on the calling thread by the mgpu*
  /// wrappers since the last call (success if none) and clears it.
  static llvm::Error takeDeferredError();
  /// Records `error` as the calling thread's deferred error unless one is
  /// already pending (the first error wins; later ones are dropped).
  static void deferError(llvm::Error error);
  /// Whether the calling thread has a deferred error pending. While it has,
  /// the wrappers skip launches, copies and allocations.
  static bool hasDeferredError();

  /// Chooses the device before the driver is initialized; afterwards only
  /// the device already in use is accepted.
  static llvm::Error requestDevice(int ordinal);

  /// The driver symbols this library looks up (their real, versioned names:
  /// "cuMemAlloc_v2", ...).
  static llvm::ArrayRef<const char *> getDriverSymbolNames();
  /// Those of getDriverSymbolNames() that the library at `path` does not
  /// export; an error if it cannot be opened. A diagnostic for old drivers.
  static llvm::Expected<std::vector<std::string>>
  findMissingSymbols(llvm::StringRef path);

  CudaDriver(const CudaDriver &) = delete;
  CudaDriver &operator=(const CudaDriver &) = delete;
  ~CudaDriver();

  llvm::Expected<DeviceInfo> deviceInfo();

  // Memory. Device pointers are `void *`. With a stream, allocate uses the
  // stream-ordered allocator where the device has one; free knows which
  // allocations those were.
  llvm::Expected<void *> allocate(size_t bytes, void *stream = nullptr);
  /// Managed memory, accessible from host and device.
  llvm::Expected<void *> allocateManaged(size_t bytes);
  llvm::Error free(void *ptr, void *stream = nullptr);
  /// What the runtime's own memory pool holds (the temporaries of its
  /// calls: prologue prepasses, split-K and Q-slice workspaces; PyTorch's
  /// allocator never sees them), in bytes.
  struct PoolMemory {
    uint64_t reserved = 0; ///< mapped by the pool, which keeps what is freed
    uint64_t used = 0;     ///< in allocations now
    uint64_t usedHigh = 0; ///< the most in allocations since the last reset
    /// The device's CUDA graph memory (the memory nodes of every graph on
    /// it): inside a captured graph the runtime's temporaries are graph
    /// memory, which the pool does not count. Set where the driver reports
    /// it (graphReported).
    bool graphReported = false;
    uint64_t graphUsed = 0;     ///< in graph allocations now
    uint64_t graphUsedHigh = 0; ///< the most since the last reset
  };
  /// The pool's memory and the device's graph memory; with resetHigh, both
  /// high-water marks start again from the current use after being read.
  /// An error where the runtime has no pool of its own (a device or driver
  /// without memory pools, the emulator).
  llvm::Expected<PoolMemory> poolMemory(bool resetHigh = false);
  /// Copies and fills: with a stream, enqueued on it; without one,
  /// complete on return, so that work on any stream (the runtime's are
  /// non-blocking) sees the result.
  llvm::Error copyToDevice(void *dst, const void *src, size_t bytes,
                           void *stream = nullptr);
  llvm::Error copyToHost(void *dst, const void *src, size_t bytes,
                         void *stream = nullptr);
  /// Any direction; the driver tells host from device by unified addressing.
  llvm::Error copy(void *dst, const void *src, size_t bytes,
                   void *stream = nullptr);
  llvm::Error memsetD8(void *dst, uint8_t value, size_t count,
                       void *stream = nullptr);
  llvm::Error memsetD16(void *dst, uint16_t value, size_t count,
                        void *stream = nullptr);
  llvm::Error memsetD32(void *dst, uint32_t value, size_t count,
                        void *stream = nullptr);
  /// Page-locks host memory; memory already registered is accepted.
  llvm::Error hostRegister(void *ptr, size_t bytes);
  llvm::Error hostUnregister(void *ptr);

  // Streams and events.
  /// A stream that does not synchronize with the null stream.
  llvm::Expected<void *> createStream();
  llvm::Error destroyStream(void *stream);
  llvm::Error synchronize(void *stream);
  llvm::Error waitEvent(void *stream, void *event);
  llvm::Expected<void *> createEvent(bool timing = true);
  llvm::Error recordEvent(void *event, void *stream);
  llvm::Error synchronizeEvent(void *event);
  /// Milliseconds between two recorded, completed timing events.
  llvm::Expected<float> elapsedMillis(void *start, void *end);
  llvm::Error destroyEvent(void *event);

  // Modules and launches.
  /// A cubin, fatbin or NUL-terminated PTX image (cuModuleLoadData).
  llvm::Expected<void *> loadModule(const void *image);
  /// NUL-terminated PTX, JIT-compiled at `optLevel` (0-4); the error carries
  /// the JIT's log.
  llvm::Expected<void *> loadModuleJIT(const void *ptx, int optLevel);
  llvm::Error unloadModule(void *module);
  llvm::Expected<void *> getFunction(void *module, llvm::StringRef name);
  /// Launches `function`; above 48 KiB of dynamic shared memory the
  /// function's limit is raised first (checked against the device's opt-in
  /// maximum). `params` is cuLaunchKernel's kernelParams.
  llvm::Error launch(void *function, LaunchDims grid, LaunchDims block,
                     uint32_t sharedBytes, void *stream, void **params);
  /// The same with thread block clusters (cuLaunchKernelEx); `grid` counts
  /// blocks and must be a multiple of `cluster`.
  llvm::Error launchCluster(void *function, LaunchDims cluster, LaunchDims grid,
                            LaunchDims block, uint32_t sharedBytes,
                            void *stream, void **params);

  // TMA descriptors (sm_90 and later). The parameters are verified first.
  llvm::Expected<TensorMap> encodeTiled(const TiledTensorMapParams &params);
  llvm::Expected<TensorMap> encodeIm2col(const Im2colTensorMapParams &params);
  llvm::Error encodeTiled(const TiledTensorMapParams &params, TensorMap &out);
  llvm::Error encodeIm2col(const Im2colTensorMapParams &params, TensorMap &out);
  /// A device copy of `map`, for a kernel that takes a pointer to its
  /// descriptor and is launched on `stream` (null: a stream not known here;
  /// the copy is then complete on return). The upload is ordered on
  /// `stream` (cuMemcpyHtoDAsync from pinned memory, no synchronization); a
  /// kernel on another stream asking for the same map while it is in
  /// flight waits for it by an event. Copies are cached by content in a
  /// bounded set of slots (TensorMapSlots.h: 2 x 2048 maps, 512 KiB); asking
  /// again for a map whose upload is known complete costs no driver call.
  llvm::Expected<void *> uploadTensorMap(const TensorMap &map,
                                         void *stream = nullptr);
  /// The device copy of the map `params` encode, as uploadTensorMap gives
  /// it, found by the parameters first: a repeated call neither verifies
  /// nor encodes. `complete` (when given) tells whether the copy's upload
  /// is known to have finished, so that a kernel on any stream may read it
  /// without waiting.
  llvm::Expected<void *> deviceTensorMap(const TiledTensorMapParams &params,
                                         void *stream,
                                         bool *complete = nullptr);
  llvm::Expected<void *> deviceTensorMap(const Im2colTensorMapParams &params,
                                         void *stream,
                                         bool *complete = nullptr);
  /// Changes whenever a generation of device map slots is reused: a device
  /// copy returned under another epoch may no longer hold its map
  /// (TensorMapMemo checks it).
  uint64_t tensorMapEpoch() const;

  struct Impl;

private:
  explicit CudaDriver(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl;
};

//===----------------------------------------------------------------------===//
// The stream lowered host code runs on
//===----------------------------------------------------------------------===//

/// Sets the calling thread's current stream (conv3dSetCurrentStream, below)
/// for a scope, then restores the previous one.
class ScopedCurrentStream {
public:
  explicit ScopedCurrentStream(void *stream);
  ~ScopedCurrentStream();
  ScopedCurrentStream(const ScopedCurrentStream &) = delete;
  ScopedCurrentStream &operator=(const ScopedCurrentStream &) = delete;

private:
  void *previous;
};

/// Every C function of this library that JIT-compiled code may call (the
/// mgpu* wrappers and conv3d*CurrentStream), by name, for
/// mlir::ExecutionEngine::registerSymbols.
std::vector<std::pair<std::string, void *>> getGpuRuntimeSymbols();

} // namespace mlir::conv3d

//===----------------------------------------------------------------------===//
// The C interface of MLIR 22's lowered host code (gpu-to-llvm and
// nvgpu-to-nvvm). Handles are `void *`; index arguments are int64_t.
//===----------------------------------------------------------------------===//

extern "C" {
/// While a stream is set on a thread, mgpuStreamCreate returns it there and
/// mgpuStreamDestroy / mgpuStreamSynchronize leave it alone: the caller owns
/// the stream and synchronizes it. nullptr clears.
void conv3dSetCurrentStream(void *stream);
void *conv3dGetCurrentStream();

void *mgpuModuleLoad(void *data, int64_t sizeBytes);
void *mgpuModuleLoadJIT(void *data, int optLevel);
void mgpuModuleUnload(void *module);
void *mgpuModuleGetFunction(void *module, const char *name);
void mgpuLaunchKernel(void *function, int64_t gridX, int64_t gridY,
                      int64_t gridZ, int64_t blockX, int64_t blockY,
                      int64_t blockZ, int32_t smem, void *stream, void **params,
                      void **extra, int64_t paramsCount);
void mgpuLaunchClusterKernel(void *function, int64_t clusterX, int64_t clusterY,
                             int64_t clusterZ, int64_t gridX, int64_t gridY,
                             int64_t gridZ, int64_t blockX, int64_t blockY,
                             int64_t blockZ, int32_t smem, void *stream,
                             void **params, void **extra);
void *mgpuStreamCreate();
void mgpuStreamDestroy(void *stream);
void mgpuStreamSynchronize(void *stream);
void mgpuStreamWaitEvent(void *stream, void *event);
void *mgpuEventCreate();
void mgpuEventDestroy(void *event);
void mgpuEventSynchronize(void *event);
void mgpuEventRecord(void *event, void *stream);
void *mgpuMemAlloc(uint64_t sizeBytes, void *stream, bool isHostShared);
void mgpuMemFree(void *ptr, void *stream);
void mgpuMemcpy(void *dst, void *src, size_t sizeBytes, void *stream);
void mgpuMemset32(void *dst, unsigned int value, size_t count, void *stream);
void mgpuMemset16(void *dst, unsigned short value, size_t count, void *stream);
void mgpuMemHostRegister(void *ptr, uint64_t sizeBytes);
/// `descriptor` points to a ranked memref descriptor of rank `rank`
/// {allocated, aligned, offset, sizes[rank], strides[rank]}.
void mgpuMemHostRegisterMemRef(int64_t rank, void *descriptor,
                               int64_t elementSizeBytes);
void mgpuMemHostUnregister(void *ptr);
void mgpuMemHostUnregisterMemRef(int64_t rank, void *descriptor,
                                 int64_t elementSizeBytes);
/// A tiled TMA descriptor of the memref (row-major sizes and strides, last
/// dimension contiguous; `boxDims` outermost first, as the memref), copied to
/// device memory; returns the device address. The enum arguments are
/// CUtensorMap* values.
void *mgpuTensorMapEncodeTiledMemref(int64_t rank, void *descriptor,
                                     int64_t dataType, int64_t interleave,
                                     int64_t swizzle, int64_t l2Promotion,
                                     int64_t oobFill, int64_t *boxDims);
void mgpuSetDefaultDevice(int32_t device);
/// The sm90 kernels' descriptors, called by their host code before each
/// launch: a rank-5 im2col map of an NDHWC tensor with contiguous channels
/// (sizes, element pitches of N, D, H, W; corners and traversal strides per
/// spatial axis, D, H, W) and a tiled map of a rank-3 tensor (sizes and box
/// innermost first, element strides of dimensions 1 and 2). Each returns
/// the device address of the map (cached by its bytes), or 0 with the
/// error recorded for the run to report; the host code then skips the
/// launch.
int64_t conv3dTmaIm2colDescriptor(
    int64_t address, int64_t dataType, int64_t n, int64_t d, int64_t h,
    int64_t w, int64_t c, int64_t pitchN, int64_t pitchD, int64_t pitchH,
    int64_t pitchW, int64_t lowerD, int64_t lowerH, int64_t lowerW,
    int64_t upperD, int64_t upperH, int64_t upperW, int64_t strideD,
    int64_t strideH, int64_t strideW, int64_t channelsPerPixel,
    int64_t pixelsPerColumn, int64_t swizzle);
/// The rank-4 im2col map of an NDHWC tensor's depth slices, the (N*D, H,
/// W, C) view the sm90 kernel's per-depth-slice loads read (sizes, element
/// pitches of a slice, H and W; corners and traversal strides of H and W).
int64_t conv3dTmaIm2colSliceDescriptor(
    int64_t address, int64_t dataType, int64_t slices, int64_t h, int64_t w,
    int64_t c, int64_t pitchSlice, int64_t pitchH, int64_t pitchW,
    int64_t lowerH, int64_t lowerW, int64_t upperH, int64_t upperW,
    int64_t strideH, int64_t strideW, int64_t channelsPerPixel,
    int64_t pixelsPerColumn, int64_t swizzle);
/// The current device's multiprocessor count (persistent kernels launch one
/// block per multiprocessor); 1 with the error recorded when no device.
int64_t conv3dMultiprocessorCount();
int64_t conv3dTmaTiledDescriptor(int64_t address, int64_t dataType,
                                 int64_t dim0, int64_t dim1, int64_t dim2,
                                 int64_t stride1, int64_t stride2, int64_t box0,
                                 int64_t box1, int64_t box2, int64_t swizzle);
/// A rank-5 tiled map (sizes innermost first, element strides of dimensions
/// 1 to 4, box sizes): the halo mainloop's input patches and output tiles.
/// Out-of-bounds boxes read zeros and store nothing.
int64_t conv3dTmaTiled5dDescriptor(int64_t address, int64_t dataType,
                                   int64_t dim0, int64_t dim1, int64_t dim2,
                                   int64_t dim3, int64_t dim4, int64_t stride1,
                                   int64_t stride2, int64_t stride3,
                                   int64_t stride4, int64_t box0, int64_t box1,
                                   int64_t box2, int64_t box3, int64_t box4,
                                   int64_t swizzle);
}

#endif // CONV3D_RUNTIME_CUDADRIVER_H
