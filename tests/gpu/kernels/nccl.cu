// The collectives test's kernels (tests/gpu/nccl.cgraph).
#include "nccl_graph.h"

// x[j] = (rank + 1) * (step + 1) + j
extern "C" __global__ void init_x(float *x, const uint32_t *me, const uint32_t *step, uint32_t n) {
  uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j < n)
    x[j] = (float)(*me + 1) * (float)(*step + 1) + (float)j;
}

extern "C" __global__ void scale_x(float *x, uint32_t world, uint32_t n) {
  uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j < n)
    x[j] /= (float)world;
}

extern "C" __global__ void record(const float *x, const uint32_t *step, float *log) {
  log[*step] = x[0];
}
