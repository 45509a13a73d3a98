/* bench.c: the same kernels driven as stream launches, as a stream-captured
 * graph, as a hand-written explicit graph and as cgc's graph, timed in one
 * run.  Prints CSV rows "section,case,way,metric,value" on stdout.
 *
 * Latencies are host-clock times of launch and wait (cudaStreamSynchronize),
 * after warm-up, the median of many runs. */
#include "batch_graph.h"
#include "decode_plain_graph.h"
#include "decode_step_graph.h"
#include "graphs_graph.h"
#include "modules_graph.h"
#include "check.h"
#include "cgrt_testing.h"
#include "gpu.h"
#include "timing.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { N = 256 };

/* The kernels' host stubs, for stream launches and hand-written graphs. */
extern void tick(void), rmsnorm(void), matvec(void), kv_store(void), attention(void), add(void);

static dim3 dim3_of(unsigned x) {
  dim3 d = {x, 1, 1};
  return d;
}

static const void *fn(void (*f)(void)) {
  const void *p;
  memcpy(&p, &f, sizeof p);
  return p;
}

typedef void (*Step)(void *ctx, cudaStream_t s);

/* A way that is one of cgc's graphs, g, launched by its launch function. */
typedef struct Graph {
  void *g;
  cgrt_status (*launch)(void *, cudaStream_t);
} Graph;

static void graph_step(void *ctx, cudaStream_t s) {
  Graph *w = ctx;
  CGRT(w->launch(w->g, s));
}

/* Times several ways of one step in turn, round after round and in a new
 * random order each round, so that drift in clocks or load and the effect
 * of what ran just before fall on all alike; medians into out[]. */
static void time_interleaved(int nways, const Step *f, void *const *ctx, cudaStream_t s,
                             int reps, double *out) {
  double *t = malloc((size_t)reps * nways * sizeof *t);
  for (int w = 0; w < nways; w++)
    for (int i = 0; i < 20; i++) {
      f[w](ctx[w], s);
      CUDA(cudaStreamSynchronize(s));
    }
  uint64_t rng = BENCH_SEED;
  int order[16];
  for (int w = 0; w < nways; w++)
    order[w] = w;
  for (int i = 0; i < reps; i++) {
    bench_shuffle(order, nways, &rng);
    for (int k = 0; k < nways; k++) {
      int w = order[k];
      double t0 = bench_now_us();
      f[w](ctx[w], s);
      CUDA(cudaStreamSynchronize(s));
      t[w * reps + i] = bench_now_us() - t0;
    }
  }
  for (int w = 0; w < nways; w++)
    out[w] = bench_median(t + w * reps, reps);
  free(t);
}

/* The host time of a launch of each of nways ways, `iters` launches at a
 * time, the ways taking turns in a rotating order for `rounds` rounds: the
 * median of each. */
static void host_interleaved(int nways, const Step *f, void *const *ctx, cudaStream_t s,
                             int rounds, int iters, double *out) {
  double *t = malloc((size_t)rounds * nways * sizeof *t);
  if (!t) {
    fprintf(stderr, "bench: out of memory\n");
    exit(1);
  }
  for (int r = 0; r < rounds; r++)
    for (int i = 0; i < nways; i++) {
      int w = (i + r) % nways;
      CUDA(cudaStreamSynchronize(s));
      double t0 = bench_now_us();
      for (int k = 0; k < iters; k++)
        f[w](ctx[w], s);
      t[w * rounds + r] = (bench_now_us() - t0) / iters;
      CUDA(cudaStreamSynchronize(s));
    }
  for (int w = 0; w < nways; w++)
    out[w] = bench_median(t + w * rounds, rounds);
  free(t);
}

/* Times f(ctx) followed by a wait on `s`: warm-up, then the median. */
static double time_step(Step f, void *ctx, cudaStream_t s, int reps) {
  double *t = malloc((size_t)reps * sizeof *t);
  for (int i = 0; i < 20; i++) {
    f(ctx, s);
    CUDA(cudaStreamSynchronize(s));
  }
  for (int i = 0; i < reps; i++) {
    double t0 = bench_now_us();
    f(ctx, s);
    CUDA(cudaStreamSynchronize(s));
    t[i] = bench_now_us() - t0;
  }
  double m = bench_median(t, reps);
  free(t);
  return m;
}

/* ---- chains of small kernels ---- */

typedef struct Chain {
  int n;
  float *x;
  uint32_t len;
  void *args[2];
  cudaGraphExec_t exec;
  void *cgc;
  cgrt_status (*cgc_launch)(void *, cudaStream_t);
} Chain;

static void chain_stream(void *ctx, cudaStream_t s) {
  Chain *c = ctx;
  for (int i = 0; i < c->n; i++)
    CUDA(cudaLaunchKernel(fn(tick), dim3_of(1), dim3_of(N), c->args, 0, s));
}

static void graph_launch(void *ctx, cudaStream_t s) {
  Chain *c = ctx;
  CUDA(cudaGraphLaunch(c->exec, s));
}

static void chain_cgc(void *ctx, cudaStream_t s) {
  Chain *c = ctx;
  CGRT(c->cgc_launch(c->cgc, s));
}

static cudaGraphExec_t instantiate(cudaGraph_t g, cudaStream_t s) {
  cudaGraphExec_t e;
  CUDA(cudaGraphInstantiate(&e, g, 0));
  CUDA(cudaGraphUpload(e, s));
  CUDA(cudaStreamSynchronize(s));
  return e;
}

static cudaGraphExec_t capture(Step f, void *ctx, cudaStream_t s, cudaGraph_t *graph) {
  CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  f(ctx, s);
  CUDA(cudaStreamEndCapture(s, graph));
  return instantiate(*graph, s);
}

/* A chain of n tick nodes, each depending on the one before, by hand. */
static cudaGraph_t hand_chain(Chain *c) {
  cudaGraph_t g;
  CUDA(cudaGraphCreate(&g, 0));
  cudaGraphNode_t prev = NULL, node;
  struct cudaKernelNodeParams p = {0};
  p.func = (void *)fn(tick);
  p.gridDim = dim3_of(1);
  p.blockDim = dim3_of(N);
  p.kernelParams = c->args;
  for (int i = 0; i < c->n; i++) {
    CUDA(cudaGraphAddKernelNode(&node, g, prev ? &prev : NULL, prev ? 1 : 0, &p));
    prev = node;
  }
  return g;
}

#define CHAIN_CASE(k)                                                                      \
  static cgrt_status launch_chain##k(void *g, cudaStream_t s) { return chain##k##_launch(g, s); }
CHAIN_CASE(1)
CHAIN_CASE(33)
CHAIN_CASE(1000)

/* The ways a chain is driven.  Every way works on the same buffer, the one
 * in cgc's allocation: on the H200 where a 1 KiB buffer lies moved a chain's
 * time by up to 11% a node, which would swamp the differences between the
 * ways.  "hand_upload0" is the hand-written graph uploaded in the legacy
 * default stream instead of the stream it runs in. */
static void bench_chains(cudaStream_t s) {
  static const int sizes[] = {1, 33, 1000};
  cgrt_status (*launches[])(void *, cudaStream_t) = {launch_chain1, launch_chain33,
                                                    launch_chain1000};
  static const char *const ways[] = {"stream", "capture", "hand", "cgc", "hand_upload0"};
  enum { WAYS = 5 };
  cgrt_options in_s = CGRT_OPTIONS_INIT;
  in_s.stream = s;
  for (int k = 0; k < 3; k++) {
    Chain c[WAYS];
    void *g = NULL;
    float *x = NULL;
    switch (k) {
    case 0: CGRT(chain1_create((chain1 **)&g, &in_s)); x = chain1_buffer_x(g); break;
    case 1: CGRT(chain33_create((chain33 **)&g, &in_s)); x = chain33_buffer_x(g); break;
    default: CGRT(chain1000_create((chain1000 **)&g, &in_s)); x = chain1000_buffer_x(g); break;
    }
    for (int w = 0; w < WAYS; w++) {
      c[w] = (Chain){.n = sizes[k], .len = N, .x = x, .cgc = g, .cgc_launch = launches[k]};
      c[w].args[0] = &c[w].x;
      c[w].args[1] = &c[w].len;
    }
    cudaGraph_t graphs[3];
    c[1].exec = capture(chain_stream, &c[1], s, &graphs[0]);
    graphs[1] = hand_chain(&c[2]);
    c[2].exec = instantiate(graphs[1], s);
    graphs[2] = hand_chain(&c[4]);
    c[4].exec = instantiate(graphs[2], 0);
    Step f[WAYS] = {chain_stream, graph_launch, graph_launch, chain_cgc, graph_launch};
    void *ctx[WAYS];
    for (int w = 0; w < WAYS; w++)
      ctx[w] = &c[w];
    double t[WAYS];
    time_interleaved(WAYS, f, ctx, s, c[0].n >= 1000 ? 100 : 400, t);
    char name[32];
    snprintf(name, sizeof name, "chain%d", c[0].n);
    for (int w = 0; w < WAYS; w++) {
      bench_row("chain", name, ways[w], "latency_us", t[w]);
      bench_row("chain", name, ways[w], "per_node_us", t[w] / c[0].n);
    }
    CUDA(cudaGraphExecDestroy(c[1].exec));
    CUDA(cudaGraphExecDestroy(c[2].exec));
    CUDA(cudaGraphExecDestroy(c[4].exec));
    for (int i = 0; i < 3; i++)
      CUDA(cudaGraphDestroy(graphs[i]));
    cgrt_destroy(g);
  }
}

/* ---- the decode step ---- */

enum { D = 256, MAXPOS = 128, LAYERS = 4, POSITIONS = 64 };

typedef struct Decode {
  float *x, *wn, *w[4], *kc, *vc, *h, *q, *k, *v, *a, *o;
  decode_plain *plain; /* the same graph with plain kernels */
  uint32_t *scal;  /* device: pos, nkeys */
  uint32_t *hscal; /* pinned host: pos, nkeys for each position */
  uint32_t d;
  void *args[LAYERS][8][8];
  float *wl[LAYERS][4], *wnl[LAYERS], *kcl[LAYERS], *vcl[LAYERS];
  uint32_t *pos_ptr, *nkeys_ptr;
  cudaGraphExec_t exec;
  decode_step *cgc;
} Decode;

static void decode_args(Decode *dc) {
  dc->pos_ptr = dc->scal;
  dc->nkeys_ptr = dc->scal + 1;
  for (int l = 0; l < LAYERS; l++) {
    dc->wnl[l] = dc->wn + l * D;
    for (int m = 0; m < 4; m++)
      dc->wl[l][m] = dc->w[m] + (size_t)l * D * D;
    dc->kcl[l] = dc->kc + (size_t)l * MAXPOS * D;
    dc->vcl[l] = dc->vc + (size_t)l * MAXPOS * D;
    void **a;
    a = dc->args[l][0]; a[0] = &dc->x; a[1] = &dc->wnl[l]; a[2] = &dc->h; a[3] = &dc->d;
    for (int m = 0; m < 3; m++) {
      float **out = m == 0 ? &dc->q : m == 1 ? &dc->k : &dc->v;
      a = dc->args[l][1 + m]; a[0] = &dc->wl[l][m]; a[1] = &dc->h; a[2] = out; a[3] = &dc->d;
      a[4] = &dc->d;
    }
    a = dc->args[l][4]; a[0] = &dc->k; a[1] = &dc->v; a[2] = &dc->kcl[l]; a[3] = &dc->vcl[l];
    a[4] = &dc->pos_ptr; a[5] = &dc->d;
    a = dc->args[l][5]; a[0] = &dc->q; a[1] = &dc->kcl[l]; a[2] = &dc->vcl[l];
    a[3] = &dc->nkeys_ptr; a[4] = &dc->a; a[5] = &dc->d;
    a = dc->args[l][6]; a[0] = &dc->wl[l][3]; a[1] = &dc->a; a[2] = &dc->o; a[3] = &dc->d;
    a[4] = &dc->d;
    a = dc->args[l][7]; a[0] = &dc->x; a[1] = &dc->o; a[2] = &dc->d;
  }
}

/* The 8 kernels of layer l, as the .cgraph launches them. */
static struct cudaKernelNodeParams decode_kernel(Decode *dc, int l, int j) {
  struct cudaKernelNodeParams p = {0};
  static void (*const fns[8])(void) = {rmsnorm, matvec, matvec, matvec, kv_store, attention,
                                       matvec, add};
  static const unsigned grid[8] = {1, D / 8, D / 8, D / 8, 1, 1, D / 8, 1};
  p.func = (void *)fn(fns[j]);
  p.gridDim = dim3_of(grid[j]);
  p.blockDim = dim3_of(256);
  p.sharedMemBytes = j == 5 ? MAXPOS * 4 : 0;
  p.kernelParams = dc->args[l][j];
  return p;
}

static void decode_kernels(Decode *dc, cudaStream_t s) {
  for (int l = 0; l < LAYERS; l++)
    for (int j = 0; j < 8; j++) {
      struct cudaKernelNodeParams p = decode_kernel(dc, l, j);
      CUDA(cudaLaunchKernel(p.func, p.gridDim, p.blockDim, p.kernelParams, p.sharedMemBytes, s));
    }
}

/* 64 positions; the scalars reach the device by a copy before each step,
 * as a user of streams, capture or hand-written graphs would do it. */
static void decode_stream(void *ctx, cudaStream_t s) {
  Decode *dc = ctx;
  for (int p = 0; p < POSITIONS; p++) {
    CUDA(cudaMemcpyAsync(dc->scal, dc->hscal + 2 * p, 8, cudaMemcpyHostToDevice, s));
    decode_kernels(dc, s);
  }
}

static void decode_graph(void *ctx, cudaStream_t s) {
  Decode *dc = ctx;
  for (int p = 0; p < POSITIONS; p++) {
    CUDA(cudaMemcpyAsync(dc->scal, dc->hscal + 2 * p, 8, cudaMemcpyHostToDevice, s));
    CUDA(cudaGraphLaunch(dc->exec, s));
  }
}

/* A cgc way, FN: the graph GRAPH (its generated API's prefix) in the field
 * FIELD of Decode, its scalars set before each of the 64 launches. */
#define DECODE_CGC(fn, graph, field)                                                              \
  static void fn(void *ctx, cudaStream_t s) {                                                     \
    Decode *dc = ctx;                                                                             \
    for (uint32_t p = 0; p < POSITIONS; p++) {                                                    \
      CGRT(graph##_set_pos(dc->field, p));                                                        \
      CGRT(graph##_set_nkeys(dc->field, p + 1));                                                  \
      CGRT(graph##_launch(dc->field, s));                                                         \
    }                                                                                             \
  }

DECODE_CGC(decode_cgc, decode_step, cgc)
DECODE_CGC(decode_cgc_plain, decode_plain, plain)

static void decode_capture_kernels(void *ctx, cudaStream_t s) { decode_kernels(ctx, s); }

/* The decode step by hand: per layer norm -> {q, k, v}; {k, v} -> kv;
 * {q, kv} -> attn -> out -> residual -> the next layer's norm. */
static cudaGraph_t hand_decode(Decode *dc) {
  cudaGraph_t g;
  CUDA(cudaGraphCreate(&g, 0));
  cudaGraphNode_t prev_res = NULL, n[8];
  for (int l = 0; l < LAYERS; l++) {
    struct cudaKernelNodeParams p[8];
    for (int j = 0; j < 8; j++)
      p[j] = decode_kernel(dc, l, j);
    CUDA(cudaGraphAddKernelNode(&n[0], g, prev_res ? &prev_res : NULL, prev_res ? 1 : 0, &p[0]));
    for (int j = 1; j <= 3; j++)
      CUDA(cudaGraphAddKernelNode(&n[j], g, &n[0], 1, &p[j]));
    cudaGraphNode_t kv_deps[2] = {n[2], n[3]};
    CUDA(cudaGraphAddKernelNode(&n[4], g, kv_deps, 2, &p[4]));
    cudaGraphNode_t attn_deps[2] = {n[1], n[4]};
    CUDA(cudaGraphAddKernelNode(&n[5], g, attn_deps, 2, &p[5]));
    CUDA(cudaGraphAddKernelNode(&n[6], g, &n[5], 1, &p[6]));
    CUDA(cudaGraphAddKernelNode(&n[7], g, &n[6], 1, &p[7]));
    prev_res = n[7];
  }
  return g;
}

static void bench_decode(cudaStream_t s) {
  Decode dc = {.d = D};
  size_t nw = (size_t)LAYERS * D * D, nc = (size_t)LAYERS * MAXPOS * D;
  float **bufs[] = {&dc.x, &dc.h, &dc.q, &dc.k, &dc.v, &dc.a, &dc.o};
  for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++) {
    CUDA(cudaMalloc((void **)bufs[i], D * sizeof(float)));
    CUDA(cudaMemset(*bufs[i], 0, D * sizeof(float)));
  }
  CUDA(cudaMalloc((void **)&dc.wn, LAYERS * D * sizeof(float)));
  CUDA(cudaMemset(dc.wn, 0, LAYERS * D * sizeof(float)));
  for (int m = 0; m < 4; m++) {
    CUDA(cudaMalloc((void **)&dc.w[m], nw * sizeof(float)));
    CUDA(cudaMemset(dc.w[m], 0, nw * sizeof(float)));
  }
  CUDA(cudaMalloc((void **)&dc.kc, nc * sizeof(float)));
  CUDA(cudaMalloc((void **)&dc.vc, nc * sizeof(float)));
  CUDA(cudaMemset(dc.kc, 0, nc * sizeof(float)));
  CUDA(cudaMemset(dc.vc, 0, nc * sizeof(float)));
  CUDA(cudaMalloc((void **)&dc.scal, 2 * sizeof(uint32_t)));
  CUDA(cudaHostAlloc((void **)&dc.hscal, 2 * POSITIONS * sizeof(uint32_t), cudaHostAllocDefault));
  for (int p = 0; p < POSITIONS; p++)
    dc.hscal[2 * p] = (uint32_t)p, dc.hscal[2 * p + 1] = (uint32_t)p + 1;
  decode_args(&dc);

  /* Each way has its own copy of the state it launches with.  The sample's
   * kernels are pdl kernels: "cgc" has programmatic edges, "cgc_plain" is
   * the same graph with plain kernels, like the others. */
  Decode ways[5] = {dc, dc, dc, dc, dc};
  cudaGraph_t graphs[2];
  ways[1].exec = capture(decode_capture_kernels, &ways[1], s, &graphs[0]);
  graphs[1] = hand_decode(&ways[2]);
  ways[2].exec = instantiate(graphs[1], s);
  decode_step_extern ext = {dc.x, dc.wn, dc.w[0], dc.w[1], dc.w[2], dc.w[3], dc.kc, dc.vc};
  cgrt_options in_s = CGRT_OPTIONS_INIT;
  in_s.stream = s;
  CGRT(decode_step_create(&ways[3].cgc, &ext, &in_s));
  decode_plain_extern plain_ext = {dc.x, dc.wn, dc.w[0], dc.w[1], dc.w[2], dc.w[3], dc.kc, dc.vc};
  CGRT(decode_plain_create(&ways[4].plain, &plain_ext, &in_s));
  Step f[5] = {decode_stream, decode_graph, decode_graph, decode_cgc, decode_cgc_plain};
  void *ctx[5] = {&ways[0], &ways[1], &ways[2], &ways[3], &ways[4]};
  static const char *const names[] = {"stream", "capture", "hand", "cgc", "cgc_plain"};
  double t[5];
  time_interleaved(5, f, ctx, s, 30, t);
  for (int w = 0; w < 5; w++)
    bench_row("decode", "decode_step", names[w], "step_us", t[w] / POSITIONS);
  CUDA(cudaGraphExecDestroy(ways[1].exec));
  CUDA(cudaGraphExecDestroy(ways[2].exec));
  CUDA(cudaGraphDestroy(graphs[0]));
  CUDA(cudaGraphDestroy(graphs[1]));
  decode_step_destroy(ways[3].cgc);
  decode_plain_destroy(ways[4].plain);

  for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++)
    CUDA(cudaFree(*bufs[i]));
  CUDA(cudaFree(dc.wn));
  for (int m = 0; m < 4; m++)
    CUDA(cudaFree(dc.w[m]));
  CUDA(cudaFree(dc.kc));
  CUDA(cudaFree(dc.vc));
  CUDA(cudaFree(dc.scal));
  CUDA(cudaFreeHost(dc.hscal));
}

/* ---- programmatic dependent launch ---- */

#define LAUNCHER(name)                                                                     \
  static cgrt_status name##_l(void *g, cudaStream_t s) { return name##_launch(g, s); }
LAUNCHER(chain33)
LAUNCHER(pchain33)
LAUNCHER(chain1000)
LAUNCHER(pchain1000)
LAUNCHER(big33)
LAUNCHER(pbig33)

/* Chains of small and of large kernels, plain and pdl, cgc's graphs. */
static void bench_pdl(cudaStream_t s) {
  cgrt_options in_s = CGRT_OPTIONS_INIT;
  in_s.stream = s;
  static const char *const cases[] = {"small33", "small1000", "large33"};
  static const int nodes[] = {33, 1000, 33};
  for (int k = 0; k < 3; k++) {
    Graph p[2];
/* The graph NAME into p[0] and its pdl twin, pNAME, into p[1]. */
#define PDL_PAIR(name)                                                                     \
  CGRT(name##_create((name **)&p[0].g, &in_s));                                            \
  CGRT(p##name##_create((p##name **)&p[1].g, &in_s));                                      \
  p[0].launch = name##_l, p[1].launch = p##name##_l
    switch (k) {
    case 0: PDL_PAIR(chain33); break;
    case 1: PDL_PAIR(chain1000); break;
    default: PDL_PAIR(big33); break;
    }
#undef PDL_PAIR
    Step f[2] = {graph_step, graph_step};
    void *ctx[2] = {&p[0], &p[1]};
    double t[2];
    time_interleaved(2, f, ctx, s, k == 1 ? 100 : 300, t);
    bench_row("pdl", cases[k], "cgc", "latency_us", t[0]);
    bench_row("pdl", cases[k], "cgc", "per_node_us", t[0] / nodes[k]);
    bench_row("pdl", cases[k], "cgc_pdl", "latency_us", t[1]);
    bench_row("pdl", cases[k], "cgc_pdl", "per_node_us", t[1] / nodes[k]);
    cgrt_destroy(p[0].g);
    cgrt_destroy(p[1].g);
  }
}

/* ---- independent chains ---- */

static void par8_step(void *g, cudaStream_t s) { CGRT(par8_launch(g, s)); }
static void ser8_step(void *g, cudaStream_t s) { CGRT(ser8_launch(g, s)); }

static void bench_concurrency(cudaStream_t s) {
  par8 *p;
  ser8 *q;
  cgrt_options in_s = CGRT_OPTIONS_INIT;
  in_s.stream = s;
  CGRT(par8_create(&p, &in_s));
  CGRT(ser8_create(&q, &in_s));
  const uint64_t ns = 20000; /* 20 us a kernel */
  CGRT(par8_set_ns(p, ns));
  CGRT(ser8_set_ns(q, ns));
  double tp = time_step(par8_step, p, s, 30), tq = time_step(ser8_step, q, s, 30);
  bench_row("concurrency", "8x33_spin20us", "cgc", "latency_us", tp);
  bench_row("concurrency", "8x33_spin20us", "cgc_serialised", "latency_us", tq);
  par8_destroy(p);
  ser8_destroy(q);
}

/* ---- launch scalars ---- */

typedef struct Scal {
  void *g;
  cgrt_status (*set)(void *, uint32_t);
  cgrt_status (*launch)(void *, cudaStream_t);
  uint32_t value;
} Scal;

static void scal_step(void *ctx, cudaStream_t s) {
  Scal *c = ctx;
  if (c->set)
    CGRT(c->set(c->g, ++c->value));
  CGRT(c->launch(c->g, s));
}

/* Host cost (host_interleaved) and latency (as time_step) of n ways, taking
 * turns round by round in a rotating order, so that the machine's drift
 * falls on all of them alike: their ratios are what the targets read. */
static void interleaved(Scal *cases, int n, cudaStream_t s, double *host, double *lat) {
  enum { ROUNDS = 15, ITERS = 200, REPS = 300, MOST = 8 };
  if (n > MOST) {
    fprintf(stderr, "bench: %d ways of scalars, at most %d\n", n, MOST);
    exit(1);
  }
  double *l = malloc((size_t)n * REPS * sizeof *l);
  if (!l) {
    fprintf(stderr, "bench: out of memory\n");
    exit(1);
  }
  Step f[MOST];
  void *ctx[MOST];
  for (int w = 0; w < n; w++) {
    f[w] = scal_step, ctx[w] = &cases[w];
    for (int i = 0; i < 20; i++) {
      scal_step(&cases[w], s);
      CUDA(cudaStreamSynchronize(s));
    }
  }
  host_interleaved(n, f, ctx, s, ROUNDS, ITERS, host);
  for (int r = 0; r < REPS; r++)
    for (int i = 0; i < n; i++) {
      int w = (i + r) % n;
      double t0 = bench_now_us();
      scal_step(&cases[w], s);
      CUDA(cudaStreamSynchronize(s));
      l[w * REPS + r] = bench_now_us() - t0;
    }
  for (int w = 0; w < n; w++)
    lat[w] = bench_median(l + w * REPS, REPS);
  free(l);
}

#define SCAL_CASES(k)                                                                      \
  static cgrt_status bare##k##_l(void *g, cudaStream_t s) { return bare##k##_launch(g, s); } \
  static cgrt_status ptr##k##_l(void *g, cudaStream_t s) { return ptr##k##_launch(g, s); }   \
  static cgrt_status val##k##_l(void *g, cudaStream_t s) { return val##k##_launch(g, s); }   \
  static cgrt_status ptr##k##_s(void *g, uint32_t v) { return ptr##k##_set_s(g, v); }        \
  static cgrt_status val##k##_s(void *g, uint32_t v) { return val##k##_set_s(g, v); }
SCAL_CASES(1)
SCAL_CASES(10)
SCAL_CASES(100)

/* The same K independent tick nodes, by hand: K entry nodes. */
typedef struct HandWide {
  cudaGraphExec_t exec;
} HandWide;

static cgrt_status hand_wide_launch(void *ctx, cudaStream_t s) {
  HandWide *h = ctx;
  return cudaGraphLaunch(h->exec, s) == cudaSuccess ? CGRT_OK : CGRT_ERROR_CUDA;
}

static void bench_scalars(cudaStream_t s) {
  cgrt_options in_s = CGRT_OPTIONS_INIT;
  in_s.stream = s;
  for (int k = 0; k < 3; k++) {
    int nodes = k == 0 ? 1 : k == 1 ? 10 : 100;
    {
      float *x;
      uint32_t len = N;
      CUDA(cudaMalloc((void **)&x, (size_t)nodes * N * sizeof(float)));
      float *rows[100];
      void *args[100][2];
      cudaGraph_t graph;
      CUDA(cudaGraphCreate(&graph, 0));
      for (int i = 0; i < nodes; i++) {
        rows[i] = x + (size_t)i * N;
        args[i][0] = &rows[i];
        args[i][1] = &len;
        struct cudaKernelNodeParams p = {0};
        p.func = (void *)fn(tick);
        p.gridDim = dim3_of(1);
        p.blockDim = dim3_of(N);
        p.kernelParams = args[i];
        cudaGraphNode_t node;
        CUDA(cudaGraphAddKernelNode(&node, graph, NULL, 0, &p));
      }
      HandWide h = {instantiate(graph, s)};
      Scal c = {.g = &h, .launch = hand_wide_launch};
      char name[32];
      snprintf(name, sizeof name, "%d_nodes", nodes);
      Step f = scal_step;
      void *ctx = &c;
      double host;
      host_interleaved(1, &f, &ctx, s, 9, 200, &host);
      bench_row("scalars", name, "hand_bare_launch", "host_us", host);
      bench_row("scalars", name, "hand_bare_launch", "latency_us", time_step(scal_step, &c, s, 300));
      CUDA(cudaGraphExecDestroy(h.exec));
      CUDA(cudaGraphDestroy(graph));
      CUDA(cudaFree(x));
    }
    Scal cases[4] = {0};
/* The bare, by-pointer and by-value graphs of n nodes into cases[0..2]. */
#define SCALAR_GRAPHS(n)                                                                   \
  CGRT(bare##n##_create((bare##n **)&cases[0].g, &in_s));                                  \
  CGRT(ptr##n##_create((ptr##n **)&cases[1].g, &in_s));                                   \
  CGRT(val##n##_create((val##n **)&cases[2].g, &in_s));                                   \
  cases[0].launch = bare##n##_l, cases[1].launch = ptr##n##_l, cases[2].launch = val##n##_l; \
  cases[1].set = ptr##n##_s, cases[2].set = val##n##_s
    switch (k) {
    case 0: SCALAR_GRAPHS(1); break;
    case 1: SCALAR_GRAPHS(10); break;
    default: SCALAR_GRAPHS(100); break;
    }
#undef SCALAR_GRAPHS
    /* The by-value graph again with every node updated from the host (the
     * runtime's test hook), for the device updates against what they replace. */
    cgrt_test_device_updates(UINT32_MAX);
    cases[3] = cases[2];
    CGRT(k == 0 ? val1_create((val1 **)&cases[3].g, &in_s)
         : k == 1 ? val10_create((val10 **)&cases[3].g, &in_s)
                  : val100_create((val100 **)&cases[3].g, &in_s));
    cgrt_test_device_updates(0);
    static const char *const ways[] = {"bare_launch", "set_pointer_scalar", "set_value_scalar",
                                       "set_value_scalar_host"};
    char name[32];
    snprintf(name, sizeof name, "%d_nodes", nodes);
    double host[4], lat[4];
    interleaved(cases, 4, s, host, lat);
    for (int w = 0; w < 4; w++) {
      bench_row("scalars", name, ways[w], "host_us", host[w]);
      bench_row("scalars", name, ways[w], "latency_us", lat[w]);
    }
    for (int w = 0; w < 4; w++)
      cgrt_destroy(cases[w].g);
  }
}

/* ---- grids that follow scalars ---- */

typedef struct GridCase {
  void *g;
  cgrt_status (*set)(void *, uint32_t);
  cgrt_status (*launch)(void *, cudaStream_t);
  int mode; /* 0: no set, 1: the same value set, 2: the grid changes (1, 2, 1, ...) */
  uint32_t value;
} GridCase;

static void grid_step(void *ctx, cudaStream_t s) {
  GridCase *c = ctx;
  if (c->mode == 2)
    c->value = 3 - c->value;
  if (c->mode)
    CGRT(c->set(c->g, c->value));
  CGRT(c->launch(c->g, s));
}

/* One way of a case: its graph set (or not) as `mode` says, and launched. */
typedef struct GridWay {
  GridCase *c;
  int mode;
} GridWay;

static void grid_way(void *ctx, cudaStream_t s) {
  GridWay *w = ctx;
  w->c->mode = w->mode;
  grid_step(w->c, s);
}

#define GRID_CASE(k)                                                                        \
  static cgrt_status grid##k##_l(void *g, cudaStream_t s) { return grid##k##_launch(g, s); } \
  static cgrt_status grid##k##_s(void *g, uint32_t v) { return grid##k##_set_g(g, v); }
GRID_CASE(1)
GRID_CASE(10)
GRID_CASE(100)

/* The host cost of a launch of K nodes whose grid follows a scalar: not
 * set (the grid as it was), set to the value it has (the nodes updated all
 * the same), set to another (1 and 2 blocks in turn). */
static void bench_grids(cudaStream_t s) {
  cgrt_options in_s = CGRT_OPTIONS_INIT;
  in_s.stream = s;
  for (int k = 0; k < 3; k++) {
    int nodes = k == 0 ? 1 : k == 1 ? 10 : 100;
    GridCase c = {.value = 1};
    switch (k) {
    case 0:
      CGRT(grid1_create((grid1 **)&c.g, &in_s));
      c.launch = grid1_l, c.set = grid1_s;
      break;
    case 1:
      CGRT(grid10_create((grid10 **)&c.g, &in_s));
      c.launch = grid10_l, c.set = grid10_s;
      break;
    default:
      CGRT(grid100_create((grid100 **)&c.g, &in_s));
      c.launch = grid100_l, c.set = grid100_s;
      break;
    }
    /* The ways share the graph and its value, so a set of the same value
     * follows whatever the last change left. */
    static const char *const ways[] = {"grid_unchanged", "grid_set_same", "grid_changed"};
    GridWay way[3] = {{&c, 0}, {&c, 1}, {&c, 2}};
    Step f[3] = {grid_way, grid_way, grid_way};
    void *ctx[3] = {&way[0], &way[1], &way[2]};
    double host[3], latency[3];
    host_interleaved(3, f, ctx, s, 9, 200, host);
    time_interleaved(3, f, ctx, s, 300, latency);
    char name[32];
    snprintf(name, sizeof name, "%d_nodes", nodes);
    for (int w = 0; w < 3; w++) {
      bench_row("grid", name, ways[w], "host_us", host[w]);
      bench_row("grid", name, ways[w], "latency_us", latency[w]);
    }
    cgrt_destroy(c.g);
  }
  /* Memory: the four batch variants of the decode step (batch.cgraph),
   * pooled (the largest) against each with its own. */
  size_t need[4] = {step_1_pool_bytes(), step_2_pool_bytes(), step_4_pool_bytes(),
                    step_8_pool_bytes()};
  size_t most = 0, sum = 0;
  for (int v = 0; v < 4; v++) {
    most = need[v] > most ? need[v] : most;
    sum += need[v];
  }
  bench_row("pool", "decode_step_batch_1_2_4_8", "separate", "bytes", (double)sum);
  bench_row("pool", "decode_step_batch_1_2_4_8", "pooled", "bytes", (double)most);
}

/* ---- loops on the device ---- */

extern void hand_loop_start(void), hand_loop_body(void);

enum { LOOP_ITERATIONS = 1024 };

typedef struct Loop {
  void *g;
  cgrt_status (*launch)(void *, cudaStream_t);
  cudaGraphExec_t exec; /* the hand-written while loop */
  hstep *h;             /* the host-driven loop */
} Loop;

static void loop_cgc(void *ctx, cudaStream_t s) {
  Loop *l = ctx;
  CGRT(l->launch(l->g, s));
}

static void loop_hand(void *ctx, cudaStream_t s) {
  CUDA(cudaGraphLaunch(((Loop *)ctx)->exec, s));
}

/* Launch an iteration, copy the counter back, decide. */
static void loop_host(void *ctx, cudaStream_t s) {
  Loop *l = ctx;
  uint32_t it = 0;
  CGRT(hstep_set_it(l->h, 0));
  while (it < LOOP_ITERATIONS) {
    CGRT(hstep_launch(l->h, s));
    CGRT(hstep_get_it(l->h, &it)); /* a copy on s, and a wait for it */
  }
}

static cgrt_status loop1_l(void *g, cudaStream_t s) { return loop1_launch(g, s); }
static cgrt_status loop4_l(void *g, cudaStream_t s) { return loop4_launch(g, s); }
static cgrt_status loop16_l(void *g, cudaStream_t s) { return loop16_launch(g, s); }
static cgrt_status loop_handle_l(void *g, cudaStream_t s) { return loop_handle_launch(g, s); }
static cgrt_status count_chain_l(void *g, cudaStream_t s) { return count_chain_launch(g, s); }
static cgrt_status loop_handle16_l(void *g, cudaStream_t s) { return loop_handle16_launch(g, s); }

/* The same loop written by hand against CUDA's graph API: a kernel sets
 * the counter and the handle, and the body's one kernel ticks, counts and
 * sets the handle itself. */
static cudaGraph_t hand_while(float *x, uint32_t *it, Loop *l, cudaStream_t s) {
  uint32_t limit = LOOP_ITERATIONS, n = N;
  cudaGraphConditionalHandle h;
  cudaGraph_t g, body;
  CUDA(cudaGraphCreate(&g, 0));
  CUDA(cudaGraphConditionalHandleCreate(&h, g, 0, 0));
  void *a0[] = {&it, &limit, &h}, *a1[] = {&x, &it, &n, &limit, &h};
  struct cudaKernelNodeParams k = {0};
  k.func = (void *)fn(hand_loop_start);
  k.gridDim = dim3_of(1);
  k.blockDim = dim3_of(1);
  k.kernelParams = a0;
  cudaGraphNode_t start, loop, tick_node;
  CUDA(cudaGraphAddKernelNode(&start, g, NULL, 0, &k));
  struct cudaGraphNodeParams c;
  memset(&c, 0, sizeof c);
  c.type = cudaGraphNodeTypeConditional;
  c.conditional.handle = h;
  c.conditional.type = cudaGraphCondTypeWhile;
  c.conditional.size = 1;
  CUDA(cudaGraphAddNode(&loop, g, &start, NULL, 1, &c));
  body = c.conditional.phGraph_out[0];
  k.func = (void *)fn(hand_loop_body);
  k.blockDim = dim3_of(N);
  k.kernelParams = a1;
  CUDA(cudaGraphAddKernelNode(&tick_node, body, NULL, 0, &k));
  l->exec = instantiate(g, s);
  return g;
}

static void bench_loops(cudaStream_t s) {
  cgrt_options in_s = CGRT_OPTIONS_INIT;
  in_s.stream = s;
  float *x;
  uint32_t *it;
  CUDA(cudaMalloc((void **)&x, N * sizeof *x));
  CUDA(cudaMalloc((void **)&it, sizeof *it));
  enum { WAYS = 8 };
  static const char *const ways[WAYS] = {"cgc_check1",  "cgc_check4", "cgc_check16",
                                         "hand_check1", "host_loop",  "cgc_handle1",
                                         "cgc_chain",   "cgc_handle16"};
  Loop l[WAYS] = {{0}};
  loop1_extern e1 = {x};
  loop4_extern e4 = {x};
  loop16_extern e16 = {x};
  hstep_extern eh = {x};
  loop_handle_extern ehd = {x};
  CGRT(loop1_create((loop1 **)&l[0].g, &e1, &in_s));
  CGRT(loop4_create((loop4 **)&l[1].g, &e4, &in_s));
  CGRT(loop16_create((loop16 **)&l[2].g, &e16, &in_s));
  l[0].launch = loop1_l, l[1].launch = loop4_l, l[2].launch = loop16_l;
  cudaGraph_t hand = hand_while(x, it, &l[3], s);
  CGRT(hstep_create(&l[4].h, &eh, &in_s));
  CGRT(loop_handle_create((loop_handle **)&l[5].g, &ehd, &in_s));
  l[5].launch = loop_handle_l;
  count_chain_extern ecc = {x};
  CGRT(count_chain_create((count_chain **)&l[6].g, &ecc, &in_s));
  l[6].launch = count_chain_l;
  loop_handle16_extern eh16 = {x};
  CGRT(loop_handle16_create((loop_handle16 **)&l[7].g, &eh16, &in_s));
  l[7].launch = loop_handle16_l;
  Step f[WAYS] = {loop_cgc, loop_cgc, loop_cgc, loop_hand, loop_host, loop_cgc, loop_cgc, loop_cgc};
  void *ctx[WAYS];
  for (int w = 0; w < WAYS; w++)
    ctx[w] = &l[w];
  double t[WAYS];
  time_interleaved(WAYS, f, ctx, s, 40, t);
  /* Every way ran its iterations: the counters say so. */
  uint32_t count[WAYS];
  CGRT(loop1_get_it(l[0].g, &count[0]));
  CGRT(loop4_get_it(l[1].g, &count[1]));
  CGRT(loop16_get_it(l[2].g, &count[2]));
  CUDA(cudaMemcpy(&count[3], it, sizeof count[3], cudaMemcpyDeviceToHost));
  CGRT(hstep_get_it(l[4].h, &count[4]));
  CGRT(loop_handle_get_it(l[5].g, &count[5]));
  CGRT(count_chain_get_it(l[6].g, &count[6]));
  CGRT(loop_handle16_get_it(l[7].g, &count[7]));
  for (int w = 0; w < WAYS; w++)
    if (count[w] != LOOP_ITERATIONS) {
      fprintf(stderr, "bench: %s ran %u iterations, not %d\n", ways[w], count[w],
              LOOP_ITERATIONS);
      exit(1);
    }
  for (int w = 0; w < WAYS; w++) {
    bench_row("loop", "1024_iterations", ways[w], "latency_us", t[w]);
    bench_row("loop", "1024_iterations", ways[w], "per_iteration_us", t[w] / LOOP_ITERATIONS);
  }
  loop1_destroy(l[0].g);
  loop4_destroy(l[1].g);
  loop16_destroy(l[2].g);
  hstep_destroy(l[4].h);
  loop_handle_destroy(l[5].g);
  count_chain_destroy(l[6].g);
  loop_handle16_destroy(l[7].g);
  CUDA(cudaGraphExecDestroy(l[3].exec));
  CUDA(cudaGraphDestroy(hand));
  CUDA(cudaFree(x));
  CUDA(cudaFree(it));
}

/* ---- kernels from a module ---- */

/* The same chain of ticks with the kernel linked in and from a module (a
 * cubin of the same source): a launch costs what it costs whichever way
 * the kernel came, and create pays for loading the module. */
static cgrt_status l33(void *g, cudaStream_t s) { return linked33_launch(g, s); }
static cgrt_status m33(void *g, cudaStream_t s) { return module33_launch(g, s); }
static cgrt_status l1000(void *g, cudaStream_t s) { return linked1000_launch(g, s); }
static cgrt_status m1000(void *g, cudaStream_t s) { return module1000_launch(g, s); }

/* One of the chains, on buffer x (every chain ticks the same one). */
static void *create_chain(int module, int n, float *x, const cgrt_options *o) {
  void *g = NULL;
  if (n == 33 && module) {
    module33_extern e = {x};
    CGRT(module33_create((module33 **)&g, &e, o));
  } else if (n == 33) {
    linked33_extern e = {x};
    CGRT(linked33_create((linked33 **)&g, &e, o));
  } else if (module) {
    module1000_extern e = {x};
    CGRT(module1000_create((module1000 **)&g, &e, o));
  } else {
    linked1000_extern e = {x};
    CGRT(linked1000_create((linked1000 **)&g, &e, o));
  }
  return g;
}

static void bench_modules(cudaStream_t s) {
  cgrt_options in_s = CGRT_OPTIONS_INIT;
  in_s.stream = s;
  static const char *const ways[] = {"linked", "module"};
  float *x;
  CUDA(cudaMalloc((void **)&x, N * sizeof *x));
  for (int k = 0; k < 2; k++) {
    int n = k ? 1000 : 33, reps = n >= 1000 ? 100 : 400;
    Graph m[2] = {{create_chain(0, n, x, &in_s), k ? l1000 : l33},
                   {create_chain(1, n, x, &in_s), k ? m1000 : m33}};
    Step f[2] = {graph_step, graph_step};
    void *ctx[2] = {&m[0], &m[1]};
    double t[2];
    CUDA(cudaMemset(x, 0, N * sizeof *x));
    time_interleaved(2, f, ctx, s, reps, t);
    /* Every launch of both ran every tick: 20 warm-ups and the timed ones. */
    float x0;
    CUDA(cudaMemcpy(&x0, x, sizeof x0, cudaMemcpyDeviceToHost));
    if (x0 != (float)(2 * (20 + reps) * n)) {
      fprintf(stderr, "bench: the chains of %d ticked %g times, not %d\n", n, x0,
              2 * (20 + reps) * n);
      exit(1);
    }
    char name[32];
    snprintf(name, sizeof name, "chain%d", n);
    for (int w = 0; w < 2; w++) {
      bench_row("module", name, ways[w], "latency_us", t[w]);
      bench_row("module", name, ways[w], "per_node_us", t[w] / n);
      cgrt_destroy(m[w].g);
    }
  }
  /* Create: the module's loading (the library, its kernel, its
   * parameters checked) on top of the same graph's create. */
  const int reps = 21;
  double tc[2][21];
  for (int r = 0; r < reps; r++)
    for (int w = 0; w < 2; w++) {
      double t0 = bench_now_us();
      void *g = create_chain(w, 33, x, &in_s);
      tc[w][r] = bench_now_us() - t0;
      cgrt_destroy(g);
    }
  for (int w = 0; w < 2; w++)
    bench_row("module", "create33", ways[w], "create_us", bench_median(tc[w], reps));
  CUDA(cudaFree(x));
}

/* ---- creation ---- */

static void bench_creation(cudaStream_t s) {
  static const int sizes[] = {100, 1000, 10000};
  for (int k = 0; k < 3; k++) {
    const int reps = 11;
    double tc[11], th[11];
    Chain c = {.n = sizes[k], .len = N};
    CUDA(cudaMalloc((void **)&c.x, N * sizeof(float)));
    c.args[0] = &c.x;
    c.args[1] = &c.len;
    for (int r = 0; r < reps; r++) {
      double t0 = bench_now_us();
      void *g = NULL;
      cgrt_options in_s = CGRT_OPTIONS_INIT;
      in_s.stream = s;
      switch (k) {
      case 0: CGRT(chain100_create((chain100 **)&g, &in_s)); break;
      case 1: CGRT(chain1000_create((chain1000 **)&g, &in_s)); break;
      default: CGRT(chain10000_create((chain10000 **)&g, &in_s)); break;
      }
      tc[r] = bench_now_us() - t0;
      cgrt_destroy(g);
      t0 = bench_now_us();
      cudaGraph_t graph = hand_chain(&c);
      cudaGraphExec_t e = instantiate(graph, s); /* instantiate and upload */
      th[r] = bench_now_us() - t0;
      CUDA(cudaGraphExecDestroy(e));
      CUDA(cudaGraphDestroy(graph));
    }
    char name[32];
    snprintf(name, sizeof name, "chain%d", sizes[k]);
    bench_row("creation", name, "cgc", "create_us", bench_median(tc, reps));
    bench_row("creation", name, "hand", "create_us", bench_median(th, reps));
    CUDA(cudaFree(c.x));
  }
}

int main(void) {
  if (bench_no_gpu("bench"))
    return 77;
  cudaStream_t s;
  CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  printf("section,case,way,metric,value\n");
  bench_chains(s);
  bench_decode(s);
  bench_pdl(s);
  bench_concurrency(s);
  bench_scalars(s);
  bench_grids(s);
  bench_loops(s);
  bench_modules(s);
  bench_creation(s);
  CUDA(cudaStreamDestroy(s));
  return 0;
}
