// llm_mla.cuh: multi-head latent attention for decode, in the absorbed form
// (DeepSeek-V2's MLA): queries are taken into the compressed space through
// the key half of kv_b_proj, attention runs over the compressed cache (KVR
// latent and ROPE RoPE values a position, shared by every head), and its
// output is taken back through the value half.  The head count and the
// dimensions are DeepSeek-V2's (H = 16 heads in a block: the rows of one
// tensor-core tile).
#ifndef LLM_MLA_CUH
#define LLM_MLA_CUH

#include <cooperative_groups.h>

#include "llm_gemv.cuh"

namespace llm {

constexpr int MLA_H = 16, MLA_NOPE = 128, MLA_ROPE = 64, MLA_VD = 128, MLA_KVR = 512;
constexpr int MLA_QK = MLA_NOPE + MLA_ROPE;                              // a head's query
constexpr int MLA_CH = MLA_KVR + MLA_ROPE;                               // a cache row
constexpr int MLA_QKV = MLA_H * MLA_QK + MLA_KVR + MLA_ROPE;             // q_proj + kv_a rows
constexpr int MLA_TILE = 32;                                             // keys a tile
constexpr int MLA_THREADS = 128;                                         // mla_decode's block
constexpr int MLA_MIN_KEYS = 32;   // keys a split takes at least (a tile): fewer splits for short contexts
constexpr int MLA_MAX_SPLITS = 256;
constexpr int MLA_MAX_CLUSTER = 8; // mla_decode's blocks that join their splits (the portable cluster)
constexpr int MLA_COMBINE_THREADS = 128;                                 // mla_combine's block
constexpr int MLA_PAD = MLA_CH + 8;           // a row in shared memory: no bank conflicts
constexpr int MLA_PPAD = MLA_TILE + 8;
constexpr int MLA_OPAD = MLA_KVR + 8;         // a head's output row, for the cluster's join
// mla_decode's shared memory with one tile of keys in flight; each further
// tile (up to MLA_MAX_STAGES in all) takes MLA_TILE_SMEM more.
constexpr size_t MLA_TILE_SMEM = (size_t)MLA_TILE * MLA_PAD * 2;
constexpr int MLA_MAX_STAGES = 4;
constexpr size_t MLA_DECODE_SMEM = (size_t)MLA_H * MLA_PAD * 2 + MLA_TILE_SMEM +
                                   (size_t)MLA_H * MLA_TILE * 4 + (size_t)MLA_H * MLA_PPAD * 2 +
                                   3 * MLA_H * 4;
static_assert(MLA_THREADS / 32 * 128 == MLA_KVR, "a warp's share of the latent output");
static_assert((size_t)MLA_H * MLA_OPAD * 4 <= (size_t)(MLA_H + MLA_TILE) * MLA_PAD * 2,
              "the output for the cluster's join fits where the queries and keys were");

// RoPE with precomputed frequencies on one 64-value vector, as DeepSeek-V2's
// published code applies it: the pairs (x[2i], x[2i + 1]) are first laid out
// as (x'[i], x'[32 + i]), then x' * cos + rotate_half(x') * sin, with cos and
// sin rounded to bf16 and each product and the sum rounded to bf16.
//
// The cosine and sine of position p at frequency i, scaled and rounded.
__device__ __forceinline__ void rope_cos_sin(float p, const float *inv_freq, float mscale, int i,
                                             float *cb, float *sb) {
  float s, c;
  sincosf(p * inv_freq[i], &s, &c);
  *cb = round_bf(c * mscale);
  *sb = round_bf(s * mscale);
}
// Frequency i's pair of `in` rotated into out[i] and out[32 + i].
__device__ __forceinline__ void rope_pair(const bf16 *in, bf16 *out, float cb, float sb, int i) {
  const float x1 = bf(in[2 * i]), x2 = bf(in[2 * i + 1]);
  out[i] = to_bf(round_bf(x1 * cb) + round_bf(-x2 * sb));
  out[MLA_ROPE / 2 + i] = to_bf(round_bf(x2 * cb) + round_bf(x1 * sb));
}
// The whole vector at position p: lane i of a warp (i < 32) does frequency i.
__device__ __forceinline__ void rope64(const bf16 *in, bf16 *out, float p, const float *inv_freq,
                                       float mscale, int i) {
  float cb, sb;
  rope_cos_sin(p, inv_freq, mscale, i, &cb, &sb);
  rope_pair(in, out, cb, sb, i);
}

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
// Block `rank` of a cluster of C joins latent values [rank * KVR / C,
// (rank + 1) * KVR / C) of every head: each block's outputs (os, [H][OPAD]
// in each block's shared memory) weighed by wgt ([C][H]; a block past the
// keys has zeros and weighs 0).  Every load a thread makes (16 of 16 bytes,
// whatever C) is in flight before any is summed.
template <int C>
__device__ inline void mla_cluster_join(cooperative_groups::cluster_group &cluster, float *os,
                                        const float *wgt, float *part, int rank) {
  constexpr int QUADS = MLA_KVR / C / 4, TASKS = MLA_H * QUADS / MLA_THREADS;
  static_assert(MLA_H * QUADS % MLA_THREADS == 0, "a thread's share of the cluster's join");
  float4 v[TASKS][C];
#pragma unroll
  for (int k = 0; k < TASKS; k++) {
    const int i = (int)threadIdx.x + k * MLA_THREADS, h = i / QUADS;
    const int c = (rank * QUADS + i % QUADS) * 4;
#pragma unroll
    for (int r = 0; r < C; r++)
      v[k][r] = *reinterpret_cast<const float4 *>(cluster.map_shared_rank(os, r) + h * MLA_OPAD + c);
  }
#pragma unroll
  for (int k = 0; k < TASKS; k++) {
    const int i = (int)threadIdx.x + k * MLA_THREADS, h = i / QUADS;
    const int c = (rank * QUADS + i % QUADS) * 4;
    float4 sum = make_float4(0, 0, 0, 0);
#pragma unroll
    for (int r = 0; r < C; r++) {
      const float w = wgt[r * MLA_H + h];
      sum.x = fmaf(w, v[k][r].x, sum.x);
      sum.y = fmaf(w, v[k][r].y, sum.y);
      sum.z = fmaf(w, v[k][r].z, sum.z);
      sum.w = fmaf(w, v[k][r].w, sum.w);
    }
    *reinterpret_cast<float4 *>(part + (size_t)h * MLA_KVR + c) = sum;
  }
}
#endif

// ---------------------------------------------------------------------------
// mla_decode: one block a (split of the keys, token).  Token t attends to
// its pos[t] + 1 keys (at most maxpos); gridDim.x splits share them, a split
// a contiguous range.  A block's result is its unnormalised output (H x
// KVR), its running maximum and its sum of exponentials; mla_combine joins
// them.  Launched in clusters of C blocks along x (compute capability 9.0),
// the C splits of a cluster join their results through distributed shared
// memory first, each block taking KVR / C of the latent values, so that
// gridDim.x / C partial results a token go through global memory instead of
// gridDim.x: the join after reads C times fewer.
//
// A split's tiles of keys go through a ring of S buffers (S = 1 + the
// dynamic shared memory past MLA_DECODE_SMEM in MLA_TILE_SMEMs, at most
// MLA_MAX_STAGES): its first S tiles are asked for before the wait on the
// kernel before, and tile i + S as tile i's buffer is free, so that S tiles
// are in flight while the block works.
struct MlaDecodeArgs {
  const bf16 *q_lat;  // [m][H][KVR]
  const bf16 *q_pe;   // [m][H][ROPE], RoPE applied
  const bf16 *cache;  // [m][maxpos][KVR + ROPE]
  const uint32_t *pos;
  float *part;        // [m][gridDim.x / C][H][KVR]
  float *ml;          // [m][gridDim.x / C][H][2]
  int m, maxpos;
  float scale;        // the softmax scale
};

// Its Mark's phases (llm_device.cuh): 0 its wait's end, 1 its first tile
// and queries in shared memory, 2 the first tile's scores, 3 their
// softmax, 4 the last tile summed.
template <class Mark = NoMark>
__device__ inline void mla_decode_block(const MlaDecodeArgs &a, const Mark &mark = Mark()) {
  extern __shared__ __align__(16) unsigned char llm_smem[];
  require_smem(MLA_DECODE_SMEM);
  const int stages =
      min(MLA_MAX_STAGES, 1 + (int)((dynamic_smem() - MLA_DECODE_SMEM) / MLA_TILE_SMEM));
  bf16 *qs = reinterpret_cast<bf16 *>(llm_smem);     // [H][PAD]
  bf16 *ks0 = qs + MLA_H * MLA_PAD;                  // [stages][TILE][PAD]
  float *ss = reinterpret_cast<float *>(ks0 + stages * MLA_TILE * MLA_PAD); // [H][TILE]
  bf16 *ps = reinterpret_cast<bf16 *>(ss + MLA_H * MLA_TILE);     // [H][PPAD]
  float *m_run = reinterpret_cast<float *>(ps + MLA_H * MLA_PPAD);
  float *l_run = m_run + MLA_H, *alpha = l_run + MLA_H;

  const int t = blockIdx.y, s = blockIdx.x, splits = gridDim.x;
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, g = lane >> 2, q = lane & 3;
  int csize = 1; // the blocks of this block's cluster, along x
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  namespace cg = cooperative_groups;
  cg::cluster_group cluster = cg::this_cluster();
  csize = (int)cluster.dim_blocks().x;
  if (cluster.dim_blocks().y != 1 || cluster.dim_blocks().z != 1 || csize > MLA_MAX_CLUSTER ||
      MLA_KVR % csize != 0)
    __trap();
#endif
  // Before the wait: the split's first tiles of keys but the newest, pos[t]
  // (the kernel before, llm_mla_prep, writes that row).  pos and the rows
  // before pos[t] were written before the kernel before started, so they
  // are complete when it lets this one start.
  const bf16 *cache = a.cache + (size_t)t * a.maxpos * MLA_CH;
  int nk = 0, per = MLA_MIN_KEYS, k0 = 0, k1 = 0;
  if (t < a.m) {
    nk = min((int)a.pos[t] + 1, a.maxpos);
    per = max(MLA_MIN_KEYS, (nk + splits - 1) / splits);
    k0 = min(s * per, nk);
    k1 = min(k0 + per, nk);
  }
  const int ntiles = (k1 - k0 + MLA_TILE - 1) / MLA_TILE, pre = min(stages, ntiles);
  // Tile i (keys k0 + i * TILE on) into buffer i % stages, as a group of
  // copies; rows past the split's keys are zero.
  const auto load_tile = [&](int ti, int skip) {
    const int kt = k0 + ti * MLA_TILE, nt = min(MLA_TILE, k1 - kt);
    bf16 *ks = ks0 + (ti % stages) * MLA_TILE * MLA_PAD;
    for (int c = tid; c < MLA_TILE * (MLA_CH / 8); c += MLA_THREADS) {
      const int j = c / (MLA_CH / 8), i = c % (MLA_CH / 8);
      uint4 *dst = reinterpret_cast<uint4 *>(ks + j * MLA_PAD) + i;
      if (j >= nt)
        *dst = make_uint4(0, 0, 0, 0);
      else if (kt + j != skip)
        cp_async16(dst, reinterpret_cast<const uint4 *>(cache + (size_t)(kt + j) * MLA_CH) + i);
    }
    cp_async_commit();
  };
  for (int i = 0; i < pre; i++)
    load_tile(i, nk - 1);
  wait();
  trigger();
  mark(0);
  if (t >= a.m) // the same for every block of a cluster (clusters are along x)
    return;
  const int first = s - s % csize, parts = splits / csize, pi = s / csize;
  if (min(first * per, nk) >= nk) {
    // A cluster past the keys (no copies in flight): its sum is 0, and the
    // join stops before it.
    if (s == first && tid < MLA_H) {
      float *ml = a.ml + (((size_t)t * parts + pi) * MLA_H + tid) * 2;
      ml[0] = -INFINITY;
      ml[1] = 0;
    }
    return;
  }

  // The queries: latent then RoPE part, a row a head; and the newest key if
  // its tile was asked for before the wait.  (A block past the keys in a
  // cluster that has some only takes part in the join.)
  if (k0 < k1) {
    for (int c = tid; c < MLA_H * (MLA_CH / 8); c += MLA_THREADS) {
      const int h = c / (MLA_CH / 8), j = c % (MLA_CH / 8);
      const uint4 *src = j < MLA_KVR / 8
                             ? reinterpret_cast<const uint4 *>(a.q_lat + ((size_t)t * MLA_H + h) * MLA_KVR) + j
                             : reinterpret_cast<const uint4 *>(a.q_pe + ((size_t)t * MLA_H + h) * MLA_ROPE) +
                                   (j - MLA_KVR / 8);
      cp_async16(reinterpret_cast<uint4 *>(qs + h * MLA_PAD) + j, src);
    }
    if (nk - 1 < k0 + pre * MLA_TILE) // a preloaded tile: buffer (nk - 1 - k0) / TILE
      for (int i = tid; i < MLA_CH / 8; i += MLA_THREADS)
        cp_async16(reinterpret_cast<uint4 *>(ks0 + (nk - 1 - k0) * MLA_PAD) + i,
                   reinterpret_cast<const uint4 *>(cache + (size_t)(nk - 1) * MLA_CH) + i);
    cp_async_commit();
  }
  if (tid < MLA_H) {
    m_run[tid] = -INFINITY;
    l_run[tid] = 0;
  }
  float o[16][4]; // this warp's 128 latent outputs: 16 tiles of 8
#pragma unroll
  for (int n = 0; n < 16; n++)
#pragma unroll
    for (int i = 0; i < 4; i++)
      o[n][i] = 0;
  for (int ti = 0; ti < ntiles; ti++) {
    const int nt = min(MLA_TILE, k1 - (k0 + ti * MLA_TILE));
    const bf16 *ks = ks0 + (ti % stages) * MLA_TILE * MLA_PAD;
    if (ti == 0) {
      cp_async_wait_pending(0); // the first tiles, the queries and the newest key
    } else {
      // Tile ti - 1's buffer is read: tile ti - 1 + stages into it (an
      // empty group past the last, so that the count stays right).  The
      // groups after tile ti's are tiles ti + 1 .. ti - 1 + stages.
      __syncthreads();
      if (ti - 1 + stages < ntiles)
        load_tile(ti - 1 + stages, -1);
      else
        cp_async_commit();
      cp_async_wait_pending(stages - 1);
    }
    __syncthreads();
    if (ti == 0)
      mark(1);

    // Scores: warp w takes keys 8w .. 8w + 7 of the tile, over the row's
    // 36 steps of 16 values in SC chains of products, each its own sum
    // (the chains added at the end), so that an MMA waits for the one
    // SC before it, not for the one just before: with one warp a scheduler,
    // nothing else hides an MMA's latency.
    constexpr int SC = 4;
    static_assert(MLA_CH % (16 * SC) == 0, "the score chains share the row");
    float sc4[SC][4] = {};
    const int n0 = warp * 8;
#pragma unroll
    for (int c0 = 0; c0 < MLA_CH; c0 += 16 * SC) {
#pragma unroll
      for (int j = 0; j < SC; j++) {
        uint32_t af[4];
        ldsm_x4(af, ldsm_addr(qs, MLA_PAD, 0, c0 + 16 * j), false);
        const bf16 *kr = ks + (n0 + g) * MLA_PAD + c0 + 16 * j + 2 * q;
        mma16816(sc4[j], af, *reinterpret_cast<const uint32_t *>(kr),
                 *reinterpret_cast<const uint32_t *>(kr + 8));
      }
    }
    float sc[4] = {0, 0, 0, 0};
#pragma unroll
    for (int j = 0; j < SC; j++)
#pragma unroll
      for (int i = 0; i < 4; i++)
        sc[i] += sc4[j][i];
    {
      const int j = n0 + 2 * q;
      ss[g * MLA_TILE + j] = j < nt ? sc[0] * a.scale : -INFINITY;
      ss[g * MLA_TILE + j + 1] = j + 1 < nt ? sc[1] * a.scale : -INFINITY;
      ss[(g + 8) * MLA_TILE + j] = j < nt ? sc[2] * a.scale : -INFINITY;
      ss[(g + 8) * MLA_TILE + j + 1] = j + 1 < nt ? sc[3] * a.scale : -INFINITY;
    }
    __syncthreads();
    if (ti == 0)
      mark(2);

    // Online softmax: 8 threads a head, 4 keys a thread.
    {
      const int h = tid >> 3, sub = tid & 7;
      float v[4], mx = -INFINITY;
#pragma unroll
      for (int i = 0; i < 4; i++) {
        v[i] = ss[h * MLA_TILE + sub * 4 + i];
        mx = fmaxf(mx, v[i]);
      }
#pragma unroll
      for (int o2 = 4; o2 > 0; o2 /= 2)
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o2));
      const float m_old = m_run[h], m_new = fmaxf(m_old, mx);
      float sum = 0;
#pragma unroll
      for (int i = 0; i < 4; i++) {
        const float p = v[i] == -INFINITY ? 0.0f : __expf(v[i] - m_new);
        ps[h * MLA_PPAD + sub * 4 + i] = to_bf(p);
        sum += p;
      }
#pragma unroll
      for (int o2 = 4; o2 > 0; o2 /= 2)
        sum += __shfl_xor_sync(0xffffffffu, sum, o2);
      __syncwarp();
      if (sub == 0) {
        const float al = m_old == -INFINITY ? 0.0f : __expf(m_old - m_new);
        alpha[h] = al;
        l_run[h] = l_run[h] * al + sum;
        m_run[h] = m_new;
      }
    }
    __syncthreads();
    if (ti == 0)
      mark(3);

    // Output: O = O * alpha + P V over this warp's 128 latent values.
    const float a_lo = alpha[g], a_hi = alpha[g + 8];
#pragma unroll
    for (int n = 0; n < 16; n++) {
      o[n][0] *= a_lo;
      o[n][1] *= a_lo;
      o[n][2] *= a_hi;
      o[n][3] *= a_hi;
    }
#pragma unroll
    for (int kb = 0; kb < MLA_TILE; kb += 16) {
      uint32_t af[4];
      ldsm_x4(af, ldsm_addr(ps, MLA_PPAD, 0, kb), false);
#pragma unroll
      for (int n = 0; n < 16; n += 2) {
        uint32_t bfr[4];
        ldsm_x4(bfr, ldsm_addr(ks, MLA_PAD, kb, warp * 128 + n * 8), true);
        mma16816(o[n], af, bfr[0], bfr[1]);
        mma16816(o[n + 1], af, bfr[2], bfr[3]);
      }
    }
  }
  __syncthreads();
  mark(4);

  if (csize == 1) {
    float *part = a.part + (((size_t)t * splits + s) * MLA_H) * MLA_KVR;
#pragma unroll
    for (int n = 0; n < 16; n++) {
      const int c = warp * 128 + n * 8 + 2 * q;
      *reinterpret_cast<float2 *>(part + (size_t)g * MLA_KVR + c) = make_float2(o[n][0], o[n][1]);
      *reinterpret_cast<float2 *>(part + (size_t)(g + 8) * MLA_KVR + c) =
          make_float2(o[n][2], o[n][3]);
    }
    if (tid < MLA_H) {
      float *ml = a.ml + (((size_t)t * splits + s) * MLA_H + tid) * 2;
      ml[0] = m_run[tid];
      ml[1] = l_run[tid];
    }
    return;
  }
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  // The cluster's join: every block's output into its shared memory (where
  // the queries and keys were), then block r joins latent values
  // [r * KVR / C, (r + 1) * KVR / C) of every head as mla_combine joins
  // splits: each block's output weighted by exp(its maximum - the largest).
  float *os = reinterpret_cast<float *>(llm_smem); // [H][OPAD]
#pragma unroll
  for (int n = 0; n < 16; n++) {
    const int c = warp * 128 + n * 8 + 2 * q;
    *reinterpret_cast<float2 *>(os + g * MLA_OPAD + c) = make_float2(o[n][0], o[n][1]);
    *reinterpret_cast<float2 *>(os + (g + 8) * MLA_OPAD + c) = make_float2(o[n][2], o[n][3]);
  }
  cluster.sync(); // every block's output, maximum and sum are in its shared memory
  // Each block's maximum and sum of each head, a thread each; then each
  // block's weight, head by head, and the cluster's maximum and sum.
  float *mls = ss;                                        // [2][C][H]
  float *wgt = reinterpret_cast<float *>(ps);             // [C][H]
  float *joined = wgt + MLA_MAX_CLUSTER * MLA_H;          // [2][H]
  static_assert(2 * MLA_MAX_CLUSTER * MLA_H <= MLA_H * MLA_TILE &&
                    (MLA_MAX_CLUSTER + 2) * MLA_H * 4 <= MLA_H * MLA_PPAD * 2 &&
                    MLA_MAX_CLUSTER * MLA_H <= MLA_THREADS,
                "the cluster's maxima, sums and weights fit where the scores were");
  if (tid < csize * MLA_H) {
    const int r = tid / MLA_H, h = tid % MLA_H;
    mls[tid] = *cluster.map_shared_rank(m_run + h, r);
    mls[csize * MLA_H + tid] = *cluster.map_shared_rank(l_run + h, r);
  }
  __syncthreads();
  if (tid < MLA_H) {
    const float *mr = mls, *lr = mls + csize * MLA_H;
    float mx = -INFINITY, den = 0;
    for (int r = 0; r < csize; r++)
      if (lr[r * MLA_H + tid] > 0.0f)
        mx = fmaxf(mx, mr[r * MLA_H + tid]);
    for (int r = 0; r < csize; r++) {
      const float l = lr[r * MLA_H + tid];
      const float w = l > 0.0f ? __expf(mr[r * MLA_H + tid] - mx) : 0.0f;
      wgt[r * MLA_H + tid] = w;
      den += w * l;
    }
    joined[tid] = mx;
    joined[MLA_H + tid] = den;
  }
  __syncthreads();
  const int rank = (int)cluster.block_rank();
  float *part = a.part + (((size_t)t * parts + pi) * MLA_H) * MLA_KVR;
  if (csize == 2)
    mla_cluster_join<2>(cluster, os, wgt, part, rank);
  else if (csize == 4)
    mla_cluster_join<4>(cluster, os, wgt, part, rank);
  else
    mla_cluster_join<8>(cluster, os, wgt, part, rank);
  if (rank == 0 && tid < MLA_H) {
    float *ml = a.ml + (((size_t)t * parts + pi) * MLA_H + tid) * 2;
    ml[0] = joined[tid];
    ml[1] = joined[MLA_H + tid];
  }
  cluster.sync(); // no block leaves while another reads its shared memory
#endif
}

// Joining the splits of token t, head h: one warp finds each split's weight
// (exp(its max - the largest max), 0 for a split without keys), the
// reciprocal of the softmax's denominator and how many splits had keys.
// The splits with keys come first (mla_decode gives the keys out in order),
// so a value's sum stops at the first without.  A lane asks for all its
// splits' maxima and sums at once (up to MLA_MAX_SPLITS / 32 of them), so
// that the weights take one round trip to memory, not one for each 32
// splits (the loop before, whose second pass read them again).
struct MlaJoin {
  float inv_den;
  int used;
};

__device__ inline MlaJoin mla_join_weights(const float *ml, int t, int h, int splits, int lane,
                                           float *wgt) {
  constexpr int PER = MLA_MAX_SPLITS / 32;
  float2 e[PER];
#pragma unroll
  for (int i = 0; i < PER; i++) {
    const int s = lane + 32 * i;
    e[i] = s < splits
               ? *reinterpret_cast<const float2 *>(ml + (((size_t)t * splits + s) * MLA_H + h) * 2)
               : make_float2(-INFINITY, 0.0f);
  }
  float mx = -INFINITY;
#pragma unroll
  for (int i = 0; i < PER; i++)
    if (e[i].y > 0.0f)
      mx = fmaxf(mx, e[i].x);
  mx = warp_max(mx);
  float den = 0, n = 0;
#pragma unroll
  for (int i = 0; i < PER; i++) {
    const int s = lane + 32 * i;
    if (s < splits) {
      const float w = e[i].y > 0.0f ? __expf(e[i].x - mx) : 0.0f;
      wgt[s] = w;
      den += w * e[i].y;
      n += e[i].y > 0.0f ? 1.0f : 0.0f;
    }
  }
  den = warp_sum(den);
  n = warp_sum(n);
  return MlaJoin{1.0f / den, (int)n};
}

// Latent value c of token t, head h: the splits' outputs weighted, rounded.
__device__ __forceinline__ bf16 mla_join_value(const float *part, int t, int h, int c, int splits,
                                               const float *wgt, MlaJoin j) {
  const float *p = part + ((size_t)t * splits * MLA_H + h) * MLA_KVR + c;
  const size_t stride = (size_t)MLA_H * MLA_KVR;
  float num = 0;
  // Unrolled 16 times (8 before run R): a sequence's 16 splits over 512
  // keys are one round of loads.  Loading 16 at a time explicitly, with the
  // loads past `used` predicated off, was faster in llm_mla_combine but
  // slower in llm_mla_combine_up, and so in the model (run S).
#pragma unroll 16
  for (int s = 0; s < j.used; s++)
    num += wgt[s] * p[(size_t)s * stride];
  return to_bf(num * j.inv_den);
}

// Latent values c and c + 1 (c even) as mla_join_value computes each (the
// same sums in the same order, so the same bits), by 8-byte loads: a
// thread's two values in one round of loads instead of two, and half the
// load instructions (llm_mla_combine_up's join).
__device__ __forceinline__ void mla_join_pair(const float *part, int t, int h, int c, int splits,
                                              const float *wgt, MlaJoin j, bf16 *out) {
  const float *p = part + ((size_t)t * splits * MLA_H + h) * MLA_KVR + c;
  const size_t stride = (size_t)MLA_H * MLA_KVR;
  float nx = 0, ny = 0;
#pragma unroll 16
  for (int s = 0; s < j.used; s++) {
    const float2 v = *reinterpret_cast<const float2 *>(p + (size_t)s * stride);
    nx += wgt[s] * v.x;
    ny += wgt[s] * v.y;
  }
  *reinterpret_cast<__nv_bfloat162 *>(out) =
      __halves2bfloat162(to_bf(nx * j.inv_den), to_bf(ny * j.inv_den));
}

// mla_combine: joins the splits of token blockIdx.y, a block a unit of
// (head, 128 latent values) at a time (any grid.x; MLA_H * MLA_KVR / 128
// blocks make one pass), a thread a value, and rounds the attention output
// to bf16.
__device__ inline void mla_combine_block(const float *part, const float *ml, bf16 *out, int splits,
                                         int m) {
  __shared__ float wgt[MLA_MAX_SPLITS];
  __shared__ MlaJoin join;
  const int t = blockIdx.y, tid = threadIdx.x, lane = tid & 31;
  if (blockDim.x != MLA_COMBINE_THREADS || splits > MLA_MAX_SPLITS)
    __trap();
  wait();
  trigger();
  if (t >= m)
    return;
  constexpr int PER_HEAD = MLA_KVR / MLA_COMBINE_THREADS;
  for (int unit = blockIdx.x; unit < MLA_H * PER_HEAD; unit += gridDim.x) {
    const int h = unit / PER_HEAD, c = (unit % PER_HEAD) * MLA_COMBINE_THREADS + tid;
    __syncthreads(); // wgt of the unit before is read
    if (tid < 32) {
      const MlaJoin j = mla_join_weights(ml, t, h, splits, lane, wgt);
      if (lane == 0)
        join = j;
    }
    __syncthreads();
    out[((size_t)t * MLA_H + h) * MLA_KVR + c] = mla_join_value(part, t, h, c, splits, wgt, join);
  }
}

// StageJoin's shared memory for MB tokens: each token's split weights and
// join, one array for both kinds of StageJoin.
template <int MB> struct JoinScratch {
  float wgt[MB][MLA_MAX_SPLITS];
  MlaJoin join[MB];
};
template <int MB> __device__ __forceinline__ JoinScratch<MB> &join_scratch() {
  __shared__ JoinScratch<MB> js;
  return js;
}

// The activations of llm_mla_combine_up's GEMV: group h is head h, and its
// rows are head h's joined latent output, for every token, computed as
// mla_combine_block computes them (the same operations, so the same bits)
// and staged in shared memory instead of written out.
//
// Launched in clusters of 2, 4 or 8 blocks of one head (one pass, clusters
// along x), block `rank` of a cluster of `cluster` joins only latent
// values [rank * KVR / cluster, (rank + 1) * KVR / cluster) of each token
// and writes them into every block's shared memory (distributed shared
// memory), so that the head's splits are read once a cluster instead of
// once a block: with 8 sequences (4 partial results a sequence after the
// decode's own clusters), 8 KB of them a block instead of 64 KB.  The
// kernel has met the cluster's barrier once before (every block has
// started).  The two kinds are instances of their own (Clustered): with the
// clustered path in the per-block join's instance, the join without
// clusters ran slower (BENCHMARKS.md, run BE).
template <bool Clustered> struct StageJoin {
  const float *part, *ml;
  int splits;
  template <int MB>
  __device__ void run(bf16 *xs, const GemvArgs &a, int h, bool, float *) const {
    JoinScratch<MB> &js = join_scratch<MB>();
    float(&wgt)[MB][MLA_MAX_SPLITS] = js.wgt;
    MlaJoin(&join)[MB] = js.join;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int rows = a.m < MB ? a.m : MB;
    static_assert(MB <= WARPS, "a warp a token's weights");
    if (warp < rows) {
      const MlaJoin j = mla_join_weights(ml, warp, h, splits, lane, wgt[warp]);
      if (lane == 0)
        join[warp] = j;
    }
    __syncthreads();
    if constexpr (Clustered) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
      namespace cg = cooperative_groups;
      cg::cluster_group cl = cg::this_cluster();
      const int cluster = (int)cl.num_blocks(); // a head's blocks joining together
      const int rank = (int)cl.block_rank(), per = MLA_KVR / cluster, chunks = per / 8;
      for (int i = threadIdx.x; i < rows * per / 2; i += blockDim.x) {
        const int t = i / (per / 2), c = rank * per + 2 * (i % (per / 2));
        mla_join_pair(part, t, h, c, splits, wgt[t], join[t], xs + (size_t)t * MLA_KVR + c);
      }
      __syncthreads();
      // The block's share to the cluster's other blocks, 16 bytes a store.
      const int mine = rows * chunks;
      for (int i = threadIdx.x; i < mine * (cluster - 1); i += blockDim.x) {
        const int j = i % mine, r = (rank + 1 + i / mine) % cluster;
        const size_t at = (size_t)(j / chunks) * MLA_KVR + rank * per + (j % chunks) * 8;
        *reinterpret_cast<uint4 *>(cl.map_shared_rank(xs, r) + at) =
            *reinterpret_cast<const uint4 *>(xs + at);
      }
      cl.sync(); // every block's shares are in every block's xs
#else
      __trap(); // no clusters below compute capability 9.0 (llm_mla_combine_up)
#endif
    } else {
      for (int t = 0; t < rows; t++)
        for (int c = 2 * (int)threadIdx.x; c < MLA_KVR; c += 2 * (int)blockDim.x)
          mla_join_pair(part, t, h, c, splits, wgt[t], join[t], xs + (size_t)t * MLA_KVR + c);
      __syncthreads();
    }
  }
};

// llm_mla_prep's GEMV blocks, blocks [0, blocks) of any grid:
// q_lat[t][h][c] = sum_i w_ukt[h][c][i] q_nope[t][h][i], a GEMV of H * KVR
// rows of NOPE, row h * KVR + c reading head h's q_nope in qkv.
template <int R, int U, class Stage = StageX>
__device__ inline void mla_absorb_queries(const bf16 *w_ukt, const bf16 *qkv, bf16 *q_lat, int m,
                                          int blocks, const Stage &stage = Stage()) {
  GemvArgs a{w_ukt, qkv, nullptr, q_lat, nullptr, nullptr, MLA_H * MLA_KVR, MLA_NOPE, m, 0,
             MLA_KVR, MLA_QK, MLA_QKV, 0};
  gemv_dispatch<R, U, Epi::Plain>(a, blockIdx.x, blocks, stage);
}

// mla_prep's last block: the compressed KV of each token normalised and its
// shared RoPE key rotated, both written to the cache at pos[t]; each head's
// query RoPE part rotated into q_pe.  What it reads is staged in shared
// memory first, in one round of copies for every token, and each
// (position, frequency)'s cosine and sine computed once for every head.
// The tokens' inputs take m * MLA_PREP_TOKEN_SMEM bytes of the dynamic
// shared memory (llm_mla_prep's launch rule), not a static array for 8
// tokens, which every block of the kernel would hold: with 25.6 KB of it
// at one token, four blocks a multiprocessor left no room beside them for
// a block of the decode after (DeepSeek-V2-Lite's step at 512 keys 0.5%
// faster on an H100, at 4,096 0.35% slower: BENCHMARKS.md run BC).
constexpr int MLA_PREP_IN = MLA_KVR + MLA_ROPE + MLA_H * MLA_ROPE; // a token's inputs
constexpr size_t MLA_PREP_TOKEN_SMEM = (size_t)MLA_PREP_IN * 2;
// Its Mark's phases (llm_device.cuh): 1 its inputs in shared memory, 2 the
// tokens' RMS, 3 the cache's latent rows written.  Parts: what it does,
// the library's block both (3); 1 the normed latent rows alone, 2 the
// RoPE alone (bench_llm_kernels --only layer's prep_rope_split, the two
// in blocks of their own).
template <int Parts = 3, class Mark = NoMark>
__device__ inline void mla_rope_cache_block(const bf16 *qkv, const bf16 *kv_norm,
                                            const float *inv_freq, const uint32_t *pos, bf16 *q_pe,
                                            bf16 *cache, int m, int maxpos, float eps,
                                            float mscale, const Mark &mark = Mark()) {
  static_assert(Parts >= 1 && Parts <= 3, "the block's parts: 1, 2 or both");
  constexpr int KV_CH = (MLA_KVR + MLA_ROPE) / 8; // a token's 16-byte chunks: latent and key
  constexpr int Q_CH = MLA_ROPE / 8;              // and each head's query RoPE part
  constexpr int IN = MLA_PREP_IN;
  extern __shared__ __align__(16) unsigned char llm_smem[];
  require_smem((size_t)m * MLA_PREP_TOKEN_SMEM);
  // [token][latent | key | the heads' RoPE parts]
  bf16 (*in)[IN] = reinterpret_cast<bf16 (*)[IN]>(llm_smem);
  __shared__ __align__(16) bf16 gain[MLA_KVR];
  __shared__ float r_tok[MAX_TOKENS], cs[MAX_TOKENS][MLA_ROPE / 2], sn[MAX_TOKENS][MLA_ROPE / 2];
  __shared__ int p_tok[MAX_TOKENS];
  __shared__ float red[WARPS];
  const int tid = threadIdx.x;
  for (int c = tid; c < m * (KV_CH + MLA_H * Q_CH) + MLA_KVR / 8; c += blockDim.x) {
    if (c >= m * (KV_CH + MLA_H * Q_CH)) {
      const int j = c - m * (KV_CH + MLA_H * Q_CH);
      if constexpr ((Parts & 1) != 0) // the gains: the latent rows' part
        cp_async16(reinterpret_cast<uint4 *>(gain) + j, reinterpret_cast<const uint4 *>(kv_norm) + j);
      continue;
    }
    const int t = c / (KV_CH + MLA_H * Q_CH), j = c % (KV_CH + MLA_H * Q_CH);
    if constexpr (Parts != 3) // a part alone stages its own inputs: the latent or the RoPE parts
      if (((Parts & 1) != 0) != (j < MLA_KVR / 8))
        continue;
    const bf16 *row = qkv + (size_t)t * MLA_QKV;
    const bf16 *src = j < KV_CH ? row + MLA_H * MLA_QK + j * 8
                                : row + ((j - KV_CH) / Q_CH) * MLA_QK + MLA_NOPE +
                                      ((j - KV_CH) % Q_CH) * 8;
    cp_async16(reinterpret_cast<uint4 *>(in[t]) + j, src);
  }
  for (int c = tid; c < m * (MLA_ROPE / 2); c += blockDim.x) {
    const int t = c / (MLA_ROPE / 2), i = c % (MLA_ROPE / 2);
    const int p = (int)pos[t];
    if constexpr ((Parts & 2) != 0)
      rope_cos_sin((float)p, inv_freq, mscale, i, &cs[t][i], &sn[t][i]);
    if (i == 0)
      p_tok[t] = p;
  }
  cp_async_wait();
  __syncthreads();
  mark(1);
  if constexpr ((Parts & 1) != 0) {
    // Each token's RMS, summed as block_sum sums a block's values.
    for (int t = 0; t < m; t++) {
      float ss = 0;
      for (int i = tid; i < MLA_KVR; i += blockDim.x)
        ss = fmaf(bf(in[t][i]), bf(in[t][i]), ss);
      const float r = rsqrtf(block_sum(ss, red) / (float)MLA_KVR + eps);
      if (tid == 0)
        r_tok[t] = r;
    }
    __syncthreads();
    mark(2);
    // A position past the cache has no row to write (the graph was made for
    // fewer positions); the queries' RoPE is still done.
    for (int c = tid; c < m * MLA_KVR; c += blockDim.x) {
      const int t = c / MLA_KVR, i = c % MLA_KVR;
      if (p_tok[t] < maxpos)
        cache[((size_t)t * maxpos + p_tok[t]) * MLA_CH + i] =
            to_bf(bf(gain[i]) * round_bf(bf(in[t][i]) * r_tok[t]));
    }
    mark(3);
  }
  if constexpr ((Parts & 2) != 0) {
    // RoPE as rope64 does it.  v = 0: the shared key, into the cache; v > 0:
    // head v - 1's query, into q_pe.
    for (int c = tid; c < m * (MLA_H + 1) * (MLA_ROPE / 2); c += blockDim.x) {
      const int i = c % (MLA_ROPE / 2), v = c / (MLA_ROPE / 2) % (MLA_H + 1);
      const int t = c / (MLA_ROPE / 2) / (MLA_H + 1);
      const bf16 *x = in[t] + MLA_KVR + v * MLA_ROPE;
      bf16 *out;
      if (v == 0) {
        if (p_tok[t] >= maxpos)
          continue;
        out = cache + ((size_t)t * maxpos + p_tok[t]) * MLA_CH + MLA_KVR;
      } else
        out = q_pe + ((size_t)t * MLA_H + v - 1) * MLA_ROPE;
      rope_pair(x, out, cs[t][i], sn[t][i], i);
    }
  }
}

} // namespace llm

#endif
