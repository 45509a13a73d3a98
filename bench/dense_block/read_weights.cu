// The floor of the dense block's step: a read-only kernel over as many
// bytes as the step's weights, every 16-byte chunk loaded once (kept out of
// L1, as the library's GEMVs load weights), four in flight a thread, folded
// into a value that is stored only if it is impossible, so that the loads
// cannot be dropped.
#include <cuda_runtime.h>
#include <stdint.h>

#include "llm_device.cuh" // llm::load_weight

__global__ void __launch_bounds__(512) dense_read_only(const uint4 *p, size_t n, uint4 *sink) {
  uint32_t acc = 0;
  const size_t stride = (size_t)gridDim.x * blockDim.x;
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  for (; i + 3 * stride < n; i += 4 * stride) {
    uint4 v[4];
#pragma unroll
    for (int u = 0; u < 4; u++)
      v[u] = llm::load_weight(reinterpret_cast<const llm::bf16 *>(p + i + u * stride));
#pragma unroll
    for (int u = 0; u < 4; u++)
      acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  }
  for (; i < n; i += stride) {
    uint4 v = llm::load_weight(reinterpret_cast<const llm::bf16 *>(p + i));
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x9e3779b9u && threadIdx.x == 511)
    sink[0] = make_uint4(acc, 0, 0, 0);
}

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
  dense_read_only<<<sms * 4, 512, 0, stream>>>((const uint4 *)p, bytes / 16, (uint4 *)sink);
  return cudaGetLastError();
}
