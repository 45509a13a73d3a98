/* test_soak: a million launches of one instantiated graph, each after
 * setting a scalar by pointer, one by value (read at the top and inside
 * an if's body) and one that the if's condition reads, with
 * the extern buffer rebound to another every 10,000 launches and nothing
 * synchronised in between.  Every launch's values reach the sums (checked
 * at each checkpoint), and neither what the runtime holds (its count of
 * resources and of device and pinned bytes) nor the process's resident
 * memory grows from the first checkpoint to the last.  The device's free
 * memory is not a measure: other processes may be using the GPU. */
#include "cgrt_testing.h"
#include "gpu_test.h"
#include "soak_graph.h"

enum { LAUNCHES = 1000000, REBIND = 10000, CHECKPOINT = 100000 };

static long resident_kib(void) {
  FILE *f = fopen("/proc/self/statm", "r");
  long pages = 0, rss = 0;
  if (f) {
    if (fscanf(f, "%ld %ld", &pages, &rss) != 2)
      rss = 0;
    fclose(f);
  }
  return rss * (sysconf(_SC_PAGESIZE) / 1024);
}

int main(void) {
  test_start("test_soak");
  uint64_t *dsum[2], want[2][4] = {{0}}, got[4];
  cudaStream_t s;
  CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  for (int i = 0; i < 2; i++) {
    CUDA(cudaMalloc((void **)&dsum[i], 4 * sizeof(uint64_t)));
    /* In the stream the graph runs in: a memset in the legacy default
     * stream is not ordered with a non-blocking stream. */
    CUDA(cudaMemsetAsync(dsum[i], 0, 4 * sizeof(uint64_t), s));
  }
  soak_extern ext = {dsum[0]};
  soak *g;
  CGRT(soak_create(&g, &ext, NULL));
  int cur = 0;
  long rss0 = 0, rss1 = 0, live0 = 0;
  long long bytes0 = 0;
  for (long i = 0; i < LAUNCHES; i++) {
    if (i % REBIND == 0 && i > 0) {
      cur ^= 1;
      CGRT(soak_bind_sum(g, dsum[cur]));
    }
    uint32_t pos = (uint32_t)rand64(), v = (uint32_t)rand64(), odd = (uint32_t)(rand64() & 1);
    CGRT(soak_set_pos(g, pos));
    CGRT(soak_set_v(g, v));
    CGRT(soak_set_odd(g, odd));
    CGRT(soak_launch(g, s));
    want[cur][0] += pos;
    want[cur][1] += v;
    want[cur][2] += odd ? pos : 0;
    want[cur][3] += odd ? v : 0;
    if ((i + 1) % CHECKPOINT == 0) {
      CUDA(cudaStreamSynchronize(s));
      for (int b = 0; b < 2; b++) {
        CUDA(cudaMemcpy(got, dsum[b], sizeof got, cudaMemcpyDeviceToHost));
        for (int k = 0; k < 4; k++)
          EXPECT(got[k] == want[b][k], "after %ld launches: buffer %d sum %d is %llu, expected %llu",
                 i + 1, b, k, (unsigned long long)got[k], (unsigned long long)want[b][k]);
      }
      rss1 = resident_kib();
      if (i + 1 == CHECKPOINT) {
        rss0 = rss1, live0 = cgrt_test_live(), bytes0 = cgrt_test_bytes();
      } else {
        EXPECT(cgrt_test_live() == live0 && cgrt_test_bytes() == bytes0,
               "after %ld launches the runtime holds %ld resources and %lld bytes more", i + 1,
               cgrt_test_live() - live0, cgrt_test_bytes() - bytes0);
        EXPECT(rss1 <= rss0 + 512, "after %ld launches resident memory grew by %ld KiB", i + 1,
               rss1 - rss0);
      }
    }
  }
  printf("test_soak: %d launches; resident memory %ld KiB at the first checkpoint, %ld at the "
         "last; the runtime holds %ld resources, %lld bytes\n",
         LAUNCHES, rss0, rss1, cgrt_test_live(), cgrt_test_bytes());
  soak_destroy(g);
  CUDA(cudaStreamDestroy(s));
  for (int i = 0; i < 2; i++)
    CUDA(cudaFree(dsum[i]));
  return test_end("test_soak");
}
