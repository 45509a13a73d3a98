// generate_kernels.cuh: the kernels generation adds to the decode step's
// (samples/decode_step/kernels/decode_kernels.cuh): the embedding and the
// choice of the next token.  pdl kernels, like those.  Included by
// generate.cu (after the generated header, which checks them) and by
// bench/generate (PyTorch's side).
#ifndef GENERATE_KERNELS_CUH
#define GENERATE_KERNELS_CUH

#include "../../decode_step/kernels/decode_kernels.cuh"

// x = table[*token], n values; one block.
extern "C" __global__ void embed(const float *table, const uint32_t *token, float *x,
                                 uint32_t n) {
  WAIT_FOR_PREDECESSORS();
  const float *row = table + (size_t)*token * n;
  for (uint32_t i = threadIdx.x; i < n; i += blockDim.x)
    x[i] = row[i];
}

// Greedy choice: the largest of n logits, the lowest index among equal
// ones (a NaN is never chosen; all NaN gives 0).  One block of a power of
// two threads up to 1024.  It becomes *token and tokens[*count]; *pos,
// *nkeys and *count advance by one.
extern "C" __global__ void next_token(const float *logits, uint32_t n, uint32_t *token,
                                      uint32_t *pos, uint32_t *nkeys, uint32_t *count,
                                      uint32_t *tokens) {
  WAIT_FOR_PREDECESSORS();
  __shared__ float best[1024];
  __shared__ uint32_t where[1024];
  float b = -INFINITY;
  uint32_t w = 0xffffffffu;
  for (uint32_t i = threadIdx.x; i < n; i += blockDim.x)
    if (logits[i] > b) { // strictly: the first (lowest) index of a tie in this thread's run
      b = logits[i];
      w = i;
    }
  best[threadIdx.x] = b;
  where[threadIdx.x] = w;
  __syncthreads();
  for (uint32_t half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) {
      const float ob = best[threadIdx.x + half];
      const uint32_t ow = where[threadIdx.x + half];
      if (ob > best[threadIdx.x] || (ob == best[threadIdx.x] && ow < where[threadIdx.x])) {
        best[threadIdx.x] = ob;
        where[threadIdx.x] = ow;
      }
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    const uint32_t t = where[0] == 0xffffffffu ? 0 : where[0];
    *token = t;
    tokens[*count] = t;
    *count += 1;
    *pos += 1;
    *nkeys += 1;
  }
}

#endif
