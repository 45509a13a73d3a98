/* check.h: what the samples, the GPU tests and the benchmarks do with a
 * failed call: print where, what and why, and exit 1; and whether a
 * sample runs quick. */
#ifndef CGC_SAMPLES_CHECK_H
#define CGC_SAMPLES_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "cgrt.h"

/* A CUDA runtime call that must succeed. */
#define CUDA(call)                                                                         \
  do {                                                                                     \
    cudaError_t e_ = (call);                                                               \
    if (e_ != cudaSuccess) {                                                               \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      exit(1);                                                                             \
    }                                                                                      \
  } while (0)

/* A call of the generated API that must succeed; the runtime's message
 * names the graph, the node and its .cgraph position. */
#define CGRT(call)                                                                         \
  do {                                                                                     \
    if ((call) != CGRT_OK) {                                                               \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cgrt_last_error());     \
      exit(1);                                                                             \
    }                                                                                      \
  } while (0)

/* CGC_SAMPLE_QUICK set (and not 0): the sample does the least work that
 * still runs every node and checks every result (one timed round, short
 * problems), as under compute-sanitizer (tests/run_sanitizer.sh), whose
 * tools make each kernel hundreds of times slower. */
static inline int sample_quick(void) {
  const char *q = getenv("CGC_SAMPLE_QUICK");
  return q && *q && strcmp(q, "0") != 0;
}

#endif
