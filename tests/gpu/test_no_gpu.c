/* test_no_gpu: on a machine where CUDA sees no GPU (no device, or no
 * driver), create and cgrt_pool_create say "no GPU" plainly, naming the
 * graph, rather than a CUDA error's name.  With a GPU it is skipped. */
#include <stdio.h>
#include <string.h>

#include "cgrt.h"

static int failures, checks;

static void check(int ok, const char *what) {
  checks++;
  if (!ok) {
    failures++;
    printf("FAIL: %s: %s\n", what, cgrt_last_error());
  }
}

static int starts(const char *s, const char *prefix) {
  return strncmp(s, prefix, strlen(prefix)) == 0;
}

int main(void) {
  int n = 0;
  cudaError_t err = cudaGetDeviceCount(&n);
  if (err == cudaSuccess && n > 0) {
    printf("test_no_gpu: this machine has a GPU: skipped\n");
    return 77;
  }
  cgrt_graph_desc desc;
  memset(&desc, 0, sizeof desc);
  desc.abi = CGRT_ABI;
  desc.name = "step";
  desc.source = "step.cgraph";
  cgrt_graph *g = (cgrt_graph *)&desc; /* overwritten by create */
  cgrt_status s = cgrt_create(&g, &desc, NULL, NULL);
  const char *msg = cgrt_last_error();
  check(s == CGRT_ERROR_CUDA && g == NULL, "create fails with CGRT_ERROR_CUDA and no graph");
  check(starts(msg, "step.cgraph: graph step: no GPU: "),
        "create's message names the graph, then says no GPU");
  check(strstr(msg, err == cudaErrorInsufficientDriver ? "no NVIDIA driver" : "sees no device") !=
            NULL,
        "create's message says why");
  cgrt_pool *pool = NULL;
  s = cgrt_pool_create(&pool, 1024, CGRT_CURRENT_DEVICE);
  check(s == CGRT_ERROR_CUDA && pool == NULL, "cgrt_pool_create fails with no pool");
  check(starts(cgrt_last_error(), "cgrt_pool_create: no GPU: "),
        "cgrt_pool_create's message says no GPU");
  printf("test_no_gpu: %d checks, %d failed\n", checks, failures);
  return failures != 0;
}
