/* cgrt_pool.c: pools of device memory that graphs which never run at
 * the same time share. */
#include "cgrt_internal.h"

static cgrt_status fail_pool(const char *call, cudaError_t err) {
  snprintf(cgrt_error_text, sizeof cgrt_error_text, "cgrt_pool_create: %s: %s (%s)", call,
           cudaGetErrorString(err), cudaGetErrorName(err));
  return CGRT_ERROR_CUDA;
}

/* Freeing waits for the device, so no member's launch still uses it. */
static void release_pool(cgrt_pool *p) {
  if (p->mem && cudaFree(p->mem) == cudaSuccess)
    account(-1, p->bytes);
  if (p->event && cudaEventDestroy(p->event) == cudaSuccess)
    account(-1, 0);
  xfree(p);
}

/* g becomes a member of pool, if it can be one. */
cgrt_status cgrt_join_pool(cgrt_graph *g, cgrt_pool *pool) {
  const cgrt_graph_desc *d = g->d;
  if (pool->device != g->device)
    return invalid(d, "the pool is on device %d and the graph on device %d", pool->device,
                   g->device);
  for (uint32_t i = 0; i < d->nbuffers; i++)
    if (buffer_kind(&d->buffers[i]) == CGRT_DEVICE && d->buffers[i].zero)
      return invalid(d,
                     "buffer '%s' is zeroed at create ('= 0') and keeps what the graph leaves "
                     "in it from one launch to the next, which a pool's memory does not: the "
                     "graph cannot share a pool (make the buffer extern, or create the graph "
                     "without one)",
                     d->buffers[i].name);
  g->pool = pool;
  atomic_fetch_add(&pool->members, 1);
  return CGRT_OK;
}

size_t cgrt_pool_bytes(const cgrt_graph_desc *d) {
  uint64_t bytes = 0;
  for (uint32_t i = 0; i < d->nbuffers; i++)
    if (buffer_kind(&d->buffers[i]) == CGRT_DEVICE)
      bytes = (bytes + d->buffers[i].bytes + ALIGN - 1) / ALIGN * ALIGN;
  return (size_t)bytes;
}

cgrt_status cgrt_pool_create(cgrt_pool **out, size_t bytes, int device) {
  if (!out)
    return invalid(NULL, "cgrt_pool_create: the result pointer is NULL");
  *out = NULL;
  int previous = 0;
  cudaError_t err = CU(cudaGetDevice(&previous));
  const char *no_gpu;
  if (err != cudaSuccess && (no_gpu = cgrt_no_gpu()))
    return cgrt_fail(CGRT_ERROR_CUDA, "cgrt_pool_create: %s", no_gpu);
  if (err != cudaSuccess)
    return fail_pool("cudaGetDevice", err);
  if (device != CGRT_CURRENT_DEVICE && device != previous &&
      (err = CU(cudaSetDevice(device))) != cudaSuccess)
    return fail_pool("cudaSetDevice", err);
  cgrt_status s = CGRT_OK;
  cgrt_pool *p = xcalloc(1, sizeof *p);
  if (!p) {
    snprintf(cgrt_error_text, sizeof cgrt_error_text, "cgrt_pool_create: out of host memory");
    s = CGRT_ERROR_NO_MEMORY;
  } else {
    p->device = device == CGRT_CURRENT_DEVICE ? previous : device;
    p->bytes = bytes;
    void *m = NULL;
    if (bytes && (err = CU(cudaMalloc(&m, bytes))) != cudaSuccess) {
      s = fail_pool("cudaMalloc", err);
    } else {
      p->mem = m;
      if (m)
        account(1, bytes);
      if ((err = CU(cudaEventCreateWithFlags(&p->event, cudaEventDisableTiming))) != cudaSuccess)
        s = fail_pool("cudaEventCreateWithFlags", err);
      else
        account(1, 0);
    }
    if (s != CGRT_OK) {
      release_pool(p);
      p = NULL;
    }
  }
  if (device != CGRT_CURRENT_DEVICE && device != previous)
    cudaSetDevice(previous); /* restoring the caller's device cannot sensibly fail */
  *out = p;
  return s;
}

cgrt_status cgrt_pool_destroy(cgrt_pool *p) {
  if (!p)
    return CGRT_OK;
  const long members = atomic_load(&p->members);
  if (members)
    return invalid(NULL, "cgrt_pool_destroy: %ld graph%s still use%s the pool; destroy them first",
                   members, members == 1 ? "" : "s", members == 1 ? "s" : "");
  release_pool(p);
  return CGRT_OK;
}

size_t cgrt_pool_size(const cgrt_pool *p) { return p ? p->bytes : 0; }
