#include "chains_graph.h"
#include "spin.cuh"

extern "C" __global__ void spin_on(uint32_t *x, uint64_t ns) {
  spin_ns(ns);
  x[threadIdx.x]++;
}
