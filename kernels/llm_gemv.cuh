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

// The block's partial sums of mma_rows: one 16 x 8 tile a warp.  One array
// for every instance of mma_rows in a kernel.
__device__ __forceinline__ float *mma_partials() {
  __shared__ float part[WARPS * 16 * 8];
  return part;
}

// The block's 16 weight rows (WARPS * NR: a GEMV block's 16 units, a SwiGLU
// block's 8 gate and 8 up rows) against MB = 4 or 8 tokens on tensor cores:
// mma.m16n8k16 with the rows as A and the tokens as B's 8 columns (tokens
// from m on are zeros).  Inside each step of 32 values the k order is
// permuted, the same way for rows and tokens, so that a lane's fragments
// are whole 16-byte chunks: lane (g, q) loads chunk q of the step from rows
// g and g + 8 (row_lo, row_hi: nullptr for a row past n) and from token g's
// staged activations; the first MMA takes each chunk's values 0-3, the
// second 4-7.  The warps split k (warp w takes steps w, w + WARPS, ...)
// with UM steps in flight, and their tiles are added in warp order in
// shared memory, so that the sums do not depend on timing.  Every lane of
// warp w ends with acc[r][t] of tile row w * NR + r, as RowDot leaves it;
// ready() runs as RowDot runs it.
template <int MB, int NR, class Ready>
__device__ __forceinline__ void mma_rows(const bf16 *row_lo, const bf16 *row_hi, int k,
                                         const bf16 *xs, int xtok, int m, float (&acc)[NR][MB],
                                         Ready ready) {
  constexpr int UM = 4;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, q = lane & 3;
  const int nch = k >> 3, nsteps = (nch + 3) >> 2;
  uint4 wb[UM][2];
  auto fetch = [&](int slot, int s) {
    const int c = 4 * s + q;
    const bool ok = s < nsteps && c < nch;
    wb[slot][0] = ok && row_lo ? load_weight(row_lo + 8 * (size_t)c) : make_uint4(0, 0, 0, 0);
    wb[slot][1] = ok && row_hi ? load_weight(row_hi + 8 * (size_t)c) : make_uint4(0, 0, 0, 0);
  };
#pragma unroll
  for (int u = 0; u < UM; u++)
    fetch(u, warp + WARPS * u);
  ready();
  float c4[4] = {0, 0, 0, 0};
  const uint4 *xrow = reinterpret_cast<const uint4 *>(xs + (size_t)g * xtok);
  const bool token = g < m && g < MB;
  for (int s0 = warp; s0 < nsteps; s0 += WARPS * UM) {
#pragma unroll
    for (int u = 0; u < UM; u++) {
      const int s = s0 + WARPS * u, c = 4 * s + q;
      const uint4 lo = wb[u][0], hi = wb[u][1];
      fetch(u, s + WARPS * UM);
      if (s < nsteps) { // the same for the whole warp
        const uint4 xv = token && c < nch ? xrow[c] : make_uint4(0, 0, 0, 0);
        const uint32_t a0[4] = {lo.x, hi.x, lo.y, hi.y}, a1[4] = {lo.z, hi.z, lo.w, hi.w};
        mma16816(c4, a0, xv.x, xv.y);
        mma16816(c4, a1, xv.z, xv.w);
      }
    }
  }
  float *part = mma_partials(), *mine = part + warp * 128;
  __syncthreads(); // the sums of the block's units before are read
  mine[g * 8 + 2 * q] = c4[0];
  mine[g * 8 + 2 * q + 1] = c4[1];
  mine[(g + 8) * 8 + 2 * q] = c4[2];
  mine[(g + 8) * 8 + 2 * q + 1] = c4[3];
  __syncthreads();
  if (threadIdx.x < 128) { // a thread a (row, token); it alone reads and writes its place
    float sum = 0;
    for (int w = 0; w < WARPS; w++)
      sum += part[w * 128 + threadIdx.x];
    part[threadIdx.x] = sum;
  }
  __syncthreads();
#pragma unroll
  for (int r = 0; r < NR; r++)
#pragma unroll
    for (int t = 0; t < MB; t++)
      acc[r][t] = part[(warp * NR + r) * 8 + t];
}

// One GEMV over blocks bid, bid + nblocks, ... of output units.  With pdl
// (as a rule) the first pass waits on the kernel before once its weights
// are in flight and, its activations staged, lets the next kernel start;
// without, it does neither: for activations that an earlier kernel wrote,
// complete when this one starts (llm_moe.cuh's shared experts).
template <int MB, int R, int U, Epi E, class Stage = StageX>
__device__ void gemv_blocks(const GemvArgs &a, int bid, int nblocks, const Stage &stage = Stage(),
                            bool pdl = true) {
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
      if (pdl && first)
        wait();
      if (grp != staged) { // block-uniform
        if (staged >= 0)
          __syncthreads(); // every warp is done with the group before
        stage.template run<MB>(xs, a, grp, fast, red);
        staged = grp;
      }
      if (pdl && first)
        trigger();
    };
    float acc[NR][MB];
    // Row i of the block's tile of 16 rows: warp i / NR's row i % NR.
    auto tile_row = [&](int i) -> const bf16 * {
      const int idx = i % NR, u = b * per_block + (i / NR) * R + idx / RW;
      return u < a.n ? a.w + (size_t)(idx % RW ? a.n + u : u) * a.k : nullptr;
    };
    constexpr bool use_mma = MB >= 4 && WARPS * NR == 16;
    if (fast && use_mma) {
      const int g = lane >> 2;
      mma_rows<MB, NR>(tile_row(g), tile_row(g + 8), a.k, xs, a.k, a.m, acc, ready);
    } else if (fast) {
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
