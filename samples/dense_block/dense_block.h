/* dense_block.h: the dense block's sizes and its buffers, for the host
 * programs (the sample and bench/dense_block) and for the CUDA file that
 * issues the same step as plain stream launches.  The sizes must be those of
 * dense_block.cgraph; CMake passes one LAYERS and MAXPOS to both. */
#ifndef DENSE_BLOCK_H
#define DENSE_BLOCK_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

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
  DB_QA = DB_H * DB_QK + DB_KVR + DB_ROPE, /* q_proj and kv_a_proj_with_mqa, stacked */
  DB_KVB = DB_H * (DB_NOPE + DB_VD),       /* kv_b_proj */
  DB_CH = DB_KVR + DB_ROPE,                /* a cached position: normed latent, roped key */
  DB_SPLITS = 32                           /* attention blocks over the keys */
};

/* RMSNorm's eps, and the softmax scale 192^-0.5 as dense_block.cgraph
 * writes it (plain RoPE: no YaRN factor). */
#define DB_EPS 1e-6f
#define DB_SCALE 0.0721687836f

/* Elements of each weight over all layers, and of the KV cache. */
#define DB_N_NORM ((size_t)DB_LAYERS * DB_D)
#define DB_N_QA ((size_t)DB_LAYERS * DB_QA * DB_D)
#define DB_N_KVNORM ((size_t)DB_LAYERS * DB_KVR)
#define DB_N_KVB ((size_t)DB_LAYERS * DB_KVB * DB_KVR)
#define DB_N_UKT ((size_t)DB_LAYERS * DB_H * DB_KVR * DB_NOPE)
#define DB_N_UV ((size_t)DB_LAYERS * DB_H * DB_VD * DB_KVR)
#define DB_N_O ((size_t)DB_LAYERS * DB_D * DB_H * DB_VD)
#define DB_N_GU ((size_t)DB_LAYERS * 2 * DB_F * DB_D)
#define DB_N_DOWN ((size_t)DB_LAYERS * DB_D * DB_F)
#define DB_N_CACHE ((size_t)DB_LAYERS * DB_MAXPOS * DB_CH)
/* Bytes of weights one step reads: the projections (kv_b_proj as its two
 * halves) and the norms' weights. */
#define DB_WEIGHT_BYTES                                                                            \
  (2 * (DB_N_QA + DB_N_UKT + DB_N_UV + DB_N_O + DB_N_GU + DB_N_DOWN + 2 * DB_N_NORM + DB_N_KVNORM))

#ifdef __cplusplus
extern "C" {
#endif

/* The weights of every layer, bf16 on the device, row-major [out, in] as
 * PyTorch's nn.Linear keeps them (w_qa: q_proj's rows, then
 * kv_a_proj_with_mqa's; w_gu: gate_proj's, then up_proj's; w_kvb:
 * kv_b_proj, a head's NOPE key rows then its VD value rows).  The graph
 * reads kv_b_proj as the library's absorbed attention does: w_ukt
 * [LAYERS][H][KVR][NOPE], each head's key rows transposed, and w_uv
 * [LAYERS][H][VD][KVR], its value rows, both made from w_kvb at load
 * (w_kvb stays for the CPU's check).  inv_freq: RoPE's 32 frequencies,
 * f32. */
typedef struct DenseWeights {
  void *attn_norm, *w_qa, *kv_norm, *w_kvb, *w_o, *ffn_norm, *w_gu, *w_down;
  void *w_ukt, *w_uv;
  float *inv_freq;
} DenseWeights;

/* What one way of running the step works on (the graph's own buffers, or a
 * set allocated for stream launches). */
typedef struct DenseState {
  void *x;                  /* bf16[D]: the residual stream */
  void *cache;              /* bf16[LAYERS, MAXPOS, CH] */
  void *qkv, *q_lat, *q_pe; /* bf16 intermediates: [QA], [H, KVR], [H, ROPE] */
  float *part, *ml;         /* f32[SPLITS, H, KVR], f32[SPLITS, H, 2] */
  void *attn, *act;         /* bf16[H * VD], [F] */
  uint32_t *pos;            /* device: this token's position */
} DenseState;

/* kernels/dense_block.cu: the step as the graph runs it, its nodes in the
 * same order with the same launch configurations, as plain launches on
 * `stream` (no programmatic dependent launch; the caller copies pos to
 * s->pos first), after dense_block_stream_init has run once
 * (dense_state_create runs it). */
cudaError_t dense_block_stream_init(void);
cudaError_t dense_block_stream_step(const DenseWeights *w, const DenseState *s,
                                    cudaStream_t stream);

/* dense_block_host.c */
void dense_weights_create(DenseWeights *w, uint64_t seed); /* random, fixed seed */
void dense_weights_destroy(DenseWeights *w);
/* Device memory of NaN in bf16 and f32 alike: every byte 0xff. */
void *dense_poisoned(size_t bytes);
/* Allocates every buffer of s (NaN); the KV cache only when with_cache. */
void dense_state_create(DenseState *s, int with_cache);
void dense_state_destroy(DenseState *s, int with_cache);

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
