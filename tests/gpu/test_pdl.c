/* test_pdl: a chain of pdl kernels (programmatic edges) computes exactly
 * what the same chain of plain kernels and the CPU compute, on fresh random
 * data, over several replays with random delays; and so does the pdl chain
 * built without programmatic edges (cgrt_options.safe, as under
 * compute-sanitizer). */
#include "gpu_test.h"
#include "cgrt_testing.h"
#include "pdl_graph.h"

enum { N = 8192 };

static void cpu_mix(const uint32_t *a, uint32_t *b, uint32_t k) {
  for (uint32_t i = 0; i < N; i++)
    b[i] = b[i] * k + a[(i * 7 + 4099) % N];
}

int main(void) {
  test_start("test_pdl");
  uint32_t *a = malloc(N * 4), *b = malloc(N * 4), *ga = malloc(N * 4), *gb = malloc(N * 4);
  void *d[6];
  for (int i = 0; i < 6; i++)
    CUDA(cudaMalloc(&d[i], N * 4));
  plain_chain_extern pe = {d[0], d[1]};
  pdl_chain_extern qe = {d[2], d[3]}, se = {d[4], d[5]};
  plain_chain *p;
  pdl_chain *q, *sq;
  cgrt_options safe = CGRT_OPTIONS_INIT;
  safe.safe = CGRT_SAFE_PROGRAMMATIC;
  CGRT(plain_chain_create(&p, &pe, NULL));
  CGRT(pdl_chain_create(&q, &qe, NULL));
  CGRT(pdl_chain_create(&sq, &se, &safe));
  unsigned programmatic = cgrt_test_programmatic_edges((const struct cgrt_graph *)q);
  printf("test_pdl: %u programmatic edges in the pdl chain\n", programmatic);
  EXPECT(cgrt_test_programmatic_edges((const struct cgrt_graph *)sq) == 0,
         "the sanitizer-safe pdl chain has %u programmatic edges",
         cgrt_test_programmatic_edges((const struct cgrt_graph *)sq));
  for (int round = 0; round < 5; round++) {
    for (int i = 0; i < N; i++)
      a[i] = (uint32_t)rand64(), b[i] = (uint32_t)rand64();
    for (int i = 0; i < 6; i++)
      CUDA(cudaMemcpy(d[i], i % 2 ? b : a, N * 4, cudaMemcpyHostToDevice));
    uint64_t ns = 10000 + rand64() % 50000;
    CGRT(plain_chain_set_ns(p, ns));
    CGRT(pdl_chain_set_ns(q, ns));
    CGRT(pdl_chain_set_ns(sq, ns));
    CGRT(plain_chain_launch(p, 0));
    CGRT(pdl_chain_launch(q, 0));
    CGRT(pdl_chain_launch(sq, 0));
    CUDA(cudaStreamSynchronize(0));
    for (uint32_t i = 0; i < 8; i++) {
      cpu_mix(a, b, 2 * i + 3);
      cpu_mix(b, a, 2 * i + 5);
    }
    int bad[3] = {0, 0, 0};
    for (int which = 0; which < 3; which++) {
      CUDA(cudaMemcpy(ga, d[2 * which], N * 4, cudaMemcpyDeviceToHost));
      CUDA(cudaMemcpy(gb, d[2 * which + 1], N * 4, cudaMemcpyDeviceToHost));
      for (int i = 0; i < N; i++)
        bad[which] += ga[i] != a[i] || gb[i] != b[i];
    }
    EXPECT(!bad[0], "round %d: the plain chain got %d of %d wrong", round, bad[0], N);
    EXPECT(!bad[1], "round %d: the pdl chain got %d of %d wrong", round, bad[1], N);
    EXPECT(!bad[2], "round %d: the sanitizer-safe pdl chain got %d of %d wrong", round, bad[2], N);
  }
  plain_chain_destroy(p);
  pdl_chain_destroy(q);
  pdl_chain_destroy(sq);
  for (int i = 0; i < 6; i++)
    CUDA(cudaFree(d[i]));
  free(a);
  free(b);
  free(ga);
  free(gb);
  return test_end("test_pdl");
}
