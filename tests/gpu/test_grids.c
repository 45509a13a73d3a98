/* gpu.grids: grids that follow bounded scalars.  1,000 launches queued on
 * one stream without synchronising, each with a new random n (some 0) and
 * m, by-value and in-memory scalars set too: every launch's block counts
 * are what its own values give.  A value above its bound is refused by set
 * (the scalar keeps its value); a grid out of range is refused by launch
 * and works again once the value is good; a grid of 0 runs nothing; a
 * grid in a conditional body follows its scalar as well.  A node that
 * follows several scalars set together is updated once a launch. */
#include "cgrt_testing.h"
#include "gpu_test.h"
#include "grids_graph.h"

enum { LAUNCHES = 1000 };

static uint32_t *device_counts(void) {
  uint32_t *p;
  CUDA(cudaMalloc((void **)&p, LAUNCHES * sizeof *p));
  CUDA(cudaMemset(p, 0, LAUNCHES * sizeof *p));
  return p;
}

static void read_counts(uint32_t *host, const uint32_t *dev) {
  CUDA(cudaMemcpy(host, dev, LAUNCHES * sizeof *host, cudaMemcpyDeviceToHost));
}

static uint32_t cdiv(uint32_t a, uint32_t b) { return (a + b - 1) / b; }

static uint32_t a_host[LAUNCHES], b_host[LAUNCHES], c_host[LAUNCHES];
static uint32_t ns[LAUNCHES], ms[LAUNCHES], ons[LAUNCHES];

static void test_follow(cudaStream_t stream) {
  uint32_t *a = device_counts(), *b = device_counts(), *c = device_counts();
  CUDA(cudaDeviceSynchronize());
  follow_extern ext = {a, b, c};
  follow *g;
  CGRT(follow_create(&g, &ext, NULL));
  unsigned long long updates0 = cgrt_test_node_updates((const struct cgrt_graph *)g), want = 0;
  uint32_t prev = 0, prev_m = 1, prev_tag = 0; /* the initial values */
  for (int i = 0; i < LAUNCHES; i++) {
    uint32_t n;
    do /* mostly a grid other than the last launch's; 0 now and then */
      n = rand64() % 16 == 0 ? 0 : (uint32_t)(rand64() % 65537);
    while (n && cdiv(n, 256) == cdiv(prev, 256));
    ms[i] = 1 + (uint32_t)(rand64() % 8);
    /* Setting a scalar to its value changes nothing; otherwise the first
     * node (n's grid, tag by value) and the second (n and m's grid) are
     * updated once each, however many of their scalars were set. */
    want += (n != prev || (uint32_t)i != prev_tag) + (n != prev || ms[i] != prev_m);
    ns[i] = prev = n;
    prev_m = ms[i];
    prev_tag = (uint32_t)i;
    CGRT(follow_set_n(g, n));
    CGRT(follow_set_m(g, (uint16_t)ms[i]));
    CGRT(follow_set_tag(g, (uint32_t)i));
    CGRT(follow_set_seq(g, (uint32_t)i));
    CGRT(follow_launch(g, stream));
  }
  CUDA(cudaStreamSynchronize(stream));
  unsigned long long updates = cgrt_test_node_updates((const struct cgrt_graph *)g) - updates0;
  EXPECT(updates == want, "%llu node updates in %d launches, expected %llu", updates, LAUNCHES,
         want);
  read_counts(a_host, a);
  read_counts(b_host, b);
  read_counts(c_host, c);
  int wrong = 0;
  for (int i = 0; i < LAUNCHES; i++) {
    uint32_t x = cdiv(ns[i], 256);
    if (a_host[i] != x || b_host[i] != x * ms[i] || c_host[i] != 4) {
      if (wrong++ < 5)
        EXPECT(0, "launch %d (n = %u, m = %u): blocks %u, %u, %u; expected %u, %u, 4", i, ns[i],
               ms[i], a_host[i], b_host[i], c_host[i], x, x * ms[i]);
    }
  }
  EXPECT(wrong == 0, "%d of %d launches ran a grid other than their own", wrong, LAUNCHES);

  /* Above the bound: refused, naming the scalar; n keeps its value. */
  CGRT(follow_set_n(g, 512));
  cgrt_status s = follow_set_n(g, 65537);
  EXPECT(s == CGRT_ERROR_INVALID, "set n = 65537 (above max 65536) gave %d", (int)s);
  EXPECT(strstr(cgrt_last_error(), "'n'") && strstr(cgrt_last_error(), "above its bound"),
         "message: %s", cgrt_last_error());
  uint32_t n = 0;
  CGRT(follow_get_n(g, &n));
  EXPECT(n == 512, "n is %u after a refused set, not 512", n);
  CGRT(follow_set_tag(g, 0));
  CGRT(follow_set_seq(g, 0));
  CUDA(cudaMemset(a, 0, sizeof *a));
  CUDA(cudaMemset(b, 0, sizeof *b));
  CUDA(cudaDeviceSynchronize());
  CGRT(follow_launch(g, stream));
  CUDA(cudaStreamSynchronize(stream));
  read_counts(a_host, a);
  read_counts(b_host, b);
  EXPECT(a_host[0] == 2 && b_host[0] == 2 * ms[LAUNCHES - 1],
         "after the refused set: %u and %u blocks, expected 2 and %u", a_host[0], b_host[0],
         2 * ms[LAUNCHES - 1]);
  follow_destroy(g);
  CUDA(cudaFree(a));
  CUDA(cudaFree(b));
  CUDA(cudaFree(c));
}

static void test_body(cudaStream_t stream) {
  uint32_t *b = device_counts();
  CUDA(cudaDeviceSynchronize());
  body_extern ext = {b};
  body *g;
  CGRT(body_create(&g, &ext, NULL));
  for (int i = 0; i < LAUNCHES; i++) {
    ns[i] = rand64() % 8 == 0 ? 0 : (uint32_t)(rand64() % 4097);
    ons[i] = (uint32_t)(rand64() % 2);
    CGRT(body_set_n(g, ns[i]));
    CGRT(body_set_on(g, ons[i]));
    CGRT(body_set_seq(g, (uint32_t)i));
    CGRT(body_launch(g, stream));
  }
  CUDA(cudaStreamSynchronize(stream));
  read_counts(b_host, b);
  int wrong = 0;
  for (int i = 0; i < LAUNCHES; i++) {
    uint32_t x = ons[i] ? cdiv(ns[i], 64) : 0;
    if (b_host[i] != x && wrong++ < 5)
      EXPECT(0, "body launch %d (n = %u, on = %u): %u blocks, expected %u", i, ns[i], ons[i],
             b_host[i], x);
  }
  EXPECT(wrong == 0, "%d of %d launches in a body ran a grid other than their own", wrong,
         LAUNCHES);
  body_destroy(g);
  CUDA(cudaFree(b));
}

static void test_shifted(cudaStream_t stream) {
  uint32_t *b = device_counts();
  CUDA(cudaDeviceSynchronize());
  shifted_extern ext = {b};
  shifted *g;
  CGRT(shifted_create(&g, &ext, NULL));
  CGRT(shifted_set_seq(g, 0));
  CGRT(shifted_launch(g, stream)); /* n = 10: 5 blocks */
  CGRT(shifted_set_n(g, 3));
  cgrt_status s = shifted_launch(g, stream);
  EXPECT(s == CGRT_ERROR_INVALID, "a grid of -2 launched (%d)", (int)s);
  EXPECT(strstr(cgrt_last_error(), "grid extent x is -2 when n = 3"), "message: %s",
         cgrt_last_error());
  CGRT(shifted_set_n(g, 5)); /* 0 blocks: the node is disabled */
  CGRT(shifted_set_seq(g, 1));
  CGRT(shifted_launch(g, stream));
  CGRT(shifted_set_n(g, 9)); /* enabled again: 4 blocks */
  CGRT(shifted_set_seq(g, 2));
  CGRT(shifted_launch(g, stream));
  CGRT(shifted_set_n(g, 5)); /* and off again */
  CGRT(shifted_set_seq(g, 3));
  CGRT(shifted_launch(g, stream));
  CUDA(cudaStreamSynchronize(stream));
  read_counts(b_host, b);
  EXPECT(b_host[0] == 5 && b_host[1] == 0 && b_host[2] == 4 && b_host[3] == 0,
         "blocks %u, %u, %u, %u; expected 5, 0, 4, 0", b_host[0], b_host[1], b_host[2], b_host[3]);
  shifted_destroy(g);
  CUDA(cudaFree(b));
}

int main(void) {
  test_start("gpu.grids");
  long live0 = cgrt_test_live();
  cudaStream_t stream;
  CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  test_follow(stream);
  test_body(stream);
  test_shifted(stream);
  CUDA(cudaStreamDestroy(stream));
  EXPECT(cgrt_test_live() == live0, "%ld resources still held", cgrt_test_live() - live0);
  return test_end("gpu.grids");
}
