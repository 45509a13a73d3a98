/* dense_block: 64 positions of the dense block of a DeepSeek-V2-Lite decode
 * step (4 layers by default) from one instantiated graph, pos and nkeys set
 * before each launch; then the same 64 steps as plain stream launches (the
 * same kernels and cuBLAS calls in the same order).  The two must agree bit
 * for bit: the residual stream and every KV cache row.  The graph's last
 * layer is also checked against the CPU, kernel by kernel and GEMM by GEMM,
 * from the inputs each node read. */
#include "check.h"
#include "dense_block.h"
#include "dense_block_graph.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { STEPS = DB_MAXPOS < 64 ? DB_MAXPOS : 64, NODES = 10 * DB_LAYERS };

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

/* ||got - want|| / ||want|| over n values; NaN gives infinity. */
static double rel_error(const uint16_t *got, const double *want, size_t n) {
  double num = 0, den = 0;
  for (size_t i = 0; i < n; i++) {
    double g = bf(got, i);
    if (isnan(g) || isnan(want[i]))
      return INFINITY;
    num += (g - want[i]) * (g - want[i]);
    den += want[i] * want[i];
  }
  return sqrt(num / (den ? den : 1));
}

/* want = W v for a row-major rows x cols W, in double. */
static void matvec(const uint16_t *w, const uint16_t *v, size_t rows, size_t cols, double *want) {
  float *vf = malloc(cols * sizeof *vf);
  for (size_t c = 0; c < cols; c++)
    vf[c] = bf(v, c);
  for (size_t r = 0; r < rows; r++) {
    double s = 0;
    for (size_t c = 0; c < cols; c++)
      s += (double)dense_from_bf16(w[r * cols + c]) * vf[c];
    want[r] = s;
  }
  free(vf);
}

/* RoPE as the kernel does it, in double: pairs (x[2i], x[2i+1]) rotate by
 * pos * 10000^(-2i/64) and land at i and i + 32. */
static void rope(const uint16_t *x, uint32_t pos, double *out) {
  for (int i = 0; i < DB_ROPE / 2; i++) {
    double a = pos * pow(10000.0, -2.0 * i / DB_ROPE), x0 = bf(x, 2 * i), x1 = bf(x, 2 * i + 1);
    out[i] = x0 * cos(a) - x1 * sin(a);
    out[DB_ROPE / 2 + i] = x1 * cos(a) + x0 * sin(a);
  }
}

typedef struct Check {
  const char *what;
  double error;
} Check;

/* The graph's last layer, node by node, from what each node read: its
 * buffers still hold what that layer left in them. */
static int check_last_layer(dense_block *g, const DenseWeights *w, const uint16_t *kc,
                            const uint16_t *vc, uint32_t pos, Check *out) {
  const int l = DB_LAYERS - 1, nkeys = (int)pos + 1;
  uint16_t *qa = to_host(dense_block_buffer_qa(g), DB_QA),
           *ckv = to_host(dense_block_buffer_ckv(g), DB_KVR);
  uint16_t *kvb = to_host(dense_block_buffer_kvb(g), DB_KVB),
           *a = to_host(dense_block_buffer_a(g), DB_H * DB_VD);
  uint16_t *h = to_host(dense_block_buffer_h(g), DB_D),
           *gu = to_host(dense_block_buffer_gu(g), 2 * DB_F);
  uint16_t *act = to_host(dense_block_buffer_act(g), DB_F);
  uint16_t *kvn = to_host((uint16_t *)w->kv_norm + (size_t)l * DB_KVR, DB_KVR);
  uint16_t *wkvb =
      to_host((uint16_t *)w->w_kvb + (size_t)l * DB_KVB * DB_KVR, (size_t)DB_KVB * DB_KVR);
  uint16_t *wgu =
      to_host((uint16_t *)w->w_gu + (size_t)l * 2 * DB_F * DB_D, (size_t)2 * DB_F * DB_D);
  double *want = malloc(2 * DB_F * sizeof *want);
  int n = 0;

  /* kv_a_layernorm */
  double ss = 0;
  for (int i = 0; i < DB_KVR; i++)
    ss += (double)bf(qa, DB_H * DB_QK + i) * bf(qa, DB_H * DB_QK + i);
  double r = 1 / sqrt(ss / DB_KVR + 1e-6);
  for (int i = 0; i < DB_KVR; i++)
    want[i] = bf(qa, DB_H * DB_QK + i) * r * bf(kvn, i);
  out[n++] = (Check){"kv_a_layernorm", rel_error(ckv, want, DB_KVR)};

  matvec(wkvb, ckv, DB_KVB, DB_KVR, want);
  out[n++] = (Check){"kv_b_proj", rel_error(kvb, want, DB_KVB)};

  /* The KV rows this step wrote, and attention over the cache. */
  const size_t kstride = (size_t)DB_MAXPOS * DB_QK, vstride = (size_t)DB_MAXPOS * DB_VD;
  const uint16_t *lkc = kc + (size_t)l * DB_H * kstride, *lvc = vc + (size_t)l * DB_H * vstride;
  double krope[DB_ROPE], qrope[DB_ROPE], kwant[DB_H * DB_ROPE], score[DB_MAXPOS];
  uint16_t kgot[DB_H * DB_ROPE];
  int copied = 1;
  rope(qa + DB_H * DB_QK + DB_KVR, pos, krope);
  for (int hh = 0; hh < DB_H; hh++) {
    const uint16_t *krow = lkc + hh * kstride + (size_t)pos * DB_QK;
    const uint16_t *vrow = lvc + hh * vstride + (size_t)pos * DB_VD;
    copied &= !memcmp(krow, kvb + hh * (DB_NOPE + DB_VD), DB_NOPE * sizeof *krow);
    copied &= !memcmp(vrow, kvb + hh * (DB_NOPE + DB_VD) + DB_NOPE, DB_VD * sizeof *vrow);
    memcpy(kgot + hh * DB_ROPE, krow + DB_NOPE, DB_ROPE * sizeof *krow);
    memcpy(kwant + hh * DB_ROPE, krope, sizeof krope);
  }
  out[n++] = (Check){"k and v rows copied from kv_b_proj", copied ? 0 : INFINITY};
  out[n++] = (Check){"RoPE of the k rows", rel_error(kgot, kwant, DB_H * DB_ROPE)};
  for (int hh = 0; hh < DB_H; hh++) {
    const uint16_t *q = qa + hh * DB_QK;
    double m = -INFINITY, sum = 0;
    rope(q + DB_NOPE, pos, qrope);
    for (int j = 0; j < nkeys; j++) {
      const uint16_t *k = lkc + hh * kstride + (size_t)j * DB_QK;
      double s = 0;
      for (int i = 0; i < DB_NOPE; i++)
        s += (double)bf(q, i) * bf(k, i);
      for (int i = 0; i < DB_ROPE; i++)
        s += qrope[i] * bf(k, DB_NOPE + i);
      score[j] = s / sqrt((double)DB_QK);
      m = score[j] > m ? score[j] : m;
    }
    for (int j = 0; j < nkeys; j++)
      sum += score[j] = exp(score[j] - m);
    for (int i = 0; i < DB_VD; i++) {
      double s = 0;
      for (int j = 0; j < nkeys; j++)
        s += score[j] / sum * bf(lvc + hh * vstride + (size_t)j * DB_VD, i);
      want[hh * DB_VD + i] = s;
    }
  }
  out[n++] = (Check){"attention", rel_error(a, want, DB_H * DB_VD)};

  matvec(wgu, h, 2 * DB_F, DB_D, want);
  out[n++] = (Check){"gate and up projections", rel_error(gu, want, 2 * DB_F)};

  for (int i = 0; i < DB_F; i++) {
    double x = bf(gu, i);
    want[i] = x / (1 + exp(-x)) * bf(gu, DB_F + i);
  }
  out[n++] = (Check){"SwiGLU", rel_error(act, want, DB_F)};

  free(qa), free(ckv), free(kvb), free(a), free(h), free(gu), free(act), free(kvn), free(wkvb);
  free(wgu), free(want);
  return n;
}

/* Where the caches first differ: the earliest position, then layer. */
static void first_difference(const char *what, const uint16_t *got, const uint16_t *want,
                             int dims) {
  for (int p = 0; p < STEPS; p++)
    for (int l = 0; l < DB_LAYERS; l++)
      for (int hh = 0; hh < DB_H; hh++) {
        size_t off = (((size_t)l * DB_H + hh) * DB_MAXPOS + p) * dims;
        for (int i = 0; i < dims; i++)
          if (got[off + i] != want[off + i]) {
            fprintf(stderr,
                    "dense_block: %s cache first differs at position %d, layer %d, head %d, "
                    "element %d: graph %g, stream launches %g\n",
                    what, p, l, hh, i, bf(got, off + i), bf(want, off + i));
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
  cudaStream_t stream;
  CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cublasHandle_t blas = dense_blas_create();
  DenseWeights w;
  dense_weights_create(&w, SEED);

  /* The graph's extern buffers, and every buffer of the stream launches:
   * NaN until written, so that reading an unwritten value shows. */
  DenseState ref;
  dense_state_create(&ref, 1);
  void *gx_d = dense_poisoned(DB_D * 2), *gkc_d = dense_poisoned(DB_N_KC * 2);
  void *gvc_d = dense_poisoned(DB_N_VC * 2);
  uint16_t x0[DB_D];
  uint64_t rng = SEED ^ 0x9e3779b97f4a7c15u;
  for (int i = 0; i < DB_D; i++)
    x0[i] = dense_to_bf16(dense_uniform(&rng));
  CUDA(cudaMemcpy(ref.x, x0, sizeof x0, cudaMemcpyHostToDevice));
  CUDA(cudaMemcpy(gx_d, x0, sizeof x0, cudaMemcpyHostToDevice));
  CUDA(cudaDeviceSynchronize()); /* before the non-blocking stream reads any of it */

  dense_block_extern ext = {gx_d,       w.attn_norm, w.w_qa,   w.kv_norm, w.w_kvb, w.w_o,
                            w.ffn_norm, w.w_gu,      w.w_down, gkc_d,     gvc_d};
  cgrt_options opt = CGRT_OPTIONS_INIT;
  opt.user = blas; /* the capture functions' cuBLAS handle */
  opt.stream = stream;
  dense_block *g;
  CGRT(dense_block_create(&g, &ext, &opt));
  /* The graph's own outputs start as NaN too (count must stay zero). */
  void *owned[] = {dense_block_buffer_h(g),   dense_block_buffer_qa(g),  dense_block_buffer_ckv(g),
                   dense_block_buffer_kvb(g), dense_block_buffer_a(g),   dense_block_buffer_gu(g),
                   dense_block_buffer_act(g), dense_block_buffer_part(g)};
  size_t owned_bytes[] = {
      DB_D * 2,         DB_QA * 2,    DB_KVR * 2, DB_KVB * 2,
      DB_H * DB_VD * 2, 2 * DB_F * 2, DB_F * 2,   (size_t)DB_H * DB_SPLITS * (DB_VD + 2) * 4};
  for (size_t i = 0; i < sizeof owned / sizeof *owned; i++)
    CUDA(cudaMemsetAsync(owned[i], 0xff, owned_bytes[i], stream));

  uint32_t *hscal; /* pos and nkeys of each step, for the stream launches' copies */
  CUDA(cudaHostAlloc((void **)&hscal, 2 * STEPS * sizeof *hscal, cudaHostAllocDefault));
  cudaEvent_t ev[3];
  for (int i = 0; i < 3; i++)
    CUDA(cudaEventCreate(&ev[i]));

  CUDA(cudaEventRecord(ev[0], stream));
  for (uint32_t pos = 0; pos < STEPS; pos++) {
    CGRT(dense_block_set_pos(g, pos));
    CGRT(dense_block_set_nkeys(g, pos + 1));
    CGRT(dense_block_launch(g, stream));
  }
  CUDA(cudaEventRecord(ev[1], stream));
  for (uint32_t pos = 0; pos < STEPS; pos++) {
    hscal[2 * pos] = pos;
    hscal[2 * pos + 1] = pos + 1;
    CUDA(cudaMemcpyAsync(ref.scalars, hscal + 2 * pos, 2 * sizeof *hscal, cudaMemcpyHostToDevice,
                         stream));
    CUDA(dense_block_stream_step(&w, &ref, blas, stream));
  }
  CUDA(cudaEventRecord(ev[2], stream));
  CUDA(cudaStreamSynchronize(stream));
  float ms_graph, ms_stream;
  CUDA(cudaEventElapsedTime(&ms_graph, ev[0], ev[1]));
  CUDA(cudaEventElapsedTime(&ms_stream, ev[1], ev[2]));

  uint16_t *gx = to_host(gx_d, DB_D), *rx = to_host(ref.x, DB_D);
  uint16_t *gkc = to_host(gkc_d, DB_N_KC), *rkc = to_host(ref.kc, DB_N_KC);
  uint16_t *gvc = to_host(gvc_d, DB_N_VC), *rvc = to_host(ref.vc, DB_N_VC);
  int same_x = !memcmp(gx, rx, DB_D * sizeof *gx);
  int same_k = !memcmp(gkc, rkc, DB_N_KC * sizeof *gkc);
  int same_v = !memcmp(gvc, rvc, DB_N_VC * sizeof *gvc);
  int finite = 1;
  for (int i = 0; i < DB_D; i++)
    finite &= isfinite(bf(gx, i));
  if (!same_x) {
    double worst = 0;
    for (int i = 0; i < DB_D; i++)
      worst = fmax(worst, fabs((double)bf(gx, i) - bf(rx, i)));
    fprintf(stderr, "dense_block: x differs from the stream launches' by up to %g\n", worst);
  }
  if (!same_k)
    first_difference("k", gkc, rkc, DB_QK);
  if (!same_v)
    first_difference("v", gvc, rvc, DB_VD);
  if (!finite)
    fprintf(stderr, "dense_block: x is not finite\n");

  Check checks[8];
  int nchecks = check_last_layer(g, &w, gkc, gvc, STEPS - 1, checks);
  double worst = 0;
  int close = 1;
  for (int i = 0; i < nchecks; i++) {
    if (!(checks[i].error < 1e-2)) {
      close = 0;
      fprintf(stderr, "dense_block: last layer, %s: relative error %.2e against the CPU\n",
              checks[i].what, checks[i].error);
    }
    worst = fmax(worst, checks[i].error);
  }
  int ok = same_x && same_k && same_v && finite && close;
  printf("dense_block: %d positions x %d layers (%d nodes a step): graph and stream launches "
         "%s bit for bit; last layer vs CPU: relative error <= %.1e; %.1f us a step (stream "
         "launches %.1f): %s\n",
         STEPS, DB_LAYERS, NODES, same_x && same_k && same_v ? "agree" : "DIFFER", worst,
         1000.0 * ms_graph / STEPS, 1000.0 * ms_stream / STEPS, ok ? "OK" : "FAILED");

  dense_block_destroy(g);
  for (int i = 0; i < 3; i++)
    CUDA(cudaEventDestroy(ev[i]));
  CUDA(cudaFreeHost(hscal));
  dense_state_destroy(&ref, 1);
  CUDA(cudaFree(gx_d));
  CUDA(cudaFree(gkc_d));
  CUDA(cudaFree(gvc_d));
  dense_weights_destroy(&w);
  dense_blas_destroy(blas);
  CUDA(cudaStreamDestroy(stream));
  free(gx), free(rx), free(gkc), free(rkc), free(gvc), free(rvc);
  return ok ? 0 : 1;
}
