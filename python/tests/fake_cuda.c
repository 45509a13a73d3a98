/* A stand-in for the CUDA driver's library (libcuda) in the package's
 * tests: the three functions cgc._cuda asks, answering as fake_cuda_set
 * says, and counting the calls of cuInit. */
static int init_status, devices = 1, init_calls;

void fake_cuda_set(int status, int count);
int fake_cuda_init_calls(void);
int cuInit(unsigned flags);
int cuDeviceGetCount(int *count);
int cuGetErrorName(int status, const char **name);

void fake_cuda_set(int status, int count) {
  init_status = status;
  devices = count;
}

int fake_cuda_init_calls(void) { return init_calls; }

int cuInit(unsigned flags) {
  (void)flags;
  init_calls++;
  return init_status;
}

int cuDeviceGetCount(int *count) {
  *count = devices;
  return 0;
}

int cuGetErrorName(int status, const char **name) {
  *name = status == 100 ? "CUDA_ERROR_NO_DEVICE" : status == 999 ? "CUDA_ERROR_UNKNOWN" : 0;
  return *name ? 0 : 1;
}
