// The kernels of grids.cgraph.
#include <stdint.h>

extern "C" __global__ void count_value(uint32_t *counts, uint32_t tag) {
  if (threadIdx.x == 0)
    atomicAdd(&counts[tag], 1u);
}

extern "C" __global__ void count_slot(uint32_t *counts, const uint32_t *seq) {
  if (threadIdx.x == 0)
    atomicAdd(&counts[*seq], 1u);
}
