/* solver: conjugate gradient on the 1024 x 1024 Poisson problem, iterating
 * inside one graph launch until |r| / |b| < 1e-10, checked on the CPU; and
 * the same iterations driven from the host (launch one, copy the residual
 * back, decide) for comparison.
 *
 * The right-hand side is b = A u for a known u, made on the CPU, so the
 * solve is checked against the exact solution of the discrete system,
 * and the residual of the device's x is recomputed on the CPU in double.
 * The reductions are deterministic, so every way of running the solver
 * takes the same iterations to the same bits: the device loop that checks
 * after each iteration stops exactly where the host loop does, and the
 * loops that check every 4 or 16 iterations stop at the next multiple.
 *
 * Quick (CGC_SAMPLE_QUICK=1, as under compute-sanitizer): u without the
 * noise, a smooth field that CG solves in tens of iterations instead of
 * thousands, and one timed solve a way instead of the median of RUNS after
 * an untimed one. */
#include "check.h"
#include "solver_graph.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { N = 1024, CELLS = N * N, RUNS = 3 };
enum { RR, BB, BETA, RESID, ITERS };
static const double TOL = 1e-10;

typedef struct Device {
  double *b, *x, *r, *p, *ap, *state;
} Device;

typedef struct Result {
  const char *way;
  int check_every;
  double iters, resid, ms;
  double *x;
} Result;

static uint64_t rng;
static double uniform01(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (rng >> 11) * 0x1.0p-53;
}

/* y = A v, the 5-point stencil, zero outside the grid. */
static void stencil(const double *v, double *y) {
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) {
      size_t k = (size_t)i * N + j;
      double s = 4 * v[k];
      if (j > 0)
        s -= v[k - 1];
      if (j + 1 < N)
        s -= v[k + 1];
      if (i > 0)
        s -= v[k - N];
      if (i + 1 < N)
        s -= v[k + N];
      y[k] = s;
    }
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* The median of RUNS timed calls of run(), after one untimed; quick, one
 * timed call. */
typedef void (*Runner)(void *ctx);
static double time_ms(Runner run, void *ctx) {
  cudaEvent_t t0, t1;
  CUDA(cudaEventCreate(&t0));
  CUDA(cudaEventCreate(&t1));
  double ms[RUNS];
  const int runs = sample_quick() ? 1 : RUNS;
  if (runs > 1)
    run(ctx);
  for (int i = 0; i < runs; i++) {
    float f;
    CUDA(cudaEventRecord(t0, 0));
    run(ctx);
    CUDA(cudaEventRecord(t1, 0));
    CUDA(cudaEventSynchronize(t1));
    CUDA(cudaEventElapsedTime(&f, t0, t1));
    ms[i] = f;
  }
  CUDA(cudaEventDestroy(t0));
  CUDA(cudaEventDestroy(t1));
  qsort(ms, runs, sizeof *ms, cmp_double);
  return ms[runs / 2];
}

/* ---- the device loops ---- */

typedef struct DeviceLoop {
  void *graph;
  cgrt_status (*launch)(void *, cudaStream_t);
} DeviceLoop;

static void run_device(void *ctx) {
  DeviceLoop *l = ctx;
  CGRT(l->launch(l->graph, 0));
}

static cgrt_status launch_1(void *g, cudaStream_t s) { return solve_1_launch(g, s); }
static cgrt_status launch_4(void *g, cudaStream_t s) { return solve_4_launch(g, s); }
static cgrt_status launch_16(void *g, cudaStream_t s) { return solve_16_launch(g, s); }

static void device_loop(const Device *d, int k, Result *res) {
  DeviceLoop l = {0};
  if (k == 1) {
    solve_1_extern ext = {d->b, d->x, d->r, d->p, d->ap, d->state};
    solve_1 *g;
    CGRT(solve_1_create(&g, &ext, NULL));
    l.graph = g;
    l.launch = launch_1;
  } else if (k == 4) {
    solve_4_extern ext = {d->b, d->x, d->r, d->p, d->ap, d->state};
    solve_4 *g;
    CGRT(solve_4_create(&g, &ext, NULL));
    l.graph = g;
    l.launch = launch_4;
  } else {
    solve_16_extern ext = {d->b, d->x, d->r, d->p, d->ap, d->state};
    solve_16 *g;
    CGRT(solve_16_create(&g, &ext, NULL));
    l.graph = g;
    l.launch = launch_16;
  }
  res->ms = time_ms(run_device, &l);
  if (k == 1)
    solve_1_destroy(l.graph);
  else if (k == 4)
    solve_4_destroy(l.graph);
  else
    solve_16_destroy(l.graph);
}

/* ---- the host loop ---- */

typedef struct HostLoop {
  start *start;
  step *step;
  const Device *d;
  double *resid; /* pinned */
} HostLoop;

static void run_host(void *ctx) {
  HostLoop *l = ctx;
  CGRT(start_launch(l->start, 0));
  for (int i = 0; i < 20000; i++) {
    CGRT(step_launch(l->step, 0));
    CUDA(cudaMemcpyAsync(l->resid, l->d->state + RESID, sizeof *l->resid,
                         cudaMemcpyDeviceToHost, 0));
    CUDA(cudaStreamSynchronize(0));
    if (!(*l->resid > TOL))
      break;
  }
}

static void host_loop(const Device *d, Result *res) {
  HostLoop l = {.d = d};
  start_extern se = {d->b, d->x, d->r, d->p, d->state};
  step_extern te = {d->x, d->r, d->p, d->ap, d->state};
  CGRT(start_create(&l.start, &se, NULL));
  CGRT(step_create(&l.step, &te, NULL));
  CUDA(cudaMallocHost((void **)&l.resid, sizeof *l.resid));
  res->ms = time_ms(run_host, &l);
  CUDA(cudaFreeHost(l.resid));
  start_destroy(l.start);
  step_destroy(l.step);
}

int main(void) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    printf("solver: built; running it needs a GPU, and this machine has none\n");
    return 77;
  }
  rng = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32) ^ 0x9e3779b97f4a7c15u;
  printf("solver: seed %llu\n", (unsigned long long)rng);
  /* u: a smooth field plus noise (quick: none); b = A u. */
  const double noise = sample_quick() ? 0 : 0.01;
  double *u = malloc(CELLS * sizeof *u), *b = malloc(CELLS * sizeof *b);
  double *ax = malloc(CELLS * sizeof *ax);
  if (!u || !b || !ax) {
    fprintf(stderr, "solver: out of memory\n");
    return 1;
  }
  const double pi = 3.14159265358979323846;
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      u[(size_t)i * N + j] = sin(pi * (i + 1) / (N + 1)) * sin(2 * pi * (j + 1) / (N + 1)) +
                             noise * (uniform01() - 0.5);
  stencil(u, b);
  double bnorm = 0, unorm = 0;
  for (size_t k = 0; k < CELLS; k++)
    bnorm += b[k] * b[k], unorm = fmax(unorm, fabs(u[k]));
  bnorm = sqrt(bnorm);

  Device d;
  double **bufs[] = {&d.b, &d.x, &d.r, &d.p, &d.ap};
  for (int i = 0; i < 5; i++)
    CUDA(cudaMalloc((void **)bufs[i], CELLS * sizeof(double)));
  CUDA(cudaMalloc((void **)&d.state, 5 * sizeof(double)));
  CUDA(cudaMemcpy(d.b, b, CELLS * sizeof *b, cudaMemcpyHostToDevice));

  Result res[4] = {{.way = "device loop", .check_every = 1},
                    {.way = "device loop", .check_every = 4},
                    {.way = "device loop", .check_every = 16},
                    {.way = "host loop", .check_every = 1}};
  int failures = 0;
  for (int w = 0; w < 4; w++) {
    Result *r = &res[w];
    if (w < 3)
      device_loop(&d, r->check_every, r);
    else
      host_loop(&d, r);
    double state[5];
    CUDA(cudaMemcpy(state, d.state, sizeof state, cudaMemcpyDeviceToHost));
    r->iters = state[ITERS];
    r->resid = state[RESID];
    r->x = malloc(CELLS * sizeof *r->x);
    if (!r->x) {
      fprintf(stderr, "solver: out of memory\n");
      return 1;
    }
    CUDA(cudaMemcpy(r->x, d.x, CELLS * sizeof *r->x, cudaMemcpyDeviceToHost));
    /* The CPU's checks: the true residual and the error against u. */
    stencil(r->x, ax);
    double rn = 0, err = 0;
    for (size_t k = 0; k < CELLS; k++) {
      rn += (b[k] - ax[k]) * (b[k] - ax[k]);
      err = fmax(err, fabs(r->x[k] - u[k]));
    }
    rn = sqrt(rn) / bnorm;
    err /= unorm;
    int ok = r->resid < TOL && rn < 2 * TOL && err < 1e-6;
    printf("%-11s checking every %2d: %5.0f iterations, |r|/|b| %.2e (CPU: %.2e), "
           "max error %.1e: %s\n",
           r->way, r->check_every, r->iters, r->resid, rn, err, ok ? "ok" : "WRONG");
    failures += !ok;
  }
  /* Deterministic reductions: the same iterations give the same bits. */
  double it1 = res[0].iters;
  for (int w = 1; w < 4; w++) {
    int k = res[w].check_every;
    double expect = ceil(it1 / k) * k;
    if (res[w].iters != expect) {
      printf("%s checking every %d ran %.0f iterations, expected %.0f\n", res[w].way, k,
             res[w].iters, expect);
      failures++;
    }
  }
  if (memcmp(res[0].x, res[3].x, CELLS * sizeof(double))) {
    printf("the device loop and the host loop computed different x\n");
    failures++;
  }
  printf("\n%-28s %10s %10s %14s\n", "", "iterations", "ms", "us/iteration");
  for (int w = 0; w < 4; w++)
    printf("%-11s checking every %2d %10.0f %10.2f %14.2f\n", res[w].way, res[w].check_every,
           res[w].iters, res[w].ms, 1000 * res[w].ms / res[w].iters);
  if (sample_quick())
    printf("(quick: one solve each, of a problem without noise)\n");
  else
    printf("(median of %d solves each, after one untimed)\n", RUNS);
  for (int w = 0; w < 4; w++)
    free(res[w].x);
  for (int i = 0; i < 5; i++)
    CUDA(cudaFree(*bufs[i]));
  CUDA(cudaFree(d.state));
  free(u);
  free(b);
  free(ax);
  printf("solver: %s\n", failures ? "FAILED" : "ok");
  return failures ? 1 : 0;
}
