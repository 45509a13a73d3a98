// tokens.cu: token kernels of llm.cgraph: embedding, greedy choice,
// sampling, and the bookkeeping after a token.
#include <curand_kernel.h>

#include "llm_graph.h"

#include "llm_device.cuh"

using namespace llm;

extern "C" __global__ void __launch_bounds__(THREADS)
    llm_embed(const bf16 *table, const uint32_t *tokens, bf16 *x, uint32_t n, uint32_t m) {
  wait();
  trigger();
  const int t = blockIdx.x;
  if (t >= (int)m)
    return;
  const bf16 *row = table + (size_t)tokens[t] * n;
  for (int i = threadIdx.x; i < (int)n; i += blockDim.x)
    x[(size_t)t * n + i] = row[i];
}

extern "C" __global__ void __launch_bounds__(1024)
    llm_argmax(const uint64_t *best, uint32_t parts, uint32_t *tokens, uint32_t m) {
  __shared__ unsigned long long red[32];
  wait();
  trigger();
  const int t = blockIdx.x, warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  if (t >= (int)m)
    return;
  unsigned long long v = 0;
  for (uint32_t i = threadIdx.x; i < parts; i += blockDim.x) {
    const unsigned long long k = best[(size_t)t * parts + i];
    v = k > v ? k : v;
  }
  v = warp_max_key(v);
  if (lane == 0)
    red[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < (int)(blockDim.x >> 5) ? red[lane] : 0;
    v = warp_max_key(v);
    if (lane == 0)
      tokens[t] = argmax_index(v);
  }
}

// Sampling: a block of 1024 a token.  p_i = softmax(logits / temperature);
// the kept set is {i : p_i >= tau} for the largest tau whose set holds at
// least top_p of the mass (found by bisection on tau), and the token is the
// first index, in vocabulary order, at which the kept mass reaches u * kept
// for u uniform in [0, 1) from Philox (seed, subsequence t, offset *step).
namespace {
constexpr int SAMPLE_THREADS = 1024;

__device__ float block_max_f(float v, float *red) {
  v = warp_max(v);
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  __syncthreads();
  if (lane == 0)
    red[warp] = v;
  __syncthreads();
  float r = -INFINITY;
  for (int w = 0; w < (int)(blockDim.x >> 5); w++)
    r = fmaxf(r, red[w]);
  return r;
}
} // namespace

extern "C" __global__ void __launch_bounds__(SAMPLE_THREADS)
    llm_sample_top_p(const float *logits, uint32_t *tokens, uint32_t n, uint32_t m,
                     float temperature, float top_p, uint64_t seed, const uint32_t *step) {
  __shared__ float red[32];
  __shared__ float scan[SAMPLE_THREADS];
  wait();
  trigger();
  const int t = blockIdx.x, tid = threadIdx.x;
  if (t >= (int)m)
    return;
  if (blockDim.x != SAMPLE_THREADS)
    __trap();
  const float *l = logits + (size_t)t * n;
  float mx = -INFINITY;
  for (uint32_t i = tid; i < n; i += blockDim.x)
    mx = fmaxf(mx, l[i]);
  mx = block_max_f(mx, red);
  if (!(temperature > 0.0f)) { // no temperature: the largest logit, first index
    float first = (float)n;
    for (uint32_t i = tid; i < n; i += blockDim.x)
      if (l[i] == mx)
        first = fminf(first, (float)i);
    first = -block_max_f(-first, red);
    if (tid == 0)
      tokens[t] = (uint32_t)first;
    return;
  }
  const float inv_t = 1.0f / temperature;
  float z = 0;
  for (uint32_t i = tid; i < n; i += blockDim.x)
    z += __expf((l[i] - mx) * inv_t);
  z = block_sum(z, red);
  // Bisection on tau in (0, p_max]: mass(tau) is non-increasing in tau.
  float lo = 0.0f, hi = 1.0f / z; // p_max = 1 / z
  for (int it = 0; it < 32; it++) {
    const float mid = 0.5f * (lo + hi);
    float mass = 0;
    for (uint32_t i = tid; i < n; i += blockDim.x) {
      const float p = __expf((l[i] - mx) * inv_t) / z;
      mass += p >= mid ? p : 0.0f;
    }
    mass = block_sum(mass, red);
    if (mass >= top_p)
      lo = mid;
    else
      hi = mid;
  }
  const float tau = lo;
  // Each thread takes a contiguous range, so that a prefix sum over threads
  // follows vocabulary order.
  const uint32_t per = (n + blockDim.x - 1) / blockDim.x;
  const uint32_t i0 = min(n, tid * per), i1 = min(n, i0 + per);
  float mine = 0;
  for (uint32_t i = i0; i < i1; i++) {
    const float p = __expf((l[i] - mx) * inv_t) / z;
    mine += p >= tau ? p : 0.0f;
  }
  scan[tid] = mine;
  __syncthreads();
  for (int o = 1; o < (int)blockDim.x; o *= 2) { // inclusive scan (Hillis-Steele)
    const float v = tid >= o ? scan[tid - o] : 0.0f;
    __syncthreads();
    scan[tid] += v;
    __syncthreads();
  }
  const float kept = scan[blockDim.x - 1];
  curandStatePhilox4_32_10_t rng;
  curand_init(seed, (unsigned long long)t, (unsigned long long)*step, &rng);
  const float target = curand_uniform(&rng) * kept; // (0, kept]
  float before = tid ? scan[tid - 1] : 0.0f;
  __shared__ uint32_t chosen;
  if (tid == 0)
    chosen = n;
  __syncthreads();
  if (before < target && target <= scan[tid]) {
    uint32_t pick = i1;
    float c = before;
    for (uint32_t i = i0; i < i1; i++) {
      const float p = __expf((l[i] - mx) * inv_t) / z;
      if (p >= tau) {
        c += p;
        pick = i;
        if (c >= target)
          break;
      }
    }
    atomicMin(&chosen, pick);
  }
  __syncthreads();
  if (tid == 0) {
    // Rounding can leave target a hair above the last sum: take the last kept token.
    uint32_t pick = chosen;
    if (pick >= n)
      for (uint32_t i = n; i-- > 0;)
        if (__expf((l[i] - mx) * inv_t) / z >= tau) {
          pick = i;
          break;
        }
    tokens[t] = pick;
  }
}

extern "C" __global__ void __launch_bounds__(32)
    llm_advance(const uint32_t *tokens, uint32_t *pos, uint32_t *made, uint32_t *count,
                uint32_t *done, uint32_t *live, uint32_t eos, uint32_t maxgen, uint32_t m) {
  wait();
  trigger();
  const int t = threadIdx.x;
  const uint32_t c = *count;
  bool alive = false;
  if (t < (int)m) {
    const uint32_t tok = done[t] ? eos : tokens[t];
    if (c < maxgen)
      made[(size_t)t * maxgen + c] = tok;
    if (tok == eos)
      done[t] = 1;
    pos[t] += 1;
    alive = !done[t];
  }
  const unsigned n_alive = __popc(__ballot_sync(0xffffffffu, alive));
  if (t == 0) {
    *live = n_alive;
    *count = c + 1;
  }
}
