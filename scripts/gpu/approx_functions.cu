// The H100's results of the approximate PTX instructions the kernels use
// (ex2.approx.ftz.f32 in SiLU and GELU, rsqrt.approx.f32 in the RMS-norm
// prologue, rcp.approx.ftz.f32): the ISA bounds their error and does not
// define their bits, so the PTX emulator rounds them correctly and these
// results tell how far that is from the hardware (README, "PTX emulator").
// Inputs: COUNT values per function from a counter-based hash (the same
// function in approx_functions_check.py), in each function's useful range;
// the output file holds, per function, COUNT f32 results.
//
//   nvcc -gencode arch=compute_90a,code=sm_90a -o /tmp/approx_functions \
//     scripts/gpu/approx_functions.cu && /tmp/approx_functions OUT.bin
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

constexpr int kCount = 1 << 18;

__host__ __device__ uint64_t splitmix(uint64_t x) {
  uint64_t z = x + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// Input i of function f: ex2 in [-32, 8], rsqrt and rcp in [2^-20, 2^20],
/// as f32 bits (a random exponent and mantissa).
__host__ __device__ uint32_t input(int f, uint32_t i) {
  uint64_t h = splitmix((uint64_t(f) << 32) | i);
  uint32_t mant = uint32_t(h & 0x7FFFFF);
  if (f == 0) {
    int e = int((h >> 23) % 12) - 7; // |x| in [2^-7, 2^5)
    uint32_t sign = (h >> 40) & 1;
    return sign << 31 | uint32_t(127 + e) << 23 | mant;
  }
  int e = int((h >> 23) % 41) - 20;
  return uint32_t(127 + e) << 23 | mant;
}

__global__ void run(float *out) {
  uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= kCount)
    return;
  float x0 = __uint_as_float(input(0, i)), y0;
  float x1 = __uint_as_float(input(1, i)), y1;
  float x2 = __uint_as_float(input(2, i)), y2;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y0) : "f"(x0));
  asm("rsqrt.approx.f32 %0, %1;" : "=f"(y1) : "f"(x1));
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(y2) : "f"(x2));
  out[i] = y0;
  out[kCount + i] = y1;
  out[2 * kCount + i] = y2;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s OUT.bin\n", argv[0]);
    return 2;
  }
  float *d;
  cudaMalloc(&d, 3 * kCount * sizeof(float));
  run<<<kCount / 256, 256>>>(d);
  if (cudaDeviceSynchronize() != cudaSuccess) {
    std::printf("approx_functions: kernel failed\n");
    return 1;
  }
  std::vector<float> h(3 * kCount);
  cudaMemcpy(h.data(), d, h.size() * sizeof(float), cudaMemcpyDeviceToHost);
  FILE *f = std::fopen(argv[1], "wb");
  std::fwrite(h.data(), sizeof(float), h.size(), f);
  std::fclose(f);
  std::printf("approx_functions: 3 x %d results written to %s\n", kCount,
              argv[1]);
  return 0;
}
