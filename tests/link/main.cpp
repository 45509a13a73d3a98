// main.cpp: main.c's check in C++, which compiles the generated C as C++.
#include "step_graph.h"

#include <cstdio>
#include <vector>

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("step: linked and ran; running the graph needs a GPU\n");
    return 77;
  }
  const uint32_t n = 1024;
  std::vector<float> host(n);
  for (uint32_t i = 0; i < n; i++)
    host[i] = float(i);
  void *x = nullptr;
  if (cudaMalloc(&x, n * sizeof(float)) ||
      cudaMemcpy(x, host.data(), n * sizeof(float), cudaMemcpyHostToDevice)) {
    std::fprintf(stderr, "step: CUDA set-up failed\n");
    return 1;
  }
  step_extern ext = {x};
  step *g = nullptr;
  if (step_create(&g, &ext, nullptr) || step_launch(g, 0) || cudaStreamSynchronize(0)) {
    std::fprintf(stderr, "step: %s\n", cgrt_last_error());
    return 1;
  }
  step_destroy(g);
  int bad = cudaMemcpy(host.data(), x, n * sizeof(float), cudaMemcpyDeviceToHost) != cudaSuccess;
  for (uint32_t i = 0; i < n; i++)
    bad += host[i] != 2.0f * float(i);
  cudaFree(x);
  std::printf("step: %s\n", bad ? "wrong" : "right");
  return bad != 0;
}
