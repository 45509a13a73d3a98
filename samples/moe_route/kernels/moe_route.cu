// The router and the experts' feed-forward kernels.
#include "moe_route_graph.h"

#include <cstdint>

// expert = argmax_e wr[e] . x (the lowest e on a tie).  Each score is
// summed in order with rounded, uncontracted operations, so the host's
// plain float loop gets the same bits and picks the same expert.
extern "C" __global__ void router(const float *wr, const float *x, uint32_t *expert, uint32_t e,
                                  uint32_t d) {
  __shared__ float score[32];
  if (threadIdx.x < e) {
    float s = 0;
    for (uint32_t j = 0; j < d; j++)
      s = __fadd_rn(s, __fmul_rn(wr[threadIdx.x * d + j], x[j]));
    score[threadIdx.x] = s;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    uint32_t best = 0;
    for (uint32_t i = 1; i < e; i++)
      if (score[i] > score[best])
        best = i;
    *expert = best;
  }
}

// h = relu(w1 x), w1 an f x d matrix.
extern "C" __global__ void up(const float *w1, const float *x, float *h, uint32_t f, uint32_t d) {
  uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= f)
    return;
  float s = 0;
  for (uint32_t j = 0; j < d; j++)
    s += w1[(size_t)i * d + j] * x[j];
  h[i] = s > 0 ? s : 0;
}

// y = w2 h, w2 a d x f matrix.
extern "C" __global__ void down(const float *w2, const float *h, float *y, uint32_t d,
                                uint32_t f) {
  uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= d)
    return;
  float s = 0;
  for (uint32_t j = 0; j < f; j++)
    s += w2[(size_t)i * f + j] * h[j];
  y[i] = s;
}

extern "C" __global__ void zero(float *y, uint32_t d) {
  if (threadIdx.x < d)
    y[threadIdx.x] = 0;
}
