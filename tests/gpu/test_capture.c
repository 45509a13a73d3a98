/* test_capture: capture nodes.  A cuBLAS matrix-vector product captured
 * between kernel nodes whose producers spin, with fresh values each launch
 * and its matrix rebound halfway; the same product in a while body and an
 * if body; a capture function whose captured work changes shape with its
 * buffer's address, rebound back and forth, and beside a programmatic edge
 * (the rebuilt graph's count of such edges, and a rebuild failed at each
 * of its CUDA calls), and behind launches held on another stream, which
 * it waits for; capture functions that fail
 * (an error returned, a synchronisation inside the capture, a capture left
 * unjoined) and one that captures nothing; and every CUDA call of a create
 * with capture nodes, and of a bind that captures again, failed in turn. */
#include <cublas_v2.h>

#include "capture_blas.h"
#include "capture_graph.h"
#include "fault_sweep.h"
#include "gpu_test.h"

enum { N = 256 };

static float produced(uint32_t seed, uint32_t i) {
  return (float)((seed * 2654435761u + i * 40503u) % 1000u) / 1000.0f - 0.5f;
}

/* y = A x in double, A row-major. */
static void matvec(const float *a, const float *x, float *y) {
  for (int r = 0; r < N; r++) {
    double acc = 0;
    for (int c = 0; c < N; c++)
      acc += (double)a[r * N + c] * x[c];
    y[r] = (float)acc;
  }
}

static int close_to(float got, float want) { return fabsf(got - want) <= 1e-4f + 1e-4f * fabsf(want); }

static void random_matrix(float *a) {
  /* Uniform in +-sqrt(3 / N): A x is about as large as x, so x A^k stays
   * near 1 and a wrong count of products shows. */
  for (int i = 0; i < N * N; i++)
    a[i] = ((float)(rand64() % 2001) / 1000.0f - 1.0f) * sqrtf(3.0f / N);
}

static void test_chain(cgrt_options *opt, float *da1, float *da2, const float *a1, const float *a2,
                       cudaStream_t s) {
  float *dz, z[2 * N], x[N], y[N];
  CUDA(cudaMalloc((void **)&dz, sizeof z));
  chain_extern ext = {da1, dz};
  chain *g;
  CGRT(chain_create(&g, &ext, opt));
  const float *a = a1;
  int bad[2] = {0};
  for (int round = 0; round < 24; round++) {
    if (round == 12) {
      CGRT(chain_bind_a(g, da2)); /* captures sgemv again, on the new matrix */
      a = a2;
    }
    uint32_t seed = (uint32_t)rand64();
    CUDA(cudaMemsetAsync(dz, 0xff, sizeof z, s)); /* NaN */
    CGRT(chain_set_seed(g, seed));
    CGRT(chain_set_delay(g, 100000 + rand64() % 500000));
    CGRT(chain_launch(g, s));
    CUDA(cudaMemcpyAsync(z, dz, sizeof z, cudaMemcpyDeviceToHost, s));
    CUDA(cudaStreamSynchronize(s));
    for (uint32_t i = 0; i < N; i++)
      x[i] = produced(seed, i);
    matvec(a, x, y);
    for (uint32_t i = 0; i < N; i++) {
      bad[0] += !close_to(z[i], 2 * y[i]);
      bad[1] += !close_to(z[N + i], 2 * y[i]);
    }
    EXPECT(!bad[0] && !bad[1], "chain, round %d: %d and %d of %d wrong (z[0] %g, want %g)", round,
           bad[0], bad[1], N, z[0], 2 * y[0]);
  }
  chain_destroy(g);
  CUDA(cudaFree(dz));
}

static void test_loop(cgrt_options *opt, float *da1, float *da2, const float *a1, const float *a2,
                      cudaStream_t s) {
  float *dx, x[N], want[N], tmp[N];
  CUDA(cudaMalloc((void **)&dx, sizeof x));
  loop_extern ext = {da1, dx};
  loop *g;
  CGRT(loop_create(&g, &ext, opt));
  const float *a = a1;
  for (int round = 0; round < 8; round++) {
    if (round == 4) {
      CGRT(loop_bind_a(g, da2)); /* the capture nodes in both bodies capture again */
      a = a2;
    }
    uint32_t seed = (uint32_t)rand64(), more = round % 2 ? (uint32_t)(1 + rand64() % 1000) : 0;
    CGRT(loop_set_seed(g, seed));
    CGRT(loop_set_more(g, more));
    CGRT(loop_launch(g, s));
    CUDA(cudaMemcpyAsync(x, dx, sizeof x, cudaMemcpyDeviceToHost, s));
    CUDA(cudaStreamSynchronize(s));
    for (uint32_t i = 0; i < N; i++)
      want[i] = produced(seed, i);
    for (int k = 0; k < 3 + (more > 0); k++) {
      matvec(a, want, tmp);
      memcpy(want, tmp, sizeof tmp);
    }
    int bad = 0;
    for (uint32_t i = 0; i < N; i++)
      bad += !close_to(x[i], want[i]);
    EXPECT(!bad, "loop, round %d (more %u): %d of %d wrong (x[0] %g, want %g)", round, more, bad, N,
           x[0], want[0]);
  }
  loop_destroy(g);
  CUDA(cudaFree(dx));
}

/* The programmatic edges a graph went in with: a bind that changes the
 * capture node's shape builds the graph again (cgrt_rebuild), which must
 * count the new graph's edges alone, not add them to the old count; a
 * rebuild that fails at any CUDA call keeps the old graph and its count,
 * and the graph still computes.  z = 2 y beside x + 1 each launch. */
static void check_shape_pdl(shape_pdl *g, float *x, float *dz, cudaStream_t s, const char *when) {
  float h[N], z[N], want[N];
  uint32_t seed = (uint32_t)rand64();
  for (int i = 0; i < N; i++)
    want[i] = h[i] = (float)(rand64() % 1000);
  CUDA(cudaMemcpyAsync(x, h, sizeof h, cudaMemcpyHostToDevice, s));
  CUDA(cudaMemsetAsync(dz, 0xff, sizeof z, s)); /* NaN */
  CGRT(shape_pdl_set_seed(g, seed));
  CGRT(shape_pdl_launch(g, s));
  CUDA(cudaMemcpyAsync(h, x, sizeof h, cudaMemcpyDeviceToHost, s));
  CUDA(cudaMemcpyAsync(z, dz, sizeof z, cudaMemcpyDeviceToHost, s));
  CUDA(cudaStreamSynchronize(s));
  int bad = 0;
  for (uint32_t i = 0; i < N; i++)
    bad += h[i] != want[i] + 1 || !close_to(z[i], 2 * produced(seed, i));
  EXPECT(!bad, "shape_pdl, %s: %d of %d wrong", when, bad, N);
}

static void test_rebuild_counts(cgrt_options *opt, cudaStream_t s) {
  float *mem, *dz;
  CUDA(cudaMalloc((void **)&mem, 4096 + N * sizeof *mem));
  CUDA(cudaMalloc((void **)&dz, N * sizeof *dz));
  float *aligned = (float *)(((uintptr_t)mem + 511) / 512 * 512), *odd = aligned + 4;
  shape_pdl_extern ext = {aligned, dz};
  shape_pdl *g;
  CGRT(shape_pdl_create(&g, &ext, opt));
  const struct cgrt_graph *cg = (const struct cgrt_graph *)g;
  unsigned want = cgrt_test_programmatic_edges(cg);
  printf("test_capture: shape_pdl went in with %u programmatic edges%s\n", want,
         want ? "" : " (none on this GPU or build: the rebuild's count is checked at 0 only)");
  float *places[] = {odd, aligned, odd, aligned};
  for (int round = 0; round < 4; round++) {
    CGRT(shape_pdl_bind_x(g, places[round])); /* another shape: built again */
    EXPECT(cgrt_test_programmatic_edges(cg) == want,
           "rebuild %d: %u programmatic edges, the graph has %u", round + 1,
           cgrt_test_programmatic_edges(cg), want);
    check_shape_pdl(g, places[round], dz, s, "after a rebuild");
  }
  /* Bound at `aligned`: each bind to `odd` rebuilds, the k-th CUDA call
   * failed, until one passes its last call. */
  long live = cgrt_test_live(), k;
  for (k = 1; k < 10000; k++) {
    long c = fault_begin(k);
    cgrt_status st = shape_pdl_bind_x(g, odd);
    int failed = fault_end(k, c);
    EXPECT(cgrt_test_programmatic_edges(cg) == want,
           "bind, call %ld (%s): %u programmatic edges, the graph has %u", k,
           failed ? "failed" : "none failed", cgrt_test_programmatic_edges(cg), want);
    if (!failed) {
      EXPECT(st == CGRT_OK, "rebuild past its last call: %s", cgrt_last_error());
      break;
    }
    EXPECT(st == CGRT_ERROR_CUDA, "bind, call %ld: status %d", k, st);
    EXPECT(cgrt_test_live() == live, "bind, call %ld: %ld resources more", k,
           cgrt_test_live() - live);
    if (k % 8 == 1)
      check_shape_pdl(g, aligned, dz, s, "after a failed rebuild");
  }
  printf("test_capture: a rebuild beside a programmatic edge swept over %ld calls\n", k - 1);
  check_shape_pdl(g, odd, dz, s, "after the sweep");
  shape_pdl_destroy(g);
  CUDA(cudaFree(mem));
  CUDA(cudaFree(dz));
}

/* bump captures one kernel at a 512-byte aligned address and two elsewhere:
 * rebinding between the two changes the child graph's shape. */
static void test_shape(cgrt_options *opt, cudaStream_t s) {
  float *mem, h[N], want[N];
  CUDA(cudaMalloc((void **)&mem, 4096 + sizeof h));
  float *aligned = (float *)(((uintptr_t)mem + 511) / 512 * 512), *odd = aligned + 4;
  shape_extern ext = {aligned};
  shape *g;
  CGRT(shape_create(&g, &ext, opt));
  float *places[] = {aligned, odd, odd, aligned, odd};
  for (int round = 0; round < 5; round++) {
    float *x = places[round];
    CGRT(shape_bind_x(g, x));
    for (int i = 0; i < N; i++)
      want[i] = h[i] = (float)(rand64() % 1000);
    CUDA(cudaMemcpyAsync(x, h, sizeof h, cudaMemcpyHostToDevice, s));
    for (int k = 0; k < 3; k++)
      CGRT(shape_launch(g, s));
    CUDA(cudaMemcpyAsync(h, x, sizeof h, cudaMemcpyDeviceToHost, s));
    CUDA(cudaStreamSynchronize(s));
    int bad = 0;
    for (int i = 0; i < N; i++)
      bad += h[i] != want[i] + 3;
    EXPECT(!bad, "shape, round %d (%s address): %d of %d wrong", round,
           x == aligned ? "aligned" : "unaligned", bad, N);
  }
  shape_destroy(g);
  CUDA(cudaFree(mem));
}

static void expect_failure(const char *what, cgrt_status status, const void *out, const char *call) {
  const char *msg = cgrt_last_error();
  EXPECT(status == CGRT_ERROR_CUDA, "%s: status %d", what, status);
  EXPECT(out == NULL, "%s: *out is not NULL", what);
  EXPECT(strstr(msg, "capture.cgraph:") && strstr(msg, "node f") && strstr(msg, "fail_with") &&
             strstr(msg, call),
         "%s: message '%s' should name the position, the node, the function and %s", what, msg,
         call);
  printf("test_capture: %s: %s\n", what, msg);
}

static void test_failing_functions(cudaStream_t s) {
  long live0 = cgrt_test_live();
  long long bytes0 = cgrt_test_bytes();
  fail_return *r = (fail_return *)&r;
  cgrt_status st = fail_return_create(&r, NULL);
  expect_failure("an error returned", st, r, "cudaErrorInvalidValue");
  fail_sync *y = (fail_sync *)&y;
  st = fail_sync_create(&y, NULL);
  expect_failure("a synchronisation", st, y, "cudaStreamEndCapture");
  fail_other_stream *o = (fail_other_stream *)&o;
  st = fail_other_stream_create(&o, NULL);
  expect_failure("an unjoined capture", st, o, "cudaStreamEndCapture");
  EXPECT(cgrt_test_live() == live0 && cgrt_test_bytes() == bytes0,
         "failed creates left %ld resources and %lld bytes", cgrt_test_live() - live0,
         cgrt_test_bytes() - bytes0);
  empty_capture *e;
  CGRT(empty_capture_create(&e, NULL));
  CGRT(empty_capture_launch(e, s));
  CUDA(cudaStreamSynchronize(s));
  empty_capture_destroy(e);
  EXPECT(cgrt_test_live() == live0, "empty capture: %ld resources left", cgrt_test_live() - live0);
}

/* Every CUDA call of create and of a bind that captures again fails in
 * turn; each gives back everything, and past the last call both succeed. */
static void sweep(cgrt_options *opt, float *da1, float *da2) {
  float *dz;
  CUDA(cudaMalloc((void **)&dz, 2 * N * sizeof *dz));
  chain_extern ext = {da1, dz};
  long live0 = cgrt_test_live(), k;
  long long bytes0 = cgrt_test_bytes();
  for (k = 1; k < 10000; k++) {
    chain *g = NULL;
    long c = fault_begin(k);
    cgrt_status st = chain_create(&g, &ext, opt);
    if (!fault_end(k, c)) {
      EXPECT(st == CGRT_OK, "create past its last call: %s", cgrt_last_error());
      if (st == CGRT_OK)
        chain_destroy(g);
      break;
    }
    EXPECT(st != CGRT_OK && g == NULL, "create, call %ld: status %d", k, st);
    EXPECT(cgrt_test_live() == live0 && cgrt_test_bytes() == bytes0,
           "create, call %ld: %ld resources and %lld bytes left", k, cgrt_test_live() - live0,
           cgrt_test_bytes() - bytes0);
  }
  printf("test_capture: create swept over %ld calls\n", k - 1);
  chain *g;
  CGRT(chain_create(&g, &ext, opt));
  long live1 = cgrt_test_live();
  for (k = 1; k < 10000; k++) {
    long c = fault_begin(k);
    cgrt_status st = chain_bind_a(g, da2);
    if (!fault_end(k, c)) {
      EXPECT(st == CGRT_OK, "bind past its last call: %s", cgrt_last_error());
      break;
    }
    EXPECT(st == CGRT_ERROR_CUDA, "bind, call %ld: status %d", k, st);
    EXPECT(cgrt_test_live() == live1, "bind, call %ld: %ld resources more", k,
           cgrt_test_live() - live1);
  }
  printf("test_capture: bind swept over %ld calls\n", k - 1);
  chain_destroy(g);
  EXPECT(cgrt_test_live() == live0, "sweep: %ld resources left", cgrt_test_live() - live0);
  CUDA(cudaFree(dz));
}

/* kernels/hold.cu: holds `stream` until *gate is set or limit_ns pass. */
cudaError_t hold_stream(const volatile uint32_t *gate, uint64_t limit_ns, cudaStream_t stream);

/* A rebuild waits for the launches issued before it: launches queued on
 * another stream behind a kernel that holds it for a second, then a bind
 * that changes the capture node's shape (a rebuild), which returns only
 * once they ran, so that the new graph's first launch, on any stream,
 * cannot overlap them (they use the same memory). */
static void test_rebuild_waits(cgrt_options *opt, cudaStream_t s) {
  enum { HELD = 8 };
  float *mem, *dz, h[N];
  uint32_t *gate;
  cudaStream_t held;
  CUDA(cudaMalloc((void **)&mem, 4096 + N * sizeof *mem));
  CUDA(cudaMalloc((void **)&dz, N * sizeof *dz));
  CUDA(cudaMalloc((void **)&gate, sizeof *gate));
  CUDA(cudaMemset(gate, 0, sizeof *gate)); /* never opened: the hold lasts its limit */
  CUDA(cudaStreamCreateWithFlags(&held, cudaStreamNonBlocking));
  float *aligned = (float *)(((uintptr_t)mem + 511) / 512 * 512), *odd = aligned + 4;
  CUDA(cudaMemset(aligned, 0, N * sizeof *aligned));
  CUDA(cudaDeviceSynchronize());
  shape_pdl_extern ext = {aligned, dz};
  shape_pdl *g;
  CGRT(shape_pdl_create(&g, &ext, opt));
  CUDA(hold_stream(gate, UINT64_C(1000000000), held));
  for (int i = 0; i < HELD; i++)
    CGRT(shape_pdl_launch(g, held));
  int queued = cudaStreamQuery(held) == cudaErrorNotReady;
  CGRT(shape_pdl_bind_x(g, odd)); /* another shape: built again */
  cudaError_t after = cudaStreamQuery(held);
  EXPECT(queued, "rebuild: the launches were not held (the test shows nothing)");
  EXPECT(after == cudaSuccess, "a rebuild returned before the launches issued before it ran (%s)",
         cudaGetErrorName(after));
  CUDA(cudaStreamSynchronize(held));
  CUDA(cudaMemcpy(h, aligned, sizeof h, cudaMemcpyDeviceToHost));
  int bad = 0;
  for (int i = 0; i < N; i++)
    bad += h[i] != HELD;
  EXPECT(!bad, "rebuild: %d of %d values not bumped by each of the %d held launches", bad, N, HELD);
  check_shape_pdl(g, odd, dz, s, "after a rebuild behind held launches");
  shape_pdl_destroy(g);
  CUDA(cudaStreamDestroy(held));
  CUDA(cudaFree(gate));
  CUDA(cudaFree(mem));
  CUDA(cudaFree(dz));
}

int main(void) {
  test_start("test_capture");
  capture_blas blas = {NULL, NULL, 4 << 20};
  if (cublasCreate(&blas.handle) != CUBLAS_STATUS_SUCCESS) {
    fprintf(stderr, "test_capture: cublasCreate failed\n");
    return 1;
  }
  CUDA(cudaMalloc(&blas.workspace, blas.bytes));
  cgrt_options opt = CGRT_OPTIONS_INIT;
  opt.user = &blas;
  cudaStream_t s;
  CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  float *a1 = malloc(N * N * sizeof *a1), *a2 = malloc(N * N * sizeof *a2), *da1, *da2;
  random_matrix(a1);
  random_matrix(a2);
  CUDA(cudaMalloc((void **)&da1, N * N * sizeof *da1));
  CUDA(cudaMalloc((void **)&da2, N * N * sizeof *da2));
  CUDA(cudaMemcpy(da1, a1, N * N * sizeof *a1, cudaMemcpyHostToDevice));
  CUDA(cudaMemcpy(da2, a2, N * N * sizeof *a2, cudaMemcpyHostToDevice));

  test_chain(&opt, da1, da2, a1, a2, s);
  test_loop(&opt, da1, da2, a1, a2, s);
  test_shape(&opt, s);
  test_rebuild_counts(&opt, s);
  test_rebuild_waits(&opt, s);
  test_failing_functions(s);
  sweep(&opt, da1, da2);

  CUDA(cudaFree(da1));
  CUDA(cudaFree(da2));
  CUDA(cudaFree(blas.workspace));
  CUDA(cudaStreamDestroy(s));
  cublasDestroy(blas.handle);
  free(a1);
  free(a2);
  return test_end("test_capture");
}
