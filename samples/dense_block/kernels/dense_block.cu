// The dense block's kernels and capture functions, and the same step as
// plain stream launches (for the sample's check and the benchmark).
#include <cublas_v2.h>

#include "dense_block_graph.h" // declares the kernels and capture functions: nvcc checks them
#include "dense_kernels.cuh"
#include "dense_linear.cuh"

#include "dense_block.h"

static_assert(DB_QK == dense::QK && DB_NOPE == dense::NOPE && DB_VD == dense::VD &&
                  DB_KVR == dense::KVR && DB_ATTN_THREADS == dense::ATTN_THREADS,
              "dense_block.h and dense_kernels.cuh disagree");

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

// The graph's nodes in the order dense_block.cgraph writes them, with the
// same launch configurations.
extern "C" cudaError_t dense_block_stream_step(const DenseWeights *w, const DenseState *s,
                                               cublasHandle_t blas, cudaStream_t stream) {
  void *user = (void *)blas;
  bf16 *x = (bf16 *)s->x, *qa = (bf16 *)s->qa, *kvb = (bf16 *)s->kvb, *a = (bf16 *)s->a;
  bf16 *gu = (bf16 *)s->gu, *act = (bf16 *)s->act;
  uint8_t *ws = (uint8_t *)s->ws;
  const dim3 attn_grid(DB_H, DB_SPLITS);
  const size_t attn_smem = (DB_MAXPOS + DB_SPLITS - 1) / DB_SPLITS * sizeof(float);
  const unsigned swiglu_grid = (DB_F + 8 * DB_SWIGLU_THREADS - 1) / (8 * DB_SWIGLU_THREADS);
  for (int l = 0; l < DB_LAYERS; l++) {
    bf16 *kc = (bf16 *)s->kc + (size_t)l * DB_H * DB_MAXPOS * DB_QK;
    bf16 *vc = (bf16 *)s->vc + (size_t)l * DB_H * DB_MAXPOS * DB_VD;
    TRY(linear_bf16(stream, user, layer(w->qa_f, (size_t)DB_QA * DB_D, l), x, qa, DB_QA, 1, DB_D,
                    ws, DB_WORKSPACE_BYTES));
    TRY(linear_bf16(stream, user, layer(w->kvb_f, (size_t)DB_KVB * DB_KVR, l), qa + DB_H * DB_QK,
                    kvb, DB_KVB, 1, DB_KVR, ws, DB_WORKSPACE_BYTES));
    mla_attention<<<attn_grid, DB_ATTN_THREADS, attn_smem, stream>>>(
        qa, kvb, x, kc, vc, s->scalars, s->scalars + 1, s->part, s->count, a, DB_MAXPOS, DB_D);
    TRY(cudaGetLastError());
    TRY(linear_bf16_residual(stream, user, layer(w->w_o, (size_t)DB_D * DB_H * DB_VD, l), a, x,
                             DB_D, 1, DB_H * DB_VD, ws, DB_WORKSPACE_BYTES));
    TRY(linear_bf16(stream, user, layer(w->gu_f, (size_t)2 * DB_F * DB_D, l), x, gu, 2 * DB_F, 1,
                    DB_D, ws, DB_WORKSPACE_BYTES));
    swiglu_bf16<<<swiglu_grid, DB_SWIGLU_THREADS, 0, stream>>>(gu, x, act, DB_F, DB_D);
    TRY(cudaGetLastError());
    TRY(linear_bf16_residual(stream, user, layer(w->w_down, (size_t)DB_D * DB_F, l), act, x, DB_D,
                             1, DB_F, ws, DB_WORKSPACE_BYTES));
  }
  return cudaSuccess;
}

// The same GEMMs, in the same order, and nothing else.
extern "C" cudaError_t dense_block_stream_gemms(const DenseWeights *w, const DenseState *s,
                                                cublasHandle_t blas, cudaStream_t stream) {
  void *user = (void *)blas;
  bf16 *x = (bf16 *)s->x, *qa = (bf16 *)s->qa, *kvb = (bf16 *)s->kvb, *a = (bf16 *)s->a;
  bf16 *gu = (bf16 *)s->gu, *act = (bf16 *)s->act;
  uint8_t *ws = (uint8_t *)s->ws;
  for (int l = 0; l < DB_LAYERS; l++) {
    TRY(linear_bf16(stream, user, layer(w->qa_f, (size_t)DB_QA * DB_D, l), x, qa, DB_QA, 1, DB_D,
                    ws, DB_WORKSPACE_BYTES));
    TRY(linear_bf16(stream, user, layer(w->kvb_f, (size_t)DB_KVB * DB_KVR, l), qa + DB_H * DB_QK,
                    kvb, DB_KVB, 1, DB_KVR, ws, DB_WORKSPACE_BYTES));
    TRY(linear_bf16_residual(stream, user, layer(w->w_o, (size_t)DB_D * DB_H * DB_VD, l), a, x,
                             DB_D, 1, DB_H * DB_VD, ws, DB_WORKSPACE_BYTES));
    TRY(linear_bf16(stream, user, layer(w->gu_f, (size_t)2 * DB_F * DB_D, l), x, gu, 2 * DB_F, 1,
                    DB_D, ws, DB_WORKSPACE_BYTES));
    TRY(linear_bf16_residual(stream, user, layer(w->w_down, (size_t)DB_D * DB_F, l), act, x, DB_D,
                             1, DB_F, ws, DB_WORKSPACE_BYTES));
  }
  return cudaSuccess;
}

// w->qa_f, kvb_f and gu_f from the weights and the norms' weights, layer by
// layer, on the legacy default stream.
extern "C" cudaError_t dense_fold_norms(DenseWeights *w) {
  struct {
    const void *w, *g;
    void *out;
    size_t rows;
    unsigned cols;
  } const fold[] = {{w->w_qa, w->attn_norm, w->qa_f, DB_QA, DB_D},
                    {w->w_kvb, w->kv_norm, w->kvb_f, DB_KVB, DB_KVR},
                    {w->w_gu, w->ffn_norm, w->gu_f, 2 * DB_F, DB_D}};
  for (const auto &f : fold)
    for (int l = 0; l < DB_LAYERS; l++) {
      const size_t n = f.rows * f.cols;
      fold_norm_bf16<<<1024, 256>>>(layer(f.w, n, l), layer(f.g, f.cols, l),
                                    (bf16 *)f.out + n * (size_t)l, f.rows, f.cols);
      TRY(cudaGetLastError());
    }
  return cudaSuccess;
}
