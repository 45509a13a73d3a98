/* cgrt_errors.c: the runtime's messages, what it holds, and the hooks
 * its tests use to fail a call and count what is left. */
#include "cgrt_internal.h"

/* Graphs are created, launched and destroyed from many threads at once, so
 * nothing here is a plain shared variable: the message, the call count and
 * the fault hook belong to each thread (a test fails "the k-th call" of
 * the thread that asked), and what the runtime holds is counted in
 * atomics (relaxed: they are counters, ordering nothing). */
_Thread_local char cgrt_error_text[1024];
_Thread_local long cgrt_calls, cgrt_fail_at;
atomic_long cgrt_live;
atomic_llong cgrt_held_bytes;

const char *cgrt_last_error(void) { return cgrt_error_text; }
void cgrt_test_fail_call(long k) { cgrt_fail_at = k > 0 ? cgrt_calls + k : 0; }
long cgrt_test_calls(void) { return cgrt_calls; }
long cgrt_test_live(void) { return atomic_load_explicit(&cgrt_live, memory_order_relaxed); }
long long cgrt_test_bytes(void) {
  return atomic_load_explicit(&cgrt_held_bytes, memory_order_relaxed);
}

/* Why a first CUDA call failed, when the reason is that there is no GPU
 * to use: said plainly, since a CUDA error's name (cudaErrorInsufficientDriver)
 * does not tell a user that much; NULL when CUDA sees a device. */
const char *cgrt_no_gpu(void) {
  int n = 0;
  cudaError_t err = cudaGetDeviceCount(&n);
  if (err == cudaErrorInsufficientDriver)
    return "no GPU: no NVIDIA driver is loaded, or it is older than this CUDA runtime "
           "(cudaGetDeviceCount: cudaErrorInsufficientDriver)";
  if (err == cudaErrorNoDevice || (err == cudaSuccess && n == 0))
    return "no GPU: CUDA sees no device on this machine (cudaGetDeviceCount: no device; "
           "CUDA_VISIBLE_DEVICES may hide them)";
  return NULL;
}

cgrt_status cgrt_fail(cgrt_status s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(cgrt_error_text, sizeof cgrt_error_text, fmt, ap);
  va_end(ap);
  return s;
}

cgrt_status cgrt_invalid(const cgrt_graph_desc *d, const char *what) {
  return invalid(d, "%s", what);
}
