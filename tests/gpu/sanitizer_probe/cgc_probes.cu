// cgc_probes.cu: probes.cgraph's kernels (the generated header checks
// them against their declarations).  Every barrier is reached by every
// thread of the block, and shared memory is used race-free.
#include "probes_graph.h"

namespace {
constexpr unsigned THREADS = 256; // sum's block (probes.cgraph's THREADS)

__device__ void block_sum(const float *x, float *part) {
  __shared__ float s[THREADS];
  s[threadIdx.x] = x[blockIdx.x * THREADS + threadIdx.x];
  __syncthreads();
  for (unsigned half = THREADS / 2; half > 0; half /= 2) {
    if (threadIdx.x < half)
      s[threadIdx.x] += s[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0)
    part[blockIdx.x] = s[0];
}
} // namespace

extern "C" __global__ void ones(float *x, uint32_t n) {
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    x[i] = 1.0f;
}

extern "C" __global__ void sum(const float *x, float *part) {
  if (blockDim.x != THREADS)
    __trap();
  block_sum(x, part);
}

extern "C" __global__ void put(uint32_t *x, uint32_t v) { *x = v; }
extern "C" __global__ void count(uint32_t *x) { *x += 1; }

extern "C" __global__ void sum_set(const float *x, float *part, uint32_t *it, uint32_t n,
                                   cudaGraphConditionalHandle h) {
  if (blockDim.x != THREADS)
    __trap();
  block_sum(x, part);
  if (blockIdx.x == 0 && threadIdx.x == 0) { /* one thread: racing sets are undefined */
    uint32_t v = *it + 1;
    *it = v;
    cudaGraphSetConditional(h, v < n ? 1u : 0u);
  }
}

extern "C" __global__ void add_value(uint32_t *x, uint32_t v) {
  if (threadIdx.x == 0)
    atomicAdd(x, v);
}

extern "C" __global__ void add_slot(uint32_t *x, const uint32_t *v) {
  if (threadIdx.x == 0)
    atomicAdd(x, *v);
}

// Programmatic dependent launch exists from sm_90 on; built for an older
// GPU the kernels neither wait nor let their dependents start early.
__device__ __forceinline__ void pdl_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  cudaGridDependencySynchronize();
#endif
}
__device__ __forceinline__ void pdl_trigger() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  cudaTriggerProgrammaticLaunchCompletion();
#endif
}

// pdl kernels: the consumer waits for its predecessors before it reads;
// the producer lets its dependents start once its writes are out.
extern "C" __global__ void pdl_ones(float *x, uint32_t n) {
  pdl_wait();
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    x[i] = 1.0f;
  __threadfence();
  pdl_trigger();
}

extern "C" __global__ void pdl_sum(const float *x, float *part) {
  if (blockDim.x != THREADS)
    __trap();
  pdl_wait();
  block_sum(x, part);
  pdl_trigger();
}
