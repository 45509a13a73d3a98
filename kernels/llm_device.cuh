// llm_device.cuh: the building blocks of the decode kernels (kernels/*.cu)
// and of the variants bench/kernels.cu times against them.
//
// Conventions (doc/kernels.md): weights are bf16, row-major, a row's k
// values contiguous; activations are bf16 and arithmetic f32; m tokens
// (1 to 8) are m rows of an activation, one after another.  Where the
// published PyTorch code of a model rounds to bf16 (a linear layer's output,
// a norm's output, a residual add), these kernels round at the same place,
// so that both compute the same numbers up to the order of f32 sums.
#ifndef LLM_DEVICE_CUH
#define LLM_DEVICE_CUH

#include <cuda_bf16.h>
#include <math.h>
#include <stdint.h>

namespace llm {

typedef __nv_bfloat16 bf16;

constexpr int THREADS = 256;             // every kernel's block, unless it says otherwise
constexpr int WARPS = THREADS / 32;
constexpr int MAX_TOKENS = 8;

// Programmatic dependent launch.  Before wait() a kernel may read only what
// no kernel before it writes (its weights); after trigger() the kernel after
// it may start and prefetch its own.  Built for GPUs before sm_90 both are
// nothing, and the graph keeps full edges into these kernels.
__device__ __forceinline__ void wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  cudaGridDependencySynchronize();
#endif
}
__device__ __forceinline__ void trigger() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  cudaTriggerProgrammaticLaunchCompletion();
#endif
}

// Where a kernel with a Mark parameter calls mark(phase) as its blocks pass
// the phases of their work (each kernel says which): the library's is
// NoMark, which does nothing; bench_llm_kernels --only trace times them.
struct NoMark {
  __device__ void operator()(int) const {}
};

// An asynchronous 16-byte copy from global to shared memory (cp.async,
// sm_80 and later), so that a thread's copies are all in flight at once;
// cp_async_wait() waits for the thread's own (a __syncthreads() after it
// makes every thread's visible to the block).
__device__ __forceinline__ void cp_async16(void *smem, const void *gmem) {
  const unsigned s = (unsigned)__cvta_generic_to_shared(smem);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(s), "l"(gmem) : "memory");
}
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.commit_group;\ncp.async.wait_group 0;" ::: "memory");
}
// Pipelined copies: the thread's copies since the last commit form a group;
// cp_async_wait_pending(n) waits until at most its n newest groups are in
// flight (n < 4).
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;" ::: "memory");
}
__device__ __forceinline__ void cp_async_wait_pending(int n) {
  switch (n) {
  case 0: asm volatile("cp.async.wait_group 0;" ::: "memory"); break;
  case 1: asm volatile("cp.async.wait_group 1;" ::: "memory"); break;
  case 2: asm volatile("cp.async.wait_group 2;" ::: "memory"); break;
  default: asm volatile("cp.async.wait_group 3;" ::: "memory"); break;
  }
}

__device__ __forceinline__ unsigned dynamic_smem() {
  unsigned r;
  asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(r));
  return r;
}

// A launch with less shared memory than a kernel needs would overrun it:
// stop with an error instead (the launch rule in doc/kernels.md gives it).
__device__ __forceinline__ void require_smem(size_t bytes) {
  if (dynamic_smem() < bytes)
    __trap();
}

// Asks the L2 for the line holding p (no register waits for it).
__device__ __forceinline__ void prefetch_l2(const void *p) {
  asm volatile("prefetch.global.L2 [%0];" ::"l"(p));
}

// A weight chunk of 8 bf16, read once: kept out of L1.
__device__ __forceinline__ uint4 load_weight(const bf16 *p) {
  uint4 v;
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}

__device__ __forceinline__ float bf(bf16 v) { return __bfloat162float(v); }
__device__ __forceinline__ bf16 to_bf(float v) { return __float2bfloat16_rn(v); }
// f32 -> bf16 -> f32: the value PyTorch keeps where it rounds a tensor.
__device__ __forceinline__ float round_bf(float v) { return bf(to_bf(v)); }

// Two bf16 in a 32-bit word (the first in the low half) as f32: a bf16 is
// the upper half of the f32 of the same value, so a shift and a mask give
// them exactly, an instruction each (__bfloat1622float2 took three under
// sm_90: the upper one extracted, then shifted back).
__device__ __forceinline__ float2 bf2_f32(uint32_t w) {
  return make_float2(__uint_as_float(w << 16), __uint_as_float(w & 0xffff0000u));
}
__device__ __forceinline__ void unpack8(uint4 v, float *f) {
  const uint32_t p[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (int i = 0; i < 4; i++) {
    const float2 t = bf2_f32(p[i]);
    f[2 * i] = t.x;
    f[2 * i + 1] = t.y;
  }
}

__device__ __forceinline__ float dot8(uint4 w, uint4 x, float acc) {
  float a[8], b[8];
  unpack8(w, a);
  unpack8(x, b);
#pragma unroll
  for (int i = 0; i < 8; i++)
    acc = fmaf(a[i], b[i], acc);
  return acc;
}

// 16 bytes of shared memory at shared address a (a 32-bit offset of the
// shared window, as __cvta_generic_to_shared gives): one LDS.128, its
// address a register and a constant (a generic pointer had the compiler
// find the shared window's base again at every use).  Volatile, so that it
// stays after the barrier that published what it reads.
__device__ __forceinline__ float4 lds_f4(uint32_t a) {
  float4 v;
  asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
               : "r"(a));
  return v;
}

// dot8 with the activations already in f32, in shared memory (values 0-3
// at shared address xlo, 4-7 at xhi), the same sum in the same order.
__device__ __forceinline__ float dot8s(uint4 w, uint32_t xlo, uint32_t xhi, float acc) {
  float a[8];
  unpack8(w, a);
  const float4 lo = lds_f4(xlo), hi = lds_f4(xhi);
  acc = fmaf(a[0], lo.x, acc);
  acc = fmaf(a[1], lo.y, acc);
  acc = fmaf(a[2], lo.z, acc);
  acc = fmaf(a[3], lo.w, acc);
  acc = fmaf(a[4], hi.x, acc);
  acc = fmaf(a[5], hi.y, acc);
  acc = fmaf(a[6], hi.z, acc);
  return fmaf(a[7], hi.w, acc);
}

// Butterfly reductions: every lane ends with the same bits.
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

// The sum over the block of one value a thread; every thread gets it.
// `red` holds WARPS floats; the block must call it together.
__device__ __forceinline__ float block_sum(float v, float *red) {
  v = warp_sum(v);
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  __syncthreads(); // red may still be read from a call before
  if (lane == 0)
    red[warp] = v;
  __syncthreads();
  float s = 0;
  for (int w = 0; w < (int)(blockDim.x >> 5); w++)
    s += red[w];
  return s;
}

// silu(x) = x / (1 + e^-x), as PyTorch computes it for a bf16 tensor (in f32).
__device__ __forceinline__ float silu(float x) { return x / (1.0f + expf(-x)); }

// An f32 as a u32 that orders as the values do (argmax_key's high half).
__device__ __forceinline__ uint32_t ordered_bits(float v) {
  const uint32_t b = __float_as_uint(v);
  return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}
// ordered_bits undone: the value whose bits they are.
__device__ __forceinline__ float from_ordered_bits(uint32_t u) {
  return __uint_as_float((u & 0x80000000u) ? (u & 0x7fffffffu) : ~u);
}
// An argmax candidate as one 64-bit key: larger value first, then the lower
// index, so that the largest key is the first index of the largest value.
__device__ __forceinline__ unsigned long long argmax_key(float v, uint32_t index) {
  return ((unsigned long long)ordered_bits(v) << 32) | (uint32_t)~index;
}
__device__ __forceinline__ uint32_t argmax_index(unsigned long long key) {
  return ~(uint32_t)key;
}
__device__ __forceinline__ unsigned long long warp_max_key(unsigned long long v) {
#pragma unroll
  for (int o = 16; o > 0; o /= 2) {
    unsigned long long u = __shfl_xor_sync(0xffffffffu, v, o);
    v = u > v ? u : v;
  }
  return v;
}

// ---------------------------------------------------------------------------
// Tensor-core fragments (mma.sync m16n8k16, bf16 in, f32 accumulate).

__device__ __forceinline__ void ldsm_x4(uint32_t (&r)[4], const void *p, bool trans) {
  const uint32_t a = (uint32_t)__cvta_generic_to_shared(p);
  if (trans)
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(a));
  else
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(a));
}

__device__ __forceinline__ void mma16816(float (&c)[4], const uint32_t (&a)[4], uint32_t b0,
                                         uint32_t b1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, "
               "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#else
  __trap(); // kernels/CMakeLists.txt builds the library for sm_80 and later only
#endif
}

// The address a lane gives ldmatrix.x4 for the 16 x 16 tile at (row0, col0)
// of a row-major bf16 matrix with `stride` elements a row: matrices (rows
// 0-7, cols 0-7), (8-15, 0-7), (0-7, 8-15), (8-15, 8-15).
__device__ __forceinline__ const bf16 *ldsm_addr(const bf16 *base, int stride, int row0, int col0) {
  const int lane = threadIdx.x & 31;
  return base + (size_t)(row0 + (lane & 7) + ((lane >> 3) & 1) * 8) * stride + col0 +
         (lane >> 4) * 8;
}

// ---------------------------------------------------------------------------
// Staging activations in shared memory.

// xs[t][0..k) = x[t * x_token .. + k) for t < m (m <= MB).  With
// a norm weight g, each row becomes RMSNorm(x) as the published code
// computes it: bf16(g * bf16(x * rsqrt(mean(x^2) + eps))).  k is a multiple
// of 8 and x 16-byte aligned on this path; xs rows are k apart.  The block
// calls it together.
template <int MB>
__device__ void stage_rows(bf16 *xs, const bf16 *x, int x_token, int k, int m, const bf16 *g,
                           float eps, float *red) {
  const int nch = k >> 3;
  const int rows = m < MB ? m : MB;
  // Every row's chunks in flight at once, then the norms from shared memory.
  for (int t = 0; t < rows; t++) {
    uint4 *dst = reinterpret_cast<uint4 *>(xs + (size_t)t * k);
    const uint4 *src = reinterpret_cast<const uint4 *>(x + (size_t)t * x_token);
    for (int c = threadIdx.x; c < nch; c += blockDim.x)
      cp_async16(dst + c, src + c);
  }
  cp_async_wait();
  __syncthreads();
  if (!g)
    return;
  for (int t = 0; t < rows; t++) {
    uint4 *dst = reinterpret_cast<uint4 *>(xs + (size_t)t * k);
    float ss = 0;
    for (int c = threadIdx.x; c < nch; c += blockDim.x) {
      float f[8];
      unpack8(dst[c], f);
#pragma unroll
      for (int i = 0; i < 8; i++)
        ss = fmaf(f[i], f[i], ss);
    }
    const float r = rsqrtf(block_sum(ss, red) / (float)k + eps);
    for (int c = threadIdx.x; c < nch; c += blockDim.x) { // each thread rewrites what it read
      uint4 v = dst[c], gv = reinterpret_cast<const uint4 *>(g)[c];
      float f[8], h[8];
      unpack8(v, f);
      unpack8(gv, h);
      __nv_bfloat162 *o = reinterpret_cast<__nv_bfloat162 *>(&v);
#pragma unroll
      for (int i = 0; i < 4; i++)
        o[i] = __floats2bfloat162_rn(round_bf(h[2 * i] * round_bf(f[2 * i] * r)),
                                     round_bf(h[2 * i + 1] * round_bf(f[2 * i + 1] * r)));
      dst[c] = v;
    }
  }
  __syncthreads();
}

// ---------------------------------------------------------------------------
// Dot products of weight rows with staged activations, a warp a set of NR
// rows.  Lane l takes the 16-byte chunks l, l + 32, ... of every row.  Its U
// buffers form a ring: each is consumed and then refilled with the chunk
// 32 * U further on, so that U - 1 chunks a row stay in flight while one is
// summed.  (Refilled before it was summed, the buffer's new chunk went into
// other registers, which the compiler moved back into place every step: 12
// moves of 82 instructions in a step of llm_moe_gate_up.)  ready() runs once,
// after the first chunks are in flight: it waits for the kernel before and
// stages the activations (the block calls it together).
//
// rows[r] is row r's first weight, nullptr for a row the warp does not
// have; xs the rows' activations for token 0, token t < m at xs + t * xtok.
// A chunk of activations is unpacked once for all NR rows (the sums are
// those of dot8, in its order).
template <int MB, int NR, int U> struct RowDot {
  uint4 buf[U][NR];

  __device__ __forceinline__ void fetch(const bf16 *const *rows, int u, int c, int nch) {
#pragma unroll
    for (int r = 0; r < NR; r++)
      buf[u][r] = (rows[r] && c < nch) ? load_weight(rows[r] + 8 * (size_t)c)
                                       : make_uint4(0, 0, 0, 0);
  }

  template <class Ready>
  __device__ __forceinline__ void run(const bf16 *const *rows, int k, const bf16 *xs, int xtok,
                                      int m, float (&acc)[NR][MB], Ready ready) {
    const int lane = threadIdx.x & 31;
    const int nch = k >> 3;
#pragma unroll
    for (int r = 0; r < NR; r++)
#pragma unroll
      for (int t = 0; t < MB; t++)
        acc[r][t] = 0;
#pragma unroll
    for (int u = 0; u < U; u++)
      fetch(rows, u, lane + 32 * u, nch);
    ready();
    for (int c0 = 0; c0 < nch; c0 += 32 * U) {
#pragma unroll
      for (int u = 0; u < U; u++) {
        const int c = c0 + lane + 32 * u;
        const uint4 *cur = buf[u];
        if (c < nch) {
#pragma unroll
          for (int t = 0; t < MB; t++) {
            if (MB > 1 && t >= m) // tokens past m are not staged
              break;
            const uint4 xv = reinterpret_cast<const uint4 *>(xs + (size_t)t * xtok)[c];
            // The activations stay on the intrinsic: by bf2_f32 too, the
            // experts' gate/up spilled in its 64 registers (run BK).
            const __nv_bfloat162 *xh = reinterpret_cast<const __nv_bfloat162 *>(&xv);
#pragma unroll
            for (int i = 0; i < 4; i++) {
              const float2 xf = __bfloat1622float2(xh[i]);
#pragma unroll
              for (int r = 0; r < NR; r++) {
                if (!rows[r])
                  continue;
                const float2 wf = bf2_f32(reinterpret_cast<const uint32_t *>(&cur[r])[i]);
                acc[r][t] = fmaf(wf.x, xf.x, acc[r][t]);
                acc[r][t] = fmaf(wf.y, xf.y, acc[r][t]);
              }
            }
          }
        }
        fetch(rows, u, c + 32 * U, nch);
      }
    }
#pragma unroll
    for (int r = 0; r < NR; r++)
#pragma unroll
      for (int t = 0; t < MB; t++)
        acc[r][t] = warp_sum(acc[r][t]);
  }
};

// The same dot products for any k and alignment, a value at a time (rows
// whose k is not a multiple of 8); nothing is prefetched.
template <int MB, int NR>
__device__ void dot_rows_any(const bf16 *const *rows, int k, const bf16 *const *xs, int xtok,
                             int m, float (&acc)[NR][MB]) {
  const int lane = threadIdx.x & 31;
#pragma unroll
  for (int r = 0; r < NR; r++)
#pragma unroll
    for (int t = 0; t < MB; t++) {
      float a = 0;
      if (rows[r] && t < m)
        for (int i = lane; i < k; i += 32)
          a = fmaf(bf(rows[r][i]), bf(xs[r][(size_t)t * xtok + i]), a);
      acc[r][t] = warp_sum(a);
    }
}

// Stages rows of any k (no vector loads), as stage_rows does.
template <int MB>
__device__ void stage_rows_any(bf16 *xs, const bf16 *x, int x_token, int k, int m, const bf16 *g,
                               float eps, float *red) {
  for (int t = 0; t < m && t < MB; t++) {
    float ss = 0;
    for (int i = threadIdx.x; i < k; i += blockDim.x) {
      bf16 v = x[(size_t)t * x_token + i];
      xs[(size_t)t * k + i] = v;
      ss = fmaf(bf(v), bf(v), ss);
    }
    if (g) {
      const float r = rsqrtf(block_sum(ss, red) / (float)k + eps);
      for (int i = threadIdx.x; i < k; i += blockDim.x)
        xs[(size_t)t * k + i] = to_bf(bf(g[i]) * round_bf(bf(xs[(size_t)t * k + i]) * r));
    }
  }
  __syncthreads();
}

} // namespace llm

#endif
