/* test_handle: while loops whose body's kernel takes the loop's handle and
 * sets the condition (no condition kernel at the end of each iteration).
 * One instantiated graph is replayed with its scalars set anew each time:
 * every loop must run exactly as often as its condition says, zero times
 * when the condition is false before the first iteration, and a launch
 * after one whose loop ended must start the loop again (the condition is
 * evaluated before the first iteration of each launch).  Each loop is a
 * graph of its own, and two of them run side by side in a fourth. */
#include "cgrt_testing.h"
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

/* Launches one loop's graph and waits for it, naming the loop if the
 * launch fails on the device. */
static void run(const char *loop, cgrt_status (*launch)(void *, cudaStream_t), void *g, int rep) {
  CGRT(launch(g, 0));
  cudaError_t err = cudaStreamSynchronize(0);
  if (err != cudaSuccess) {
    fprintf(stderr, "test_handle: replay %d: loop '%s': %s\n", rep, loop, cudaGetErrorString(err));
    exit(1);
  }
}

static cgrt_status counted_l(void *g, cudaStream_t s) { return counted_launch(g, s); }
static cgrt_status halving_l(void *g, cudaStream_t s) { return halving_launch(g, s); }
static cgrt_status side_l(void *g, cudaStream_t s) { return side_launch(g, s); }

int main(void) {
  test_start("test_handle");
  uint32_t *dres, res[8];
  CUDA(cudaMalloc((void **)&dres, sizeof res));
  CUDA(cudaMemset(dres, 0, sizeof res));
  counted_extern e0 = {dres};
  halving_extern e3 = {dres};
  side_extern e4 = {dres};
  counted *g0;
  halving *g3;
  side *g4;
  CGRT(counted_create(&g0, &e0, NULL));
  CGRT(halving_create(&g3, &e3, NULL));
  CGRT(side_create(&g4, &e4, NULL));
  static const float tols[] = {2.0f, 1.0f, 0.75f, 0.3f, 0.01f, 1e-6f};
  /* First the fixed cases, each after a launch that ran: n = 0 (zero
   * iterations), then again the loops that ran to their end. */
  static const uint32_t fixed_n[] = {3, 0, 0, 5, 1, 0, 2};
  int zero_seen = 0;
  for (int rep = 0; rep < REPLAYS; rep++) {
    int nf = (int)(sizeof fixed_n / sizeof *fixed_n);
    uint32_t n = rep < nf ? fixed_n[rep] : (uint32_t)(rand64() % 7);
    float tol = tols[rep < 6 ? rep : (int)(rand64() % 6)];
    CGRT(counted_set_n(g0, n));
    CGRT(halving_set_tol(g3, tol));
    CGRT(side_set_n(g4, n));
    CGRT(side_set_tol(g4, tol));
    run("counted", counted_l, g0, rep);
    run("halving", halving_l, g3, rep);
    run("side", side_l, g4, rep);
    CUDA(cudaMemcpy(res, dres, sizeof res, cudaMemcpyDeviceToHost));
    uint32_t want[6] = {n, 0, n, halvings(tol), n, halvings(tol)};
    for (int i = 0; i < 6; i++)
      EXPECT(res[i] == want[i], "replay %d (n %u, tol %g): res[%d] is %u, expected %u", rep, n,
             (double)tol, i, res[i], want[i]);
    uint32_t it = 99;
    CGRT(counted_get_it(g0, &it));
    EXPECT(it == n, "replay %d: it is %u, expected %u", rep, it, n);
    zero_seen |= n == 0;
  }
  EXPECT(zero_seen, "no replay ran a loop zero times");
  EXPECT(halvings(2.0f) == 0, "tol 2.0 should run loop 3 zero times");
  counted_destroy(g0);
  halving_destroy(g3);
  side_destroy(g4);

  /* A kernel that sets its loop's handle needs the conditional node: a
   * launch without the graph (CGRT_SAFE_STREAM) cannot give it one. */
  cgrt_options opt = CGRT_OPTIONS_INIT;
  opt.safe = CGRT_SAFE_STREAM;
  long live0 = cgrt_test_live();
  counted *refused = NULL;
  cgrt_status st = counted_create(&refused, &e0, &opt);
  EXPECT(st == CGRT_ERROR_INVALID && refused == NULL, "CGRT_SAFE_STREAM: status %d", st);
  EXPECT(strstr(cgrt_last_error(), "node loop (") &&
             strstr(cgrt_last_error(), "a kernel of its body sets its handle"),
         "CGRT_SAFE_STREAM: %s", cgrt_last_error());
  EXPECT(cgrt_test_live() == live0, "CGRT_SAFE_STREAM: %ld resources left",
         cgrt_test_live() - live0);
  CUDA(cudaFree(dres));
  return test_end("test_handle");
}
