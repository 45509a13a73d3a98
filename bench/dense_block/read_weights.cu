// The floor of the dense block's step: the benchmarks' read-only kernel
// (read_only.cuh) over as many bytes as the step's weights.
#include "read_only.cuh"

// bytes / 16 chunks of p (16-byte aligned), four blocks of 512 a
// multiprocessor; sink: 16 bytes that are never written in practice.
extern "C" cudaError_t dense_read_weights(const void *p, size_t bytes, void *sink,
                                          cudaStream_t stream) {
  int device, sms;
  cudaError_t err = cudaGetDevice(&device);
  if (err == cudaSuccess)
    err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  if (err != cudaSuccess)
    return err;
  bench_read_only<<<sms * 4, 512, 0, stream>>>((const uint4 *)p, bytes / 16, (uint4 *)sink);
  return cudaGetLastError();
}
