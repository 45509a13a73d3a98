/* test_cluster16: a kernel launched in clusters of 16 blocks (more than
 * the portable 8, which the runtime opts the kernel in to), along x and
 * as 4 x 4, through the CUDA graph and through the walk on the stream
 * (CGRT_SAFE_STREAM): every block sees a cluster of 16 blocks, its rank
 * in it and its cluster's index.  Skipped without a GPU, below compute
 * capability 9.0, and where the kernel is not built for sm_90. */
#include "gpu_test.h"
#include "cluster16_graph.h"

enum { BLOCKS = 32, WORDS = 3 * BLOCKS };

int cluster_rank_ptx_version(void);

/* One launch of the graph created with `safe`: the results against what
 * each block must see. */
static void run(unsigned safe, uint32_t *result) {
  const char *how = safe ? "walked on the stream" : "in the graph";
  cgrt_options o = CGRT_OPTIONS_INIT;
  o.safe = safe;
  wide_clusters_extern ext = {result};
  wide_clusters *g;
  CGRT(wide_clusters_create(&g, &ext, &o));
  for (int launch = 0; launch < 2; launch++) {
    CUDA(cudaMemset(result, 0xff, 2 * WORDS * sizeof *result));
    CGRT(wide_clusters_launch(g, 0));
    CUDA(cudaStreamSynchronize(0));
    uint32_t r[2 * WORDS];
    CUDA(cudaMemcpy(r, result, sizeof r, cudaMemcpyDeviceToHost));
    int bad[2] = {0, 0};
    uint32_t seen[2] = {0, 0}; /* the square's ranks, a bit each, per cluster */
    for (uint32_t b = 0; b < BLOCKS; b++) {
      const uint32_t *line = &r[3 * b], *square = &r[WORDS + 3 * b];
      bad[0] += line[0] != 16 || line[1] != b % 16 || line[2] != b / 16;
      uint32_t x = b % 8, y = b / 8; /* grid(8, 4) in clusters of 4 x 4 */
      bad[1] += square[0] != 16 || square[1] >= 16 || square[2] != x / 4 + (y / 4) * 2;
      if (square[1] < 16 && square[2] < 2)
        seen[square[2]] |= 1u << square[1];
    }
    EXPECT(!bad[0], "%s, launch %d: clusters of 16 along x: %d blocks saw otherwise (block 0: "
           "%u blocks, rank %u, cluster %u)", how, launch, bad[0], r[0], r[1], r[2]);
    EXPECT(!bad[1], "%s, launch %d: clusters of 4 x 4: %d blocks saw otherwise (block 0: %u "
           "blocks, rank %u, cluster %u)", how, launch, bad[1], r[WORDS], r[WORDS + 1],
           r[WORDS + 2]);
    EXPECT(seen[0] == 0xffff && seen[1] == 0xffff,
           "%s, launch %d: the ranks of the 4 x 4 clusters: %#x and %#x", how, launch, seen[0],
           seen[1]);
  }
  wide_clusters_destroy(g);
}

int main(void) {
  test_start("test_cluster16");
  int dev, major;
  CUDA(cudaGetDevice(&dev));
  CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
  if (major < 9) {
    printf("test_cluster16: skipped: clusters of 16 need compute capability 9.0, and the device "
           "is %d.x\n", major);
    return 77;
  }
  int ptx = cluster_rank_ptx_version();
  if (ptx < 90) {
    printf("test_cluster16: skipped: the kernel runs from PTX %d, below 9.0, which has no "
           "clusters (configure with CMAKE_CUDA_ARCHITECTURES=90)\n", ptx);
    return 77;
  }
  uint32_t *result;
  CUDA(cudaMalloc((void **)&result, 2 * WORDS * sizeof *result));
  run(0, result);
  run(CGRT_SAFE_STREAM, result);
  CUDA(cudaFree(result));
  return test_end("test_cluster16");
}
