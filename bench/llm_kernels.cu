// llm_kernels: kernels/ (cgc::kernels) at DeepSeek-V2-Lite's decode shapes,
// each timed as CALLS back-to-back calls in one CUDA graph (stream-captured,
// with programmatic dependent launch where the kernel takes part in it),
// each call reading another copy of its weights so that the 50 MB L2 does not
// hold them; against cuBLAS's GEMM timed the same way and a read-only kernel
// over the same bytes timed the same way, in the same run.  Also the GEMV's
// tile shapes swept (warps' rows R, chunks in flight U), the read-only
// kernel over 8 GB, and one whole MoE layer as a chain.
//
//   bench_llm_kernels [--quick | --read]
//
// Prints CSV rows (section,case,way,metric,value) for bench/llm_kernels.py.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <functional>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

#include "check.h"     // CUDA(call): a CUDA call that must succeed
#include "timing.h"    // bench_median, bench_row
#include "llm_graph.h" // the library's kernels, as llm.cgraph declares them
#include "read_only.cuh" // bench_read_only: the floor

#include "llm_config.cuh"
#include "llm_gemv.cuh"
#include "llm_mla.cuh"
#include "llm_moe.cuh"

using namespace llm;

#define CUBLAS(call)                                                                       \
  do {                                                                                     \
    cublasStatus_t s_ = (call);                                                            \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                                     \
      fprintf(stderr, "%s:%d: %s: cuBLAS status %d\n", __FILE__, __LINE__, #call, (int)s_); \
      exit(1);                                                                             \
    }                                                                                      \
  } while (0)

static int CALLS = 200;         // calls in a timed graph
static int REPS = 15;           // timed launches of it (the median is reported)
static const size_t ROTATE = 512u << 20; // copies of the weights span at least this

// The GEMV at other tile shapes (one token), for the sweep.
// MINB: blocks a multiprocessor the registers must allow (__launch_bounds__),
// so that the next kernel's blocks fit beside this one's and prefetch.
template <int R, int U, int MINB = 1>
__global__ void __launch_bounds__(THREADS, MINB) gemv_variant(const bf16 *w, const bf16 *x, bf16 *y, int n,
                                                        int k) {
  GemvArgs a{w, x, nullptr, y, nullptr, nullptr, n, k, 1, 0, 0, 0, k, 0};
  gemv_blocks<1, R, U, Epi::Plain>(a, blockIdx.x, gridDim.x);
}

// The experts' kernels at other shapes (R units a warp, U chunks in flight).
template <int R, int U, int MINB = 1>
__global__ void __launch_bounds__(THREADS, MINB) gate_up_variant(const bf16 *w, const bf16 *ws,
                                                           const bf16 *x, const bf16 *g,
                                                           const uint32_t *ids, bf16 *act, int fe,
                                                           int fs, int topk, int k, int m) {
  Moe<R, U>::gate_up(w, ws, x, g, ids, act, fe, fs, topk, k, m, 1e-6f);
}
template <int R, int U, int MINB = 1>
__global__ void __launch_bounds__(THREADS, MINB) down_variant(const bf16 *w, const bf16 *ws,
                                                        const bf16 *act, const uint32_t *ids,
                                                        const float *wts, bf16 *x, int fe, int fs,
                                                        int topk, int n, int m) {
  Moe<R, U>::down(w, ws, act, ids, wts, x, fe, fs, topk, n, m);
}
// The experts' gate/up with the shared experts' blocks waiting on the
// kernel before, as the routed ones do (the library's run beside the router).
__global__ void __launch_bounds__(THREADS, MOE_GATE_UP_BLOCKS)
    gate_up_shared_late(const bf16 *w, const bf16 *ws, const bf16 *x, const bf16 *g,
                        const uint32_t *ids, bf16 *act, int fe, int fs, int topk, int k, int m) {
  Moe<SWIGLU_R, SWIGLU_U>::template gate_up<false>(w, ws, x, g, ids, act, fe, fs, topk, k, m,
                                                   1e-6f);
}
// The router letting the experts' gate/up start before its own wait, so
// that gate_up's blocks come beside o_proj's and the shared experts' ones
// have their first weights in flight when o_proj ends (--only layer's
// router_flag row; one token).  sync[0] is a flag the router raises once it
// has waited on o_proj (x is then complete); the shared blocks wait for it
// instead of for the router's start, and count themselves in sync[1]: the
// last lowers both, so that they are 0 again for the next pair.  No
// deadlock: gate_up starts only once every router block has started, and
// the router once every o_proj block has.
__device__ __forceinline__ void flag_raise(uint32_t *f) {
  asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(f), "r"(1u) : "memory");
}
__device__ __forceinline__ uint32_t flag_read(const uint32_t *f) {
  uint32_t v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(f) : "memory");
  return v;
}
struct StageRaise { // after the wait: raise the flag, then stage as StageX
  uint32_t *flag;
  template <int MB>
  __device__ void run(bf16 *xs, const GemvArgs &a, int grp, bool fast, float *red) const {
    if (blockIdx.x == 0 && threadIdx.x == 0)
      flag_raise(flag);
    StageX().run<MB>(xs, a, grp, fast, red);
  }
};
struct StageAfterFlag { // no wait: the flag, then stage as StageX
  const uint32_t *flag;
  template <int MB>
  __device__ void run(bf16 *xs, const GemvArgs &a, int grp, bool fast, float *red) const {
    if (threadIdx.x == 0)
      while (flag_read(flag) == 0)
        __nanosleep(64); // 352 blocks asking at once would crowd the flag's L2 slice
    __syncthreads();
    StageX().run<MB>(xs, a, grp, fast, red);
  }
};
__global__ void __launch_bounds__(THREADS, 2)
    route_raising(const bf16 *w, const bf16 *x, const bf16 *g, float *logits, uint32_t *count,
                  uint32_t *ids, float *weights, int experts, int k, int topk, uint32_t *sync) {
  trigger();
  Moe<SWIGLU_R, GEMV_U>::route(w, x, g, logits, count, ids, weights, experts, k, 1, topk, 1e-6f,
                               StageRaise{sync});
}
// The experts' gate/up at one token as Moe::gate_up runs it, a unit a
// block: the shared experts' unit b < nbs (staged by `stage`, waiting on the
// kernel before where pdl) and the routed units after them, whose rows
// are expert e's.  The variants below differ in how a block starts.
constexpr int GU_PB = WARPS * SWIGLU_R; // units a block
__device__ __forceinline__ int gate_up_blocks(int n) { return (n + GU_PB - 1) / GU_PB; }
template <class Stage>
__device__ __forceinline__ void gate_up_shared_unit(const bf16 *ws, const bf16 *x, const bf16 *g,
                                                    bf16 *act, int fe, int fs, int topk, int k,
                                                    int b, const Stage &stage, bool pdl) {
  GemvArgs a{ws, x, g, act + (size_t)topk * fe, nullptr, nullptr, fs, k, 1, 1e-6f,
             0, 0, k, topk * fe + fs};
  gemv_blocks<1, SWIGLU_R, SWIGLU_U, Epi::Swiglu>(a, b, gate_up_blocks(fs), stage, pdl);
}
__device__ __forceinline__ void gate_up_routed_unit(const bf16 *w, const bf16 *x, const bf16 *g,
                                                    bf16 *act, int fe, int k, uint32_t e,
                                                    int slot, int rb, bool pdl = true) {
  GemvArgs a{w + (size_t)e * 2 * fe * k, x, g, act + (size_t)slot * fe, nullptr, nullptr, fe,
             k, 1, 1e-6f, 0, 0, k, 0};
  gemv_blocks<1, SWIGLU_R, SWIGLU_U, Epi::Swiglu>(a, rb, gate_up_blocks(fe), StageX(), pdl);
}
// How a block of the experts' gate/up at one token starts, other than as
// the library's (--only layer's rows).  Flag: the shared blocks do not wait
// but look at the flag sync[0] that route_raising raises, as above
// (router_flag, flag_routed_free); else they stage at once, as the
// library's.  RoutedWait: the routed blocks wait on the router, as the
// library's (router_flag); else they let the next kernel start and read
// whichever ids are there, the chains' earlier ones mostly
// (route_not_waited, flag_routed_free: wrong ids, right bytes; what the
// router costs by its place in the chain rather than by its being there).
template <bool Flag, bool RoutedWait>
__global__ void __launch_bounds__(THREADS, MOE_GATE_UP_BLOCKS)
    gate_up_started(const bf16 *w, const bf16 *ws, const bf16 *x, const bf16 *g,
                    const uint32_t *ids, bf16 *act, int fe, int fs, int topk, int k,
                    uint32_t *sync) {
  const int nbs = gate_up_blocks(fs), nbr = gate_up_blocks(fe), b = blockIdx.x;
  if (b < nbs) {
    if constexpr (Flag) {
      gate_up_shared_unit(ws, x, g, act, fe, fs, topk, k, b, StageAfterFlag{sync}, false);
      if (threadIdx.x == 0 && atomicAdd(sync + 1, 1u) == (unsigned)nbs - 1) {
        sync[1] = 0; // every shared block has seen the flag
        sync[0] = 0;
      }
    } else {
      gate_up_shared_unit(ws, x, g, act, fe, fs, topk, k, b, StageX(), false);
    }
  } else {
    const int r = b - nbs, slot = r / nbr;
    if constexpr (RoutedWait) {
      wait();
      gate_up_routed_unit(w, x, g, act, fe, k, ids[slot], slot, r % nbr);
    } else {
      trigger();
      gate_up_routed_unit(w, x, g, act, fe, k, __ldcg(ids + slot) % 64u, slot, r % nbr, false);
    }
  }
}
// The router at one token with its weights in shared memory: a block's 8
// rows (a row a warp) asked for with cp.async before the wait, so that
// after it nothing comes from the HBM; then as the library's (the next
// kernel let start at once, x staged and normed, the cluster's logits
// joined in its first block, the top k there).  Dynamic shared memory:
// WARPS * k * 2 bytes of rows, then k * 2 of x (--only layer's
// router_rows_in_smem row: what a shorter router would save).
__global__ void __launch_bounds__(THREADS, 2)
    route_smem(const bf16 *w, const bf16 *x, const bf16 *g, float *logits, uint32_t *ids,
               float *weights, int experts, int k, int topk) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  extern __shared__ __align__(16) unsigned char llm_smem[];
  __shared__ float joined[MOE_MAX_EXPERTS], red[WARPS];
  uint4 *rows = reinterpret_cast<uint4 *>(llm_smem);
  bf16 *xs = reinterpret_cast<bf16 *>(llm_smem + (size_t)WARPS * k * 2);
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, nch = k >> 3;
  const int row = (int)blockIdx.x * WARPS + warp;
  namespace cg = cooperative_groups;
  cg::cluster_group cluster = cg::this_cluster();
  for (int c = threadIdx.x; c < WARPS * nch; c += THREADS) {
    const int e = (int)blockIdx.x * WARPS + c / nch;
    if (e < experts)
      cp_async16(rows + c, reinterpret_cast<const uint4 *>(w + (size_t)e * k) + c % nch);
  }
  cp_async_commit();
  cluster.sync(); // every block has started: the first block's joined may be written
  wait();
  trigger();
  const GemvArgs a{w, x, g, nullptr, nullptr, nullptr, experts, k, 1, 1e-6f, 0, 0, k, 0};
  StageX().run<1>(xs, a, 0, true, red); // waits for the rows' copies too
  if (row < experts) {
    float sum = 0;
    for (int c = lane; c < nch; c += 32)
      sum = dot8(rows[warp * nch + c], reinterpret_cast<const uint4 *>(xs)[c], sum);
    sum = warp_sum(sum);
    if (lane == 0)
      *cluster.map_shared_rank(joined + row, 0) = sum;
  }
  cluster.sync();
  if (cluster.block_rank() == 0 && threadIdx.x < 32) {
    for (int e = threadIdx.x; e < experts; e += 32)
      logits[e] = joined[e];
    Moe<SWIGLU_R, GEMV_U>::top_k(joined, false, 0, experts, topk, ids, weights);
  }
#else
  __trap(); // clusters: compute capability 9.0
#endif
}
// gate_up as the library runs it at one token, but for its shared blocks,
// which first ask the L2 for their rows whole (64 KB a block: a line of 128
// bytes a thread's prefetch), so that the shared experts, which stream
// while the routed blocks wait on the router, have more than their
// registers' chunks in flight (--only layer's shared_rows_in_l2 row).
__global__ void __launch_bounds__(THREADS, MOE_GATE_UP_BLOCKS)
    gate_up_shared_l2(const bf16 *w, const bf16 *ws, const bf16 *x, const bf16 *g,
                      const uint32_t *ids, bf16 *act, int fe, int fs, int topk, int k) {
  const int nbs = gate_up_blocks(fs), nbr = gate_up_blocks(fe), b = blockIdx.x;
  if (b < nbs) {
    // The block's gate rows [b * GU_PB, b * GU_PB + GU_PB) and up rows fs further.
    const size_t row_bytes = (size_t)k * 2, lines = GU_PB * row_bytes / 128;
    for (size_t l = threadIdx.x; l < 2 * lines; l += THREADS) {
      const size_t half = l / lines, off = (l % lines) * 128;
      const int row = b * GU_PB + (int)(off / row_bytes);
      if (row < fs)
        prefetch_l2(reinterpret_cast<const char *>(ws + ((size_t)row + half * fs) * k) +
                    off % row_bytes);
    }
    gate_up_shared_unit(ws, x, g, act, fe, fs, topk, k, b, StageX(), false);
  } else {
    const int r = b - nbs, slot = r / nbr;
    wait();
    gate_up_routed_unit(w, x, g, act, fe, k, ids[slot], slot, r % nbr);
  }
}
// --only trace: the layer's chain as the library's kernels, each block
// writing the global timer (ns) when it starts, once it has waited on the
// kernel before (a stage's start) and when it ends, into tr[3 * block ..]
// (nullptr: not this call).  Where each kernel's blocks are in time, so
// where the chain's time goes beyond its bytes.
__device__ __forceinline__ unsigned long long gtime() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__device__ __forceinline__ void mark(unsigned long long *tr, int which) {
  if (tr && threadIdx.x == 0)
    tr[3 * (blockIdx.x + (size_t)blockIdx.y * gridDim.x) + which] = gtime();
}
// Where a block passes the phases of its work, into ph[8 * block + phase]
// (nullptr: not this call): mla_decode_block's (its Mark), and phase 0 of a
// stage's end (Marked).
struct PhaseMark {
  unsigned long long *ph;
  __device__ void operator()(int k) const {
    if (ph && threadIdx.x == 0)
      ph[8 * (blockIdx.x + (size_t)blockIdx.y * gridDim.x) + k] = gtime();
  }
};
template <class S> struct Marked { // stage as S, after marking the wait's end
  S s;
  unsigned long long *tr;
  unsigned long long *ph = nullptr; // the stage's end, as phase 0
  template <int MB>
  __device__ void run(bf16 *xs, const GemvArgs &a, int grp, bool fast, float *red) const {
    mark(tr, 1);
    s.template run<MB>(xs, a, grp, fast, red);
    PhaseMark{ph}(0);
  }
};
__global__ void __launch_bounds__(THREADS, 2)
    tr_norm_gemv(const bf16 *w, const bf16 *x, const bf16 *g, bf16 *y, int n, int k, int m,
                 float eps, unsigned long long *tr, unsigned long long *ph) {
  mark(tr, 0);
  trigger();
  GemvArgs a{w, x, g, y, nullptr, nullptr, n, k, m, eps, 0, 0, k, 0};
  gemv_dispatch<GEMV_R, GEMV_U, Epi::Plain>(a, blockIdx.x, gridDim.x, Marked<StageX>{{}, tr, ph});
  mark(tr, 2);
}
__global__ void __launch_bounds__(THREADS)
    tr_prep(const bf16 *w_ukt, const bf16 *qkv, const bf16 *kv_norm, const float *inv_freq,
            const uint32_t *pos, bf16 *q_lat, bf16 *q_pe, bf16 *cache, int m, int maxpos,
            unsigned long long *tr, unsigned long long *ph) {
  mark(tr, 0);
  const int nb = (int)gridDim.x - 1;
  if ((int)blockIdx.x == nb) {
    wait();
    mark(tr, 1);
    trigger();
    mla_rope_cache_block(qkv, kv_norm, inv_freq, pos, q_pe, cache, m, maxpos, 1e-6f, 1.0f,
                         PhaseMark{ph});
  } else {
    mla_absorb_queries<GEMV_R, GEMV_U>(w_ukt, qkv, q_lat, m, nb, Marked<StageX>{{}, tr});
  }
  mark(tr, 2);
}
// llm_mla_prep with its last block's work in two blocks of their own:
// the normed latent rows of the cache in one, the RoPE of the key and the
// queries in the other (--only layer's prep_rope_split row), so that the
// decode waits on the longer of the two instead of both in a row.  The
// same GEMV: launched with one block more than llm_mla_prep (Extra 2).
// With Extra 0, the GEMV's blocks alone (prep_gemv_only): the queries'
// RoPE and the cache's new row left as they were, so what taking that
// block off the decode's path could save the chain at most.
template <int Extra>
__global__ void __launch_bounds__(THREADS)
    prep_split(const bf16 *w_ukt, const bf16 *qkv, const bf16 *kv_norm, const float *inv_freq,
               const uint32_t *pos, bf16 *q_lat, bf16 *q_pe, bf16 *cache, int m, int maxpos) {
  const int nb = (int)gridDim.x - Extra;
  if (Extra > 0 && (int)blockIdx.x >= nb) {
    wait();
    trigger();
    if ((int)blockIdx.x == nb)
      mla_rope_cache_block<1>(qkv, kv_norm, inv_freq, pos, q_pe, cache, m, maxpos, 1e-6f, 1.0f);
    else
      mla_rope_cache_block<2>(qkv, kv_norm, inv_freq, pos, q_pe, cache, m, maxpos, 1e-6f, 1.0f);
    return;
  }
  mla_absorb_queries<GEMV_R, GEMV_U>(w_ukt, qkv, q_lat, m, nb);
}
__global__ void __launch_bounds__(MLA_THREADS)
    tr_decode(const bf16 *q_lat, const bf16 *q_pe, const bf16 *cache, const uint32_t *pos,
              float *part, float *ml, int m, int maxpos, float scale, unsigned long long *tr,
              unsigned long long *ph) {
  mark(tr, 0);
  mla_decode_block(MlaDecodeArgs{q_lat, q_pe, cache, pos, part, ml, m, maxpos, scale},
                   PhaseMark{ph});
  mark(tr, 2);
}
__global__ void __launch_bounds__(THREADS, 2)
    tr_combine_up(const bf16 *w_uv, const float *part, const float *ml, bf16 *y, int splits,
                  int m, unsigned long long *tr, unsigned long long *ph) {
  mark(tr, 0);
  trigger();
  GemvArgs a{w_uv, nullptr, nullptr, y, nullptr, nullptr, MLA_H * MLA_VD, MLA_KVR, m, 0,
             MLA_VD, MLA_KVR, MLA_H * MLA_KVR, 0};
  gemv_dispatch<GEMV_R, GEMV_U, Epi::Plain>(
      a, blockIdx.x, gridDim.x,
      Marked<StageJoin<false>>{StageJoin<false>{part, ml, splits}, tr, ph});
  mark(tr, 2);
}
__global__ void __launch_bounds__(THREADS, 2)
    tr_o_proj(const bf16 *w, const bf16 *x, bf16 *y, int n, int k, int m,
              unsigned long long *tr, unsigned long long *ph) {
  mark(tr, 0);
  GemvArgs a{w, x, nullptr, y, nullptr, nullptr, n, k, m, 0, 0, 0, k, 0};
  gemv_dispatch<GEMV_R, GEMV_U, Epi::Residual>(a, blockIdx.x, gridDim.x,
                                               Marked<StageX>{{}, tr, ph});
  mark(tr, 2);
}
__global__ void __launch_bounds__(THREADS, 2)
    tr_route(const bf16 *w, const bf16 *x, const bf16 *g, float *logits, uint32_t *count,
             uint32_t *ids, float *weights, int experts, int k, int m, int topk,
             unsigned long long *tr, unsigned long long *ph) {
  mark(tr, 0);
  Moe<SWIGLU_R, GEMV_U>::route(w, x, g, logits, count, ids, weights, experts, k, m, topk, 1e-6f,
                               Marked<StageTriggered>{{}, tr, ph}, PhaseMark{ph});
  mark(tr, 2);
}
template <bool SharedEarly>
__global__ void __launch_bounds__(THREADS, MOE_GATE_UP_BLOCKS)
    tr_gate_up(const bf16 *w, const bf16 *ws, const bf16 *x, const bf16 *g, const uint32_t *ids,
               bf16 *act, int fe, int fs, int topk, int k, unsigned long long *tr) {
  mark(tr, 0);
  const int nbs = gate_up_blocks(fs), nbr = gate_up_blocks(fe), b = blockIdx.x;
  if (b < nbs) {
    gate_up_shared_unit(ws, x, g, act, fe, fs, topk, k, b, Marked<StageX>{{}, tr}, !SharedEarly);
  } else {
    const int r = b - nbs, slot = r / nbr;
    wait();
    mark(tr, 1);
    gate_up_routed_unit(w, x, g, act, fe, k, ids[slot], slot, r % nbr);
  }
  mark(tr, 2);
}
__global__ void __launch_bounds__(THREADS, 2)
    tr_down(const bf16 *w, const bf16 *ws, const bf16 *act, const uint32_t *ids, const float *wts,
            bf16 *x, int fe, int fs, int topk, int n, unsigned long long *tr) {
  mark(tr, 0);
  Moe<SWIGLU_R, GEMV_U>::down(w, ws, act, ids, wts, x, fe, fs, topk, n, 1);
  mark(tr, 2);
}
// o_proj (llm_gemv_residual) asking the L2 for its share of the next
// kernel's weights (the router's, `bytes` of them) before its own, so that
// the router's loads after its wait find them there.
__global__ void __launch_bounds__(THREADS, 2)
    gemv_residual_l2_next(const bf16 *w, const bf16 *x, bf16 *y, int n, int k, int m,
                          const bf16 *next, int bytes) {
  const int share = (bytes + (int)gridDim.x - 1) / (int)gridDim.x;
  for (int i = (int)threadIdx.x * 128; i < share && (int)blockIdx.x * share + i < bytes;
       i += THREADS * 128)
    prefetch_l2(reinterpret_cast<const char *>(next) + (int)blockIdx.x * share + i);
  GemvArgs a{w, x, nullptr, y, nullptr, nullptr, n, k, m, 0, 0, 0, k, 0};
  gemv_dispatch<GEMV_R, GEMV_U, Epi::Residual>(a, blockIdx.x, gridDim.x);
}
// Up to four ranges of weights asked of the L2 by a kernel of their own,
// beside the attention on a branch of the graph (--only layer's *_in_l2
// rows): the bytes a later kernel of the layer reads, brought in while the
// attention's kernels leave the memory idle.  Lines: a prefetch.global.L2
// a 128-byte line; bulk: a cp.async.bulk.prefetch.L2 a 4 KB piece (compute
// capability 9.0; lines below it).
struct L2Ranges {
  const char *p[4];
  size_t bytes[4];
};
template <bool Bulk> __global__ void __launch_bounds__(256) l2_prefetch(L2Ranges r) {
  const size_t tid = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  const size_t threads = (size_t)gridDim.x * blockDim.x;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  constexpr bool bulk = Bulk;
#else
  constexpr bool bulk = false;
#endif
  for (int k = 0; k < 4; k++) {
    if (bulk) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
      for (size_t i = tid * 4096; i < r.bytes[k]; i += threads * 4096) {
        const unsigned n = (unsigned)(r.bytes[k] - i < 4096 ? r.bytes[k] - i : 4096) & ~15u;
        if (n)
          asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(r.p[k] + i), "r"(n)
                       : "memory");
      }
#endif
    } else {
      for (size_t i = tid * 128; i < r.bytes[k]; i += threads * 128)
        prefetch_l2(r.p[k] + i);
    }
  }
}
// down staging its activations otherwise (DownStage; Early is right here,
// since no kernel of the bench's chain writes act), or asking the L2 for PF
// more chunks a lane while they come.
template <DownStage ST, int U, int MINB, int PF = 0>
__global__ void __launch_bounds__(THREADS, MINB) down_stage_variant(const bf16 *w, const bf16 *ws,
                                                              const bf16 *act, const uint32_t *ids,
                                                              const float *wts, bf16 *x, int fe,
                                                              int fs, int topk, int n, int m) {
  Moe<1, U>::template down<ST, PF>(w, ws, act, ids, wts, x, fe, fs, topk, n, m);
}

// The router stopped short (RouteStop) or with U chunks a lane in flight:
// --only router, where each step of its chain goes.
template <RouteStop RS, int U>
__global__ void __launch_bounds__(THREADS, 2) route_variant(const bf16 *w, const bf16 *x,
                                                      const bf16 *g, float *logits,
                                                      uint32_t *count, uint32_t *ids,
                                                      float *weights, int experts, int k, int m,
                                                      int topk) {
  Moe<SWIGLU_R, U>::template route<RS>(w, x, g, logits, count, ids, weights, experts, k, m, topk,
                                       1e-6f);
}

// The library's down before 2026-12-04, which the one of kernels/llm_moe.cuh
// is measured against: the same stream, a sum a segment in registers
// (selected by a compare a chunk) and the rows found again a chunk; with
// EarlyIds false, the ids read after the wait and the experts' chunks
// fetched again then (as before 2026-12-03).
template <int U, bool EarlyIds>
__device__ void down_before(const bf16 *w, const bf16 *w_shared, const bf16 *act,
                            const uint32_t *ids, const float *weights, bf16 *x, int fe, int fs,
                            int topk, int n, int m) {
  constexpr int DU = 2 * U;
  extern __shared__ __align__(16) unsigned char llm_smem[];
  bf16 *xs = reinterpret_cast<bf16 *>(llm_smem);
  __shared__ float red[WARPS];
  const int t = blockIdx.y, warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int act_token = topk * fe + fs;
  const bool fast = (fe & 7) == 0 && (fs & 7) == 0;
  if (t >= m || !fast) { // the launch rules ask for fe and fs multiples of 8
    wait();
    trigger();
    if (t < m)
      __trap();
    return;
  }
  const int nsh = fs >> 3, nfe = fe >> 3, total = nsh + topk * nfe;
  uint32_t eid[MOE_MAX_TOPK]; // read in the block's first pass
  if (EarlyIds)
    for (int s = 0; s < topk; s++)
      eid[s] = __ldcg(ids + (size_t)t * topk + s); // through L2: another kernel wrote them
  auto seg_chunks = [&](int s) { return s == 0 ? nsh : nfe; };
  for (int b = blockIdx.x, first = 1; first || b * WARPS < n; b += gridDim.x, first = 0) {
    const int d = b * WARPS + warp;
    const bool valid = d < n;
    const size_t dd = valid ? (size_t)d : 0;
    // Segment s's row of output d: the shared experts' (s = 0), known
    // before the kernel before finishes, or expert ids[t][s - 1]'s, known
    // only after (the router writes ids); nullptr until then.
    bool known = !first || EarlyIds;
    auto seg_row = [&](int s) -> const bf16 * {
      if (s == 0)
        return w_shared + dd * fs;
      if (s > topk || !known)
        return nullptr;
      return w + ((size_t)eid[s - 1] * n + dd) * fe;
    };
    uint4 buf[DU];
    float acc[MOE_MAX_TOPK + 1];
#pragma unroll
    for (int s = 0; s <= MOE_MAX_TOPK; s++)
      acc[s] = 0;
    // The fetch position (segment, chunk in it, its row), DU * 32 chunks
    // ahead of the consumption position.
    int f_seg = 0, f_off = lane;
    const bf16 *f_row = seg_row(0);
    auto fetch = [&](uint4 &dst) {
      while (f_seg <= topk && f_off >= seg_chunks(f_seg)) {
        f_off -= seg_chunks(f_seg);
        f_row = seg_row(++f_seg);
      }
      dst = (valid && f_row && f_seg <= topk) ? load_weight(f_row + 8 * (size_t)f_off)
                                               : make_uint4(0, 0, 0, 0);
      f_off += 32;
    };
#pragma unroll
    for (int u = 0; u < DU; u++)
      fetch(buf[u]);
    if (first) {
      wait();
      stage_rows<1>(xs, act + (size_t)t * act_token, act_token, act_token, 1, nullptr, 0.0f,
                    red);
      trigger();
      if (!EarlyIds) {
        for (int s = 0; s < topk; s++)
          eid[s] = ids[(size_t)t * topk + s];
        known = true;
        // Fetch again what was fetched past the shared row before the ids were known.
        int ps = 0, po = lane;
#pragma unroll
        for (int u = 0; u < DU; u++) {
          while (ps <= topk && po >= seg_chunks(ps)) {
            po -= seg_chunks(ps);
            ps++;
          }
          if (ps >= 1 && ps <= topk && valid)
            buf[u] = load_weight(seg_row(ps) + 8 * (size_t)po);
          po += 32;
        }
        if (f_seg >= 1)
          f_row = seg_row(f_seg);
      }
    }
    int c_seg = 0, c_off = lane; // the consumption position
    const bf16 *c_x = xs + (size_t)topk * fe;
    for (int j0 = 0; j0 < total; j0 += 32 * DU) {
#pragma unroll
      for (int u = 0; u < DU; u++) {
        const uint4 cur = buf[u];
        fetch(buf[u]);
        while (c_seg <= topk && c_off >= seg_chunks(c_seg)) {
          c_off -= seg_chunks(c_seg);
          c_x = xs + (size_t)c_seg * fe; // segment c_seg + 1 is expert slot c_seg
          c_seg++;
        }
        if (c_seg <= topk) {
          const float v = dot8(cur, reinterpret_cast<const uint4 *>(c_x)[c_off], 0.0f);
#pragma unroll
          for (int s = 0; s <= MOE_MAX_TOPK; s++)
            if (s == c_seg)
              acc[s] += v;
        }
        c_off += 32;
      }
    }
    float routed = 0;
#pragma unroll
    for (int s = 1; s <= MOE_MAX_TOPK; s++)
      if (s <= topk)
        routed += weights[(size_t)t * topk + s - 1] * round_bf(warp_sum(acc[s]));
    const float shared = warp_sum(acc[0]);
    if (valid && lane == 0) {
      const float y = round_bf(round_bf(routed) + round_bf(shared));
      x[(size_t)t * n + d] = to_bf(bf(x[(size_t)t * n + d]) + y);
    }
    __syncwarp();
  }
}
template <bool EARLY_IDS>
__global__ void __launch_bounds__(THREADS, 2) down_before_kernel(const bf16 *w, const bf16 *ws,
                                                             const bf16 *act, const uint32_t *ids,
                                                             const float *wts, bf16 *x, int fe,
                                                             int fs, int topk, int n, int m) {
  down_before<GEMV_U, EARLY_IDS>(w, ws, act, ids, wts, x, fe, fs, topk, n, m);
}

// Reading alone, in the down kernel's geometry (a warp an output row, a
// block of WARPS rows, one block a row block and token): the same bytes as
// llm_moe_down with no activations, sums or stores, DU 16-byte chunks a lane
// in flight.  With CONTIG, each warp reads as many chunks from one
// contiguous span instead of the shared row and its experts' rows: whether
// down's time is its reading pattern, its geometry, or its own work.
template <int DU, bool CONTIG>
__global__ void __launch_bounds__(THREADS, 2) down_read(const bf16 *w, const bf16 *ws,
                                                    const bf16 *act, const uint32_t *ids,
                                                    const float *wts, bf16 *x, int fe, int fs,
                                                    int topk, int n, int m) {
  (void)act;
  (void)wts;
  const int t = blockIdx.y, warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int d = blockIdx.x * WARPS + warp;
  const int nsh = fs >> 3, nfe = fe >> 3, total = nsh + topk * nfe;
  __shared__ const bf16 *experts[MOE_MAX_TOPK]; // each slot's matrix, as the down kernel keeps them
  if ((int)threadIdx.x < topk && threadIdx.x < MOE_MAX_TOPK && t < m)
    experts[threadIdx.x] = w + (size_t)__ldcg(ids + (size_t)t * topk + threadIdx.x) * n * fe;
  __syncthreads();
  auto chunk = [&](int j) -> const bf16 * {
    if (CONTIG) // spans of total chunks, warp after warp, within the experts' rows
      return w + ((size_t)d * total + j) * 8;
    if (j < nsh)
      return ws + (size_t)d * fs + 8 * (size_t)j;
    const int s = (j - nsh) / nfe, off = (j - nsh) % nfe;
    return experts[s] + (size_t)d * fe + 8 * (size_t)off;
  };
  uint32_t acc = 0;
  if (t < m && d < n)
    for (int j0 = lane; j0 < total; j0 += 32 * DU) {
      uint4 v[DU];
#pragma unroll
      for (int u = 0; u < DU; u++) {
        const int j = j0 + 32 * u;
        v[u] = j < total ? load_weight(chunk(j)) : make_uint4(0, 0, 0, 0);
      }
#pragma unroll
      for (int u = 0; u < DU; u++)
        acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
      if (j0 == lane) { // as the down kernel: the first loads before the wait
        wait();
        trigger();
      }
    }
  else {
    wait();
    trigger();
  }
  if (acc == 0x9e3779b9u && x)
    x[0] = __float2bfloat16(0.0f);
}

// The experts' gate/up as the library had it before its shared blocks took
// one chunk in flight past 2 tokens: 2 chunks at every token count, 3 blocks
// a multiprocessor (80 registers); the library's now fits 4 (64).
__global__ void __launch_bounds__(THREADS, 3) gate_up_before(const bf16 *w, const bf16 *w_shared,
                                                       const bf16 *x, const bf16 *g,
                                                       const uint32_t *ids, bf16 *act, int fe,
                                                       int fs, int topk, int k, int m) {
  constexpr int R = SWIGLU_R, U = 2, PER_BLOCK = WARPS * R;
  const int nbs = (fs + PER_BLOCK - 1) / PER_BLOCK, nbr = (fe + PER_BLOCK - 1) / PER_BLOCK;
  const int total = nbs + m * topk * nbr;
  const int act_token = topk * fe + fs;
  for (int b = blockIdx.x; b < total || b == (int)blockIdx.x; b += gridDim.x) {
    if (b != (int)blockIdx.x)
      __syncthreads();
    if (b >= total) {
      wait();
      trigger();
    } else if (b < nbs) {
      GemvArgs a{w_shared, x, g, act + (size_t)topk * fe, nullptr, nullptr, fs, k, m, 1e-6f,
                 0, 0, k, act_token};
      gemv_dispatch<R, U, Epi::Swiglu>(a, b, nbs);
    } else {
      const int r = b - nbs, t = r / (topk * nbr), slot = r / nbr % topk, rb = r % nbr;
      wait();
      const uint32_t e = ids[(size_t)t * topk + slot];
      GemvArgs a{w + (size_t)e * 2 * fe * k, x + (size_t)t * k, g,
                 act + (size_t)t * act_token + (size_t)slot * fe, nullptr, nullptr, fe, k, 1,
                 1e-6f, 0, 0, k, 0};
      gemv_blocks<1, R, U, Epi::Swiglu>(a, rb, nbr);
    }
  }
}

// ---------------------------------------------------------------------------
static cudaStream_t stream;
static int sms;
static uint4 *sink;

static void *dalloc(size_t bytes) {
  void *p;
  CUDA(cudaMalloc(&p, bytes));
  return p;
}

// Fills bf16 memory with small values (a hash of the index), on the device.
__global__ void fill_bf16(bf16 *p, size_t n, uint32_t seed, float scale) {
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x) {
    uint32_t h = (uint32_t)i * 0x9e3779b1u ^ seed;
    h ^= h >> 15;
    h *= 0x2c1b3c6du;
    h ^= h >> 12;
    p[i] = __float2bfloat16((((h >> 8) & 0xffff) / 32768.0f - 1.0f) * scale);
  }
}
static bf16 *random_bf16(size_t n, float scale) {
  bf16 *p = (bf16 *)dalloc(n * 2);
  fill_bf16<<<1024, 256>>>(p, n, (uint32_t)n, scale);
  CUDA(cudaGetLastError());
  return p;
}

// Copies of `bytes` of weights: enough that they span ROTATE bytes, at least 2.
struct Copies {
  std::vector<bf16 *> p;
  size_t elems;
  Copies(size_t elems_, float scale = 0.02f) : elems(elems_) {
    size_t n = std::max<size_t>(2, (ROTATE + elems * 2 - 1) / (elems * 2));
    for (size_t i = 0; i < n; i++)
      p.push_back(random_bf16(elems, scale));
  }
  ~Copies() {
    for (bf16 *q : p)
      CUDA(cudaFree(q));
  }
  bf16 *operator[](int i) const { return p[(size_t)i % p.size()]; }
};

// A launch, with programmatic dependent launch where pdl says, in clusters
// of `cluster` blocks along x where it is not 0.
template <typename... Params, typename... Args>
static void launch_clusters(void (*k)(Params...), dim3 grid, dim3 block, size_t smem, bool pdl,
                            unsigned cluster, Args... args) {
  cudaLaunchConfig_t c = {};
  c.gridDim = grid;
  c.blockDim = block;
  c.dynamicSmemBytes = smem;
  c.stream = stream;
  cudaLaunchAttribute attr[2];
  unsigned n = 0;
  if (pdl) {
    attr[n].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[n++].val.programmaticStreamSerializationAllowed = 1;
  }
  if (cluster) {
    attr[n].id = cudaLaunchAttributeClusterDimension;
    attr[n].val.clusterDim.x = cluster;
    attr[n].val.clusterDim.y = 1;
    attr[n++].val.clusterDim.z = 1;
  }
  c.attrs = attr;
  c.numAttrs = n;
  if (smem > 0) // past 48 KB with the kernel's static shared memory, even if smem alone is not
    CUDA(cudaFuncSetAttribute((const void *)k, cudaFuncAttributeMaxDynamicSharedMemorySize,
                              (int)smem));
  CUDA(cudaLaunchKernelEx(&c, k, ((Params)args)...));
}
template <typename... Params, typename... Args>
static void launch(void (*k)(Params...), dim3 grid, dim3 block, size_t smem, bool pdl,
                   Args... args) {
  launch_clusters(k, grid, block, smem, pdl, 0, args...);
}

// Captures body(i) for i < calls into a graph, then times its launches:
// the median time a call, in microseconds.
template <class F> static double time_calls(F body, int calls = 0) {
  if (!calls)
    calls = CALLS;
  cudaGraph_t g;
  cudaGraphExec_t ge;
  CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < calls; i++)
    body(i);
  CUDA(cudaStreamEndCapture(stream, &g));
  CUDA(cudaGraphInstantiate(&ge, g, 0));
  cudaEvent_t e0, e1;
  CUDA(cudaEventCreate(&e0));
  CUDA(cudaEventCreate(&e1));
  for (int i = 0; i < 3; i++)
    CUDA(cudaGraphLaunch(ge, stream));
  std::vector<double> t;
  for (int r = 0; r < REPS; r++) {
    CUDA(cudaEventRecord(e0, stream));
    CUDA(cudaGraphLaunch(ge, stream));
    CUDA(cudaEventRecord(e1, stream));
    CUDA(cudaEventSynchronize(e1));
    float ms;
    CUDA(cudaEventElapsedTime(&ms, e0, e1));
    t.push_back(ms);
  }
  CUDA(cudaEventDestroy(e0));
  CUDA(cudaEventDestroy(e1));
  CUDA(cudaGraphExecDestroy(ge));
  CUDA(cudaGraphDestroy(g));
  return bench_median(t.data(), (int)t.size()) * 1e3 / calls;
}


// The read-only kernel over `bytes` a call, rotating over copies as a
// kernel over those bytes does.
static double read_time(size_t bytes) {
  Copies c((bytes + 1) / 2);
  const size_t n = bytes / 16;
  return time_calls([&](int i) {
    launch(bench_read_only, dim3(sms * 4), dim3(512), 0, true, (const uint4 *)c[i], n, sink);
  });
}

static cublasHandle_t blas;
static void *blas_ws;
static const size_t BLAS_WS = 32u << 20;

// y[m][n] = x[m][k] . W[n][k]^T through cuBLAS (the GEMM alone).
static double cublas_time(const Copies &w, int n, int k, int m) {
  bf16 *x = random_bf16((size_t)m * k, 1), *y = (bf16 *)dalloc((size_t)m * n * 2);
  const float one = 1, zero = 0;
  double us = time_calls([&](int i) {
    CUBLAS(cublasSetWorkspace(blas, blas_ws, BLAS_WS));
    CUBLAS(cublasGemmEx(blas, CUBLAS_OP_T, CUBLAS_OP_N, n, m, k, &one, w[i], CUDA_R_16BF, k, x,
                        CUDA_R_16BF, k, &zero, y, CUDA_R_16BF, n, CUBLAS_COMPUTE_32F,
                        CUBLAS_GEMM_DEFAULT));
  });
  CUDA(cudaFree(x));
  CUDA(cudaFree(y));
  return us;
}

enum Kind { PLAIN, RESIDUAL, NORM, SWIGLU_NORM, ARGMAX_NORM };

struct GemvCase {
  const char *name;
  Kind kind;
  int n, k;
};

static void gemv_case(const GemvCase &c, int m, bool with_cublas) {
  const int rows = c.kind == SWIGLU_NORM ? 2 * c.n : c.n;
  Copies w((size_t)rows * c.k);
  const size_t bytes = (size_t)rows * c.k * 2;
  bf16 *x = random_bf16((size_t)m * c.k, 1), *g = random_bf16(c.k, 1);
  bf16 *y = (bf16 *)dalloc((size_t)m * c.n * 2);
  float *yf = (float *)dalloc((size_t)m * c.n * 4);
  const int parts = sms * 8;
  uint64_t *best = (uint64_t *)dalloc((size_t)m * parts * 8);
  const int per = c.kind == SWIGLU_NORM ? SWIGLU_ROWS : GEMV_ROWS;
  const unsigned grid = c.kind == ARGMAX_NORM ? parts : (c.n + per - 1) / per;
  const size_t smem = (size_t)m * c.k * 2;
  double us = time_calls([&](int i) {
    switch (c.kind) {
    case PLAIN:
      launch(llm_gemv, grid, THREADS, smem, true, w[i], x, y, c.n, c.k, m);
      break;
    case RESIDUAL:
      launch(llm_gemv_residual, grid, THREADS, smem, true, w[i], x, y, c.n, c.k, m);
      break;
    case NORM:
      launch(llm_norm_gemv, grid, THREADS, smem, true, w[i], x, g, y, c.n, c.k, m, 1e-6f);
      break;
    case SWIGLU_NORM:
      launch(llm_norm_gemv_swiglu, grid, THREADS, smem, true, w[i], x, g, y, c.n, c.k, m, 1e-6f);
      break;
    case ARGMAX_NORM:
      launch(llm_norm_gemv_argmax, grid, THREADS, smem, true, w[i], x, g, yf, best, c.n, c.k, m,
             1e-6f);
      break;
    }
  });
  char name[64];
  snprintf(name, sizeof name, "%s_m%d", c.name, m);
  bench_row("kernels", name, "bytes", "MB", bytes / 1e6);
  bench_row("kernels", name, "cgc_kernels", "us", us);
  bench_row("kernels", name, "read_only", "us", read_time(bytes));
  if (with_cublas)
    bench_row("kernels", name, "cublas", "us", cublas_time(w, rows, c.k, m));
  CUDA(cudaFree(x));
  CUDA(cudaFree(g));
  CUDA(cudaFree(y));
  CUDA(cudaFree(yf));
  CUDA(cudaFree(best));
}

template <int R, int U, int MINB = 1> static void sweep_one(const char *name, const Copies &w, int n, int k) {
  bf16 *x = random_bf16(k, 1), *y = (bf16 *)dalloc((size_t)n * 2);
  const unsigned grid = (n + WARPS * R - 1) / (WARPS * R);
  double us = time_calls([&](int i) {
    launch(gemv_variant<R, U, MINB>, grid, THREADS, (size_t)k * 2, true, (const bf16 *)w[i],
           (const bf16 *)x, y, n, k);
  });
  char way[32];
  if (MINB > 1)
    snprintf(way, sizeof way, "R%d_U%d_B%d", R, U, MINB);
  else
    snprintf(way, sizeof way, "R%d_U%d", R, U);
  bench_row("sweep", name, way, "us", us);
  CUDA(cudaFree(x));
  CUDA(cudaFree(y));
}

static void sweep(const char *name, int n, int k) {
  Copies w((size_t)n * k);
  bench_row("sweep", name, "bytes", "MB", (double)n * k * 2 / 1e6);
  bench_row("sweep", name, "read_only", "us", read_time((size_t)n * k * 2));
  sweep_one<1, 2>(name, w, n, k);
  sweep_one<1, 4>(name, w, n, k);
  sweep_one<1, 8>(name, w, n, k);
  sweep_one<2, 2>(name, w, n, k);
  sweep_one<2, 4>(name, w, n, k);
  sweep_one<2, 8>(name, w, n, k);
  sweep_one<4, 2>(name, w, n, k);
  sweep_one<4, 4>(name, w, n, k);
  sweep_one<1, 2, 4>(name, w, n, k);
  sweep_one<2, 2, 4>(name, w, n, k);
  sweep_one<1, 4, 3>(name, w, n, k);
  sweep_one<2, 4, 2>(name, w, n, k);
}

// Attention over `keys` keys for m tokens: prep, decode, combine; the
// decode in clusters of `cluster` blocks where it is past 1 (each joining
// its splits: splits / cluster partial results for the combine), with
// `stages` tiles of keys in flight a block.
static void attention_case(int keys, int m, int splits, unsigned cluster, int stages = 1) {
  const int maxpos = keys;
  Copies cache((size_t)m * maxpos * MLA_CH, 1);
  Copies w_ukt((size_t)MLA_H * MLA_KVR * MLA_NOPE);
  bf16 *qkv = random_bf16((size_t)m * MLA_QKV, 1), *kvn = random_bf16(MLA_KVR, 1);
  bf16 *q_lat = (bf16 *)dalloc((size_t)m * MLA_H * MLA_KVR * 2);
  bf16 *q_pe = (bf16 *)dalloc((size_t)m * MLA_H * MLA_ROPE * 2);
  bf16 *o = (bf16 *)dalloc((size_t)m * MLA_H * MLA_KVR * 2);
  float *part = (float *)dalloc((size_t)m * splits * MLA_H * MLA_KVR * 4);
  float *ml = (float *)dalloc((size_t)m * splits * MLA_H * 2 * 4);
  float *inv = (float *)dalloc(32 * 4);
  CUDA(cudaMemset(inv, 0, 32 * 4));
  std::vector<uint32_t> pos(m, (uint32_t)keys - 1);
  uint32_t *dpos = (uint32_t *)dalloc(m * 4);
  CUDA(cudaMemcpy(dpos, pos.data(), m * 4, cudaMemcpyHostToDevice));
  // Only decode and combine: the cache bytes are the ones at stake (each
  // call reads another copy of the cache, as each layer of a step reads its
  // own).
  const size_t smem = MLA_DECODE_SMEM + (size_t)(stages - 1) * MLA_TILE_SMEM;
  double us = time_calls([&](int i) {
    launch_clusters(llm_mla_decode, dim3(splits, m), dim3(MLA_THREADS), smem, true,
                    cluster > 1 ? cluster : 0, q_lat, q_pe, cache[i], dpos, part, ml, m, maxpos,
                    0.1147f);
    launch(llm_mla_combine, dim3(MLA_H * MLA_KVR / MLA_COMBINE_THREADS, m),
           dim3(MLA_COMBINE_THREADS), 0, true, part, ml, o, splits / (int)cluster, m);
  });
  double prep = time_calls([&](int i) {
    launch(llm_mla_prep, dim3(MLA_H * MLA_KVR / GEMV_ROWS + 1), dim3(THREADS),
           (size_t)m * MLA_PREP_TOKEN_SMEM, true, w_ukt[i], qkv, kvn, inv, dpos, q_lat, q_pe,
           cache[i], m, maxpos, 1e-6f, 1.0f);
  });
  char name[80];
  int len = snprintf(name, sizeof name, "keys%d_m%d_splits%d", keys, m, splits);
  if (cluster > 1)
    len += snprintf(name + len, sizeof name - len, "_cluster%u", cluster);
  if (stages > 1)
    snprintf(name + len, sizeof name - len, "_stages%d", stages);
  const size_t bytes = (size_t)m * keys * MLA_CH * 2;
  bench_row("attention", name, "bytes", "MB", bytes / 1e6);
  bench_row("attention", name, "decode_combine", "us", us);
  bench_row("attention", name, "prep", "us", prep);
  bench_row("attention", name, "read_only", "us", read_time(bytes));
  for (void *p : {(void *)qkv, (void *)kvn, (void *)q_lat, (void *)q_pe, (void *)o,
                  (void *)part, (void *)ml, (void *)inv, (void *)dpos})
    CUDA(cudaFree(p));
}

// The routed experts (6 a token, host-chosen) and the shared ones: gate/up
// then down, and the router; m tokens.  With overlap, each token's experts
// are drawn at random (a fixed seed), so that tokens share some, as a
// router's choices do (about 35 distinct of 48 at 8 tokens); without, the
// tokens' experts are all different.
static void moe_case(int m, bool overlap) {
  const int E = 64, FE = 1408, FS = 2816, D = 2048, TOPK = 6;
  Copies gu((size_t)E * 2 * FE * D), down((size_t)E * D * FE);
  Copies sgu((size_t)2 * FS * D), sdown((size_t)D * FS), router((size_t)E * D);
  // The down kernel adds into res, not into gate/up's x: in a layer x is
  // complete when gate/up starts (its shared blocks do not wait), so no
  // kernel of the chain may write it.
  bf16 *x = random_bf16((size_t)m * D, 1), *g = random_bf16(D, 1);
  bf16 *res = random_bf16((size_t)m * D, 3);
  bf16 *act = (bf16 *)dalloc((size_t)m * (TOPK * FE + FS) * 2);
  std::vector<uint32_t> ids(m * TOPK);
  std::vector<float> wts(m * TOPK, 1.0f / TOPK);
  std::vector<int> used(E, 0);
  uint32_t seed = 12345;
  for (int t = 0; t < m; t++)
    for (int s = 0; s < TOPK; s++) {
      uint32_t e = (uint32_t)((t * 11 + s * 7) % E);
      if (overlap) // distinct within the token, as top-k chooses
        for (bool taken = true; taken;) {
          seed = seed * 1664525u + 1013904223u;
          e = (seed >> 8) % E;
          taken = std::find(ids.begin() + t * TOPK, ids.begin() + t * TOPK + s, e) !=
                  ids.begin() + t * TOPK + s;
        }
      ids[t * TOPK + s] = e;
      used[e] = 1;
    }
  int distinct = 0;
  for (int e = 0; e < E; e++)
    distinct += used[e];
  uint32_t *dids = (uint32_t *)dalloc(ids.size() * 4), *count = (uint32_t *)dalloc(m * 4);
  float *dw = (float *)dalloc(wts.size() * 4), *logits = (float *)dalloc((size_t)m * E * 4);
  float *rw = (float *)dalloc((size_t)m * TOPK * 4);
  uint32_t *rids = (uint32_t *)dalloc((size_t)m * TOPK * 4);
  CUDA(cudaMemcpy(dids, ids.data(), ids.size() * 4, cudaMemcpyHostToDevice));
  CUDA(cudaMemcpy(dw, wts.data(), wts.size() * 4, cudaMemcpyHostToDevice));
  CUDA(cudaMemset(count, 0, m * 4));
  const int S = SWIGLU_ROWS;
  const unsigned gu_grid = (FS + S - 1) / S + m * TOPK * ((FE + S - 1) / S);
  const size_t expert = (size_t)3 * FE * D * 2;
  const size_t bytes = distinct * expert + (size_t)3 * FS * D * 2;
  // The experts with either down kernel: llm_moe_down_lean has fewer
  // registers, three blocks a multiprocessor (doc/kernels.md).
  auto experts = [&](auto down_kernel) {
    return time_calls([&](int i) {
      launch(llm_moe_gate_up, dim3(gu_grid), dim3(THREADS), (size_t)m * D * 2, true, gu[i],
             sgu[i], x, g, dids, act, FE, FS, TOPK, D, m, 1e-6f);
      launch(down_kernel, dim3((D + S - 1) / S, m), dim3(THREADS), (size_t)(TOPK * FE + FS) * 4,
             true, down[i], sdown[i], act, dids, dw, res, FE, FS, TOPK, D, m);
    });
  };
  const double us = experts(llm_moe_down);
  const double us_before = time_calls([&](int i) {
    launch(gate_up_before, dim3(gu_grid), dim3(THREADS), (size_t)m * D * 2, true,
           (const bf16 *)gu[i], (const bf16 *)sgu[i], (const bf16 *)x, (const bf16 *)g,
           (const uint32_t *)dids, act, (int)FE, (int)FS, (int)TOPK, (int)D, (int)m);
    launch(llm_moe_down, dim3((D + S - 1) / S, m), dim3(THREADS),
           (size_t)(TOPK * FE + FS) * 4, true, down[i], sdown[i], act, dids, dw, res, FE, FS, TOPK,
           D, m);
  });
  const double us_lean = experts(llm_moe_down_lean);
  auto free_all = [&] {
    for (void *p : {(void *)x, (void *)res, (void *)g, (void *)act, (void *)dids, (void *)count,
                    (void *)dw, (void *)logits, (void *)rw, (void *)rids})
      CUDA(cudaFree(p));
  };
  char name[64];
  snprintf(name, sizeof name, overlap ? "experts_m%d_overlap" : "experts_m%d", m);
  bench_row("moe", name, "bytes", "MB", bytes / 1e6);
  bench_row("moe", name, "cgc_kernels", "us", us);
  bench_row("moe", name, "read_only", "us", read_time(bytes));
  bench_row("moe", name, "gate_up_before", "us", us_before);
  bench_row("moe", name, "down_lean", "us", us_lean);
  if (overlap)
    return free_all(); // the router and the sweeps: once, without overlap
  const unsigned rblocks = (E + SWIGLU_ROWS - 1) / SWIGLU_ROWS;
  double route = time_calls([&](int i) {
    launch_clusters(llm_moe_route, dim3(rblocks, m), dim3(THREADS), (size_t)D * 2, true, rblocks,
                    router[i], x, g, logits, count, rids, rw, E, D, m, TOPK, 1e-6f);
  });
  double route_atomic = time_calls([&](int i) {
    launch(llm_moe_route, dim3(rblocks, m), dim3(THREADS), (size_t)D * 2, true, router[i], x, g,
           logits, count, rids, rw, E, D, m, TOPK, 1e-6f);
  });
  if (m == 1) { // gate_up and down alone, at other shapes
    auto gu_time = [&](auto kernel, int per) {
      const unsigned grid = (FS + per - 1) / per + m * TOPK * ((FE + per - 1) / per);
      return time_calls([&](int i) {
        launch(kernel, dim3(grid), dim3(THREADS), (size_t)m * D * 2, true, (const bf16 *)gu[i],
               (const bf16 *)sgu[i], (const bf16 *)x, (const bf16 *)g, (const uint32_t *)dids, act,
               FE, FS, TOPK, D, m);
      });
    };
    // A chain of down calls alone: each adds into res, which the next reads
    // before its wait (as the library's down does, where gate_up comes
    // between), so the sums race; the times do not.
    auto down_time = [&](auto kernel, size_t per = 2) { // per: smem bytes an activation
      return time_calls([&](int i) {
        launch(kernel, dim3((D + WARPS - 1) / WARPS, m), dim3(THREADS),
               (size_t)(TOPK * FE + FS) * per, true, (const bf16 *)down[i], (const bf16 *)sdown[i],
               (const bf16 *)act, (const uint32_t *)dids, (const float *)dw, x, FE, FS, TOPK, D, m);
      });
    };
    bench_row("moe_sweep", "gate_up_m1", "bytes", "MB", (double)(distinct * 2 * FE + 2 * FS) * D * 2 / 1e6);
    bench_row("moe_sweep", "gate_up_m1", "R1_U2", "us", gu_time(gate_up_variant<1, 2>, WARPS));
    bench_row("moe_sweep", "gate_up_m1", "R1_U4", "us", gu_time(gate_up_variant<1, 4>, WARPS));
    bench_row("moe_sweep", "gate_up_m1", "R1_U8", "us", gu_time(gate_up_variant<1, 8>, WARPS));
    bench_row("moe_sweep", "gate_up_m1", "R2_U4", "us", gu_time(gate_up_variant<2, 4>, 2 * WARPS));
    bench_row("moe_sweep", "gate_up_m1", "R1_U4_B2", "us", gu_time(gate_up_variant<1, 4, 2>, WARPS));
    bench_row("moe_sweep", "gate_up_m1", "R1_U4_B3", "us", gu_time(gate_up_variant<1, 4, 3>, WARPS));
    bench_row("moe_sweep", "gate_up_m1", "R1_U2_B3", "us", gu_time(gate_up_variant<1, 2, 3>, WARPS));
    bench_row("moe_sweep", "gate_up_m1", "R1_U2_B4", "us", gu_time(gate_up_variant<1, 2, 4>, WARPS));
    bench_row("moe_sweep", "gate_up_m1", "read_only", "us",
        read_time((size_t)(distinct * 2 * FE + 2 * FS) * D * 2));
    bench_row("moe_sweep", "down_m1", "bytes", "MB", (double)(distinct * FE + FS) * D * 2 / 1e6);
    bench_row("moe_sweep", "down_m1", "U2", "us", down_time(down_variant<1, 2>, 4));
    bench_row("moe_sweep", "down_m1", "U4", "us", down_time(down_variant<1, 4>, 4));
    bench_row("moe_sweep", "down_m1", "U8", "us", down_time(down_variant<1, 8>, 4));
    bench_row("moe_sweep", "down_m1", "U4_B2", "us", down_time(down_variant<1, 4, 2>, 4));
    bench_row("moe_sweep", "down_m1", "U4_B3", "us", down_time(down_variant<1, 4, 3>, 4));
    bench_row("moe_sweep", "down_m1", "before_early_ids", "us", down_time(down_before_kernel<true>));
    bench_row("moe_sweep", "down_m1", "before_late_ids", "us", down_time(down_before_kernel<false>));
    bench_row("moe_sweep", "down_m1", "U2_B3", "us", down_time(down_variant<1, 2, 3>, 4));
    bench_row("moe_sweep", "down_m1", "U2_B4", "us", down_time(down_variant<1, 2, 4>, 4));
    bench_row("moe_sweep", "down_m1", "U1_B4", "us", down_time(down_variant<1, 1, 4>, 4));
    bench_row("moe_sweep", "down_m1", "stage_split_U4", "us",
              down_time(down_stage_variant<DownStage::Split, 4, 2>, 4));
    bench_row("moe_sweep", "down_m1", "stage_early_U4", "us",
              down_time(down_stage_variant<DownStage::Early, 4, 2>, 4));
    bench_row("moe_sweep", "down_m1", "trigger_first_U4", "us",
              down_time(down_stage_variant<DownStage::TriggerFirst, 4, 2>, 4));
    bench_row("moe_sweep", "down_m1", "prefetch8_U4", "us",
              down_time(down_stage_variant<DownStage::Whole, 4, 2, 8>, 4));
    bench_row("moe_sweep", "down_m1", "prefetch16_U4", "us",
              down_time(down_stage_variant<DownStage::Whole, 4, 2, 16>, 4));
    bench_row("moe_sweep", "down_m1", "prefetch32_U4", "us",
              down_time(down_stage_variant<DownStage::Whole, 4, 2, 32>, 4));
    bench_row("moe_sweep", "down_m1", "trigger_first_prefetch16_U4", "us",
              down_time(down_stage_variant<DownStage::TriggerFirst, 4, 2, 16>, 4));
    bench_row("moe_sweep", "down_m1", "prefetch16_U2_B3", "us",
              down_time(down_stage_variant<DownStage::Whole, 2, 3, 16>, 4));
    bench_row("moe_sweep", "down_m1", "stage_split_U2_B3", "us",
              down_time(down_stage_variant<DownStage::Split, 2, 3>, 4));
    { // Split sums as llm_moe_down does: the same bits, one call each on the same residual
      const size_t xn = (size_t)m * D;
      bf16 *xa = (bf16 *)dalloc(xn * 2), *xb = (bf16 *)dalloc(xn * 2);
      bf16 *act_r = random_bf16((size_t)m * (TOPK * FE + FS), 1);
      CUDA(cudaMemcpy(xa, res, xn * 2, cudaMemcpyDeviceToDevice));
      CUDA(cudaMemcpy(xb, res, xn * 2, cudaMemcpyDeviceToDevice));
      const size_t sm = (size_t)(TOPK * FE + FS) * 4;
      launch(llm_moe_down, dim3((D + WARPS - 1) / WARPS, m), dim3(THREADS), sm, false,
             (const bf16 *)down[0], (const bf16 *)sdown[0], (const bf16 *)act_r,
             (const uint32_t *)dids, (const float *)dw, xa, (uint32_t)FE, (uint32_t)FS,
             (uint32_t)TOPK, (uint32_t)D, (uint32_t)m);
      launch(down_stage_variant<DownStage::Split, 4, 2>, dim3((D + WARPS - 1) / WARPS, m),
             dim3(THREADS), sm, false, (const bf16 *)down[0], (const bf16 *)sdown[0],
             (const bf16 *)act_r, (const uint32_t *)dids, (const float *)dw, xb, (int)FE, (int)FS,
             (int)TOPK, (int)D, (int)m);
      CUDA(cudaStreamSynchronize(stream));
      std::vector<uint16_t> ha(xn), hb(xn);
      CUDA(cudaMemcpy(ha.data(), xa, xn * 2, cudaMemcpyDeviceToHost));
      CUDA(cudaMemcpy(hb.data(), xb, xn * 2, cudaMemcpyDeviceToHost));
      int differ = 0;
      for (size_t i = 0; i < xn; i++)
        differ += ha[i] != hb[i];
      bench_row("moe_sweep", "down_m1", "stage_split_outputs_differing", "count", differ);
      for (void *p : {(void *)xa, (void *)xb, (void *)act_r})
        CUDA(cudaFree(p));
    }
    bench_row("moe_sweep", "down_m1", "read_pattern_8", "us", down_time(down_read<8, false>));
    bench_row("moe_sweep", "down_m1", "read_pattern_16", "us", down_time(down_read<16, false>));
    bench_row("moe_sweep", "down_m1", "read_contig_8", "us", down_time(down_read<8, true>));
    bench_row("moe_sweep", "down_m1", "read_contig_16", "us", down_time(down_read<16, true>));
    bench_row("moe_sweep", "down_m1", "read_only", "us", read_time((size_t)(distinct * FE + FS) * D * 2));
  }
  snprintf(name, sizeof name, "router_m%d", m);
  bench_row("moe", name, "bytes", "MB", (double)E * D * 2 / 1e6);
  bench_row("moe", name, "cgc_kernels", "us", route);
  bench_row("moe", name, "without_clusters", "us", route_atomic);
  bench_row("moe", name, "read_only", "us", read_time((size_t)E * D * 2));
  free_all();
}

// The router's share of a chain, step by step (--only router, one token):
// the library's kernel (clusters of 8 blocks), then each variant shorter by
// a step (RouteStop), and the whole row asked for before the wait (8 chunks
// a lane, as run Z of BENCHMARKS.md); against the boundary section's
// kernels, which stage and normalise the same 2,048 values.
static void router_case() {
  const int E = 64, D = 2048, TOPK = 6, m = 1;
  Copies router((size_t)E * D);
  bf16 *x = random_bf16(D, 1), *g = random_bf16(D, 1);
  float *logits = (float *)dalloc((size_t)E * 4), *rw = (float *)dalloc(TOPK * 4);
  uint32_t *rids = (uint32_t *)dalloc(TOPK * 4), *count = (uint32_t *)dalloc(4);
  CUDA(cudaMemset(count, 0, 4));
  const unsigned rblocks = (E + SWIGLU_ROWS - 1) / SWIGLU_ROWS;
  auto timed = [&](auto kernel) {
    return time_calls([&](int i) {
      launch_clusters(kernel, dim3(rblocks, m), dim3(THREADS), (size_t)D * 2, true, rblocks,
                      (const bf16 *)router[i], (const bf16 *)x, (const bf16 *)g, logits, count,
                      rids, rw, E, D, m, TOPK);
    });
  };
  const double lib = time_calls([&](int i) {
    launch_clusters(llm_moe_route, dim3(rblocks, m), dim3(THREADS), (size_t)D * 2, true, rblocks,
                    router[i], x, g, logits, count, rids, rw, E, D, m, TOPK, 1e-6f);
  });
  bench_row("router", "router_m1", "cgc_kernels", "us", lib);
  bench_row("router", "router_m1", "join_no_top_k", "us",
            timed(route_variant<RouteStop::Join, GEMV_U>));
  bench_row("router", "router_m1", "logits_no_join", "us",
            timed(route_variant<RouteStop::Logits, GEMV_U>));
  bench_row("router", "router_m1", "full_U8", "us", timed(route_variant<RouteStop::Full, 8>));
  bench_row("router", "router_m1", "logits_no_join_U8", "us",
            timed(route_variant<RouteStop::Logits, 8>));
  for (void *p : {(void *)x, (void *)g, (void *)logits, (void *)rw, (void *)rids, (void *)count})
    CUDA(cudaFree(p));
}

// One MoE layer of the step as a chain, at 512 keys, one token: attention
// (the stacked projection with its norm, prep, decode, combine, the value
// half, o_proj into the residual), the router, the experts.  Then the chain's
// first 1, 2, ... 8 kernels (what each adds where it stands in the chain),
// and the chain with the experts' down as it was before (down_before).
static void layer_case(int keys, bool trace = false) {
  const int E = 64, FE = 1408, FS = 2816, D = 2048, TOPK = 6, SPLITS = 64, m = 1;
  Copies wqkv((size_t)MLA_QKV * D), wukt((size_t)MLA_H * MLA_KVR * MLA_NOPE),
      wuv((size_t)MLA_H * MLA_VD * MLA_KVR), wo((size_t)D * MLA_H * MLA_VD), router((size_t)E * D),
      gu((size_t)E * 2 * FE * D, 0.02f), down((size_t)E * D * FE, 0.02f), sgu((size_t)2 * FS * D),
      sdown((size_t)D * FS);
  bf16 *x = random_bf16(D, 1), *g = random_bf16(D, 1), *kvn = random_bf16(MLA_KVR, 1);
  bf16 *cache = random_bf16((size_t)keys * MLA_CH, 1);
  bf16 *qkv = (bf16 *)dalloc(MLA_QKV * 2), *q_lat = (bf16 *)dalloc(MLA_H * MLA_KVR * 2),
       *q_pe = (bf16 *)dalloc(MLA_H * MLA_ROPE * 2), *o = (bf16 *)dalloc(MLA_H * MLA_KVR * 2),
       *attn = (bf16 *)dalloc(MLA_H * MLA_VD * 2), *act = (bf16 *)dalloc((TOPK * FE + FS) * 2);
  float *part = (float *)dalloc((size_t)SPLITS * MLA_H * MLA_KVR * 4),
        *ml = (float *)dalloc(SPLITS * MLA_H * 2 * 4), *inv = (float *)dalloc(32 * 4),
        *logits = (float *)dalloc(E * 4), *wts = (float *)dalloc(TOPK * 4);
  uint32_t *pos = (uint32_t *)dalloc(4), *count = (uint32_t *)dalloc(4),
           *ids = (uint32_t *)dalloc(TOPK * 4), *sync = (uint32_t *)dalloc(8);
  const uint32_t p = (uint32_t)keys - 1;
  CUDA(cudaMemcpy(pos, &p, 4, cudaMemcpyHostToDevice));
  CUDA(cudaMemset(count, 0, 4));
  CUDA(cudaMemset(sync, 0, 8));
  CUDA(cudaMemset(inv, 0, 32 * 4));
  const int R = GEMV_ROWS, S = SWIGLU_ROWS;
  // The layer as its kernels, in order; a chain runs the first `upto` of a
  // list.  `pair`: llm_mla_combine then llm_gemv_grouped where the library's
  // chain has llm_mla_combine_up; `before`: the previous llm_moe_down.
  typedef std::function<void(int)> Step;
  const Step qkv_a = [&](int i) {
    launch(llm_norm_gemv, dim3((MLA_QKV + R - 1) / R), dim3(THREADS), (size_t)D * 2, true,
           wqkv[i], x, g, qkv, MLA_QKV, D, m, 1e-6f);
  };
  const Step prep = [&](int i) {
    launch(llm_mla_prep, dim3(MLA_H * MLA_KVR / R + 1), dim3(THREADS), m * MLA_PREP_TOKEN_SMEM,
           true, wukt[i], qkv, kvn, inv, pos, q_lat, q_pe, cache, m, keys, 1e-6f, 1.0f);
  };
  const Step prep_two = [&](int i) {
    launch(prep_split<2>, dim3(MLA_H * MLA_KVR / R + 2), dim3(THREADS), m * MLA_PREP_TOKEN_SMEM,
           true, (const bf16 *)wukt[i], (const bf16 *)qkv, (const bf16 *)kvn, (const float *)inv,
           (const uint32_t *)pos, q_lat, q_pe, cache, (int)m, (int)keys);
  };
  const Step prep_gemv = [&](int i) {
    launch(prep_split<0>, dim3(MLA_H * MLA_KVR / R), dim3(THREADS), m * MLA_PREP_TOKEN_SMEM, true,
           (const bf16 *)wukt[i], (const bf16 *)qkv, (const bf16 *)kvn, (const float *)inv,
           (const uint32_t *)pos, q_lat, q_pe, cache, (int)m, (int)keys);
  };
  const Step attend = [&](int) {
    launch(llm_mla_decode, dim3(SPLITS, m), dim3(MLA_THREADS), MLA_DECODE_SMEM, true, q_lat,
           q_pe, cache, pos, part, ml, m, keys, 0.1147f);
  };
  const Step combine_up = [&](int i) {
    launch(llm_mla_combine_up, dim3(MLA_H * MLA_VD / R), dim3(THREADS), (size_t)MLA_KVR * 2,
           true, wuv[i], part, ml, attn, SPLITS, m);
  };
  const Step combine = [&](int) {
    launch(llm_mla_combine, dim3(MLA_H * MLA_KVR / MLA_COMBINE_THREADS, m),
           dim3(MLA_COMBINE_THREADS), 0, true, part, ml, o, SPLITS, m);
  };
  const Step v_up = [&](int i) {
    launch(llm_gemv_grouped, dim3(MLA_H * MLA_VD / R), dim3(THREADS), (size_t)MLA_KVR * 2, true,
           wuv[i], o, attn, MLA_H * MLA_VD, MLA_KVR, m, MLA_VD, MLA_KVR, MLA_H * MLA_KVR);
  };
  const Step o_proj = [&](int i) {
    launch(llm_gemv_residual, dim3(D / R), dim3(THREADS), (size_t)MLA_H * MLA_VD * 2, true,
           wo[i], attn, x, D, MLA_H * MLA_VD, m);
  };
  const Step o_proj_l2 = [&](int i) {
    launch(gemv_residual_l2_next, dim3(D / R), dim3(THREADS), (size_t)MLA_H * MLA_VD * 2, true,
           (const bf16 *)wo[i], (const bf16 *)attn, x, D, MLA_H * MLA_VD, m,
           (const bf16 *)router[i], E * D * 2);
  };
  const Step route = [&](int i) {
    launch_clusters(llm_moe_route, dim3((E + S - 1) / S, m), dim3(THREADS), (size_t)D * 2, true,
                    (E + S - 1) / S, router[i], x, g, logits, count, ids, wts, E, D, m, TOPK,
                    1e-6f);
  };
  const Step route_atomic = [&](int i) {
    launch(llm_moe_route, dim3((E + S - 1) / S, m), dim3(THREADS), (size_t)D * 2, true,
           router[i], x, g, logits, count, ids, wts, E, D, m, TOPK, 1e-6f);
  };
  // The router with its whole row asked for before the wait (8 chunks a
  // lane), and stopped once each block has its logits (no join, no top k:
  // the ids are the chains' before).
  const auto route_as = [&](auto kernel) -> Step {
    return [&, kernel](int i) {
      const unsigned rblocks = (E + S - 1) / S;
      launch_clusters(kernel, dim3(rblocks, m), dim3(THREADS), (size_t)D * 2, true, rblocks,
                      (const bf16 *)router[i], (const bf16 *)x, (const bf16 *)g, logits, count,
                      ids, wts, E, D, m, TOPK);
    };
  };
  const Step route_u8 = route_as(route_variant<RouteStop::Full, 8>);
  const Step route_sm = [&](int i) {
    launch_clusters(route_smem, dim3(E / WARPS), dim3(THREADS), (size_t)(WARPS + 1) * D * 2, true,
                    E / WARPS, (const bf16 *)router[i], (const bf16 *)x, (const bf16 *)g, logits,
                    ids, wts, (int)E, (int)D, (int)TOPK);
  };
  const Step route_logits = route_as(route_variant<RouteStop::Logits, GEMV_U>);
  const Step gate_up = [&](int i) {
    launch(llm_moe_gate_up, dim3((FS + S - 1) / S + m * TOPK * ((FE + S - 1) / S)),
           dim3(THREADS), (size_t)D * 2, true, gu[i], sgu[i], x, g, ids, act, FE, FS, TOPK, D,
           m, 1e-6f);
  };
  const Step gate_up_late = [&](int i) {
    launch(gate_up_shared_late, dim3((FS + S - 1) / S + m * TOPK * ((FE + S - 1) / S)),
           dim3(THREADS), (size_t)D * 2, true, (const bf16 *)gu[i], (const bf16 *)sgu[i],
           (const bf16 *)x, (const bf16 *)g, (const uint32_t *)ids, act, (int)FE, (int)FS,
           (int)TOPK, (int)D, (int)m);
  };
  const Step gate_up_old = [&](int i) {
    launch(gate_up_before, dim3((FS + S - 1) / S + m * TOPK * ((FE + S - 1) / S)),
           dim3(THREADS), (size_t)D * 2, true, (const bf16 *)gu[i], (const bf16 *)sgu[i],
           (const bf16 *)x, (const bf16 *)g, (const uint32_t *)ids, act, (int)FE, (int)FS,
           (int)TOPK, (int)D, (int)m);
  };
  const Step down_now = [&](int i) {
    launch(llm_moe_down, dim3(D / S, m), dim3(THREADS), (size_t)(TOPK * FE + FS) * 4, true,
           down[i], sdown[i], act, ids, wts, x, FE, FS, TOPK, D, m);
  };
  const Step down_old = [&](int i) {
    launch(down_before_kernel<false>, dim3(D / S, m), dim3(THREADS),
           (size_t)(TOPK * FE + FS) * 2, true, (const bf16 *)down[i], (const bf16 *)sdown[i],
           (const bf16 *)act, (const uint32_t *)ids, (const float *)wts, x, (int)FE, (int)FS,
           (int)TOPK, (int)D, (int)m);
  };
  // gate_up at one token started as gate_up_started's parameters say.
  const auto gate_up_as = [&](auto kernel) -> Step {
    return [&, kernel](int i) {
      launch(kernel, dim3((FS + S - 1) / S + TOPK * ((FE + S - 1) / S)), dim3(THREADS),
             (size_t)D * 2, true, (const bf16 *)gu[i], (const bf16 *)sgu[i], (const bf16 *)x,
             (const bf16 *)g, (const uint32_t *)ids, act, (int)FE, (int)FS, (int)TOPK, (int)D,
             sync);
    };
  };
  const Step gate_up_not_waited = gate_up_as(gate_up_started<false, false>);
  const Step gate_up_sl2 = [&](int i) {
    launch(gate_up_shared_l2, dim3((FS + S - 1) / S + TOPK * ((FE + S - 1) / S)),
           dim3(THREADS), (size_t)D * 2, true, (const bf16 *)gu[i], (const bf16 *)sgu[i],
           (const bf16 *)x, (const bf16 *)g, (const uint32_t *)ids, act, (int)FE, (int)FS,
           (int)TOPK, (int)D);
  };
  // router_flag: gate_up started before the router's wait (above, at
  // route_raising).
  const Step route_flag = [&](int i) {
    launch_clusters(route_raising, dim3((E + S - 1) / S, 1), dim3(THREADS), (size_t)D * 2, true,
                    (E + S - 1) / S, (const bf16 *)router[i], (const bf16 *)x, (const bf16 *)g,
                    logits, count, ids, wts, E, D, TOPK, sync);
  };
  const Step gate_up_flag = gate_up_as(gate_up_started<true, true>);
  const Step gate_up_ff = gate_up_as(gate_up_started<true, false>);
  // A branch of the graph after qkv_a that asks the L2 for later kernels'
  // weights (l2_prefetch), joined again after the layer's last kernel.
  cudaStream_t side;
  cudaEvent_t fork_ev, join_ev;
  CUDA(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
  CUDA(cudaEventCreateWithFlags(&fork_ev, cudaEventDisableTiming));
  CUDA(cudaEventCreateWithFlags(&join_ev, cudaEventDisableTiming));
  // router_on_branch: the router on a branch of the graph after o_proj
  // (an edge, not a programmatic one), joined after the layer's last
  // kernel, while gate_up follows o_proj as in no_router: what the router
  // costs by being there, beside gate_up, rather than by its place in the
  // chain (gate_up's routed blocks read whichever ids are there).
  const Step route_branch = [&](int i) {
    CUDA(cudaEventRecord(fork_ev, stream));
    CUDA(cudaStreamWaitEvent(side, fork_ev, 0));
    const cudaStream_t main_stream = stream;
    stream = side;
    launch_clusters(llm_moe_route, dim3((E + S - 1) / S, m), dim3(THREADS), (size_t)D * 2, false,
                    (E + S - 1) / S, router[i], x, g, logits, count, ids, wts, E, D, m, TOPK,
                    1e-6f);
    stream = main_stream;
    CUDA(cudaEventRecord(join_ev, side));
  };
  const auto in_l2 = [&](std::vector<const Copies *> what, bool bulk) -> Step {
    return [&, what, bulk](int i) {
      L2Ranges r = {};
      for (size_t k = 0; k < what.size() && k < 4; k++) {
        r.p[k] = reinterpret_cast<const char *>((*what[k])[i]);
        r.bytes[k] = what[k]->elems * 2;
      }
      CUDA(cudaEventRecord(fork_ev, stream));
      CUDA(cudaStreamWaitEvent(side, fork_ev, 0));
      if (bulk)
        l2_prefetch<true><<<sms, 256, 0, side>>>(r);
      else
        l2_prefetch<false><<<sms, 256, 0, side>>>(r);
      CUDA(cudaGetLastError());
      CUDA(cudaEventRecord(join_ev, side));
    };
  };
  const Step join = [&](int) { CUDA(cudaStreamWaitEvent(stream, join_ev, 0)); };
  static const char *const kernel[] = {"norm_gemv",     "mla_prep",  "mla_decode",
                                       "mla_combine_up", "gemv_residual", "moe_route",
                                       "moe_gate_up"};
  const std::vector<Step> layer = {qkv_a, prep, attend, combine_up, o_proj, route, gate_up, down_now};
  if (trace) {
    // The library's chain as the tr_* kernels, call TR of each graph traced.
    const int TR = CALLS / 20, NK = 8, MAXB = 2048;
    unsigned long long *trace_buf = (unsigned long long *)dalloc((size_t)NK * MAXB * 3 * 8);
    CUDA(cudaMemset(trace_buf, 0, (size_t)NK * MAXB * 3 * 8));
    const auto tr = [&](int kk, int i) { return i == TR ? trace_buf + (size_t)kk * MAXB * 3 : nullptr; };
    // The phases of a block's work (PhaseMark), 8 a block.
    unsigned long long *phase_buf = (unsigned long long *)dalloc((size_t)NK * MAXB * 8 * 8);
    const auto ph = [&](int kk, int i) { return i == TR ? phase_buf + (size_t)kk * MAXB * 8 : nullptr; };
    const int nb[NK] = {(MLA_QKV + R - 1) / R, MLA_H * MLA_KVR / R + 1, SPLITS,
                        MLA_H * MLA_VD / R, D / R, (E + S - 1) / S,
                        (FS + S - 1) / S + TOPK * ((FE + S - 1) / S), D / S};
    const std::vector<Step> traced = {
        [&](int i) {
          launch(tr_norm_gemv, dim3(nb[0]), dim3(THREADS), (size_t)D * 2, true,
                 (const bf16 *)wqkv[i], (const bf16 *)x, (const bf16 *)g, qkv, (int)MLA_QKV, D,
                 m, 1e-6f, tr(0, i), ph(0, i));
        },
        [&](int i) {
          launch(tr_prep, dim3(nb[1]), dim3(THREADS), (size_t)MLA_PREP_TOKEN_SMEM, true,
                 (const bf16 *)wukt[i], (const bf16 *)qkv, (const bf16 *)kvn, (const float *)inv,
                 (const uint32_t *)pos, q_lat, q_pe, cache, m, keys, tr(1, i), ph(1, i));
        },
        [&](int i) {
          launch(tr_decode, dim3(nb[2]), dim3(MLA_THREADS), MLA_DECODE_SMEM, true,
                 (const bf16 *)q_lat, (const bf16 *)q_pe, (const bf16 *)cache,
                 (const uint32_t *)pos, part, ml, m, keys, 0.1147f, tr(2, i), ph(2, i));
        },
        [&](int i) {
          launch(tr_combine_up, dim3(nb[3]), dim3(THREADS), (size_t)MLA_KVR * 2, true,
                 (const bf16 *)wuv[i], (const float *)part, (const float *)ml, attn, SPLITS,
                 m, tr(3, i), ph(3, i));
        },
        [&](int i) {
          launch(tr_o_proj, dim3(nb[4]), dim3(THREADS), (size_t)MLA_H * MLA_VD * 2, true,
                 (const bf16 *)wo[i], (const bf16 *)attn, x, D, MLA_H * MLA_VD, m, tr(4, i),
                 ph(4, i));
        },
        [&](int i) {
          launch_clusters(tr_route, dim3(nb[5]), dim3(THREADS), (size_t)D * 2, true, nb[5],
                          (const bf16 *)router[i], (const bf16 *)x, (const bf16 *)g, logits,
                          count, ids, wts, E, D, m, TOPK, tr(5, i), ph(5, i));
        },
        [&](int i) {
          launch(tr_gate_up<true>, dim3(nb[6]), dim3(THREADS), (size_t)D * 2, true,
                 (const bf16 *)gu[i], (const bf16 *)sgu[i], (const bf16 *)x, (const bf16 *)g,
                 (const uint32_t *)ids, act, (int)FE, (int)FS, (int)TOPK, D, tr(6, i));
        },
        [&](int i) {
          launch(tr_down, dim3(nb[7]), dim3(THREADS), (size_t)(TOPK * FE + FS) * 4, true,
                 (const bf16 *)down[i], (const bf16 *)sdown[i], (const bf16 *)act,
                 (const uint32_t *)ids, (const float *)wts, x, (int)FE, (int)FS, (int)TOPK, D,
                 tr(7, i));
        },
    };
    // no_router_*: the same without the router, the shared blocks waiting
    // on o_proj (the layer section's no_router row, traced).
    std::vector<Step> traced_no_router = traced;
    traced_no_router.erase(traced_no_router.begin() + 5);
    traced_no_router[5] = [&](int i) {
      launch(tr_gate_up<false>, dim3(nb[6]), dim3(THREADS), (size_t)D * 2, true,
             (const bf16 *)gu[i], (const bf16 *)sgu[i], (const bf16 *)x, (const bf16 *)g,
             (const uint32_t *)ids, act, (int)FE, (int)FS, (int)TOPK, D, tr(6, i));
    };
    char name[64];
    snprintf(name, sizeof name, "moe_layer_keys%d", keys);
    bench_row("trace", name, "library_chain", "us",
              time_calls([&](int i) { for (const Step &st : layer) st(i); }, CALLS / 10));
    static const char *const kname[NK] = {"norm_gemv", "mla_prep",     "mla_decode", "mla_combine_up",
                                          "o_proj",    "moe_route",    "moe_gate_up", "moe_down"};
    std::vector<unsigned long long> h((size_t)NK * MAXB * 3);
    std::vector<unsigned long long> hp((size_t)NK * MAXB * 8);
    const auto run = [&](const char *prefix, const std::vector<Step> &steps) {
      CUDA(cudaMemset(trace_buf, 0, (size_t)NK * MAXB * 3 * 8));
      CUDA(cudaMemset(phase_buf, 0, (size_t)NK * MAXB * 8 * 8));
      const double us = time_calls([&](int i) { for (const Step &st : steps) st(i); }, CALLS / 10);
      CUDA(cudaMemcpy(h.data(), trace_buf, h.size() * 8, cudaMemcpyDeviceToHost));
      CUDA(cudaMemcpy(hp.data(), phase_buf, hp.size() * 8, cudaMemcpyDeviceToHost));
      char col[96];
      snprintf(col, sizeof col, "%straced_chain", prefix);
      bench_row("trace", name, col, "us", us);
      unsigned long long t0 = ~0ull;
      for (int b = 0; b < nb[0]; b++)
        t0 = std::min(t0, h[3 * b]);
      // Each kernel's blocks (gate_up's shared and routed apart; prep's
      // last block apart): the first, median and last of each mark, us
      // after the first norm_gemv block started.
      // The first, median and last of mark `which` of blocks [b0, b1),
      // over the blocks that made it; then of each phase.
      const auto marks = [&](const std::vector<unsigned long long> &buf, int slots, int kk, int b0,
                             int b1, int which, const char *label, const char *what) {
        std::vector<double> v;
        for (int b = b0; b < b1; b++) {
          const unsigned long long t = buf[((size_t)kk * MAXB + b) * slots + which];
          if (t)
            v.push_back((double)(t - t0) / 1e3);
        }
        if (v.empty())
          return;
        std::sort(v.begin(), v.end());
        const double q[3] = {v.front(), v[v.size() / 2], v.back()};
        static const char *const qn[3] = {"first", "median", "last"};
        for (int k = 0; k < 3; k++) {
          snprintf(col, sizeof col, "%s%s_%s_%s", prefix, label, what, qn[k]);
          bench_row("trace", name, col, "us", q[k]);
        }
      };
      const auto group = [&](const char *label, int kk, int b0, int b1) {
        static const char *const wn[3] = {"start", "waited", "end"};
        for (int which = 0; which < 3; which++)
          marks(h, 3, kk, b0, b1, which, label, wn[which]);
        for (int p = 0; p < 8; p++) {
          char what[16];
          snprintf(what, sizeof what, "phase%d", p);
          marks(hp, 8, kk, b0, b1, p, label, what);
        }
      };
      for (int kk = 0; kk < NK; kk++) {
        if (kk == 1) {
          group("mla_prep_gemv", 1, 0, nb[1] - 1);
          group("mla_prep_rope", 1, nb[1] - 1, nb[1]);
        } else if (kk == 6) {
          group("moe_gate_up_shared", 6, 0, (FS + S - 1) / S);
          group("moe_gate_up_routed", 6, (FS + S - 1) / S, nb[6]);
        } else {
          group(kname[kk], kk, 0, nb[kk]);
        }
      }
    };
    run("", traced);
    run("no_router_", traced_no_router);
    CUDA(cudaFree(trace_buf));
    CUDA(cudaFree(phase_buf));
    CUDA(cudaEventDestroy(fork_ev));
    CUDA(cudaEventDestroy(join_ev));
    CUDA(cudaStreamDestroy(side));
    return;
  }
  // The chain's variants, each a row: the library's layer with kernels of
  // it replaced.  combine_then_grouped, down_before, gate_up_before and
  // route_without_clusters: the kernels before the library's.  What the
  // router costs where it stands: shared_late, the shared experts' blocks
  // waiting on the router as the routed ones do, and no_router, the same
  // without the router (its ids those of the chains before); route_U8,
  // route_logits_only, router_weights_in_l2 and router_rows_in_smem the
  // router's parts;
  // router_flag, route_not_waited, flag_routed_free and shared_rows_in_l2
  // when gate_up's blocks start and what they stream beside the router
  // (their kernels above); router_on_branch the router beside gate_up
  // instead of before it (above).  The other *_in_l2 rows: a branch asking the L2 for later
  // kernels' weights (above).
  // prep_rope_split: llm_mla_prep's last block as two (prep_split);
  // prep_gemv_only: without that block (the decode reading the queries'
  // RoPE and the new key as they were), what moving it off the chain
  // could save at most.
  // without_*: the layer with one kernel left out, the kernels after it
  // reading what it last wrote, so the most that folding that kernel into
  // its neighbours could save the chain.
  struct Variant {
    const char *row;
    std::vector<Step> steps;
  };
  const std::vector<Variant> variants = {
      {"combine_then_grouped", {qkv_a, prep, attend, combine, v_up, o_proj, route, gate_up, down_now}},
      {"down_before", {qkv_a, prep, attend, combine_up, o_proj, route, gate_up, down_old}},
      {"gate_up_before", {qkv_a, prep, attend, combine_up, o_proj, route, gate_up_old, down_now}},
      {"route_without_clusters",
       {qkv_a, prep, attend, combine_up, o_proj, route_atomic, gate_up, down_now}},
      {"shared_late", {qkv_a, prep, attend, combine_up, o_proj, route, gate_up_late, down_now}},
      {"no_router", {qkv_a, prep, attend, combine_up, o_proj, gate_up_late, down_now}},
      {"router_flag", {qkv_a, prep, attend, combine_up, o_proj, route_flag, gate_up_flag, down_now}},
      {"shared_rows_in_l2", {qkv_a, prep, attend, combine_up, o_proj, route, gate_up_sl2, down_now}},
      {"route_not_waited",
       {qkv_a, prep, attend, combine_up, o_proj, route, gate_up_not_waited, down_now}},
      {"flag_routed_free", {qkv_a, prep, attend, combine_up, o_proj, route_flag, gate_up_ff, down_now}},
      {"router_on_branch",
       {qkv_a, prep, attend, combine_up, o_proj, route_branch, gate_up_late, down_now, join}},
      {"route_U8", {qkv_a, prep, attend, combine_up, o_proj, route_u8, gate_up, down_now}},
      {"router_rows_in_smem", {qkv_a, prep, attend, combine_up, o_proj, route_sm, gate_up, down_now}},
      {"route_logits_only",
       {qkv_a, prep, attend, combine_up, o_proj, route_logits, gate_up, down_now}},
      {"router_weights_in_l2",
       {qkv_a, prep, attend, combine_up, o_proj_l2, route, gate_up, down_now}},
      {"branch_prefetching_nothing",
       {qkv_a, in_l2({}, false), prep, attend, combine_up, o_proj, route, gate_up, down_now, join}},
      {"o_proj_in_l2",
       {qkv_a, in_l2({&wo}, false), prep, attend, combine_up, o_proj, route, gate_up, down_now,
        join}},
      {"o_proj_in_l2_bulk",
       {qkv_a, in_l2({&wo}, true), prep, attend, combine_up, o_proj, route, gate_up, down_now,
        join}},
      {"o_proj_router_in_l2_bulk",
       {qkv_a, in_l2({&wo, &router}, true), prep, attend, combine_up, o_proj, route, gate_up,
        down_now, join}},
      {"shared_gate_up_in_l2_bulk",
       {qkv_a, in_l2({&sgu}, true), prep, attend, combine_up, o_proj, route, gate_up, down_now,
        join}},
      {"o_proj_router_shared_in_l2_bulk",
       {qkv_a, in_l2({&wo, &router, &sgu}, true), prep, attend, combine_up, o_proj, route,
        gate_up, down_now, join}},
      {"o_proj_in_l2_bulk_from_prep",
       {qkv_a, prep, in_l2({&wo}, true), attend, combine_up, o_proj, route, gate_up, down_now,
        join}},
      {"prep_rope_split", {qkv_a, prep_two, attend, combine_up, o_proj, route, gate_up, down_now}},
      {"prep_gemv_only", {qkv_a, prep_gemv, attend, combine_up, o_proj, route, gate_up, down_now}},
      {"without_mla_prep", {qkv_a, attend, combine_up, o_proj, route, gate_up, down_now}},
      {"without_mla_decode", {qkv_a, prep, combine_up, o_proj, route, gate_up, down_now}},
      {"without_mla_combine_up", {qkv_a, prep, attend, o_proj, route, gate_up, down_now}},
      {"without_o_proj", {qkv_a, prep, attend, combine_up, route, gate_up, down_now}},
      {"without_norm_gemv", {prep, attend, combine_up, o_proj, route, gate_up, down_now}},
  };
  auto chain_time = [&](const std::vector<Step> &steps, size_t upto) {
    return time_calls(
        [&](int i) {
          for (size_t k = 0; k < upto && k < steps.size(); k++)
            steps[k](i);
        },
        CALLS / 10);
  };
  const double us = chain_time(layer, layer.size());
  std::vector<double> prefix(layer.size());
  for (size_t k = 1; k < layer.size(); k++)
    prefix[k] = chain_time(layer, k);
  std::vector<double> variant_us;
  for (const Variant &v : variants)
    variant_us.push_back(chain_time(v.steps, v.steps.size()));
  const size_t bytes = ((size_t)MLA_QKV * D + (size_t)MLA_H * MLA_KVR * MLA_NOPE +
                        (size_t)MLA_H * MLA_VD * MLA_KVR + (size_t)D * MLA_H * MLA_VD +
                        (size_t)E * D + (size_t)TOPK * 3 * FE * D + (size_t)3 * FS * D +
                        (size_t)keys * MLA_CH) *
                       2;
  char name[64];
  snprintf(name, sizeof name, "moe_layer_keys%d", keys);
  bench_row("layer", name, "bytes", "MB", bytes / 1e6);
  bench_row("layer", name, "cgc_kernels", "us", us);
  bench_row("layer", name, "read_only", "us", read_time(bytes));
  for (size_t v = 0; v < variants.size(); v++)
    bench_row("layer", name, variants[v].row, "us", variant_us[v]);
  for (size_t k = 1; k < layer.size(); k++) {
    char col[64];
    snprintf(col, sizeof col, "first_%zu_to_%s", k, kernel[k - 1]);
    bench_row("layer", name, col, "us", prefix[k]);
  }
  CUDA(cudaEventDestroy(fork_ev));
  CUDA(cudaEventDestroy(join_ev));
  CUDA(cudaStreamDestroy(side));
}

// ---------------------------------------------------------------------------
// What a kernel boundary costs (--only boundary): a chain of kernels with no
// weights, each staging a 2,048-value activation vector in every block and
// taking its sum of squares (as a GEMV with its norm does before its first
// multiply), then writing 16 outputs a block: the next kernel's input.  The
// ways hand one kernel's outputs to the next:
//   plain    graph edges, no programmatic dependent launch;
//   pdl      the library's way: wait() first, trigger() once staged;
//   count    launched as pdl is, but no wait(): every block adds one to a
//            count once its outputs are written (release), and the next
//            kernel's blocks spin on that count (acquire) instead;
//   empty    wait() and trigger() alone, nothing read or written.
enum BoundaryWay { BOUNDARY_PLAIN, BOUNDARY_PDL, BOUNDARY_COUNT, BOUNDARY_EMPTY };
constexpr int BOUNDARY_N = 2048, BOUNDARY_OUT = 16; // outputs a block: BOUNDARY_N / 16 blocks

__global__ void __launch_bounds__(THREADS) boundary_step(const bf16 *in, bf16 *out,
                                                         const unsigned *wait_on,
                                                         unsigned *done, int way) {
  __shared__ float xs[BOUNDARY_N];
  __shared__ float red[WARPS];
  if (way == BOUNDARY_COUNT) {
    if (wait_on && threadIdx.x == 0) {
      unsigned seen;
      do
        asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(seen) : "l"(wait_on) : "memory");
      while (seen < gridDim.x);
    }
    __syncthreads();
  } else {
    wait();
  }
  if (way == BOUNDARY_EMPTY) {
    trigger();
    return;
  }
  float ss = 0;
  for (int i = threadIdx.x; i < BOUNDARY_N; i += THREADS) {
    const float v = bf(in[i]);
    xs[i] = v;
    ss += v * v;
  }
  ss = warp_sum(ss);
  if ((threadIdx.x & 31) == 0)
    red[threadIdx.x >> 5] = ss;
  __syncthreads();
  float total = 0;
  for (int w = 0; w < WARPS; w++)
    total += red[w];
  trigger();
  const float scale = rsqrtf(total / BOUNDARY_N + 1e-6f);
  if (threadIdx.x < BOUNDARY_OUT) {
    const int o = blockIdx.x * BOUNDARY_OUT + threadIdx.x;
    out[o] = to_bf(xs[o] * scale);
  }
  if (way == BOUNDARY_COUNT) {
    __syncthreads(); // the block's outputs are written
    if (threadIdx.x == 0)
      asm volatile("red.release.gpu.global.add.u32 [%0], 1;" ::"l"(done) : "memory");
  }
}

static void boundary_case() {
  const int blocks = BOUNDARY_N / BOUNDARY_OUT;
  bf16 *buf[2] = {random_bf16(BOUNDARY_N, 1), random_bf16(BOUNDARY_N, 1)};
  unsigned *counts = (unsigned *)dalloc((size_t)CALLS * sizeof(unsigned));
  static const char *const names[] = {"plain", "pdl", "count", "empty"};
  for (int way = BOUNDARY_PLAIN; way <= BOUNDARY_EMPTY; way++) {
    const double us = time_calls([&](int i) {
      if (way == BOUNDARY_COUNT && i == 0) // every count from 0, each launch of the graph
        CUDA(cudaMemsetAsync(counts, 0, (size_t)CALLS * sizeof(unsigned), stream));
      launch(boundary_step, dim3(blocks), dim3(THREADS), 0, way != BOUNDARY_PLAIN,
             (const bf16 *)buf[i & 1], buf[(i + 1) & 1], (const unsigned *)(i ? counts + i - 1 : nullptr),
             counts + i, way);
    });
    bench_row("boundary", "chain_128_blocks", names[way], "us", us);
  }
  CUDA(cudaFree(counts));
  CUDA(cudaFree(buf[0]));
  CUDA(cudaFree(buf[1]));
}

int main(int argc, char **argv) {
  const bool quick = argc > 1 && !strcmp(argv[1], "--quick");
  const bool read_only_run = argc > 1 && !strcmp(argv[1], "--read"); // the 8 GB row alone
  // --only SECTION: the read row and that section's (gemv, sweep, attention, moe, layer, boundary, router)
  const char *only = argc > 2 && !strcmp(argv[1], "--only") ? argv[2] : nullptr;
  auto want = [&](const char *section) { return !only || !strcmp(only, section); };
  if (only && !want("gemv") && !want("sweep") && !want("attention") && !want("moe") &&
      !want("layer") && !want("boundary") && !want("router") && !want("trace")) {
    fprintf(stderr, "usage: bench_llm_kernels [--quick | --read | --only "
                    "gemv|sweep|attention|moe|layer|boundary|router|trace]\n");
    return 2;
  }
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    printf("bench_llm_kernels: skipped: no GPU\n");
    return 77;
  }
  if (quick) {
    CALLS = 40;
    REPS = 5;
  }
  CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  sink = (uint4 *)dalloc(16);
  CUBLAS(cublasCreate(&blas));
  CUBLAS(cublasSetStream(blas, stream));
  blas_ws = dalloc(BLAS_WS);
  printf("section,case,way,metric,value\n");

  { // the read-only kernel's bandwidth over 8 GB
    const size_t bytes = quick ? (1ull << 30) : (8ull << 30);
    uint4 *p = (uint4 *)dalloc(bytes);
    CUDA(cudaMemset(p, 1, bytes));
    double us = time_calls(
        [&](int) { launch(bench_read_only, dim3(sms * 4), dim3(512), 0, true, (const uint4 *)p, bytes / 16, sink); },
        5);
    bench_row("read", quick ? "1GB" : "8GB", "read_only", "TB/s", bytes / us / 1e6);
    CUDA(cudaFree(p));
  }
  if (read_only_run)
    return 0;
  const GemvCase cases[] = {
      {"kv_a", PLAIN, 576, 2048},           {"q_proj", PLAIN, 3072, 2048},
      {"qkv_norm", NORM, MLA_QKV, 2048},    {"o_proj", RESIDUAL, 2048, 2048},
      {"expert_down", PLAIN, 2048, 1408},   {"dense_down", RESIDUAL, 2048, 10944},
      {"dense_gate_up", SWIGLU_NORM, 10944, 2048}, {"lm_head", ARGMAX_NORM, 102400, 2048},
      {"odd_37x1000", PLAIN, 37, 1000},
  };
  if (want("gemv"))
    for (const GemvCase &c : cases)
      for (int m : {1, 8})
        gemv_case(c, m, c.kind != ARGMAX_NORM || m == 1);
  if (want("sweep")) {
    sweep("q_proj", 3072, 2048);
    sweep("dense_down", 2048, 10944);
    sweep("lm_head", 102400, 2048);
  }
  for (int m : {1, 8}) {
    if (want("attention")) {
      // The sample's splits (64 a sequence, 32 at 8) with 1, 2 and 4 tiles
      // of keys in flight a block; 512 keys make one tile a split.
      const int sample_splits = m == 8 ? 32 : 64, sample_cluster = m == 8 ? 8 : 1;
      for (int stages : {1, 2, 4})
        attention_case(4096, m, sample_splits, sample_cluster, stages);
      attention_case(4096, m, sample_splits / 2, sample_cluster, 4);
      attention_case(4096, m, 64, m == 8 ? 1 : 8); // the other cluster rule
      attention_case(512, m, 64, 1);
      attention_case(512, m, 64, 8);
    }
    if (want("moe")) {
      moe_case(m, false);
      if (m > 1)
        moe_case(m, true);
    }
  }
  if (want("layer"))
    layer_case(512);
  if (only && want("trace"))
    layer_case(512, true);
  if (want("boundary"))
    boundary_case();
  if (want("router"))
    router_case();
  CUBLAS(cublasDestroy(blas));
  CUDA(cudaFree(blas_ws));
  CUDA(cudaFree(sink));
  CUDA(cudaStreamDestroy(stream));
  return 0;
}
