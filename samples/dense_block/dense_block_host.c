/* dense_block_host.c: weights, buffers and the cuBLAS handle that the
 * sample and the benchmark share. */
#include "check.h"
#include "dense_block.h"

#include <math.h>
#include <stdlib.h>

#define CUBLAS(call)                                                                               \
  do {                                                                                             \
    cublasStatus_t s_ = (call);                                                                    \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                                             \
      fprintf(stderr, "%s:%d: %s: cuBLAS status %d\n", __FILE__, __LINE__, #call, (int)s_);        \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

/* n bf16 values on the device: uniform in +-sqrt(3 / fan_in) (unit variance
 * times 1 / fan_in, so W x is about as large as x), or 1 + 0.1 uniform for
 * the norms' weights (fan_in 0).  Made in pieces, in order, from one state. */
static void *random_bf16(size_t n, int fan_in, uint64_t *rng, uint16_t *staging, size_t piece) {
  void *d;
  CUDA(cudaMalloc(&d, n * sizeof(uint16_t)));
  float scale = fan_in ? sqrtf(3.0f / (float)fan_in) : 0.1f;
  for (size_t done = 0; done < n; done += piece) {
    size_t m = n - done < piece ? n - done : piece;
    for (size_t i = 0; i < m; i++)
      staging[i] = dense_to_bf16((fan_in ? 0.0f : 1.0f) + scale * dense_uniform(rng));
    CUDA(cudaMemcpy((uint16_t *)d + done, staging, m * sizeof(uint16_t), cudaMemcpyHostToDevice));
  }
  return d;
}

void dense_weights_create(DenseWeights *w, uint64_t seed) {
  const size_t piece = (size_t)1 << 24;
  uint16_t *staging = malloc(piece * sizeof *staging);
  uint64_t rng = seed ? seed : 1;
  if (!staging) {
    fprintf(stderr, "dense_block: out of host memory\n");
    exit(1);
  }
  w->attn_norm = random_bf16(DB_N_NORM, 0, &rng, staging, piece);
  w->w_qa = random_bf16(DB_N_QA, DB_D, &rng, staging, piece);
  w->kv_norm = random_bf16(DB_N_KVNORM, 0, &rng, staging, piece);
  w->w_kvb = random_bf16(DB_N_KVB, DB_KVR, &rng, staging, piece);
  w->w_o = random_bf16(DB_N_O, DB_H * DB_VD, &rng, staging, piece);
  w->ffn_norm = random_bf16(DB_N_NORM, 0, &rng, staging, piece);
  w->w_gu = random_bf16(DB_N_GU, DB_D, &rng, staging, piece);
  w->w_down = random_bf16(DB_N_DOWN, DB_F, &rng, staging, piece);
  free(staging);
  CUDA(cudaMalloc(&w->qa_f, DB_N_QA * sizeof(uint16_t)));
  CUDA(cudaMalloc(&w->kvb_f, DB_N_KVB * sizeof(uint16_t)));
  CUDA(cudaMalloc(&w->gu_f, DB_N_GU * sizeof(uint16_t)));
  CUDA(dense_fold_norms(w));
  CUDA(cudaDeviceSynchronize()); /* the copies and folds are done before other streams read */
}

void dense_weights_destroy(DenseWeights *w) {
  void *all[] = {w->attn_norm, w->w_qa,   w->kv_norm, w->w_kvb, w->w_o, w->ffn_norm,
                 w->w_gu,      w->w_down, w->qa_f,    w->kvb_f, w->gu_f};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++)
    CUDA(cudaFree(all[i]));
}

void *dense_poisoned(size_t bytes) {
  void *d;
  CUDA(cudaMalloc(&d, bytes));
  CUDA(cudaMemset(d, 0xff, bytes));
  return d;
}

void dense_state_create(DenseState *s, int with_cache) {
  s->x = dense_poisoned(DB_D * sizeof(uint16_t));
  s->qa = dense_poisoned(DB_QA * sizeof(uint16_t));
  s->kvb = dense_poisoned(DB_KVB * sizeof(uint16_t));
  s->a = dense_poisoned(DB_H * DB_VD * sizeof(uint16_t));
  s->gu = dense_poisoned(2 * DB_F * sizeof(uint16_t));
  s->act = dense_poisoned(DB_F * sizeof(uint16_t));
  s->part = dense_poisoned((size_t)DB_H * DB_SPLITS * (DB_VD + 2) * sizeof(float));
  CUDA(cudaMalloc((void **)&s->count, DB_H * sizeof(uint32_t)));
  CUDA(cudaMemset(s->count, 0, DB_H * sizeof(uint32_t)));
  CUDA(cudaMalloc((void **)&s->scalars, 2 * sizeof(uint32_t)));
  CUDA(cudaMemset(s->scalars, 0, 2 * sizeof(uint32_t)));
  CUDA(cudaMalloc(&s->ws, DB_WORKSPACE_BYTES));
  s->kc = with_cache ? dense_poisoned(DB_N_KC * sizeof(uint16_t)) : NULL;
  s->vc = with_cache ? dense_poisoned(DB_N_VC * sizeof(uint16_t)) : NULL;
  /* cudaMemset may return before it is done, and non-blocking streams do
   * not wait for the legacy default stream. */
  CUDA(cudaDeviceSynchronize());
}

void dense_state_destroy(DenseState *s, int with_cache) {
  void *all[] = {s->x,   s->qa,   s->kvb,   s->a,       s->gu,
                 s->act, s->part, s->count, s->scalars, s->ws};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++)
    CUDA(cudaFree(all[i]));
  if (with_cache) {
    CUDA(cudaFree(s->kc));
    CUDA(cudaFree(s->vc));
  }
}

cublasHandle_t dense_blas_create(void) {
  cublasHandle_t blas;
  CUBLAS(cublasCreate(&blas));
  return blas;
}

void dense_blas_destroy(cublasHandle_t blas) { CUBLAS(cublasDestroy(blas)); }
