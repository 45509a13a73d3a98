// hold.cu: a kernel that holds a stream, for tests that queue launches
// behind it (test_replay, test_updates, test_streams, test_capture).
#include <cstdint>

#include "spin.cuh"

// Holds its stream until the host sets *gate (mapped pinned memory) or
// limit_ns passes, so that what the host issues after it queues up behind
// it however long issuing takes.
static __global__ void hold(const volatile uint32_t *gate, uint64_t limit_ns) {
  uint64_t start = global_ns();
  while (!*gate && global_ns() - start < limit_ns) {
  }
}

extern "C" cudaError_t hold_stream(const volatile uint32_t *gate, uint64_t limit_ns,
                                   cudaStream_t stream) {
  hold<<<1, 1, 0, stream>>>(gate, limit_ns);
  return cudaGetLastError();
}
