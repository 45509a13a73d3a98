#include "features_graph.h"

extern "C" __global__ void write(uint32_t *y, uint32_t v, uint32_t n) {
  uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = v + i;
}

extern "C" __global__ void count_odd(const uint32_t *x, uint32_t *n, uint32_t len) {
  uint32_t c = 0;
  for (uint32_t i = 0; i < len; i++)
    c += x[i] & 1;
  *n = c;
}

// Stages x in dynamic shared memory, then one thread sums it in order.
extern "C" __global__ void smem_sum(const float *x, float *y, uint32_t n) {
  extern __shared__ float stage[];
  for (uint32_t i = threadIdx.x; i < n; i += blockDim.x)
    stage[i] = x[i];
  __syncthreads();
  if (threadIdx.x == 0) {
    float s = 0;
    for (uint32_t i = 0; i < n; i++)
      s += stage[i];
    *y = s;
  }
}
