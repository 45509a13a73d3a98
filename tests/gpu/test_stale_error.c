/* test_stale_error: cgrt_modules.c over a stand-in CUDA runtime (the
 * calls defined here), so it runs without a GPU.  The runtime asks the
 * driver for a module kernel's parameter count and, where the module and
 * the driver cannot say, asks cudaFuncGetParamInfo one parameter past the
 * last: a runtime call of either that fails is not the program's error,
 * so it must not be left for the program's cudaGetLastError() to read as
 * if one of its own kernels had failed. */
#include <stdio.h>
#include <string.h>

#include "../../runtime/cgrt_modules.c"

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

/* ---- the stand-in: the runtime's last error, and calls that fail ---- */

static cudaError_t last;          /* what cudaGetLastError reads and resets */
static cudaError_t version_fails; /* cudaDriverGetVersion's failure, if any */
static cudaError_t entry_fails;   /* cudaGetDriverEntryPointByVersion's */
static size_t real_params;        /* parameters cudaFuncGetParamInfo knows */

static cudaError_t failed(cudaError_t e) {
  if (e != cudaSuccess)
    last = e;
  return e;
}

cudaError_t cudaGetLastError(void) {
  cudaError_t e = last;
  last = cudaSuccess;
  return e;
}

cudaError_t cudaPeekAtLastError(void) { return last; }

cudaError_t cudaDriverGetVersion(int *version) {
  *version = version_fails ? 0 : 13000;
  return failed(version_fails);
}

cudaError_t cudaGetDriverEntryPointByVersion(const char *symbol, void **fn, unsigned int version,
                                             unsigned long long flags,
                                             enum cudaDriverEntryPointQueryResult *status) {
  (void)symbol, (void)version, (void)flags;
  *fn = NULL;
  if (status)
    *status = entry_fails ? cudaDriverEntryPointSymbolNotFound : cudaDriverEntryPointSuccess;
  return failed(entry_fails);
}

cudaError_t cudaFuncGetParamInfo(const void *func, size_t index, size_t *offset, size_t *size) {
  (void)func;
  if (index >= real_params)
    return failed(cudaErrorInvalidValue);
  *offset = 8 * index;
  *size = 8;
  return cudaSuccess;
}

int main(void) {
#if CUDART_VERSION >= 12050
  uint32_t count = 0;

  /* The driver's version cannot be had: no count, and no error left. */
  last = cudaSuccess;
  version_fails = cudaErrorInvalidValue;
  entry_fails = cudaSuccess;
  CHECK(!driver_param_count(NULL, &count), "cudaDriverGetVersion failed: a count");
  CHECK(cudaPeekAtLastError() == cudaSuccess,
        "cudaDriverGetVersion failed: error %d left for the program", (int)cudaPeekAtLastError());

  /* The entry point cannot be had. */
  last = cudaSuccess;
  version_fails = cudaSuccess;
  entry_fails = cudaErrorInvalidValue;
  CHECK(!driver_param_count(NULL, &count), "cudaGetDriverEntryPointByVersion failed: a count");
  CHECK(cudaPeekAtLastError() == cudaSuccess,
        "cudaGetDriverEntryPointByVersion failed: error %d left for the program",
        (int)cudaPeekAtLastError());
#endif

  /* A module that says nothing of its kernel's parameters (not a module
   * cgrt_module_params reads), on a driver without the count: the
   * declared two are asked for, and the kernel has one.  Create fails
   * with a message, and leaves no CUDA error for the program. */
  static const unsigned char image[16];
  const cgrt_module_desc module = {"m.cubin", CGRT_MODULE_CUBIN, sizeof image, image};
  const cgrt_kernel_from from = {CGRT_KERNEL_MODULE, 0, "k", NULL};
  const char *const names[] = {"k"};
  const cgrt_arg_desc args[2] = {{.size = 8}, {.size = 8}};
  cgrt_node_desc node = {0};
  node.name = "n";
  node.nargs = 2;
  cgrt_graph_desc d = {0};
  d.source = "t.cgraph";
  d.name = "g";
  d.nodes = &node;
  d.nnodes = 1;
  d.args = args;
  d.kernel_from = &from;
  d.kernel_names = names;
  d.modules = &module;
  d.nmodules = 1;
  last = cudaSuccess;
  entry_fails = cudaErrorInvalidValue;
  real_params = 1;
  cgrt_status s = check_params(&d, 0, 0, NULL);
  CHECK(s == CGRT_ERROR_INVALID && strstr(cgrt_last_error(), "takes 1 parameters"),
        "one parameter of two: status %d, \"%s\"", (int)s, cgrt_last_error());
  CHECK(cudaPeekAtLastError() == cudaSuccess, "one parameter of two: error %d left for the program",
        (int)cudaPeekAtLastError());

  if (failures) {
    fprintf(stderr, "test_stale_error: %d failures\n", failures);
    return 1;
  }
  printf("test_stale_error: all passed\n");
  return 0;
}
