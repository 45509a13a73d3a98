/* test_modules: kernels from modules (PTX, cubin, fatbin) and from C++
 * templates run as nodes between linked kernels that spin for random
 * times, over launches with new values (a by-value scalar set each time,
 * the extern buffers rebound halfway), in control-flow bodies, with shared
 * memory above 48 KiB, a programmatic edge into a pdl module kernel and
 * clusters of 2 and of 16; every CUDA call of their create failing in
 * turn gives everything back; and each way of not finding a kernel (a
 * symbol the fatbin lacks, a cubin for another GPU, a declaration that
 * does not match the module's kernel) fails create with a message naming
 * the node, the kernel and the module as modules.cgraph writes it. */
#include "fault_sweep.h"
#include "gpu_test.h"
#include "modules_graph.h"

enum { N = 256, ROWS = 7, STRIDE = 96 };

static int device_major, device_minor;

static uint32_t *poisoned(uint32_t *dev, size_t words) {
  CUDA(cudaMemset(dev, 0xff, words * sizeof *dev));
  return dev;
}

/* The modules graph against the CPU: launches with new v, k and delays,
 * its outputs poisoned before each, rebound halfway. */
static void run_modules(void) {
  uint32_t *result[2];
  uint64_t *wide[2];
  for (int i = 0; i < 2; i++) {
    CUDA(cudaMalloc((void **)&result[i], ROWS * N * sizeof(uint32_t)));
    CUDA(cudaMalloc((void **)&wide[i], N * sizeof(uint64_t)));
  }
  modules_extern ext = {result[0], wide[0]};
  modules *g;
  CGRT(modules_create(&g, &ext, NULL));
  EXPECT(cudaGetLastError() == cudaSuccess, "create left a CUDA error pending");
  /* Its nine kernels (linked, template and module) and its upload are
   * updated through the driver, which the by-value k and the rebinding
   * below go through. */
  unsigned by_driver = cgrt_test_driver_update((const struct cgrt_graph *)g);
  EXPECT(by_driver == (CUDART_VERSION >= 12050 ? 10u : 0u),
         "%u of 9 kernels and the upload updated through the driver", by_driver);
  int on = 0;
  for (int launch = 0; launch < 24; launch++) {
    if (launch == 12) {
      on = 1;
      CGRT(modules_bind_result(g, result[1]));
      CGRT(modules_bind_wide(g, wide[1]));
    }
    uint32_t v = (uint32_t)(rand64() % 200), k = (uint32_t)(rand64() % 1000);
    uint64_t d0 = rand64() % 200000, d1 = rand64() % 200000;
    CGRT(modules_set_v(g, v));
    CGRT(modules_set_k(g, k));
    CGRT(modules_set_d0(g, d0));
    CGRT(modules_set_d1(g, d1));
    poisoned(result[on], ROWS * N);
    CUDA(cudaMemset(wide[on], 0xff, N * sizeof(uint64_t)));
    CGRT(modules_launch(g, 0));
    CUDA(cudaStreamSynchronize(0));
    uint32_t r[ROWS * N];
    uint64_t w[N];
    CUDA(cudaMemcpy(r, result[on], sizeof r, cudaMemcpyDeviceToHost));
    CUDA(cudaMemcpy(w, wide[on], sizeof w, cudaMemcpyDeviceToHost));
    int bad[ROWS + 1] = {0};
    for (uint32_t i = 0; i < N; i++) {
      uint32_t a0 = v * 7 + i, a1 = ((1000 * 7 + i) + k) ^ 0x5a5a5a5au, a3 = v * 7 + i + 3 * k;
      uint32_t want[ROWS] = {a0 * 3 + k,      a0 * 3 + k, (17 * 7 + i) * 3 + k, a1 * 3 + 7,
                             a0 * 3 + 11,     v > 100 ? a0 * 3 + k : a0 * 3 + 5, a3 * 3};
      for (int row = 0; row < ROWS; row++)
        bad[row] += r[row * N + i] != want[row];
      uint64_t wi = ((uint64_t)(a0 * 3 + 11) << 32 | i) * 5 + 13;
      bad[ROWS] += w[i] != wi;
    }
    static const char *const what[ROWS + 1] = {
        "PTX kernel after a slow producer",      "fatbin kernel after a slow producer",
        "slow PTX reader before an overwrite",   "PTX and fatbin kernels through inout",
        "template<uint32_t> after a slow producer", "module or template kernel in an if",
        "PTX kernel in a while",                 "template<uint64_t> after a slow kernel"};
    for (int row = 0; row <= ROWS; row++)
      EXPECT(!bad[row], "launch %d (v %u, k %u): %s: %d elements wrong", launch, v, k, what[row],
             bad[row]);
  }
  modules_destroy(g);
  for (int i = 0; i < 2; i++) {
    CUDA(cudaFree(result[i]));
    CUDA(cudaFree(wide[i]));
  }
}

/* Every CUDA call of a create that loads modules fails in turn: an error
 * that names the call, *out NULL, and every library, object and byte given
 * back. */
static void sweep_create(const char *name, cgrt_status (*create)(void **, void *), void *ext) {
  void *g = NULL;
  CGRT(create(&g, ext)); /* CUDA's own lazy set-up is not counted */
  cgrt_destroy(g);
  long live0 = cgrt_test_live();
  long long bytes0 = cgrt_test_bytes();
  long k;
  for (k = 1; k < 10000; k++) {
    g = &k;
    long c = fault_begin(k);
    cgrt_status s = create(&g, ext);
    if (!fault_end(k, c)) {
      EXPECT(s == CGRT_OK, "%s: create past its last call: status %d: %s", name, s,
             cgrt_last_error());
      cgrt_destroy(g);
      break;
    }
    if (s == CGRT_OK) {
      EXPECT(0, "%s: call %ld failed but create succeeded", name, k);
      cgrt_destroy(g);
      continue;
    }
    EXPECT(s == CGRT_ERROR_CUDA, "%s: call %ld: status %d", name, k, s);
    EXPECT(g == NULL, "%s: call %ld: *out was left set", name, k);
    EXPECT(cgrt_test_live() == live0, "%s: call %ld: %ld resources still held", name, k,
           cgrt_test_live() - live0);
    EXPECT(cgrt_test_bytes() == bytes0, "%s: call %ld: %lld bytes kept", name, k,
           cgrt_test_bytes() - bytes0);
    EXPECT(strstr(cgrt_last_error(), "modules.cgraph") &&
               strstr(cgrt_last_error(), "cudaErrorMemoryAllocation"),
           "%s: call %ld: message %s", name, k, cgrt_last_error());
  }
  printf("test_modules: create of %s makes %ld CUDA calls; each one failing was handled\n", name,
         k - 1);
  EXPECT(k > 10, "%s: create made only %ld CUDA calls", name, k - 1);
}

static cgrt_status create_modules(void **g, void *ext) {
  return modules_create((modules **)g, ext, NULL);
}
static cgrt_status create_cubins(void **g, void *ext) {
  return cubins_create((cubins **)g, ext, NULL);
}

/* The build's cubin: shared memory above 48 KiB and a pdl kernel. */
static void run_cubins(uint32_t *result) {
  cubins_extern ext = {result};
  cubins *g;
  CGRT(cubins_create(&g, &ext, NULL));
  for (int launch = 0; launch < 8; launch++) {
    uint32_t v = (uint32_t)(rand64() % 100000), k = (uint32_t)(rand64() % 1000);
    CGRT(cubins_set_v(g, v));
    CGRT(cubins_set_k(g, k));
    CGRT(cubins_set_d(g, rand64() % 200000));
    poisoned(result, 3 * N);
    CGRT(cubins_launch(g, 0));
    CUDA(cudaStreamSynchronize(0));
    uint32_t r[3 * N];
    CUDA(cudaMemcpy(r, result, sizeof r, cudaMemcpyDeviceToHost));
    int bad[3] = {0};
    for (uint32_t i = 0; i < N; i++) {
      uint32_t a = v * 7 + i;
      bad[0] += r[i] != a * 3 + k;
      bad[1] += r[N + i] != v * 7 + (N - 1 - i) + 1;
      bad[2] += r[2 * N + i] != (a * 3 + k) * 5 + k;
    }
    EXPECT(!bad[0], "cubin kernel after a slow producer: %d elements wrong", bad[0]);
    EXPECT(!bad[1], "cubin kernel with 96 KiB of shared memory: %d elements wrong", bad[1]);
    EXPECT(!bad[2], "pdl cubin kernel after a cubin kernel: %d elements wrong", bad[2]);
  }
  cubins_destroy(g);
}

/* After a launch of `blocks` blocks of cluster_blocks: each block saw
 * clusters of `size`. */
static void expect_cluster_size(const uint32_t *result, int blocks, uint32_t size) {
  uint32_t r[32];
  CUDA(cudaStreamSynchronize(0));
  CUDA(cudaMemcpy(r, result, (size_t)blocks * sizeof *r, cudaMemcpyDeviceToHost));
  for (int b = 0; b < blocks; b++)
    EXPECT(r[b] == size, "block %d of a module kernel in clusters of %u saw clusters of %u", b,
           size, r[b]);
}

static void run_clustered(uint32_t *result) {
  clustered_extern ext = {result};
  clustered *g;
  CGRT(clustered_create(&g, &ext, NULL));
  poisoned(result, 4);
  CGRT(clustered_launch(g, 0));
  expect_cluster_size(result, 4, 2);
  clustered_destroy(g);
}

/* The same kernel in clusters of 16, which it is opted in to for the
 * device. */
static void run_clustered16(uint32_t *result) {
  clustered16_extern ext = {result};
  clustered16 *g;
  CGRT(clustered16_create(&g, &ext, NULL));
  poisoned(result, 32);
  CGRT(clustered16_launch(g, 0));
  expect_cluster_size(result, 32, 16);
  clustered16_destroy(g);
}

/* A create that must fail: its status, *out, a message with each of
 * `parts`, nothing kept. */
static void expect_refused(const char *name, cgrt_status (*create)(void **), cgrt_status want,
                           const char *const *parts) {
  long live0 = cgrt_test_live();
  void *g = &live0;
  cgrt_status s = create(&g);
  const char *msg = cgrt_last_error();
  printf("test_modules: %s: %s\n", name, msg);
  EXPECT(s == want, "%s: status %d, expected %d", name, s, want);
  EXPECT(g == NULL, "%s: a failed create left *out set", name);
  for (; *parts; parts++)
    EXPECT(strstr(msg, *parts) != NULL, "%s: '%s' is not in the message: %s", name, *parts, msg);
  EXPECT(cgrt_test_live() == live0, "%s: %ld resources kept", name, cgrt_test_live() - live0);
  (void)cudaGetLastError();
}

static cgrt_status create_missing(void **g) { return missing_create((missing **)g, NULL); }
static cgrt_status create_arch75(void **g) { return arch75_create((arch75 **)g, NULL); }
static cgrt_status create_arch80(void **g) { return arch80_create((arch80 **)g, NULL); }
static cgrt_status create_fewer(void **g) { return fewer_params_create((fewer_params **)g, NULL); }
static cgrt_status create_more(void **g) { return more_params_create((more_params **)g, NULL); }
static cgrt_status create_sized(void **g) { return sized_params_create((sized_params **)g, NULL); }

int main(void) {
  test_start("test_modules");
  int dev;
  CUDA(cudaGetDevice(&dev));
  CUDA(cudaDeviceGetAttribute(&device_major, cudaDevAttrComputeCapabilityMajor, dev));
  CUDA(cudaDeviceGetAttribute(&device_minor, cudaDevAttrComputeCapabilityMinor, dev));
  run_modules();

  uint32_t *result, *wide;
  CUDA(cudaMalloc((void **)&result, ROWS * N * sizeof(uint32_t)));
  CUDA(cudaMalloc((void **)&wide, N * sizeof(uint64_t)));
  modules_extern ext = {result, wide};
  sweep_create("modules", create_modules, &ext);

  /* A cubin runs on the GPUs of its major version, of its minor or later. */
  int cubin_runs = device_major == MODULE_ARCH / 10 && device_minor >= MODULE_ARCH % 10;
  if (cubin_runs) {
    run_cubins(result);
    cubins_extern cext = {result};
    sweep_create("cubins", create_cubins, &cext);
  } else {
    printf("test_modules: the build's cubin is for sm_%d and the device is sm_%d%d: the cubin "
           "graph is not run (configure with CMAKE_CUDA_ARCHITECTURES=%d%d to run it)\n",
           MODULE_ARCH, device_major, device_minor, device_major, device_minor);
  }
  if (device_major >= 9 && MODULE_ARCH >= 90) {
    run_clustered(result);
    run_clustered16(result);
  } else
    printf("test_modules: clusters need sm_90 and a module built for it: not tried\n");

  const char *missing_parts[] = {"modules.cgraph:", "node gone", "kernel absent",
                                 "'no_such_kernel'", "'module_kernels.fatbin'",
                                 "cudaErrorSymbolNotFound", NULL};
  expect_refused("a symbol the fatbin lacks", create_missing, CGRT_ERROR_CUDA, missing_parts);
  /* sm_75's cubin runs on no GPU but a 7.5 one, sm_80's on no 7.x one. */
  if (device_major == 7) {
    const char *parts[] = {"node old", "kernel bump80", "'module_kernels_sm80.cubin'",
                           "(cudaError", NULL};
    expect_refused("a cubin for sm_80", create_arch80, CGRT_ERROR_CUDA, parts);
  } else {
    const char *parts[] = {"node old", "kernel bump75", "'module_kernels_sm75.cubin'",
                           "(cudaError", NULL};
    expect_refused("a cubin for sm_75", create_arch75, CGRT_ERROR_CUDA, parts);
  }
  const char *fewer_parts[] = {"node f", "kernel fewer", "'module_kernels.ptx'",
                               "takes 5 parameters, but its declaration has 4", NULL};
  expect_refused("a parameter fewer", create_fewer, CGRT_ERROR_INVALID, fewer_parts);
  const char *more_parts[] = {"node m", "kernel more", "takes 5 parameters, but its declaration "
                              "has 6", NULL};
  expect_refused("a parameter more", create_more, CGRT_ERROR_INVALID, more_parts);
  const char *sized_parts[] = {"node s", "parameter 3 of kernel sized", "takes 4 bytes, but its "
                               "declaration's takes 8", NULL};
  expect_refused("a parameter of another size", create_sized, CGRT_ERROR_INVALID, sized_parts);
  CUDA(cudaFree(result));
  CUDA(cudaFree(wide));
  return test_end("test_modules");
}
