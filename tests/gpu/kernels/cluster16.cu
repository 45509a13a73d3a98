#include "cluster16_graph.h"

// Block b (blockIdx.y * gridDim.x + blockIdx.x) writes y[3 * b]: the
// blocks of its cluster, y[3 * b + 1]: its rank in the cluster, and
// y[3 * b + 2]: its cluster's index, x first (0 for all three where the
// kernel is built without clusters, below sm_90).
extern "C" __global__ void cluster_rank(uint32_t *y) {
  uint32_t blocks = 0, rank = 0, id = 0;
#if __CUDA_ARCH__ >= 900
  uint32_t cx, cy, nx;
  asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(blocks));
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  asm volatile("mov.u32 %0, %%clusterid.x;" : "=r"(cx));
  asm volatile("mov.u32 %0, %%clusterid.y;" : "=r"(cy));
  asm volatile("mov.u32 %0, %%nclusterid.x;" : "=r"(nx));
  id = cy * nx + cx;
#endif
  uint32_t b = blockIdx.y * gridDim.x + blockIdx.x;
  if (threadIdx.x == 0) {
    y[3 * b] = blocks;
    y[3 * b + 1] = rank;
    y[3 * b + 2] = id;
  }
}

// The PTX version the kernel that runs was built from (90 for sm_90), or
// -1 when CUDA cannot say.
extern "C" int cluster_rank_ptx_version(void) {
  cudaFuncAttributes a;
  if (cudaFuncGetAttributes(&a, cluster_rank) != cudaSuccess) {
    (void)cudaGetLastError();
    return -1;
  }
  return a.ptxVersion;
}
