/* generate: greedy generation on the device.  The `generate` graph makes up
 * to `limit` tokens in one launch (a `while` on the device: the decode step,
 * a vocabulary projection, an argmax that writes the next token and
 * advances pos, nkeys and count); the `step` graph is one iteration of it,
 * launched once a token from the host.  Checked here:
 *   - the device loop and the host-driven loop make the same tokens, token
 *     for token, and the same KV caches, bit for bit;
 *   - the first tokens against the model on the CPU (in double; a token
 *     whose two best logits are too close to call is where that stops);
 *   - the loop stops after making `eos`, at `limit`, and at once when the
 *     prompt is `eos`.
 * Then it times N tokens both ways (bench/generate.py reads `--bench`):
 * the median of ROUNDS rounds after 3 untimed, or quick (CGC_SAMPLE_QUICK=1,
 * as under compute-sanitizer) one round. */
#include "check.h"
#include "generate_graph.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { D = 256, MAXPOS = 128, LAYERS = 4, V = 1024, N = 64, CPU_TOKENS = 16, PROMPT = 7 };

static uint64_t rng = 0x6e6572617465u;
static float uniform(void) { /* in [-1, 1) */
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (float)((rng >> 11) * 0x1.0p-53 * 2 - 1);
}

typedef struct Model {
  float *emb, *wn, *wq, *wk, *wv, *wo, *wf, *wout; /* host */
} Model;

static float *random_host(size_t n, float scale, float offset) {
  float *p = malloc(n * sizeof *p);
  if (!p) {
    fprintf(stderr, "generate: out of host memory\n");
    exit(1);
  }
  for (size_t i = 0; i < n; i++)
    p[i] = offset + scale * uniform();
  return p;
}

static void *to_device(const void *h, size_t bytes) {
  void *d;
  CUDA(cudaMalloc(&d, bytes));
  CUDA(cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice));
  return d;
}

static void *poisoned(size_t bytes) { /* NaN as f32, 0xffffffff as u32 */
  void *d;
  CUDA(cudaMalloc(&d, bytes));
  CUDA(cudaMemset(d, 0xff, bytes));
  return d;
}

/* ---- the model on the CPU, in double ---- */

static void rmsnorm(const double *x, const float *w, double *y) {
  double s = 0;
  for (int i = 0; i < D; i++)
    s += x[i] * x[i];
  double r = 1 / sqrt(s / D + 1e-6);
  for (int i = 0; i < D; i++)
    y[i] = x[i] * r * w[i];
}

static void matvec(const float *w, const double *x, double *y, int rows) {
  for (int r = 0; r < rows; r++) {
    double s = 0;
    for (int c = 0; c < D; c++)
      s += w[(size_t)r * D + c] * x[c];
    y[r] = s;
  }
}

/* Tokens made from the prompt, up to `max`, into out; returns how many
 * were decided clearly (the best logit ahead of the next by more than
 * 1e-3 of their size, which float rounding on the GPU cannot reorder). */
static int cpu_tokens(const Model *m, int max, int *out) {
  static double kc[LAYERS][MAXPOS][D], vc[LAYERS][MAXPOS][D];
  double x[D], h[D], q[D], a[D], o[D], logits[V], score[MAXPOS];
  int token = PROMPT;
  for (int pos = 0; pos < max; pos++) {
    for (int i = 0; i < D; i++)
      x[i] = m->emb[(size_t)token * D + i];
    for (int l = 0; l < LAYERS; l++) {
      size_t wl = (size_t)l * D * D;
      rmsnorm(x, m->wn + l * D, h);
      matvec(m->wq + wl, h, q, D);
      matvec(m->wk + wl, h, kc[l][pos], D);
      matvec(m->wv + wl, h, vc[l][pos], D);
      double mx = -INFINITY, sum = 0;
      for (int j = 0; j <= pos; j++) {
        double s = 0;
        for (int i = 0; i < D; i++)
          s += q[i] * kc[l][j][i];
        score[j] = s / sqrt((double)D);
        mx = score[j] > mx ? score[j] : mx;
      }
      for (int j = 0; j <= pos; j++)
        sum += score[j] = exp(score[j] - mx);
      for (int i = 0; i < D; i++) {
        double s = 0;
        for (int j = 0; j <= pos; j++)
          s += score[j] / sum * vc[l][j][i];
        a[i] = s;
      }
      matvec(m->wo + wl, a, o, D);
      for (int i = 0; i < D; i++)
        x[i] += o[i];
    }
    rmsnorm(x, m->wf, h);
    matvec(m->wout, h, logits, V);
    int best = 0, second = -1;
    for (int i = 1; i < V; i++)
      if (logits[i] > logits[best]) {
        second = best;
        best = i;
      } else if (second < 0 || logits[i] > logits[second]) {
        second = i;
      }
    if (logits[best] - logits[second] <= 1e-3 * fabs(logits[best]))
      return pos; /* this one may go either way on the GPU: compare the ones before */
    out[pos] = token = best;
  }
  return max;
}

/* ---- the GPU ---- */

typedef struct Run {
  void *kc, *vc, *tokens; /* the loop's own caches and tokens */
} Run;

static void run_create(Run *r) {
  r->kc = poisoned((size_t)LAYERS * MAXPOS * D * 4);
  r->vc = poisoned((size_t)LAYERS * MAXPOS * D * 4);
  r->tokens = poisoned(MAXPOS * 4);
}

static void run_destroy(Run *r) {
  CUDA(cudaFree(r->kc));
  CUDA(cudaFree(r->vc));
  CUDA(cudaFree(r->tokens));
}

static void *dev_emb, *dev_wn, *dev_wq, *dev_wk, *dev_wv, *dev_wo, *dev_wf, *dev_wout;

/* The device loop from the prompt: up to `limit` tokens, stopping after
 * `eos`; returns count (read back, which waits for the launch). */
static uint32_t device_loop(generate *g, cudaStream_t s, uint32_t limit, uint32_t eos) {
  CGRT(generate_set_token(g, PROMPT));
  CGRT(generate_set_pos(g, 0));
  CGRT(generate_set_nkeys(g, 1));
  CGRT(generate_set_count(g, 0));
  CGRT(generate_set_limit(g, limit));
  CGRT(generate_set_eos(g, eos));
  CGRT(generate_launch(g, s));
  uint32_t count;
  CGRT(generate_get_count(g, &count));
  return count;
}

static void host_loop_start(step *g) {
  CGRT(step_set_token(g, PROMPT));
  CGRT(step_set_pos(g, 0));
  CGRT(step_set_nkeys(g, 1));
  CGRT(step_set_count(g, 0));
}

static int cmp_float(const void *a, const void *b) {
  float x = *(const float *)a, y = *(const float *)b;
  return (x > y) - (x < y);
}

enum { ROUNDS = 51 };

/* us a token of f(), run ROUNDS times between events (after 3 untimed),
 * the median; quick, once. */
static float time_rounds(cudaStream_t s, void (*f)(void *, cudaStream_t), void *arg) {
  cudaEvent_t e0, e1;
  float t[ROUNDS];
  const int quick = sample_quick(), rounds = quick ? 1 : ROUNDS;
  CUDA(cudaEventCreate(&e0));
  CUDA(cudaEventCreate(&e1));
  for (int w = 0; w < (quick ? 0 : 3); w++)
    f(arg, s);
  for (int r = 0; r < rounds; r++) {
    CUDA(cudaEventRecord(e0, s));
    f(arg, s);
    CUDA(cudaEventRecord(e1, s));
    CUDA(cudaEventSynchronize(e1));
    CUDA(cudaEventElapsedTime(&t[r], e0, e1));
    t[r] *= 1000.0f / N;
  }
  CUDA(cudaEventDestroy(e0));
  CUDA(cudaEventDestroy(e1));
  qsort(t, rounds, sizeof *t, cmp_float);
  return t[rounds / 2];
}

static void one_launch(void *arg, cudaStream_t s) { /* N tokens, one launch */
  generate *g = arg;
  CGRT(generate_set_token(g, PROMPT));
  CGRT(generate_set_pos(g, 0));
  CGRT(generate_set_nkeys(g, 1));
  CGRT(generate_set_count(g, 0));
  CGRT(generate_set_limit(g, N));
  CGRT(generate_set_eos(g, V));
  CGRT(generate_launch(g, s));
}

static void n_launches(void *arg, cudaStream_t s) { /* N launches, queued */
  step *g = arg;
  host_loop_start(g);
  for (int i = 0; i < N; i++)
    CGRT(step_launch(g, s));
}

static void n_launches_read(void *arg, cudaStream_t s) { /* N launches, each token read */
  step *g = arg;
  host_loop_start(g);
  for (int i = 0; i < N; i++) {
    uint32_t t;
    CGRT(step_launch(g, s));
    CGRT(step_get_token(g, &t)); /* waits for the launch */
  }
}

int main(int argc, char **argv) {
  int bench = argc > 1 && !strcmp(argv[1], "--bench");
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    printf("generate: built; running it needs a GPU, and this machine has none\n");
    return 77;
  }
  const float sd = sqrtf(3.0f / D);
  Model m = {random_host((size_t)V * D, 1, 0),          random_host(LAYERS * D, 0.1f, 1),
             random_host((size_t)LAYERS * D * D, sd, 0), random_host((size_t)LAYERS * D * D, sd, 0),
             random_host((size_t)LAYERS * D * D, sd, 0), random_host((size_t)LAYERS * D * D, sd, 0),
             random_host(D, 0.1f, 1),                   random_host((size_t)V * D, sd, 0)};
  dev_emb = to_device(m.emb, (size_t)V * D * 4);
  dev_wn = to_device(m.wn, LAYERS * D * 4);
  dev_wq = to_device(m.wq, (size_t)LAYERS * D * D * 4);
  dev_wk = to_device(m.wk, (size_t)LAYERS * D * D * 4);
  dev_wv = to_device(m.wv, (size_t)LAYERS * D * D * 4);
  dev_wo = to_device(m.wo, (size_t)LAYERS * D * D * 4);
  dev_wf = to_device(m.wf, D * 4);
  dev_wout = to_device(m.wout, (size_t)V * D * 4);
  Run dl, hl;
  run_create(&dl);
  run_create(&hl);
  CUDA(cudaDeviceSynchronize()); /* before the non-blocking stream reads any of it */

  cudaStream_t s;
  CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cgrt_options opt = CGRT_OPTIONS_INIT;
  opt.stream = s;
  generate_extern ge = {dev_emb, dev_wn, dev_wq, dev_wk, dev_wv, dev_wo, dev_wf, dev_wout,
                        dl.kc,   dl.vc,  dl.tokens};
  step_extern se = {dev_emb, dev_wn, dev_wq, dev_wk, dev_wv, dev_wo, dev_wf, dev_wout,
                    hl.kc,   hl.vc,  hl.tokens};
  generate *g;
  step *st;
  CGRT(generate_create(&g, &ge, &opt));
  CGRT(step_create(&st, &se, &opt));

  int ok = 1;
  /* N tokens on the device, in one launch. */
  uint32_t count = device_loop(g, s, N, V);
  uint32_t dtok[MAXPOS], htok[MAXPOS], again[MAXPOS];
  CUDA(cudaMemcpy(dtok, dl.tokens, sizeof dtok, cudaMemcpyDeviceToHost));
  if (count != N) {
    fprintf(stderr, "generate: the device loop made %u tokens, not %d\n", count, N);
    ok = 0;
  }
  /* The same from the host, a launch a token, each token read back. */
  host_loop_start(st);
  int differ = -1;
  for (int i = 0; i < N; i++) {
    CGRT(step_launch(st, s));
    CGRT(step_get_token(st, &htok[i]));
    if (differ < 0 && htok[i] != dtok[i])
      differ = i;
  }
  if (differ >= 0) {
    fprintf(stderr, "generate: token %d: device loop %u, host loop %u\n", differ, dtok[differ],
            htok[differ]);
    ok = 0;
  }
  uint32_t htok_dev[MAXPOS];
  CUDA(cudaMemcpy(htok_dev, hl.tokens, sizeof htok_dev, cudaMemcpyDeviceToHost));
  if (memcmp(htok_dev, dtok, sizeof dtok)) { /* also: nothing past N written */
    fprintf(stderr, "generate: the two loops' token buffers differ\n");
    ok = 0;
  }
  size_t cache = (size_t)LAYERS * MAXPOS * D * 4;
  float *c1 = malloc(cache), *c2 = malloc(cache);
  const char *names[2] = {"K", "V"};
  void *caches[2][2] = {{dl.kc, hl.kc}, {dl.vc, hl.vc}};
  for (int c = 0; c < 2; c++) {
    CUDA(cudaMemcpy(c1, caches[c][0], cache, cudaMemcpyDeviceToHost));
    CUDA(cudaMemcpy(c2, caches[c][1], cache, cudaMemcpyDeviceToHost));
    if (memcmp(c1, c2, cache)) {
      fprintf(stderr, "generate: the two loops' %s caches differ\n", names[c]);
      ok = 0;
    }
  }
  free(c1);
  free(c2);

  /* The first tokens against the model on the CPU. */
  int want[CPU_TOKENS];
  int clear = cpu_tokens(&m, CPU_TOKENS, want);
  for (int i = 0; i < clear; i++)
    if ((int)dtok[i] != want[i]) {
      fprintf(stderr, "generate: token %d is %u; the CPU's is %d\n", i, dtok[i], want[i]);
      ok = 0;
      break;
    }
  int distinct = 0;
  for (int i = 0; i < N; i++) {
    int seen = 0;
    for (int j = 0; j < i; j++)
      seen |= dtok[j] == dtok[i];
    distinct += !seen;
  }

  /* Stopping: after making eos (the first time the token at N / 2 was
   * made), at limit, and before anything when the prompt is eos. */
  uint32_t eos = dtok[N / 2], first = 0;
  while (dtok[first] != eos)
    first++;
  struct {
    uint32_t limit, eos, want;
    const char *what;
  } stops[] = {{N, eos, first + 1, "eos"}, {5, V, 5, "limit 5"}, {N, PROMPT, 0, "prompt is eos"}};
  for (size_t i = 0; i < sizeof stops / sizeof *stops; i++) {
    CUDA(cudaMemset(dl.tokens, 0xff, MAXPOS * 4));
    count = device_loop(g, s, stops[i].limit, stops[i].eos);
    CUDA(cudaMemcpy(again, dl.tokens, sizeof again, cudaMemcpyDeviceToHost));
    int same = !memcmp(again, dtok, count * sizeof *again);
    int untouched = count == MAXPOS || again[count] == 0xffffffffu;
    if (count != stops[i].want || !same || !untouched) {
      fprintf(stderr, "generate: stop at %s: %u tokens (want %u), %s, %s\n", stops[i].what, count,
              stops[i].want, same ? "the same tokens" : "OTHER tokens",
              untouched ? "none past them" : "MORE written past them");
      ok = 0;
    }
  }

  /* Each way's last round made N tokens, or its time means nothing. */
  float us_loop = time_rounds(s, one_launch, g);
  uint32_t made_loop, made_steps, made_read;
  CGRT(generate_get_count(g, &made_loop));
  float us_steps = time_rounds(s, n_launches, st);
  CGRT(step_get_count(st, &made_steps));
  float us_read = time_rounds(s, n_launches_read, st);
  CGRT(step_get_count(st, &made_read));
  if (made_loop != N || made_steps != N || made_read != N) {
    fprintf(stderr, "generate: timed rounds made %u, %u and %u tokens, not %d\n", made_loop,
            made_steps, made_read, N);
    ok = 0;
  }
  if (bench && ok) {
    printf("section,case,way,metric,value\n");
    printf("generate,%d_tokens,device_loop,us_per_token,%.4f\n", N, us_loop);
    printf("generate,%d_tokens,step_launches,us_per_token,%.4f\n", N, us_steps);
    printf("generate,%d_tokens,step_launches_read,us_per_token,%.4f\n", N, us_read);
  } else {
    printf("generate: %d tokens (%d distinct) from one launch, the same as %d launches from the "
           "host, token for token, caches bit for bit; the first %d against the CPU; stops at "
           "eos, limit and an eos prompt. %.1f us a token (%.0f tokens/s) against %.1f with a "
           "launch a token and %.1f reading each token back: %s\n",
           N, distinct, N, clear, us_loop, 1e6 / us_loop, us_steps, us_read, ok ? "OK" : "FAILED");
  }

  generate_destroy(g);
  step_destroy(st);
  CUDA(cudaStreamDestroy(s));
  run_destroy(&dl);
  run_destroy(&hl);
  void *dev[] = {dev_emb, dev_wn, dev_wq, dev_wk, dev_wv, dev_wo, dev_wf, dev_wout};
  for (size_t i = 0; i < sizeof dev / sizeof *dev; i++)
    CUDA(cudaFree(dev[i]));
  float *host[] = {m.emb, m.wn, m.wq, m.wk, m.wv, m.wo, m.wf, m.wout};
  for (size_t i = 0; i < sizeof host / sizeof *host; i++)
    free(host[i]);
  return ok ? 0 : 1;
}
