#include "pdl_graph.h"
#include "spin.cuh"

// b[i] = b[i] * k + a[j] for a j in another block; block 0 spins first, so
// a consumer that did not wait would see old values.
__device__ void mix_body(const uint32_t *a, uint32_t *b, uint32_t k, uint32_t n, uint64_t ns) {
  uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (blockIdx.x == 0)
    spin_ns(ns);
  if (i < n)
    b[i] = b[i] * k + a[(i * 7 + 4099) % n];
}

extern "C" __global__ void mix(const uint32_t *a, uint32_t *b, uint32_t k, uint32_t n,
                               uint64_t ns) {
  mix_body(a, b, k, n, ns);
}

extern "C" __global__ void mix_pdl(const uint32_t *a, uint32_t *b, uint32_t k, uint32_t n,
                                   uint64_t ns) {
#if __CUDA_ARCH__ >= 900
  cudaGridDependencySynchronize();
#endif
  mix_body(a, b, k, n, ns);
}
