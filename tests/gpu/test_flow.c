/* test_flow: data flow under adversarial timing, replayed with fresh
 * values and delays; every result is checked against the sequential
 * meaning of the graph.  A written edge that goes against the written
 * order (backward in the node table) orders its nodes too. */
#include "flow_graph.h"
#include "gpu_test.h"

enum { N = 256 };

static uint32_t produced(uint32_t v, uint32_t i) { return v * 7 + i; }

int main(void) {
  test_start("test_flow");
  uint32_t *dout, *out = malloc(6 * N * sizeof *out);
  CUDA(cudaMalloc((void **)&dout, 6 * N * sizeof *dout));
  flow_extern ext = {dout};
  flow *g;
  CGRT(flow_create(&g, &ext, NULL));
  for (int round = 0; round < 8; round++) {
    uint32_t v = (uint32_t)(rand64() % 100000);
    uint64_t d[3];
    for (int i = 0; i < 3; i++)
      d[i] = 200000 + rand64() % 1000000; /* 0.2 to 1.2 ms */
    CUDA(cudaMemset(dout, 0xa5, 6 * N * sizeof *dout)); /* poison */
    CGRT(flow_set_v(g, v));
    CGRT(flow_set_d0(g, d[0]));
    CGRT(flow_set_d1(g, d[1]));
    CGRT(flow_set_d2(g, d[2]));
    CGRT(flow_launch(g, 0));
    CUDA(cudaStreamSynchronize(0));
    CUDA(cudaMemcpy(out, dout, 6 * N * sizeof *out, cudaMemcpyDeviceToHost));
    int bad[6] = {0};
    for (uint32_t i = 0; i < N; i++) {
      uint32_t a0 = produced(v, i), a1_first = produced(17, i), a1 = produced(1000, i);
      uint32_t a3 = produced(29, N + i), a2 = produced(29, i);
      bad[0] += out[i] != a0 * 3 + 3;
      bad[1] += out[N + i] != a1_first * 3 + 5; /* read before the overwrite */
      bad[2] += out[2 * N + i] != a1 * 3 + 7;   /* read after it */
      bad[3] += out[3 * N + i] != produced(23, i);
      bad[4] += out[4 * N + i] != a3 * 3 + 11;
      bad[5] += out[5 * N + i] != a0 + a1 + a2; /* acc += a[0], a[1], a[2] */
    }
    static const char *const what[] = {"read after write", "write after read (the read)",
                                       "write after read (the write)", "write after write",
                                       "a view of a slow write", "an inout chain"};
    for (int k = 0; k < 6; k++)
      EXPECT(!bad[k], "round %d: %s: %d of %d wrong", round, what[k], bad[k], N);
  }
  flow_destroy(g);

  backward_extern bext = {dout};
  backward *b;
  CGRT(backward_create(&b, &bext, NULL));
  for (int round = 0; round < 8; round++) {
    uint32_t v = (uint32_t)(rand64() % 100000);
    CUDA(cudaMemset(dout, 0xa5, 2 * N * sizeof *dout)); /* poison */
    CGRT(backward_set_v(b, v));
    CGRT(backward_set_d(b, 200000 + rand64() % 1000000));
    CGRT(backward_launch(b, 0));
    CUDA(cudaStreamSynchronize(0));
    CUDA(cudaMemcpy(out, dout, 2 * N * sizeof *out, cudaMemcpyDeviceToHost));
    int bad_t = 0, bad_q = 0;
    for (uint32_t i = 0; i < N; i++) {
      bad_t += out[i] != produced(v, i) * 3 + 9;
      bad_q += out[N + i] != produced(5, i);
    }
    EXPECT(!bad_t, "round %d: a backward written edge: %d of %d read too early", round, bad_t, N);
    EXPECT(!bad_q, "round %d: the second entry node: %d of %d wrong", round, bad_q, N);
  }
  backward_destroy(b);
  CUDA(cudaFree(dout));
  free(out);
  return test_end("test_flow");
}
