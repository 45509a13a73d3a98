#include "replay_graph.h"
#include "spin.cuh"

// log[0] counts the launches; log[1 + k] is what launch k saw.
extern "C" __global__ void record(const uint32_t *pos, uint32_t *log) {
  log[1 + log[0]] = *pos;
  log[0]++;
}

extern "C" __global__ void record_value(uint32_t pos, uint32_t *log) {
  log[1 + log[0]] = pos;
  log[0]++;
}

extern "C" __global__ void bump(uint32_t *n) { (*n)++; }

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
