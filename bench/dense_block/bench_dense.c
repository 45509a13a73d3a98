/* bench_dense: the dense block of a DeepSeek-V2-Lite decode step
 * (samples/dense_block on the kernel library: 4 layers, 648 MB of bf16
 * weights, far more than the L2) for one token over 512 live keys, run
 * four ways:
 *
 *   cgc      cgc's graph: set pos, launch
 *   stream   the same kernels as plain stream launches (no programmatic
 *            dependent launch), after a copy of pos
 *   capture  those launches stream-captured into a CUDA graph by hand;
 *            the copy, then the graph's launch
 *   read     the floor: a read-only kernel over as many bytes as the
 *            step's weights (one buffer of its own), captured into a graph
 *
 * Each way is timed with CUDA events around one step (latency: launch
 * included, the stream idle before it) and around 16 steps issued back to
 * back, per step; after a warm-up, in rounds whose order is shuffled, the
 * median.  The host cost of issuing one step is timed on the CPU over a
 * few steps issued without waiting (20 of the graphs, 4 of stream launches).  Prints CSV rows
 * "section,case,way,metric,value"; exits 77 without a GPU. */
#include "check.h"
#include "dense_block.h"
#include "dense_block_graph.h"
#include "gpu.h"
#include "timing.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* HOST_STEPS steps issued at once stay well inside CUDA's launch queue, so
 * that the host never waits for the GPU while it is timed. */
enum { KEYS = 512, WAYS = 4, ROUNDS = 200, QUEUED = 16, HOST_STEPS = 20 };

static const char *const CASE = "4_layers_512_keys";

typedef struct Way {
  const char *name;
  DenseState st;        /* each way's buffers (cgc uses only x); one KV cache for all */
  dense_block *g;       /* cgc */
  cudaGraphExec_t exec; /* capture, read */
  void (*step)(struct Way *, cudaStream_t);
} Way;

/* read_weights.cu: the read-only kernel over `bytes` of p. */
cudaError_t dense_read_weights(const void *p, size_t bytes, void *sink, cudaStream_t stream);

static const DenseWeights *weights;
static uint32_t *hpos;                 /* pinned: pos */
static void *floor_bytes, *floor_sink; /* the read way's weights' worth of bytes, its sink */

static void step_cgc(Way *w, cudaStream_t s) {
  CGRT(dense_block_set_pos(w->g, KEYS - 1));
  CGRT(dense_block_launch(w->g, s));
}

static void step_stream(Way *w, cudaStream_t s) {
  CUDA(cudaMemcpyAsync(w->st.pos, hpos, sizeof *hpos, cudaMemcpyHostToDevice, s));
  CUDA(dense_block_stream_step(weights, &w->st, s));
}

static void step_capture(Way *w, cudaStream_t s) {
  CUDA(cudaMemcpyAsync(w->st.pos, hpos, sizeof *hpos, cudaMemcpyHostToDevice, s));
  CUDA(cudaGraphLaunch(w->exec, s));
}

static void step_read(Way *w, cudaStream_t s) { CUDA(cudaGraphLaunch(w->exec, s)); }

static cudaError_t issue_step(const DenseState *st, cudaStream_t s) {
  return dense_block_stream_step(weights, st, s);
}

static cudaError_t issue_read(const DenseState *st, cudaStream_t s) {
  (void)st;
  return dense_read_weights(floor_bytes, DB_WEIGHT_BYTES, floor_sink, s);
}

static void row(const char *way, const char *metric, double value) {
  bench_row("dense", CASE, way, metric, value);
}

static cudaGraphExec_t capture(cudaError_t (*issue)(const DenseState *, cudaStream_t),
                               const DenseState *st, cudaStream_t s) {
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  CUDA(issue(st, s));
  CUDA(cudaStreamEndCapture(s, &graph));
  CUDA(cudaGraphInstantiate(&exec, graph, 0));
  CUDA(cudaGraphUpload(exec, s));
  CUDA(cudaStreamSynchronize(s));
  CUDA(cudaGraphDestroy(graph));
  return exec;
}

static void step_way(void *ctx, int w, cudaStream_t s) {
  Way *ways = ctx;
  ways[w].step(&ways[w], s);
}

/* us a step of each way: k steps between two events, in shuffled rounds. */
static void time_ways(Way *ways, int k, cudaStream_t s, double *out) {
  bench_event_ways(WAYS, k, ROUNDS, step_way, NULL, ways, s, out);
}

/* Host time of issuing one step: `steps` issued without waiting. */
static double host_cost(Way *w, int steps, cudaStream_t s) {
  double t[15];
  for (int r = 0; r < 15; r++) {
    CUDA(cudaStreamSynchronize(s));
    double t0 = bench_now_us();
    for (int i = 0; i < steps; i++)
      w->step(w, s);
    t[r] = (bench_now_us() - t0) / steps;
  }
  CUDA(cudaStreamSynchronize(s));
  return bench_median(t, 15);
}

int main(void) {
  if (bench_no_gpu("bench_dense"))
    return 77;
  cudaStream_t s;
  CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  DenseWeights w;
  dense_weights_create(&w, 42);
  weights = &w;
  CUDA(cudaHostAlloc((void **)&hpos, sizeof *hpos, cudaHostAllocDefault));
  CUDA(cudaMalloc(&floor_bytes, DB_WEIGHT_BYTES));
  CUDA(cudaMemset(floor_bytes, 0, DB_WEIGHT_BYTES));
  CUDA(cudaMalloc(&floor_sink, 16));

  /* One KV cache for all ways, its first KEYS rows written by KEYS steps
   * (every way then writes row KEYS - 1 again and reads rows 0 .. KEYS - 1). */
  Way ways[WAYS] = {{.name = "cgc", .step = step_cgc},
                    {.name = "stream", .step = step_stream},
                    {.name = "capture", .step = step_capture},
                    {.name = "read", .step = step_read}};
  for (int i = 0; i < WAYS; i++)
    dense_state_create(&ways[i].st, i == 0);
  void *cache = ways[0].st.cache;
  uint16_t x0[DB_D];
  uint64_t rng = 7;
  for (int i = 0; i < DB_D; i++)
    x0[i] = dense_to_bf16(dense_uniform(&rng));
  for (int i = 0; i < WAYS; i++) {
    ways[i].st.cache = cache;
    CUDA(cudaMemcpy(ways[i].st.x, x0, sizeof x0, cudaMemcpyHostToDevice));
  }
  CUDA(cudaDeviceSynchronize()); /* before the non-blocking stream reads x */
  for (uint32_t p = 0; p < KEYS; p++) {
    *hpos = p;
    CUDA(cudaMemcpyAsync(ways[1].st.pos, hpos, sizeof *hpos, cudaMemcpyHostToDevice, s));
    CUDA(dense_block_stream_step(&w, &ways[1].st, s));
    CUDA(cudaStreamSynchronize(s)); /* before hpos changes */
  }
  *hpos = KEYS - 1;

  dense_block_extern ext = {ways[0].st.x, w.attn_norm, w.w_qa, w.kv_norm, w.w_ukt,    w.w_uv,
                            w.w_o,        w.ffn_norm,  w.w_gu, w.w_down,  w.inv_freq, cache};
  cgrt_options opt = CGRT_OPTIONS_INIT;
  opt.stream = s;
  CGRT(dense_block_create(&ways[0].g, &ext, &opt));
  ways[2].exec = capture(issue_step, &ways[2].st, s);
  ways[3].exec = capture(issue_read, &ways[3].st, s);

  printf("section,case,way,metric,value\n");
  row("weights", "bytes", (double)DB_WEIGHT_BYTES);
  double t[WAYS];
  time_ways(ways, 1, s, t);
  for (int i = 0; i < WAYS; i++)
    row(ways[i].name, "us_per_token", t[i]);
  time_ways(ways, QUEUED, s, t);
  for (int i = 0; i < WAYS; i++)
    row(ways[i].name, "us_per_token_queued", t[i]);
  for (int i = 0; i < 3; i++)
    row(ways[i].name, "host_us", host_cost(&ways[i], i == 1 ? 4 : HOST_STEPS, s));

  dense_block_destroy(ways[0].g);
  CUDA(cudaGraphExecDestroy(ways[2].exec));
  CUDA(cudaGraphExecDestroy(ways[3].exec));
  for (int i = 0; i < WAYS; i++) {
    ways[i].st.cache = i == 0 ? cache : NULL;
    dense_state_destroy(&ways[i].st, i == 0);
  }
  CUDA(cudaFree(floor_bytes));
  CUDA(cudaFree(floor_sink));
  CUDA(cudaFreeHost(hpos));
  dense_weights_destroy(&w);
  CUDA(cudaStreamDestroy(s));
  return 0;
}
