/* cgrt_nccl.c: the runtime's collectives, through NCCL (cgrt_nccl.h). */
#include "cgrt_nccl.h"

#include <nccl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The communicators that cgrt_nccl_wait aborted.  ncclCommAbort frees a
 * communicator, so the handle the program still holds is gone: a
 * cgrt_nccl_free of it (which the program may well call, having
 * destroyed its graphs) must not touch it.  A handle seen again by any
 * other call here is a new communicator at the same address, and is
 * forgotten.  Slots, not a list: a handful is ever in flight. */
#define ABORTED_SLOTS 64
static _Atomic(void *) aborted[ABORTED_SLOTS];

static void remember_aborted(void *comm) {
  for (int i = 0; i < ABORTED_SLOTS; i++) {
    void *none = NULL;
    if (atomic_compare_exchange_strong(&aborted[i], &none, comm))
      return;
  }
}

/* 1 when comm was aborted here (and is no longer remembered). */
static int forget_aborted(void *comm) {
  int found = 0;
  for (int i = 0; i < ABORTED_SLOTS; i++) {
    void *was = comm;
    if (comm && atomic_compare_exchange_strong(&aborted[i], &was, NULL))
      found = 1;
  }
  return found;
}

/* Why comm failed with r, copied into why: NCCL's last error text (which
 * goes with the communicator, so it is read before an abort), else r's. */
static void failure_text(ncclComm_t comm, ncclResult_t r, char *why, size_t size) {
  const char *last = comm ? ncclGetLastError(comm) : NULL;
  snprintf(why, size, "%s", last && *last ? last : ncclGetErrorString(r));
}

/* Aborts a communicator that failed or is late, and remembers that it did. */
static void abort_comm(ncclComm_t comm) {
  remember_aborted(comm);
  ncclCommAbort(comm);
}

static ncclDataType_t nccl_type(int type) {
  switch (type) {
  case CGRT_I8: return ncclInt8;
  case CGRT_U8: return ncclUint8;
  case CGRT_I32: return ncclInt32;
  case CGRT_U32: return ncclUint32;
  case CGRT_I64: return ncclInt64;
  case CGRT_U64: return ncclUint64;
  case CGRT_F16: return ncclFloat16;
  case CGRT_BF16: return ncclBfloat16;
  case CGRT_F32: return ncclFloat32;
  default: return ncclFloat64; /* CGRT_F64: cgc refuses i16 and u16 */
  }
}

static ncclRedOp_t nccl_op(int op) {
  switch (op) {
  case CGRT_SUM: return ncclSum;
  case CGRT_PROD: return ncclProd;
  case CGRT_MAX: return ncclMax;
  case CGRT_MIN: return ncclMin;
  default: return ncclAvg;
  }
}

/* What enqueue returns for a collective still in progress at its
 * deadline, whose communicator it aborted: no ncclResult_t, so that
 * error_string says so without asking the communicator, which the abort
 * freed. */
#define LATE 1000
/* The deadline of an enqueue, in seconds: CGRT_NCCL_TIMEOUT's, where it
 * is a number (0 or less: none), else this. */
#define ENQUEUE_TIMEOUT_S 300.0
static _Thread_local double late_after_s;

static double enqueue_timeout_s(void) {
  const char *env = getenv("CGRT_NCCL_TIMEOUT");
  char *end = NULL;
  double t = env && *env ? strtod(env, &end) : 0;
  return end && end != env && *end == '\0' && t == t ? t : ENQUEUE_TIMEOUT_S;
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void nap(void) {
  struct timespec t = {0, 1000000}; /* 1 ms */
  nanosleep(&t, NULL);
}

/* A call on a nonblocking communicator may return ncclInProgress: it is
 * done when the communicator says so.  One that is not done by the
 * deadline (a peer that never comes) aborts the communicator: LATE. */
static int settle(ncclComm_t comm, ncclResult_t r) {
  if (r != ncclInProgress)
    return (int)r;
  /* Asked again at once for the first millisecond (a call is usually
   * done by then), then once a nap. */
  double timeout_s = enqueue_timeout_s(), start = now_s(), deadline = start + timeout_s;
  for (;;) {
    if (ncclCommGetAsyncError(comm, &r) != ncclSuccess)
      return ncclInternalError;
    if (r != ncclInProgress)
      return (int)r;
    double t = now_s();
    if (timeout_s > 0 && t > deadline) {
      abort_comm(comm);
      late_after_s = timeout_s;
      return LATE;
    }
    if (t - start > 1e-3)
      nap();
  }
}

static int enqueue(void *c, int collective, int op, int type, const void *send, void *recv,
                   uint64_t send_count, uint64_t recv_count, uint32_t root, cudaStream_t stream) {
  ncclComm_t comm = c;
  forget_aborted(c);
  ncclDataType_t t = nccl_type(type);
  ncclResult_t r;
  switch (collective) {
  case CGRT_ALL_REDUCE:
    r = ncclAllReduce(send, recv, (size_t)send_count, t, nccl_op(op), comm, stream);
    break;
  case CGRT_ALL_GATHER: r = ncclAllGather(send, recv, (size_t)send_count, t, comm, stream); break;
  case CGRT_REDUCE_SCATTER:
    r = ncclReduceScatter(send, recv, (size_t)recv_count, t, nccl_op(op), comm, stream);
    break;
  default: r = ncclBroadcast(send, recv, (size_t)send_count, t, (int)root, comm, stream); break;
  }
  return settle(comm, r);
}

static int ranks(void *c, int *nranks, int *rank) {
  forget_aborted(c);
  ncclResult_t r = ncclCommCount((ncclComm_t)c, nranks);
  if (r == ncclSuccess)
    r = ncclCommUserRank((ncclComm_t)c, rank);
  return (int)r;
}

static const char *error_string(void *c, int code) {
  static _Thread_local char late[200];
  if (code == LATE) {
    snprintf(late, sizeof late,
             "not enqueued within %g s (a rank that never came?; CGRT_NCCL_TIMEOUT sets the "
             "deadline); the communicator was aborted",
             late_after_s);
    return late;
  }
  const char *last = c ? ncclGetLastError((ncclComm_t)c) : NULL;
  return last && *last ? last : ncclGetErrorString((ncclResult_t)code);
}

const cgrt_collective_ops cgrt_nccl = {"NCCL", enqueue, ranks, error_string};

cgrt_status cgrt_nccl_unique_id(void *id) {
  ncclUniqueId u;
  ncclResult_t r = ncclGetUniqueId(&u);
  if (r != ncclSuccess)
    return cgrt_fail(CGRT_ERROR_COMM, "cgrt_nccl_unique_id: ncclGetUniqueId: %s",
                     ncclGetErrorString(r));
  memcpy(id, &u, sizeof u);
  return CGRT_OK;
}

cgrt_status cgrt_nccl_init(void **out, int nranks, const void *unique_id, int rank,
                           double timeout_s) {
  if (!out || !unique_id)
    return cgrt_fail(CGRT_ERROR_INVALID, "cgrt_nccl_init: NULL argument");
  *out = NULL;
  ncclUniqueId id;
  memcpy(&id, unique_id, sizeof id);
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0; /* so that a rank that never comes cannot hold this one forever */
  ncclComm_t comm = NULL;
  ncclResult_t r = ncclCommInitRankConfig(&comm, nranks, id, rank, &config);
  double deadline = now_s() + timeout_s;
  while (r == ncclInProgress) {
    if (timeout_s > 0 && now_s() > deadline) {
      ncclCommAbort(comm);
      return cgrt_fail(CGRT_ERROR_COMM,
                       "cgrt_nccl_init: rank %d of %d: the other ranks did not all join within "
                       "%g s; the communicator was aborted",
                       rank, nranks, timeout_s);
    }
    nap();
    if (ncclCommGetAsyncError(comm, &r) != ncclSuccess)
      r = ncclInternalError;
  }
  if (r != ncclSuccess) {
    char why[512];
    failure_text(comm, r, why, sizeof why);
    if (comm)
      ncclCommAbort(comm);
    return cgrt_fail(CGRT_ERROR_COMM, "cgrt_nccl_init: rank %d of %d: %s", rank, nranks, why);
  }
  forget_aborted(comm);
  *out = comm;
  return CGRT_OK;
}

cgrt_status cgrt_nccl_wait(void *c, cudaStream_t stream, double timeout_s) {
  ncclComm_t comm = c;
  forget_aborted(c);
  double deadline = now_s() + timeout_s;
  for (;;) {
    cudaError_t e = cudaStreamQuery(stream);
    if (e == cudaSuccess)
      return CGRT_OK;
    if (e != cudaErrorNotReady)
      return cgrt_fail(CGRT_ERROR_CUDA, "cgrt_nccl_wait: cudaStreamQuery: %s (%s)",
                       cudaGetErrorString(e), cudaGetErrorName(e));
    ncclResult_t r = ncclSuccess;
    if (ncclCommGetAsyncError(comm, &r) != ncclSuccess)
      r = ncclInternalError;
    if (r != ncclSuccess && r != ncclInProgress) {
      char why[512];
      failure_text(comm, r, why, sizeof why);
      abort_comm(comm);
      return cgrt_fail(CGRT_ERROR_COMM,
                       "cgrt_nccl_wait: the communicator failed: %s; it was "
                       "aborted",
                       why);
    }
    if (timeout_s > 0 && now_s() > deadline) {
      abort_comm(comm);
      return cgrt_fail(CGRT_ERROR_COMM,
                       "cgrt_nccl_wait: the work queued was not done within %g s (a rank that "
                       "never came?); the communicator was aborted",
                       timeout_s);
    }
    nap();
  }
}

void cgrt_nccl_free(void *c) {
  ncclComm_t comm = c;
  if (!comm || forget_aborted(c))
    return; /* none, or cgrt_nccl_wait aborted it, which freed it */
  ncclResult_t r = ncclSuccess;
  if (ncclCommGetAsyncError(comm, &r) == ncclSuccess && r == ncclSuccess &&
      ncclCommDestroy(comm) == ncclSuccess)
    return;
  ncclCommAbort(comm);
}
