/* dense_block: 64 positions of the dense block of a DeepSeek-V2-Lite decode
 * step (4 layers by default) on the kernel library, from one instantiated
 * graph, pos set before each launch; then the same 64 steps as plain stream
 * launches (the same kernels in the same order).  The two must agree bit
 * for bit: the residual stream and every KV cache row.  The last step is
 * also checked against the model computed on the CPU in double, attention
 * computed the non-absorbed way from kv_b_proj as made (the graph uses its
 * halves in the absorbed form): the cache rows it wrote and the residual it
 * left.  Quick (CGC_SAMPLE_QUICK=1, as under compute-sanitizer): 4
 * positions instead of 64. */
#include "check.h"
#include "dense_block.h"
#include "dense_block_graph.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { STEPS = DB_MAXPOS < 64 ? DB_MAXPOS : 64, QUICK_STEPS = 4, NODES = 8 * DB_LAYERS };

static const uint64_t SEED = 0x5eed0fdee95ee4b2u;

static uint16_t *to_host(const void *d, size_t n) {
  uint16_t *h = malloc(n * sizeof *h);
  if (!h) {
    fprintf(stderr, "dense_block: out of host memory\n");
    exit(1);
  }
  CUDA(cudaMemcpy(h, d, n * sizeof *h, cudaMemcpyDeviceToHost));
  return h;
}

static float bf(const uint16_t *v, size_t i) { return dense_from_bf16(v[i]); }

typedef struct Check {
  const char *what;
  double error;
} Check;

/* bf16 rounding of a double, as a GPU buffer stores it. */
static double round_bf16(double v) { return dense_from_bf16(dense_to_bf16((float)v)); }

/* want = W v for a row-major rows x cols W, in double. */
static void matvec(const uint16_t *w, const double *v, size_t rows, size_t cols, double *want) {
  for (size_t r = 0; r < rows; r++) {
    double s = 0;
    for (size_t c = 0; c < cols; c++)
      s += (double)dense_from_bf16(w[r * cols + c]) * v[c];
    want[r] = s;
  }
}

/* y = bf16(g * bf16(v / rms(v))), the model's RMSNorm, n values. */
static void rmsnorm(const double *v, const uint16_t *g, int n, double *y) {
  double ss = 0;
  for (int i = 0; i < n; i++)
    ss += v[i] * v[i];
  double r = 1 / sqrt(ss / n + 1e-6);
  for (int i = 0; i < n; i++)
    y[i] = round_bf16(round_bf16(v[i] * r) * bf(g, i));
}

/* RoPE as the kernel does it, in double: pairs (x[2i], x[2i+1]) rotate by
 * pos * 10000^(-2i/64) and land at i and i + 32. */
static void rope(const double *x, uint32_t pos, double *out) {
  for (int i = 0; i < DB_ROPE / 2; i++) {
    double a = pos * pow(10000.0, -2.0 * i / DB_ROPE), x0 = x[2 * i], x1 = x[2 * i + 1];
    out[i] = x0 * cos(a) - x1 * sin(a);
    out[DB_ROPE / 2 + i] = x1 * cos(a) + x0 * sin(a);
  }
}

/* ||got - want|| / ||want|| over n values; NaN gives infinity. */
static double rel_error(const double *got, const double *want, size_t n) {
  double num = 0, den = 0;
  for (size_t i = 0; i < n; i++) {
    if (isnan(got[i]) || isnan(want[i]))
      return INFINITY;
    num += (got[i] - want[i]) * (got[i] - want[i]);
    den += want[i] * want[i];
  }
  return sqrt(num / (den ? den : 1));
}

static uint16_t *layer_to_host(const void *base, size_t per_layer, int l) {
  return to_host((const uint16_t *)base + per_layer * (size_t)l, per_layer);
}

/* The last step again, on the CPU in double, as the model defines it: the
 * three RMSNorms as written, attention the non-absorbed way (each key's
 * and value's head rows made from its cached latent through kv_b_proj as
 * made, rounded to bf16 as the model's kv_b_proj output is), every buffer
 * that the model keeps in bf16 rounded to bf16.  It starts from xin, the
 * residual before the step, and reads the latents and RoPE keys of earlier
 * positions from the GPU's cache (checked against the stream launches' bit
 * for bit); it checks the cache row this step wrote in every layer and the
 * residual it left, xout. */
static void check_last_step(const DenseWeights *w, const uint16_t *xin, const uint16_t *xout,
                            const uint16_t *cache, uint32_t pos, Check *out) {
  const int nkeys = (int)pos + 1;
  double *x = malloc(DB_D * sizeof *x), *h = malloc(DB_D * sizeof *h);
  double *qa = malloc(DB_QA * sizeof *qa), *ckv = malloc(DB_KVR * sizeof *ckv);
  double *lat = malloc(DB_KVR * sizeof *lat), *att = malloc(DB_H * DB_VD * sizeof *att);
  double *kv = malloc((size_t)nkeys * DB_KVB * sizeof *kv),
         *kpe = malloc(nkeys * DB_ROPE * sizeof *kpe);
  double *gu = malloc(2 * DB_F * sizeof *gu), *act = malloc(DB_F * sizeof *act);
  double *y = malloc(2 * DB_F * sizeof *y), *score = malloc(nkeys * sizeof *score);
  double *row_want = malloc(DB_LAYERS * DB_CH * sizeof *row_want);
  double *row_got = malloc(DB_LAYERS * DB_CH * sizeof *row_got);
  double qrope[DB_ROPE], krope[DB_ROPE];
  if (!x || !h || !qa || !ckv || !lat || !att || !kv || !kpe || !gu || !act || !y || !score ||
      !row_want || !row_got) {
    fprintf(stderr, "dense_block: out of host memory\n");
    exit(1);
  }
  for (int i = 0; i < DB_D; i++)
    x[i] = bf(xin, i);
  for (int l = 0; l < DB_LAYERS; l++) {
    uint16_t *attn_norm = layer_to_host(w->attn_norm, DB_D, l);
    uint16_t *w_qa = layer_to_host(w->w_qa, (size_t)DB_QA * DB_D, l);
    uint16_t *kv_norm = layer_to_host(w->kv_norm, DB_KVR, l);
    uint16_t *w_kvb = layer_to_host(w->w_kvb, (size_t)DB_KVB * DB_KVR, l);
    uint16_t *w_o = layer_to_host(w->w_o, (size_t)DB_D * DB_H * DB_VD, l);
    uint16_t *ffn_norm = layer_to_host(w->ffn_norm, DB_D, l);
    uint16_t *w_gu = layer_to_host(w->w_gu, (size_t)2 * DB_F * DB_D, l);
    uint16_t *w_down = layer_to_host(w->w_down, (size_t)DB_D * DB_F, l);
    const uint16_t *lcache = cache + (size_t)l * DB_MAXPOS * DB_CH;

    rmsnorm(x, attn_norm, DB_D, h);
    matvec(w_qa, h, DB_QA, DB_D, qa);
    for (int i = 0; i < DB_QA; i++)
      qa[i] = round_bf16(qa[i]);

    /* The row this step adds: the normed latent, then the roped key part;
     * the GPU's row against it. */
    rmsnorm(qa + DB_H * DB_QK, kv_norm, DB_KVR, ckv);
    rope(qa + DB_H * DB_QK + DB_KVR, pos, krope);
    for (int i = 0; i < DB_CH; i++) {
      row_want[l * DB_CH + i] = i < DB_KVR ? ckv[i] : round_bf16(krope[i - DB_KVR]);
      row_got[l * DB_CH + i] = bf(lcache + (size_t)pos * DB_CH, i);
    }

    /* Every key's and value's head rows from its latent: the earlier
     * positions' from the cache, this step's as worked out here. */
    for (int j = 0; j < nkeys; j++) {
      for (int i = 0; i < DB_KVR; i++)
        lat[i] = (uint32_t)j == pos ? row_want[l * DB_CH + i] : bf(lcache + (size_t)j * DB_CH, i);
      for (int i = 0; i < DB_ROPE; i++)
        kpe[j * DB_ROPE + i] = (uint32_t)j == pos ? row_want[l * DB_CH + DB_KVR + i]
                                                  : bf(lcache + (size_t)j * DB_CH, DB_KVR + i);
      matvec(w_kvb, lat, DB_KVB, DB_KVR, kv + (size_t)j * DB_KVB);
      for (int i = 0; i < DB_KVB; i++)
        kv[(size_t)j * DB_KVB + i] = round_bf16(kv[(size_t)j * DB_KVB + i]);
    }
    for (int hh = 0; hh < DB_H; hh++) {
      const double *q = qa + hh * DB_QK;
      double m = -INFINITY, sum = 0;
      rope(q + DB_NOPE, pos, qrope);
      for (int j = 0; j < nkeys; j++) {
        const double *k = kv + (size_t)j * DB_KVB + hh * (DB_NOPE + DB_VD);
        double s = 0;
        for (int i = 0; i < DB_NOPE; i++)
          s += q[i] * k[i];
        for (int i = 0; i < DB_ROPE; i++)
          s += round_bf16(qrope[i]) * kpe[j * DB_ROPE + i];
        score[j] = s / sqrt((double)DB_QK);
        m = score[j] > m ? score[j] : m;
      }
      for (int j = 0; j < nkeys; j++)
        sum += score[j] = exp(score[j] - m);
      for (int i = 0; i < DB_VD; i++) {
        double s = 0;
        for (int j = 0; j < nkeys; j++)
          s += score[j] / sum * kv[(size_t)j * DB_KVB + hh * (DB_NOPE + DB_VD) + DB_NOPE + i];
        att[hh * DB_VD + i] = round_bf16(s);
      }
    }
    matvec(w_o, att, DB_D, DB_H * DB_VD, y);
    for (int i = 0; i < DB_D; i++)
      x[i] = round_bf16(x[i] + round_bf16(y[i]));

    rmsnorm(x, ffn_norm, DB_D, h);
    matvec(w_gu, h, 2 * DB_F, DB_D, gu);
    for (int i = 0; i < DB_F; i++) {
      double g = round_bf16(gu[i]), u = round_bf16(gu[DB_F + i]);
      act[i] = round_bf16(round_bf16(g / (1 + exp(-g))) * u);
    }
    matvec(w_down, act, DB_D, DB_F, y);
    for (int i = 0; i < DB_D; i++)
      x[i] = round_bf16(x[i] + round_bf16(y[i]));
    free(attn_norm), free(w_qa), free(kv_norm), free(w_kvb), free(w_o), free(ffn_norm);
    free(w_gu), free(w_down);
  }
  for (int i = 0; i < DB_D; i++)
    h[i] = bf(xout, i);
  out[0] = (Check){"cache rows written (every layer)",
                   rel_error(row_got, row_want, (size_t)DB_LAYERS * DB_CH)};
  out[1] = (Check){"the residual after the step", rel_error(h, x, DB_D)};
  free(x), free(h), free(qa), free(ckv), free(lat), free(att), free(kv), free(kpe), free(gu);
  free(act), free(y), free(score), free(row_want), free(row_got);
}

/* Where the caches first differ: the earliest position, then layer. */
static void first_difference(const uint16_t *got, const uint16_t *want, int steps) {
  for (int p = 0; p < steps; p++)
    for (int l = 0; l < DB_LAYERS; l++) {
      size_t off = ((size_t)l * DB_MAXPOS + p) * DB_CH;
      for (int i = 0; i < DB_CH; i++)
        if (got[off + i] != want[off + i]) {
          fprintf(stderr,
                  "dense_block: the cache first differs at position %d, layer %d, element %d: "
                  "graph %g, stream launches %g\n",
                  p, l, i, bf(got, off + i), bf(want, off + i));
          return;
        }
    }
}

int main(void) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    printf("dense_block: built; running it needs a GPU, and this machine has none\n");
    return 77;
  }
  const int steps = sample_quick() ? QUICK_STEPS : STEPS;
  cudaStream_t stream;
  CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  DenseWeights w;
  dense_weights_create(&w, SEED);

  /* The graph's extern buffers, and every buffer of the stream launches:
   * NaN until written, so that reading an unwritten value shows. */
  DenseState ref;
  dense_state_create(&ref, 1);
  void *gx_d = dense_poisoned(DB_D * 2), *gcache_d = dense_poisoned(DB_N_CACHE * 2);
  void *xin_d = dense_poisoned(DB_D * 2);
  uint16_t x0[DB_D];
  uint64_t rng = SEED ^ 0x9e3779b97f4a7c15u;
  for (int i = 0; i < DB_D; i++)
    x0[i] = dense_to_bf16(dense_uniform(&rng));
  CUDA(cudaMemcpy(ref.x, x0, sizeof x0, cudaMemcpyHostToDevice));
  CUDA(cudaMemcpy(gx_d, x0, sizeof x0, cudaMemcpyHostToDevice));
  CUDA(cudaDeviceSynchronize()); /* before the non-blocking stream reads any of it */

  dense_block_extern ext = {gx_d,  w.attn_norm, w.w_qa, w.kv_norm, w.w_ukt,    w.w_uv,
                            w.w_o, w.ffn_norm,  w.w_gu, w.w_down,  w.inv_freq, gcache_d};
  cgrt_options opt = CGRT_OPTIONS_INIT;
  opt.stream = stream;
  dense_block *g;
  CGRT(dense_block_create(&g, &ext, &opt));
  /* The graph's own buffers start as NaN too. */
  void *owned[] = {dense_block_buffer_qkv(g),  dense_block_buffer_q_lat(g),
                   dense_block_buffer_q_pe(g), dense_block_buffer_part(g),
                   dense_block_buffer_ml(g),   dense_block_buffer_attn(g),
                   dense_block_buffer_act(g)};
  size_t owned_bytes[] = {DB_QA * 2,
                          DB_H * DB_KVR * 2,
                          DB_H * DB_ROPE * 2,
                          (size_t)DB_SPLITS * DB_H * DB_KVR * 4,
                          (size_t)DB_SPLITS * DB_H * 2 * 4,
                          DB_H * DB_VD * 2,
                          DB_F * 2};
  for (size_t i = 0; i < sizeof owned / sizeof *owned; i++)
    CUDA(cudaMemsetAsync(owned[i], 0xff, owned_bytes[i], stream));

  uint32_t *hpos; /* each step's pos, for the stream launches' copies */
  CUDA(cudaHostAlloc((void **)&hpos, steps * sizeof *hpos, cudaHostAllocDefault));
  cudaEvent_t ev[3];
  for (int i = 0; i < 3; i++)
    CUDA(cudaEventCreate(&ev[i]));

  CUDA(cudaEventRecord(ev[0], stream));
  for (uint32_t pos = 0; pos < (uint32_t)steps; pos++) {
    CGRT(dense_block_set_pos(g, pos));
    CGRT(dense_block_launch(g, stream));
  }
  CUDA(cudaEventRecord(ev[1], stream));
  for (uint32_t pos = 0; pos < (uint32_t)steps; pos++) {
    hpos[pos] = pos;
    CUDA(cudaMemcpyAsync(ref.pos, hpos + pos, sizeof *hpos, cudaMemcpyHostToDevice, stream));
    if (pos == (uint32_t)steps - 1) /* the residual before the last step, for the CPU's check */
      CUDA(cudaMemcpyAsync(xin_d, ref.x, DB_D * 2, cudaMemcpyDeviceToDevice, stream));
    CUDA(dense_block_stream_step(&w, &ref, stream));
  }
  CUDA(cudaEventRecord(ev[2], stream));
  CUDA(cudaStreamSynchronize(stream));
  float ms_graph, ms_stream;
  CUDA(cudaEventElapsedTime(&ms_graph, ev[0], ev[1]));
  CUDA(cudaEventElapsedTime(&ms_stream, ev[1], ev[2]));

  uint16_t *gx = to_host(gx_d, DB_D), *rx = to_host(ref.x, DB_D);
  uint16_t *gcache = to_host(gcache_d, DB_N_CACHE), *rcache = to_host(ref.cache, DB_N_CACHE);
  int same_x = !memcmp(gx, rx, DB_D * sizeof *gx);
  int same_cache = !memcmp(gcache, rcache, DB_N_CACHE * sizeof *gcache);
  int finite = 1;
  for (int i = 0; i < DB_D; i++)
    finite &= isfinite(bf(gx, i));
  if (!same_x) {
    double worst = 0;
    for (int i = 0; i < DB_D; i++)
      worst = fmax(worst, fabs((double)bf(gx, i) - bf(rx, i)));
    fprintf(stderr, "dense_block: x differs from the stream launches' by up to %g\n", worst);
  }
  if (!same_cache)
    first_difference(gcache, rcache, steps);
  if (!finite)
    fprintf(stderr, "dense_block: x is not finite\n");

  enum { NCHECKS = 2 };
  Check checks[NCHECKS];
  uint16_t *xin = to_host(xin_d, DB_D);
  check_last_step(&w, xin, gx, gcache, steps - 1, checks);
  double worst = 0;
  int close = 1;
  for (int i = 0; i < NCHECKS; i++) {
    if (!(checks[i].error < 1e-2)) {
      close = 0;
      fprintf(stderr, "dense_block: last step, %s: relative error %.2e against the CPU\n",
              checks[i].what, checks[i].error);
    }
    worst = fmax(worst, checks[i].error);
  }
  int ok = same_x && same_cache && finite && close;
  printf("dense_block: %d positions x %d layers (%d nodes a step): graph and stream launches "
         "%s bit for bit; last step vs the model on the CPU: relative error <= %.1e; %.1f us a "
         "step (stream launches %.1f): %s\n",
         steps, DB_LAYERS, NODES, same_x && same_cache ? "agree" : "DIFFER", worst,
         1000.0 * ms_graph / steps, 1000.0 * ms_stream / steps, ok ? "OK" : "FAILED");

  dense_block_destroy(g);
  for (int i = 0; i < 3; i++)
    CUDA(cudaEventDestroy(ev[i]));
  CUDA(cudaFreeHost(hpos));
  dense_state_destroy(&ref, 1);
  CUDA(cudaFree(gx_d));
  CUDA(cudaFree(gcache_d));
  CUDA(cudaFree(xin_d));
  dense_weights_destroy(&w);
  CUDA(cudaStreamDestroy(stream));
  free(gx), free(rx), free(gcache), free(rcache), free(xin);
  return ok ? 0 : 1;
}
