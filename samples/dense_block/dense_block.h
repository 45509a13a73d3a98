/* dense_block.h: the dense block's sizes and its buffers, for the host
 * programs (the sample and bench/dense_block) and for the CUDA file that
 * issues the same step as plain stream launches.  The sizes must be those of
 * dense_block.cgraph; CMake passes one LAYERS and MAXPOS to both. */
#ifndef DENSE_BLOCK_H
#define DENSE_BLOCK_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#ifndef DB_LAYERS
#define DB_LAYERS 4
#endif
#ifndef DB_MAXPOS
#define DB_MAXPOS 1024
#endif

enum {
  DB_D = 2048,                             /* hidden size */
  DB_H = 16,                               /* heads */
  DB_NOPE = 128,                           /* per head: query and key dimensions without RoPE, */
  DB_ROPE = 64,                            /* with RoPE (the key's part is shared by all heads), */
  DB_QK = 192,                             /* both, */
  DB_VD = 128,                             /* and value dimensions */
  DB_KVR = 512,                            /* the compressed KV */
  DB_F = 10944,                            /* FFN intermediate size */
  DB_SPLITS = 16,                          /* attention blocks per head (sm_90: 8 work) */
  DB_QA = DB_H * DB_QK + DB_KVR + DB_ROPE, /* q_proj and kv_a_proj_with_mqa, stacked */
  DB_KVB = DB_H * (DB_NOPE + DB_VD),       /* kv_b_proj */
  DB_ATTN_THREADS = 128,
  DB_SWIGLU_THREADS = 128
};

/* cuBLAS's workspace, one for each way of running the step. */
#define DB_WORKSPACE_BYTES ((size_t)32 << 20)

/* Elements of each weight over all layers, and of each KV cache. */
#define DB_N_NORM ((size_t)DB_LAYERS * DB_D)
#define DB_N_QA ((size_t)DB_LAYERS * DB_QA * DB_D)
#define DB_N_KVNORM ((size_t)DB_LAYERS * DB_KVR)
#define DB_N_KVB ((size_t)DB_LAYERS * DB_KVB * DB_KVR)
#define DB_N_O ((size_t)DB_LAYERS * DB_D * DB_H * DB_VD)
#define DB_N_GU ((size_t)DB_LAYERS * 2 * DB_F * DB_D)
#define DB_N_DOWN ((size_t)DB_LAYERS * DB_D * DB_F)
#define DB_N_KC ((size_t)DB_LAYERS * DB_H * DB_MAXPOS * DB_QK)
#define DB_N_VC ((size_t)DB_LAYERS * DB_H * DB_MAXPOS * DB_VD)
/* Bytes of weights one step reads (the norms' are folded into the GEMMs'). */
#define DB_WEIGHT_BYTES (2 * (DB_N_QA + DB_N_KVB + DB_N_O + DB_N_GU + DB_N_DOWN))

#ifdef __cplusplus
extern "C" {
#endif

/* The weights of every layer, bf16 on the device, row-major [out, in] as
 * PyTorch's nn.Linear keeps them; and the projections that read a norm's
 * output with that norm's weights folded in, W diag(g), which the step
 * uses (qa_f: w_qa times attn_norm, kvb_f: w_kvb times kv_norm, gu_f: w_gu
 * times ffn_norm). */
typedef struct DenseWeights {
  void *attn_norm, *w_qa, *kv_norm, *w_kvb, *w_o, *ffn_norm, *w_gu, *w_down;
  void *qa_f, *kvb_f, *gu_f;
} DenseWeights;

/* What one way of running the step works on (the graph's own buffers, or a
 * set allocated for stream launches). */
typedef struct DenseState {
  void *x;                                 /* bf16[D]: the residual stream */
  void *kc, *vc;                           /* bf16[LAYERS, H, MAXPOS, QK or VD] */
  void *qa, *kvb, *a, *gu, *act;           /* bf16 intermediates */
  float *part;                             /* f32[H, SPLITS, VD + 2], before sm_90 */
  uint32_t *count;                         /* u32[H], zero between steps, before sm_90 */
  uint32_t *scalars;                       /* device: pos, nkeys */
  void *ws;                                /* cuBLAS's workspace, DB_WORKSPACE_BYTES */
} DenseState;

/* kernels/dense_block.cu: the step as the graph runs it, its nodes in the
 * same order, as plain launches on `stream` (the caller copies pos and
 * nkeys to s->scalars first); its GEMMs alone, the same cuBLAS calls; and
 * the folded weights, made from the others (run once, at load). */
cudaError_t dense_block_stream_step(const DenseWeights *w, const DenseState *s, cublasHandle_t blas,
                                    cudaStream_t stream);
cudaError_t dense_block_stream_gemms(const DenseWeights *w, const DenseState *s,
                                     cublasHandle_t blas, cudaStream_t stream);
cudaError_t dense_fold_norms(DenseWeights *w);

/* dense_block_host.c */
void dense_weights_create(DenseWeights *w, uint64_t seed); /* random, fixed seed; folded */
void dense_weights_destroy(DenseWeights *w);
/* Device memory of NaN in bf16 and f32 alike: every byte 0xff. */
void *dense_poisoned(size_t bytes);
/* Allocates every buffer of s (count zeroed, the rest NaN); the KV caches
 * only when with_cache. */
void dense_state_create(DenseState *s, int with_cache);
void dense_state_destroy(DenseState *s, int with_cache);
cublasHandle_t dense_blas_create(void);
void dense_blas_destroy(cublasHandle_t blas);

/* xorshift64: uniform in [-1, 1). */
static inline float dense_uniform(uint64_t *state) {
  *state ^= *state << 13;
  *state ^= *state >> 7;
  *state ^= *state << 17;
  return (float)((*state >> 11) * 0x1.0p-53 * 2 - 1);
}

/* bf16 bits <-> float, rounding to nearest even. */
static inline uint16_t dense_to_bf16(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  if ((u & 0x7fffffffu) > 0x7f800000u)
    return 0x7fc0; /* NaN */
  u += 0x7fffu + ((u >> 16) & 1u);
  return (uint16_t)(u >> 16);
}

static inline float dense_from_bf16(uint16_t b) {
  uint32_t u = (uint32_t)b << 16;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

#ifdef __cplusplus
}
#endif

#endif
