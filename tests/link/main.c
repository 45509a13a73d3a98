/* main.c: creates step's graph, launches it once and checks the result;
 * without a GPU it says so and exits 77. */
#include "step_graph.h"

#include <stdio.h>

enum { N = 1024 };

int main(void) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    printf("step: linked and ran; running the graph needs a GPU\n");
    return 77;
  }
  static float host[N];
  for (int i = 0; i < N; i++)
    host[i] = (float)i;
  void *x;
  if (cudaMalloc(&x, sizeof host) || cudaMemcpy(x, host, sizeof host, cudaMemcpyHostToDevice)) {
    fprintf(stderr, "step: CUDA set-up failed\n");
    return 1;
  }
  step_extern ext = {x};
  step *g;
  if (step_create(&g, &ext, NULL) || step_launch(g, 0) || cudaStreamSynchronize(0)) {
    fprintf(stderr, "step: %s\n", cgrt_last_error());
    return 1;
  }
  step_destroy(g);
  int bad = cudaMemcpy(host, x, sizeof host, cudaMemcpyDeviceToHost) != cudaSuccess;
  for (int i = 0; i < N; i++)
    bad += host[i] != 2.0f * (float)i;
  cudaFree(x);
  printf("step: %s\n", bad ? "wrong" : "right");
  return bad != 0;
}
