#include "soak_graph.h"

extern "C" __global__ void add_pos(const uint32_t *pos, uint64_t *sum) { *sum += *pos; }
extern "C" __global__ void add_value(uint32_t v, uint64_t *sum) { *sum += v; }
