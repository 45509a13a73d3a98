// llm_mla.cuh: multi-head latent attention for decode, in the absorbed form
// (DeepSeek-V2's MLA): queries are taken into the compressed space through
// the key half of kv_b_proj, attention runs over the compressed cache (KVR
// latent and ROPE RoPE values a position, shared by every head), and its
// output is taken back through the value half.  The head count and the
// dimensions are DeepSeek-V2's (H = 16 heads in a block: the rows of one
// tensor-core tile).
#ifndef LLM_MLA_CUH
#define LLM_MLA_CUH

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
constexpr int MLA_COMBINE_THREADS = 128;                                 // mla_combine's block
constexpr int MLA_PAD = MLA_CH + 8;           // a row in shared memory: no bank conflicts
constexpr int MLA_PPAD = MLA_TILE + 8;
constexpr size_t MLA_DECODE_SMEM = (size_t)(MLA_H + MLA_TILE) * MLA_PAD * 2 +
                                   (size_t)MLA_H * MLA_TILE * 4 + (size_t)MLA_H * MLA_PPAD * 2 +
                                   3 * MLA_H * 4;
static_assert(MLA_THREADS / 32 * 128 == MLA_KVR, "a warp's share of the latent output");

// RoPE with precomputed frequencies on one 64-value vector, as DeepSeek-V2's
// published code applies it: the pairs (x[2i], x[2i + 1]) are first laid out
// as (x'[i], x'[32 + i]), then x' * cos + rotate_half(x') * sin, with cos and
// sin rounded to bf16 and each product and the sum rounded to bf16.  Lane i
// of a warp (i < 32) does frequency i.
__device__ __forceinline__ void rope64(const bf16 *in, bf16 *out, float p, const float *inv_freq,
                                       float mscale, int i) {
  float s, c;
  sincosf(p * inv_freq[i], &s, &c);
  const float cb = round_bf(c * mscale), sb = round_bf(s * mscale);
  const float x1 = bf(in[2 * i]), x2 = bf(in[2 * i + 1]);
  out[i] = to_bf(round_bf(x1 * cb) + round_bf(-x2 * sb));
  out[MLA_ROPE / 2 + i] = to_bf(round_bf(x2 * cb) + round_bf(x1 * sb));
}

// ---------------------------------------------------------------------------
// mla_decode: one block a (split of the keys, token).  Token t attends to
// its pos[t] + 1 keys (at most maxpos); gridDim.x splits share them, a split
// a contiguous range.  A block writes its unnormalised output (H x KVR), its
// running maximum and its sum of exponentials; mla_combine joins the splits.
struct MlaDecodeArgs {
  const bf16 *q_lat;  // [m][H][KVR]
  const bf16 *q_pe;   // [m][H][ROPE], RoPE applied
  const bf16 *cache;  // [m][maxpos][KVR + ROPE]
  const uint32_t *pos;
  float *part;        // [m][splits][H][KVR]
  float *ml;          // [m][splits][H][2]
  int m, maxpos;
  float scale;        // the softmax scale
};

__device__ inline void mla_decode_block(const MlaDecodeArgs &a) {
  extern __shared__ __align__(16) unsigned char llm_smem[];
  bf16 *qs = reinterpret_cast<bf16 *>(llm_smem);     // [H][PAD]
  bf16 *ks = qs + MLA_H * MLA_PAD;                   // [TILE][PAD]
  float *ss = reinterpret_cast<float *>(ks + MLA_TILE * MLA_PAD); // [H][TILE]
  bf16 *ps = reinterpret_cast<bf16 *>(ss + MLA_H * MLA_TILE);     // [H][PPAD]
  float *m_run = reinterpret_cast<float *>(ps + MLA_H * MLA_PPAD);
  float *l_run = m_run + MLA_H, *alpha = l_run + MLA_H;
  require_smem(MLA_DECODE_SMEM);

  const int t = blockIdx.y, s = blockIdx.x, splits = gridDim.x;
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, g = lane >> 2, q = lane & 3;
  wait();
  trigger();
  if (t >= a.m)
    return;
  const int nk = min((int)a.pos[t] + 1, a.maxpos);
  const int per = max(MLA_MIN_KEYS, (nk + splits - 1) / splits);
  const int k0 = min(s * per, nk), k1 = min(k0 + per, nk);
  if (k0 >= k1) { // a split past the keys: its sum is 0, and mla_combine stops before it
    if (tid < MLA_H) {
      float *ml = a.ml + (((size_t)t * splits + s) * MLA_H + tid) * 2;
      ml[0] = -INFINITY;
      ml[1] = 0;
    }
    return;
  }

  // The queries: latent then RoPE part, a row a head.
  for (int c = tid; c < MLA_H * (MLA_CH / 8); c += MLA_THREADS) {
    const int h = c / (MLA_CH / 8), j = c % (MLA_CH / 8);
    const uint4 *src = j < MLA_KVR / 8
                           ? reinterpret_cast<const uint4 *>(a.q_lat + ((size_t)t * MLA_H + h) * MLA_KVR) + j
                           : reinterpret_cast<const uint4 *>(a.q_pe + ((size_t)t * MLA_H + h) * MLA_ROPE) +
                                 (j - MLA_KVR / 8);
    cp_async16(reinterpret_cast<uint4 *>(qs + h * MLA_PAD) + j, src);
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

  const bf16 *cache = a.cache + (size_t)t * a.maxpos * MLA_CH;
  for (int kt = k0; kt < k1; kt += MLA_TILE) {
    const int nt = min(MLA_TILE, k1 - kt);
    __syncthreads(); // the tile before is read
    for (int c = tid; c < MLA_TILE * (MLA_CH / 8); c += MLA_THREADS) {
      const int j = c / (MLA_CH / 8), i = c % (MLA_CH / 8);
      uint4 *dst = reinterpret_cast<uint4 *>(ks + j * MLA_PAD) + i;
      if (j < nt)
        cp_async16(dst, reinterpret_cast<const uint4 *>(cache + (size_t)(kt + j) * MLA_CH) + i);
      else
        *dst = make_uint4(0, 0, 0, 0);
    }
    cp_async_wait(); // the queries' copies too, the first time
    __syncthreads();

    // Scores: warp w takes keys 8w .. 8w + 7 of the tile.
    float sc[4] = {0, 0, 0, 0};
    const int n0 = warp * 8;
#pragma unroll 4
    for (int c0 = 0; c0 < MLA_CH; c0 += 16) {
      uint32_t af[4];
      ldsm_x4(af, ldsm_addr(qs, MLA_PAD, 0, c0), false);
      const bf16 *kr = ks + (n0 + g) * MLA_PAD + c0 + 2 * q;
      mma16816(sc, af, *reinterpret_cast<const uint32_t *>(kr),
               *reinterpret_cast<const uint32_t *>(kr + 8));
    }
    {
      const int j = n0 + 2 * q;
      ss[g * MLA_TILE + j] = j < nt ? sc[0] * a.scale : -INFINITY;
      ss[g * MLA_TILE + j + 1] = j + 1 < nt ? sc[1] * a.scale : -INFINITY;
      ss[(g + 8) * MLA_TILE + j] = j < nt ? sc[2] * a.scale : -INFINITY;
      ss[(g + 8) * MLA_TILE + j + 1] = j + 1 < nt ? sc[3] * a.scale : -INFINITY;
    }
    __syncthreads();

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
}

// Joining the splits of token t, head h: one warp finds each split's weight
// (exp(its max - the largest max), 0 for a split without keys), the
// reciprocal of the softmax's denominator and how many splits had keys.
// The splits with keys come first (mla_decode gives the keys out in order),
// so a value's sum stops at the first without.
struct MlaJoin {
  float inv_den;
  int used;
};

__device__ inline MlaJoin mla_join_weights(const float *ml, int t, int h, int splits, int lane,
                                           float *wgt) {
  float mx = -INFINITY;
  for (int s = lane; s < splits; s += 32) {
    const float *e = ml + (((size_t)t * splits + s) * MLA_H + h) * 2;
    if (e[1] > 0.0f)
      mx = fmaxf(mx, e[0]);
  }
  mx = warp_max(mx);
  float den = 0, n = 0;
  for (int s = lane; s < splits; s += 32) {
    const float *e = ml + (((size_t)t * splits + s) * MLA_H + h) * 2;
    const float w = e[1] > 0.0f ? __expf(e[0] - mx) : 0.0f;
    wgt[s] = w;
    den += w * e[1];
    n += e[1] > 0.0f ? 1.0f : 0.0f;
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
#pragma unroll 8
  for (int s = 0; s < j.used; s++)
    num += wgt[s] * p[(size_t)s * stride];
  return to_bf(num * j.inv_den);
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

// The activations of llm_mla_combine_up's GEMV: group h is head h, and its
// rows are head h's joined latent output, for every token, computed as
// mla_combine_block computes them (the same operations, so the same bits)
// and staged in shared memory instead of written out.
struct StageJoin {
  const float *part, *ml;
  int splits;
  template <int MB>
  __device__ void run(bf16 *xs, const GemvArgs &a, int h, bool, float *) const {
    __shared__ float wgt[MB][MLA_MAX_SPLITS];
    __shared__ MlaJoin join[MB];
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int rows = a.m < MB ? a.m : MB;
    static_assert(MB <= WARPS, "a warp a token's weights");
    if (warp < rows) {
      const MlaJoin j = mla_join_weights(ml, warp, h, splits, lane, wgt[warp]);
      if (lane == 0)
        join[warp] = j;
    }
    __syncthreads();
    for (int t = 0; t < rows; t++)
      for (int c = threadIdx.x; c < MLA_KVR; c += blockDim.x)
        xs[(size_t)t * MLA_KVR + c] = mla_join_value(part, t, h, c, splits, wgt[t], join[t]);
    __syncthreads();
  }
};

// mla_prep's last block: the compressed KV of each token normalised and its
// shared RoPE key rotated, both written to the cache at pos[t]; each head's
// query RoPE part rotated into q_pe.
__device__ inline void mla_rope_cache_block(const bf16 *qkv, const bf16 *kv_norm, const float *inv_freq,
                                     const uint32_t *pos, bf16 *q_pe, bf16 *cache, int m,
                                     int maxpos, float eps, float mscale) {
  __shared__ float red[WARPS];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  for (int t = 0; t < m; t++) {
    const int p = (int)pos[t];
    const bf16 *row = qkv + (size_t)t * MLA_QKV;
    const bf16 *ckv = row + MLA_H * MLA_QK;
    float ss = 0;
    for (int i = threadIdx.x; i < MLA_KVR; i += blockDim.x)
      ss = fmaf(bf(ckv[i]), bf(ckv[i]), ss);
    const float r = rsqrtf(block_sum(ss, red) / (float)MLA_KVR + eps);
    // A position past the cache has no row to write (the graph was made for
    // fewer positions); the queries' RoPE is still done.
    bf16 *dst = p < maxpos ? cache + ((size_t)t * maxpos + p) * MLA_CH : nullptr;
    if (dst)
      for (int i = threadIdx.x; i < MLA_KVR; i += blockDim.x)
        dst[i] = to_bf(bf(kv_norm[i]) * round_bf(bf(ckv[i]) * r));
    // warp 0: the shared key; warps 1.. : the heads' queries
    for (int h = warp - 1; h < MLA_H; h += WARPS) {
      if (h < 0) {
        if (dst)
          rope64(ckv + MLA_KVR, dst + MLA_KVR, (float)p, inv_freq, mscale, lane);
      } else
        rope64(row + h * MLA_QK + MLA_NOPE, q_pe + ((size_t)t * MLA_H + h) * MLA_ROPE, (float)p,
               inv_freq, mscale, lane);
    }
  }
}

} // namespace llm

#endif
