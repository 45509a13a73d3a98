#include "handle_graph.h"

extern "C" __global__ void put(uint32_t *x, uint32_t v) { *x = v; }
extern "C" __global__ void count(uint32_t *x) { *x += 1; }

/* One thread sets the condition: calls that race are undefined. */
extern "C" __global__ void step(uint32_t *it, uint32_t n, uint32_t *res,
                                cudaGraphConditionalHandle h) {
  if (threadIdx.x != 0)
    return;
  *it += 1;
  *res += 1;
  cudaGraphSetConditional(h, *it < n ? 1 : 0);
}

extern "C" __global__ void halve(float *r, float tol, uint32_t *res,
                                 cudaGraphConditionalHandle h) {
  if (threadIdx.x != 0)
    return;
  *r *= 0.5f;
  *res += 1;
  cudaGraphSetConditional(h, *r >= tol ? 1 : 0);
}
