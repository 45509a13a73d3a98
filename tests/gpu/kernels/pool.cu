// The pool test's kernels.
#include "pool_graph.h"
#include "spin.cuh"

static __device__ uint32_t mix(uint32_t seed, uint32_t i) {
  uint32_t x = seed * 0x9e3779b9u ^ i * 0x85ebca6bu;
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  return x;
}

// s[i] = mix(seed, i), each thread after a wait, so that the writes of a
// member running beside another would interleave with its.
extern "C" __global__ void pattern(uint32_t *s, uint32_t n, const uint32_t *seed) {
  uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  spin_ns(2000);
  if (i < n)
    s[i] = mix(*seed, i);
}

// res[0] += the elements that are not mix(seed, i); res[1] += 1 (once);
// res[2] += the sum of the elements (wrapping).
extern "C" __global__ void digest(const uint32_t *s, uint32_t n, const uint32_t *seed,
                                  uint32_t *res) {
  uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  spin_ns(1000);
  if (i < n) {
    if (s[i] != mix(*seed, i))
      atomicAdd(&res[0], 1u);
    atomicAdd(&res[2], s[i]);
  }
  if (i == 0)
    atomicAdd(&res[1], 1u);
}
