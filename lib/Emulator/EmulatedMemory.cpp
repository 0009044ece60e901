//===- EmulatedMemory.cpp - device memory of the emulated driver ----------===//
//
// The arena is a memfd mapped MAP_SHARED: the PTX emulator, a child
// process, inherits the descriptor and maps the same pages, so kernels read
// and write what the host code copied, in place. Device pointers are the
// arena's addresses in this process, so the driver's copies are memcpy.
//
//===----------------------------------------------------------------------===//

#include "EmulatedDevice.h"

#include <cstring>
#include <sys/mman.h>
#include <unistd.h>

using namespace conv3d_emulator;

namespace {
constexpr size_t kAlignment = 512; // cudaMalloc gives at least 256
size_t alignUp(size_t n) {
  return (n + kAlignment - 1) / kAlignment * kAlignment;
}
} // namespace

bool Arena::open(size_t bytes, std::string &error) {
  fd_ = int(memfd_create("conv3d-emulated-device", 0));
  if (fd_ < 0) {
    error = std::string("memfd_create: ") + std::strerror(errno);
    return false;
  }
  if (ftruncate(fd_, off_t(bytes)) != 0) {
    error = std::string("ftruncate: ") + std::strerror(errno);
    return false;
  }
  void *p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
  if (p == MAP_FAILED) {
    error = std::string("mmap: ") + std::strerror(errno);
    return false;
  }
  base_ = static_cast<char *>(p);
  size_ = bytes;
  free_[base()] = bytes;
  return true;
}

void *Arena::allocate(size_t bytes) {
  size_t need = alignUp(bytes ? bytes : 1);
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    if (it->second < need)
      continue;
    uintptr_t at = it->first;
    size_t rest = it->second - need;
    free_.erase(it);
    if (rest)
      free_[at + need] = rest;
    used_[at] = need;
    std::memset(reinterpret_cast<void *>(at), 0xff, need);
    return reinterpret_cast<void *>(at);
  }
  return nullptr;
}

bool Arena::free(void *ptr) {
  auto it = used_.find(reinterpret_cast<uintptr_t>(ptr));
  if (it == used_.end())
    return false;
  uintptr_t at = it->first;
  size_t n = it->second;
  used_.erase(it);
  // Merge with the free neighbours.
  auto next = free_.lower_bound(at);
  if (next != free_.end() && next->first == at + n) {
    n += next->second;
    next = free_.erase(next);
  }
  if (next != free_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == at) {
      prev->second += n;
      return true;
    }
  }
  free_[at] = n;
  return true;
}

bool Arena::contains(const void *ptr, size_t bytes) const {
  uintptr_t p = reinterpret_cast<uintptr_t>(ptr);
  auto it = used_.upper_bound(p);
  if (it == used_.begin())
    return false;
  --it;
  return p + bytes <= it->first + it->second;
}

bool Arena::owns(const void *ptr) const {
  uintptr_t p = reinterpret_cast<uintptr_t>(ptr);
  return p >= base() && p < base() + size_;
}

std::vector<std::pair<uintptr_t, size_t>> Arena::live() const {
  return {used_.begin(), used_.end()};
}

//===----------------------------------------------------------------------===//
// The driver's memory entry points
//===----------------------------------------------------------------------===//

namespace {

CUresult allocate(CUdeviceptr *out, size_t bytes) {
  Device *dev = device();
  if (!dev)
    return fail(CUDA_ERROR_NOT_INITIALIZED, "cuInit was not called");
  if (!out)
    return fail(CUDA_ERROR_INVALID_VALUE, "no result pointer");
  std::lock_guard<std::mutex> lock(dev->mutex);
  void *p = dev->arena.allocate(bytes);
  if (!p)
    return fail(CUDA_ERROR_OUT_OF_MEMORY,
                "the emulated device's " + std::to_string(dev->arena.size()) +
                    "-byte arena is full (CONV3D_EMULATOR_MEMORY_MB)");
  *out = reinterpret_cast<CUdeviceptr>(p);
  return CUDA_SUCCESS;
}

CUresult release(CUdeviceptr ptr) {
  Device *dev = device();
  if (!dev)
    return fail(CUDA_ERROR_NOT_INITIALIZED, "cuInit was not called");
  std::lock_guard<std::mutex> lock(dev->mutex);
  if (!dev->arena.free(reinterpret_cast<void *>(ptr)))
    return fail(CUDA_ERROR_INVALID_VALUE, "freeing memory that is not a live "
                                          "allocation");
  return CUDA_SUCCESS;
}

template <typename T> CUresult fill(CUdeviceptr dst, T value, size_t count) {
  T *p = reinterpret_cast<T *>(dst);
  Device *dev = device();
  if (dev && !dev->arena.contains(p, count * sizeof(T)))
    return fail(CUDA_ERROR_INVALID_VALUE,
                "memset outside the emulated device's allocations");
  for (size_t i = 0; i < count; ++i)
    p[i] = value;
  return CUDA_SUCCESS;
}

CUresult copy(void *dst, const void *src, size_t bytes) {
  if (bytes)
    std::memmove(dst, src, bytes);
  return CUDA_SUCCESS;
}

} // namespace

extern "C" {

CUresult cuMemAlloc(CUdeviceptr *ptr, size_t bytes) {
  return allocate(ptr, bytes);
}
CUresult cuMemAllocManaged(CUdeviceptr *ptr, size_t bytes, unsigned int) {
  return allocate(ptr, bytes);
}
CUresult cuMemAllocAsync(CUdeviceptr *ptr, size_t bytes, CUstream) {
  return allocate(ptr, bytes);
}
CUresult cuMemAllocFromPoolAsync(CUdeviceptr *ptr, size_t bytes, CUmemoryPool,
                                 CUstream) {
  return allocate(ptr, bytes);
}
CUresult cuMemAllocHost(void **ptr, size_t bytes) {
  CUdeviceptr p = 0;
  CUresult r = allocate(&p, bytes);
  *ptr = reinterpret_cast<void *>(p);
  return r;
}
CUresult cuMemPoolCreate(CUmemoryPool *, const CUmemPoolProps *) {
  return fail(CUDA_ERROR_NOT_SUPPORTED, "no memory pools on the emulator");
}
CUresult cuMemPoolSetAttribute(CUmemoryPool, CUmemPool_attribute, void *) {
  return fail(CUDA_ERROR_NOT_SUPPORTED, "no memory pools on the emulator");
}
CUresult cuMemPoolGetAttribute(CUmemoryPool, CUmemPool_attribute, void *) {
  return fail(CUDA_ERROR_NOT_SUPPORTED, "no memory pools on the emulator");
}
CUresult cuDeviceGetGraphMemAttribute(CUdevice, CUgraphMem_attribute, void *) {
  return fail(CUDA_ERROR_NOT_SUPPORTED, "no CUDA graphs on the emulator");
}
CUresult cuDeviceSetGraphMemAttribute(CUdevice, CUgraphMem_attribute, void *) {
  return fail(CUDA_ERROR_NOT_SUPPORTED, "no CUDA graphs on the emulator");
}
CUresult cuMemFree(CUdeviceptr ptr) { return release(ptr); }
CUresult cuMemFreeAsync(CUdeviceptr ptr, CUstream) { return release(ptr); }
CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t bytes) {
  return copy(reinterpret_cast<void *>(dst), reinterpret_cast<void *>(src),
              bytes);
}
CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t bytes,
                       CUstream) {
  return cuMemcpy(dst, src, bytes);
}
CUresult cuMemcpyHtoD(CUdeviceptr dst, const void *src, size_t bytes) {
  return copy(reinterpret_cast<void *>(dst), src, bytes);
}
CUresult cuMemcpyHtoDAsync(CUdeviceptr dst, const void *src, size_t bytes,
                           CUstream) {
  return cuMemcpyHtoD(dst, src, bytes);
}
CUresult cuMemcpyDtoH(void *dst, CUdeviceptr src, size_t bytes) {
  return copy(dst, reinterpret_cast<void *>(src), bytes);
}
CUresult cuMemcpyDtoHAsync(void *dst, CUdeviceptr src, size_t bytes, CUstream) {
  return cuMemcpyDtoH(dst, src, bytes);
}
CUresult cuMemsetD8(CUdeviceptr dst, unsigned char v, size_t n) {
  return fill<unsigned char>(dst, v, n);
}
CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char v, size_t n, CUstream) {
  return fill<unsigned char>(dst, v, n);
}
CUresult cuMemsetD16(CUdeviceptr dst, unsigned short v, size_t n) {
  return fill<unsigned short>(dst, v, n);
}
CUresult cuMemsetD16Async(CUdeviceptr dst, unsigned short v, size_t n,
                          CUstream) {
  return fill<unsigned short>(dst, v, n);
}
CUresult cuMemsetD32(CUdeviceptr dst, unsigned int v, size_t n) {
  return fill<unsigned int>(dst, v, n);
}
CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned int v, size_t n, CUstream) {
  return fill<unsigned int>(dst, v, n);
}
// Host memory the device may read: kernels here only reach the arena, so
// registering is accepted and a kernel touching such memory is reported by
// the emulator.
CUresult cuMemHostRegister(void *, size_t, unsigned int) {
  return CUDA_SUCCESS;
}
CUresult cuMemHostUnregister(void *) { return CUDA_SUCCESS; }

} // extern "C"
