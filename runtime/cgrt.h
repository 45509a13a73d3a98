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
  CGRT_ERROR_NO_MEMORY = 3, /* host memory ran out */
  CGRT_ERROR_COMM = 4       /* a collective's library (NCCL) failed or timed out */
};

/* The last failure's message in this thread, e.g.
 * "decode_step.cgraph:21:9: node attn[0]: cudaGraphAddKernelNode: invalid
 * argument (cudaErrorInvalidValue)"; "" if nothing failed yet. */
const char *cgrt_last_error(void);

#define CGRT_CURRENT_DEVICE (-1)

/* Device memory that graphs which never run at the same time share for
 * their owned buffers (`buffer NAME: T[...]`), so that a set of graphs
 * needs the memory of its largest member, not the sum: a server's graph
 * per batch size, say.  A member's owned buffers hold nothing from one of
 * its launches to the next (another member may have used the memory in
 * between): keep what must survive in extern buffers.  Its scalars, loop
 * counters and switch tables stay its own.  A graph with a `= 0` owned
 * buffer cannot be a member (the zeros are written once, at create).
 * Members may be launched on different streams: a launch on another stream
 * than the pool's previous launch first waits for everything queued on
 * that stream, so two members never run at once.  That stream must still
 * exist then (or be a default stream).  Streams are told apart by their
 * handles: launches from two threads on cudaStreamPerThread (another
 * stream in each thread) are not ordered, so pass streams of your own.
 * Create and launch members, and destroy the pool, from one thread at a
 * time; members may be destroyed from any thread. */
typedef struct cgrt_pool cgrt_pool;

/* A pool of `bytes` (at least the largest member's G_pool_bytes()) on
 * `device` (or CGRT_CURRENT_DEVICE). */
cgrt_status cgrt_pool_create(cgrt_pool **out, size_t bytes, int device);
/* Refused (CGRT_ERROR_INVALID, nothing released) while a member lives. */
cgrt_status cgrt_pool_destroy(cgrt_pool *pool);
size_t cgrt_pool_size(const cgrt_pool *pool);

/* CUDA features a graph can be built without, for running it under
 * compute-sanitizer, whose tools may not handle them (cgrt_options.safe,
 * or the environment variable CGRT_SANITIZER_SAFE): the graph computes the
 * same, at some cost in launch time.  Conditional nodes stay, but for
 * CGRT_SAFE_STREAM, which launches no graph. */
enum {
  /* No device-updatable kernel nodes: the scalar upload writes no node
   * parameters or grids on the device; the host updates those nodes. */
  CGRT_SAFE_DEVICE_UPDATES = 1,
  /* No programmatic dependent launch: `=>` edges go in as full edges. */
  CGRT_SAFE_PROGRAMMATIC = 2,
  CGRT_SAFE_ALL = CGRT_SAFE_DEVICE_UPDATES | CGRT_SAFE_PROGRAMMATIC,
  /* No CUDA graph launched at all: a launch runs the graph's nodes one at
   * a time on the stream, and the host reads each condition back (a
   * synchronisation each) to choose the bodies to run.  Not part of
   * CGRT_SAFE_ALL.  A kernel that takes a while's handle cannot run so:
   * create refuses its graph. */
  CGRT_SAFE_STREAM = 4
};

typedef struct cgrt_options {
  int device;           /* device ordinal, or CGRT_CURRENT_DEVICE */
  void *user;           /* returned by G_user() */
  int upload;           /* nonzero: upload the graph at create, so the first
                           launch costs no more than the others */
  cudaStream_t stream;  /* where to upload (create waits for it) */
  cgrt_pool *pool;      /* NULL: the graph's owned buffers are its own */
  void *comm;           /* an ncclComm_t: needed by graphs with collectives */
  unsigned safe;        /* CGRT_SAFE_*: features left out, with those that
                           CGRT_SANITIZER_SAFE names */
} cgrt_options;

/* The options used when create is given NULL. */
#define CGRT_OPTIONS_INIT {CGRT_CURRENT_DEVICE, NULL, 1, 0, NULL, NULL, 0}

/* What the runtime needs of a library of collectives (cgrt_nccl, in the
 * cgrt_nccl library, which links NCCL).  Codes are the library's own
 * (ncclResult_t); 0 is success. */
typedef struct cgrt_collective_ops {
  const char *name; /* "NCCL" */
  /* Enqueues collective (CGRT_ALL_REDUCE ...) of elements of `type`
   * (CGRT_I8 ...) on stream: send_count elements from send, recv_count
   * into recv. */
  int (*enqueue)(void *comm, int collective, int op, int type, const void *send, void *recv,
                 uint64_t send_count, uint64_t recv_count, uint32_t root, cudaStream_t stream);
  int (*ranks)(void *comm, int *nranks, int *rank);
  const char *(*error_string)(void *comm, int code);
} cgrt_collective_ops;

/* The NCCL collectives (link cgc::cgrt_nccl); the generated C of a graph
 * with collectives points to it. */
extern const cgrt_collective_ops cgrt_nccl;

/* ---- for generated code ---- */

typedef struct cgrt_graph cgrt_graph;

cgrt_status cgrt_create(cgrt_graph **out, const cgrt_graph_desc *desc, void *const *externs,
                        const cgrt_options *opt);
/* Launches the graph with the scalars' values set before it; first
 * updates the nodes that take a set scalar by value and those whose grid
 * follows one (an extent 0 disables the node until it is nonzero; one
 * out of CUDA's range refuses the launch, CGRT_ERROR_INVALID). */
cgrt_status cgrt_launch(cgrt_graph *g, cudaStream_t stream);
/* Sets a scalar for the launches after this call; a value above a bounded
 * scalar's `max` is refused (CGRT_ERROR_INVALID) and the scalar keeps its
 * value. */
cgrt_status cgrt_set_scalar(cgrt_graph *g, uint32_t scalar, const void *value);
/* Reads a scalar's value in device memory once the launches issued so far
 * are done: it synchronises with the stream of the last launch, which
 * must still exist (or be a default stream); after a launch on
 * cudaStreamPerThread, which names each thread's own stream, with an
 * event recorded behind that launch, so that any thread may get.  Before
 * any launch, what create wrote.  A scalar with no slot: its host value. */
cgrt_status cgrt_get_scalar(cgrt_graph *g, uint32_t scalar, void *value);
cgrt_status cgrt_bind(cgrt_graph *g, uint32_t buffer, void *ptr);
void *cgrt_buffer(cgrt_graph *g, uint32_t buffer);
void *cgrt_user(cgrt_graph *g);
void cgrt_destroy(cgrt_graph *g);
/* Bytes of pool memory a graph of this description takes (G_pool_bytes). */
size_t cgrt_pool_bytes(const cgrt_graph_desc *desc);
/* For the runtime's companion libraries (cgrt_nccl): sets this thread's
 * cgrt_last_error() and returns s. */
cgrt_status cgrt_fail(cgrt_status s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
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
