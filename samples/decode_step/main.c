/* decode_step: 64 positions of a 4-layer decode step from one instantiated
 * graph, with pos and nkeys set between launches and nothing synchronised
 * until the end; checked against a CPU reference on fresh random data. */
#include "decode_step_graph.h"
#include "check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { D = 256, MAXPOS = 128, LAYERS = 4, STEPS = 64 };

static uint64_t rng;
static float uniform(void) { /* in [-1, 1) */
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (float)((rng >> 11) * 0x1.0p-53 * 2 - 1);
}

static void rmsnorm(const float *x, const float *w, float *y) {
  double s = 0;
  for (int i = 0; i < D; i++)
    s += (double)x[i] * x[i];
  float r = 1.0f / sqrtf((float)(s / D) + 1e-6f);
  for (int i = 0; i < D; i++)
    y[i] = x[i] * r * w[i];
}

static void matvec(const float *w, const float *x, float *y) {
  for (int r = 0; r < D; r++) {
    double s = 0;
    for (int c = 0; c < D; c++)
      s += (double)w[r * D + c] * x[c];
    y[r] = (float)s;
  }
}

static void attention(const float *q, const float *kc, const float *vc, int keys, float *o) {
  double score[MAXPOS], m = -INFINITY, sum = 0;
  for (int j = 0; j < keys; j++) {
    double s = 0;
    for (int i = 0; i < D; i++)
      s += (double)q[i] * kc[j * D + i];
    score[j] = s / sqrt((double)D);
    m = score[j] > m ? score[j] : m;
  }
  for (int j = 0; j < keys; j++)
    sum += score[j] = exp(score[j] - m);
  for (int i = 0; i < D; i++) {
    double s = 0;
    for (int j = 0; j < keys; j++)
      s += score[j] / sum * vc[j * D + i];
    o[i] = (float)s;
  }
}

/* ||a - b|| / ||b|| over n values; NaN anywhere gives infinity. */
static double rel_error(const float *a, const float *b, size_t n) {
  double num = 0, den = 0;
  for (size_t i = 0; i < n; i++) {
    if (isnan(a[i]))
      return INFINITY;
    num += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
    den += (double)b[i] * b[i];
  }
  return sqrt(num / (den ? den : 1));
}

int main(void) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    printf("decode_step: built; running it needs a GPU, and this machine has none\n");
    return 77;
  }
  rng = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32) ^ 0x9e3779b97f4a7c15u;
  printf("decode_step: seed %llu\n", (unsigned long long)rng);

  size_t nw = (size_t)LAYERS * D * D, nc = (size_t)LAYERS * MAXPOS * D;
  float *x = malloc(D * sizeof *x), *wn = malloc(LAYERS * D * sizeof *wn);
  float *w[4], *kc = malloc(nc * sizeof *kc), *vc = malloc(nc * sizeof *vc);
  for (int i = 0; i < D; i++)
    x[i] = uniform();
  for (int i = 0; i < LAYERS * D; i++)
    wn[i] = 1 + 0.1f * uniform();
  for (int m = 0; m < 4; m++) {
    w[m] = malloc(nw * sizeof *w[m]);
    for (size_t i = 0; i < nw; i++)
      w[m][i] = uniform() / sqrtf(D);
  }
  /* Rows the step has not written are NaN: reading one shows. */
  for (size_t i = 0; i < nc; i++)
    kc[i] = vc[i] = NAN;

  void *dx, *dwn, *dw[4], *dkc, *dvc;
  CUDA(cudaMalloc(&dx, D * sizeof *x));
  CUDA(cudaMalloc(&dwn, LAYERS * D * sizeof *wn));
  CUDA(cudaMalloc(&dkc, nc * sizeof *kc));
  CUDA(cudaMalloc(&dvc, nc * sizeof *vc));
  CUDA(cudaMemcpy(dx, x, D * sizeof *x, cudaMemcpyHostToDevice));
  CUDA(cudaMemcpy(dwn, wn, LAYERS * D * sizeof *wn, cudaMemcpyHostToDevice));
  CUDA(cudaMemcpy(dkc, kc, nc * sizeof *kc, cudaMemcpyHostToDevice));
  CUDA(cudaMemcpy(dvc, vc, nc * sizeof *vc, cudaMemcpyHostToDevice));
  for (int m = 0; m < 4; m++) {
    CUDA(cudaMalloc(&dw[m], nw * sizeof *w[m]));
    CUDA(cudaMemcpy(dw[m], w[m], nw * sizeof *w[m], cudaMemcpyHostToDevice));
  }

  decode_step_extern ext = {dx, dwn, dw[0], dw[1], dw[2], dw[3], dkc, dvc};
  decode_step *g;
  cudaStream_t stream;
  CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cgrt_options opt = CGRT_OPTIONS_INIT;
  opt.stream = stream; /* upload in the stream it runs in */
  CGRT(decode_step_create(&g, &ext, &opt));
  cudaEvent_t start, stop;
  CUDA(cudaEventCreate(&start));
  CUDA(cudaEventCreate(&stop));
  CUDA(cudaEventRecord(start, stream));
  for (uint32_t pos = 0; pos < STEPS; pos++) {
    CGRT(decode_step_set_pos(g, pos));
    CGRT(decode_step_set_nkeys(g, pos + 1));
    CGRT(decode_step_launch(g, stream));
  }
  CUDA(cudaEventRecord(stop, stream));
  CUDA(cudaStreamSynchronize(stream));
  float ms;
  CUDA(cudaEventElapsedTime(&ms, start, stop));
  uint32_t last_pos;
  CGRT(decode_step_get_pos(g, &last_pos));

  float *gx = malloc(D * sizeof *gx), *gkc = malloc(nc * sizeof *gkc), *gvc = malloc(nc * sizeof *gvc);
  CUDA(cudaMemcpy(gx, dx, D * sizeof *gx, cudaMemcpyDeviceToHost));
  CUDA(cudaMemcpy(gkc, dkc, nc * sizeof *gkc, cudaMemcpyDeviceToHost));
  CUDA(cudaMemcpy(gvc, dvc, nc * sizeof *gvc, cudaMemcpyDeviceToHost));

  /* The same 64 steps on the CPU. */
  float h[D], q[D], k[D], v[D], a[D], o[D];
  for (int pos = 0; pos < STEPS; pos++)
    for (int l = 0; l < LAYERS; l++) {
      float *lkc = kc + (size_t)l * MAXPOS * D, *lvc = vc + (size_t)l * MAXPOS * D;
      rmsnorm(x, wn + l * D, h);
      matvec(w[0] + (size_t)l * D * D, h, q);
      matvec(w[1] + (size_t)l * D * D, h, k);
      matvec(w[2] + (size_t)l * D * D, h, v);
      memcpy(lkc + (size_t)pos * D, k, sizeof k);
      memcpy(lvc + (size_t)pos * D, v, sizeof v);
      attention(q, lkc, lvc, pos + 1, a);
      matvec(w[3] + (size_t)l * D * D, a, o);
      for (int i = 0; i < D; i++)
        x[i] += o[i];
    }
  double ex = rel_error(gx, x, D), ek = 0, ev = 0;
  for (int l = 0; l < LAYERS; l++) {
    size_t off = (size_t)l * MAXPOS * D, n = (size_t)STEPS * D;
    double e1 = rel_error(gkc + off, kc + off, n), e2 = rel_error(gvc + off, vc + off, n);
    ek = e1 > ek ? e1 : ek;
    ev = e2 > ev ? e2 : ev;
  }
  int ok = ex < 1e-4 && ek < 1e-4 && ev < 1e-4 && last_pos == STEPS - 1;
  printf("decode_step: %d steps of %d layers (32 nodes a step) in %.1f us a step\n", STEPS,
         LAYERS, 1000.0 * ms / STEPS);
  printf("decode_step: relative error: x %.2e, k cache %.2e, v cache %.2e; pos after the last "
         "launch %u: %s\n",
         ex, ek, ev, last_pos, ok ? "OK" : "FAILED");

  decode_step_destroy(g);
  CUDA(cudaEventDestroy(start));
  CUDA(cudaEventDestroy(stop));
  CUDA(cudaStreamDestroy(stream));
  CUDA(cudaFree(dx));
  CUDA(cudaFree(dwn));
  CUDA(cudaFree(dkc));
  CUDA(cudaFree(dvc));
  for (int m = 0; m < 4; m++) {
    CUDA(cudaFree(dw[m]));
    free(w[m]);
  }
  free(x);
  free(wn);
  free(kc);
  free(vc);
  free(gx);
  free(gkc);
  free(gvc);
  return ok ? 0 : 1;
}
