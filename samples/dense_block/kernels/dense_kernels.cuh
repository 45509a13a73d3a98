// dense_kernels.cuh: the dense block's kernels, in bf16 with f32 arithmetic.
// Included by dense_block.cu (after the generated header, so that nvcc checks
// each definition against its declaration in dense_block.cgraph) and by
// bench/dense_block/torch_ext.cu (PyTorch's side of the benchmark).
//
// Vectors are read and written 8 bf16 (16 bytes) at a time: every length is
// a multiple of 8 and every buffer and view starts 16-byte aligned.  Sums
// go in a fixed order, so a kernel gives the same bits every run.
#ifndef DENSE_KERNELS_CUH
#define DENSE_KERNELS_CUH

#include <cooperative_groups.h>
#include <cuda_bf16.h>
#include <math.h>
#include <stdint.h>

// mla_attention combines the shares of a head's keys through distributed
// shared memory in a thread block cluster, on compute capability 9.0 and
// later; built for an older GPU, or with DENSE_ATTN_CLUSTER defined as 0, it
// combines them through global memory (part and count), the last block of
// the head to finish doing it.
#ifndef DENSE_ATTN_CLUSTER
#define DENSE_ATTN_CLUSTER 1
#endif
#if DENSE_ATTN_CLUSTER && (!defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900)
#define DENSE_ATTN_IN_CLUSTER 1
#else
#define DENSE_ATTN_IN_CLUSTER 0
#endif

namespace dense {

constexpr int NOPE = 128, ROPE = 64, QK = NOPE + ROPE, VD = 128, KVR = 512;
constexpr int ATTN_THREADS = 128; // 8 lanes a key's QK, 16 a key's VD, one a VD dimension
static_assert(ATTN_THREADS == VD && QK == 8 * 8 * 3 && VD == 16 * 8,
              "mla_attention's thread mappings");
// With a cluster, the blocks of the first cluster along y share a head's
// keys (the others have nothing to do); without, all gridDim.y blocks do.
// A block loads ATTN_TILE keys at once, which covers its share of 512 keys.
constexpr int ATTN_CLUSTER = 8; // the portable maximum
constexpr int ATTN_TILE = DENSE_ATTN_IN_CLUSTER ? 64 : 32;
static_assert(ATTN_TILE % 16 == 0, "a tile is whole passes of 16 keys (K) and of 8 (V)");
constexpr float RMS_EPS = 1e-6f;
constexpr float ROPE_THETA = 10000.0f;

__device__ __forceinline__ void unpack8(uint4 v, float *f) {
  const __nv_bfloat162 *p = reinterpret_cast<const __nv_bfloat162 *>(&v);
#pragma unroll
  for (int i = 0; i < 4; i++) {
    float2 t = __bfloat1622float2(p[i]);
    f[2 * i] = t.x;
    f[2 * i + 1] = t.y;
  }
}

__device__ __forceinline__ uint4 pack8(const float *f) {
  uint4 v;
  __nv_bfloat162 *p = reinterpret_cast<__nv_bfloat162 *>(&v);
#pragma unroll
  for (int i = 0; i < 4; i++)
    p[i] = __floats2bfloat162_rn(f[2 * i], f[2 * i + 1]);
  return v;
}

// The sum of the squares of 8 values, in a fixed order.
__device__ __forceinline__ float sumsq8(uint4 v) {
  float f[8], s = 0;
  unpack8(v, f);
#pragma unroll
  for (int e = 0; e < 8; e++)
    s = fmaf(f[e], f[e], s);
  return s;
}

// Butterfly reductions: every lane ends with the same bits (a + b == b + a).
__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o /= 2)
    v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
  for (int o = 16; o > 0; o /= 2)
    v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// The rotation of RoPE pair i (0 .. ROPE/2 - 1) at position pos.
__device__ __forceinline__ void rope_angle(uint32_t pos, int i, float *c, float *s) {
  float inv_freq = powf(ROPE_THETA, -(float)(2 * i) / (float)ROPE);
  sincosf((float)pos * inv_freq, s, c);
}

} // namespace dense

// The RMSNorms are folded into the projections that read them.  RMSNorm(v)
// = v * r(v) * g with r(v) = 1 / sqrt(mean(v^2) + eps), and a projection
// is linear, so W RMSNorm(v) = r(v) * (W diag(g)) v: the model's W diag(g)
// is made once, at load (fold_norm_bf16), the GEMM reads v itself, and the
// kernel that reads the GEMM's output multiplies by r(v), which it works out
// from v (a few KB, from L2).  So no kernel runs between a residual add and
// the GEMM that reads the residual: per layer, the attention and SwiGLU are
// the only kernels besides the GEMMs.

// out = w diag(g): row-major rows x cols w and out, cols values of g (cols
// a multiple of 8).  Run once, when the weights are loaded.
extern "C" __global__ void fold_norm_bf16(const __nv_bfloat16 *w, const __nv_bfloat16 *g,
                                          __nv_bfloat16 *out, uint64_t rows, uint32_t cols) {
  const uint64_t nv = rows * cols / 8;
  for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < nv;
       i += (uint64_t)gridDim.x * blockDim.x) {
    float f[8], h[8];
    dense::unpack8(reinterpret_cast<const uint4 *>(w)[i], f);
    dense::unpack8(reinterpret_cast<const uint4 *>(g)[i % (cols / 8)], h);
#pragma unroll
    for (int e = 0; e < 8; e++)
      f[e] *= h[e];
    reinterpret_cast<uint4 *>(out)[i] = dense::pack8(f);
  }
}

// act = silu(gate) * up, where gu = W_gu diag(g) x holds n gate values, then
// n up values: both times r(x), the factor of the FFN's RMSNorm, for the d
// values of x.  Every block works r(x) out the same way (the same bits).
extern "C" __global__ void swiglu_bf16(const __nv_bfloat16 *gu, const __nv_bfloat16 *x,
                                       __nv_bfloat16 *act, uint32_t n, uint32_t d) {
  __shared__ float red[32];
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x, tid = threadIdx.x;
  const bool mine = i < n / 8;
  uint4 gv = make_uint4(0, 0, 0, 0), uv = gv;
  if (mine) { // on their way while r(x) is made
    gv = reinterpret_cast<const uint4 *>(gu)[i];
    uv = reinterpret_cast<const uint4 *>(gu + n)[i];
  }
  float ss = 0;
  for (uint32_t j = tid; j < d / 8; j += blockDim.x)
    ss += dense::sumsq8(reinterpret_cast<const uint4 *>(x)[j]);
  ss = dense::warp_sum(ss);
  if (tid % 32 == 0)
    red[tid / 32] = ss;
  __syncthreads();
  ss = 0;
  for (uint32_t k = 0; k < blockDim.x / 32; k++)
    ss += red[k];
  const float r = rsqrtf(ss / (float)d + dense::RMS_EPS);
  if (!mine)
    return;
  float g[8], u[8];
  dense::unpack8(gv, g);
  dense::unpack8(uv, u);
#pragma unroll
  for (int e = 0; e < 8; e++) {
    const float gate = g[e] * r;
    g[e] = gate / (1.0f + expf(-gate)) * (u[e] * r);
  }
  reinterpret_cast<uint4 *>(act)[i] = dense::pack8(g);
}

#if DENSE_ATTN_IN_CLUSTER
#define DENSE_ATTN_CLUSTER_DIMS __cluster_dims__(1, dense::ATTN_CLUSTER, 1)
#else
#define DENSE_ATTN_CLUSTER_DIMS
#endif

// Multi-head latent attention for one token, the non-absorbed way, with the
// KV cache write.  Grid (heads, splits), ATTN_THREADS threads; the dynamic
// shared memory that the launches give (cdiv(maxpos, splits) floats) is not
// used.
//
//   qa:  [heads * QK queries (NOPE, then ROPE in interleaved pairs) | KVR
//        compressed KV | ROPE key part shared by the heads], times 1 / a
//   kvb: per head, NOPE key values, then VD values, times 1 / (a b)
//   x:   the d values of the residual that qa's GEMM read
//   kc:  [heads, maxpos, QK], vc: [heads, maxpos, VD]
//
// The two RMSNorms are folded into the GEMMs' weights (see fold_norm_bf16):
// qa is W_qa diag(g) x, so the true qa is a qa with a = r(x); the GEMM of
// kv_b read the compressed KV c as qa holds it, and the true c is a c, so
// b = r(a c) = 1 / sqrt(a^2 mean(c^2) + eps).  Every block works a and b
// out from x and c in the same order (the same bits), before anything else.
//
// RoPE follows the Hugging Face DeepSeek-V2 code: the pairs (x[2i], x[2i+1])
// rotate by pos * theta^(-2i/ROPE) and land at i and i + ROPE/2.
//
// A head's keys, the first *nkeys, are shared by G blocks: with a cluster,
// the G = ATTN_CLUSTER blocks of the first cluster along y (splits a
// multiple of it; blocks further along y return at once), without one the
// G = splits blocks.  Block s takes keys [s * chunk, (s + 1) * chunk),
// chunk = cdiv(*nkeys, G), ATTN_TILE at a time: every K and V vector of a
// tile is loaded at once, 16 bytes a lane (8 lanes a key's QK, 16 a key's
// VD).  Row *pos is what this step adds: block min(pos / chunk, G - 1)
// writes it to the caches, and the block whose share holds it takes its
// values from shared memory, not the cache, so that no block reads the row
// while it is written.  A block's scores go through shared memory once; its
// softmax is exact over the tile and rescaled between tiles (online), its V
// sum kept by lanes, then added over the block in a fixed order.  Each
// block's unnormalised V sum, max and exponent sum are combined in split
// order by one block: with a cluster, block 0 of it, which the others write
// their shares to (distributed shared memory); without, the last block of
// the head to finish (counted in count[h], which it resets), from part.
extern "C" __global__ void DENSE_ATTN_CLUSTER_DIMS __launch_bounds__(dense::ATTN_THREADS)
    mla_attention(const __nv_bfloat16 *qa, const __nv_bfloat16 *kvb, const __nv_bfloat16 *x,
                  __nv_bfloat16 *kc, __nv_bfloat16 *vc, const uint32_t *pos_p,
                  const uint32_t *nkeys_p, float *part, uint32_t *count, __nv_bfloat16 *o,
                  uint32_t maxpos, uint32_t d) {
  using namespace dense;
  constexpr int KP = ATTN_TILE / 16, VP = ATTN_TILE / 8, WARPS = ATTN_THREADS / 32;
  static_assert(WARPS == 4, "the block sums below add four warps' values");
  __shared__ __align__(16) float q[QK];
  __shared__ __align__(16) __nv_bfloat16 knew[QK], vnew[VD];
  __shared__ __align__(16) float vred[WARPS][VD];
  __shared__ float score[ATTN_TILE], wmax[WARPS], lred[WARPS], sred[WARPS][2];
  if (blockDim.x != ATTN_THREADS)
    __trap(); // the thread mappings below assume it
#if DENSE_ATTN_IN_CLUSTER
  __shared__ float gather[ATTN_CLUSTER][VD + 2]; // block 0's: every block's share
  const cooperative_groups::cluster_group cluster = cooperative_groups::this_cluster();
  // The first cluster along y has the keys; a block further along returns
  // with the rest of its cluster.
  if (blockIdx.y >= ATTN_CLUSTER)
    return;
  cluster.barrier_arrive(); // waited for before block 0's shared memory is written
  const uint32_t s = cluster.block_rank(), splits = ATTN_CLUSTER;
#else
  __shared__ bool last;
  const uint32_t s = blockIdx.y, splits = gridDim.y;
#endif
  const uint32_t h = blockIdx.x, heads = gridDim.x, tid = threadIdx.x;
  const uint32_t lane = tid % 32, warp = tid / 32;
  const uint32_t pos = *pos_p, nkeys = min(*nkeys_p, maxpos);
  const uint32_t chunk = (nkeys + splits - 1) / splits;
  const uint32_t j0 = min(s * chunk, nkeys), n = min(j0 + chunk, nkeys) - j0;
  __nv_bfloat16 *kch = kc + (size_t)h * maxpos * QK, *vch = vc + (size_t)h * maxpos * VD;
  const __nv_bfloat16 *qh = qa + (size_t)h * QK, *kvh = kvb + (size_t)h * (NOPE + VD);
  const __nv_bfloat16 *kpe = qa + (size_t)heads * QK + KVR;

  // K: this thread's key of each pass of 16 keys, and its 3 vectors of the
  // key's 24; V: its key of each pass of 8, and its vector of the key's 16.
  const uint32_t kkey = tid / 8, kvec = tid % 8, vkey = tid / 16, vvec = tid % 16;
  uint4 kr[KP][3], vr[VP];
  auto load = [&](uint32_t tb) {
#pragma unroll
    for (int p = 0; p < KP; p++) {
      const uint32_t t = tb + 16 * p + kkey;
      const bool live = t < n && j0 + t != pos;
      const uint4 *row = reinterpret_cast<const uint4 *>(kch + (size_t)(j0 + t) * QK);
#pragma unroll
      for (int i = 0; i < 3; i++)
        kr[p][i] = live ? row[kvec + 8 * i] : make_uint4(0, 0, 0, 0);
    }
#pragma unroll
    for (int p = 0; p < VP; p++) {
      const uint32_t t = tb + 8 * p + vkey;
      const bool live = t < n && j0 + t != pos;
      vr[p] = live ? reinterpret_cast<const uint4 *>(vch + (size_t)(j0 + t) * VD)[vvec]
                   : make_uint4(0, 0, 0, 0);
    }
  };
  load(0); // the first tile is on its way while the query is made

  // The norms' factors a and b: the sums of squares of x and c.
  float sx = 0, sc = 0;
  for (uint32_t i = tid; i < d / 8; i += ATTN_THREADS)
    sx += sumsq8(reinterpret_cast<const uint4 *>(x)[i]);
  if (tid < KVR / 8)
    sc = sumsq8(reinterpret_cast<const uint4 *>(qa + (size_t)heads * QK)[tid]);
  sx = warp_sum(sx);
  sc = warp_sum(sc);
  if (lane == 0) {
    sred[warp][0] = sx;
    sred[warp][1] = sc;
  }
  __syncthreads();
  sx = (sred[0][0] + sred[1][0]) + (sred[2][0] + sred[3][0]);
  sc = (sred[0][1] + sred[1][1]) + (sred[2][1] + sred[3][1]);
  const float fa = rsqrtf(sx / (float)d + RMS_EPS);
  const float fab = fa * rsqrtf(fa * fa * sc / (float)KVR + RMS_EPS);

  // This head's query, and the k and v rows this step adds (written to the
  // caches by one block, kept in shared memory by every block).
  const bool writer = s == (chunk ? min(pos / chunk, splits - 1) : 0) && pos < maxpos;
  __nv_bfloat16 *krow = kch + (size_t)pos * QK, *vrow = vch + (size_t)pos * VD;
  q[tid] = __bfloat162float(qh[tid]) * fa;
  if (tid < 32) {
    // kvh: 16 vectors of k, then 16 of v.
    float f[8];
    unpack8(reinterpret_cast<const uint4 *>(kvh)[tid], f);
#pragma unroll
    for (int e = 0; e < 8; e++)
      f[e] *= fab;
    const uint4 kv = pack8(f);
    reinterpret_cast<uint4 *>(tid < 16 ? knew : vnew)[tid % 16] = kv;
    if (writer)
      reinterpret_cast<uint4 *>(tid < 16 ? krow : vrow)[tid % 16] = kv;
    float c, sn;
    rope_angle(pos, tid, &c, &sn);
    float2 qp = __bfloat1622float2(reinterpret_cast<const __nv_bfloat162 *>(qh + NOPE)[tid]);
    float2 k = __bfloat1622float2(reinterpret_cast<const __nv_bfloat162 *>(kpe)[tid]);
    qp.x *= fa, qp.y *= fa, k.x *= fa, k.y *= fa;
    q[NOPE + tid] = qp.x * c - qp.y * sn;
    q[NOPE + ROPE / 2 + tid] = qp.y * c + qp.x * sn;
    const __nv_bfloat16 k0 = __float2bfloat16_rn(k.x * c - k.y * sn);
    const __nv_bfloat16 k1 = __float2bfloat16_rn(k.y * c + k.x * sn);
    knew[NOPE + tid] = k0;
    knew[NOPE + ROPE / 2 + tid] = k1;
    if (writer) {
      krow[NOPE + tid] = k0;
      krow[NOPE + ROPE / 2 + tid] = k1;
    }
  }
  __syncthreads(); // q, knew and vnew

  float qr[24];
#pragma unroll
  for (int i = 0; i < 3; i++)
#pragma unroll
    for (int e = 0; e < 8; e++)
      qr[8 * i + e] = q[64 * i + 8 * kvec + e];
  const float scale = 0.07216878364870323f; // 1 / sqrt(QK)
  float m = -INFINITY, l = 0, acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (uint32_t tb = 0; tb < n; tb += ATTN_TILE) {
    if (tb)
      load(tb);
    const uint32_t own = pos - j0 - tb; // the step's row, if this tile has it (else large)
    if (own < ATTN_TILE && tb + own < n) {
#pragma unroll
      for (int p = 0; p < KP; p++)
        if (16 * p + kkey == own)
#pragma unroll
          for (int i = 0; i < 3; i++)
            kr[p][i] = reinterpret_cast<const uint4 *>(knew)[kvec + 8 * i];
#pragma unroll
      for (int p = 0; p < VP; p++)
        if (8 * p + vkey == own)
          vr[p] = reinterpret_cast<const uint4 *>(vnew)[vvec];
    }
    // Scores: each lane 3 vectors' products, then the key's 8 lanes add.
    float mx = -INFINITY;
#pragma unroll
    for (int p = 0; p < KP; p++) {
      const uint32_t t = tb + 16 * p + kkey;
      float d3[3];
#pragma unroll
      for (int i = 0; i < 3; i++) {
        float f[8];
        unpack8(kr[p][i], f);
        float d = 0;
#pragma unroll
        for (int e = 0; e < 8; e++)
          d = fmaf(qr[8 * i + e], f[e], d);
        d3[i] = d;
      }
      float d = d3[0] + d3[1] + d3[2];
      d += __shfl_xor_sync(0xffffffffu, d, 4);
      d += __shfl_xor_sync(0xffffffffu, d, 2);
      d += __shfl_xor_sync(0xffffffffu, d, 1);
      d *= scale;
      if (t < n) {
        mx = fmaxf(mx, d); // NaN scores do not count: they reach the sums below
        if (kvec == 0)
          score[16 * p + kkey] = d;
      }
    }
    mx = warp_max(mx);
    if (lane == 0)
      wmax[warp] = mx;
    __syncthreads(); // score, wmax
    const float mt = fmaxf(fmaxf(wmax[0], wmax[1]), fmaxf(wmax[2], wmax[3]));
    if (tb == 0) {
      m = mt;
    } else if (mt > m) {
      const float f = expf(m - mt);
      l *= f;
#pragma unroll
      for (int e = 0; e < 8; e++)
        acc[e] *= f;
      m = mt;
    }
    // V sum: each lane its vector of its keys; l over the same keys.
#pragma unroll
    for (int p = 0; p < VP; p++) {
      const uint32_t t = tb + 8 * p + vkey;
      if (t < n) {
        float f[8];
        unpack8(vr[p], f);
        const float pr = expf(score[8 * p + vkey] - m);
        l += pr;
#pragma unroll
        for (int e = 0; e < 8; e++)
          acc[e] = fmaf(pr, f[e], acc[e]);
      }
    }
    if (tb + ATTN_TILE < n)
      __syncthreads(); // score and wmax are written again
  }
  // The block's V sum: the two keys of a warp's lanes l and l + 16, then the
  // warps, in that order.
#pragma unroll
  for (int e = 0; e < 8; e++)
    acc[e] += __shfl_xor_sync(0xffffffffu, acc[e], 16);
  l += __shfl_xor_sync(0xffffffffu, l, 16);
  if (lane < 16) {
    reinterpret_cast<float4 *>(vred[warp])[2 * lane] = make_float4(acc[0], acc[1], acc[2], acc[3]);
    reinterpret_cast<float4 *>(vred[warp])[2 * lane + 1] =
        make_float4(acc[4], acc[5], acc[6], acc[7]);
  }
  if (lane == 0)
    lred[warp] = l;
  __syncthreads();
  const float a = (vred[0][tid] + vred[1][tid]) + (vred[2][tid] + vred[3][tid]);
  l = (lred[0] + lred[1]) + (lred[2] + lred[3]);

  // Combine the shares in split order: the largest max, then each share
  // weighted by exp(its max - that).  A share without keys has sum 0; one
  // with keys at least 1, or NaN, which must reach o (a NaN key read from
  // the cache has to show).
#if DENSE_ATTN_IN_CLUSTER
  cluster.barrier_wait(); // every block of the cluster has started
  float *mine = cluster.map_shared_rank(&gather[0][0], 0) + s * (VD + 2);
  mine[tid] = a;
  if (tid == 0) {
    mine[VD] = m;
    mine[VD + 1] = l;
  }
  cluster.sync(); // the shares are in block 0's gather
  if (s != 0)
    return;
  float big = -INFINITY, num = 0, den = 0;
#pragma unroll
  for (int r = 0; r < ATTN_CLUSTER; r++)
    big = fmaxf(big, gather[r][VD]);
#pragma unroll
  for (int r = 0; r < ATTN_CLUSTER; r++) {
    const float lr = gather[r][VD + 1];
    if (lr != 0) {
      const float wgt = expf(gather[r][VD] - big);
      num = fmaf(wgt, gather[r][tid], num);
      den = fmaf(wgt, lr, den);
    }
  }
#else
  float *mine = part + ((size_t)h * splits + s) * (VD + 2);
  mine[tid] = a;
  if (tid == 0) {
    mine[VD] = m;
    mine[VD + 1] = l;
  }
  __threadfence();
  __syncthreads();
  if (tid == 0)
    last = atomicAdd(&count[h], 1u) == splits - 1;
  __syncthreads();
  if (!last)
    return;
  __threadfence();
  // 16 shares' loads at a time, all issued before any is used; between
  // groups the sums are rescaled to the new largest max.
  const float *all = part + (size_t)h * splits * (VD + 2);
  float big = -INFINITY, num = 0, den = 0;
  for (uint32_t r0 = 0; r0 < splits; r0 += 16) {
    float mr[16], lr[16], ar[16];
#pragma unroll
    for (int k = 0; k < 16; k++) {
      const bool in = r0 + k < splits;
      const float *sh = all + (size_t)(r0 + k) * (VD + 2);
      mr[k] = in ? __ldcg(sh + VD) : -INFINITY;
      lr[k] = in ? __ldcg(sh + VD + 1) : 0.0f;
      ar[k] = in ? __ldcg(sh + tid) : 0.0f;
    }
    float nb = big;
#pragma unroll
    for (int k = 0; k < 16; k++)
      nb = fmaxf(nb, mr[k]);
    if (nb > big) {
      const float f = expf(big - nb);
      num *= f;
      den *= f;
      big = nb;
    }
#pragma unroll
    for (int k = 0; k < 16; k++) {
      if (lr[k] != 0) {
        const float wgt = expf(mr[k] - big);
        num = fmaf(wgt, ar[k], num);
        den = fmaf(wgt, lr[k], den);
      }
    }
  }
  if (tid == 0)
    count[h] = 0;
#endif
  o[(size_t)h * VD + tid] = __float2bfloat16_rn(den == 0 ? 0.0f : num / den);
  (void)part;
  (void)count;
}

#endif
