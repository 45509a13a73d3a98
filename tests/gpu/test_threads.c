/* test_threads: 8 threads at once, each 50 times: create its own graph
 * (uploaded in its own non-blocking stream), set its scalars and launch
 * it several times, rebind its extern buffer halfway, check every sum
 * exactly and a scalar read back, destroy it.  Meanwhile the main thread
 * makes creates fail at their k-th CUDA call: the fault hook is the
 * calling thread's, so those fail and the workers never see a failure.
 * Afterwards the runtime holds what it held before, though its counts
 * were bumped from every thread at once. */
#include <pthread.h>

#include "cgrt_testing.h"
#include "gpu_test.h"
#include "soak_graph.h"

enum { THREADS = 8, ITERATIONS = 50, LAUNCHES = 8 };

typedef struct Worker {
  pthread_t thread;
  uint64_t rng;
  long calls; /* CUDA calls this thread made */
  int checks, failures;
  char first[512]; /* the first failure */
} Worker;

/* A check in a worker: counted in the worker, reported by main. */
#define WEXPECT(w, cond, ...)                                                                      \
  do {                                                                                             \
    (w)->checks++;                                                                                 \
    if (!(cond) && !(w)->failures++)                                                               \
      snprintf((w)->first, sizeof(w)->first, __VA_ARGS__);                                         \
  } while (0)

static uint32_t next_u32(Worker *w) {
  w->rng ^= w->rng << 13;
  w->rng ^= w->rng >> 7;
  w->rng ^= w->rng << 17;
  return (uint32_t)(w->rng >> 16);
}

static void *work(void *arg) {
  Worker *w = arg;
  cudaStream_t s;
  uint64_t *dsum[2];
  CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  for (int b = 0; b < 2; b++)
    CUDA(cudaMalloc((void **)&dsum[b], 4 * sizeof(uint64_t)));
  cgrt_options opt = CGRT_OPTIONS_INIT;
  opt.stream = s;
  opt.user = w;
  long calls0 = cgrt_test_calls();
  for (int it = 0; it < ITERATIONS; it++) {
    uint64_t want[2][4] = {{0}}, got[4];
    for (int b = 0; b < 2; b++)
      CUDA(cudaMemsetAsync(dsum[b], 0, 4 * sizeof(uint64_t), s));
    soak_extern ext = {dsum[0]};
    soak *g;
    CGRT(soak_create(&g, &ext, &opt));
    WEXPECT(w, soak_user(g) == w, "iteration %d: the user pointer is wrong", it);
    int cur = 0;
    uint32_t pos = 0;
    for (int l = 0; l < LAUNCHES; l++) {
      if (l == LAUNCHES / 2) {
        cur = 1;
        CGRT(soak_bind_sum(g, dsum[1]));
      }
      pos = next_u32(w);
      uint32_t v = next_u32(w), odd = next_u32(w) & 1;
      CGRT(soak_set_pos(g, pos));
      CGRT(soak_set_v(g, v));
      CGRT(soak_set_odd(g, odd));
      CGRT(soak_launch(g, s));
      want[cur][0] += pos;
      want[cur][1] += v;
      want[cur][2] += odd ? pos : 0;
      want[cur][3] += odd ? v : 0;
    }
    uint32_t got_pos;
    CGRT(soak_get_pos(g, &got_pos)); /* waits for the launches */
    WEXPECT(w, got_pos == pos, "iteration %d: get_pos gives %u, expected %u", it, got_pos, pos);
    for (int b = 0; b < 2; b++) {
      CUDA(cudaMemcpyAsync(got, dsum[b], sizeof got, cudaMemcpyDeviceToHost, s));
      CUDA(cudaStreamSynchronize(s));
      for (int k = 0; k < 4; k++)
        WEXPECT(w, got[k] == want[b][k], "iteration %d: buffer %d sum %d is %llu, expected %llu",
                it, b, k, (unsigned long long)got[k], (unsigned long long)want[b][k]);
    }
    soak_destroy(g);
  }
  w->calls = cgrt_test_calls() - calls0;
  for (int b = 0; b < 2; b++)
    CUDA(cudaFree(dsum[b]));
  CUDA(cudaStreamDestroy(s));
  return NULL;
}

int main(void) {
  test_start("test_threads");
  uint64_t *dsum;
  CUDA(cudaMalloc((void **)&dsum, 4 * sizeof(uint64_t)));
  soak_extern ext = {dsum};
  soak *g;
  /* One create first, so that CUDA's own lazy set-up is done. */
  CGRT(soak_create(&g, &ext, NULL));
  soak_destroy(g);
  long live0 = cgrt_test_live();
  long long bytes0 = cgrt_test_bytes();
  static Worker workers[THREADS];
  for (int t = 0; t < THREADS; t++) {
    workers[t].rng = rand64() | 1;
    if (pthread_create(&workers[t].thread, NULL, work, &workers[t]) != 0) {
      fprintf(stderr, "test_threads: pthread_create failed\n");
      return 1;
    }
  }
  /* While they run: this thread's k-th call fails, nobody else's. */
  int injected = 0;
  for (long k = 1; k <= 20; k++) {
    long c = cgrt_test_calls();
    cgrt_test_fail_call(k);
    g = (soak *)&k;
    cgrt_status s = soak_create(&g, &ext, NULL);
    cgrt_test_fail_call(0);
    if (cgrt_test_calls() - c < k) {
      EXPECT(s == CGRT_OK, "create past its last call: status %d: %s", s, cgrt_last_error());
      soak_destroy(g);
      continue;
    }
    injected++;
    EXPECT(s == CGRT_ERROR_CUDA && g == NULL &&
               strstr(cgrt_last_error(), "cudaErrorMemoryAllocation") != NULL,
           "main, call %ld: status %d, message %s", k, s, cgrt_last_error());
  }
  EXPECT(injected == 20, "only %d of 20 failures were injected", injected);
  long main_calls = cgrt_test_calls();
  for (int t = 0; t < THREADS; t++) {
    pthread_join(workers[t].thread, NULL);
    Worker *w = &workers[t];
    test_checks += w->checks;
    test_failures += w->failures;
    if (w->failures)
      fprintf(stderr, "test_threads: thread %d: %d of %d checks failed, the first: %s\n", t,
              w->failures, w->checks, w->first);
    EXPECT(w->calls > ITERATIONS * LAUNCHES, "thread %d counted %ld CUDA calls", t, w->calls);
  }
  printf("test_threads: %d threads x %d graphs; thread 0 made %ld CUDA calls\n", THREADS,
         ITERATIONS, workers[0].calls);
  EXPECT(cgrt_test_calls() == main_calls, "the workers' calls counted in the main thread");
  EXPECT(cgrt_test_live() == live0, "the runtime holds %ld resources more than before",
         cgrt_test_live() - live0);
  EXPECT(cgrt_test_bytes() == bytes0, "the runtime holds %lld bytes more than before",
         cgrt_test_bytes() - bytes0);
  CUDA(cudaFree(dsum));
  return test_end("test_threads");
}
