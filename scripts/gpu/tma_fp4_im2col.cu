// A hardware check, on an sm_90 GPU, of the TMA loads the real-NVFP4 sm100
// plan relies on (include/conv3d/Target/SM100/SM100BlockScaledPlan.h):
// a rank-5 im2col box over packed E2M1 codes (UINT8 [N][D][H][W][C/2], 128
// bytes = 256 FP4 channels per pixel, 128-byte swizzle) returns, for a tile
// of 128 output positions and one filter tap, exactly the rows of codes the
// implicit GEMM needs (zeros in the halo, past the batch), and a second
// im2col box of 16 bytes per pixel over the scales (UINT8 [N][D][H][W][C/16],
// no swizzle) the 16 scale bytes of each row. TMA is the same unit on sm90
// and sm100; this runs the loads, not the MMA. Standalone (no conv3d code):
//
//   nvcc -arch=sm_90a -O2 -o /tmp/tma_fp4 scripts/gpu/tma_fp4_im2col.cu -lcuda
//   /tmp/tma_fp4      # prints the boxes checked and the mismatches; exit 1 on any
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#define CHECK_CU(x)                                                            \
  do {                                                                         \
    CUresult r = (x);                                                          \
    if (r != CUDA_SUCCESS) {                                                   \
      const char *s = nullptr;                                                 \
      cuGetErrorString(r, &s);                                                 \
      std::printf("%s failed: %s\n", #x, s ? s : "?");                         \
      std::exit(2);                                                            \
    }                                                                          \
  } while (0)
#define CHECK_RT(x)                                                            \
  do {                                                                         \
    cudaError_t r = (x);                                                       \
    if (r != cudaSuccess) {                                                    \
      std::printf("%s failed: %s\n", #x, cudaGetErrorString(r));               \
      std::exit(2);                                                            \
    }                                                                          \
  } while (0)

struct Geometry {
  int n, d, h, w, c;           // input NDHW, channels
  int q, r, s;                 // window
  int stride[3], dil[3], padLo[3], padHi[3]; // d, h, w
  int out(int axis) const {
    int in[3] = {d, h, w}, win[3] = {q, r, s};
    return (in[axis] + padLo[axis] + padHi[axis] - dil[axis] * (win[axis] - 1) -
            1) / stride[axis] + 1;
  }
};

constexpr int kRows = 128;

// One box into shared memory, then copied out: `bytes` per row.
__global__ void loadBox(const __grid_constant__ CUtensorMap map, int c0,
                        int wc, int hc, int dc, int nc, uint16_t offW,
                        uint16_t offH, uint16_t offD, int rowBytes,
                        uint8_t *out) {
  extern __shared__ __align__(1024) uint8_t dynamic[];
  __shared__ uint64_t barrier;
  // The 128-byte swizzle needs a 1024-byte-aligned box.
  uint32_t base = static_cast<uint32_t>(__cvta_generic_to_shared(dynamic));
  uint32_t box = (base + 1023) & ~1023u;
  uint8_t *smem = dynamic + (box - base);
  uint32_t bar = static_cast<uint32_t>(__cvta_generic_to_shared(&barrier));
  int bytes = kRows * rowBytes;
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(bar));
    asm volatile("fence.mbarrier_init.release.cluster;");
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(
                     bar),
                 "r"(bytes));
    asm volatile(
        "cp.async.bulk.tensor.5d.shared::cluster.global.im2col.mbarrier::"
        "complete_tx::bytes [%0], [%1, {%2, %3, %4, %5, %6}], [%7], {%8, %9, "
        "%10};" ::"r"(box),
        "l"(&map), "r"(c0), "r"(wc), "r"(hc), "r"(dc), "r"(nc), "r"(bar),
        "h"(offW), "h"(offH), "h"(offD)
        : "memory");
  }
  __syncthreads();
  uint32_t done = 0;
  while (!done)
    asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, "
                 "[%1], 0; selp.u32 %0, 1, 0, p; }"
                 : "=r"(done)
                 : "r"(bar));
  for (int i = threadIdx.x; i < bytes; i += blockDim.x)
    out[i] = smem[i];
}

CUtensorMap im2colMap(void *data, const Geometry &g, int pixelBytes,
                      int boxBytes, CUtensorMapSwizzle swizzle) {
  CUtensorMap map;
  cuuint64_t dims[5] = {cuuint64_t(pixelBytes), cuuint64_t(g.w),
                        cuuint64_t(g.h), cuuint64_t(g.d), cuuint64_t(g.n)};
  cuuint64_t strides[4] = {cuuint64_t(pixelBytes),
                           cuuint64_t(pixelBytes) * g.w,
                           cuuint64_t(pixelBytes) * g.w * g.h,
                           cuuint64_t(pixelBytes) * g.w * g.h * g.d};
  int lower[3] = {-g.padLo[2], -g.padLo[1], -g.padLo[0]};
  int upper[3] = {g.padHi[2] - (g.s - 1) * g.dil[2],
                  g.padHi[1] - (g.r - 1) * g.dil[1],
                  g.padHi[0] - (g.q - 1) * g.dil[0]};
  cuuint32_t elementStrides[5] = {1, cuuint32_t(g.stride[2]),
                                  cuuint32_t(g.stride[1]),
                                  cuuint32_t(g.stride[0]), 1};
  CHECK_CU(cuTensorMapEncodeIm2col(
      &map, CU_TENSOR_MAP_DATA_TYPE_UINT8, 5, data, dims, strides, lower,
      upper, cuuint32_t(boxBytes), cuuint32_t(kRows), elementStrides,
      CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
      CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
  return map;
}

// Checks every (tile, tap, 256-channel block) of `g`; returns mismatches.
long checkGeometry(const Geometry &g, uint64_t seed) {
  int codeBytes = g.c / 2, scaleBytes = g.c / 16;
  size_t voxels = size_t(g.n) * g.d * g.h * g.w;
  std::vector<uint8_t> codes(voxels * codeBytes), scales(voxels * scaleBytes);
  std::mt19937_64 rng(seed);
  for (auto &b : codes)
    b = uint8_t(rng());
  for (auto &b : scales)
    b = uint8_t(rng() % 0x7F);
  void *dCodes, *dScales, *dOut;
  CHECK_RT(cudaMalloc(&dCodes, codes.size()));
  CHECK_RT(cudaMalloc(&dScales, scales.size()));
  CHECK_RT(cudaMalloc(&dOut, kRows * 128));
  CHECK_RT(cudaMemcpy(dCodes, codes.data(), codes.size(),
                      cudaMemcpyHostToDevice));
  CHECK_RT(cudaMemcpy(dScales, scales.data(), scales.size(),
                      cudaMemcpyHostToDevice));
  CUtensorMap codeMap =
      im2colMap(dCodes, g, codeBytes, 128, CU_TENSOR_MAP_SWIZZLE_128B);
  CUtensorMap scaleMap =
      im2colMap(dScales, g, scaleBytes, 16, CU_TENSOR_MAP_SWIZZLE_NONE);
  CHECK_RT(cudaFuncSetAttribute(
      loadBox, cudaFuncAttributeMaxDynamicSharedMemorySize,
      kRows * 128 + 1024));

  int od = g.out(0), oh = g.out(1), ow = g.out(2);
  long m = long(g.n) * od * oh * ow, mismatches = 0, boxes = 0;
  std::vector<uint8_t> got(kRows * 128);
  for (long m0 = 0; m0 < m; m0 += kRows) {
    long pos = m0;
    int wo = pos % ow, ho = (pos / ow) % oh, dO = (pos / ow / oh) % od,
        n = pos / ow / oh / od;
    for (int q = 0; q < g.q; ++q)
      for (int r = 0; r < g.r; ++r)
        for (int s = 0; s < g.s; ++s)
          for (int cb = 0; cb < (g.c + 255) / 256; ++cb)
            for (int kind = 0; kind < 2; ++kind) {
              bool isCodes = kind == 0;
              int rowBytes = isCodes ? 128 : 16;
              loadBox<<<1, 128, kRows * 128 + 1024>>>(
                  isCodes ? codeMap : scaleMap, cb * rowBytes,
                  wo * g.stride[2] - g.padLo[2], ho * g.stride[1] - g.padLo[1],
                  dO * g.stride[0] - g.padLo[0], n, uint16_t(s * g.dil[2]),
                  uint16_t(r * g.dil[1]), uint16_t(q * g.dil[0]), rowBytes,
                  static_cast<uint8_t *>(dOut));
              CHECK_RT(cudaGetLastError());
              CHECK_RT(cudaMemcpy(got.data(), dOut, kRows * rowBytes,
                                  cudaMemcpyDeviceToHost));
              ++boxes;
              for (int i = 0; i < kRows; ++i) {
                long mi = m0 + i;
                int w2 = mi % ow, h2 = (mi / ow) % oh, d2 = (mi / ow / oh) % od;
                long n2 = mi / ow / oh / od;
                int at[3] = {d2 * g.stride[0] - g.padLo[0] + q * g.dil[0],
                             h2 * g.stride[1] - g.padLo[1] + r * g.dil[1],
                             w2 * g.stride[2] - g.padLo[2] + s * g.dil[2]};
                bool inside = n2 < g.n && at[0] >= 0 && at[0] < g.d &&
                              at[1] >= 0 && at[1] < g.h && at[2] >= 0 &&
                              at[2] < g.w;
                size_t voxel =
                    ((size_t(n2) * g.d + at[0]) * g.h + at[1]) * g.w + at[2];
                for (int j = 0; j < rowBytes; ++j) {
                  int byte = cb * rowBytes + j;
                  int pixelBytes = isCodes ? codeBytes : scaleBytes;
                  uint8_t want = 0;
                  if (inside && byte < pixelBytes)
                    want = (isCodes ? codes : scales)[voxel * pixelBytes + byte];
                  // 128-byte swizzle: 16-byte chunk c of row i at c ^ (i % 8).
                  int at2 = isCodes ? i * 128 + (((j / 16) ^ (i % 8)) * 16) +
                                          j % 16
                                    : i * 16 + j;
                  if (got[at2] != want && mismatches++ < 5)
                    std::printf("  mismatch: %s m0 %ld tap %d,%d,%d block %d "
                                "row %d byte %d: got %u want %u\n",
                                isCodes ? "codes" : "scales", m0, q, r, s, cb,
                                i, j, got[at2], want);
                }
              }
            }
  }
  CHECK_RT(cudaFree(dCodes));
  CHECK_RT(cudaFree(dScales));
  CHECK_RT(cudaFree(dOut));
  std::printf("N%d D%d H%d W%d C%d win %dx%dx%d stride %d,%d,%d dil %d,%d,%d: "
              "%ld boxes, %ld mismatching bytes\n",
              g.n, g.d, g.h, g.w, g.c, g.q, g.r, g.s, g.stride[0], g.stride[1],
              g.stride[2], g.dil[0], g.dil[1], g.dil[2], boxes, mismatches);
  return mismatches;
}

int main() {
  CHECK_CU(cuInit(0));
  CHECK_RT(cudaSetDevice(0));
  long bad = 0;
  // Causal 3x3x3, C = 512 (two K steps), a ragged last tile, batch 2.
  bad += checkGeometry({2, 5, 9, 11, 512, 3, 3, 3, {1, 1, 1}, {1, 1, 1},
                        {2, 1, 1}, {0, 1, 1}},
                       1);
  // C = 256, strides 2 and dilation 2 in H and W.
  bad += checkGeometry({1, 6, 13, 12, 256, 3, 3, 3, {1, 2, 2}, {1, 2, 2},
                        {1, 2, 2}, {1, 2, 2}},
                       2);
  // C = 768 (three steps), 1x1x1 with stride 2.
  bad += checkGeometry({1, 4, 10, 10, 768, 1, 1, 1, {2, 2, 2}, {1, 1, 1},
                        {0, 0, 0}, {0, 0, 0}},
                       3);
  std::printf("%s\n", bad ? "FAIL" : "PASS");
  return bad ? 1 : 0;
}
