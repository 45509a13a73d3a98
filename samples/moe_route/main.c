/* moe_route: a mixture-of-experts layer, one token a launch, from one
 * instantiated graph: the router kernel picks an expert on the device and
 * a switch runs that expert's feed-forward body.  Random tokens are fed
 * until every expert has been taken at least once (and at least 256 of
 * them); each launch's expert and output are checked on the CPU. */
#include "check.h"
#include "moe_route_graph.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

enum { E = 8, D = 256, F = 512, TOKENS = 256, MOST = 10000 };

static uint64_t rng;
static float uniform(float lo, float hi) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return lo + (hi - lo) * (float)((rng >> 40) * 0x1.0p-24);
}

/* The router as the kernel computes it: in order, rounded, uncontracted. */
static int route(const float *wr, const float *x) {
  float score[E];
  for (int e = 0; e < E; e++) {
    float s = 0;
    for (int j = 0; j < D; j++) {
      volatile float p = wr[e * D + j] * x[j]; /* no fused multiply-add */
      s = s + p;
    }
    score[e] = s;
  }
  int best = 0;
  for (int e = 1; e < E; e++)
    if (score[e] > score[best])
      best = e;
  return best;
}

/* y = w2[e] relu(w1[e] x), in double. */
static void expert_ffn(const float *w1, const float *w2, const float *x, int e, double *y) {
  double h[F];
  for (int i = 0; i < F; i++) {
    double s = 0;
    for (int j = 0; j < D; j++)
      s += (double)w1[((size_t)e * F + i) * D + j] * x[j];
    h[i] = s > 0 ? s : 0;
  }
  for (int i = 0; i < D; i++) {
    double s = 0;
    for (int j = 0; j < F; j++)
      s += (double)w2[((size_t)e * D + i) * F + j] * h[j];
    y[i] = s;
  }
}

int main(void) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    printf("moe_route: built; running it needs a GPU, and this machine has none\n");
    return 77;
  }
  rng = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32) ^ 0x9e3779b97f4a7c15u;
  printf("moe_route: seed %llu\n", (unsigned long long)rng);
  size_t n1 = (size_t)E * F * D, n2 = (size_t)E * D * F;
  float *wr = malloc(E * D * sizeof *wr), *w1 = malloc(n1 * sizeof *w1);
  float *w2 = malloc(n2 * sizeof *w2), x[D], y[D];
  double want[D];
  if (!wr || !w1 || !w2) {
    fprintf(stderr, "moe_route: out of memory\n");
    return 1;
  }
  for (int i = 0; i < E * D; i++)
    wr[i] = uniform(-1, 1);
  for (size_t i = 0; i < n1; i++)
    w1[i] = uniform(-1, 1) / sqrtf(D);
  for (size_t i = 0; i < n2; i++)
    w2[i] = uniform(-1, 1) / sqrtf(F);
  float *dx, *dy, *dwr, *dw1, *dw2;
  CUDA(cudaMalloc((void **)&dx, sizeof x));
  CUDA(cudaMalloc((void **)&dy, sizeof y));
  CUDA(cudaMalloc((void **)&dwr, E * D * sizeof *wr));
  CUDA(cudaMalloc((void **)&dw1, n1 * sizeof *w1));
  CUDA(cudaMalloc((void **)&dw2, n2 * sizeof *w2));
  CUDA(cudaMemcpy(dwr, wr, E * D * sizeof *wr, cudaMemcpyHostToDevice));
  CUDA(cudaMemcpy(dw1, w1, n1 * sizeof *w1, cudaMemcpyHostToDevice));
  CUDA(cudaMemcpy(dw2, w2, n2 * sizeof *w2, cudaMemcpyHostToDevice));
  moe_extern ext = {dx, dy, dwr, dw1, dw2};
  moe *g;
  CGRT(moe_create(&g, &ext, NULL));

  int taken[E] = {0}, wrong = 0, tokens = 0, all = 0;
  double worst = 0;
  while (tokens < MOST && (tokens < TOKENS || !all)) {
    for (int j = 0; j < D; j++)
      x[j] = uniform(-1, 1);
    CUDA(cudaMemcpy(dx, x, sizeof x, cudaMemcpyHostToDevice));
    CUDA(cudaMemset(dy, 0xff, sizeof y)); /* NaN: an expert that did not run shows */
    CGRT(moe_launch(g, 0));
    uint32_t got;
    CGRT(moe_get_expert(g, &got)); /* waits for the launch */
    CUDA(cudaMemcpy(y, dy, sizeof y, cudaMemcpyDeviceToHost));
    int e = route(wr, x);
    expert_ffn(w1, w2, x, e, want);
    double err = 0, norm = 0;
    for (int i = 0; i < D; i++) {
      err = fmax(err, fabs(y[i] - want[i]));
      norm = fmax(norm, fabs(want[i]));
    }
    double rel = err / norm;
    if ((int)got != e || !(rel < 1e-5)) {
      if (wrong < 10)
        printf("token %d: expert %u (CPU: %d), relative error %.1e\n", tokens, got, e, rel);
      wrong++;
    }
    worst = fmax(worst, rel);
    taken[e]++;
    tokens++;
    all = 1;
    for (int k = 0; k < E; k++)
      all &= taken[k] > 0;
  }
  moe_destroy(g);
  printf("moe_route: %d tokens; experts taken:", tokens);
  for (int k = 0; k < E; k++)
    printf(" %d", taken[k]);
  printf("; largest relative error %.1e\n", worst);
  if (!all)
    printf("moe_route: some expert was never taken\n");
  CUDA(cudaFree(dx));
  CUDA(cudaFree(dy));
  CUDA(cudaFree(dwr));
  CUDA(cudaFree(dw1));
  CUDA(cudaFree(dw2));
  free(wr);
  free(w1);
  free(w2);
  int ok = !wrong && all;
  printf("moe_route: %s\n", ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
