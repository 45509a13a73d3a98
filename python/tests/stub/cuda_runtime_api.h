/* The CUDA types that cgrt.h and the generated C name, so that the tests
 * compile them with the stand-in runtime (fake_cgrt.c) where the CUDA
 * Toolkit is not installed. */
#ifndef CGC_TEST_STUB_CUDA_RUNTIME_API_H
#define CGC_TEST_STUB_CUDA_RUNTIME_API_H
typedef struct CUstream_st *cudaStream_t;
typedef int cudaError_t;
#endif
