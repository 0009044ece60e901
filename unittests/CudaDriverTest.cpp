//===- CudaDriverTest.cpp - the dlopen'ed CUDA runtime and mgpu* wrappers -===//
//
// Without a driver: CudaDriver::get() fails with a clear message, every
// wrapper records a deferred error and returns null or nothing, and the TMA
// parameter checks work. With a GPU (the tests skip otherwise): memory,
// streams, events, a hand-written PTX kernel with more than 48 KiB of dynamic
// shared memory, the wrappers end to end, and TMA descriptors on sm_90+.
//
//===----------------------------------------------------------------------===//

#include "conv3d/Runtime/CudaDriver.h"
#include "conv3d/Runtime/Engine.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"

#include <gtest/gtest.h>

#include <set>

#include <dlfcn.h>

#include <algorithm>
#include <cstring>
#include <thread>
#include <vector>

using namespace mlir::conv3d;

namespace {

/// The message of CudaDriver::get()'s error; empty when there is a driver.
std::string driverFailure() {
  auto driver = CudaDriver::get();
  if (driver)
    return "";
  return llvm::toString(driver.takeError());
}

/// Takes the calling thread's deferred error as a message ("" for none).
std::string takeDeferred() {
  if (llvm::Error error = CudaDriver::takeDeferredError())
    return llvm::toString(std::move(error));
  return "";
}

/// A 1-D memref descriptor {allocated, aligned, offset, size, stride}.
struct MemRef1D {
  void *allocated;
  void *aligned;
  int64_t offset;
  int64_t size;
  int64_t stride;
};

/// A 2-D memref descriptor.
struct MemRef2D {
  void *allocated;
  void *aligned;
  int64_t offset;
  int64_t sizes[2];
  int64_t strides[2];
};

#define SKIP_WITHOUT_GPU(driverVar)                                            \
  auto driverVar##OrError = CudaDriver::get();                                 \
  if (!driverVar##OrError)                                                     \
    GTEST_SKIP() << llvm::toString(driverVar##OrError.takeError());            \
  CudaDriver &driverVar = *driverVar##OrError;

#define ASSERT_NO_ERROR(expr)                                                  \
  do {                                                                         \
    if (llvm::Error assertError = (expr))                                      \
      FAIL() << llvm::toString(std::move(assertError));                        \
  } while (0)

template <typename T> T unwrap(llvm::Expected<T> value) {
  if (!value) {
    ADD_FAILURE() << llvm::toString(value.takeError());
    return T();
  }
  return std::move(*value);
}

//===----------------------------------------------------------------------===//
// Without a driver
//===----------------------------------------------------------------------===//

TEST(CudaDriverNoGpu, GetFailsWithClearMessage) {
  std::string failure = driverFailure();
  if (failure.empty())
    GTEST_SKIP() << "a CUDA driver is present";
  void *library = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (!library) {
    EXPECT_EQ(failure.rfind("no CUDA driver: libcuda.so.1 not found (", 0), 0u)
        << failure;
  } else {
    dlclose(library);
  }
  // The failure is remembered, not retried.
  EXPECT_EQ(driverFailure(), failure);
}

TEST(CudaDriverNoGpu, WrappersRecordDeferredErrors) {
  std::string failure = driverFailure();
  if (failure.empty())
    GTEST_SKIP() << "a CUDA driver is present";
  llvm::consumeError(CudaDriver::takeDeferredError());

  void *fake = reinterpret_cast<void *>(uintptr_t(0x1000));
  char blob[16] = "not a cubin";
  alignas(16) char host[64] = {};
  MemRef1D memref{host, host, 0, 16, 1};
  int64_t box[1] = {8};
  auto expectDeferred = [&](const char *wrapper) {
    EXPECT_EQ(takeDeferred(), std::string(wrapper) + ": " + failure);
  };

  EXPECT_EQ(mgpuModuleLoad(blob, sizeof(blob)), nullptr);
  expectDeferred("mgpuModuleLoad");
  EXPECT_EQ(mgpuModuleLoadJIT(blob, 2), nullptr);
  expectDeferred("mgpuModuleLoadJIT");
  mgpuModuleUnload(fake);
  expectDeferred("mgpuModuleUnload");
  EXPECT_EQ(mgpuModuleGetFunction(fake, "kernel"), nullptr);
  expectDeferred("mgpuModuleGetFunction");
  mgpuLaunchKernel(fake, 1, 1, 1, 32, 1, 1, 0, nullptr, nullptr, nullptr, 0);
  expectDeferred("mgpuLaunchKernel");
  mgpuLaunchClusterKernel(fake, 2, 1, 1, 2, 1, 1, 32, 1, 1, 0, nullptr, nullptr,
                          nullptr);
  expectDeferred("mgpuLaunchClusterKernel");
  EXPECT_EQ(mgpuStreamCreate(), nullptr);
  expectDeferred("mgpuStreamCreate");
  mgpuStreamDestroy(fake);
  expectDeferred("mgpuStreamDestroy");
  mgpuStreamSynchronize(nullptr);
  expectDeferred("mgpuStreamSynchronize");
  mgpuStreamWaitEvent(fake, fake);
  expectDeferred("mgpuStreamWaitEvent");
  EXPECT_EQ(mgpuEventCreate(), nullptr);
  expectDeferred("mgpuEventCreate");
  mgpuEventDestroy(fake);
  expectDeferred("mgpuEventDestroy");
  mgpuEventSynchronize(fake);
  expectDeferred("mgpuEventSynchronize");
  mgpuEventRecord(fake, nullptr);
  expectDeferred("mgpuEventRecord");
  EXPECT_EQ(mgpuMemAlloc(1024, nullptr, false), nullptr);
  expectDeferred("mgpuMemAlloc");
  EXPECT_EQ(mgpuMemAlloc(1024, nullptr, true), nullptr);
  expectDeferred("mgpuMemAlloc");
  mgpuMemFree(fake, nullptr);
  expectDeferred("mgpuMemFree");
  mgpuMemcpy(host, host + 32, 16, nullptr);
  expectDeferred("mgpuMemcpy");
  mgpuMemset32(fake, 7, 4, nullptr);
  expectDeferred("mgpuMemset32");
  mgpuMemset16(fake, 7, 4, nullptr);
  expectDeferred("mgpuMemset16");
  mgpuMemHostRegister(host, sizeof(host));
  expectDeferred("mgpuMemHostRegister");
  mgpuMemHostRegisterMemRef(1, &memref, 4);
  expectDeferred("mgpuMemHostRegisterMemRef");
  mgpuMemHostUnregister(host);
  expectDeferred("mgpuMemHostUnregister");
  mgpuMemHostUnregisterMemRef(1, &memref, 4);
  expectDeferred("mgpuMemHostUnregisterMemRef");
  EXPECT_EQ(mgpuTensorMapEncodeTiledMemref(1, &memref, 7, 0, 0, 0, 0, box),
            nullptr);
  expectDeferred("mgpuTensorMapEncodeTiledMemref");

  // Freeing or destroying nothing needs no driver.
  mgpuMemFree(nullptr, nullptr);
  mgpuStreamDestroy(nullptr);
  mgpuEventDestroy(nullptr);
  mgpuModuleUnload(nullptr);
  EXPECT_EQ(takeDeferred(), "");
  // Choosing a device before the driver starts is no error.
  mgpuSetDefaultDevice(0);
  EXPECT_EQ(takeDeferred(), "");
}

//===----------------------------------------------------------------------===//
// Deferred errors and the borrowed stream (no driver needed)
//===----------------------------------------------------------------------===//

TEST(CudaDeferredError, FirstErrorWinsAndTakeClears) {
  llvm::consumeError(CudaDriver::takeDeferredError());
  EXPECT_FALSE(CudaDriver::hasDeferredError());
  CudaDriver::deferError(llvm::Error::success());
  EXPECT_FALSE(CudaDriver::hasDeferredError());
  CudaDriver::deferError(
      llvm::createStringError(llvm::inconvertibleErrorCode(), "first"));
  CudaDriver::deferError(
      llvm::createStringError(llvm::inconvertibleErrorCode(), "second"));
  EXPECT_TRUE(CudaDriver::hasDeferredError());
  // While an error is pending, work is skipped and records nothing new.
  EXPECT_EQ(mgpuMemAlloc(64, nullptr, false), nullptr);
  mgpuMemcpy(nullptr, nullptr, 64, nullptr);
  mgpuLaunchKernel(nullptr, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr, 0);
  EXPECT_EQ(takeDeferred(), "first");
  EXPECT_FALSE(CudaDriver::hasDeferredError());
  EXPECT_EQ(takeDeferred(), "");
}

TEST(CudaDeferredError, ErrorsArePerThread) {
  llvm::consumeError(CudaDriver::takeDeferredError());
  std::string seenThere;
  std::thread other([&] {
    CudaDriver::deferError(
        llvm::createStringError(llvm::inconvertibleErrorCode(), "there"));
    seenThere = takeDeferred();
  });
  other.join();
  EXPECT_EQ(seenThere, "there");
  EXPECT_EQ(takeDeferred(), "");
}

TEST(CudaCurrentStream, BorrowedStreamIsReturnedAndLeftAlone) {
  llvm::consumeError(CudaDriver::takeDeferredError());
  void *borrowed = reinterpret_cast<void *>(uintptr_t(0x5000));
  void *inner = reinterpret_cast<void *>(uintptr_t(0x6000));
  EXPECT_EQ(conv3dGetCurrentStream(), nullptr);
  {
    ScopedCurrentStream scope(borrowed);
    EXPECT_EQ(conv3dGetCurrentStream(), borrowed);
    EXPECT_EQ(mgpuStreamCreate(), borrowed);
    // The caller owns and synchronizes it: no driver call, no error.
    mgpuStreamSynchronize(borrowed);
    mgpuStreamDestroy(borrowed);
    EXPECT_EQ(takeDeferred(), "");
    {
      ScopedCurrentStream nested(inner);
      EXPECT_EQ(mgpuStreamCreate(), inner);
    }
    EXPECT_EQ(conv3dGetCurrentStream(), borrowed);
    // Other threads do not see it.
    void *seenThere = borrowed;
    std::thread([&] { seenThere = conv3dGetCurrentStream(); }).join();
    EXPECT_EQ(seenThere, nullptr);
  }
  EXPECT_EQ(conv3dGetCurrentStream(), nullptr);
  conv3dSetCurrentStream(borrowed);
  EXPECT_EQ(conv3dGetCurrentStream(), borrowed);
  conv3dSetCurrentStream(nullptr);
  EXPECT_EQ(conv3dGetCurrentStream(), nullptr);
}

TEST(CudaRuntimeSymbols, ListsEveryWrapper) {
  std::vector<std::pair<std::string, void *>> symbols = getGpuRuntimeSymbols();
  llvm::StringSet<> names;
  for (const auto &[name, address] : symbols) {
    EXPECT_NE(address, nullptr) << name;
    EXPECT_TRUE(names.insert(name).second) << "duplicate " << name;
  }
  for (const char *expected : {"mgpuModuleLoad",
                               "mgpuModuleLoadJIT",
                               "mgpuModuleUnload",
                               "mgpuModuleGetFunction",
                               "mgpuLaunchKernel",
                               "mgpuLaunchClusterKernel",
                               "mgpuStreamCreate",
                               "mgpuStreamDestroy",
                               "mgpuStreamSynchronize",
                               "mgpuStreamWaitEvent",
                               "mgpuEventCreate",
                               "mgpuEventDestroy",
                               "mgpuEventSynchronize",
                               "mgpuEventRecord",
                               "mgpuMemAlloc",
                               "mgpuMemFree",
                               "mgpuMemcpy",
                               "mgpuMemset32",
                               "mgpuMemset16",
                               "mgpuMemHostRegister",
                               "mgpuMemHostRegisterMemRef",
                               "mgpuMemHostUnregister",
                               "mgpuMemHostUnregisterMemRef",
                               "mgpuTensorMapEncodeTiledMemref",
                               "mgpuSetDefaultDevice",
                               "conv3dSetCurrentStream",
                               "conv3dGetCurrentStream"})
    EXPECT_TRUE(names.contains(expected)) << expected;
  EXPECT_EQ(symbols.size(), names.size());
  auto find = [&](llvm::StringRef name) -> void * {
    for (const auto &[symbol, address] : symbols)
      if (symbol == name)
        return address;
    return nullptr;
  };
  EXPECT_EQ(find("mgpuMemAlloc"), reinterpret_cast<void *>(&mgpuMemAlloc));
  EXPECT_EQ(find("mgpuLaunchKernel"),
            reinterpret_cast<void *>(&mgpuLaunchKernel));
}

TEST(CudaDriverSymbols, VersionedNames) {
  llvm::ArrayRef<const char *> names = CudaDriver::getDriverSymbolNames();
  auto has = [&](llvm::StringRef name) {
    return llvm::is_contained(names, name);
  };
  // cuda.h's aliases are resolved to the real symbols.
  EXPECT_TRUE(has("cuMemAlloc_v2"));
  EXPECT_TRUE(has("cuCtxPushCurrent_v2"));
  EXPECT_TRUE(has("cuEventElapsedTime_v2"));
  EXPECT_TRUE(has("cuTensorMapEncodeIm2col"));
  EXPECT_FALSE(has("cuMemAlloc"));
}

TEST(CudaDriverSymbols, CudaStubExportsEverySymbol) {
  // The toolkit's link-time stub exports the driver API of its version: every
  // name this library looks up must be among them.
  const char *stub = "/usr/local/cuda/lib64/stubs/libcuda.so";
  if (!llvm::sys::fs::exists(stub))
    GTEST_SKIP() << stub << " not found";
  if (driverFailure().empty())
    GTEST_SKIP() << "a driver is loaded; RealDriverExportsEverySymbol checks";
  auto missing = unwrap(CudaDriver::findMissingSymbols(stub));
  EXPECT_TRUE(missing.empty()) << missing.size() << " missing, first "
                               << (missing.empty() ? "" : missing[0]);
}

TEST(CudaDriverSymbols, RealDriverExportsEverySymbol) {
  SKIP_WITHOUT_GPU(driver);
  (void)driver;
  auto missing = unwrap(CudaDriver::findMissingSymbols("libcuda.so.1"));
  EXPECT_TRUE(missing.empty()) << missing.size() << " missing, first "
                               << (missing.empty() ? "" : missing[0]);
}

TEST(CudaDriverSymbols, MissingLibraryIsAnError) {
  auto missing =
      CudaDriver::findMissingSymbols("/nonexistent/libcuda-for-test.so");
  ASSERT_FALSE(bool(missing));
  std::string message = llvm::toString(missing.takeError());
  EXPECT_NE(message.find("cannot open /nonexistent/libcuda-for-test.so"),
            std::string::npos)
      << message;
}

//===----------------------------------------------------------------------===//
// TMA parameter checks (no driver needed)
//===----------------------------------------------------------------------===//

/// A bf16 [rows x 64] row-major tensor, boxes of 64 x 64.
TiledTensorMapParams validTiled() {
  TiledTensorMapParams params;
  params.dataType = TensorMapDataType::BFloat16;
  params.globalAddress = reinterpret_cast<void *>(uintptr_t(0x10000));
  params.globalDim = {64, 256};
  params.globalStrides = {64 * 2};
  params.boxDim = {64, 64};
  params.swizzle = TensorMapSwizzle::B128;
  return params;
}

/// TOOLCHAIN.md's rank-5 NDHWC example: C=64, W=H=D=16, N=2, 3x3x3 filter,
/// padding 1, channel block 64, tile M 128.
Im2colTensorMapParams validIm2col() {
  Im2colTensorMapParams params;
  params.dataType = TensorMapDataType::BFloat16;
  params.globalAddress = reinterpret_cast<void *>(uintptr_t(0x10000));
  params.globalDim = {64, 16, 16, 16, 2};
  params.globalStrides = {64 * 2, 16 * 64 * 2, 16 * 16 * 64 * 2,
                          16 * 16 * 16 * 64 * 2};
  params.pixelBoxLowerCorner = {-1, -1, -1};
  params.pixelBoxUpperCorner = {1 - 2, 1 - 2, 1 - 2};
  params.channelsPerPixel = 64;
  params.pixelsPerColumn = 128;
  params.elementStrides = {1, 1, 1, 1, 1};
  params.swizzle = TensorMapSwizzle::B128;
  return params;
}

/// The message of a verification error, "" on success.
template <typename Params> std::string verify(const Params &params) {
  if (llvm::Error error = verifyTensorMapParams(params))
    return llvm::toString(std::move(error));
  return "";
}

TEST(CudaTensorMapParams, ValidParamsPass) {
  EXPECT_EQ(verify(validTiled()), "");
  EXPECT_EQ(verify(validIm2col()), "");
  Im2colTensorMapParams rank4 = validIm2col();
  rank4.globalDim = {64, 16, 16, 32};
  rank4.globalStrides = {128, 16 * 128, 16 * 16 * 128};
  rank4.pixelBoxLowerCorner = {-20, -20};
  rank4.pixelBoxUpperCorner = {20 - 32, 20 - 32};
  rank4.elementStrides.clear();
  EXPECT_EQ(verify(rank4), ""); // rank 4 allows corners in [-128, 127]
}

TEST(CudaTensorMapParams, TiledRejections) {
  TiledTensorMapParams params = validTiled();
  params.globalDim.clear();
  EXPECT_EQ(verify(params), "tiled TMA descriptor: rank 0 is not in [1, 5]");

  params = validTiled();
  params.globalDim = {8, 8, 8, 8, 8, 8};
  EXPECT_EQ(verify(params), "tiled TMA descriptor: rank 6 is not in [1, 5]");

  params = validTiled();
  params.globalStrides = {100};
  EXPECT_EQ(verify(params),
            "tiled TMA descriptor: global stride 0 (of dimension 1) is 100 "
            "bytes, not a multiple of 16");

  params = validTiled();
  params.globalStrides = {128, 128};
  EXPECT_EQ(verify(params),
            "tiled TMA descriptor: rank 2 needs 1 global strides, got 2");

  params = validTiled();
  params.globalAddress = reinterpret_cast<void *>(uintptr_t(0x10008));
  EXPECT_EQ(verify(params),
            "tiled TMA descriptor: global address 10008 is not 16-byte "
            "aligned");

  params = validTiled();
  params.globalAddress = nullptr;
  EXPECT_EQ(verify(params), "tiled TMA descriptor: no global address");

  params = validTiled();
  params.boxDim = {64, 512};
  EXPECT_EQ(verify(params), "tiled TMA descriptor: box dimension 1 is 512; it "
                            "must be in [1, 256]");

  params = validTiled();
  params.boxDim = {12, 64};
  EXPECT_EQ(verify(params),
            "tiled TMA descriptor: the inner box dimension (12 elements) is "
            "not a multiple of 16 bytes");

  params = validTiled();
  params.boxDim = {128, 64};
  EXPECT_EQ(verify(params),
            "tiled TMA descriptor: the inner box dimension is 256 bytes, more "
            "than the 128-byte swizzle span");

  params = validTiled();
  params.elementStrides = {1, 9};
  EXPECT_EQ(verify(params), "tiled TMA descriptor: element stride 1 is 9; it "
                            "must be in [1, 8]");

  params = validTiled();
  params.interleave = TensorMapInterleave::B16;
  EXPECT_EQ(verify(params), "tiled TMA descriptor: an interleaved layout "
                            "needs rank 3 or more, got 2");

  params = validTiled();
  params.globalDim = {64, 0};
  EXPECT_EQ(verify(params), "tiled TMA descriptor: global dimension 1 is 0; "
                            "it must be in [1, 2^32]");
}

TEST(CudaTensorMapParams, Im2colRejections) {
  Im2colTensorMapParams params = validIm2col();
  params.globalDim = {64, 16};
  params.globalStrides = {128};
  EXPECT_EQ(verify(params), "im2col TMA descriptor: rank 2 is not in [3, 5]");

  params = validIm2col();
  params.pixelBoxLowerCorner = {-1, -1};
  EXPECT_EQ(verify(params),
            "im2col TMA descriptor: rank 5 needs 3 offsets per pixel box "
            "corner, got 2 and 3");

  // TOOLCHAIN.md: padding 20 is refused by the driver for rank 5.
  params = validIm2col();
  params.pixelBoxLowerCorner = {-1, -1, -20};
  EXPECT_EQ(verify(params), "im2col TMA descriptor: lower pixel box corner 2 "
                            "is -20; rank 5 allows [-16, 15]");

  params = validIm2col();
  params.pixelBoxUpperCorner = {1 - 2, 1 - 2, 0 - 32};
  EXPECT_EQ(verify(params), "im2col TMA descriptor: upper pixel box corner 2 "
                            "is -32; rank 5 allows [-16, 15]");

  params = validIm2col();
  params.globalStrides[2] = 16 * 16 * 64 * 2 + 8;
  EXPECT_EQ(verify(params),
            "im2col TMA descriptor: global stride 2 (of "
            "dimension 3) is 32776 bytes, not a multiple of 16");

  params = validIm2col();
  params.channelsPerPixel = 0;
  EXPECT_EQ(verify(params), "im2col TMA descriptor: channelsPerPixel is 0; it "
                            "must be in [1, 256]");

  params = validIm2col();
  params.pixelsPerColumn = 2048;
  EXPECT_EQ(verify(params), "im2col TMA descriptor: pixelsPerColumn is 2048; "
                            "it must be in [1, 1024]");

  params = validIm2col();
  params.channelsPerPixel = 128; // 256 bytes under a 128-byte swizzle
  EXPECT_EQ(verify(params),
            "im2col TMA descriptor: the inner box dimension is 256 bytes, "
            "more than the 128-byte swizzle span");
}

//===----------------------------------------------------------------------===//
// With a GPU
//===----------------------------------------------------------------------===//

/// out[tid] = ntid - 1 - tid, exchanged through dynamic shared memory at a
/// byte offset given as the second parameter.
const char *const kReversePtx = R"(
.version 8.0
.target sm_80
.address_size 64

.extern .shared .align 16 .b8 dynamicShared[];

.visible .entry reverse_tid(.param .u64 out, .param .u32 sharedOffset)
{
  .reg .b32 %r<10>;
  .reg .b64 %rd<5>;
  ld.param.u64 %rd1, [out];
  ld.param.u32 %r1, [sharedOffset];
  cvta.to.global.u64 %rd2, %rd1;
  mov.u32 %r2, %tid.x;
  mov.u32 %r3, dynamicShared;
  add.u32 %r3, %r3, %r1;
  shl.b32 %r4, %r2, 2;
  add.u32 %r5, %r3, %r4;
  st.shared.u32 [%r5], %r2;
  bar.sync 0;
  mov.u32 %r6, %ntid.x;
  sub.u32 %r7, %r6, %r2;
  sub.u32 %r7, %r7, 1;
  shl.b32 %r8, %r7, 2;
  add.u32 %r8, %r3, %r8;
  ld.shared.u32 %r9, [%r8];
  mul.wide.u32 %rd3, %r2, 4;
  add.s64 %rd4, %rd2, %rd3;
  st.global.u32 [%rd4], %r9;
  ret;
}
)";

constexpr uint32_t kThreads = 256;

/// Dynamic shared memory above the 48 KiB default, within the device limit.
uint32_t largeSharedBytes(const DeviceInfo &info) {
  return std::min<uint32_t>(100 * 1024, info.maxSharedMemoryPerBlockOptin);
}

/// Through the mgpu wrappers, as lowered host code does: allocates the
/// output on `stream`, zeroes it and launches reverse_tid with more than
/// 48 KiB of dynamic shared memory. Returns the output (null on failure).
void *launchReverseWithWrappers(void *function, void *stream,
                                const DeviceInfo &info) {
  void *out = mgpuMemAlloc(kThreads * 4, stream, false);
  if (!out)
    return nullptr;
  mgpuMemset32(out, 0, kThreads, stream);
  uint32_t sharedBytes = largeSharedBytes(info);
  uint32_t offset = sharedBytes - kThreads * 4;
  void *params[] = {&out, &offset};
  mgpuLaunchKernel(function, 1, 1, 1, kThreads, 1, 1, int32_t(sharedBytes),
                   stream, params, nullptr, 2);
  return out;
}

void expectReversed(const std::vector<uint32_t> &values) {
  ASSERT_EQ(values.size(), kThreads);
  for (uint32_t i = 0; i < kThreads; ++i)
    ASSERT_EQ(values[i], kThreads - 1 - i) << "at " << i;
}

TEST(CudaDriverGpu, DeviceInfo) {
  SKIP_WITHOUT_GPU(driver);
  DeviceInfo info = unwrap(driver.deviceInfo());
  EXPECT_FALSE(info.name.empty());
  EXPECT_GE(info.ccMajor, 7);
  EXPECT_EQ(info.chip(), "sm_" + std::to_string(info.ccMajor) +
                             std::to_string(info.ccMinor));
  EXPECT_GT(info.multiprocessors, 0);
  EXPECT_GT(info.maxSharedMemoryPerBlockOptin, 48 * 1024);
  EXPECT_GT(info.totalMemory, size_t(1) << 30);
  EXPECT_GE(info.driverVersion, 12000);
  // The device in use is accepted again; another is not.
  ASSERT_NO_ERROR(CudaDriver::requestDevice(info.ordinal));
  llvm::Error other = CudaDriver::requestDevice(info.ordinal + 1);
  EXPECT_TRUE(bool(other));
  llvm::consumeError(std::move(other));
}

TEST(CudaDriverGpu, MemoryRoundTrip) {
  SKIP_WITHOUT_GPU(driver);
  constexpr size_t kCount = 1 << 18;
  void *device = unwrap(driver.allocate(kCount * 4));
  ASSERT_NE(device, nullptr);
  std::vector<uint32_t> host(kCount);

  ASSERT_NO_ERROR(driver.memsetD32(device, 0xdeadbeef, kCount));
  ASSERT_NO_ERROR(driver.copyToHost(host.data(), device, kCount * 4));
  EXPECT_TRUE(llvm::all_of(host, [](uint32_t v) { return v == 0xdeadbeef; }));

  ASSERT_NO_ERROR(driver.memsetD8(device, 0xab, kCount * 4));
  ASSERT_NO_ERROR(driver.copyToHost(host.data(), device, kCount * 4));
  EXPECT_TRUE(llvm::all_of(host, [](uint32_t v) { return v == 0xabababab; }));

  ASSERT_NO_ERROR(driver.memsetD16(device, 0x1234, kCount * 2));
  ASSERT_NO_ERROR(driver.copyToHost(host.data(), device, kCount * 4));
  EXPECT_TRUE(llvm::all_of(host, [](uint32_t v) { return v == 0x12341234; }));

  std::vector<uint32_t> pattern(kCount);
  for (size_t i = 0; i < kCount; ++i)
    pattern[i] = uint32_t(i * 2654435761u);
  ASSERT_NO_ERROR(driver.copyToDevice(device, pattern.data(), kCount * 4));
  std::fill(host.begin(), host.end(), 0);
  ASSERT_NO_ERROR(driver.copyToHost(host.data(), device, kCount * 4));
  EXPECT_EQ(host, pattern);

  // The same on a stream, with a stream-ordered allocation and a
  // device-to-device copy.
  void *stream = unwrap(driver.createStream());
  ASSERT_NE(stream, nullptr);
  void *second = unwrap(driver.allocate(kCount * 4, stream));
  ASSERT_NE(second, nullptr);
  ASSERT_NO_ERROR(driver.memsetD32(second, 0, kCount, stream));
  ASSERT_NO_ERROR(driver.copy(second, device, kCount * 4, stream));
  std::fill(host.begin(), host.end(), 0);
  ASSERT_NO_ERROR(driver.copyToHost(host.data(), second, kCount * 4, stream));
  ASSERT_NO_ERROR(driver.synchronize(stream));
  EXPECT_EQ(host, pattern);
  ASSERT_NO_ERROR(driver.free(second, stream));
  ASSERT_NO_ERROR(driver.synchronize(stream));
  ASSERT_NO_ERROR(driver.destroyStream(stream));
  ASSERT_NO_ERROR(driver.free(device));

  void *managed = unwrap(driver.allocateManaged(4096));
  ASSERT_NE(managed, nullptr);
  ASSERT_NO_ERROR(driver.memsetD32(managed, 42, 1024));
  EXPECT_EQ(static_cast<uint32_t *>(managed)[1023], 42u);
  ASSERT_NO_ERROR(driver.free(managed));
}

TEST(CudaDriverGpu, PoolMemoryCountsStreamOrderedAllocations) {
  SKIP_WITHOUT_GPU(driver);
  auto first = driver.poolMemory(/*resetHigh=*/true);
  if (!first)
    GTEST_SKIP() << llvm::toString(first.takeError());
  constexpr size_t kBytes = size_t(64) << 20;
  void *stream = unwrap(driver.createStream());
  void *buffer = unwrap(driver.allocate(kBytes, stream));
  ASSERT_NE(buffer, nullptr);
  CudaDriver::PoolMemory during = unwrap(driver.poolMemory());
  EXPECT_GE(during.used, first->used + kBytes);
  EXPECT_GE(during.usedHigh, during.used);
  EXPECT_GE(during.reserved, during.used);
  ASSERT_NO_ERROR(driver.free(buffer, stream));
  ASSERT_NO_ERROR(driver.synchronize(stream));
  // Freed: no longer used, still the high-water mark, still reserved (the
  // pool keeps what is freed); a reset brings the mark down to the use.
  CudaDriver::PoolMemory after = unwrap(driver.poolMemory(/*resetHigh=*/true));
  EXPECT_LT(after.used, during.used);
  EXPECT_GE(after.usedHigh, during.used);
  EXPECT_GE(after.reserved, during.used);
  CudaDriver::PoolMemory reset = unwrap(driver.poolMemory());
  EXPECT_EQ(reset.usedHigh, reset.used);
  // A driver of CUDA 11.4 or later reports the device's graph memory; no
  // graph holds any here.
  EXPECT_TRUE(reset.graphReported);
  EXPECT_EQ(reset.graphUsedHigh, reset.graphUsed);
  ASSERT_NO_ERROR(driver.destroyStream(stream));
}

TEST(CudaDriverGpu, CopyWithoutStreamIsCompleteForOtherStreams) {
  // A copy from pageable memory without a stream may return before its DMA
  // lands; the runtime's streams are non-blocking, so work on them could
  // read the old contents. The copy must be complete on return. Repeated,
  // with a large buffer, so the DMA's tail is still in flight without the
  // wait.
  SKIP_WITHOUT_GPU(driver);
  constexpr size_t kWords = size_t(64) << 20; // 256 MiB of uint32_t
  std::vector<uint32_t> host(kWords);
  std::vector<uint32_t> back(kWords);
  void *stream = unwrap(driver.createStream());
  void *source = unwrap(driver.allocate(kWords * 4));
  void *copy = unwrap(driver.allocate(kWords * 4));
  for (uint32_t round = 1; round <= 4; ++round) {
    for (size_t i = 0; i < kWords; ++i)
      host[i] = uint32_t(i) * 2654435761u + round;
    ASSERT_NO_ERROR(driver.memsetD32(source, 0, kWords));
    ASSERT_NO_ERROR(driver.copyToDevice(source, host.data(), kWords * 4));
    ASSERT_NO_ERROR(driver.copy(copy, source, kWords * 4, stream));
    ASSERT_NO_ERROR(driver.copyToHost(back.data(), copy, kWords * 4, stream));
    ASSERT_NO_ERROR(driver.synchronize(stream));
    size_t mismatches = 0;
    for (size_t i = 0; i < kWords; ++i)
      mismatches += back[i] != host[i];
    ASSERT_EQ(mismatches, 0u) << "round " << round;
  }
  ASSERT_NO_ERROR(driver.free(copy));
  ASSERT_NO_ERROR(driver.free(source));
  ASSERT_NO_ERROR(driver.destroyStream(stream));
}

TEST(CudaDriverGpu, FailedCallNamesCallAndError) {
  SKIP_WITHOUT_GPU(driver);
  auto huge = driver.allocate(size_t(1) << 50);
  ASSERT_FALSE(bool(huge));
  std::string message = llvm::toString(huge.takeError());
  // Out of memory names the bytes asked for.
  EXPECT_EQ(message.rfind("cuMemAlloc_v2 of 1125899906842624 bytes failed: "
                          "CUDA_ERROR_",
                          0),
            0u)
      << message;
}

TEST(CudaDriverGpu, DeviceOutOfMemoryIsAnErrorNamingTheBytes) {
  // What lowered host code calls: out of memory, and a size that went
  // negative, come back as deferred errors naming the bytes; the next call
  // works again.
  SKIP_WITHOUT_GPU(driver);
  (void)driver; // the wrappers find it themselves
  llvm::consumeError(CudaDriver::takeDeferredError());
  EXPECT_EQ(mgpuMemAlloc(uint64_t(1) << 50, nullptr, false), nullptr);
  std::string message = takeDeferred();
  EXPECT_NE(message.find("mgpuMemAlloc: cuMemAlloc"), std::string::npos)
      << message;
  EXPECT_NE(message.find("of 1125899906842624 bytes failed: CUDA_ERROR_"),
            std::string::npos)
      << message;
  EXPECT_EQ(mgpuMemAlloc(~uint64_t(0) - 7, nullptr, false), nullptr);
  EXPECT_EQ(takeDeferred(), "mgpuMemAlloc: a request for "
                            "18446744073709551608 bytes (a negative size)");
  void *small = mgpuMemAlloc(4096, nullptr, false);
  EXPECT_NE(small, nullptr);
  EXPECT_EQ(takeDeferred(), "");
  mgpuMemFree(small, nullptr);
  EXPECT_EQ(takeDeferred(), "");
}

TEST(CudaDriverGpu, ModuleLaunchWithLargeSharedMemory) {
  SKIP_WITHOUT_GPU(driver);
  DeviceInfo info = unwrap(driver.deviceInfo());
  void *module = unwrap(driver.loadModule(kReversePtx));
  ASSERT_NE(module, nullptr);
  void *function = unwrap(driver.getFunction(module, "reverse_tid"));
  ASSERT_NE(function, nullptr);
  // Found again without the driver (remembered until the module goes).
  EXPECT_EQ(unwrap(driver.getFunction(module, "reverse_tid")), function);

  auto missing = driver.getFunction(module, "no_such_kernel");
  ASSERT_FALSE(bool(missing));
  std::string message = llvm::toString(missing.takeError());
  EXPECT_NE(message.find("no_such_kernel"), std::string::npos) << message;
  EXPECT_NE(message.find("CUDA_ERROR_NOT_FOUND"), std::string::npos) << message;

  void *out = unwrap(driver.allocate(kThreads * 4));
  uint32_t sharedBytes = largeSharedBytes(info);
  ASSERT_GT(sharedBytes, 48u * 1024);
  uint32_t offset = sharedBytes - kThreads * 4; // the end of the buffer
  void *params[] = {&out, &offset};
  ASSERT_NO_ERROR(driver.launch(function, {1, 1, 1}, {kThreads, 1, 1},
                                sharedBytes, nullptr, params));
  ASSERT_NO_ERROR(driver.synchronize(nullptr));
  std::vector<uint32_t> values(kThreads);
  ASSERT_NO_ERROR(driver.copyToHost(values.data(), out, kThreads * 4));
  expectReversed(values);

  // More than the device has is refused before the driver is asked.
  llvm::Error tooMuch =
      driver.launch(function, {1, 1, 1}, {kThreads, 1, 1},
                    info.maxSharedMemoryPerBlockOptin + 1, nullptr, params);
  ASSERT_TRUE(bool(tooMuch));
  message = llvm::toString(std::move(tooMuch));
  EXPECT_NE(message.find("bytes of dynamic shared memory requested"),
            std::string::npos)
      << message;

  ASSERT_NO_ERROR(driver.free(out));
  ASSERT_NO_ERROR(driver.unloadModule(module));
}

TEST(CudaDriverGpu, ModuleLoadJIT) {
  SKIP_WITHOUT_GPU(driver);
  void *module = unwrap(driver.loadModuleJIT(kReversePtx, 3));
  ASSERT_NE(module, nullptr);
  ASSERT_NO_ERROR(driver.unloadModule(module));

  auto broken = driver.loadModuleJIT(".version 8.0\n.target sm_80\nbogus;", 3);
  ASSERT_FALSE(bool(broken));
  std::string message = llvm::toString(broken.takeError());
  EXPECT_EQ(message.rfind("cuModuleLoadDataEx failed: ", 0), 0u) << message;
}

TEST(CudaDriverGpu, EventsTime) {
  SKIP_WITHOUT_GPU(driver);
  void *stream = unwrap(driver.createStream());
  void *start = unwrap(driver.createEvent());
  void *end = unwrap(driver.createEvent());
  constexpr size_t kCount = size_t(64) << 20;
  void *buffer = unwrap(driver.allocate(kCount * 4));
  ASSERT_NE(buffer, nullptr);
  ASSERT_NO_ERROR(driver.recordEvent(start, stream));
  for (int i = 0; i < 4; ++i)
    ASSERT_NO_ERROR(driver.memsetD32(buffer, i, kCount, stream));
  ASSERT_NO_ERROR(driver.recordEvent(end, stream));
  ASSERT_NO_ERROR(driver.synchronizeEvent(end));
  float millis = unwrap(driver.elapsedMillis(start, end));
  EXPECT_GT(millis, 0.0f);
  ASSERT_NO_ERROR(driver.free(buffer));
  ASSERT_NO_ERROR(driver.destroyEvent(start));
  ASSERT_NO_ERROR(driver.destroyEvent(end));
  ASSERT_NO_ERROR(driver.destroyStream(stream));
}

TEST(CudaDriverGpu, WrappersEndToEnd) {
  SKIP_WITHOUT_GPU(driver);
  llvm::consumeError(CudaDriver::takeDeferredError());
  DeviceInfo info = unwrap(driver.deviceInfo());

  std::string ptx = kReversePtx;
  void *module = mgpuModuleLoadJIT(ptx.data(), 2);
  ASSERT_NE(module, nullptr) << takeDeferred();
  void *function = mgpuModuleGetFunction(module, "reverse_tid");
  ASSERT_NE(function, nullptr) << takeDeferred();
  void *stream = mgpuStreamCreate();
  ASSERT_NE(stream, nullptr) << takeDeferred();
  void *out = launchReverseWithWrappers(function, stream, info);
  ASSERT_NE(out, nullptr) << takeDeferred();
  void *event = mgpuEventCreate();
  mgpuEventRecord(event, stream);
  mgpuStreamWaitEvent(stream, event);
  std::vector<uint32_t> values(kThreads);
  mgpuMemcpy(values.data(), out, kThreads * 4, stream);
  mgpuStreamSynchronize(stream);
  mgpuEventSynchronize(event);
  ASSERT_EQ(takeDeferred(), "");
  expectReversed(values);

  // A cluster launch of the same kernel (sm_90+).
  if (info.ccMajor >= 9) {
    std::vector<uint32_t> clustered(kThreads);
    uint32_t sharedBytes = largeSharedBytes(info);
    uint32_t offset = sharedBytes - kThreads * 4;
    void *params[] = {&out, &offset};
    mgpuLaunchClusterKernel(function, 2, 1, 1, 2, 1, 1, kThreads, 1, 1,
                            int32_t(sharedBytes), stream, params, nullptr);
    mgpuMemcpy(clustered.data(), out, kThreads * 4, stream);
    mgpuStreamSynchronize(stream);
    ASSERT_EQ(takeDeferred(), "");
    expectReversed(clustered);
  }

  // Host registration of a memref.
  std::vector<float> hostBuffer(1024);
  MemRef2D memref{hostBuffer.data(), hostBuffer.data(), 0, {32, 32}, {32, 1}};
  mgpuMemHostRegisterMemRef(2, &memref, 4);
  mgpuMemHostUnregisterMemRef(2, &memref, 4);
  EXPECT_EQ(takeDeferred(), "");

  // A failed step is recorded, and later work is skipped until it is taken.
  EXPECT_EQ(mgpuModuleGetFunction(module, "no_such_kernel"), nullptr);
  EXPECT_TRUE(CudaDriver::hasDeferredError());
  EXPECT_EQ(mgpuMemAlloc(64, nullptr, false), nullptr);
  std::string message = takeDeferred();
  EXPECT_EQ(message.rfind("mgpuModuleGetFunction: kernel 'no_such_kernel': "
                          "cuModuleGetFunction failed: CUDA_ERROR_NOT_FOUND",
                          0),
            0u)
      << message;
  void *again = mgpuMemAlloc(64, nullptr, false);
  EXPECT_NE(again, nullptr);
  mgpuMemFree(again, nullptr);

  mgpuEventDestroy(event);
  mgpuMemFree(out, stream);
  mgpuStreamDestroy(stream);
  mgpuModuleUnload(module);
  EXPECT_EQ(takeDeferred(), "");
}

TEST(CudaDriverGpu, WrappersOnTheLegacyDefaultStream) {
  SKIP_WITHOUT_GPU(driver);
  llvm::consumeError(CudaDriver::takeDeferredError());
  DeviceInfo info = unwrap(driver.deviceInfo());
  // What lowered host code does on a caller's stream that is CUDA's legacy
  // default stream (PyTorch's default): "create" a stream (the caller's),
  // allocate on it, launch, then "synchronize" and "destroy" it, both
  // no-ops on a borrowed stream, so the work stays enqueued.
  ScopedCurrentStream scope(kLegacyDefaultStream);
  std::string ptx = kReversePtx;
  void *module = mgpuModuleLoadJIT(ptx.data(), 2);
  ASSERT_NE(module, nullptr) << takeDeferred();
  void *function = mgpuModuleGetFunction(module, "reverse_tid");
  void *stream = mgpuStreamCreate();
  EXPECT_EQ(stream, kLegacyDefaultStream);
  void *out = launchReverseWithWrappers(function, stream, info);
  ASSERT_NE(out, nullptr) << takeDeferred();
  mgpuStreamSynchronize(stream);
  mgpuStreamDestroy(stream);
  ASSERT_EQ(takeDeferred(), "");
  std::vector<uint32_t> values(kThreads);
  ASSERT_NO_ERROR(driver.copyToHost(values.data(), out, kThreads * 4,
                                    kLegacyDefaultStream));
  ASSERT_NO_ERROR(driver.synchronize(kLegacyDefaultStream));
  expectReversed(values);
  mgpuMemFree(out, stream);
  mgpuModuleUnload(module);
  EXPECT_EQ(takeDeferred(), "");
}

TEST(CudaDriverGpu, ManyThreads) {
  SKIP_WITHOUT_GPU(driver);
  (void)driver;
  // Fresh threads have no current context; every call must work there, and
  // each thread's deferred errors stay its own.
  constexpr int kThreadCount = 8;
  std::vector<std::string> failures(kThreadCount);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreadCount; ++t)
    threads.emplace_back([&, t] {
      constexpr size_t kCount = 1 << 16;
      for (int round = 0; round < 20 && failures[t].empty(); ++round) {
        void *stream = mgpuStreamCreate();
        void *device = mgpuMemAlloc(kCount * 4, stream, false);
        mgpuMemset32(device, uint32_t(t * 1000 + round), kCount, stream);
        std::vector<uint32_t> host(kCount);
        mgpuMemcpy(host.data(), device, kCount * 4, stream);
        mgpuStreamSynchronize(stream);
        mgpuMemFree(device, stream);
        mgpuStreamDestroy(stream);
        failures[t] = takeDeferred();
        if (failures[t].empty() && !llvm::all_of(host, [&](uint32_t v) {
              return v == uint32_t(t * 1000 + round);
            }))
          failures[t] = "wrong values in round " + std::to_string(round);
      }
      if (failures[t].empty()) {
        CudaDriver::deferError(llvm::createStringError(
            llvm::inconvertibleErrorCode(), "thread " + std::to_string(t)));
        failures[t] = takeDeferred() == "thread " + std::to_string(t)
                          ? ""
                          : "deferred errors crossed threads";
      }
    });
  for (std::thread &thread : threads)
    thread.join();
  for (int t = 0; t < kThreadCount; ++t)
    EXPECT_EQ(failures[t], "") << "thread " << t;
}

TEST(CudaDriverGpu, BorrowedRealStream) {
  SKIP_WITHOUT_GPU(driver);
  llvm::consumeError(CudaDriver::takeDeferredError());
  void *stream = unwrap(driver.createStream());
  {
    ScopedCurrentStream scope(stream);
    void *created = mgpuStreamCreate();
    EXPECT_EQ(created, stream);
    mgpuStreamSynchronize(created);
    mgpuStreamDestroy(created);
  }
  EXPECT_EQ(takeDeferred(), "");
  // Still the caller's and still alive.
  ASSERT_NO_ERROR(driver.synchronize(stream));
  ASSERT_NO_ERROR(driver.destroyStream(stream));
}

TEST(CudaDriverGpu, TensorMaps) {
  SKIP_WITHOUT_GPU(driver);
  DeviceInfo info = unwrap(driver.deviceInfo());
  if (info.ccMajor < 9)
    GTEST_SKIP() << "TMA needs sm_90, this is " << info.chip();
  llvm::consumeError(CudaDriver::takeDeferredError());
  constexpr size_t kBytes = 2 * 16 * 16 * 16 * 64 * 2;
  void *buffer = unwrap(driver.allocate(kBytes));
  ASSERT_NE(buffer, nullptr);

  TiledTensorMapParams tiled = validTiled();
  tiled.globalAddress = buffer;
  TensorMap tiledMap = unwrap(driver.encodeTiled(tiled));
  EXPECT_TRUE(llvm::any_of(tiledMap.opaque, [](uint64_t v) { return v; }));

  Im2colTensorMapParams im2col = validIm2col();
  im2col.globalAddress = buffer;
  TensorMap im2colMap;
  ASSERT_NO_ERROR(driver.encodeIm2col(im2col, im2colMap));

  // Checks run before the driver is asked.
  tiled.globalStrides = {100};
  auto bad = driver.encodeTiled(tiled);
  ASSERT_FALSE(bool(bad));
  EXPECT_EQ(llvm::toString(bad.takeError()),
            "tiled TMA descriptor: global stride 0 (of dimension 1) is 100 "
            "bytes, not a multiple of 16");

  void *first = unwrap(driver.uploadTensorMap(tiledMap));
  void *second = unwrap(driver.uploadTensorMap(im2colMap));
  EXPECT_NE(first, nullptr);
  EXPECT_NE(first, second);
  EXPECT_EQ(unwrap(driver.uploadTensorMap(tiledMap)), first);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(first) % 64, 0u);

  // Through the wrapper, as nvgpu.tma.create.descriptor lowers: a 256 x 64
  // bf16 memref, boxes of 64 x 64 (outermost first).
  MemRef2D memref{buffer, buffer, 0, {256, 64}, {64, 1}};
  int64_t box[2] = {64, 64};
  void *descriptor = mgpuTensorMapEncodeTiledMemref(
      2, &memref, int64_t(TensorMapDataType::BFloat16), 0,
      int64_t(TensorMapSwizzle::B128), 0, 0, box);
  EXPECT_NE(descriptor, nullptr) << takeDeferred();
  // The same tensor as validTiled(): the same descriptor, the cached copy.
  EXPECT_EQ(descriptor, first);
  EXPECT_EQ(takeDeferred(), "");

  // By parameters, uploaded in order on a stream: a new map lands in a new
  // slot, found again by its parameters and by its content, and the device
  // copy holds it once the stream has run.
  void *stream = unwrap(driver.createStream());
  Im2colTensorMapParams moved = validIm2col();
  moved.globalAddress = static_cast<char *>(buffer) + 1024;
  void *byParams = unwrap(driver.deviceTensorMap(moved, stream));
  EXPECT_EQ(unwrap(driver.deviceTensorMap(moved, stream)), byParams);
  TensorMap movedMap = unwrap(driver.encodeIm2col(moved));
  EXPECT_EQ(unwrap(driver.uploadTensorMap(movedMap, stream)), byParams);
  ASSERT_NO_ERROR(driver.synchronize(stream));
  TensorMap readBack;
  ASSERT_NO_ERROR(
      driver.copyToHost(&readBack, byParams, sizeof(TensorMap), nullptr));
  EXPECT_EQ(readBack.opaque, movedMap.opaque);
  // The same parameters from another stream (here: none known) share it.
  EXPECT_EQ(unwrap(driver.deviceTensorMap(moved, nullptr)), byParams);
  ASSERT_NO_ERROR(driver.destroyStream(stream));
  ASSERT_NO_ERROR(driver.free(buffer));
}

TEST(CudaDriverGpu, DescriptorWrappersRememberMaps) {
  SKIP_WITHOUT_GPU(driver);
  DeviceInfo info = unwrap(driver.deviceInfo());
  if (info.ccMajor < 9)
    GTEST_SKIP() << "TMA needs sm_90, this is " << info.chip();
  llvm::consumeError(CudaDriver::takeDeferredError());
  constexpr size_t kBytes = 2 * 16 * 16 * 16 * 64 * 2;
  void *buffer = unwrap(driver.allocate(kBytes));
  void *stream = unwrap(driver.createStream());
  // Lent as CompiledConv::run lends the caller's stream to host code.
  ScopedCurrentStream borrowed(stream);
  // A 16 x 16 x 64 bf16 tensor in boxes of 8 x 8 x 64, as lowered host code
  // asks for it (innermost first, element strides).
  auto ask = [&](void *address) {
    return conv3dTmaTiledDescriptor(
        int64_t(reinterpret_cast<uintptr_t>(address)),
        int64_t(TensorMapDataType::BFloat16), 64, 16, 16, 64, 64 * 16, 64, 8, 8,
        int64_t(TensorMapSwizzle::B128));
  };
  auto encoded = [&](void *address) {
    TiledTensorMapParams params;
    params.dataType = TensorMapDataType::BFloat16;
    params.globalAddress = address;
    params.globalDim = {64, 16, 16};
    params.globalStrides = {64 * 2, 64 * 16 * 2};
    params.boxDim = {64, 8, 8};
    params.swizzle = TensorMapSwizzle::B128;
    return unwrap(driver.encodeTiled(params)).opaque;
  };
  auto readBack = [&](int64_t map) {
    TensorMap copy;
    llvm::Error error = driver.synchronize(stream);
    if (!error)
      error = driver.copyToHost(&copy, reinterpret_cast<void *>(map),
                                sizeof(TensorMap), nullptr);
    if (error)
      ADD_FAILURE() << llvm::toString(std::move(error));
    return copy.opaque;
  };

  int64_t first = ask(buffer);
  ASSERT_NE(first, 0) << takeDeferred();
  EXPECT_EQ(readBack(first), encoded(buffer));
  // Uploaded and known complete: asked again (from the memo once the driver
  // has seen the upload finish), the same copy.
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(ask(buffer), first) << "repeat " << i;
  void *moved = static_cast<char *>(buffer) + 4096;
  int64_t second = ask(moved);
  EXPECT_NE(second, first);
  EXPECT_EQ(readBack(second), encoded(moved));
  EXPECT_EQ(ask(buffer), first);

  // Enough new maps for both generations of slots to be reused: the epoch
  // moves, and the wrapper's answer holds the right descriptor again.
  uint64_t epoch = driver.tensorMapEpoch();
  for (int i = 0; i < 2 * 4096 + 64; ++i) {
    Im2colTensorMapParams params = validIm2col();
    params.globalAddress = static_cast<char *>(buffer) + 16 * (i % 4096);
    params.pixelsPerColumn = 64 + 64 * (i / 4096);
    unwrap(driver.deviceTensorMap(params, stream));
  }
  EXPECT_GE(driver.tensorMapEpoch(), epoch + 2);
  for (int i = 0; i < 3; ++i) {
    int64_t again = ask(buffer);
    ASSERT_NE(again, 0) << takeDeferred();
    EXPECT_EQ(readBack(again), encoded(buffer)) << "after reuse, " << i;
  }
  EXPECT_EQ(takeDeferred(), "");
  ASSERT_NO_ERROR(driver.synchronize(stream));
  ASSERT_NO_ERROR(driver.destroyStream(stream));
  ASSERT_NO_ERROR(driver.free(buffer));
}

TEST(CudaDriverGpu, TensorMapCacheIsBounded) {
  SKIP_WITHOUT_GPU(driver);
  DeviceInfo info = unwrap(driver.deviceInfo());
  if (info.ccMajor < 9)
    GTEST_SKIP() << "TMA needs sm_90, this is " << info.chip();
  llvm::consumeError(CudaDriver::takeDeferredError());
  constexpr size_t kBytes = 2 * 16 * 16 * 16 * 64 * 2;
  void *buffer = unwrap(driver.allocate(kBytes));
  void *stream = unwrap(driver.createStream());
  // Far more distinct maps (addresses) than the 2 x 2048 slots: the slots
  // rotate (a context synchronization each time a retired generation is
  // reused) and every map read back is the one asked for.
  std::set<void *> slots;
  for (int i = 0; i < 3 * 4096; ++i) {
    Im2colTensorMapParams params = validIm2col();
    params.globalAddress = static_cast<char *>(buffer) + 16 * (i % 4096);
    params.pixelsPerColumn = 64 + 64 * (i / 4096);
    void *copy = unwrap(driver.deviceTensorMap(params, stream));
    slots.insert(copy);
    if (i % 997 == 0) {
      ASSERT_NO_ERROR(driver.synchronize(stream));
      TensorMap readBack;
      ASSERT_NO_ERROR(
          driver.copyToHost(&readBack, copy, sizeof(TensorMap), nullptr));
      EXPECT_EQ(readBack.opaque, unwrap(driver.encodeIm2col(params)).opaque)
          << "map " << i;
    }
  }
  EXPECT_LE(slots.size(), 4096u);
  ASSERT_NO_ERROR(driver.destroyStream(stream));
  ASSERT_NO_ERROR(driver.free(buffer));
}

} // namespace
