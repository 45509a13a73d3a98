#include <cublas_v2.h>

#include "capture_blas.h"
#include "capture_graph.h"
#include "spin.cuh"

extern "C" __global__ void produce(float *x, const uint32_t *seed, uint32_t n, uint64_t ns) {
  spin_ns(ns);
  uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] = (float)((*seed * 2654435761u + i * 40503u) % 1000u) / 1000.0f - 0.5f;
}

extern "C" __global__ void twice(const float *y, float *z, uint32_t n) {
  uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    z[i] = 2.0f * y[i];
}

// twice, after its predecessor's programmatic edge: it waits for that
// kernel's writes before reading them.
extern "C" __global__ void twice_pdl(const float *y, float *z, uint32_t n) {
#if __CUDA_ARCH__ >= 900
  cudaGridDependencySynchronize();
#endif
  uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    z[i] = 2.0f * y[i];
}

__global__ void add_one(float *x, uint32_t lo, uint32_t hi) {
  uint32_t i = lo + blockIdx.x * blockDim.x + threadIdx.x;
  if (i < hi)
    x[i] += 1.0f;
}

// y = A x for a row-major n x n A: cuBLAS sees A's transpose, column-major.
// cublasSetStream puts the handle back on its default workspace, which
// cuBLAS would allocate while capturing: the workspace is set after it.
extern "C" cudaError_t sgemv(cudaStream_t stream, void *user, const float *a, const float *x,
                             float *y, uint32_t n) {
  const capture_blas *b = (const capture_blas *)user;
  cublasHandle_t h = b->handle;
  const float one = 1.0f, zero = 0.0f;
  if (cublasSetStream(h, stream) != CUBLAS_STATUS_SUCCESS ||
      cublasSetWorkspace(h, b->workspace, b->bytes) != CUBLAS_STATUS_SUCCESS)
    return cudaErrorUnknown;
  if (cublasSgemv(h, CUBLAS_OP_T, (int)n, (int)n, &one, a, (int)n, x, 1, &zero, y, 1) !=
      CUBLAS_STATUS_SUCCESS)
    return cudaErrorUnknown;
  return cudaGetLastError();
}

extern "C" cudaError_t bump(cudaStream_t stream, void *user, float *x, uint32_t n) {
  (void)user;
  if ((uintptr_t)x % 512 == 0) {
    add_one<<<(n + 255) / 256, 256, 0, stream>>>(x, 0, n);
  } else {
    add_one<<<1, 256, 0, stream>>>(x, 0, n / 2);
    add_one<<<1, 256, 0, stream>>>(x, n / 2, n);
  }
  return cudaGetLastError();
}

extern "C" cudaError_t fail_with(cudaStream_t stream, void *user, float *x, uint32_t how) {
  (void)user;
  switch (how) {
  case 0: return cudaErrorInvalidValue; /* a failure the function reports */
  case 1:
    add_one<<<1, 32, 0, stream>>>(x, 0, 1);
    cudaStreamSynchronize(stream); /* not allowed while capturing: its error is ignored */
    return cudaSuccess;
  case 2: {
    /* Work on another stream, joined to none: the capture does not see it
     * and ends valid, but an event recorded on the capturing stream and
     * waited on elsewhere leaves the capture unjoined. */
    cudaStream_t other;
    cudaEvent_t e;
    if (cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking) != cudaSuccess)
      return cudaErrorUnknown;
    cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
    cudaEventRecord(e, stream);
    cudaStreamWaitEvent(other, e, 0); /* forks the capture into `other` */
    add_one<<<1, 32, 0, other>>>(x, 0, 1);
    cudaEventDestroy(e);
    cudaStreamDestroy(other); /* never joined back */
    return cudaSuccess;
  }
  default: return cudaSuccess; /* captures nothing */
  }
}
