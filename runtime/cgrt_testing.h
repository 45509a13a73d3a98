/* cgrt_testing.h: hooks for the runtime's own tests; not for production
 * use.  Safe to call from any thread. */
#ifndef CGRT_TESTING_H
#define CGRT_TESTING_H

#ifdef __cplusplus
extern "C" {
#endif

/* Makes the k-th CUDA call that this thread makes from now fail with
 * cudaErrorMemoryAllocation instead of being made (k >= 1); 0 turns the
 * hook off.  Other threads' calls neither count nor fail. */
void cgrt_test_fail_call(long k);
/* CUDA calls this thread made (or the hook failed) since it began. */
long cgrt_test_calls(void);
/* Host allocations and CUDA objects (allocations, graphs, executable
 * graphs, events) the runtime holds now, in every thread. */
long cgrt_test_live(void);
/* Bytes of device and pinned host memory the runtime holds now, in every
 * thread. */
long long cgrt_test_bytes(void);
/* Graphs created from now on take at most n scalars set between two
 * launches through the upload's parameter, and copy more the slow way
 * (0: as many as there are scalars in device memory, up to 2048). */
void cgrt_test_upload_room(unsigned n);

/* Graphs created from now on write a by-value scalar into node parameters
 * on the device once at least n nodes could take it so (0: the default,
 * 4; UINT_MAX: never), so that tests reach both ways. */
void cgrt_test_device_updates(unsigned n);

/* How many node parameters graph g's upload writes on the device. */
struct cgrt_graph;
unsigned cgrt_test_updated_params(const struct cgrt_graph *g);

/* How many of graph g's nodes have their grid set on the device by the
 * upload (the hook cgrt_test_device_updates sets how many it takes). */
unsigned cgrt_test_device_grids(const struct cgrt_graph *g);

/* How many node updates graph g's launches have made for scalars set
 * (a node that follows several scalars set together counts once). */
unsigned long long cgrt_test_node_updates(const struct cgrt_graph *g);

/* How many of graph g's kernels are updated in its executable graph
 * through the driver's cuGraphExecKernelNodeSetParams (the others through
 * the runtime's), counting the scalar upload as one. */
unsigned cgrt_test_driver_update(const struct cgrt_graph *g);

/* How many edges of graph g went in as programmatic ones (none when
 * cgrt_options.safe or CGRT_SANITIZER_SAFE leaves them out): those of the
 * CUDA graph it runs now, which a bind that reshapes a capture node's work
 * builds again (its own count; a failed rebuild keeps the old one's). */
unsigned cgrt_test_programmatic_edges(const struct cgrt_graph *g);

#ifdef __cplusplus
}
#endif

#endif
