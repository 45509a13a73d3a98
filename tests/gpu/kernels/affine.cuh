// affine.cuh: a kernel template that tests/gpu/modules.cgraph instantiates
// twice (template kernels): y = x * M + b.
#pragma once
#include <cstdint>

template <typename T, int M>
__global__ void affine(const T *x, T *y, T b, uint32_t n) {
  uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = x[i] * (T)M + b;
}
