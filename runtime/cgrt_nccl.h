/* cgrt_nccl.h: collectives through NCCL, for graphs with all_reduce,
 * all_gather, reduce_scatter or broadcast nodes (link cgc::cgrt_nccl).
 *
 * A graph with collectives is created with the rank's communicator in
 * cgrt_options.comm (an ncclComm_t, made by the program with NCCL, or by
 * cgrt_nccl_init below); each collective node is the NCCL call captured
 * into the graph.  Nothing here assumes one host: NCCL's bootstrap does
 * what its unique id and environment say. */
#ifndef CGRT_NCCL_H
#define CGRT_NCCL_H

#include "cgrt.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ncclCommInitRank with a deadline: *comm for `rank` of `nranks`, from the
 * 128 bytes of an ncclUniqueId that rank 0 made (ncclGetUniqueId) and the
 * program passed to every rank.  Ranks that do not all join within
 * timeout_s seconds (<= 0: no limit) make it fail: the half-made
 * communicator is aborted, *comm is NULL, and the status is
 * CGRT_ERROR_COMM with a message. */
cgrt_status cgrt_nccl_init(void **comm, int nranks, const void *unique_id, int rank,
                           double timeout_s);
/* The rank's unique id, for cgrt_nccl_init: 128 bytes into id. */
cgrt_status cgrt_nccl_unique_id(void *id);
/* Waits for everything queued on stream, watching the communicator: a
 * failed or (timeout_s > 0) late collective aborts the communicator and
 * returns CGRT_ERROR_COMM with a message, instead of waiting forever for
 * a rank that is gone.  The graphs that use an aborted communicator are
 * unusable; destroy them, then the communicator (cgrt_nccl_free knows that
 * the abort freed it, and does nothing more). */
cgrt_status cgrt_nccl_wait(void *comm, cudaStream_t stream, double timeout_s);
/* ncclCommDestroy, or ncclCommAbort for a communicator that failed;
 * nothing for one that cgrt_nccl_wait aborted (NCCL freed it then), or
 * that a collective's enqueue aborted: one that a nonblocking
 * communicator keeps in progress past CGRT_NCCL_TIMEOUT seconds (the
 * environment's; 300 without it, 0 for no limit) fails its create or bind
 * with CGRT_ERROR_COMM. */
void cgrt_nccl_free(void *comm);

#ifdef __cplusplus
}
#endif

#endif
