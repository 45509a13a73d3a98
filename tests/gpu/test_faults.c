/* test_faults: the k-th CUDA call of create fails, for every k.  Each time
 * create returns an error naming the failed call, leaves *out NULL, and
 * gives back every host allocation, CUDA object and byte of device memory
 * it took.  The program under ASan or valgrind also shows no leak. */
#include "cgrt_testing.h"
#include "features_graph.h"
#include "gpu_test.h"

enum { N = 256 };

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
  size_t free0, total;
  CUDA(cudaMemGetInfo(&free0, &total));
  long live0 = cgrt_test_live();
  long k;
  for (k = 1;; k++) {
    g = (features *)&k;
    cgrt_test_fail_call(k);
    cgrt_status s = features_create(&g, &ext, NULL);
    cgrt_test_fail_call(0);
    if (s == CGRT_OK)
      break; /* k is past the last call */
    size_t free1;
    CUDA(cudaMemGetInfo(&free1, &total));
    EXPECT(s == CGRT_ERROR_CUDA, "call %ld: status %d", k, s);
    EXPECT(g == NULL, "call %ld: *out was left set", k);
    EXPECT(cgrt_test_live() == live0, "call %ld: %ld resources still held", k,
           cgrt_test_live() - live0);
    EXPECT(free1 + (4 << 20) >= free0, "call %ld: %zu bytes of device memory kept", k,
           free0 - free1);
    EXPECT(strstr(cgrt_last_error(), "features.cgraph") &&
               strstr(cgrt_last_error(), "cudaErrorMemoryAllocation"),
           "call %ld: message %s", k, cgrt_last_error());
    if (k > 10000)
      break;
  }
  printf("test_faults: create makes %ld CUDA calls; each one failing was handled\n", k - 1);
  EXPECT(k > 10, "create made only %ld CUDA calls", k - 1);
  CGRT(features_launch(g, 0));
  CUDA(cudaStreamSynchronize(0));
  features_destroy(g);
  EXPECT(cgrt_test_live() == live0, "%ld resources held after destroy", cgrt_test_live() - live0);
  CUDA(cudaFree(dst));
  CUDA(cudaFree(src));
  return test_end("test_faults");
}
