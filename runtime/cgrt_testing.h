/* cgrt_testing.h: hooks for the runtime's own tests.  Not thread-safe;
 * not for production use. */
#ifndef CGRT_TESTING_H
#define CGRT_TESTING_H

#ifdef __cplusplus
extern "C" {
#endif

/* Makes the k-th CUDA call from now fail with cudaErrorMemoryAllocation
 * instead of being made (k >= 1); 0 turns the hook off. */
void cgrt_test_fail_call(long k);
/* CUDA calls made (or failed by the hook) since the process began. */
long cgrt_test_calls(void);
/* Host allocations and CUDA objects (allocations, graphs, executable
 * graphs, events) the runtime holds now. */
long cgrt_test_live(void);

#ifdef __cplusplus
}
#endif

#endif
