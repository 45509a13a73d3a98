// read_only.cuh: the benchmarks' floor, a read-only kernel over the bytes
// a kernel streams: every 16-byte chunk loaded once (kept out of L1, as the
// library's GEMVs load weights), four in flight a thread, folded into a
// value that is stored only if it is impossible, so that the loads cannot
// be dropped.  It waits and triggers as the library's kernels do, so that
// it may stand in a chain of programmatic launches (alone, both are
// nothing).  Launched as four blocks of 512 a multiprocessor.
#ifndef BENCH_READ_ONLY_CUH
#define BENCH_READ_ONLY_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#include "llm_device.cuh" // llm::load_weight, wait, trigger

__global__ void __launch_bounds__(512) bench_read_only(const uint4 *p, size_t n, uint4 *sink) {
  llm::wait();
  llm::trigger();
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
  if (acc == 0x9e3779b9u && threadIdx.x == blockDim.x - 1)
    sink[0] = make_uint4(acc, 0, 0, 0);
}

#endif
