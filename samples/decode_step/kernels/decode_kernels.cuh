// decode_kernels.cuh: the decode step's kernels, in f32.  Each is a pdl
// kernel: it waits for the kernels before it (cudaGridDependencySynchronize)
// before it reads, then lets the kernels after it launch (they wait in turn
// for it to end), so that their launch overlaps its work.  Included by
// decode_step.cu and samples/generate (after their generated headers, so
// that nvcc checks each definition against its declaration) and by
// bench/generate (PyTorch's side).
#ifndef DECODE_KERNELS_CUH
#define DECODE_KERNELS_CUH

#include <stdint.h>

#if __CUDA_ARCH__ >= 900
#define WAIT_FOR_PREDECESSORS()                                                            \
  (cudaGridDependencySynchronize(), cudaTriggerProgrammaticLaunchCompletion())
#else
#define WAIT_FOR_PREDECESSORS() ((void)0)
#endif

// y = x / rms(x) * w, one block.
extern "C" __global__ void rmsnorm(const float *x, const float *w, float *y, uint32_t n) {
  WAIT_FOR_PREDECESSORS();
  __shared__ float part[32];
  float s = 0;
  for (uint32_t i = threadIdx.x; i < n; i += blockDim.x)
    s += x[i] * x[i];
  for (int o = 16; o > 0; o /= 2)
    s += __shfl_down_sync(0xffffffffu, s, o);
  if (threadIdx.x % 32 == 0)
    part[threadIdx.x / 32] = s;
  __syncthreads();
  if (threadIdx.x < 32) {
    s = threadIdx.x < blockDim.x / 32 ? part[threadIdx.x] : 0;
    for (int o = 16; o > 0; o /= 2)
      s += __shfl_down_sync(0xffffffffu, s, o);
    if (threadIdx.x == 0)
      part[0] = rsqrtf(s / n + 1e-6f);
  }
  __syncthreads();
  float r = part[0];
  for (uint32_t i = threadIdx.x; i < n; i += blockDim.x)
    y[i] = x[i] * r * w[i];
}

// y = W x for a rows x cols row-major W: one warp a row.
extern "C" __global__ void matvec(const float *w, const float *x, float *y, uint32_t rows,
                                  uint32_t cols) {
  WAIT_FOR_PREDECESSORS();
  uint32_t row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
  if (row >= rows)
    return;
  float s = 0;
  for (uint32_t c = threadIdx.x % 32; c < cols; c += 32)
    s += w[(size_t)row * cols + c] * x[c];
  for (int o = 16; o > 0; o /= 2)
    s += __shfl_down_sync(0xffffffffu, s, o);
  if (threadIdx.x % 32 == 0)
    y[row] = s;
}

// Row *pos of the caches gets k and v.
extern "C" __global__ void kv_store(const float *k, const float *v, float *kc, float *vc,
                                    const uint32_t *pos, uint32_t n) {
  WAIT_FOR_PREDECESSORS();
  uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    kc[(size_t)*pos * n + i] = k[i];
    vc[(size_t)*pos * n + i] = v[i];
  }
}

// o = softmax(q K^T / sqrt(n)) V over the first *nkeys rows; one block,
// the scores in dynamic shared memory.
extern "C" __global__ void attention(const float *q, const float *kc, const float *vc,
                                     const uint32_t *nkeys, float *o, uint32_t n) {
  WAIT_FOR_PREDECESSORS();
  extern __shared__ float score[];
  __shared__ float stat[2];
  uint32_t keys = *nkeys;
  float scale = rsqrtf((float)n);
  for (uint32_t j = threadIdx.x; j < keys; j += blockDim.x) {
    float s = 0;
    for (uint32_t i = 0; i < n; i++)
      s += q[i] * kc[(size_t)j * n + i];
    score[j] = s * scale;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    float m = score[0];
    for (uint32_t j = 1; j < keys; j++)
      m = fmaxf(m, score[j]);
    float sum = 0;
    for (uint32_t j = 0; j < keys; j++)
      sum += expf(score[j] - m);
    stat[0] = m;
    stat[1] = sum;
  }
  __syncthreads();
  for (uint32_t j = threadIdx.x; j < keys; j += blockDim.x)
    score[j] = expf(score[j] - stat[0]) / stat[1];
  __syncthreads();
  for (uint32_t i = threadIdx.x; i < n; i += blockDim.x) {
    float s = 0;
    for (uint32_t j = 0; j < keys; j++)
      s += score[j] * vc[(size_t)j * n + i];
    o[i] = s;
  }
}

extern "C" __global__ void add(float *x, const float *y, uint32_t n) {
  WAIT_FOR_PREDECESSORS();
  uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] += y[i];
}

#endif
