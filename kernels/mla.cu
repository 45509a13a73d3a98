// mla.cu: multi-head latent attention kernels of llm.cgraph.
#include "llm_graph.h"

#include "llm_config.cuh"
#include "llm_mla.cuh"

using namespace llm;

static_assert(MLA_H * MLA_KVR % GEMV_ROWS == 0, "a block's queries are one head's");
static_assert(MLA_VD % GEMV_ROWS == 0, "llm_mla_combine_up: a block's outputs are one head's");

// Below compute capability 9.0 ptxas held llm_mla_prep to 32 registers and
// spilled (sm_80) unless told that it need not fit more than 4 blocks a
// multiprocessor; for sm_90 it is built as before (40 registers, so that a
// block of llm_mla_decode fits beside 4 of prep's: BENCHMARKS.md, run BC).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#define LLM_PREP_BOUNDS __launch_bounds__(THREADS, 4)
#else
#define LLM_PREP_BOUNDS __launch_bounds__(THREADS)
#endif

extern "C" __global__ void LLM_PREP_BOUNDS
    llm_mla_prep(const bf16 *w_ukt, const bf16 *qkv, const bf16 *kv_norm, const float *inv_freq,
                 const uint32_t *pos, bf16 *q_lat, bf16 *q_pe, bf16 *cache, uint32_t m,
                 uint32_t maxpos, float eps, float mscale) {
  const int gemv_blocks_n = (int)gridDim.x - 1;
  if (gemv_blocks_n < 1 || m > MAX_TOKENS)
    __trap();
  if ((int)blockIdx.x == gemv_blocks_n) {
    wait();
    trigger();
    mla_rope_cache_block(qkv, kv_norm, inv_freq, pos, q_pe, cache, (int)m, (int)maxpos, eps,
                         mscale);
    return;
  }
  mla_absorb_queries<GEMV_R, GEMV_U>(w_ukt, qkv, q_lat, (int)m, gemv_blocks_n);
}

extern "C" __global__ void __launch_bounds__(MLA_THREADS)
    llm_mla_decode(const bf16 *q_lat, const bf16 *q_pe, const bf16 *cache, const uint32_t *pos,
                   float *part, float *ml, uint32_t m, uint32_t maxpos, float scale) {
  if (blockDim.x != MLA_THREADS)
    __trap();
  mla_decode_block(MlaDecodeArgs{q_lat, q_pe, cache, pos, part, ml, (int)m, (int)maxpos, scale});
}

extern "C" __global__ void __launch_bounds__(MLA_COMBINE_THREADS)
    llm_mla_combine(const float *part, const float *ml, bf16 *o, uint32_t splits, uint32_t m) {
  mla_combine_block(part, ml, o, (int)splits, (int)m);
}

// llm_mla_combine and the value half of kv_b_proj in one kernel: the GEMV's
// blocks join the splits of their head themselves (one fewer kernel
// boundary in every layer's chain).
extern "C" __global__ void __launch_bounds__(THREADS, 2)
    llm_mla_combine_up(const bf16 *w_uv, const float *part, const float *ml, bf16 *y,
                       uint32_t splits, uint32_t m) {
  // The next kernel (o_proj) starts as this one does, before its wait: see
  // llm_norm_gemv in gemv.cu.
  trigger();
  if (splits < 1 || splits > MLA_MAX_SPLITS || m > MAX_TOKENS)
    __trap();
  int cluster = 1;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  // In clusters, a cluster's blocks are of one head and join its splits
  // together (StageJoin): one pass, clusters of 2, 4 or 8 along x.
  namespace cg = cooperative_groups;
  cg::cluster_group cl = cg::this_cluster();
  cluster = (int)cl.dim_blocks().x;
  if (cl.num_blocks() > 1) {
    if (cl.dim_blocks().y != 1 || cl.dim_blocks().z != 1 || (MLA_VD / GEMV_ROWS) % cluster != 0 ||
        gridDim.x * GEMV_ROWS != MLA_H * MLA_VD || gridDim.y != 1)
      __trap();
    cl.sync(); // every block has started before any writes into its shared memory
  }
#endif
  GemvArgs a{w_uv, nullptr, nullptr, y, nullptr, nullptr, MLA_H * MLA_VD, MLA_KVR, (int)m, 0,
             MLA_VD, MLA_KVR, MLA_H * MLA_KVR, 0};
  if (cluster > 1)
    gemv_dispatch<GEMV_R, GEMV_U, Epi::Plain>(a, blockIdx.x, gridDim.x,
                                              StageJoin<true>{part, ml, (int)splits});
  else
    gemv_dispatch<GEMV_R, GEMV_U, Epi::Plain>(a, blockIdx.x, gridDim.x,
                                              StageJoin<false>{part, ml, (int)splits});
}
