/* cgrt_memory.c: create's memory: extern pointers checked, owned buffers,
 * scalar slots, loop counters and switch tables allocated and written. */
#include "cgrt_internal.h"

cgrt_status cgrt_check_pointer(const cgrt_graph_desc *d, const cgrt_buffer_desc *b, void *p) {
  if (!p)
    return invalid(d, "extern buffer '%s' is NULL", b->name);
  struct cudaPointerAttributes attr;
  cudaError_t err = CU(cudaPointerGetAttributes(&attr, p));
  if (err != cudaSuccess)
    return fail(d, "cudaPointerGetAttributes", err);
  int host = buffer_kind(b) == CGRT_EXTERN_HOST;
  if (host && attr.type != cudaMemoryTypeHost)
    return invalid(d, "extern host buffer '%s' is not pinned host memory "
                      "(use cudaHostAlloc or cudaHostRegister)", b->name);
  if (!host && attr.type != cudaMemoryTypeDevice && attr.type != cudaMemoryTypeManaged)
    return invalid(d, "extern buffer '%s' is not device memory", b->name);
  return CGRT_OK;
}

cgrt_status cgrt_alloc_memory(cgrt_graph *g) {
  const cgrt_graph_desc *d = g->d;
  uint64_t dbytes = 0, hbytes = 0;
  for (uint32_t i = 0; i < d->nbuffers; i++) {
    const cgrt_buffer_desc *b = &d->buffers[i];
    switch (buffer_kind(b)) {
    case CGRT_DEVICE: dbytes = (dbytes + b->bytes + ALIGN - 1) / ALIGN * ALIGN; break;
    case CGRT_HOST: hbytes = (hbytes + b->bytes + ALIGN - 1) / ALIGN * ALIGN; break;
    case CGRT_EXTERN:
    case CGRT_EXTERN_HOST: break;
    }
  }
  if (g->pool) { /* the owned buffers are the pool's; the rest stays here */
    if (dbytes > g->pool->bytes)
      return invalid(d, "its owned buffers need %llu bytes of pool memory, and the pool has %llu",
                     (unsigned long long)dbytes, (unsigned long long)g->pool->bytes);
    dbytes = 0;
  }
  g->slots = dbytes;
  g->extra = dbytes + 8 * (uint64_t)d->nscalars;
  for (uint32_t v = 0; v < d->nnodes; v++) {
    const cgrt_node_desc *nd = &d->nodes[v];
    g->extra_at[v] = g->extra_bytes;
    if (kind_of(nd)->repeats && nd->max_iter) /* a bounded loop's iteration counter */
      g->extra_bytes += 8;
    if (kind_of(nd)->cases) /* the case table: (value, body) pairs */
      g->extra_bytes += 16 * (uint64_t)nd->nbodies;
  }
  if (d->nscalars || g->extra_bytes)
    dbytes = g->extra + g->extra_bytes;
  uint64_t scratch = hbytes; /* get's, and the conditions' in a launch without the graph */
  if (d->nscalars || (g->safe & CGRT_SAFE_STREAM))
    hbytes += 8;
  cudaError_t err;
  if (dbytes) {
    void *p = NULL;
    if ((err = CU(cudaMalloc(&p, dbytes))) != cudaSuccess)
      return fail(d, "cudaMalloc", err);
    g->dmem = p;
    g->dmem_bytes = dbytes;
    account(1, dbytes);
  }
  if (hbytes) {
    void *p = NULL;
    if ((err = CU(cudaHostAlloc(&p, hbytes, cudaHostAllocDefault))) != cudaSuccess)
      return fail(d, "cudaHostAlloc", err);
    g->hmem = p;
    g->scratch = g->hmem + scratch;
    g->hmem_bytes = hbytes;
    account(1, hbytes);
  }
  uint64_t doff = 0, hoff = 0;
  for (uint32_t i = 0; i < d->nbuffers; i++) {
    const cgrt_buffer_desc *b = &d->buffers[i];
    switch (buffer_kind(b)) {
    case CGRT_DEVICE:
      g->base[i] = (g->pool ? g->pool->mem : g->dmem) + doff;
      doff = (doff + b->bytes + ALIGN - 1) / ALIGN * ALIGN;
      break;
    case CGRT_HOST:
      g->base[i] = g->hmem + hoff;
      hoff = (hoff + b->bytes + ALIGN - 1) / ALIGN * ALIGN;
      if (b->zero)
        memset(g->base[i], 0, b->bytes);
      break;
    case CGRT_EXTERN:
    case CGRT_EXTERN_HOST: break;
    }
  }
  return CGRT_OK;
}

static int cmp_case(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* Each switch's table of (value, body) pairs, sorted by value, which its
 * condition kernel searches; loop counters need no first value (the kernel
 * before the loop sets them). */
static cgrt_status write_tables(cgrt_graph *g) {
  const cgrt_graph_desc *d = g->d;
  uint64_t *buf = xcalloc(g->extra_bytes / 8, sizeof *buf);
  if (!buf)
    return no_memory(d);
  for (uint32_t v = 0; v < d->nnodes; v++) {
    const cgrt_node_desc *nd = &d->nodes[v];
    if (!kind_of(nd)->cases)
      continue;
    uint64_t *t = buf + g->extra_at[v] / 8;
    uint32_t k = 0;
    for (uint32_t b = 0; b < nd->nbodies; b++)
      if ((int32_t)b != nd->default_body) {
        t[2 * k] = d->cases[nd->first_case + b];
        t[2 * k++ + 1] = b;
      }
    qsort(t, k, 2 * sizeof *t, cmp_case);
  }
  cudaError_t err = CU(cudaMemcpy(g->dmem + g->extra, buf, g->extra_bytes, cudaMemcpyHostToDevice));
  xfree(buf);
  return err == cudaSuccess ? CGRT_OK : fail(d, "cudaMemcpy", err);
}

/* Zeroes `= 0` buffers and writes the scalars' first values and counter. */
cgrt_status cgrt_init_memory(cgrt_graph *g) {
  const cgrt_graph_desc *d = g->d;
  cudaError_t err;
  int issued = 0; /* work queued on the legacy stream, to wait for */
  for (uint32_t i = 0; i < d->nbuffers; i++)
    if (buffer_kind(&d->buffers[i]) == CGRT_DEVICE && d->buffers[i].zero) {
      if ((err = CU(cudaMemsetAsync(g->base[i], 0, d->buffers[i].bytes, 0))) != cudaSuccess)
        return fail(d, "cudaMemsetAsync", err);
      issued = 1;
    }
  if (d->nscalars) {
    if ((err = CU(cudaMemcpy(g->dmem + g->slots, g->values, d->nscalars * sizeof *g->values,
                             cudaMemcpyHostToDevice))) != cudaSuccess)
      return fail(d, "cudaMemcpy", err);
    issued = 1; /* from pageable memory the copy may still be in flight */
  }
  if (g->extra_bytes) {
    cgrt_status s = write_tables(g);
    if (s != CGRT_OK)
      return s;
    issued = 1;
  }
  if (issued && (err = CU(cudaStreamSynchronize(0))) != cudaSuccess)
    return fail(d, "cudaStreamSynchronize", err);
  return CGRT_OK;
}
