#include "control_graph.h"

extern "C" __global__ void put(uint32_t *x, uint32_t v) { *x = v; }
extern "C" __global__ void count(uint32_t *x) { *x += 1; }
extern "C" __global__ void put_i(int32_t *x, int32_t v) { *x = v; }
extern "C" __global__ void count_i(int32_t *x) { *x += 1; }
extern "C" __global__ void halve(float *r) { *r *= 0.5f; }
