// norm.cu: RMSNorm and RoPE kernels of llm.cgraph.
#include "llm_graph.h"

#include "llm_mla.cuh"

using namespace llm;

// One block a token: y = RMSNorm(x) * g, optionally after x += r.
static __device__ void rmsnorm_row(bf16 *x, const bf16 *r, const bf16 *g, bf16 *y, int n,
                                   float eps) {
  __shared__ float red[32]; // a slot a warp, for blocks of up to 1024 threads
  float ss = 0;
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    float v = bf(x[i]);
    if (r) {
      v = round_bf(v + bf(r[i]));
      x[i] = to_bf(v);
    }
    ss = fmaf(v, v, ss);
  }
  const float s = rsqrtf(block_sum(ss, red) / (float)n + eps);
  for (int i = threadIdx.x; i < n; i += blockDim.x) // each thread reads what it wrote
    y[i] = to_bf(bf(g[i]) * round_bf(bf(x[i]) * s));
}

extern "C" __global__ void __launch_bounds__(1024)
    llm_rmsnorm(const bf16 *x, const bf16 *g, bf16 *y, uint32_t n, uint32_t m, float eps) {
  wait();
  trigger();
  if (blockIdx.x < m)
    rmsnorm_row(const_cast<bf16 *>(x) + (size_t)blockIdx.x * n, nullptr, g,
                y + (size_t)blockIdx.x * n, (int)n, eps); // with no r, x is only read
}

extern "C" __global__ void __launch_bounds__(1024)
    llm_add_rmsnorm(bf16 *x, const bf16 *r, const bf16 *g, bf16 *y, uint32_t n, uint32_t m,
                    float eps) {
  wait();
  trigger();
  if (blockIdx.x < m)
    rmsnorm_row(x + (size_t)blockIdx.x * n, r + (size_t)blockIdx.x * n, g,
                y + (size_t)blockIdx.x * n, (int)n, eps);
}

extern "C" __global__ void __launch_bounds__(1024)
    llm_rope(bf16 *x, const uint32_t *pos, const float *inv_freq, uint32_t heads, uint32_t x_head,
             uint32_t x_token, uint32_t m, float mscale) {
  __shared__ bf16 tmp[32][MLA_ROPE];
  wait();
  trigger();
  const int t = blockIdx.x, warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  if (t >= (int)m || warp >= 32)
    return;
  for (int h = warp; h < (int)heads; h += blockDim.x >> 5) {
    bf16 *v = x + (size_t)t * x_token + (size_t)h * x_head;
    rope64(v, tmp[warp], (float)pos[t], inv_freq, mscale, lane);
    __syncwarp();
    v[lane] = tmp[warp][lane];
    v[lane + 32] = tmp[warp][lane + 32];
    __syncwarp();
  }
}
