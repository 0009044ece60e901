// What the H100's wgmma computes, bit for bit, for the PTX emulator's MMA
// model (tools/ptx-emulator/ptxemu/mma_model.py): the PTX ISA defines the
// products and the f32 result of wgmma.mma_async .f32.bf16/.f16, not the
// order and precision of the sums inside one instruction.
//
// For each input type (bf16, f16) and distribution (below), TRIALS
// independent m64n16k16 products D = C + A B^T (one CTA each), or a K = 32
// product made of two chained wgmmas, or one without C (scale-d 0). The
// inputs are made on the host from a counter-based hash of (type,
// distribution, trial, operand, element) only, so wgmma_numerics_fit.py
// makes the same inputs and the file holds the results only:
//   header: 8 x u32 {magic 0x574d4d41, trials, types 2, dists, m 64, n 16,
//           k 16, 0}, then per type, distribution, trial: 64 x 16 f32 D
//           (row-major) of wgmma, then the same of mma.sync.m16n8k16 (the
//           sm80 kernels' MMA), then the first trial's A, B, C of each
//           (type, distribution) as a check of the generator.
// The operands sit in shared memory as TMA writes them (128-byte swizzle,
// K-major), the layout the sm90 kernels use.
//
//   nvcc -gencode arch=compute_90a,code=sm_90a -O2 -o /tmp/wgmma_numerics \
//     scripts/gpu/wgmma_numerics.cu && /tmp/wgmma_numerics OUT.bin [TRIALS]
// (a third argument --no-gpu writes zeros for D: a check of the input
// generator against wgmma_numerics_fit.py's on a machine without a GPU).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

constexpr int kM = 64, kN = 16, kK = 16;
constexpr int kDists = 7;
// Distributions: 0 normal-ish (exponents -4..2, C -5..5), 1 wide (A, B
// exponents -20..20, C -30..30), 2 cancelling (C = -fl32(sum of the
// products)), 3 tiny C (2^-40), 4 huge C (2^20), 5 chained (K = 32 as two
// wgmmas, normal-ish), 6 no C (scale-d 0, normal-ish).
enum Dist { kNormal, kWide, kCancel, kTinyC, kHugeC, kChained, kNoC };

uint64_t splitmix(uint64_t x) {
  uint64_t z = x + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint64_t key(int type, int dist, int trial, int which, int index) {
  return ((((uint64_t(type) * 8 + dist) * 65536 + trial) * 4 + which) << 16) +
         uint64_t(index);
}

/// An A or B element's bits (which 0: A, 1: B).
uint16_t element(int type, int dist, int trial, int which, int index) {
  uint64_t h = splitmix(key(type, dist, trial, which, index));
  uint32_t sign = h & 1;
  int wide = dist == kWide;
  if (type == 0) { // bf16
    int e = wide ? int((h >> 8) % 41) - 20 : int((h >> 8) % 7) - 4;
    return uint16_t(sign << 15 | uint32_t(127 + e) << 7 | ((h >> 1) & 0x7F));
  }
  int e = wide ? int((h >> 12) % 25) - 12 : int((h >> 12) % 7) - 4;
  return uint16_t(sign << 15 | uint32_t(15 + e) << 10 | ((h >> 1) & 0x3FF));
}

float toFloat(int type, uint16_t bits) {
  if (type == 0) {
    uint32_t u = uint32_t(bits) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
  uint32_t sign = bits >> 15, e = (bits >> 10) & 31, m = bits & 0x3FF;
  float v = e ? std::ldexp(1.f + m / 1024.f, int(e) - 15)
              : std::ldexp(m / 1024.f, -14);
  return sign ? -v : v;
}

/// C's bits (f32); the cancelling distribution needs the products.
uint32_t accumulator(int type, int dist, int trial, int index,
                     const std::vector<uint16_t> &a,
                     const std::vector<uint16_t> &b) {
  if (dist == kCancel) {
    int m = index / kN, n = index % kN;
    double sum = 0;
    for (int k = 0; k < kK; ++k)
      sum += double(toFloat(type, a[m * kK + k])) *
             double(toFloat(type, b[n * kK + k]));
    float c = float(-sum);
    uint32_t u;
    std::memcpy(&u, &c, 4);
    return u;
  }
  uint64_t h = splitmix(key(type, dist, trial, 2, index));
  uint32_t sign = h & 1;
  int e = dist == kWide    ? int((h >> 24) % 61) - 30
          : dist == kTinyC ? -40
          : dist == kHugeC ? 20
                           : int((h >> 24) % 11) - 5;
  return sign << 31 | uint32_t(127 + e) << 23 | uint32_t((h >> 1) & 0x7FFFFF);
}

__device__ uint32_t swizzle128(uint32_t addr) {
  return addr ^ (((addr >> 7) & 7) << 4);
}

__device__ uint64_t desc128(uint32_t addr) {
  return uint64_t((addr >> 4) & 0x3FFF) | uint64_t(1) << 16 |
         uint64_t(1024 >> 4) << 32 | uint64_t(1) << 62;
}

template <int kType>
__device__ void wgmma16(float (&acc)[8], uint64_t da, uint64_t db, int scaleD) {
  if (kType == 0)
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %10, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16 "
                 "{%0,%1,%2,%3,%4,%5,%6,%7}, %8, %9, p, 1, 1, 0, 0;\n}\n"
                 : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3]),
                   "+f"(acc[4]), "+f"(acc[5]), "+f"(acc[6]), "+f"(acc[7])
                 : "l"(da), "l"(db), "r"(scaleD));
  else
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %10, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 "
                 "{%0,%1,%2,%3,%4,%5,%6,%7}, %8, %9, p, 1, 1, 0, 0;\n}\n"
                 : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3]),
                   "+f"(acc[4]), "+f"(acc[5]), "+f"(acc[6]), "+f"(acc[7])
                 : "l"(da), "l"(db), "r"(scaleD));
}

/// One trial per CTA of 128 threads. a: 64 x kTotal, b: 16 x kTotal (K
/// contiguous), c: 64 x 16 f32 bits; d likewise.
template <int kType>
__global__ void trialKernel(const uint16_t *a, const uint16_t *b,
                            const uint32_t *c, float *d, int kTotal, int useC) {
  extern __shared__ __align__(1024) unsigned char raw[];
  unsigned char *smem =
      (unsigned char *)(((uintptr_t)raw + 1023) & ~(uintptr_t)1023);
  unsigned char *sa = smem, *sb = smem + kM * 128;
  int trial = blockIdx.x, tid = threadIdx.x;
  a += size_t(trial) * kM * kTotal;
  b += size_t(trial) * kN * kTotal;
  c += size_t(trial) * kM * kN;
  d += size_t(trial) * kM * kN;
  // Rows of 128 bytes (K <= 64), 16-byte chunks swizzled as TMA does.
  for (int i = tid; i < kM * 128 / 2; i += blockDim.x) {
    int r = i / 64, e = i % 64;
    uint16_t v = e < kTotal ? a[r * kTotal + e] : 0;
    *(uint16_t *)(sa + swizzle128(r * 128 + e * 2)) = v;
  }
  for (int i = tid; i < kN * 128 / 2; i += blockDim.x) {
    int r = i / 64, e = i % 64;
    uint16_t v = e < kTotal ? b[r * kTotal + e] : 0;
    *(uint16_t *)(sb + swizzle128(r * 128 + e * 2)) = v;
  }
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  __syncthreads();
  int warp = tid / 32, lane = tid % 32;
  float acc[8];
  for (int i = 0; i < 8; ++i) {
    int row = warp * 16 + lane / 4 + 8 * ((i % 4) / 2);
    int col = 8 * (i / 4) + 2 * (lane % 4) + i % 2;
    uint32_t u = c[row * kN + col];
    acc[i] = __uint_as_float(u);
  }
  uint32_t baseA = (uint32_t)__cvta_generic_to_shared(sa);
  uint32_t baseB = (uint32_t)__cvta_generic_to_shared(sb);
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
  for (int kk = 0; kk < kTotal / kK; ++kk)
    wgmma16<kType>(acc, desc128(baseA + kk * 32), desc128(baseB + kk * 32),
                   kk > 0 || useC);
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
  for (int i = 0; i < 8; ++i) {
    int row = warp * 16 + lane / 4 + 8 * ((i % 4) / 2);
    int col = 8 * (i / 4) + 2 * (lane % 4) + i % 2;
    d[row * kN + col] = acc[i];
  }
}

/// The same products by the sm80 kernels' mma.sync.m16n8k16 (warp w: rows
/// 16w..16w+15, both 8-column halves), fragments straight from global
/// memory (PTX ISA, "Matrix Fragments for mma.m16n8k16").
template <int kType>
__global__ void mmaSyncKernel(const uint16_t *a, const uint16_t *b,
                              const uint32_t *c, float *d, int kTotal,
                              int useC) {
  int trial = blockIdx.x, tid = threadIdx.x;
  a += size_t(trial) * kM * kTotal;
  b += size_t(trial) * kN * kTotal;
  c += size_t(trial) * kM * kN;
  d += size_t(trial) * kM * kN;
  int warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
  int r0 = warp * 16 + g;
  auto pair = [&](const uint16_t *p, int row, int col) {
    return uint32_t(p[row * kTotal + col]) | uint32_t(p[row * kTotal + col + 1])
                                                 << 16;
  };
  for (int nb = 0; nb < 2; ++nb) {
    float acc[4];
    for (int i = 0; i < 4; ++i) {
      int row = r0 + 8 * (i / 2), col = nb * 8 + 2 * t + i % 2;
      acc[i] = useC ? __uint_as_float(c[row * kN + col]) : 0.f;
    }
    for (int k0 = 0; k0 < kTotal; k0 += 16) {
      uint32_t a0 = pair(a, r0, k0 + 2 * t), a1 = pair(a, r0 + 8, k0 + 2 * t);
      uint32_t a2 = pair(a, r0, k0 + 2 * t + 8);
      uint32_t a3 = pair(a, r0 + 8, k0 + 2 * t + 8);
      // B is K-major per column n: element (k, n) at b[n * kTotal + k].
      uint32_t b0 = pair(b, nb * 8 + g, k0 + 2 * t);
      uint32_t b1 = pair(b, nb * 8 + g, k0 + 2 * t + 8);
      if (kType == 0)
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                     "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                     : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3])
                     : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
      else
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                     "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                     : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3])
                     : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
    }
    for (int i = 0; i < 4; ++i) {
      int row = r0 + 8 * (i / 2), col = nb * 8 + 2 * t + i % 2;
      d[row * kN + col] = acc[i];
    }
  }
}

#define CHECK(x)                                                               \
  do {                                                                         \
    cudaError_t e = (x);                                                       \
    if (e != cudaSuccess) {                                                    \
      std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e));             \
      return 1;                                                                \
    }                                                                          \
  } while (0)

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s OUT.bin [TRIALS]\n", argv[0]);
    return 2;
  }
  int trials = argc > 2 ? std::atoi(argv[2]) : 200;
  bool noGpu = argc > 3 && std::strcmp(argv[3], "--no-gpu") == 0;
  FILE *out = std::fopen(argv[1], "wb");
  uint32_t header[8] = {0x574d4d41, uint32_t(trials), 2, kDists, kM, kN, kK, 0};
  std::fwrite(header, 4, 8, out);
  std::vector<std::vector<uint8_t>> checks;
  std::vector<std::vector<float>> syncResults;
  int smem = (kM + kN) * 128 + 1024;
  if (!noGpu) {
    CHECK(cudaFuncSetAttribute(
        trialKernel<0>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    CHECK(cudaFuncSetAttribute(
        trialKernel<1>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  }
  for (int type = 0; type < 2; ++type)
    for (int dist = 0; dist < kDists; ++dist) {
      int kTotal = dist == kChained ? 2 * kK : kK;
      std::vector<uint16_t> a(size_t(trials) * kM * kTotal),
          b(size_t(trials) * kN * kTotal);
      std::vector<uint32_t> c(size_t(trials) * kM * kN);
      for (int t = 0; t < trials; ++t) {
        std::vector<uint16_t> ta(kM * kTotal), tb(kN * kTotal);
        for (int i = 0; i < kM * kTotal; ++i)
          ta[i] = element(type, dist, t, 0, i);
        for (int i = 0; i < kN * kTotal; ++i)
          tb[i] = element(type, dist, t, 1, i);
        std::copy(ta.begin(), ta.end(), a.begin() + size_t(t) * kM * kTotal);
        std::copy(tb.begin(), tb.end(), b.begin() + size_t(t) * kN * kTotal);
        for (int i = 0; i < kM * kN; ++i)
          c[size_t(t) * kM * kN + i] =
              dist == kNoC ? 0x7FC00000u // NaN: must not be read
                           : accumulator(type, dist, t, i, ta, tb);
      }
      std::vector<float> d(c.size(), 0.f), dSync(c.size(), 0.f);
      if (!noGpu) {
        uint16_t *da, *db;
        uint32_t *dc;
        float *dd;
        CHECK(cudaMalloc(&da, a.size() * 2));
        CHECK(cudaMalloc(&db, b.size() * 2));
        CHECK(cudaMalloc(&dc, c.size() * 4));
        CHECK(cudaMalloc(&dd, c.size() * 4));
        CHECK(cudaMemcpy(da, a.data(), a.size() * 2, cudaMemcpyHostToDevice));
        CHECK(cudaMemcpy(db, b.data(), b.size() * 2, cudaMemcpyHostToDevice));
        CHECK(cudaMemcpy(dc, c.data(), c.size() * 4, cudaMemcpyHostToDevice));
        CHECK(cudaMemset(dd, 0xFF, c.size() * 4));
        if (type == 0)
          trialKernel<0>
              <<<trials, 128, smem>>>(da, db, dc, dd, kTotal, dist != kNoC);
        else
          trialKernel<1>
              <<<trials, 128, smem>>>(da, db, dc, dd, kTotal, dist != kNoC);
        CHECK(cudaDeviceSynchronize());
        CHECK(cudaMemcpy(d.data(), dd, d.size() * 4, cudaMemcpyDeviceToHost));
        CHECK(cudaMemset(dd, 0xFF, c.size() * 4));
        if (type == 0)
          mmaSyncKernel<0>
              <<<trials, 128>>>(da, db, dc, dd, kTotal, dist != kNoC);
        else
          mmaSyncKernel<1>
              <<<trials, 128>>>(da, db, dc, dd, kTotal, dist != kNoC);
        CHECK(cudaDeviceSynchronize());
        CHECK(cudaMemcpy(dSync.data(), dd, dSync.size() * 4,
                         cudaMemcpyDeviceToHost));
        cudaFree(da);
        cudaFree(db);
        cudaFree(dc);
        cudaFree(dd);
      }
      std::fwrite(d.data(), 4, d.size(), out);
      syncResults.push_back(dSync);
      std::vector<uint8_t> check(kM * kTotal * 2 + kN * kTotal * 2 +
                                 kM * kN * 4);
      std::memcpy(check.data(), a.data(), kM * kTotal * 2);
      std::memcpy(check.data() + kM * kTotal * 2, b.data(), kN * kTotal * 2);
      std::memcpy(check.data() + (kM + kN) * kTotal * 2, c.data(), kM * kN * 4);
      checks.push_back(check);
    }
  for (auto &r : syncResults)
    std::fwrite(r.data(), 4, r.size(), out);
  for (auto &check : checks)
    std::fwrite(check.data(), 1, check.size(), out);
  std::fclose(out);
  std::printf("wgmma_numerics: %d trials x 2 types x %d distributions written "
              "to %s\n",
              trials, kDists, argv[1]);
  return 0;
}
