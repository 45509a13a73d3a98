// The differential test's kernels: integer functions of their views, each
// after a spin of `ns` nanoseconds in every block, so that a node that
// runs too early (a missing edge) reads or writes the wrong values.
#include "diff_graph.h"

#include <cstdint>

__device__ static void spin(uint64_t ns) {
  if (threadIdx.x == 0 && ns) {
    uint64_t start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do
      asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    while (now - start < ns);
  }
  __syncthreads();
}

__device__ static uint32_t index() { return blockIdx.x * blockDim.x + threadIdx.x; }

extern "C" __global__ void d_add(const uint32_t *a, uint32_t *b, uint32_t n, uint64_t ns) {
  spin(ns);
  uint32_t i = index();
  if (i < n)
    b[i] += a[i] * 3u + 1u;
}

extern "C" __global__ void d_mix(const uint32_t *a, const uint32_t *b, uint32_t *c, uint32_t n,
                                 uint64_t ns) {
  spin(ns);
  uint32_t i = index();
  if (i < n)
    c[i] = (a[i] ^ (b[i] * 2654435761u)) + 7u;
}

extern "C" __global__ void d_scale(uint32_t *a, uint32_t n, uint32_t k, uint64_t ns) {
  spin(ns);
  uint32_t i = index();
  if (i < n)
    a[i] = a[i] * k + i;
}

extern "C" __global__ void d_set(uint32_t *a, uint32_t n, uint32_t k, uint64_t ns) {
  spin(ns);
  uint32_t i = index();
  if (i < n)
    a[i] = k ^ i;
}

extern "C" __global__ void d_sum(const uint32_t *a, uint32_t *s, uint32_t n, uint64_t ns) {
  spin(ns);
  uint32_t t = 0;
  for (uint32_t i = 0; i < n; i++)
    t += a[i];
  *s = t;
}

extern "C" __global__ void d_adds(const uint32_t *s, uint32_t *a, uint32_t n, uint64_t ns) {
  spin(ns);
  uint32_t i = index();
  if (i < n)
    a[i] += *s;
}
