/* test_faults: the k-th CUDA call of create fails, for every k.  Each time
 * create returns an error naming the failed call, leaves *out NULL, and
 * gives back every host allocation, CUDA object and byte of device and
 * pinned memory it took (the runtime's own count: the device's free
 * memory moves with whatever else runs on it).  The program under ASan or
 * valgrind also shows no leak.  Then the same for every CUDA call of bind
 * (the graph stays on the old buffer and works) and of set + launch (the
 * value set reaches the next launch that succeeds), over 64 launches in a
 * row so that every call a launch can make is reached.  A sweep ends at
 * the first k that the operation's calls did not reach, so it follows the
 * runtime however many calls it makes, and an operation that succeeded
 * although its k-th call failed is an error, not the end. */
#include "fault_sweep.h"
#include "features_graph.h"
#include "gpu_test.h"

enum { N = 256 };

static void expect_written(const uint32_t *dev, uint32_t v, const char *what, long k) {
  uint32_t h[3 * N];
  CUDA(cudaMemcpy(h, dev, sizeof h, cudaMemcpyDeviceToHost));
  int bad = 0;
  for (uint32_t i = 0; i < N; i++)
    bad += h[i] != v + i || h[N + i] != 0 || h[2 * N + i] != 7;
  EXPECT(!bad, "%s, call %ld: %d elements wrong (first %u, expected %u)", what, k, bad, h[0], v);
}

/* Every CUDA call of bind fails in turn: the error names the node, the
 * nodes already moved are put back, and the graph still writes the old
 * buffer; past the last call the bind succeeds. */
static void sweep_bind(features *g, uint32_t *dst, uint32_t *other, long live0) {
  long k;
  for (k = 1; k < 1000; k++) {
    CUDA(cudaMemset(dst, 0, 3 * N * sizeof *dst));
    CUDA(cudaMemset(other, 0, 3 * N * sizeof *other));
    long c = fault_begin(k);
    cgrt_status s = features_bind_dst(g, other);
    if (!fault_end(k, c)) {
      EXPECT(s == CGRT_OK, "bind past its last call: status %d: %s", s, cgrt_last_error());
      break;
    }
    EXPECT(s == CGRT_ERROR_CUDA, "bind, call %ld: status %d", k, s);
    EXPECT(strstr(cgrt_last_error(), "features.cgraph:") &&
               strstr(cgrt_last_error(), "cudaErrorMemoryAllocation"),
           "bind, call %ld: message %s", k, cgrt_last_error());
    EXPECT(cgrt_test_live() == live0, "bind, call %ld: %ld resources more", k,
           cgrt_test_live() - live0);
    if (s == CGRT_OK)
      break; /* reported above: the graph moved, so the sweep cannot go on */
    CGRT(features_set_v(g, (uint32_t)k));
    CGRT(features_launch(g, 0));
    CUDA(cudaStreamSynchronize(0));
    expect_written(dst, (uint32_t)k, "after a failed bind", k);
    uint32_t h[3 * N], zero = 0;
    CUDA(cudaMemcpy(h, other, sizeof h, cudaMemcpyDeviceToHost));
    for (int i = 0; i < 3 * N; i++)
      zero |= h[i];
    EXPECT(zero == 0, "after a failed bind (call %ld) the new buffer was written", k);
  }
  printf("test_faults: bind makes %ld CUDA calls; each one failing was handled\n", k - 1);
  EXPECT(k > 2, "bind made only %ld CUDA calls", k - 1);
  CGRT(features_set_v(g, 5));
  CGRT(features_launch(g, 0));
  CUDA(cudaStreamSynchronize(0));
  expect_written(other, 5, "after the bind", k);
}

/* Every CUDA call of a launch after a set fails in turn (the update of the
 * scalar upload's parameter, the launch), at 64 launches in a row: the
 * status and message are right, nothing is held, and the next launch
 * applies the value. */
static void sweep_launch(features *g, uint32_t *dst, long live0) {
  long most = 0;
  for (int round = 0; round < 64; round++) {
    long k;
    for (k = 1; k < 1000; k++) {
      uint32_t v = (uint32_t)(1000 * round + k);
      CGRT(features_set_v(g, v));
      long c = fault_begin(k);
      cgrt_status s = features_launch(g, 0);
      if (!fault_end(k, c)) {
        EXPECT(s == CGRT_OK, "a launch past its last call: status %d: %s", s, cgrt_last_error());
        CUDA(cudaStreamSynchronize(0));
        expect_written(dst, v, "a launch past its last call", k);
        break;
      }
      EXPECT(s == CGRT_ERROR_CUDA, "launch, call %ld: status %d", k, s);
      EXPECT(strstr(cgrt_last_error(), "features.cgraph") &&
                 strstr(cgrt_last_error(), "cudaErrorMemoryAllocation"),
             "launch, call %ld: message %s", k, cgrt_last_error());
      EXPECT(cgrt_test_live() == live0, "launch, call %ld: %ld resources more", k,
             cgrt_test_live() - live0);
      CGRT(features_launch(g, 0));
      CUDA(cudaStreamSynchronize(0));
      expect_written(dst, v, "the launch after a failed one", k);
    }
    if (k - 1 > most)
      most = k - 1;
  }
  printf("test_faults: set + launch make up to %ld CUDA calls; each one failing was handled\n",
         most);
  EXPECT(most >= 3, "a launch made only %ld CUDA calls", most);
}

int main(void) {
  test_start("test_faults");
  void *dst, *src;
  CUDA(cudaMalloc(&dst, 3 * N * sizeof(uint32_t)));
  CUDA(cudaMalloc(&src, N * sizeof(uint32_t)));
  CUDA(cudaMemset(src, 0, N * sizeof(uint32_t)));
  features_extern ext = {dst, src};
  /* One create first, so that CUDA's own lazy set-up is not counted. */
  features *g;
  CGRT(features_create(&g, &ext, NULL));
  features_destroy(g);
  long live0 = cgrt_test_live();
  long long bytes0 = cgrt_test_bytes();
  long k;
  for (k = 1;; k++) {
    g = (features *)&k;
    long c = fault_begin(k);
    cgrt_status s = features_create(&g, &ext, NULL);
    if (!fault_end(k, c)) {
      EXPECT(s == CGRT_OK, "create past its last call: status %d: %s", s, cgrt_last_error());
      break; /* k is past the last call */
    }
    if (s == CGRT_OK) {
      EXPECT(0, "call %ld failed but create succeeded", k);
      features_destroy(g);
      continue;
    }
    EXPECT(s == CGRT_ERROR_CUDA, "call %ld: status %d", k, s);
    EXPECT(g == NULL, "call %ld: *out was left set", k);
    EXPECT(cgrt_test_live() == live0, "call %ld: %ld resources still held", k,
           cgrt_test_live() - live0);
    EXPECT(cgrt_test_bytes() == bytes0, "call %ld: %lld bytes of device and pinned memory kept", k,
           cgrt_test_bytes() - bytes0);
    EXPECT(strstr(cgrt_last_error(), "features.cgraph") &&
               strstr(cgrt_last_error(), "cudaErrorMemoryAllocation"),
           "call %ld: message %s", k, cgrt_last_error());
    if (k > 10000)
      break;
  }
  printf("test_faults: create makes %ld CUDA calls; each one failing was handled\n", k - 1);
  EXPECT(k > 10, "create made only %ld CUDA calls", k - 1);
  if (!g)
    return test_end("test_faults"); /* reported above */
  CGRT(features_launch(g, 0));
  CUDA(cudaStreamSynchronize(0));
  long live1 = cgrt_test_live();
  void *other;
  CUDA(cudaMalloc(&other, 3 * N * sizeof(uint32_t)));
  sweep_launch(g, dst, live1);
  sweep_bind(g, dst, other, live1);
  features_destroy(g);
  EXPECT(cgrt_test_live() == live0, "%ld resources held after destroy", cgrt_test_live() - live0);
  EXPECT(cgrt_test_bytes() == bytes0, "%lld bytes held after destroy", cgrt_test_bytes() - bytes0);
  CUDA(cudaFree(other));
  CUDA(cudaFree(dst));
  CUDA(cudaFree(src));
  return test_end("test_faults");
}
