// The sample's own kernel: the switch's default body.  The router and the
// experts' feed-forward kernels are the library's (kernels/, llm.cgraph).
#include "moe_route_graph.h"

#include <cstdint>

// y = 0, d values (d <= the block's threads).
extern "C" __global__ void zero(__nv_bfloat16 *y, uint32_t d) {
  if (threadIdx.x < d)
    y[threadIdx.x] = __float2bfloat16(0.0f);
}
