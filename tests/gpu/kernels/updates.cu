#include "updates_graph.h"

// log[0] counts the launches; log[1 + k] is what launch k saw.
extern "C" __global__ void log_value(uint32_t v, uint32_t *log) {
  log[1 + log[0]] = v;
  log[0]++;
}

extern "C" __global__ void log_two(uint32_t a, uint32_t b, uint32_t *log) {
  log[1 + log[0]] = a + b;
  log[0]++;
}

extern "C" __global__ void log_pointer(const uint32_t *p, uint32_t *log) {
  log[1 + log[0]] = *p;
  log[0]++;
}

// log[*seq] counts the blocks launch *seq ran.
extern "C" __global__ void log_blocks(const uint32_t *seq, uint32_t *log) {
  if (threadIdx.x == 0)
    atomicAdd(&log[*seq], 1u);
}
