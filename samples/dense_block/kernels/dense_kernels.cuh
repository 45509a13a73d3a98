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

#include <cuda_bf16.h>
#include <math.h>
#include <stdint.h>

namespace dense {

constexpr int NOPE = 128, ROPE = 64, QK = NOPE + ROPE, VD = 128, KVR = 512;
constexpr int ATTN_THREADS = 128; // one thread per NOPE and per VD dimension
static_assert(ATTN_THREADS == NOPE && ATTN_THREADS == VD, "mla_attention's thread mapping");
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

// The sum (or max) over the block, in every thread; `red` holds 32 floats.
// blockDim.x is a multiple of 32.
template <bool MAX> __device__ float block_reduce(float v, float *red) {
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  v = MAX ? warp_max(v) : warp_sum(v);
  if (lane == 0)
    red[warp] = v;
  __syncthreads();
  v = lane < warps ? red[lane] : (MAX ? -INFINITY : 0.0f);
  v = MAX ? warp_max(v) : warp_sum(v);
  __syncthreads(); // red may be reused
  return v;
}

// The rotation of RoPE pair i (0 .. ROPE/2 - 1) at position pos.
__device__ __forceinline__ void rope_angle(uint32_t pos, int i, float *c, float *s) {
  float inv_freq = powf(ROPE_THETA, -(float)(2 * i) / (float)ROPE);
  sincosf((float)pos * inv_freq, s, c);
}

} // namespace dense

// y = x / rms(x) * w over n values (n a multiple of 8); one block.  Each
// thread keeps its first NORM_REGS vectors of x and w in registers, so that
// up to 8 * NORM_REGS * blockDim.x values are read once, x and w together.
extern "C" __global__ void rmsnorm_bf16(const __nv_bfloat16 *x, const __nv_bfloat16 *w,
                                        __nv_bfloat16 *y, uint32_t n) {
  constexpr int NORM_REGS = 4;
  __shared__ float red[32];
  const uint4 *xv = reinterpret_cast<const uint4 *>(x);
  const uint4 *wv = reinterpret_cast<const uint4 *>(w);
  uint4 *yv = reinterpret_cast<uint4 *>(y);
  const uint32_t nv = n / 8, rest = threadIdx.x + NORM_REGS * blockDim.x;
  uint4 xr[NORM_REGS], wr[NORM_REGS];
#pragma unroll
  for (int k = 0; k < NORM_REGS; k++) {
    const uint32_t i = threadIdx.x + k * blockDim.x;
    xr[k] = wr[k] = make_uint4(0, 0, 0, 0);
    if (i < nv) {
      xr[k] = xv[i];
      wr[k] = wv[i];
    }
  }
  float ss = 0, f[8], g[8];
#pragma unroll
  for (int k = 0; k < NORM_REGS; k++) {
    dense::unpack8(xr[k], f); // zero past the end
#pragma unroll
    for (int e = 0; e < 8; e++)
      ss = fmaf(f[e], f[e], ss);
  }
  for (uint32_t i = rest; i < nv; i += blockDim.x) {
    dense::unpack8(xv[i], f);
#pragma unroll
    for (int e = 0; e < 8; e++)
      ss = fmaf(f[e], f[e], ss);
  }
  ss = dense::block_reduce<false>(ss, red);
  const float r = rsqrtf(ss / (float)n + dense::RMS_EPS);
#pragma unroll
  for (int k = 0; k < NORM_REGS; k++) {
    const uint32_t i = threadIdx.x + k * blockDim.x;
    if (i < nv) {
      dense::unpack8(xr[k], f);
      dense::unpack8(wr[k], g);
#pragma unroll
      for (int e = 0; e < 8; e++)
        f[e] = f[e] * r * g[e];
      yv[i] = dense::pack8(f);
    }
  }
  for (uint32_t i = rest; i < nv; i += blockDim.x) {
    dense::unpack8(xv[i], f);
    dense::unpack8(wv[i], g);
#pragma unroll
    for (int e = 0; e < 8; e++)
      f[e] = f[e] * r * g[e];
    yv[i] = dense::pack8(f);
  }
}

// act = silu(gate) * up, where gu holds n gate values, then n up values.
extern "C" __global__ void swiglu_bf16(const __nv_bfloat16 *gu, __nv_bfloat16 *act, uint32_t n) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n / 8)
    return;
  float g[8], u[8];
  dense::unpack8(reinterpret_cast<const uint4 *>(gu)[i], g);
  dense::unpack8(reinterpret_cast<const uint4 *>(gu + n)[i], u);
#pragma unroll
  for (int e = 0; e < 8; e++)
    g[e] = g[e] / (1.0f + expf(-g[e])) * u[e];
  reinterpret_cast<uint4 *>(act)[i] = dense::pack8(g);
}

// Multi-head latent attention for one token, the non-absorbed way, with the
// KV cache write.  Grid (heads, splits), ATTN_THREADS threads; dynamic shared
// memory for cdiv(maxpos, splits) scores.
//
//   qa:  [heads * QK queries (NOPE, then ROPE in interleaved pairs) | KVR
//        compressed KV | ROPE key part shared by the heads]
//   kvb: per head, NOPE key values, then VD values
//   kc:  [heads, maxpos, QK], vc: [heads, maxpos, VD]
//
// RoPE follows the Hugging Face DeepSeek-V2 code: the pairs (x[2i], x[2i+1])
// rotate by pos * theta^(-2i/ROPE) and land at i and i + ROPE/2.  Block
// (h, s) takes keys [s * chunk, (s + 1) * chunk) of the first *nkeys, chunk =
// cdiv(*nkeys, splits); the block whose share holds row *pos writes head h's
// row first, so no other block reads it.  Each block leaves its unnormalised
// V sum, max and exponent sum in part; the last block of a head (counted in
// count[h], which it resets) combines them in split order and writes o.
extern "C" __global__ void __launch_bounds__(dense::ATTN_THREADS)
    mla_attention(const __nv_bfloat16 *qa, const __nv_bfloat16 *kvb, __nv_bfloat16 *kc,
                  __nv_bfloat16 *vc, const uint32_t *pos_p, const uint32_t *nkeys_p, float *part,
                  uint32_t *count, __nv_bfloat16 *o, uint32_t maxpos) {
  using namespace dense;
  extern __shared__ float score[];
  __shared__ float q[QK], red[32], vsum[8][VD];
  __shared__ bool last;
  if (blockDim.x != ATTN_THREADS)
    __trap(); // the thread mappings below assume it
  const uint32_t h = blockIdx.x, heads = gridDim.x, s = blockIdx.y, splits = gridDim.y;
  const uint32_t tid = threadIdx.x;
  const uint32_t pos = *pos_p, nkeys = min(*nkeys_p, maxpos);
  const uint32_t chunk = (nkeys + splits - 1) / splits;
  const uint32_t j0 = min(s * chunk, nkeys), j1 = min(j0 + chunk, nkeys), n = j1 - j0;
  __nv_bfloat16 *kch = kc + (size_t)h * maxpos * QK, *vch = vc + (size_t)h * maxpos * VD;
  const __nv_bfloat16 *qh = qa + (size_t)h * QK, *kvh = kvb + (size_t)h * (NOPE + VD);
  const __nv_bfloat16 *kpe = qa + (size_t)heads * QK + KVR;

  // Everything this step adds, loaded at once: this head's query, and its
  // new k and v (which one block writes into the caches).
  const __nv_bfloat16 qn = qh[tid], kn = kvh[tid], vn = kvh[NOPE + tid];
  __nv_bfloat162 qp = __floats2bfloat162_rn(0, 0), kp = qp;
  float c = 0, sn = 0;
  if (tid < ROPE / 2) {
    qp = reinterpret_cast<const __nv_bfloat162 *>(qh + NOPE)[tid];
    kp = reinterpret_cast<const __nv_bfloat162 *>(kpe)[tid];
    rope_angle(pos, tid, &c, &sn);
  }
  q[tid] = __bfloat162float(qn);
  if (tid < ROPE / 2) {
    const float2 x = __bfloat1622float2(qp);
    q[NOPE + tid] = x.x * c - x.y * sn;
    q[NOPE + ROPE / 2 + tid] = x.y * c + x.x * sn;
  }
  const uint32_t writer = chunk ? min(pos / chunk, splits - 1) : 0;
  if (s == writer && pos < maxpos) {
    __nv_bfloat16 *krow = kch + (size_t)pos * QK, *vrow = vch + (size_t)pos * VD;
    krow[tid] = kn;
    vrow[tid] = vn;
    if (tid < ROPE / 2) {
      const float2 x = __bfloat1622float2(kp);
      krow[NOPE + tid] = __float2bfloat16_rn(x.x * c - x.y * sn);
      krow[NOPE + ROPE / 2 + tid] = __float2bfloat16_rn(x.y * c + x.x * sn);
    }
  }
  __syncthreads(); // q, and the row this block wrote, are visible to the block

  // This thread's share of V (keys vgroup, vgroup + 8, ...; 8 of its
  // dimensions) for up to V_REGS keys, loaded now so that it arrives while
  // the scores are worked out.
  constexpr int V_REGS = 8;
  const uint32_t vgroup = tid / 16, c16 = tid % 16;
  uint4 vr[V_REGS];
#pragma unroll
  for (int i = 0; i < V_REGS; i++) {
    const uint32_t t = vgroup + 8 * i;
    vr[i] = make_uint4(0, 0, 0, 0);
    if (t < n)
      vr[i] = reinterpret_cast<const uint4 *>(vch + (size_t)(j0 + t) * VD)[c16];
  }

  // Scores: 8 lanes a key, each lane 3 of the key's 24 vectors of 8.
  {
    const uint32_t group = tid / 8, l8 = tid % 8, groups = blockDim.x / 8;
    float qr[24];
#pragma unroll
    for (int i = 0; i < 3; i++)
#pragma unroll
      for (int e = 0; e < 8; e++)
        qr[8 * i + e] = q[64 * i + 8 * l8 + e];
    const float scale = 0.07216878364870323f; // 1 / sqrt(QK)
    for (uint32_t base = 0; base < n; base += groups) {
      const uint32_t t = base + group;
      float d = 0;
      if (t < n) {
        const uint4 *kr = reinterpret_cast<const uint4 *>(kch + (size_t)(j0 + t) * QK);
        uint4 v[3];
#pragma unroll
        for (int i = 0; i < 3; i++)
          v[i] = kr[l8 + 8 * i];
#pragma unroll
        for (int i = 0; i < 3; i++) {
          float f[8];
          unpack8(v[i], f);
#pragma unroll
          for (int e = 0; e < 8; e++)
            d = fmaf(qr[8 * i + e], f[e], d);
        }
      }
      d += __shfl_xor_sync(0xffffffffu, d, 4);
      d += __shfl_xor_sync(0xffffffffu, d, 2);
      d += __shfl_xor_sync(0xffffffffu, d, 1);
      if (t < n && l8 == 0)
        score[t] = d * scale;
    }
  }
  __syncthreads();

  // Softmax over this block's keys, unnormalised.
  float m = -INFINITY;
  for (uint32_t t = tid; t < n; t += blockDim.x)
    m = fmaxf(m, score[t]);
  m = block_reduce<true>(m, red);
  float l = 0;
  for (uint32_t t = tid; t < n; t += blockDim.x) {
    float p = expf(score[t] - m);
    score[t] = p;
    l += p;
  }
  l = block_reduce<false>(l, red); // its barrier also publishes score[]

  // V sum: 16 lanes a key, each lane 8 of its dimensions; 8 keys at a time.
  {
    float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0}, f[8];
#pragma unroll
    for (int i = 0; i < V_REGS; i++) {
      const uint32_t t = vgroup + 8 * i;
      if (t < n) {
        unpack8(vr[i], f);
        const float p = score[t];
#pragma unroll
        for (int e = 0; e < 8; e++)
          acc[e] = fmaf(p, f[e], acc[e]);
      }
    }
    for (uint32_t t = vgroup + 8 * V_REGS; t < n; t += 8) {
      unpack8(reinterpret_cast<const uint4 *>(vch + (size_t)(j0 + t) * VD)[c16], f);
      const float p = score[t];
#pragma unroll
      for (int e = 0; e < 8; e++)
        acc[e] = fmaf(p, f[e], acc[e]);
    }
#pragma unroll
    for (int e = 0; e < 8; e++)
      vsum[vgroup][8 * c16 + e] = acc[e];
  }
  __syncthreads();
  float a = 0;
  for (int g = 0; g < 8; g++)
    a += vsum[g][tid];

  // Leave this block's share; the last block of the head combines them.
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
  const float *all = part + (size_t)h * splits * (VD + 2);
  float big = -INFINITY;
  for (uint32_t r = 0; r < splits; r++)
    big = fmaxf(big, __ldcg(all + r * (VD + 2) + VD));
  float num = 0, den = 0;
  for (uint32_t r = 0; r < splits; r++) {
    // A share without keys has sum 0; one with keys at least 1, or NaN,
    // which must reach o (a NaN key read from the cache has to show).
    const float lr = __ldcg(all + r * (VD + 2) + VD + 1);
    if (lr == 0)
      continue;
    const float wgt = expf(__ldcg(all + r * (VD + 2) + VD) - big);
    num = fmaf(wgt, __ldcg(all + r * (VD + 2) + tid), num);
    den = fmaf(wgt, lr, den);
  }
  o[(size_t)h * VD + tid] = __float2bfloat16_rn(den == 0 ? 0.0f : num / den);
  if (tid == 0)
    count[h] = 0;
}

#endif
