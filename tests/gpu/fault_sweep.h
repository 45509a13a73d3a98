/* fault_sweep.h: what the GPU tests that fail the runtime's CUDA calls in
 * turn share.  A sweep fails call k = 1, 2, ... of an operation and ends at
 * the first k that the operation's calls did not reach. */
#ifndef FAULT_SWEEP_H
#define FAULT_SWEEP_H

#include "cgrt_testing.h"

/* Fails call k of what runs between this and fault_end. */
static inline long fault_begin(long k) {
  long calls = cgrt_test_calls();
  cgrt_test_fail_call(k);
  return calls;
}

/* Whether the failure was injected: the operation made k calls or more. */
static inline int fault_end(long k, long calls_before) {
  cgrt_test_fail_call(0);
  return cgrt_test_calls() - calls_before >= k;
}

#endif
