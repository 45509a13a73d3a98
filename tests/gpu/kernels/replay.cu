#include "replay_graph.h"

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
