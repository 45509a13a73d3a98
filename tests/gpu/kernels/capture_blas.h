/* capture_blas.h: what test_capture passes its capture functions as
 * cgrt_options.user: a cuBLAS handle and the workspace it must use (set
 * after each cublasSetStream, which drops it). */
#ifndef CAPTURE_BLAS_H
#define CAPTURE_BLAS_H

#include <stddef.h>

#include <cublas_v2.h>

typedef struct capture_blas {
  cublasHandle_t handle;
  void *workspace;
  size_t bytes;
} capture_blas;

#endif
