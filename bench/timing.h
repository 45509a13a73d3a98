/* timing.h: what the benchmark programs share to time and report: the
 * host clock, the median, the random order ways take turns in, and the
 * CSV row that bench/rows.py reads.  C and C++ (the .cu programs). */
#ifndef BENCH_TIMING_H
#define BENCH_TIMING_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* The host's monotonic clock, in microseconds. */
static inline double bench_now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static inline int bench_cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* The median of v[0..n), which it sorts in place. */
static inline double bench_median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
  return v[n / 2];
}

/* The seed of the order the ways take turns in: the same sequence every
 * run, and on every rank of a run over several GPUs. */
#define BENCH_SEED UINT64_C(0x9e3779b97f4a7c15)

/* A new random order of order[0..n) (Fisher-Yates over xorshift64, whose
 * state is *rng), so that drift in clocks or load and the effect of what
 * ran just before fall on every way alike. */
static inline void bench_shuffle(int *order, int n, uint64_t *rng) {
  for (int w = n - 1; w > 0; w--) {
    *rng ^= *rng << 13, *rng ^= *rng >> 7, *rng ^= *rng << 17;
    int j = (int)(*rng % (uint64_t)(w + 1)), tmp = order[w];
    order[w] = order[j], order[j] = tmp;
  }
}

/* One row of results.csv, "section,case,way,metric,value", flushed at once
 * so that a run that fails later keeps what it measured. */
static inline void bench_row(const char *section, const char *name, const char *way,
                             const char *metric, double value) {
  printf("%s,%s,%s,%s,%.4f\n", section, name, way, metric, value);
  fflush(stdout);
}

#endif
