// dense_linear.cuh: the GEMMs of the dense block as capture functions
// (cuBLAS, bf16 in and out, f32 accumulation): linear_bf16 and
// linear_bf16_residual.  Included by dense_block.cu and by
// samples/tensor_parallel's tensor_parallel.cu, each after its generated
// header, so that nvcc checks the definitions against the capture
// declarations of its .cgraph.
#ifndef DENSE_LINEAR_CUH
#define DENSE_LINEAR_CUH

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <stdint.h>

// y = W x + beta y for a row-major m x k W and n tokens (x is n x k, y n x m,
// row-major), bf16 in and out, f32 accumulation.  cuBLAS is column-major:
// it sees W as the k x m matrix W^T, so W is transposed (OP_T) with lda = k.
// cublasSetStream puts the handle back on its default workspace, which
// cuBLAS may allocate while the stream is captured: the workspace is set
// again after it, on every call.
static cudaError_t dense_gemm(cudaStream_t stream, void *user, const __nv_bfloat16 *w,
                              const __nv_bfloat16 *x, __nv_bfloat16 *y, uint32_t m, uint32_t n,
                              uint32_t k, void *ws, uint64_t ws_bytes, float beta) {
  cublasHandle_t blas = (cublasHandle_t)user;
  const float alpha = 1.0f;
  if (cublasSetStream(blas, stream) != CUBLAS_STATUS_SUCCESS ||
      cublasSetWorkspace(blas, ws, (size_t)ws_bytes) != CUBLAS_STATUS_SUCCESS)
    return cudaErrorUnknown;
  if (cublasGemmEx(blas, CUBLAS_OP_T, CUBLAS_OP_N, (int)m, (int)n, (int)k, &alpha, w, CUDA_R_16BF,
                   (int)k, x, CUDA_R_16BF, (int)k, &beta, y, CUDA_R_16BF, (int)m,
                   CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) != CUBLAS_STATUS_SUCCESS)
    return cudaErrorUnknown;
  return cudaGetLastError();
}

extern "C" cudaError_t linear_bf16(cudaStream_t stream, void *user, const __nv_bfloat16 *w,
                                   const __nv_bfloat16 *x, __nv_bfloat16 *y, uint32_t m, uint32_t n,
                                   uint32_t k, uint8_t *ws, uint64_t ws_bytes) {
  return dense_gemm(stream, user, w, x, y, m, n, k, ws, ws_bytes, 0.0f);
}

// The residual add is the GEMM's: y = W x + y.
extern "C" cudaError_t linear_bf16_residual(cudaStream_t stream, void *user, const __nv_bfloat16 *w,
                                            const __nv_bfloat16 *x, __nv_bfloat16 *y, uint32_t m,
                                            uint32_t n, uint32_t k, uint8_t *ws,
                                            uint64_t ws_bytes) {
  return dense_gemm(stream, user, w, x, y, m, n, k, ws, ws_bytes, 1.0f);
}

#endif
