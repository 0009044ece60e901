// The shared-window addresses the H100 gives, for the PTX emulator's model
// of them (tools/ptx-emulator/ptxemu/memory.py): where dynamic shared
// memory starts (with and without a static variable before it), the
// shared::cta address of a CTA of a 2-block cluster, and what mapa makes of
// it for each rank (the sm100 kernels name the even CTA's barrier by
// clearing bit 24 of a shared address, as CUTLASS does).
//
//   nvcc -gencode arch=compute_90a,code=sm_90a -o /tmp/smem_addresses \
//     scripts/gpu/smem_addresses.cu && /tmp/smem_addresses
#include <cstdint>
#include <cstdio>

__global__ void __cluster_dims__(2, 1, 1) dynamicOnly(uint32_t *out) {
  extern __shared__ __align__(16) unsigned char dyn[];
  if (threadIdx.x)
    return;
  uint32_t rank, a = (uint32_t)__cvta_generic_to_shared(dyn), m0, m1;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  asm volatile("mapa.shared::cluster.u32 %0, %1, 0;" : "=r"(m0) : "r"(a));
  asm volatile("mapa.shared::cluster.u32 %0, %1, 1;" : "=r"(m1) : "r"(a));
  uint32_t *o = out + rank * 4;
  o[0] = rank;
  o[1] = a;
  o[2] = m0;
  o[3] = m1;
}

__global__ void withStatic(uint32_t *out) {
  __shared__ uint32_t flag;
  extern __shared__ __align__(16) unsigned char dyn[];
  if (threadIdx.x)
    return;
  flag = 1;
  out[0] = (uint32_t)__cvta_generic_to_shared(&flag);
  out[1] = (uint32_t)__cvta_generic_to_shared(dyn);
  out[2] = flag;
}

int main() {
  uint32_t *d, h[8] = {};
  cudaMalloc(&d, sizeof(h));
  cudaMemset(d, 0xFF, sizeof(h));
  dynamicOnly<<<2, 32, 4096>>>(d);
  if (cudaDeviceSynchronize() != cudaSuccess) {
    std::printf("dynamicOnly failed\n");
    return 1;
  }
  cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost);
  for (int r = 0; r < 2; ++r)
    std::printf("cluster rank %u: dynamic shared at %#x; mapa to rank 0 "
                "%#x, to rank 1 %#x\n",
                h[4 * r], h[4 * r + 1], h[4 * r + 2], h[4 * r + 3]);
  withStatic<<<1, 32, 4096>>>(d);
  cudaDeviceSynchronize();
  cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost);
  std::printf("with a static variable: static at %#x, dynamic at %#x\n", h[0],
              h[1]);
  return 0;
}
