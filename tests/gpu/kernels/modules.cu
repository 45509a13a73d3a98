// The linked kernels of modules.cgraph: producers and readers that spin
// for a random time before they act, around the kernels from modules and
// templates.
#include "modules_graph.h"
#include "spin.cuh"

extern "C" __global__ void produce(uint32_t *y, uint32_t v, uint32_t n, uint64_t ns) {
  spin_ns(ns);
  uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = v * 7 + i;
}

extern "C" __global__ void transform(const uint32_t *x, uint32_t *y, uint32_t k, uint32_t n,
                                     uint64_t ns) {
  spin_ns(ns);
  uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = x[i] * 3 + k;
}

extern "C" __global__ void widen(const uint32_t *x, uint64_t *y, uint32_t n, uint64_t ns) {
  spin_ns(ns);
  uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = (uint64_t)x[i] << 32 | i;
}
