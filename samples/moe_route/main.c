/* moe_route: a mixture-of-experts layer, one token a launch, from one
 * instantiated graph on the kernel library: the library's router picks an
 * expert on the device (top 1 of 8, into the scalar `expert`) and a switch
 * runs that expert's SwiGLU feed-forward body.  Random tokens are fed
 * until every expert has been taken at least once (and at least 256 of
 * them); each launch's expert, its routing weight and its output are
 * checked against the model on the CPU in double (bf16 roundings where the
 * model has them).  The GPU sums the router's logits in f32 in its own
 * order, so where two experts' logits are closer than MARGIN either choice
 * is accepted (and counted); the output is then checked against the
 * chosen expert's.  A wrong expert is off by far more than the tolerance. */
#include "check.h"
#include "moe_route_graph.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { E = 8, D = 256, F = 512, TOKENS = 256, MOST = 10000 };

/* Logits within MARGIN of the best are a tie that the f32 sums may break
 * either way; the output's relative error must stay under TOLERANCE. */
static const double MARGIN = 2e-3, TOLERANCE = 1e-2;

static uint64_t rng;
static float uniform(float lo, float hi) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return lo + (hi - lo) * (float)((rng >> 40) * 0x1.0p-24);
}

/* bf16 bits <-> float, rounding to nearest even. */
static uint16_t to_bf16(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  if ((u & 0x7fffffffu) > 0x7f800000u)
    return 0x7fc0; /* NaN */
  u += 0x7fffu + ((u >> 16) & 1u);
  return (uint16_t)(u >> 16);
}

static double from_bf16(uint16_t b) {
  uint32_t u = (uint32_t)b << 16;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

static double round_bf16(double v) { return from_bf16(to_bf16((float)v)); }

/* n random bf16 values, uniform in +-scale around `mid`. */
static void fill(uint16_t *w, size_t n, float mid, float scale) {
  for (size_t i = 0; i < n; i++)
    w[i] = to_bf16(mid + scale * uniform(-1, 1));
}

/* The model's RMSNorm, bf16(g * bf16(x / rms(x))). */
static void rmsnorm(const uint16_t *x, const uint16_t *g, double *h) {
  double ss = 0;
  for (int i = 0; i < D; i++)
    ss += from_bf16(x[i]) * from_bf16(x[i]);
  const double r = 1 / sqrt(ss / D + 1e-6);
  for (int i = 0; i < D; i++)
    h[i] = round_bf16(round_bf16(from_bf16(x[i]) * r) * from_bf16(g[i]));
}

/* y = W_down[e] (silu(W_gate[e] h) * W_up[e] h), every linear layer's
 * output and the SwiGLU's two steps rounded to bf16, in double. */
static void expert_ffn(const uint16_t *wgu, const uint16_t *wd, const double *h, int e, double *y) {
  double act[F];
  for (int i = 0; i < F; i++) {
    double gate = 0, up = 0;
    for (int j = 0; j < D; j++) {
      gate += from_bf16(wgu[((size_t)e * 2 * F + i) * D + j]) * h[j];
      up += from_bf16(wgu[((size_t)e * 2 * F + F + i) * D + j]) * h[j];
    }
    gate = round_bf16(gate), up = round_bf16(up);
    act[i] = round_bf16(round_bf16(gate / (1 + exp(-gate))) * up);
  }
  for (int i = 0; i < D; i++) {
    double s = 0;
    for (int j = 0; j < F; j++)
      s += from_bf16(wd[((size_t)e * D + i) * F + j]) * act[j];
    y[i] = round_bf16(s);
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
  const size_t nr = (size_t)E * D, ngu = (size_t)E * 2 * F * D, nd = (size_t)E * D * F;
  uint16_t *wr = malloc(nr * sizeof *wr), *wgu = malloc(ngu * sizeof *wgu);
  uint16_t *wd = malloc(nd * sizeof *wd), g[D], x[D], y[D];
  if (!wr || !wgu || !wd) {
    fprintf(stderr, "moe_route: out of memory\n");
    return 1;
  }
  fill(g, D, 1.0f, 0.1f);
  fill(wr, nr, 0.0f, sqrtf(3.0f / D));
  fill(wgu, ngu, 0.0f, sqrtf(3.0f / D));
  fill(wd, nd, 0.0f, sqrtf(3.0f / F));
  void *dx, *dy, *dg, *dwr, *dwgu, *dwd;
  CUDA(cudaMalloc(&dx, sizeof x));
  CUDA(cudaMalloc(&dy, sizeof y));
  CUDA(cudaMalloc(&dg, sizeof g));
  CUDA(cudaMalloc(&dwr, nr * sizeof *wr));
  CUDA(cudaMalloc(&dwgu, ngu * sizeof *wgu));
  CUDA(cudaMalloc(&dwd, nd * sizeof *wd));
  CUDA(cudaMemcpy(dg, g, sizeof g, cudaMemcpyHostToDevice));
  CUDA(cudaMemcpy(dwr, wr, nr * sizeof *wr, cudaMemcpyHostToDevice));
  CUDA(cudaMemcpy(dwgu, wgu, ngu * sizeof *wgu, cudaMemcpyHostToDevice));
  CUDA(cudaMemcpy(dwd, wd, nd * sizeof *wd, cudaMemcpyHostToDevice));
  moe_extern ext = {dx, dy, dg, dwr, dwgu, dwd};
  moe *gr;
  CGRT(moe_create(&gr, &ext, NULL));

  int taken[E] = {0}, wrong = 0, ties = 0, tokens = 0, all = 0;
  double worst = 0, worst_weight = 0, h[D], logit[E], want[D], got_y[D];
  while (tokens < MOST && (tokens < TOKENS || !all)) {
    fill(x, D, 0.0f, 1.0f);
    CUDA(cudaMemcpy(dx, x, sizeof x, cudaMemcpyHostToDevice));
    CUDA(cudaMemset(dy, 0xff, sizeof y)); /* NaN: an expert that did not run shows */
    CGRT(moe_launch(gr, 0));
    uint32_t got;
    float weight;
    CGRT(moe_get_expert(gr, &got)); /* waits for the launch */
    CUDA(cudaMemcpy(y, dy, sizeof y, cudaMemcpyDeviceToHost));
    CUDA(cudaMemcpy(&weight, moe_buffer_weight(gr), sizeof weight, cudaMemcpyDeviceToHost));

    /* The router on the CPU: logits, the best (lowest index on a tie),
     * softmax. */
    rmsnorm(x, g, h);
    int best = 0;
    for (int e = 0; e < E; e++) {
      double s = 0;
      for (int j = 0; j < D; j++)
        s += from_bf16(wr[(size_t)e * D + j]) * h[j];
      logit[e] = s;
      if (s > logit[best])
        best = e;
    }
    double sum = 0;
    for (int e = 0; e < E; e++)
      sum += exp(logit[e] - logit[best]);
    int near = 0; /* experts other than the best within MARGIN of it */
    for (int e = 0; e < E; e++)
      near += e != best && logit[e] >= logit[best] - MARGIN;
    ties += near > 0;
    int chosen = got < E && logit[got] >= logit[best] - MARGIN ? (int)got : -1;

    double rel = INFINITY, werr = INFINITY;
    if (chosen >= 0) {
      expert_ffn(wgu, wd, h, chosen, want);
      double num = 0, den = 0;
      for (int i = 0; i < D; i++) {
        got_y[i] = from_bf16(y[i]);
        num += (got_y[i] - want[i]) * (got_y[i] - want[i]);
        den += want[i] * want[i];
      }
      rel = isnan(num) ? INFINITY : sqrt(num / (den ? den : 1));
      werr = fabs(weight - exp(logit[chosen] - logit[best]) / sum);
      taken[chosen]++;
    }
    if (chosen < 0 || !(rel < TOLERANCE) || !(werr < 1e-3)) {
      if (wrong < 10)
        printf("token %d: expert %u (CPU: %d), weight off by %.1e, relative error %.1e\n", tokens,
               got, best, werr, rel);
      wrong++;
    }
    worst = fmax(worst, rel);
    worst_weight = fmax(worst_weight, werr);
    tokens++;
    all = 1;
    for (int k = 0; k < E; k++)
      all &= taken[k] > 0;
  }
  moe_destroy(gr);
  printf("moe_route: %d tokens (%d with two logits within %.0e); experts taken:", tokens, ties,
         MARGIN);
  for (int k = 0; k < E; k++)
    printf(" %d", taken[k]);
  printf("; largest relative error %.1e, routing weight off by %.1e\n", worst, worst_weight);
  if (!all)
    printf("moe_route: some expert was never taken\n");
  void *dev[] = {dx, dy, dg, dwr, dwgu, dwd};
  for (size_t i = 0; i < sizeof dev / sizeof *dev; i++)
    CUDA(cudaFree(dev[i]));
  free(wr);
  free(wgu);
  free(wd);
  int ok = !wrong && all;
  printf("moe_route: %s\n", ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
