/* gpu.nccl1, gpu.nccl2: collectives as graph nodes, RANKS processes, one a
 * GPU, bootstrapped by cgrt_nccl_init with a unique id that rank 0 makes
 * and passes to the others through pipes.  Each rank checks: every
 * collective and reduction on every element type NCCL takes against the
 * CPU; a rebound input captured again; collectives in a for after a kernel
 * that reads launch scalars, 1,000 launches with the scalar set before
 * each; and the refusals (no communicator, sizes that do not fit the
 * ranks).  With one rank it also checks that a communicator whose other
 * rank never joins ends with a status and a message after its timeout. */
#include "cgrt_nccl.h"
#include "gpu_test.h"
#include "nccl_graph.h"
#include "ranks.h"

#ifndef RANKS
#error "build with -DRANKS=1 or 2, as the graph"
#endif

enum { N = 64, ROWS = 10, STEPS = 1000, NTYPES = 10 };

typedef struct TypeInfo {
  const char *name;
  int size, is_float, bits16; /* bits16: 1 f16, 2 bf16 */
  int is_signed;
} TypeInfo;

static const TypeInfo types[NTYPES] = {
    {"i8", 1, 0, 0, 1},  {"u8", 1, 0, 0, 0},  {"i32", 4, 0, 0, 1}, {"u32", 4, 0, 0, 0},
    {"i64", 8, 0, 0, 1}, {"u64", 8, 0, 0, 0}, {"f16", 2, 1, 1, 1}, {"bf16", 2, 1, 2, 1},
    {"f32", 4, 1, 0, 1}, {"f64", 8, 1, 0, 1}};

/* Rank r's input element i: small integers, so that every reduction is
 * exact in every type. */
static double val(int r, int i) { return 1 + (r + i) % 3; }

static uint16_t to_half(double v) { /* small integers only: exact */
  float f = (float)v;
  int e;
  float m = frexpf(f, &e); /* f = m * 2^e, 0.5 <= m < 1 */
  if (f == 0)
    return 0;
  uint16_t mant = (uint16_t)((m * 2 - 1) * 1024);
  return (uint16_t)(((e - 1 + 15) << 10) | mant);
}

static double from_bits(const TypeInfo *t, const unsigned char *p) {
  if (t->bits16 == 1) {
    uint16_t h;
    memcpy(&h, p, 2);
    return half_to_float(h);
  }
  if (t->bits16 == 2) {
    uint16_t h;
    memcpy(&h, p, 2);
    return bf16_to_float(h);
  }
  if (t->is_float)
    return t->size == 4 ? (double)*(const float *)p : *(const double *)p;
  switch (t->size) {
  case 1: return t->is_signed ? (double)*(const int8_t *)p : (double)*(const uint8_t *)p;
  case 4: return t->is_signed ? (double)*(const int32_t *)p : (double)*(const uint32_t *)p;
  default: return t->is_signed ? (double)*(const int64_t *)p : (double)*(const uint64_t *)p;
  }
}

static void to_bits(const TypeInfo *t, double v, unsigned char *p) {
  if (t->bits16 == 1) {
    uint16_t h = to_half(v);
    memcpy(p, &h, 2);
  } else if (t->bits16 == 2) {
    float f = (float)v;
    uint32_t u;
    memcpy(&u, &f, 4);
    uint16_t h = (uint16_t)(u >> 16); /* small integers: exact */
    memcpy(p, &h, 2);
  } else if (t->is_float) {
    if (t->size == 4) {
      float f = (float)v;
      memcpy(p, &f, 4);
    } else {
      memcpy(p, &v, 8);
    }
  } else {
    int64_t i = (int64_t)v;
    memcpy(p, &i, (size_t)t->size); /* little-endian */
  }
}

/* Row `row` of the result, element i, on rank r: what NCCL must give. */
static double want(int row, int r, int i) {
  double s = 0, p = 1, mx = -1e300, mn = 1e300;
  for (int q = 0; q < RANKS; q++) {
    int k = row == 6 || row == 7 ? r * N + i : i; /* reduce_scatter: rank r's share */
    double v = val(q, k);
    s += v, p *= v, mx = v > mx ? v : mx, mn = v < mn ? v : mn;
  }
  switch (row) {
  case 0: case 6: return s;
  case 1: return p;
  case 2: case 9: return mx;
  case 3: case 7: return mn;
  case 4: return s / RANKS;
  case 5: return val(i / N, i % N); /* all_gather: rank i / N's first N */
  default: return val(RANKS - 1, i); /* broadcast from the last rank */
  }
}

static void check_every_type(void *comm, int rank, cudaStream_t s) {
  void *in[NTYPES], *out[NTYPES];
  unsigned char *host = malloc((size_t)ROWS * RANKS * N * 8);
  for (int t = 0; t < NTYPES; t++) {
    size_t bytes = (size_t)RANKS * N * types[t].size;
    CUDA(cudaMalloc(&in[t], bytes));
    CUDA(cudaMalloc(&out[t], ROWS * bytes));
    CUDA(cudaMemset(out[t], 0x7f, ROWS * bytes));
    for (int i = 0; i < RANKS * N; i++)
      to_bits(&types[t], val(rank, i), host + (size_t)i * types[t].size);
    CUDA(cudaMemcpy(in[t], host, bytes, cudaMemcpyHostToDevice));
  }
  every_type_extern ext = {in[0], out[0], in[1], out[1], in[2], out[2], in[3], out[3], in[4],
                           out[4], in[5], out[5], in[6], out[6], in[7], out[7], in[8], out[8],
                           in[9], out[9]};
  cgrt_options opt = CGRT_OPTIONS_INIT;
  every_type *g = NULL;
  cgrt_status st = every_type_create(&g, &ext, &opt);
  EXPECT(st == CGRT_ERROR_INVALID && !g && strstr(cgrt_last_error(), "cgrt_options.comm"),
         "create without a communicator: status %d: %s", st, cgrt_last_error());
  opt.comm = comm;
  opt.stream = s;
  CGRT(every_type_create(&g, &ext, &opt));
  CGRT(every_type_launch(g, s));
  CGRT(cgrt_nccl_wait(comm, s, 60));
  int bad = 0;
  for (int t = 0; t < NTYPES; t++) {
    size_t bytes = (size_t)RANKS * N * types[t].size;
    CUDA(cudaMemcpy(host, out[t], ROWS * bytes, cudaMemcpyDeviceToHost));
    for (int row = 0; row < ROWS; row++) {
      if (row == 4 && !types[t].is_float)
        continue; /* avg is for floating-point types */
      int n = row == 6 || row == 7 ? N : RANKS * N;
      for (int i = 0; i < n && bad < 10; i++) {
        double got = from_bits(&types[t], host + ((size_t)row * RANKS * N + i) * types[t].size);
        if (got != want(row, rank, i)) {
          bad++;
          EXPECT(0, "rank %d, %s, row %d, element %d: %g, want %g", rank, types[t].name, row, i,
                 got, want(row, rank, i));
        }
      }
    }
  }
  EXPECT(bad == 0, "rank %d: %d wrong elements", rank, bad);

  /* Another input for f32, bound: the collectives that read it are
   * captured again. */
  float *other;
  float h2[RANKS * N];
  CUDA(cudaMalloc((void **)&other, sizeof h2));
  for (int i = 0; i < RANKS * N; i++)
    h2[i] = (float)(10 * (rank + 1) + i);
  CUDA(cudaMemcpy(other, h2, sizeof h2, cudaMemcpyHostToDevice));
  CGRT(every_type_bind_a_f32(g, other));
  CGRT(every_type_launch(g, s));
  CGRT(cgrt_nccl_wait(comm, s, 60));
  CUDA(cudaMemcpy(h2, out[8], sizeof h2, cudaMemcpyDeviceToHost)); /* row 0: the sum */
  for (int i = 0; i < RANKS * N; i++) {
    double sum = 0;
    for (int q = 0; q < RANKS; q++)
      sum += 10 * (q + 1) + i;
    if (h2[i] != sum) {
      EXPECT(0, "rank %d after bind: sum[%d] = %g, want %g", rank, i, h2[i], sum);
      break;
    }
  }
  every_type_destroy(g);
  CUDA(cudaFree(other));
  for (int t = 0; t < NTYPES; t++) {
    CUDA(cudaFree(in[t]));
    CUDA(cudaFree(out[t]));
  }
  free(host);
}

static void check_replayed(void *comm, int rank, cudaStream_t s) {
  float *log;
  CUDA(cudaMalloc((void **)&log, STEPS * sizeof *log));
  CUDA(cudaMemset(log, 0xff, STEPS * sizeof *log));
  replayed_extern ext = {log};
  cgrt_options opt = CGRT_OPTIONS_INIT;
  opt.comm = comm;
  opt.stream = s;
  replayed *g;
  CGRT(replayed_create(&g, &ext, &opt));
  for (uint32_t i = 0; i < STEPS; i++) {
    CGRT(replayed_set_step(g, i));
    CGRT(replayed_launch(g, s));
  }
  CGRT(cgrt_nccl_wait(comm, s, 120));
  float h[STEPS];
  CUDA(cudaMemcpy(h, log, sizeof h, cudaMemcpyDeviceToHost));
  int bad = 0;
  for (int i = 0; i < STEPS && bad < 5; i++) {
    float w = (float)(i + 1) * (RANKS + 1) / 2.0f; /* the mean over ranks of (r + 1)(i + 1) */
    if (h[i] != w) {
      bad++;
      EXPECT(0, "rank %d, launch %d: x[0] = %g, want %g", rank, i, h[i], w);
    }
  }
  uint32_t me = 99, world = 99;
  CGRT(replayed_get_me(g, &me));
  CGRT(replayed_get_world(g, &world));
  EXPECT(me == (uint32_t)rank && world == RANKS, "rank scalars: me %u, world %u", me, world);
  replayed_destroy(g);
  CUDA(cudaFree(log));
}

static void wrong_size_refused(void *comm) {
  float *a, *o;
  CUDA(cudaMalloc((void **)&a, N * sizeof *a));
  CUDA(cudaMalloc((void **)&o, (RANKS + 1) * N * sizeof *o));
  wrong_size_extern ext = {a, o};
  cgrt_options opt = CGRT_OPTIONS_INIT;
  opt.comm = comm;
  wrong_size *g = NULL;
  cgrt_status st = wrong_size_create(&g, &ext, &opt);
  EXPECT(st == CGRT_ERROR_INVALID && !g && strstr(cgrt_last_error(), "times the ranks"),
         "all_gather of the wrong size: status %d: %s", st, cgrt_last_error());
  CUDA(cudaFree(a));
  CUDA(cudaFree(o));
}

/* A communicator of 2 whose rank 1 never comes. */
static void nobody_comes(void) {
  unsigned char id[RANKS_ID_BYTES];
  CGRT(cgrt_nccl_unique_id(id));
  void *comm = (void *)1;
  double t0 = (double)time(NULL);
  cgrt_status st = cgrt_nccl_init(&comm, 2, id, 0, 3.0);
  double took = (double)time(NULL) - t0;
  EXPECT(st == CGRT_ERROR_COMM && comm == NULL && strstr(cgrt_last_error(), "did not all join"),
         "a rank that never joins: status %d: %s", st, cgrt_last_error());
  EXPECT(took < 30, "it took %g s", took);
  printf("gpu.nccl: a rank that never joins: %s\n", cgrt_last_error());
}

static int run_rank(int rank, void *ranks) {
  unsigned char id[RANKS_ID_BYTES];
  if (ranks_share_id(ranks, rank, id))
    return 1;
  CUDA(cudaSetDevice(rank));
  void *comm;
  CGRT(cgrt_nccl_init(&comm, RANKS, id, rank, 60.0));
  cudaStream_t s;
  CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  check_every_type(comm, rank, s);
  check_replayed(comm, rank, s);
  wrong_size_refused(comm);
  CUDA(cudaStreamDestroy(s));
  cgrt_nccl_free(comm);
  if (RANKS == 1)
    nobody_comes();
  return test_end(rank == 0 ? "gpu.nccl rank 0" : "gpu.nccl rank 1");
}

int main(void) {
  int gpus = ranks_gpus();
  if (gpus < RANKS) {
    printf("gpu.nccl%d: skipped: %d rank%s need%s %d GPU%s, and this machine has %d\n", RANKS,
           RANKS, RANKS == 1 ? "" : "s", RANKS == 1 ? "s" : "", RANKS, RANKS == 1 ? "" : "s", gpus);
    return 77;
  }
  Ranks ranks;
  if (ranks_start(&ranks, RANKS, run_rank, &ranks))
    return 1;
  int failed = ranks_wait(&ranks, "gpu.nccl");
  printf("gpu.nccl%d: %s\n", RANKS, failed ? "FAILED" : "every rank passed");
  return failed;
}
