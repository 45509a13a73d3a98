/* dense_block_host.c: the weights and buffers that the sample and the
 * benchmark share. */
#include "check.h"
#include "dense_block.h"
#include "llm.h" /* the kernel library's host helpers */

#include <math.h>
#include <stdlib.h>

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

/* w_ukt and w_uv from w_kvb, layer by layer on the host: head h's key rows
 * h * (NOPE + VD) + n, transposed to [KVR][NOPE], and its value rows
 * h * (NOPE + VD) + NOPE + v as they are. */
static void split_kv_b(DenseWeights *w) {
  const size_t per_layer = (size_t)DB_KVB * DB_KVR, head = (size_t)(DB_NOPE + DB_VD) * DB_KVR;
  uint16_t *kvb = malloc(per_layer * sizeof *kvb), *ukt = malloc(per_layer / 2 * sizeof *ukt);
  uint16_t *uv = malloc(per_layer / 2 * sizeof *uv);
  if (!kvb || !ukt || !uv) {
    fprintf(stderr, "dense_block: out of host memory\n");
    exit(1);
  }
  CUDA(cudaMalloc(&w->w_ukt, DB_N_UKT * sizeof(uint16_t)));
  CUDA(cudaMalloc(&w->w_uv, DB_N_UV * sizeof(uint16_t)));
  for (int l = 0; l < DB_LAYERS; l++) {
    CUDA(cudaMemcpy(kvb, (uint16_t *)w->w_kvb + per_layer * l, per_layer * sizeof *kvb,
                    cudaMemcpyDeviceToHost));
    for (int h = 0; h < DB_H; h++) {
      const uint16_t *keys = kvb + head * h, *values = keys + (size_t)DB_NOPE * DB_KVR;
      for (int n = 0; n < DB_NOPE; n++)
        for (int r = 0; r < DB_KVR; r++)
          ukt[((size_t)h * DB_KVR + r) * DB_NOPE + n] = keys[(size_t)n * DB_KVR + r];
      memcpy(uv + (size_t)h * DB_VD * DB_KVR, values, (size_t)DB_VD * DB_KVR * sizeof *uv);
    }
    CUDA(cudaMemcpy((uint16_t *)w->w_ukt + per_layer / 2 * l, ukt, per_layer / 2 * sizeof *ukt,
                    cudaMemcpyHostToDevice));
    CUDA(cudaMemcpy((uint16_t *)w->w_uv + per_layer / 2 * l, uv, per_layer / 2 * sizeof *uv,
                    cudaMemcpyHostToDevice));
  }
  free(kvb), free(ukt), free(uv);
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
  split_kv_b(w);
  float inv_freq[DB_ROPE / 2]; /* plain RoPE (factor 1: no YaRN scaling), base 10000 */
  llm_yarn_inv_freq(inv_freq, DB_ROPE, 10000.0, 1.0, 4096, 32.0, 1.0);
  CUDA(cudaMalloc((void **)&w->inv_freq, sizeof inv_freq));
  CUDA(cudaMemcpy(w->inv_freq, inv_freq, sizeof inv_freq, cudaMemcpyHostToDevice));
  /* A copy from pageable memory may return before its DMA is done, and
   * non-blocking streams do not wait for the legacy default stream. */
  CUDA(cudaDeviceSynchronize());
}

void dense_weights_destroy(DenseWeights *w) {
  void *all[] = {w->attn_norm, w->w_qa,   w->kv_norm, w->w_kvb, w->w_o,     w->ffn_norm,
                 w->w_gu,      w->w_down, w->w_ukt,   w->w_uv,  w->inv_freq};
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
  CUDA(dense_block_stream_init());
  s->x = dense_poisoned(DB_D * sizeof(uint16_t));
  s->qkv = dense_poisoned(DB_QA * sizeof(uint16_t));
  s->q_lat = dense_poisoned((size_t)DB_H * DB_KVR * sizeof(uint16_t));
  s->q_pe = dense_poisoned((size_t)DB_H * DB_ROPE * sizeof(uint16_t));
  s->part = dense_poisoned((size_t)DB_SPLITS * DB_H * DB_KVR * sizeof(float));
  s->ml = dense_poisoned((size_t)DB_SPLITS * DB_H * 2 * sizeof(float));
  s->attn = dense_poisoned((size_t)DB_H * DB_VD * sizeof(uint16_t));
  s->act = dense_poisoned(DB_F * sizeof(uint16_t));
  CUDA(cudaMalloc((void **)&s->pos, sizeof(uint32_t)));
  CUDA(cudaMemset(s->pos, 0, sizeof(uint32_t)));
  s->cache = with_cache ? dense_poisoned(DB_N_CACHE * sizeof(uint16_t)) : NULL;
  /* cudaMemset may return before it is done, and non-blocking streams do
   * not wait for the legacy default stream. */
  CUDA(cudaDeviceSynchronize());
}

void dense_state_destroy(DenseState *s, int with_cache) {
  void *all[] = {s->x, s->qkv, s->q_lat, s->q_pe, s->part, s->ml, s->attn, s->act, s->pos};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++)
    CUDA(cudaFree(all[i]));
  if (with_cache)
    CUDA(cudaFree(s->cache));
}
