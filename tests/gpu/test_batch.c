/* gpu.batch: four batch variants of the decode step (batch.cgraph:
 * step_1, step_2, step_4, step_8) in one program, sharing one cgrt_pool,
 * against the same four graphs with memory of their own.  Launched in
 * random order with random pos and nkeys, the pooled and the unpooled
 * twins end with the same bits in every x and KV cache.  The pool is as
 * large as the largest variant's owned buffers, less than the four
 * together. */
#include "cgrt_testing.h"
#include "gpu_test.h"
#include "batch_graph.h"

enum { D = 256, MAXPOS = 128, LAYERS = 4, VARIANTS = 4, LAUNCHES = 400 };
static const int batch[VARIANTS] = {1, 2, 4, 8};

typedef struct Variant {
  int b;
  void *x, *kc, *vc;
  void *graph;
} Variant;

static float uniform(void) { return (float)((rand64() >> 11) * 0x1.0p-53 * 2 - 1); }

static void *device_copy(const float *host, size_t n) {
  void *p;
  CUDA(cudaMalloc(&p, n * sizeof *host));
  CUDA(cudaMemcpy(p, host, n * sizeof *host, cudaMemcpyHostToDevice));
  return p;
}

static cgrt_status create(int v, Variant *var, void *const w[6], const cgrt_options *opt) {
  void *const *ext_w = w;
  switch (v) {
  case 0: {
    step_1_extern e = {var->x, ext_w[0], ext_w[1], ext_w[2], ext_w[3], ext_w[4], var->kc, var->vc};
    return step_1_create((step_1 **)&var->graph, &e, opt);
  }
  case 1: {
    step_2_extern e = {var->x, ext_w[0], ext_w[1], ext_w[2], ext_w[3], ext_w[4], var->kc, var->vc};
    return step_2_create((step_2 **)&var->graph, &e, opt);
  }
  case 2: {
    step_4_extern e = {var->x, ext_w[0], ext_w[1], ext_w[2], ext_w[3], ext_w[4], var->kc, var->vc};
    return step_4_create((step_4 **)&var->graph, &e, opt);
  }
  default: {
    step_8_extern e = {var->x, ext_w[0], ext_w[1], ext_w[2], ext_w[3], ext_w[4], var->kc, var->vc};
    return step_8_create((step_8 **)&var->graph, &e, opt);
  }
  }
}

static cgrt_status run(int v, void *g, uint32_t pos, uint32_t nkeys, cudaStream_t s) {
  cgrt_status st;
  switch (v) {
  case 0:
    if ((st = step_1_set_pos(g, pos)) || (st = step_1_set_nkeys(g, nkeys)))
      return st;
    return step_1_launch(g, s);
  case 1:
    if ((st = step_2_set_pos(g, pos)) || (st = step_2_set_nkeys(g, nkeys)))
      return st;
    return step_2_launch(g, s);
  case 2:
    if ((st = step_4_set_pos(g, pos)) || (st = step_4_set_nkeys(g, nkeys)))
      return st;
    return step_4_launch(g, s);
  default:
    if ((st = step_8_set_pos(g, pos)) || (st = step_8_set_nkeys(g, nkeys)))
      return st;
    return step_8_launch(g, s);
  }
}

static void destroy(int v, void *g) {
  switch (v) {
  case 0: step_1_destroy(g); break;
  case 1: step_2_destroy(g); break;
  case 2: step_4_destroy(g); break;
  default: step_8_destroy(g); break;
  }
}

static void *scratch(int v, void *g) {
  switch (v) {
  case 0: return step_1_buffer_h(g);
  case 1: return step_2_buffer_h(g);
  case 2: return step_4_buffer_h(g);
  default: return step_8_buffer_h(g);
  }
}

int main(void) {
  test_start("gpu.batch");
  long live0 = cgrt_test_live();
  size_t need[VARIANTS] = {step_1_pool_bytes(), step_2_pool_bytes(), step_4_pool_bytes(),
                           step_8_pool_bytes()};
  size_t most = 0, sum = 0;
  for (int v = 0; v < VARIANTS; v++) {
    /* Six owned buffers of B x D floats, each 256-byte aligned. */
    size_t expect = 6 * (((size_t)batch[v] * D * 4 + 255) / 256 * 256);
    EXPECT(need[v] == expect, "step_%d_pool_bytes() = %zu, expected %zu", batch[v], need[v],
           expect);
    most = need[v] > most ? need[v] : most;
    sum += need[v];
  }
  printf("gpu.batch: pool %zu bytes for the four variants, %zu apart\n", most, sum);
  EXPECT(most < sum, "the pool (%zu) is not smaller than the variants apart (%zu)", most, sum);

  /* The weights, shared by every graph. */
  size_t nw = (size_t)LAYERS * D * D;
  float *host = malloc(nw * sizeof *host);
  void *w[6];
  for (int i = 0; i < LAYERS * D; i++)
    host[i] = 1 + 0.1f * uniform();
  w[0] = device_copy(host, (size_t)LAYERS * D);
  for (int m = 1; m < 5; m++) {
    for (size_t i = 0; i < nw; i++)
      host[i] = uniform() / 16; /* 1 / sqrt(D) */
    w[m] = device_copy(host, nw);
  }
  free(host);

  /* Each variant twice, pooled [0] and on its own [1], from the same x. */
  Variant var[VARIANTS][2];
  cgrt_pool *pool;
  CGRT(cgrt_pool_create(&pool, most, CGRT_CURRENT_DEVICE));
  cgrt_options po = CGRT_OPTIONS_INIT;
  po.pool = pool;
  for (int v = 0; v < VARIANTS; v++) {
    size_t nx = (size_t)batch[v] * D, nc = (size_t)LAYERS * batch[v] * MAXPOS * D;
    float *x = malloc(nx * sizeof *x), *c = calloc(nc, sizeof *c);
    for (size_t i = 0; i < nx; i++)
      x[i] = uniform();
    for (int t = 0; t < 2; t++) {
      var[v][t].b = batch[v];
      var[v][t].x = device_copy(x, nx);
      var[v][t].kc = device_copy(c, nc);
      var[v][t].vc = device_copy(c, nc);
      CGRT(create(v, &var[v][t], w, t == 0 ? &po : NULL));
    }
    free(x);
    free(c);
  }
  for (int v = 1; v < VARIANTS; v++)
    EXPECT(scratch(v, var[v][0].graph) == scratch(0, var[0][0].graph),
           "pooled step_%d's h is not at the pool's start", batch[v]);

  /* Random variants, positions and key counts; the twins run the same. */
  cudaStream_t st;
  CUDA(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  int launched[VARIANTS] = {0};
  for (int i = 0; i < LAUNCHES; i++) {
    int v = (int)(rand64() % VARIANTS);
    uint32_t pos = (uint32_t)(rand64() % MAXPOS), nkeys = 1 + (uint32_t)(rand64() % MAXPOS);
    for (int t = 0; t < 2; t++)
      CGRT(run(v, var[v][t].graph, pos, nkeys, st));
    launched[v]++;
  }
  CUDA(cudaStreamSynchronize(st));
  printf("gpu.batch: launches per variant %d, %d, %d, %d\n", launched[0], launched[1],
         launched[2], launched[3]);

  for (int v = 0; v < VARIANTS; v++) {
    size_t n[3] = {(size_t)batch[v] * D, (size_t)LAYERS * batch[v] * MAXPOS * D,
                   (size_t)LAYERS * batch[v] * MAXPOS * D};
    const char *names[3] = {"x", "kc", "vc"};
    for (int k = 0; k < 3; k++) {
      void *dev[2] = {k == 0 ? var[v][0].x : k == 1 ? var[v][0].kc : var[v][0].vc,
                      k == 0 ? var[v][1].x : k == 1 ? var[v][1].kc : var[v][1].vc};
      float *a = malloc(n[k] * sizeof *a), *b = malloc(n[k] * sizeof *b);
      CUDA(cudaMemcpy(a, dev[0], n[k] * sizeof *a, cudaMemcpyDeviceToHost));
      CUDA(cudaMemcpy(b, dev[1], n[k] * sizeof *b, cudaMemcpyDeviceToHost));
      size_t differ = 0, nan = 0;
      for (size_t i = 0; i < n[k]; i++) {
        differ += memcmp(&a[i], &b[i], sizeof *a) != 0;
        nan += isnan(a[i]);
      }
      EXPECT(differ == 0, "step_%d: %zu of %zu values of %s differ pooled and apart", batch[v],
             differ, n[k], names[k]);
      EXPECT(nan == 0, "step_%d: %zu NaN in %s", batch[v], nan, names[k]);
      free(a);
      free(b);
    }
  }
  for (int v = 0; v < VARIANTS; v++)
    for (int t = 0; t < 2; t++) {
      destroy(v, var[v][t].graph);
      CUDA(cudaFree(var[v][t].x));
      CUDA(cudaFree(var[v][t].kc));
      CUDA(cudaFree(var[v][t].vc));
    }
  CGRT(cgrt_pool_destroy(pool));
  for (int m = 0; m < 5; m++)
    CUDA(cudaFree(w[m]));
  CUDA(cudaStreamDestroy(st));
  EXPECT(cgrt_test_live() == live0, "%ld resources still held", cgrt_test_live() - live0);
  return test_end("gpu.batch");
}
