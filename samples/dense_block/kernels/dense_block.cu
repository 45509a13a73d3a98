// The dense block's step as plain stream launches of the kernel library's
// kernels (for the sample's check and the benchmark): the graph's nodes in
// the order dense_block.cgraph writes them, with the same launch
// configurations and arguments.  Launched without the programmatic
// attribute, a pdl kernel's wait and trigger do nothing, so each kernel
// starts after the one before has finished.
#include "dense_block_graph.h" // declares the library's kernels, as llm.cgraph does

#include "dense_block.h"

typedef __nv_bfloat16 bf16;

static const bf16 *layer(const void *base, size_t per_layer, int l) {
  return (const bf16 *)base + per_layer * (size_t)l;
}

#define TRY(call)                                                                                  \
  do {                                                                                             \
    cudaError_t e_ = (call);                                                                       \
    if (e_ != cudaSuccess)                                                                         \
      return e_;                                                                                   \
  } while (0)

// The library's launch constants: llm.cgraph's LLM_*, which the build
// defines for this file (CGC_KERNELS_CONSTANTS, kernels/CMakeLists.txt).
enum {
  THREADS = LLM_THREADS,
  ROWS = LLM_GEMV_ROWS,
  SROWS = LLM_SWIGLU_ROWS,
  MLA_THREADS = LLM_MLA_THREADS,
  MLA_SMEM = LLM_MLA_SMEM,
  MLA_PREP_SMEM = LLM_MLA_PREP_SMEM
};

static unsigned cdiv(unsigned a, unsigned b) { return (a + b - 1) / b; }

// The attention's shared memory is over the default 48 KB (cgrt sets the
// same attribute for the graph's node); set once, outside any capture.
extern "C" cudaError_t dense_block_stream_init(void) {
  return cudaFuncSetAttribute((const void *)llm_mla_decode,
                              cudaFuncAttributeMaxDynamicSharedMemorySize, MLA_SMEM);
}

extern "C" cudaError_t dense_block_stream_step(const DenseWeights *w, const DenseState *s,
                                               cudaStream_t stream) {
  bf16 *x = (bf16 *)s->x, *qkv = (bf16 *)s->qkv, *q_lat = (bf16 *)s->q_lat;
  bf16 *q_pe = (bf16 *)s->q_pe, *attn = (bf16 *)s->attn;
  bf16 *act = (bf16 *)s->act;
  for (int l = 0; l < DB_LAYERS; l++) {
    bf16 *cache = (bf16 *)s->cache + (size_t)l * DB_MAXPOS * DB_CH;
    llm_norm_gemv<<<cdiv(DB_QA, ROWS), THREADS, DB_D * 2, stream>>>(
        layer(w->w_qa, (size_t)DB_QA * DB_D, l), x, layer(w->attn_norm, DB_D, l), qkv, DB_QA, DB_D,
        1, DB_EPS);
    TRY(cudaGetLastError());
    llm_mla_prep<<<DB_H * DB_KVR / ROWS + 1, THREADS, MLA_PREP_SMEM, stream>>>(
        layer(w->w_ukt, (size_t)DB_H * DB_KVR * DB_NOPE, l), qkv, layer(w->kv_norm, DB_KVR, l),
        w->inv_freq, s->pos, q_lat, q_pe, cache, 1, DB_MAXPOS, DB_EPS, 1.0f);
    TRY(cudaGetLastError());
    llm_mla_decode<<<dim3(DB_SPLITS, 1), MLA_THREADS, MLA_SMEM, stream>>>(
        q_lat, q_pe, cache, s->pos, s->part, s->ml, 1, DB_MAXPOS, DB_SCALE);
    TRY(cudaGetLastError());
    llm_mla_combine_up<<<DB_H * DB_VD / ROWS, THREADS, DB_KVR * 2, stream>>>(
        layer(w->w_uv, (size_t)DB_H * DB_VD * DB_KVR, l), s->part, s->ml, attn, DB_SPLITS, 1);
    TRY(cudaGetLastError());
    llm_gemv_residual<<<cdiv(DB_D, ROWS), THREADS, DB_H * DB_VD * 2, stream>>>(
        layer(w->w_o, (size_t)DB_D * DB_H * DB_VD, l), attn, x, DB_D, DB_H * DB_VD, 1);
    TRY(cudaGetLastError());
    llm_norm_gemv_swiglu<<<cdiv(DB_F, SROWS), THREADS, DB_D * 2, stream>>>(
        layer(w->w_gu, (size_t)2 * DB_F * DB_D, l), x, layer(w->ffn_norm, DB_D, l), act, DB_F, DB_D,
        1, DB_EPS);
    TRY(cudaGetLastError());
    llm_gemv_residual<<<cdiv(DB_D, ROWS), THREADS, DB_F * 2, stream>>>(
        layer(w->w_down, (size_t)DB_D * DB_F, l), act, x, DB_D, DB_F, 1);
    TRY(cudaGetLastError());
  }
  return cudaSuccess;
}
