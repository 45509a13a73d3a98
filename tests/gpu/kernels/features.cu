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

// x[0 .. 10240) staged in 40 KiB of static shared memory and x[10240 ..
// 10240 + n) in dynamic shared memory, then one thread sums both in order:
// with smem(16K), more than the 48 KiB a launch has without opting in,
// though the dynamic part alone is less.
extern "C" __global__ void split_sum(const float *x, float *y, uint32_t n) {
  __shared__ float fixed[10240];
  extern __shared__ float dyn[];
  for (uint32_t i = threadIdx.x; i < 10240 + n; i += blockDim.x) {
    if (i < 10240)
      fixed[i] = x[i];
    else
      dyn[i - 10240] = x[i];
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    float s = 0;
    for (uint32_t i = 0; i < 10240; i++)
      s += fixed[i];
    for (uint32_t i = 0; i < n; i++)
      s += dyn[i];
    *y = s;
  }
}
