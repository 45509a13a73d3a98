/* cgrt.h: the cgc runtime library.
 *
 * The C that cgc generates describes each graph in constant tables and
 * calls this library to build, instantiate, launch, rebind and destroy it.
 * Users call the generated functions (G_create, G_launch, ...); the
 * functions below that they may call directly are cgrt_last_error() and
 * the options. */
#ifndef CGRT_H
#define CGRT_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "cgrt_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef int cgrt_status;
enum {
  CGRT_OK = 0,
  CGRT_ERROR_CUDA = 1,    /* a CUDA call failed; cgrt_last_error() names it */
  CGRT_ERROR_INVALID = 2, /* a NULL or otherwise unusable argument */
  CGRT_ERROR_NO_MEMORY = 3 /* host memory ran out */
};

/* The last failure's message in this thread, e.g.
 * "decode_step.cgraph:21:9: node attn[0]: cudaGraphAddKernelNode: invalid
 * argument (cudaErrorInvalidValue)"; "" if nothing failed yet. */
const char *cgrt_last_error(void);

#define CGRT_CURRENT_DEVICE (-1)

typedef struct cgrt_options {
  int device;           /* device ordinal, or CGRT_CURRENT_DEVICE */
  void *user;           /* returned by G_user() */
  int upload;           /* nonzero: upload the graph at create, so the first
                           launch costs no more than the others */
  cudaStream_t stream;  /* where to upload (create waits for it) */
} cgrt_options;

/* The options used when create is given NULL. */
#define CGRT_OPTIONS_INIT {CGRT_CURRENT_DEVICE, NULL, 1, 0}

/* ---- for generated code ---- */

typedef struct cgrt_graph cgrt_graph;

cgrt_status cgrt_create(cgrt_graph **out, const cgrt_graph_desc *desc, void *const *externs,
                        const cgrt_options *opt);
cgrt_status cgrt_launch(cgrt_graph *g, cudaStream_t stream);
cgrt_status cgrt_set_scalar(cgrt_graph *g, uint32_t scalar, const void *value);
cgrt_status cgrt_get_scalar(cgrt_graph *g, uint32_t scalar, void *value);
cgrt_status cgrt_bind(cgrt_graph *g, uint32_t buffer, void *ptr);
void *cgrt_buffer(cgrt_graph *g, uint32_t buffer);
void *cgrt_user(cgrt_graph *g);
void cgrt_destroy(cgrt_graph *g);
/* For generated code: a NULL argument before the runtime is reached. */
cgrt_status cgrt_invalid(const cgrt_graph_desc *desc, const char *what);
/* For drivers in languages where a call costs more than a store (the
 * Python package): sets each scalar i whose set[i] is nonzero from
 * values[i], as cgrt_set_scalar does, clearing set[i], then launches; one
 * call a step.  set and values have one entry per scalar (at least one). */
cgrt_status cgrt_set_launch(cgrt_graph *g, uint8_t *set, const void *const *values,
                            cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
