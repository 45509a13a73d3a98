/* triton: a Triton kernel (silu_mul, compiled to a cubin at build time by
 * compile_triton.py) runs as a node of a cgc graph between the sample's
 * own kernels, over launches with new inputs, and the result is checked
 * against the CPU.  Exits 77 (skipped) without a GPU, without Triton at
 * build time, or on a GPU that cannot run the cubin. */
#include "check.h"
#include "triton_graph.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

enum { N = 1 << 20, LAUNCHES = 16 };

static uint32_t mix(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return x;
}

static float gate_of(uint32_t seed, uint32_t i) {
  return (float)(mix(seed * 2654435761u + i) >> 8) * 0x1p-24f * 8.0f - 4.0f;
}

static float up_of(uint32_t seed, uint32_t i) {
  return (float)(mix(seed * 40503u + i + 1) >> 8) * 0x1p-24f * 4.0f - 2.0f;
}

int main(void) {
  int n = 0, dev, major, minor;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    printf("triton: skipped: no GPU\n");
    return 77;
  }
  CUDA(cudaGetDevice(&dev));
  CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
  CUDA(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
  if (major * 10 + minor != TRITON_ARCH) {
    printf("triton: skipped: the Triton kernel was compiled for sm_%d and the device is sm_%d%d "
           "(configure with CMAKE_CUDA_ARCHITECTURES=%d%d)\n",
           TRITON_ARCH, major, minor, major, minor);
    return 77;
  }
  float *y, *hy = malloc(N * sizeof *hy), *want = calloc(N, sizeof *want);
  CUDA(cudaMalloc((void **)&y, N * sizeof *y));
  CUDA(cudaMemset(y, 0, N * sizeof *y));
  ffn_extern ext = {y};
  ffn *g;
  if (ffn_create(&g, &ext, NULL) != CGRT_OK) {
    fprintf(stderr, "triton: %s\n", cgrt_last_error());
    return 1;
  }
  uint64_t rng = (uint64_t)time(NULL) ^ (uint64_t)getpid() << 20;
  uint32_t seed = (uint32_t)rng;
  printf("triton: seed %u\n", seed);
  for (int l = 0; l < LAUNCHES; l++) {
    CGRT(ffn_set_seed(g, seed + (uint32_t)l));
    CGRT(ffn_set_next(g, seed + (uint32_t)l + 1));
    CGRT(ffn_set_ns(g, (uint64_t)(l % 4) * 50000)); /* 0 to 150 us */
    CGRT(ffn_launch(g, 0));
    for (uint32_t i = 0; i < N; i++) {
      float gt = gate_of(seed + (uint32_t)l, i), u = up_of(seed + (uint32_t)l, i);
      float h = gt / (1.0f + expf(-gt)) * u;
      want[i] = want[i] * 0.5f + h * 2.0f;
    }
  }
  CUDA(cudaStreamSynchronize(0));
  CUDA(cudaMemcpy(hy, y, N * sizeof *hy, cudaMemcpyDeviceToHost));
  /* Triton's exp and division are approximate (a few ulps), so the
   * comparison is relative, to the value or to 1 where it is smaller. */
  int bad = 0;
  double worst = 0;
  for (uint32_t i = 0; i < N; i++) {
    double err = fabs((double)hy[i] - want[i]) / (fabs(want[i]) + 1.0);
    if (err > worst)
      worst = err;
    if (!(err < 1e-5)) {
      if (bad < 5)
        fprintf(stderr, "triton: y[%u] = %.9g, expected %.9g\n", i, hy[i], want[i]);
      bad++;
    }
  }
  printf("triton: %d launches of silu_mul (Triton) between make_inputs and project, %d "
         "elements: %d wrong, worst error %.2g\n",
         LAUNCHES, N, bad, worst);
  ffn_destroy(g);
  CUDA(cudaFree(y));
  free(hy);
  free(want);
  return bad ? 1 : 0;
}
