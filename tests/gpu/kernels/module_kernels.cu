// module_kernels.cu: the kernels that tests/gpu/modules.cgraph loads from
// modules.  The build makes PTX, a cubin and a fatbin of this file (and
// cubins for sm_75 and sm_80, one of which the device cannot run); it is
// never linked into a program.
#include <cstdint>

#include "spin.cuh"

extern "C" __global__ void mod_transform(const uint32_t *x, uint32_t *y, uint32_t k, uint32_t n,
                                         uint64_t ns) {
  spin_ns(ns);
  uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = x[i] * 3 + k;
}

extern "C" __global__ void mod_bump(uint32_t *x, uint32_t k, uint32_t n, uint64_t ns) {
  spin_ns(ns);
  uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] += k;
}

// A C++ kernel: its symbol is the mangled name, _Z7mangledPjj.
__global__ void mangled(uint32_t *x, uint32_t n) {
  uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] ^= 0x5a5a5a5au;
}

// Through more than 48 KiB of dynamic shared memory: x[i] is stored `stride`
// words apart and read back reversed, so every word of the span is used.
extern "C" __global__ void through_smem(const uint32_t *x, uint32_t *y, uint32_t n,
                                        uint32_t stride) {
  extern __shared__ uint32_t s[];
  uint32_t i = threadIdx.x;
  if (i < n)
    s[i * stride] = x[i];
  __syncthreads();
  if (i < n)
    y[i] = s[(n - 1 - i) * stride] + 1;
}

// A pdl kernel: it waits for its predecessors before it reads.
extern "C" __global__ void pdl_transform(const uint32_t *x, uint32_t *y, uint32_t k, uint32_t n) {
#if __CUDA_ARCH__ >= 900
  cudaGridDependencySynchronize();
#endif
  uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = x[i] * 5 + k;
}

// Each block writes how many blocks its cluster has (1 where there are
// no clusters).
extern "C" __global__ void cluster_blocks(uint32_t *y) {
  uint32_t blocks = 1;
#if __CUDA_ARCH__ >= 900
  asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(blocks));
#endif
  if (threadIdx.x == 0)
    y[blockIdx.x] = blocks;
}
