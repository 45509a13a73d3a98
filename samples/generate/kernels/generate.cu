// The generation loop's kernels, checked against their declarations in
// generate.cgraph by the generated header.
#include "generate_graph.h"

#include "generate_kernels.cuh"
