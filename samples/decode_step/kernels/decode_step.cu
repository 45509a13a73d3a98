// The decode step's kernels (decode_kernels.cuh), checked against their
// declarations in kernels.cgraph by the generated header.
#include "decode_step_graph.h"

#include "decode_kernels.cuh"
