/* test_chains: 8 independent chains of spinning kernels take far less
 * than 8 chains' time, while the same kernels serialised take it all.
 * Other processes on the GPU can only lengthen a run (the kernels spin on
 * the GPU's clock), so each graph's best of several runs is compared, and
 * the runs stop as soon as the bests show the overlap. */
#include "chains_graph.h"
#include "gpu_test.h"

enum { RUNS = 5, MOST_RUNS = 40 };

/* One launch's time on the GPU, in ms. */
static float time_launch(cgrt_status (*launch)(void *, cudaStream_t), void *g,
                         cudaStream_t stream) {
  cudaEvent_t a, b;
  float ms = 0;
  CUDA(cudaEventCreate(&a));
  CUDA(cudaEventCreate(&b));
  CUDA(cudaEventRecord(a, stream));
  CGRT(launch(g, stream));
  CUDA(cudaEventRecord(b, stream));
  CUDA(cudaEventSynchronize(b));
  CUDA(cudaEventElapsedTime(&ms, a, b));
  CUDA(cudaEventDestroy(a));
  CUDA(cudaEventDestroy(b));
  return ms;
}

static cgrt_status launch_chains(void *g, cudaStream_t s) { return chains_launch(g, s); }
static cgrt_status launch_serial(void *g, cudaStream_t s) { return serial_launch(g, s); }

int main(void) {
  test_start("test_chains");
  chains *c;
  serial *s;
  cudaStream_t stream;
  CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  CGRT(chains_create(&c, NULL));
  CGRT(serial_create(&s, NULL));
  uint64_t ns = 200 * 1000; /* 200 us a kernel */
  CGRT(chains_set_ns(c, ns));
  CGRT(serial_set_ns(s, ns));
  float tc = 1e30f, ts = 1e30f;
  int runs = 0;
  while (runs < RUNS || (tc >= ts / 4 && runs < MOST_RUNS)) {
    float c1 = time_launch(launch_chains, c, stream), s1 = time_launch(launch_serial, s, stream);
    tc = c1 < tc ? c1 : tc;
    ts = s1 < ts ? s1 : ts;
    runs++;
  }
  printf("test_chains: 8 chains of 4: %.2f ms; the same 32 kernels in series: %.2f ms (%.1fx), "
         "the best of %d runs each\n",
         tc, ts, ts / tc, runs);
  EXPECT(ts > 32 * 0.2 * 0.95, "the serial graph took %.2f ms, less than its kernels", ts);
  EXPECT(tc < ts / 4, "8 independent chains took %.2f ms, not far less than %.2f ms", tc, ts);
  uint32_t x[8 * 32];
  CUDA(cudaMemcpy(x, chains_buffer_x(c), sizeof x, cudaMemcpyDeviceToHost));
  int bad = 0;
  for (int i = 0; i < 8 * 32; i++)
    bad += x[i] != 4 * (uint32_t)runs; /* zeroed at create; 4 increments a launch */
  EXPECT(!bad, "%d of %d counters wrong after the chains ran", bad, 8 * 32);
  chains_destroy(c);
  serial_destroy(s);
  CUDA(cudaStreamDestroy(stream));
  return test_end("test_chains");
}
