// The decode step's kernels (samples/decode_step), checked against their
// declarations by batch.cgraph's generated header.
#include "batch_graph.h"

#include "decode_kernels.cuh"
