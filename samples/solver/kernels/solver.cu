// The conjugate-gradient kernels.  Every reduction is deterministic: each
// block writes one partial sum (part[blockIdx.x]) in a fixed order, and
// whoever needs the total adds the partials in a fixed order too, so two
// solves of one system give the same bits.
#include "solver_graph.h"

#include <cstdint>

enum { RR, BB, BETA, RESID, ITERS };

// The block's sum of v, in thread 0's return value.
__device__ double block_sum(double v) {
  __shared__ double warp[32];
  for (int o = 16; o > 0; o /= 2)
    v += __shfl_down_sync(0xffffffffu, v, o);
  if (threadIdx.x % 32 == 0)
    warp[threadIdx.x / 32] = v;
  __syncthreads();
  v = threadIdx.x < blockDim.x / 32 ? warp[threadIdx.x] : 0.0;
  if (threadIdx.x < 32)
    for (int o = 16; o > 0; o /= 2)
      v += __shfl_down_sync(0xffffffffu, v, o);
  __syncthreads(); // warp[] may be reused by the caller's next sum
  return v;
}

// The sum of the n partials, known to every thread of the block.
__device__ double total(const double *part, unsigned n) {
  __shared__ double t;
  double v = 0;
  for (unsigned i = threadIdx.x; i < n; i += blockDim.x)
    v += part[i];
  v = block_sum(v);
  if (threadIdx.x == 0)
    t = v;
  __syncthreads();
  return t;
}

extern "C" __global__ void cg_init(const double *b, double *x, double *r, double *p,
                                   double *part, uint32_t n) {
  double s = 0;
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    x[i] = 0;
    r[i] = p[i] = b[i];
    s += b[i] * b[i];
  }
  s = block_sum(s);
  if (threadIdx.x == 0)
    part[blockIdx.x] = s;
}

extern "C" __global__ void cg_start(const double *part, double *state, uint32_t nparts) {
  double rr = total(part, nparts);
  if (threadIdx.x == 0) {
    state[RR] = state[BB] = rr;
    state[BETA] = 0;
    state[RESID] = rr > 0 ? 1.0 : 0.0;
    state[ITERS] = 0;
  }
}

// ap = A p for the 5-point stencil, and the partials of p.ap.
extern "C" __global__ void spmv_dot(const double *p, double *ap, double *part, uint32_t n) {
  double s = 0;
  uint32_t cells = n * n;
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < cells;
       i += gridDim.x * blockDim.x) {
    uint32_t row = i / n, col = i % n;
    double v = 4 * p[i];
    if (col > 0)
      v -= p[i - 1];
    if (col + 1 < n)
      v -= p[i + 1];
    if (row > 0)
      v -= p[i - n];
    if (row + 1 < n)
      v -= p[i + n];
    ap[i] = v;
    s += p[i] * v;
  }
  s = block_sum(s);
  if (threadIdx.x == 0)
    part[blockIdx.x] = s;
}

// alpha = rr / p.ap (spmv_dot ran on the same grid, so there are gridDim.x
// partials);  x += alpha p;  r -= alpha ap; and the partials of r.r.
extern "C" __global__ void update_xr(const double *p, const double *ap, const double *part,
                                     const double *state, double *x, double *r, double *part2,
                                     uint32_t n) {
  double pap = total(part, gridDim.x), alpha = pap != 0 ? state[RR] / pap : 0.0, s = 0;
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    x[i] += alpha * p[i];
    double ri = r[i] - alpha * ap[i];
    r[i] = ri;
    s += ri * ri;
  }
  s = block_sum(s);
  if (threadIdx.x == 0)
    part2[blockIdx.x] = s;
}

extern "C" __global__ void finish(const double *part2, double *state, uint32_t nparts) {
  double rr = total(part2, nparts);
  if (threadIdx.x == 0) {
    state[BETA] = state[RR] != 0 ? rr / state[RR] : 0.0;
    state[RR] = rr;
    state[RESID] = state[BB] > 0 ? sqrt(rr / state[BB]) : 0.0;
    state[ITERS] += 1;
  }
}

// p = r + beta p.
extern "C" __global__ void update_p(const double *r, const double *state, double *p,
                                    uint32_t n) {
  double beta = state[BETA];
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    p[i] = r[i] + beta * p[i];
}
