/* bench_tp: samples/tensor_parallel's FFN stack (4 layers, hidden 2048,
 * intermediate TP_F, bf16) split over TP_RANKS GPUs, one process a GPU
 * (forked here, joined by cgrt_nccl_init as the sample does), timed ways:
 *
 *   cgc          tp_ffn, cgc's graph of one rank's step (an all_reduce node
 *                a layer): launch
 *   capture      the same kernels (without programmatic dependent launch)
 *                and ncclAllReduce calls stream-captured into a CUDA
 *                graph by hand: launch
 *   reduce_cgc   reduce_only, a cgc graph of one all_reduce node (2048 bf16)
 *   reduce_hand  the same ncclAllReduce, same buffers and communicator,
 *                captured into a CUDA graph by hand
 *   full         ffn_full, the stack unsplit in one GPU's graph, without
 *                collectives (rank 0, after the others are done)
 *
 * us_per_step: one step between two CUDA events, the ranks lined up first
 * by an all-reduce of one value (so that no rank's time holds the others'
 * late start); us_per_step_queued: 16 steps back to back, per step.  After
 * a warm-up, in rounds whose order is shuffled the same way on every rank,
 * the median; rank 0's times.  Prints CSV rows "section,case,way,metric,
 * value" (section tp, case fF_rRANKS); exits 77 with fewer GPUs than
 * ranks. */
#include "cgrt_nccl.h"
#include "check.h"
#include "gpu.h"
#include "ranks.h"
#include "tensor_parallel.h"
#include "tensor_parallel_graph.h"
#include "timing.h"

#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>

enum { WAYS = 4, ROUNDS = 200, QUEUED = 16 };

static void *comm;
static cudaStream_t stream;
static float *one; /* the barrier's value */

/* A call on cgrt_nccl_init's nonblocking communicator is done when the
 * communicator says so. */
static ncclResult_t settle(ncclResult_t r) {
  while (r == ncclInProgress)
    if (ncclCommGetAsyncError((ncclComm_t)comm, &r) != ncclSuccess)
      return ncclInternalError;
  return r;
}

static cudaError_t reduce_nccl(void *ctx, const void *part, void *x, size_t n, cudaStream_t s) {
  ncclResult_t r = settle(ncclAllReduce(part, x, n, ncclBfloat16, ncclSum, (ncclComm_t)ctx, s));
  if (r != ncclSuccess) {
    fprintf(stderr, "bench_tp: ncclAllReduce: %s\n", ncclGetErrorString(r));
    return cudaErrorUnknown;
  }
  return cudaSuccess;
}

/* Every rank's stream reaches here before what follows runs. */
static void barrier(void) {
  ncclResult_t r =
      settle(ncclAllReduce(one, one, 1, ncclFloat32, ncclSum, (ncclComm_t)comm, stream));
  if (r != ncclSuccess) {
    fprintf(stderr, "bench_tp: barrier: %s\n", ncclGetErrorString(r));
    exit(1);
  }
}

typedef struct Way {
  const char *name;
  void *g;              /* a cgc graph */
  cudaGraphExec_t exec; /* or a hand-captured one */
  void (*step)(struct Way *);
} Way;

static void step_tp(Way *w) { CGRT(tp_ffn_launch((tp_ffn *)w->g, stream)); }
static void step_reduce(Way *w) { CGRT(reduce_only_launch((reduce_only *)w->g, stream)); }
static void step_full(Way *w) { CGRT(ffn_full_launch((ffn_full *)w->g, stream)); }
static void step_exec(Way *w) { CUDA(cudaGraphLaunch(w->exec, stream)); }

static void row(const char *way, const char *metric, double value) {
  char name[32];
  snprintf(name, sizeof name, "f%d_r%d", TP_F, TP_RANKS);
  bench_row("tp", name, way, metric, value);
}

static void step_way(void *ctx, int w, cudaStream_t s) {
  Way *ways = ctx;
  (void)s; /* stream, which the steps launch on */
  ways[w].step(&ways[w]);
}

static void line_up_ranks(void *ctx) {
  (void)ctx;
  barrier();
}

/* us a step of each way: k steps between two events, in rounds shuffled
 * alike on every rank; lined up first when `line_up`. */
static void time_ways(Way *ways, int n, int k, int line_up, double *out) {
  bench_event_ways(n, k, ROUNDS, step_way, line_up ? line_up_ranks : NULL, ways, stream, out);
}

static cudaGraphExec_t instantiate(cudaGraph_t graph) {
  cudaGraphExec_t exec;
  CUDA(cudaGraphInstantiate(&exec, graph, 0));
  CUDA(cudaGraphUpload(exec, stream));
  CUDA(cudaStreamSynchronize(stream));
  CUDA(cudaGraphDestroy(graph));
  return exec;
}

static void *device(size_t bytes) {
  void *d;
  CUDA(cudaMalloc(&d, bytes));
  CUDA(cudaMemset(d, 0, bytes));
  return d;
}

static int run_rank(int rank, void *ranks) {
  unsigned char id[RANKS_ID_BYTES];
  if (ranks_share_id(ranks, rank, id))
    return 1;
  CUDA(cudaSetDevice(rank));
  CGRT(cgrt_nccl_init(&comm, TP_RANKS, id, rank, 60.0));
  CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  one = device(sizeof *one);
  const uint64_t seed = 42;
  void *w_gu = device((size_t)TP_LAYERS * 2 * TP_FR * TP_D * 2);
  void *w_down = device((size_t)TP_LAYERS * TP_D * TP_FR * 2);
  void *norm = device((size_t)TP_LAYERS * TP_D * 2);
  CUDA(tp_make_shard(w_gu, w_down, norm, seed, TP_F, rank, TP_RANKS, stream));
  /* x: a token's vector, rewritten by every step (each adds to it; 200
   * rounds of steps leave it finite: the norm keeps each layer's addition
   * about as large as the token). */
  uint16_t x0[TP_D];
  for (uint32_t i = 0; i < TP_D; i++)
    x0[i] = tp_weight(seed, TP_TOKEN, 0, 0, i, 1.0f);
  void *x_cgc = device(TP_D * 2), *x_hand = device(TP_D * 2);
  void *part = device(TP_D * 2), *x_reduce = device(TP_D * 2); /* the reduce ways' */
  CUDA(cudaMemcpy(x_cgc, x0, sizeof x0, cudaMemcpyHostToDevice));
  CUDA(cudaMemcpy(x_hand, x0, sizeof x0, cudaMemcpyHostToDevice));
  TpBuffers hb = {
      w_gu, w_down, norm, x_hand, device(TP_FR * 2), device(TP_D * 2), device(sizeof(uint32_t))};
  uint32_t me = (uint32_t)rank;
  CUDA(cudaMemcpy((void *)hb.me, &me, sizeof me, cudaMemcpyHostToDevice));
  CUDA(cudaDeviceSynchronize());

  cgrt_options opt = CGRT_OPTIONS_INIT;
  opt.comm = comm;
  opt.stream = stream;
  Way ways[WAYS] = {{.name = "cgc", .step = step_tp},
                    {.name = "capture", .step = step_exec},
                    {.name = "reduce_cgc", .step = step_reduce},
                    {.name = "reduce_hand", .step = step_exec}};
  tp_ffn_extern ext = {x_cgc, norm, w_gu, w_down};
  CGRT(tp_ffn_create((tp_ffn **)&ways[0].g, &ext, &opt));
  cudaGraph_t graph;
  CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  CUDA(tp_stream_step(&hb, reduce_nccl, comm, stream));
  CUDA(cudaStreamEndCapture(stream, &graph));
  ways[1].exec = instantiate(graph);
  reduce_only_extern rext = {x_reduce, part};
  CGRT(reduce_only_create((reduce_only **)&ways[2].g, &rext, &opt));
  CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  CUDA(reduce_nccl(comm, part, x_reduce, TP_D, stream));
  CUDA(cudaStreamEndCapture(stream, &graph));
  ways[3].exec = instantiate(graph);

  double t[WAYS];
  if (rank == 0)
    printf("section,case,way,metric,value\n");
  time_ways(ways, WAYS, 1, 1, t);
  if (rank == 0)
    for (int i = 0; i < WAYS; i++)
      row(ways[i].name, "us_per_step", t[i]);
  time_ways(ways, WAYS, QUEUED, 1, t);
  if (rank == 0)
    for (int i = 0; i < WAYS; i++)
      row(ways[i].name, "us_per_step_queued", t[i]);
  CGRT(cgrt_nccl_wait(comm, stream, 60.0));
  tp_ffn_destroy((tp_ffn *)ways[0].g);
  reduce_only_destroy((reduce_only *)ways[2].g);
  CUDA(cudaGraphExecDestroy(ways[1].exec));
  CUDA(cudaGraphExecDestroy(ways[3].exec));
  cgrt_nccl_free(comm);
  void *all[] = {w_gu, w_down, x_hand, hb.act, hb.part, (void *)hb.me, part, x_reduce, one};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++)
    CUDA(cudaFree(all[i]));

  if (rank == 0) { /* one GPU, the whole stack, no collective */
    w_gu = device((size_t)TP_LAYERS * 2 * TP_F * TP_D * 2);
    w_down = device((size_t)TP_LAYERS * TP_D * TP_F * 2);
    CUDA(tp_make_shard(w_gu, w_down, norm, seed, TP_F, 0, 1, stream));
    CUDA(cudaMemcpy(x_cgc, x0, sizeof x0, cudaMemcpyHostToDevice));
    CUDA(cudaDeviceSynchronize());
    ffn_full_extern fext = {x_cgc, norm, w_gu, w_down};
    opt.comm = NULL;
    Way full = {.name = "full", .step = step_full};
    CGRT(ffn_full_create((ffn_full **)&full.g, &fext, &opt));
    time_ways(&full, 1, 1, 0, t);
    row("full", "us_per_step", t[0]);
    time_ways(&full, 1, QUEUED, 0, t);
    row("full", "us_per_step_queued", t[0]);
    ffn_full_destroy((ffn_full *)full.g);
    CUDA(cudaFree(w_gu));
    CUDA(cudaFree(w_down));
  }
  CUDA(cudaFree(norm));
  CUDA(cudaFree(x_cgc));
  CUDA(cudaStreamDestroy(stream));
  return 0;
}

int main(void) {
  int gpus = ranks_gpus();
  if (gpus < TP_RANKS) {
    fprintf(stderr, "bench_tp: %d rank%s need%s %d GPU%s, and this machine has %d\n", TP_RANKS,
            TP_RANKS == 1 ? "" : "s", TP_RANKS == 1 ? "s" : "", TP_RANKS, TP_RANKS == 1 ? "" : "s",
            gpus);
    return 77;
  }
  Ranks ranks;
  if (ranks_start(&ranks, TP_RANKS, run_rank, &ranks))
    return 1;
  return ranks_wait(&ranks, "bench_tp");
}
