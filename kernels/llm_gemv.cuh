// llm_gemv.cuh: y[m, n] = x[m, k] . W[n, k]^T for m = 1..8 tokens, with the
// epilogues of a decode step.  A block of THREADS threads computes R output
// units a warp (WARPS * R a block), blocks striding over the units, so any
// grid computes every unit (cdiv(n, WARPS * R) blocks make one pass).
#ifndef LLM_GEMV_CUH
#define LLM_GEMV_CUH

#include "llm_device.cuh"

namespace llm {

enum class Epi {
  Plain,    // y = bf16(acc)
  Residual, // y = bf16(y + bf16(acc)): a linear layer added into the residual stream
  Swiglu,   // W holds 2n rows, gate then up: y = bf16(bf16(silu(bf16(g))) * bf16(u))
  F32,      // yf = acc
  Argmax,   // yf = acc, and each block's best (value, index) per token
};

struct GemvArgs {
  const bf16 *w;
  const bf16 *x;
  const bf16 *g; // RMSNorm weights over x, or nullptr
  bf16 *y;
  float *yf;
  unsigned long long *best; // [m][nblocks] argmax keys
  int n, k, m;
  float eps;
  // Grouped activations: output unit u reads x + (u / group) * x_group
  // (group 0: every unit reads x).  group is a multiple of WARPS * R.
  int group, x_group;
  int x_token; // elements from one token's activations to the next's
  int y_token; // and from one token's outputs to the next's (0: n)
};


// Where a block's activations come from: x's rows for group grp (the norm
// applied where g is given), staged into shared memory.  A kernel whose
// activations are made from something else passes its own stage (see
// llm_mla.cuh's StageJoin).
struct StageX {
  template <int MB>
  __device__ void run(bf16 *xs, const GemvArgs &a, int grp, bool fast, float *red) const {
    const bf16 *src = a.x + (size_t)grp * a.x_group;
    if (fast)
      stage_rows<MB>(xs, src, a.x_token, a.k, a.m, a.g, a.eps, red);
    else
      stage_rows_any<MB>(xs, src, a.x_token, a.k, a.m, a.g, a.eps, red);
  }
};

// One GEMV over blocks bid, bid + nblocks, ... of output units.
template <int MB, int R, int U, Epi E, class Stage = StageX>
__device__ void gemv_blocks(const GemvArgs &a, int bid, int nblocks, const Stage &stage = Stage()) {
  extern __shared__ __align__(16) unsigned char llm_smem[];
  bf16 *xs = reinterpret_cast<bf16 *>(llm_smem);
  __shared__ float red[WARPS];
  __shared__ unsigned long long block_best[WARPS][MB];
  constexpr int RW = E == Epi::Swiglu ? 2 : 1; // weight rows a unit
  constexpr int NR = R * RW;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int per_block = WARPS * R;
  const bool fast = (a.k & 7) == 0 && ((uintptr_t)a.w & 15) == 0 && ((uintptr_t)a.x & 15) == 0 &&
                    (a.x_token & 7) == 0 && (a.x_group & 7) == 0 &&
                    ((uintptr_t)a.g & 15) == 0; // the norm weights too, read 16 bytes at a time
  unsigned long long best[MB];
#pragma unroll
  for (int t = 0; t < MB; t++)
    best[t] = 0;
  int staged = -1; // the group whose activations xs holds
  for (int b = bid, first = 1; first || b * per_block < a.n; b += nblocks, first = 0) {
    const int u0 = b * per_block + warp * R;
    const bf16 *rows[NR];
    const bf16 *xp[NR];
#pragma unroll
    for (int r = 0; r < R; r++) {
      const int u = u0 + r;
      const bool valid = u < a.n;
      rows[r * RW] = valid ? a.w + (size_t)u * a.k : nullptr;
      if (RW == 2)
        rows[r * RW + RW - 1] = valid ? a.w + (size_t)(a.n + u) * a.k : nullptr;
    }
#pragma unroll
    for (int r = 0; r < NR; r++)
      xp[r] = xs;
    const int grp = a.group ? b * per_block / a.group : 0;
    auto ready = [&] {
      if (first)
        wait();
      if (grp != staged) { // block-uniform
        if (staged >= 0)
          __syncthreads(); // every warp is done with the group before
        stage.template run<MB>(xs, a, grp, fast, red);
        staged = grp;
      }
      if (first)
        trigger();
    };
    float acc[NR][MB];
    if (fast) {
      RowDot<MB, NR, U> dot;
      dot.run(rows, a.k, xs, a.k, a.m, acc, ready);
    } else {
      ready();
      dot_rows_any<MB, NR>(rows, a.k, xp, a.k, a.m, acc);
    }
#pragma unroll
    for (int r = 0; r < R; r++) {
      const int u = u0 + r;
      if (u >= a.n)
        continue;
#pragma unroll
      for (int t = 0; t < MB; t++) {
        if (t >= a.m)
          continue;
        const float v = acc[r * RW][t];
        if (E == Epi::Argmax) {
          const unsigned long long key = argmax_key(v, (uint32_t)u);
          best[t] = key > best[t] ? key : best[t];
        }
        if (lane != (r * MB + t) % 32)
          continue;
        const size_t o = (size_t)t * (a.y_token ? a.y_token : a.n) + u;
        if (E == Epi::Plain)
          a.y[o] = to_bf(v);
        else if (E == Epi::Residual)
          a.y[o] = to_bf(bf(a.y[o]) + round_bf(v));
        else if (E == Epi::Swiglu)
          a.y[o] = to_bf(round_bf(silu(round_bf(v))) * round_bf(acc[r * RW + 1][t]));
        else
          a.yf[o] = v;
      }
    }
  }
  if (E == Epi::Argmax) {
    if (lane == 0)
#pragma unroll
      for (int t = 0; t < MB; t++)
        block_best[warp][t] = best[t];
    __syncthreads();
    if ((int)threadIdx.x < a.m && threadIdx.x < MB) {
      unsigned long long v = 0;
      for (int w = 0; w < WARPS; w++)
        v = block_best[w][threadIdx.x] > v ? block_best[w][threadIdx.x] : v;
      a.best[(size_t)threadIdx.x * nblocks + bid] = v;
    }
  }
}

// The kernels' entry: the token count picks the instance (1, 2, 4 or 8
// tokens of registers).  More than 8 tokens is a launch the library does not
// support: it stops the kernel with an error rather than compute part of it.
template <int R, int U, Epi E, class Stage = StageX>
__device__ __forceinline__ void gemv_dispatch(const GemvArgs &a, int bid, int nblocks,
                                              const Stage &stage = Stage()) {
  if (a.m <= 1)
    gemv_blocks<1, R, U, E>(a, bid, nblocks, stage);
  else if (a.m <= 2)
    gemv_blocks<2, R, U, E>(a, bid, nblocks, stage);
  else if (a.m <= 4)
    gemv_blocks<4, R, U, E>(a, bid, nblocks, stage);
  else if (a.m <= MAX_TOKENS)
    gemv_blocks<MAX_TOKENS, R, U, E>(a, bid, nblocks, stage);
  else
    __trap();
}

} // namespace llm

#endif
