/* test_features: rebinding extern buffers between launches, get of a
 * scalar a kernel wrote, shared memory above 48K (dynamic alone, and static
 * with dynamic only together), a pinned host buffer
 * written by a copy node, and G_destroy(NULL). */
#include "features_graph.h"
#include "gpu_test.h"

enum { N = 256, BIG = 25600 };

int main(void) {
  test_start("test_features");
  uint32_t *dst[2], *src[2], host[3 * N], hsrc[2][N];
  for (int k = 0; k < 2; k++) {
    CUDA(cudaMalloc((void **)&dst[k], 3 * N * sizeof(uint32_t)));
    CUDA(cudaMalloc((void **)&src[k], N * sizeof(uint32_t)));
    for (int i = 0; i < N; i++)
      hsrc[k][i] = (uint32_t)rand64();
    CUDA(cudaMemcpy(src[k], hsrc[k], sizeof hsrc[k], cudaMemcpyHostToDevice));
    CUDA(cudaMemset(dst[k], 0xa5, 3 * N * sizeof(uint32_t))); /* poison */
  }
  features_extern ext = {dst[0], src[0]};
  features *g;
  CGRT(features_create(&g, &ext, NULL));

  float *x = malloc(BIG * sizeof *x);
  double want = 0, want_split = 0;
  for (int i = 0; i < BIG; i++)
    x[i] = (float)(rand64() % 64); /* small integers: every order sums exactly */
  for (int i = 0; i < BIG; i++)
    want += x[i];
  for (int i = 0; i < 10240 + 4096; i++)
    want_split += x[i];
  CUDA(cudaMemcpy(features_buffer_x(g), x, BIG * sizeof *x, cudaMemcpyHostToDevice));
  float *back = features_buffer_back(g), *back2 = features_buffer_back2(g);
  *back = NAN;
  *back2 = NAN;

  uint32_t v[2] = {(uint32_t)rand64() % 1000, (uint32_t)rand64() % 1000};
  for (int k = 0; k < 2; k++) {
    if (k == 1) {
      CGRT(features_bind_dst(g, dst[1]));
      CGRT(features_bind_src(g, src[1]));
    }
    CGRT(features_set_v(g, v[k]));
    CGRT(features_launch(g, 0));
    CUDA(cudaStreamSynchronize(0));
    uint32_t odd, want_odd = 0;
    for (int i = 0; i < N; i++)
      want_odd += hsrc[k][i] & 1;
    CGRT(features_get_odd(g, &odd));
    EXPECT(odd == want_odd, "launch %d: get_odd gives %u, the kernel counted %u", k, odd, want_odd);
  }
  for (int k = 0; k < 2; k++) {
    CUDA(cudaMemcpy(host, dst[k], sizeof host, cudaMemcpyDeviceToHost));
    int bad_w = 0, bad_c = 0, bad_f = 0;
    for (int i = 0; i < N; i++) {
      bad_w += host[i] != v[k] + (uint32_t)i;
      bad_c += host[N + i] != hsrc[k][i];
      bad_f += host[2 * N + i] != 7;
    }
    EXPECT(!bad_w && !bad_c && !bad_f,
           "buffer %d: %d kernel, %d copy and %d fill elements wrong", k, bad_w, bad_c, bad_f);
  }
  EXPECT(*back == (float)want, "smem(100K) sum %g, expected %g", *back, want);
  EXPECT(*back2 == (float)want_split, "40K static and smem(16K): sum %g, expected %g", *back2,
         want_split);

  features_destroy(g);
  features_destroy(NULL);
  for (int k = 0; k < 2; k++) {
    CUDA(cudaFree(dst[k]));
    CUDA(cudaFree(src[k]));
  }
  free(x);
  return test_end("test_features");
}
