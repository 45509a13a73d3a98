/* gpu.h: what the C benchmark programs share on the GPU: the exit without
 * one, and several ways of one step timed against each other between two
 * CUDA events (with check.h's CUDA and timing.h's shuffle and median). */
#ifndef BENCH_GPU_H
#define BENCH_GPU_H

#include "check.h"
#include "timing.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* Whether CUDA sees no GPU, saying "WHO: no GPU" on stderr: the program
 * then exits 77 (a skipped test). */
static inline int bench_no_gpu(const char *who) {
  int n = 0;
  if (cudaGetDeviceCount(&n) == cudaSuccess && n > 0)
    return 0;
  fprintf(stderr, "%s: no GPU\n", who);
  return 1;
}

/* us a step of each of n ways, into out[]: 10 steps of each way as a
 * warm-up, then `rounds` rounds in which the ways take turns in a new
 * shuffled order (from BENCH_SEED: alike on every rank of a run over
 * several GPUs), each way's k steps between two events on s, after
 * before(ctx) where before is given; per way, the median of its rounds.
 * step(ctx, w, s) issues a step of way w on s. */
static inline void bench_event_ways(int n, int k, int rounds,
                                    void (*step)(void *ctx, int way, cudaStream_t s),
                                    void (*before)(void *ctx), void *ctx, cudaStream_t s,
                                    double *out) {
  double *t = (double *)malloc((size_t)rounds * n * sizeof *t);
  int *order = (int *)malloc((size_t)n * sizeof *order);
  cudaEvent_t e0, e1;
  CUDA(cudaEventCreate(&e0));
  CUDA(cudaEventCreate(&e1));
  for (int w = 0; w < n; w++)
    for (int i = 0; i < 10; i++)
      step(ctx, w, s);
  CUDA(cudaStreamSynchronize(s));
  uint64_t rng = BENCH_SEED;
  for (int w = 0; w < n; w++)
    order[w] = w;
  for (int r = 0; r < rounds; r++) {
    bench_shuffle(order, n, &rng);
    for (int i = 0; i < n; i++) {
      float ms;
      if (before)
        before(ctx);
      CUDA(cudaEventRecord(e0, s));
      for (int j = 0; j < k; j++)
        step(ctx, order[i], s);
      CUDA(cudaEventRecord(e1, s));
      CUDA(cudaEventSynchronize(e1));
      CUDA(cudaEventElapsedTime(&ms, e0, e1));
      t[order[i] * rounds + r] = 1000.0 * ms / k;
    }
  }
  for (int w = 0; w < n; w++)
    out[w] = bench_median(t + w * rounds, rounds);
  CUDA(cudaEventDestroy(e0));
  CUDA(cudaEventDestroy(e1));
  free(order);
  free(t);
}

#endif
