/* test_nccl_abort: cgrt_nccl.c over a stand-in NCCL and cudaStreamQuery
 * (defined here), so it runs without a GPU or NCCL's library.  When
 * cgrt_nccl_wait aborts a communicator (a collective that failed, or one
 * still not done at the deadline), ncclCommAbort frees it; the program
 * then destroys its graphs and the communicator as cgrt_nccl.h says, and
 * that cgrt_nccl_free must make no NCCL call on the freed handle.  A
 * communicator that went well is destroyed once; and a new communicator
 * at an aborted one's address is destroyed as any other.  A collective
 * that stays ncclInProgress (a peer that never comes) is given up at
 * CGRT_NCCL_TIMEOUT's deadline, its communicator aborted. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nccl.h>

#include "cgrt_nccl.h"

static int failures;

#define CHECK(cond, ...)                                                                           \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      failures++;                                                                                  \
      fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                                              \
      fprintf(stderr, __VA_ARGS__);                                                                \
      fputc('\n', stderr);                                                                         \
    }                                                                                              \
  } while (0)

/* ---- the stand-in: communicators that are live or freed (never reused
 * by malloc, so that a call on a freed one is seen, not undefined) ---- */

static char comms[4];            /* the handles */
static int live[4];              /* made and not yet aborted or destroyed */
static int calls_on_freed;       /* NCCL calls with a freed handle */
static int destroys, aborts;     /* ncclCommDestroy and ncclCommAbort calls */
static ncclResult_t async;       /* what ncclCommGetAsyncError says */
static cudaError_t stream_state; /* what cudaStreamQuery says */
static ncclResult_t collective;  /* what ncclAllReduce says */

static ncclComm_t make(int i) {
  live[i] = 1;
  return (ncclComm_t)(void *)&comms[i];
}

static int use(ncclComm_t c) {
  int i = (int)((char *)(void *)c - comms);
  if (i < 0 || i >= 4 || !live[i]) {
    calls_on_freed++;
    return -1;
  }
  return i;
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *asyncError) {
  if (use(comm) < 0)
    return ncclInvalidArgument;
  *asyncError = async;
  return ncclSuccess;
}

ncclResult_t ncclCommAbort(ncclComm_t comm) {
  int i = use(comm);
  aborts++;
  if (i >= 0)
    live[i] = 0;
  return i < 0 ? ncclInvalidArgument : ncclSuccess;
}

ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  int i = use(comm);
  destroys++;
  if (i >= 0)
    live[i] = 0;
  return i < 0 ? ncclInvalidArgument : ncclSuccess;
}

const char *ncclGetLastError(ncclComm_t comm) {
  if (comm)
    use(comm);
  return "a rank is gone";
}

const char *ncclGetErrorString(ncclResult_t result) {
  (void)result;
  return "stand-in error";
}

ncclResult_t ncclCommCount(const ncclComm_t comm, int *count) {
  *count = 2;
  return use(comm) < 0 ? ncclInvalidArgument : ncclSuccess;
}

ncclResult_t ncclCommUserRank(const ncclComm_t comm, int *rank) {
  *rank = 0;
  return use(comm) < 0 ? ncclInvalidArgument : ncclSuccess;
}

/* What cgrt_nccl.c calls and this test does not reach. */
ncclResult_t ncclGetUniqueId(ncclUniqueId *uniqueId) {
  memset(uniqueId, 0, sizeof *uniqueId);
  return ncclSuccess;
}
ncclResult_t ncclCommInitRankConfig(ncclComm_t *comm, int nranks, ncclUniqueId commId, int rank,
                                    ncclConfig_t *config) {
  (void)nranks, (void)commId, (void)rank, (void)config;
  *comm = NULL;
  return ncclInvalidUsage;
}
ncclResult_t ncclAllReduce(const void *s, void *r, size_t n, ncclDataType_t t, ncclRedOp_t op,
                           ncclComm_t comm, cudaStream_t stream) {
  (void)s, (void)r, (void)n, (void)t, (void)op, (void)stream;
  return use(comm) < 0 ? ncclInvalidArgument : collective;
}
ncclResult_t ncclAllGather(const void *s, void *r, size_t n, ncclDataType_t t, ncclComm_t comm,
                           cudaStream_t stream) {
  (void)s, (void)r, (void)n, (void)t, (void)comm, (void)stream;
  return ncclInvalidUsage;
}
ncclResult_t ncclReduceScatter(const void *s, void *r, size_t n, ncclDataType_t t, ncclRedOp_t op,
                               ncclComm_t comm, cudaStream_t stream) {
  (void)s, (void)r, (void)n, (void)t, (void)op, (void)comm, (void)stream;
  return ncclInvalidUsage;
}
ncclResult_t ncclBroadcast(const void *s, void *r, size_t n, ncclDataType_t t, int root,
                           ncclComm_t comm, cudaStream_t stream) {
  (void)s, (void)r, (void)n, (void)t, (void)root, (void)comm, (void)stream;
  return ncclInvalidUsage;
}

cudaError_t cudaStreamQuery(cudaStream_t stream) {
  (void)stream;
  return stream_state;
}

/* ---- the cases ---- */

static void never_returned(int sig) {
  (void)sig;
  static const char msg[] = "test_nccl_abort: a collective that stays in progress was waited "
                            "for past its deadline (CGRT_NCCL_TIMEOUT=0.05) and 20 s more\n";
  (void)!write(2, msg, sizeof msg - 1);
  _exit(1);
}

static void reset(void) { calls_on_freed = destroys = aborts = 0; }

int main(void) {
  /* A collective that failed: wait aborts; free, as the header says, then
   * touches nothing. */
  reset();
  ncclComm_t a = make(0);
  stream_state = cudaErrorNotReady;
  async = ncclRemoteError;
  cgrt_status s = cgrt_nccl_wait(a, NULL, 5);
  CHECK(s == CGRT_ERROR_COMM && strstr(cgrt_last_error(), "a rank is gone") &&
            strstr(cgrt_last_error(), "aborted"),
        "a failed collective: status %d, \"%s\"", (int)s, cgrt_last_error());
  CHECK(aborts == 1 && !live[0], "a failed collective: %d aborts", aborts);
  cgrt_nccl_free(a);
  CHECK(calls_on_freed == 0 && aborts == 1 && destroys == 0,
        "free after a failed collective: %d calls on the freed communicator, %d aborts, %d "
        "destroys",
        calls_on_freed, aborts, destroys);

  /* Late: the deadline passes with the work still queued. */
  reset();
  ncclComm_t b = make(1);
  async = ncclInProgress;
  s = cgrt_nccl_wait(b, NULL, 0.01);
  CHECK(s == CGRT_ERROR_COMM && strstr(cgrt_last_error(), "not done within"),
        "late: status %d, \"%s\"", (int)s, cgrt_last_error());
  cgrt_nccl_free(b);
  CHECK(calls_on_freed == 0 && aborts == 1 && destroys == 0,
        "free after a late collective: %d calls on the freed communicator, %d aborts, %d destroys",
        calls_on_freed, aborts, destroys);

  /* A communicator that went well is destroyed, once. */
  reset();
  ncclComm_t c = make(2);
  stream_state = cudaSuccess;
  async = ncclSuccess;
  CHECK(cgrt_nccl_wait(c, NULL, 5) == CGRT_OK, "done: %s", cgrt_last_error());
  cgrt_nccl_free(c);
  CHECK(calls_on_freed == 0 && destroys == 1 && aborts == 0 && !live[2],
        "free after success: %d calls on freed, %d destroys, %d aborts", calls_on_freed, destroys,
        aborts);

  /* A new communicator where an aborted one was (as malloc may place
   * it): once a graph asks for its size, it is a communicator like any
   * other, and free destroys it. */
  reset();
  ncclComm_t d = make(3);
  stream_state = cudaErrorNotReady;
  async = ncclRemoteError;
  CHECK(cgrt_nccl_wait(d, NULL, 5) == CGRT_ERROR_COMM, "reuse: the first wait");
  ncclComm_t again = make(3);
  async = ncclSuccess; /* a healthy communicator */
  int ranks = 0, rank = -1;
  CHECK(cgrt_nccl.ranks(again, &ranks, &rank) == 0 && ranks == 2 && rank == 0, "reuse: ranks");
  cgrt_nccl_free(again);
  CHECK(calls_on_freed == 0 && destroys == 1 && !live[3],
        "free of a new communicator at an aborted one's address: %d destroys, %d calls on freed",
        destroys, calls_on_freed);

  /* A collective on a nonblocking communicator that stays in progress (a
   * peer that never comes): enqueue gives up at the deadline, aborts the
   * communicator, and says so without asking the freed communicator. */
  reset();
  ncclComm_t e = make(0);
  collective = ncclInProgress;
  async = ncclInProgress;
  setenv("CGRT_NCCL_TIMEOUT", "0.05", 1);
  signal(SIGALRM, never_returned);
  alarm(20);
  int r = cgrt_nccl.enqueue(e, CGRT_ALL_REDUCE, CGRT_SUM, CGRT_F32, NULL, NULL, 1, 1, 0, NULL);
  alarm(0);
  const char *why = r ? cgrt_nccl.error_string(e, r) : "";
  CHECK(r != 0 && strstr(why, "not enqueued within 0.05 s") && strstr(why, "aborted"),
        "in progress past the deadline: %d, \"%s\"", r, why);
  CHECK(aborts == 1 && !live[0] && calls_on_freed == 0,
        "in progress past the deadline: %d aborts, %d calls on the freed communicator", aborts,
        calls_on_freed);
  cgrt_nccl_free(e);
  CHECK(calls_on_freed == 0 && aborts == 1 && destroys == 0,
        "free after an enqueue past the deadline: %d calls on freed, %d aborts, %d destroys",
        calls_on_freed, aborts, destroys);

  /* One that settles in time is enqueued. */
  reset();
  ncclComm_t f = make(1);
  collective = ncclInProgress;
  async = ncclSuccess;
  CHECK(cgrt_nccl.enqueue(f, CGRT_ALL_REDUCE, CGRT_SUM, CGRT_F32, NULL, NULL, 1, 1, 0, NULL) == 0,
        "in progress, then done: not enqueued");
  CHECK(aborts == 0, "in progress, then done: %d aborts", aborts);
  cgrt_nccl_free(f);

  if (failures) {
    fprintf(stderr, "test_nccl_abort: %d failures\n", failures);
    return 1;
  }
  printf("test_nccl_abort: all passed\n");
  return 0;
}
