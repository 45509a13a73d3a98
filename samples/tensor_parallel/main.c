/* tensor_parallel: the FFN stack of samples/dense_block (4 SwiGLU layers of
 * hidden 2048 and intermediate 10,944, bf16, on the kernel library) split
 * over RANKS GPUs, one
 * process a GPU: RANKS processes forked here, each on GPU `rank`, joined by
 * cgrt_nccl_init with the unique id that rank 0 makes and passes through a
 * pipe.  Each rank makes its own shard of the weights (a function of the
 * seed and each value's place, so no rank needs the others'), creates
 * tp_ffn with its communicator, and runs 64 positions from it: each
 * position's token vector copied into x, the graph launched (4 layers, the
 * residual carried through them, an all_reduce a layer), x copied out;
 * nothing synchronised until the end.
 *
 * Checked on rank 0: every rank's 64 results are the same bits (the
 * all-reduce gives every rank the sum); they agree with the same stack
 * unsplit on one GPU (ffn_full, the whole weights, no collective) within
 * a relative error of 3e-2 a position; and positions 0 and 63 of both
 * agree with the model computed on the CPU in double, within 3e-2.  bf16
 * keeps 8 significant bits, so each rounding is off by up to 2^-8 = 3.9e-3
 * relative: split, each layer rounds its partials (rank 0's with x in it)
 * to bf16 before the all-reduce adds them and rounds again, where one GPU
 * rounds once; a wrong shard, share or sum is off by far more.  With fewer
 * GPUs than RANKS it says so and exits 77 (skipped). */
#include "cgrt_nccl.h"
#include "check.h"
#include "ranks.h"
#include "tensor_parallel.h"
#include "tensor_parallel_graph.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { N = TP_POSITIONS * TP_D };

static const uint64_t SEED = 0x7e45011a9a11e1u;
static const double TOLERANCE = 3e-2;

static void *xmalloc(size_t bytes) {
  void *p = malloc(bytes);
  if (!p) {
    fprintf(stderr, "tensor_parallel: out of host memory\n");
    exit(1);
  }
  return p;
}

/* Device memory of NaN: every byte 0xff. */
static void *poisoned(size_t bytes) {
  void *d;
  CUDA(cudaMalloc(&d, bytes));
  CUDA(cudaMemset(d, 0xff, bytes));
  return d;
}

/* The 64 token vectors, bf16 [TP_POSITIONS, TP_D], on the host. */
static uint16_t *host_tokens(void) {
  uint16_t *t = xmalloc(N * sizeof *t);
  for (uint32_t p = 0; p < TP_POSITIONS; p++)
    for (uint32_t i = 0; i < TP_D; i++)
      t[p * TP_D + i] = tp_weight(SEED, TP_TOKEN, 0, p, i, 1.0f);
  return t;
}

/* A shard (or, rank 0 of 1, the whole model) on this process's GPU. */
static void make_shard(void **w_gu, void **w_down, void **norm, int rank, int ranks,
                       cudaStream_t s) {
  const size_t fr = TP_F / ranks;
  CUDA(cudaMalloc(w_gu, (size_t)TP_LAYERS * 2 * fr * TP_D * sizeof(uint16_t)));
  CUDA(cudaMalloc(w_down, (size_t)TP_LAYERS * TP_D * fr * sizeof(uint16_t)));
  CUDA(cudaMalloc(norm, (size_t)TP_LAYERS * TP_D * sizeof(uint16_t)));
  CUDA(tp_make_shard(*w_gu, *w_down, *norm, SEED, TP_F, rank, ranks, s));
}

/* The 64 positions on `s` through the graph's x: each token in, the
 * launch, x out to outs[p]; between events e0 and e1.  Nothing waits. */
#define RUN_POSITIONS(G, g, x, tokens, outs, s, e0, e1)                                            \
  do {                                                                                             \
    CUDA(cudaEventRecord(e0, s));                                                                  \
    for (size_t p_ = 0; p_ < TP_POSITIONS; p_++) {                                                 \
      CUDA(cudaMemcpyAsync(x, (uint16_t *)(tokens) + p_ * TP_D, TP_D * 2,                          \
                           cudaMemcpyDeviceToDevice, s));                                          \
      CGRT(G##_launch(g, s));                                                                      \
      CUDA(cudaMemcpyAsync((uint16_t *)(outs) + p_ * TP_D, x, TP_D * 2, cudaMemcpyDeviceToDevice,  \
                           s));                                                                    \
    }                                                                                              \
    CUDA(cudaEventRecord(e1, s));                                                                  \
  } while (0)

static float elapsed_ms(cudaEvent_t e0, cudaEvent_t e1) {
  float ms;
  CUDA(cudaEventElapsedTime(&ms, e0, e1));
  CUDA(cudaEventDestroy(e0));
  CUDA(cudaEventDestroy(e1));
  return ms;
}

static double round_bf16(double v) { return tp_from_bf16(tp_to_bf16((float)v)); }

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

static void to_double(const uint16_t *v, double *out) {
  for (int i = 0; i < TP_D; i++)
    out[i] = tp_from_bf16(v[i]);
}

/* One position through the model on the CPU in double, as the model
 * writes it: RMSNorm, gate and up, SwiGLU, down, the residual add; what the
 * model keeps in bf16 rounded to bf16.  The weights
 * are made here again, value by value, as the GPU made them. */
static void cpu_position(const uint16_t *token, double *x) {
  const float sd = sqrtf(3.0f / TP_D), sf = sqrtf(3.0f / (float)TP_F);
  double *h = xmalloc(TP_D * sizeof *h), *act = xmalloc(TP_F * sizeof *act);
  to_double(token, x);
  for (uint32_t l = 0; l < TP_LAYERS; l++) {
    double ss = 0;
    for (int c = 0; c < TP_D; c++)
      ss += x[c] * x[c];
    const double r = 1 / sqrt(ss / TP_D + 1e-6);
    for (uint32_t c = 0; c < TP_D; c++)
      h[c] =
          round_bf16(round_bf16(x[c] * r) * tp_from_bf16(tp_weight(SEED, TP_NORM, l, 0, c, 0.0f)));
    for (uint32_t j = 0; j < TP_F; j++) {
      double gate = 0, up = 0;
      for (uint32_t c = 0; c < TP_D; c++) {
        gate += tp_from_bf16(tp_weight(SEED, TP_GATE, l, j, c, sd)) * h[c];
        up += tp_from_bf16(tp_weight(SEED, TP_UP, l, j, c, sd)) * h[c];
      }
      gate = round_bf16(gate), up = round_bf16(up);
      act[j] = round_bf16(round_bf16(gate / (1 + exp(-gate))) * up);
    }
    for (uint32_t i = 0; i < TP_D; i++) {
      double y = 0;
      for (uint32_t j = 0; j < TP_F; j++)
        y += tp_from_bf16(tp_weight(SEED, TP_DOWN, l, i, j, sf)) * act[j];
      x[i] = round_bf16(x[i] + round_bf16(y));
    }
  }
  free(h), free(act);
}

/* Rank 0's checks, given every rank's results (outs[r], N values each) and
 * the tokens; prints the line; 0 when all pass. */
static int check(uint16_t *const *outs, const uint16_t *tokens, float ms_tp, cudaStream_t s) {
  int ranks_agree = 1;
  for (int r = 1; r < TP_RANKS; r++)
    if (memcmp(outs[0], outs[r], N * sizeof(uint16_t))) {
      ranks_agree = 0;
      fprintf(stderr, "tensor_parallel: rank %d's results differ from rank 0's\n", r);
    }

  /* The same 64 positions, unsplit, on this GPU. */
  void *w_gu, *w_down, *norm;
  make_shard(&w_gu, &w_down, &norm, 0, 1, s);
  void *x = poisoned(TP_D * 2), *outs_d = poisoned(N * 2), *tokens_d;
  CUDA(cudaMalloc(&tokens_d, N * 2));
  CUDA(cudaMemcpy(tokens_d, tokens, N * 2, cudaMemcpyHostToDevice));
  CUDA(cudaDeviceSynchronize()); /* before the non-blocking stream reads them */
  ffn_full_extern ext = {x, norm, w_gu, w_down};
  cgrt_options opt = CGRT_OPTIONS_INIT;
  opt.stream = s;
  ffn_full *g;
  CGRT(ffn_full_create(&g, &ext, &opt));
  cudaEvent_t e0, e1;
  CUDA(cudaEventCreate(&e0));
  CUDA(cudaEventCreate(&e1));
  RUN_POSITIONS(ffn_full, g, x, tokens_d, outs_d, s, e0, e1);
  CUDA(cudaStreamSynchronize(s));
  float ms_full = elapsed_ms(e0, e1);
  uint16_t *full = xmalloc(N * sizeof *full);
  CUDA(cudaMemcpy(full, outs_d, N * 2, cudaMemcpyDeviceToHost));
  ffn_full_destroy(g);
  CUDA(cudaFree(w_gu));
  CUDA(cudaFree(w_down));
  CUDA(cudaFree(norm));
  CUDA(cudaFree(x));
  CUDA(cudaFree(outs_d));
  CUDA(cudaFree(tokens_d));

  double got[TP_D], want[TP_D], worst = 0;
  int worst_p = 0, same = !memcmp(outs[0], full, N * sizeof *full);
  for (int p = 0; p < TP_POSITIONS; p++) {
    to_double(outs[0] + (size_t)p * TP_D, got);
    to_double(full + (size_t)p * TP_D, want);
    double e = rel_error(got, want, TP_D);
    if (!(e <= worst)) /* NaN too */
      worst = e, worst_p = p;
  }
  int close = worst < TOLERANCE;
  if (!close)
    fprintf(stderr,
            "tensor_parallel: position %d: relative error %.2e against one GPU (tolerance %.0e)\n",
            worst_p, worst, TOLERANCE);

  /* Positions 0 and 63 on the CPU, in double. */
  static const int cpu_p[2] = {0, TP_POSITIONS - 1};
  double cpu_worst = 0;
  for (int k = 0; k < 2; k++) {
    const int p = cpu_p[k];
    cpu_position(tokens + (size_t)p * TP_D, want);
    for (int which = 0; which < 2; which++) {
      to_double((which ? full : outs[0]) + (size_t)p * TP_D, got);
      double e = rel_error(got, want, TP_D);
      if (!(e < TOLERANCE))
        fprintf(stderr, "tensor_parallel: position %d, %s: relative error %.2e against the CPU\n",
                p, which ? "one GPU" : "split", e);
      cpu_worst = e > cpu_worst || isnan(e) ? e : cpu_worst;
    }
  }
  int cpu_close = cpu_worst < TOLERANCE;
  int ok = ranks_agree && close && cpu_close;
  printf("tensor_parallel: %d rank%s, %d positions x %d layers (F %d, %d a rank): %s; against "
         "one GPU unsplit: relative error <= %.1e%s; positions 0 and %d against the CPU: <= "
         "%.1e; %.1f us a position (one GPU unsplit %.1f): %s\n",
         TP_RANKS, TP_RANKS == 1 ? "" : "s", TP_POSITIONS, TP_LAYERS, TP_F, TP_FR,
         TP_RANKS == 1 ? "one rank"
         : ranks_agree ? "every rank holds the same bits"
                       : "RANKS DIFFER",
         worst, same ? " (the same bits)" : "", TP_POSITIONS - 1, cpu_worst,
         1000.0 * ms_tp / TP_POSITIONS, 1000.0 * ms_full / TP_POSITIONS, ok ? "OK" : "FAILED");
  free(full);
  return ok ? 0 : 1;
}

/* The processes: the ranks, and a pipe from each rank to rank 0 for its
 * results (result[r]). */
typedef struct Procs {
  Ranks ranks;
  int result[TP_RANKS][2];
} Procs;

/* Rank `rank`: its shard, its graph, 64 positions; ranks other than 0 send
 * their results to rank 0, which checks. */
static int run_rank(int rank, void *ctx) {
  Procs *p = ctx;
  /* Rank 0 reads the results, rank q writes result[q]: every other end is
   * closed, so that a rank that dies ends rank 0's read. */
  int result_fd[TP_RANKS];
  for (int q = 0; q < TP_RANKS; q++) {
    result_fd[q] = rank == 0 ? p->result[q][0] : p->result[q][1];
    close(rank == 0 || q != rank ? p->result[q][1] : p->result[q][0]);
    if (rank != 0 && q != rank)
      close(p->result[q][0]);
  }
  unsigned char id[RANKS_ID_BYTES];
  if (ranks_share_id(&p->ranks, rank, id))
    return 1;
  CUDA(cudaSetDevice(rank));
  void *comm;
  CGRT(cgrt_nccl_init(&comm, TP_RANKS, id, rank, 60.0));
  cudaStream_t s;
  CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

  void *w_gu, *w_down, *norm, *tokens_d;
  make_shard(&w_gu, &w_down, &norm, rank, TP_RANKS, s);
  uint16_t *tokens = host_tokens();
  CUDA(cudaMalloc(&tokens_d, N * 2));
  CUDA(cudaMemcpy(tokens_d, tokens, N * 2, cudaMemcpyHostToDevice));
  void *x = poisoned(TP_D * 2), *outs_d = poisoned(N * 2);
  CUDA(cudaDeviceSynchronize()); /* before the non-blocking stream reads them */

  tp_ffn_extern ext = {x, norm, w_gu, w_down};
  cgrt_options opt = CGRT_OPTIONS_INIT;
  opt.comm = comm;
  opt.stream = s;
  tp_ffn *g;
  CGRT(tp_ffn_create(&g, &ext, &opt));
  /* The graph's own buffers start as NaN, so that a read of an unwritten
   * value shows. */
  CUDA(cudaMemsetAsync(tp_ffn_buffer_act(g), 0xff, TP_FR * 2, s));
  CUDA(cudaMemsetAsync(tp_ffn_buffer_part(g), 0xff, TP_D * 2, s));
  cudaEvent_t e0, e1;
  CUDA(cudaEventCreate(&e0));
  CUDA(cudaEventCreate(&e1));
  RUN_POSITIONS(tp_ffn, g, x, tokens_d, outs_d, s, e0, e1);
  CGRT(cgrt_nccl_wait(comm, s, 120.0)); /* a rank that dies ends this one too */
  float ms = elapsed_ms(e0, e1);
  uint16_t *outs[TP_RANKS];
  outs[rank] = xmalloc(N * sizeof(uint16_t));
  CUDA(cudaMemcpy(outs[rank], outs_d, N * 2, cudaMemcpyDeviceToHost));
  tp_ffn_destroy(g);
  cgrt_nccl_free(comm);
  CUDA(cudaFree(w_gu));
  CUDA(cudaFree(w_down));
  CUDA(cudaFree(norm));
  CUDA(cudaFree(x));
  CUDA(cudaFree(outs_d));
  CUDA(cudaFree(tokens_d));

  int rc = 0;
  if (rank != 0) {
    rc = ranks_write(result_fd[rank], outs[rank], N * sizeof(uint16_t)) ? 1 : 0;
  } else {
    for (int r = 1; r < TP_RANKS; r++) {
      outs[r] = xmalloc(N * sizeof(uint16_t));
      if (ranks_read(result_fd[r], outs[r], N * sizeof(uint16_t))) {
        fprintf(stderr, "tensor_parallel: rank %d sent no results\n", r);
        return 1;
      }
    }
    rc = check(outs, tokens, ms, s);
    for (int r = 1; r < TP_RANKS; r++)
      free(outs[r]);
  }
  free(outs[rank]);
  free(tokens);
  CUDA(cudaStreamDestroy(s));
  return rc;
}

int main(void) {
  int gpus = ranks_gpus();
  if (gpus < TP_RANKS) {
    printf("tensor_parallel%d: skipped: %d rank%s need%s %d GPU%s, and this machine has %d\n",
           TP_RANKS, TP_RANKS, TP_RANKS == 1 ? "" : "s", TP_RANKS == 1 ? "s" : "", TP_RANKS,
           TP_RANKS == 1 ? "" : "s", gpus);
    return 77;
  }
  Procs p;
  for (int r = 0; r < TP_RANKS; r++)
    if (pipe(p.result[r]))
      return 1;
  if (ranks_start(&p.ranks, TP_RANKS, run_rank, &p))
    return 1;
  for (int r = 0; r < TP_RANKS; r++)
    close(p.result[r][0]), close(p.result[r][1]);
  return ranks_wait(&p.ranks, "tensor_parallel");
}
