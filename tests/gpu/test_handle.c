/* test_handle: while loops whose body's kernel takes the loop's handle and
 * sets the condition (no condition kernel at the end of each iteration).
 * One instantiated graph is replayed with its scalars set anew each time:
 * every loop must run exactly as often as its condition says, zero times
 * when the condition is false before the first iteration, and a launch
 * after one whose loop ended must start the loop again (the condition is
 * evaluated before the first iteration of each launch).  An outer loop's
 * condition is set from a kernel of an inner loop's body. */
#include "handle_graph.h"
#include "gpu_test.h"

enum { REPLAYS = 200 };

/* Iterations of loop 3: 1.0 halved while it is at least tol. */
static uint32_t halvings(float tol) {
  uint32_t k = 0;
  for (float r = 1.0f; r >= tol; r *= 0.5f)
    k++;
  return k;
}

int main(void) {
  test_start("test_handle");
  uint32_t *dres, res[8];
  CUDA(cudaMalloc((void **)&dres, sizeof res));
  CUDA(cudaMemset(dres, 0, sizeof res));
  handles_extern ext = {dres};
  handles *g;
  CGRT(handles_create(&g, &ext, NULL));
  static const float tols[] = {2.0f, 1.0f, 0.75f, 0.3f, 0.01f, 1e-6f};
  /* First the fixed cases, each after a launch that ran: n = 0 (zero
   * iterations), then again the loops that ran to their end. */
  static const uint32_t fixed_n[] = {3, 0, 0, 5, 1, 0, 2};
  int zero_seen = 0;
  for (int rep = 0; rep < REPLAYS; rep++) {
    int nf = (int)(sizeof fixed_n / sizeof *fixed_n);
    uint32_t n = rep < nf ? fixed_n[rep] : (uint32_t)(rand64() % 7);
    uint32_t m = 1 + (uint32_t)(rand64() % 4);
    float tol = tols[rep < 6 ? rep : (int)(rand64() % 6)];
    CGRT(handles_set_n(g, n));
    CGRT(handles_set_m(g, m));
    CGRT(handles_set_tol(g, tol));
    CGRT(handles_launch(g, 0));
    CUDA(cudaStreamSynchronize(0));
    CUDA(cudaMemcpy(res, dres, sizeof res, cudaMemcpyDeviceToHost));
    uint32_t want[4] = {n, n * m, n, halvings(tol)};
    for (int i = 0; i < 4; i++)
      EXPECT(res[i] == want[i], "replay %d (n %u, m %u, tol %g): res[%d] is %u, expected %u", rep,
             n, m, (double)tol, i, res[i], want[i]);
    uint32_t it = 99;
    CGRT(handles_get_it(g, &it));
    EXPECT(it == n, "replay %d: it is %u, expected %u", rep, it, n);
    zero_seen |= n == 0;
  }
  EXPECT(zero_seen, "no replay ran a loop zero times");
  EXPECT(halvings(2.0f) == 0, "tol 2.0 should run loop 3 zero times");
  handles_destroy(g);
  CUDA(cudaFree(dres));
  return test_end("test_handle");
}
