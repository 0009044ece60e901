// Checks on the H100 how wgmma reads a swizzled K-major A operand whose
// start lies a whole number of rows past a swizzle atom, the way the sm90
// halo mainloop reads its halo tile per filter tap (row s of the tile is
// output row 0 of tap s). The tiles are written as TMA writes them (the
// 16-byte chunk bits of each byte address XOR its bits 7 and up, from a
// 1024-byte-aligned base), with 128-byte rows (128-byte swizzle, K = 64)
// and 64-byte rows (64-byte swizzle, K = 32). For each row offset s in
// [0, 16) and each setting of the descriptor's base-offset field (0, or
// (start >> 7) & 7), one m64n64 product is compared with a host reference.
//
// Result on the H100 (2026-11-24): with the base-offset field 0 every row
// offset is exact for both swizzles (wgmma swizzles by address bits); with
// (start >> 7) & 7 the 128-byte swizzle is wrong at every offset that is
// not a multiple of 8 rows.
//
//   nvcc -gencode arch=compute_90a,code=sm_90a -O2 \
//     -o /tmp/wgmma_row_offset scripts/gpu/wgmma_row_offset.cu
//   /tmp/wgmma_row_offset
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cuda_bf16.h>

constexpr int kRows = 96; // A rows in shared memory (64 + halo)
constexpr int kK = 64;    // channels: one 128-byte row
constexpr int kN = 64;

// rowBytes 128: 128-byte swizzle; 64: 64-byte swizzle.
__device__ uint64_t makeDesc(uint32_t addr, uint32_t baseOffset, int rowBytes) {
  uint64_t d = 0;
  d |= (uint64_t)((addr >> 4) & 0x3FFF);
  d |= (uint64_t)1 << 16;                   // LBO (unused, swizzled K-major)
  d |= (uint64_t)(8 * rowBytes >> 4) << 32; // SBO: 8 rows
  d |= (uint64_t)(baseOffset & 7) << 49;    // matrix base offset
  d |= (uint64_t)(rowBytes == 128 ? 1 : 2) << 62;
  return d;
}

__device__ void wgmma64(float (&acc)[32], uint64_t da, uint64_t db,
                        int scaleD) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 "
      "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,"
      "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31}, "
      "%32, %33, p, 1, 1, 0, 0;\n}\n"
      : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3]), "+f"(acc[4]),
        "+f"(acc[5]), "+f"(acc[6]), "+f"(acc[7]), "+f"(acc[8]), "+f"(acc[9]),
        "+f"(acc[10]), "+f"(acc[11]), "+f"(acc[12]), "+f"(acc[13]),
        "+f"(acc[14]), "+f"(acc[15]), "+f"(acc[16]), "+f"(acc[17]),
        "+f"(acc[18]), "+f"(acc[19]), "+f"(acc[20]), "+f"(acc[21]),
        "+f"(acc[22]), "+f"(acc[23]), "+f"(acc[24]), "+f"(acc[25]),
        "+f"(acc[26]), "+f"(acc[27]), "+f"(acc[28]), "+f"(acc[29]),
        "+f"(acc[30]), "+f"(acc[31])
      : "l"(da), "l"(db), "r"(scaleD));
}

// TMA's swizzle of byte `addr` (from a 1024-byte-aligned base): 16-byte
// chunk bits [4, 4 + log2(rowBytes / 16)) XOR address bits [7, ...).
__host__ __device__ uint32_t swizzle(uint32_t addr, int rowBytes) {
  uint32_t mask = rowBytes / 16 - 1;
  return addr ^ (((addr >> 7) & mask) << 4);
}

// One block of 128 threads; out[s][mode][64][64]. K = rowBytes / 2.
__global__ void kernel(const __nv_bfloat16 *a, const __nv_bfloat16 *b,
                       float *out, int rowBytes) {
  extern __shared__ __align__(1024) unsigned char raw[];
  unsigned char *smem =
      (unsigned char *)(((uintptr_t)raw + 1023) & ~(uintptr_t)1023);
  unsigned char *sa = smem, *sb = smem + kRows * 128;
  int tid = threadIdx.x, chunks = rowBytes / 16, k = rowBytes / 2;
  for (int i = tid; i < kRows * chunks; i += blockDim.x) {
    int r = i / chunks, j = i % chunks;
    *(uint4 *)(sa + swizzle(r * rowBytes + j * 16, rowBytes)) =
        *(const uint4 *)(a + r * k + j * 8);
  }
  for (int i = tid; i < kN * chunks; i += blockDim.x) {
    int r = i / chunks, j = i % chunks;
    *(uint4 *)(sb + swizzle(r * rowBytes + j * 16, rowBytes)) =
        *(const uint4 *)(b + r * k + j * 8);
  }
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  __syncthreads();
  uint32_t baseA = (uint32_t)__cvta_generic_to_shared(sa);
  uint32_t baseB = (uint32_t)__cvta_generic_to_shared(sb);
  int warp = tid / 32, lane = tid % 32;
  for (int s = 0; s < 16; ++s) {
    for (int mode = 0; mode < 2; ++mode) {
      float acc[32];
      for (int i = 0; i < 32; ++i)
        acc[i] = 0.f;
      asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
      for (int kk = 0; kk < k / 16; ++kk) {
        uint32_t startA = baseA + s * rowBytes + kk * 32;
        uint32_t bo = mode ? ((startA >> 7) & 7) : 0;
        wgmma64(acc, makeDesc(startA, bo, rowBytes),
                makeDesc(baseB + kk * 32, 0, rowBytes), kk > 0);
      }
      asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
      asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
      float *o = out + (size_t)(s * 2 + mode) * 64 * kN;
      for (int j = 0; j < kN / 8; ++j)
        for (int h = 0; h < 2; ++h)
          for (int c = 0; c < 2; ++c) {
            int row = warp * 16 + lane / 4 + 8 * h;
            int col = 8 * j + (lane % 4) * 2 + c;
            o[row * kN + col] = acc[4 * j + 2 * h + c];
          }
    }
  }
}

int main() {
  size_t na = kRows * kK, nb = kN * kK, no = 16 * 2 * 64 * kN;
  __nv_bfloat16 *ha = (__nv_bfloat16 *)malloc(na * 2),
                *hb = (__nv_bfloat16 *)malloc(nb * 2);
  float *fa = (float *)malloc(na * 4), *fb = (float *)malloc(nb * 4);
  srand(7);
  for (size_t i = 0; i < na; ++i) {
    ha[i] = __float2bfloat16((rand() % 17 - 8) / 8.f);
    fa[i] = __bfloat162float(ha[i]);
  }
  for (size_t i = 0; i < nb; ++i) {
    hb[i] = __float2bfloat16((rand() % 17 - 8) / 8.f);
    fb[i] = __bfloat162float(hb[i]);
  }
  __nv_bfloat16 *da, *db;
  float *dout;
  cudaMalloc(&da, na * 2);
  cudaMalloc(&db, nb * 2);
  cudaMalloc(&dout, no * 4);
  cudaMemcpy(da, ha, na * 2, cudaMemcpyHostToDevice);
  cudaMemcpy(db, hb, nb * 2, cudaMemcpyHostToDevice);
  int smem = kRows * 128 + kN * 128 + 1024;
  cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                       smem);
  for (int rowBytes : {128, 64}) {
    int k = rowBytes / 2;
    // A row r, channel c at a[r * k + c]; B likewise (K-major).
    for (size_t i = 0; i < na; ++i)
      fa[i] = __bfloat162float(ha[i]);
    cudaMemset(dout, 0xFF, no * 4); // NaN poison
    kernel<<<1, 128, smem>>>(da, db, dout, rowBytes);
    cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) {
      printf("CUDA error: %s\n", cudaGetErrorString(e));
      return 1;
    }
    float *hout = (float *)malloc(no * 4);
    cudaMemcpy(hout, dout, no * 4, cudaMemcpyDeviceToHost);
    for (int s = 0; s < 16; ++s)
      for (int mode = 0; mode < 2; ++mode) {
        double maxErr = 0;
        for (int m = 0; m < 64; ++m)
          for (int n = 0; n < kN; ++n) {
            double ref = 0;
            for (int c = 0; c < k; ++c)
              ref += (double)fa[(s + m) * k + c] * fb[n * k + c];
            double got = hout[(size_t)(s * 2 + mode) * 64 * kN + m * kN + n];
            double err = std::fabs(got - ref);
            if (!(err <= maxErr))
              maxErr = std::isnan(err) ? INFINITY : std::max(maxErr, err);
          }
        bool ok = maxErr < 1e-3;
        printf("%3d-byte swizzle, row offset %2d, base offset field %s: "
               "max |err| %g %s\n",
               rowBytes, s, mode ? "(start>>7)&7" : "0          ", maxErr,
               ok ? "EXACT" : "WRONG");
      }
  }
  return 0;
}
