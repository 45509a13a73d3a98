#include "errors_graph.h"

extern "C" __global__ void present(uint32_t *y) { y[threadIdx.x] = threadIdx.x; }
