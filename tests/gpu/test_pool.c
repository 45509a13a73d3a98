/* gpu.pool: graphs sharing a cgrt_pool.  Members of one pool launched in
 * random order on two streams, or by turns from two threads on their
 * per-thread default streams, never run at once (their shared scratch
 * would show it) and compute what the same graphs with memory of their
 * own compute; a pool is as large as its largest member; what cannot be a
 * member, a pool too small, destroying a pool in use, and every failing
 * CUDA call of pool_create are refused with a message and leave nothing. */
#include <pthread.h>

#include "fault_sweep.h"
#include "gpu_test.h"
#include "pool_graph.h"

enum { LAUNCHES = 400 };

/* Two threads taking turns at launching the members of one pool on
 * cudaStreamPerThread, which names another stream in each thread: turn
 * i belongs to thread turn[i] (0: main, 1: the other), one thread at a
 * time, as the pool asks. */
typedef struct Turns {
  small *ps;
  large *pl;
  const uint8_t *turn, *which;
  const uint32_t *seed;
  int n;
  pthread_barrier_t *step;
  char error[1024];
} Turns;

static void take_turns(Turns *t, int me) {
  for (int i = 0; i < t->n; i++) {
    pthread_barrier_wait(t->step); /* the launch before is issued */
    if (t->turn[i] == me && !t->error[0]) {
      cgrt_status st = t->which[i] ? large_set_seed(t->pl, t->seed[i])
                                   : small_set_seed(t->ps, t->seed[i]);
      if (st == CGRT_OK)
        st = t->which[i] ? large_launch(t->pl, cudaStreamPerThread)
                         : small_launch(t->ps, cudaStreamPerThread);
      if (st != CGRT_OK)
        snprintf(t->error, sizeof t->error, "turn %d: %s", i, cgrt_last_error());
    }
  }
  pthread_barrier_wait(t->step);
  if (cudaStreamSynchronize(cudaStreamPerThread) != cudaSuccess && !t->error[0])
    snprintf(t->error, sizeof t->error, "cudaStreamSynchronize in thread %d", me);
}

static void *other_thread(void *arg) {
  take_turns(arg, 1);
  return NULL;
}

/* Pool members launched from two threads by turns, each on its own
 * per-thread default stream: the pool orders each launch after the one
 * before it, in whichever thread that was (the handle is the same in
 * both, the streams are not), so the members never run at once. */
static void per_thread_turns(cgrt_options *po, uint32_t *out_small, uint32_t *out_large) {
  enum { TURNS = 200 };
  uint8_t turn[TURNS], which[TURNS];
  uint32_t seed[TURNS];
  int launched[2] = {0, 0};
  for (int i = 0; i < TURNS; i++) {
    turn[i] = (uint8_t)(rand64() % 2);
    which[i] = (uint8_t)(rand64() % 2);
    seed[i] = (uint32_t)rand64();
    launched[which[i]]++;
  }
  CUDA(cudaMemset(out_small, 0, 3 * sizeof *out_small));
  CUDA(cudaMemset(out_large, 0, 3 * sizeof *out_large));
  CUDA(cudaDeviceSynchronize());
  small_extern se = {out_small};
  large_extern le = {out_large};
  small *ps;
  large *pl;
  CGRT(small_create(&ps, &se, po));
  CGRT(large_create(&pl, &le, po));
  pthread_barrier_t step;
  pthread_barrier_init(&step, NULL, 2);
  Turns t = {.ps = ps, .pl = pl, .turn = turn, .which = which, .seed = seed, .n = TURNS,
             .step = &step};
  Turns mine = t; /* main's errors apart from the other thread's */
  pthread_t other;
  pthread_create(&other, NULL, other_thread, &t);
  take_turns(&mine, 0);
  pthread_join(other, NULL);
  pthread_barrier_destroy(&step);
  EXPECT(!t.error[0] && !mine.error[0], "per-thread turns: %s%s", t.error, mine.error);
  CUDA(cudaDeviceSynchronize());
  uint32_t got[2][3];
  CUDA(cudaMemcpy(got[0], out_small, sizeof got[0], cudaMemcpyDeviceToHost));
  CUDA(cudaMemcpy(got[1], out_large, sizeof got[1], cudaMemcpyDeviceToHost));
  for (int m = 0; m < 2; m++) {
    EXPECT(got[m][0] == 0,
           "per-thread turns: %s found %u elements of another member's pattern (they ran at once)",
           m ? "large" : "small", got[m][0]);
    EXPECT(got[m][1] == (uint32_t)launched[m] * (m ? 2u : 1u),
           "per-thread turns: %s: %u digests for %d launches", m ? "large" : "small", got[m][1],
           launched[m]);
  }
  printf("gpu.pool: %d and %d launches by turns from two threads on their per-thread streams\n",
         launched[0], launched[1]);
  small_destroy(ps);
  large_destroy(pl);
}

static uint32_t *device_out(void) {
  uint32_t *p;
  CUDA(cudaMalloc((void **)&p, 3 * sizeof *p));
  CUDA(cudaMemset(p, 0, 3 * sizeof *p));
  return p;
}

int main(void) {
  test_start("gpu.pool");
  long live0 = cgrt_test_live();
  size_t need_small = small_pool_bytes(), need_large = large_pool_bytes();
  EXPECT(need_small == 1024 * 4, "small_pool_bytes() = %zu", need_small);
  EXPECT(need_large == (4096 + 65536) * 4, "large_pool_bytes() = %zu", need_large);
  size_t need = need_small > need_large ? need_small : need_large;

  cgrt_pool *pool;
  CGRT(cgrt_pool_create(&pool, need, CGRT_CURRENT_DEVICE));
  EXPECT(cgrt_pool_size(pool) == need, "pool size %zu", cgrt_pool_size(pool));
  uint32_t *out[4]; /* pooled small, pooled large, own small, own large */
  for (int i = 0; i < 4; i++)
    out[i] = device_out();
  CUDA(cudaDeviceSynchronize());
  cgrt_options po = CGRT_OPTIONS_INIT;
  po.pool = pool;
  small_extern se0 = {out[0]}, se2 = {out[2]};
  large_extern le1 = {out[1]}, le3 = {out[3]};
  small *ps, *os;
  large *pl, *ol;
  CGRT(small_create(&ps, &se0, &po));
  CGRT(large_create(&pl, &le1, &po));
  CGRT(small_create(&os, &se2, NULL));
  CGRT(large_create(&ol, &le3, NULL));
  /* The members' owned buffers share the pool's memory. */
  EXPECT(small_buffer_s(ps) == large_buffer_t(pl), "small's s at %p, large's t at %p",
         small_buffer_s(ps), large_buffer_t(pl));
  EXPECT(small_buffer_s(os) != small_buffer_s(ps), "an unpooled graph's memory is its own");

  /* Random members on random streams, with random seeds; the unpooled
   * twins run the same launches on a third stream. */
  cudaStream_t st[3];
  for (int i = 0; i < 3; i++)
    CUDA(cudaStreamCreateWithFlags(&st[i], cudaStreamNonBlocking));
  int launched[2] = {0, 0};
  for (int i = 0; i < LAUNCHES; i++) {
    int which = (int)(rand64() % 2), stream = (int)(rand64() % 2);
    uint32_t seed = (uint32_t)rand64();
    if (which == 0) {
      CGRT(small_set_seed(ps, seed));
      CGRT(small_launch(ps, st[stream]));
      CGRT(small_set_seed(os, seed));
      CGRT(small_launch(os, st[2]));
    } else {
      CGRT(large_set_seed(pl, seed));
      CGRT(large_launch(pl, st[stream]));
      CGRT(large_set_seed(ol, seed));
      CGRT(large_launch(ol, st[2]));
    }
    launched[which]++;
  }
  CUDA(cudaDeviceSynchronize());
  uint32_t got[4][3];
  for (int i = 0; i < 4; i++)
    CUDA(cudaMemcpy(got[i], out[i], sizeof got[i], cudaMemcpyDeviceToHost));
  for (int m = 0; m < 2; m++) {
    const char *name = m ? "large" : "small";
    EXPECT(got[m][0] == 0, "pooled %s found %u elements of another member's pattern", name,
           got[m][0]);
    EXPECT(got[m][1] == (uint32_t)launched[m] * (m ? 2u : 1u), "pooled %s: %u digests for %d launches",
           name, got[m][1], launched[m]);
    EXPECT(got[m][2] == got[m + 2][2] && got[m + 2][0] == 0,
           "pooled %s sums %u, with its own memory %u", name, got[m][2], got[m + 2][2]);
  }
  printf("gpu.pool: %d and %d launches; memory for the owned buffers: %zu bytes pooled, %zu "
         "apart\n",
         launched[0], launched[1], need, need_small + need_large);

  per_thread_turns(&po, out[0], out[1]);

  /* What a pool refuses. */
  zeroed *z = NULL;
  zeroed_extern ze = {out[0]};
  cgrt_status s = zeroed_create(&z, &ze, &po);
  EXPECT(s == CGRT_ERROR_INVALID && z == NULL, "a '= 0' buffer in a pool: status %d", s);
  EXPECT(strstr(cgrt_last_error(), "buffer 'c'") && strstr(cgrt_last_error(), "= 0"),
         "message: %s", cgrt_last_error());
  cgrt_pool *tiny;
  CGRT(cgrt_pool_create(&tiny, need_small, CGRT_CURRENT_DEVICE));
  cgrt_options to = CGRT_OPTIONS_INIT;
  to.pool = tiny;
  large *big = NULL;
  s = large_create(&big, &le1, &to);
  EXPECT(s == CGRT_ERROR_INVALID && big == NULL, "large in a small pool: status %d", s);
  EXPECT(strstr(cgrt_last_error(), "278528 bytes of pool memory") &&
             strstr(cgrt_last_error(), "has 4096"),
         "message: %s", cgrt_last_error());
  s = cgrt_pool_destroy(pool);
  EXPECT(s == CGRT_ERROR_INVALID && strstr(cgrt_last_error(), "2 graphs still use the pool"),
         "destroying a pool in use: status %d, %s", s, cgrt_last_error());
  small_destroy(ps);
  large_destroy(pl);
  small_destroy(os);
  large_destroy(ol);
  CGRT(cgrt_pool_destroy(pool));
  CGRT(cgrt_pool_destroy(tiny));

  /* Every CUDA call of pool_create failing in turn. */
  long k = 1;
  for (;; k++) {
    cgrt_pool *p = NULL;
    long before = fault_begin(k);
    s = cgrt_pool_create(&p, need, CGRT_CURRENT_DEVICE);
    if (!fault_end(k, before)) {
      EXPECT(s == CGRT_OK && p, "pool_create without a fault: %s", cgrt_last_error());
      CGRT(cgrt_pool_destroy(p));
      break;
    }
    EXPECT(s == CGRT_ERROR_CUDA && p == NULL, "call %ld failed: status %d", k, s);
    EXPECT(strstr(cgrt_last_error(), "cgrt_pool_create: cuda"), "call %ld: %s", k,
           cgrt_last_error());
    EXPECT(cgrt_test_live() == live0, "call %ld failed: %ld resources held", k,
           cgrt_test_live() - live0);
  }
  EXPECT(k > 2, "the sweep reached %ld calls", k);
  EXPECT(cgrt_test_live() == live0, "%ld resources held at the end", cgrt_test_live() - live0);
  for (int i = 0; i < 3; i++)
    CUDA(cudaStreamDestroy(st[i]));
  for (int i = 0; i < 4; i++)
    CUDA(cudaFree(out[i]));
  return test_end("gpu.pool");
}
