// scale.cuh: the template header the language reference's examples name.
#pragma once
#include <cstdint>

template <typename T, int K>
__global__ void scale(T *x, float s, uint32_t n) {
  uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] = (T)((float)x[i] * s * K);
}
