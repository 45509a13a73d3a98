// Compiled for another GPU only (machine code, no PTX): on this one the
// kernel has no image, and creating its node must fail with a message.
#include <cstdint>

extern "C" __global__ void absent(uint32_t *y) { y[threadIdx.x] = 0; }
