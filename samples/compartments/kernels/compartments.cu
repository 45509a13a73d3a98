// The SEIR model's kernels: one thread a region.
#include "compartments_graph.h"

extern "C" __global__ void force(const float *i, const float *pop, const float *mix, float beta,
                                 float *lambda, uint32_t n) {
  uint32_t a = threadIdx.x;
  if (a >= n)
    return;
  float sum = 0;
  for (uint32_t b = 0; b < n; b++)
    sum += mix[a * n + b] * i[b] / pop[b];
  lambda[a] = beta * sum;
}

extern "C" __global__ void update_s(const float *s, const float *lambda, float dt, float *s_next,
                                    uint32_t n) {
  uint32_t a = threadIdx.x;
  if (a < n)
    s_next[a] = s[a] - dt * lambda[a] * s[a];
}

extern "C" __global__ void update_e(const float *s, const float *e, const float *lambda,
                                    float sigma, float dt, float *e_next, uint32_t n) {
  uint32_t a = threadIdx.x;
  if (a < n)
    e_next[a] = e[a] + dt * (lambda[a] * s[a] - sigma * e[a]);
}

extern "C" __global__ void update_i(const float *e, const float *i, float sigma, float gamma,
                                    float dt, float *i_next, uint32_t n) {
  uint32_t a = threadIdx.x;
  if (a < n)
    i_next[a] = i[a] + dt * (sigma * e[a] - gamma * i[a]);
}

extern "C" __global__ void update_r(const float *i, const float *r, float gamma, float dt,
                                    float *r_next, uint32_t n) {
  uint32_t a = threadIdx.x;
  if (a < n)
    r_next[a] = r[a] + dt * gamma * i[a];
}
