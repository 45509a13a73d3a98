/* gpu.pool: graphs sharing a cgrt_pool.  Members of one pool launched in
 * random order on two streams never run at once (their shared scratch
 * would show it) and compute what the same graphs with memory of their
 * own compute; a pool is as large as its largest member; what cannot be a
 * member, a pool too small, destroying a pool in use, and every failing
 * CUDA call of pool_create are refused with a message and leave nothing. */
#include "fault_sweep.h"
#include "gpu_test.h"
#include "pool_graph.h"

enum { LAUNCHES = 400 };

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
