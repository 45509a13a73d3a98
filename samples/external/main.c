/* saxpy: the external sample's host program; checks one launch. */
#include "saxpy_graph.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

enum { N = 1 << 20 };

int main(void) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    printf("saxpy: built; running it needs a GPU\n");
    return 77;
  }
  float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
  for (int i = 0; i < N; i++)
    x[i] = (float)(i % 100), y[i] = 1.0f;
  void *dx, *dy;
  if (cudaMalloc(&dx, N * sizeof *x) || cudaMalloc(&dy, N * sizeof *y) ||
      cudaMemcpy(dx, x, N * sizeof *x, cudaMemcpyHostToDevice) ||
      cudaMemcpy(dy, y, N * sizeof *y, cudaMemcpyHostToDevice)) {
    fprintf(stderr, "saxpy: CUDA set-up failed\n");
    return 1;
  }
  saxpy_step_extern ext = {dx, dy};
  saxpy_step *g;
  if (saxpy_step_create(&g, &ext, NULL) || saxpy_step_set_a(g, 3.0f) ||
      saxpy_step_launch(g, 0) || cudaStreamSynchronize(0)) {
    fprintf(stderr, "saxpy: %s\n", cgrt_last_error());
    return 1;
  }
  const float *back = saxpy_step_buffer_back(g);
  int bad = 0;
  for (int i = 0; i < N; i++)
    bad += back[i] != 3.0f * x[i] + 1.0f;
  printf("saxpy: %d of %d wrong\n", bad, N);
  saxpy_step_destroy(g);
  cudaFree(dx);
  cudaFree(dy);
  free(x);
  free(y);
  return bad != 0;
}
