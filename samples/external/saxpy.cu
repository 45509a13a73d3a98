#include "saxpy_graph.h"

extern "C" __global__ void saxpy(const float *x, float *y, float a, uint32_t n) {
  uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = a * x[i] + y[i];
}
