/* test_streams: get waits for every launch issued so far, whichever thread
 * issued them.  Launches on the per-thread default stream
 * (cudaStreamPerThread, a handle that names another stream in each
 * thread), queued in their thread behind a kernel that holds its stream,
 * are read by get from the main thread: it gives what they made once they
 * ran, not what the scalar held before (get had copied on the main
 * thread's own per-thread stream, which holds none of them); from their
 * own thread likewise.  Then every CUDA call of a graph's first launch on
 * that stream fails in turn: nothing is held afterwards, and get waits
 * for exactly the launches that were issued. */
#include <pthread.h>

#include "cgrt_testing.h"
#include "fault_sweep.h"
#include "gpu_test.h"
#include "replay_graph.h"

enum { LAUNCHES = 16 };

/* kernels/hold.cu: holds `stream` until *gate is set or limit_ns pass. */
cudaError_t hold_stream(const volatile uint32_t *gate, uint64_t limit_ns, cudaStream_t stream);

typedef struct Launcher {
  replay *g;
  const volatile uint32_t *dgate; /* the gate, as the device sees it */
  volatile uint32_t *gate;        /* and as the host does */
  uint32_t count;                 /* set before the launches */
  int get_here;                   /* get in this thread too, once the gate is open */
  pthread_barrier_t *issued, *finish;
  int queued;       /* the launches were still queued behind the hold */
  uint32_t got;     /* what get gave in this thread */
  char error[1024]; /* the first failure, or "" */
} Launcher;

/* Releases the gate after 200 ms, while get (if it waits) is waiting. */
static void *release_later(void *arg) {
  usleep(200 * 1000);
  __atomic_store_n((volatile uint32_t *)arg, 1, __ATOMIC_SEQ_CST);
  return NULL;
}

/* In a thread of its own: holds its per-thread default stream, sets count
 * and launches LAUNCHES times there, behind the hold; then (get_here)
 * reads count itself, or waits until main has read it: the thread, and its
 * stream, live until then. */
static void *launch_held(void *arg) {
  Launcher *l = arg;
  cudaError_t e = hold_stream(l->dgate, UINT64_C(5000000000), cudaStreamPerThread);
  cgrt_status st = e == cudaSuccess ? replay_set_count(l->g, l->count) : CGRT_ERROR_CUDA;
  for (int i = 0; i < LAUNCHES && st == CGRT_OK; i++)
    st = replay_launch(l->g, cudaStreamPerThread);
  l->queued = cudaStreamQuery(cudaStreamPerThread) == cudaErrorNotReady;
  if (e != cudaSuccess)
    snprintf(l->error, sizeof l->error, "hold_stream: %s", cudaGetErrorString(e));
  else if (st != CGRT_OK)
    snprintf(l->error, sizeof l->error, "%s", cgrt_last_error());
  pthread_barrier_wait(l->issued);
  if (l->get_here) {
    if (!l->error[0]) {
      pthread_t releaser;
      pthread_create(&releaser, NULL, release_later, (void *)l->gate);
      if (replay_get_count(l->g, &l->got) != CGRT_OK)
        snprintf(l->error, sizeof l->error, "get in the launching thread: %s", cgrt_last_error());
      pthread_join(releaser, NULL);
    }
    __atomic_store_n(l->gate, 1, __ATOMIC_SEQ_CST); /* whatever happened above */
  }
  pthread_barrier_wait(l->finish);
  return NULL;
}

/* LAUNCHES launches of g on another thread's per-thread default stream,
 * held there, then count read by get in `who` ("main": this thread; else
 * the launching thread): count + LAUNCHES, the bump of each launch. */
static void held_launches(replay *g, volatile uint32_t *gate, const volatile uint32_t *dgate,
                          const char *who) {
  pthread_barrier_t issued, finish;
  pthread_barrier_init(&issued, NULL, 2);
  pthread_barrier_init(&finish, NULL, 2);
  *gate = 0;
  Launcher l = {.g = g,
                .dgate = dgate,
                .gate = gate,
                .count = (uint32_t)(rand64() % 1000000),
                .get_here = strcmp(who, "main") != 0,
                .issued = &issued,
                .finish = &finish};
  pthread_t launcher;
  pthread_create(&launcher, NULL, launch_held, &l);
  pthread_barrier_wait(&issued);
  uint32_t got = 0;
  if (!l.get_here) {
    if (!l.error[0]) {
      pthread_t releaser;
      pthread_create(&releaser, NULL, release_later, (void *)gate);
      CGRT(replay_get_count(g, &got)); /* waits for the launches: the gate opens meanwhile */
      pthread_join(releaser, NULL);
    }
    __atomic_store_n(gate, 1, __ATOMIC_SEQ_CST); /* whatever happened above */
  }
  pthread_barrier_wait(&finish);
  pthread_join(launcher, NULL);
  EXPECT(!l.error[0], "get in %s: the launching thread failed: %s", who, l.error);
  EXPECT(l.queued, "get in %s: the launches were not held (the test shows nothing)", who);
  if (l.get_here)
    got = l.got;
  EXPECT(got == l.count + LAUNCHES,
         "get in %s: count is %u, the %d launches made it %u (it was %u before them)", who, got,
         LAUNCHES, l.count + LAUNCHES, l.count);
  CUDA(cudaDeviceSynchronize());
  pthread_barrier_destroy(&issued);
  pthread_barrier_destroy(&finish);
}

/* Every CUDA call of a graph's first launch on the per-thread default
 * stream (which makes the event that get waits for) fails in turn: the
 * launch fails with CUDA's error, and a launch whose event was not
 * recorded has been waited for; afterwards nothing more is held, and get
 * counts exactly the launches issued. */
static void sweep_first_launch(replay_extern *ext) {
  long live0 = cgrt_test_live(), k;
  for (k = 1; k < 1000; k++) {
    replay *g;
    CGRT(replay_create(&g, ext, NULL));
    CGRT(replay_set_count(g, 0));
    long c = fault_begin(k);
    cgrt_status st = replay_launch(g, cudaStreamPerThread);
    int failed = fault_end(k, c);
    int issued = st == CGRT_OK || strstr(cgrt_last_error(), "cudaEventRecord") != NULL;
    if (failed)
      EXPECT(st == CGRT_ERROR_CUDA && strstr(cgrt_last_error(), "cudaErrorMemoryAllocation"),
             "launch, call %ld: status %d: %s", k, st, cgrt_last_error());
    else
      EXPECT(st == CGRT_OK, "a launch past its last call: status %d: %s", st, cgrt_last_error());
    CGRT(replay_launch(g, cudaStreamPerThread));
    uint32_t count = 0;
    CGRT(replay_get_count(g, &count));
    EXPECT(count == (uint32_t)issued + 1, "launch, call %ld (%s): count %u after %d launches", k,
           failed ? cgrt_last_error() : "none failed", count, issued + 1);
    replay_destroy(g);
    EXPECT(cgrt_test_live() == live0, "launch, call %ld: %ld resources more", k,
           cgrt_test_live() - live0);
    if (!failed)
      break;
  }
  printf("test_streams: a first launch on the per-thread stream makes %ld CUDA calls; each one "
         "failing was handled\n",
         k - 1);
}

int main(void) {
  test_start("test_streams");
  uint32_t *dlog, *dvlog;
  CUDA(cudaMalloc((void **)&dlog, 4001 * sizeof *dlog));
  CUDA(cudaMalloc((void **)&dvlog, 4001 * sizeof *dvlog));
  CUDA(cudaMemset(dlog, 0, 4001 * sizeof *dlog));
  CUDA(cudaMemset(dvlog, 0, 4001 * sizeof *dvlog));
  volatile uint32_t *gate, *dgate;
  CUDA(cudaHostAlloc((void **)&gate, sizeof *gate, cudaHostAllocMapped));
  CUDA(cudaHostGetDevicePointer((void **)&dgate, (void *)gate, 0));
  replay_extern ext = {dlog, dvlog};
  for (int round = 0; round < 3; round++) {
    /* The log holds 4,000 launches: a fresh graph and log each round. */
    replay *g;
    CUDA(cudaMemset(dlog, 0, 4001 * sizeof *dlog));
    CUDA(cudaMemset(dvlog, 0, 4001 * sizeof *dvlog));
    CGRT(replay_create(&g, &ext, NULL));
    held_launches(g, gate, dgate, "main");
    held_launches(g, gate, dgate, "the launching thread");
    held_launches(g, gate, dgate, "main");
    replay_destroy(g);
  }
  sweep_first_launch(&ext);
  CUDA(cudaFreeHost((void *)gate));
  CUDA(cudaFree(dlog));
  CUDA(cudaFree(dvlog));
  return test_end("test_streams");
}
