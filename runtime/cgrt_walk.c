/* cgrt_walk.c: a launch without the CUDA graph (CGRT_SAFE_STREAM, for
 * compute-sanitizer's tools, which may not follow conditional nodes): the
 * nodes run one at a time on the stream, each graph (the top and every
 * body) in an order that keeps its edges, and the host reads each
 * condition's value back to choose the bodies it runs.  The graph and its
 * executable stay as create made them (bind and rebuild keep them up to
 * date), but are never launched. */
#include "cgrt_internal.h"

/* Each graph's nodes in an order that keeps every edge of the table:
 * walk_order[walk_start[k] .. walk_start[k + 1]) for graph k (the top 0,
 * then the bodies as cgrt_number_graphs numbers them), nodes that are
 * ready taken in table order (Kahn's).  A kernel that sets its while's
 * handle cannot run outside a graph: such a graph is refused. */
cgrt_status cgrt_plan_walk(cgrt_graph *g) {
  const cgrt_graph_desc *d = g->d;
  const uint32_t n = d->nnodes;
  for (uint32_t v = 0; v < n; v++)
    if (d->nodes[v].body_sets_handle)
      return invalid(d,
                     "node %s (%s:%u:%u): a kernel of its body sets its handle, which needs "
                     "the conditional node that CGRT_SAFE_STREAM (CGRT_SANITIZER_SAFE=stream) "
                     "leaves out",
                     d->nodes[v].name, d->source, d->nodes[v].line, d->nodes[v].col);
  uint32_t *in = xcalloc(n, sizeof *in); /* edges into each node not yet taken */
  uint32_t *out_start = xcalloc(n + 1, sizeof *out_start);
  uint32_t *out = xcalloc(d->nedges, sizeof *out); /* each node's successors */
  uint32_t *fill = xcalloc(n > g->ngraphs ? n : g->ngraphs, sizeof *fill);
  uint32_t *queue = xcalloc(n, sizeof *queue);
  uint32_t *gid = xcalloc(n, sizeof *gid);
  g->walk_order = xcalloc(n, sizeof *g->walk_order);
  g->walk_start = xcalloc(g->ngraphs + 1, sizeof *g->walk_start);
  cgrt_status s = CGRT_OK;
  if (!in || !out_start || !out || !fill || !queue || !gid || !g->walk_order || !g->walk_start) {
    s = no_memory(d);
    goto done;
  }
  for (uint32_t i = 0; i < d->nedges; i++) {
    out_start[d->edges[3 * i] + 1]++;
    in[d->edges[3 * i + 1]]++;
  }
  for (uint32_t v = 0; v < n; v++)
    out_start[v + 1] += out_start[v];
  for (uint32_t i = 0; i < d->nedges; i++) {
    uint32_t a = d->edges[3 * i];
    out[out_start[a] + fill[a]++] = d->edges[3 * i + 1];
  }
  for (uint32_t v = 0; v < n; v++) {
    const cgrt_node_desc *nd = &d->nodes[v];
    gid[v] = nd->scope == CGRT_TOP ? 0 : g->body_base[nd->scope] + nd->branch;
    g->walk_start[gid[v] + 1]++;
  }
  for (uint32_t k = 0; k < g->ngraphs; k++)
    g->walk_start[k + 1] += g->walk_start[k];
  memset(fill, 0, g->ngraphs * sizeof *fill);
  uint32_t head = 0, tail = 0;
  for (uint32_t v = 0; v < n; v++)
    if (!in[v])
      queue[tail++] = v;
  while (head < tail) {
    uint32_t v = queue[head++];
    g->walk_order[g->walk_start[gid[v]] + fill[gid[v]]++] = v;
    for (uint32_t j = out_start[v]; j < out_start[v + 1]; j++)
      if (--in[out[j]] == 0)
        queue[tail++] = out[j];
  }
  if (tail < n) { /* a cycle (which instantiation refuses too): name a node after one */
    uint32_t v = 0;
    while (!in[v])
      v++;
    s = invalid(d, "node %s: its description is malformed: its edges make a cycle",
                d->nodes[v].name);
  }
done:
  xfree(in);
  xfree(out_start);
  xfree(out);
  xfree(fill);
  xfree(queue);
  xfree(gid);
  return s;
}

/* Runs node v's parameters p on the stream: a kernel (with its node's
 * cluster and priority), a copy, or a fill.  A kernel's own attributes (a
 * dynamic shared-memory limit above 48 KiB, clusters of more than 8
 * blocks allowed) were set at create, which builds the graph before any
 * walk (add_nodes in cgrt_build.c). */
static cgrt_status run_params(cgrt_graph *g, uint32_t v, NodeParams *p, cudaStream_t stream) {
  const cgrt_node_desc *nd = &g->d->nodes[v];
  cudaError_t err = cudaSuccess;
  const char *call = "";
  cudaLaunchConfig_t c;
  cudaLaunchAttribute attrs[2];
  memset(&c, 0, sizeof c);
  memset(attrs, 0, sizeof attrs);
  c.stream = stream;
  c.attrs = attrs;
  switch (p->type) {
  case KERNEL_PARAMS:
    c.gridDim = p->kernel.gridDim;
    c.blockDim = p->kernel.blockDim;
    c.dynamicSmemBytes = p->kernel.sharedMemBytes;
    if (!p->condition && kind_of(nd)->runs_kernel && in_clusters(nd)) {
      attrs[c.numAttrs].id = cudaLaunchAttributeClusterDimension;
      attrs[c.numAttrs].val.clusterDim.x = nd->cluster[0];
      attrs[c.numAttrs].val.clusterDim.y = nd->cluster[1];
      attrs[c.numAttrs++].val.clusterDim.z = nd->cluster[2];
    }
    if (!p->condition && kind_of(nd)->runs_kernel && nd->has_priority) {
      attrs[c.numAttrs].id = cudaLaunchAttributePriority;
      attrs[c.numAttrs++].val.priority = nd->priority;
    }
    call = p->condition ? "cudaLaunchKernelExC (condition)" : "cudaLaunchKernelExC";
    err = CU(cudaLaunchKernelExC(&c, p->kernel.func, p->kernel.kernelParams));
    break;
  case COPY_PARAMS:
    call = "cudaMemcpyAsync";
    err = CU(cudaMemcpyAsync(p->dst, p->src, p->bytes, cudaMemcpyDefault, stream));
    break;
  case MEMSET_PARAMS: {
    const struct cudaMemsetParams *m = &p->memset_node;
    if (m->elementSize == 1) {
      call = "cudaMemsetAsync";
      err = CU(cudaMemsetAsync(m->dst, (int)m->value, m->width, stream));
      break;
    }
    /* Wider elements, which a stream's memset cannot write: a kernel. */
    void *dst = m->dst;
    unsigned value = m->value, size = m->elementSize;
    unsigned long long count = m->width;
    void *args[] = {&dst, &value, &size, &count};
    unsigned long long blocks = (count + 255) / 256;
    c.gridDim = (dim3){(unsigned)(blocks < 1024 ? blocks : 1024), 1, 1};
    c.blockDim = (dim3){256, 1, 1};
    call = "cudaLaunchKernelExC (fill)";
    err = CU(cudaLaunchKernelExC(&c, kernel_address(cgrt_fill_elems), args));
    break;
  }
  }
  return err == cudaSuccess ? CGRT_OK : fail_node(g->d, nd, call, err);
}

/* Control node v's condition kernel (step 0: before the node; 1: at the
 * end of a while's body), run; its value, read back, in *value. */
static cgrt_status evaluate(cgrt_graph *g, uint32_t v, unsigned step, cudaStream_t stream,
                            unsigned *value) {
  NodeParams p;
  cgrt_node_params(g, v, step, &p); /* the kernel stores the value in g->scratch */
  cgrt_status s = run_params(g, v, &p, stream);
  if (s != CGRT_OK)
    return s;
  cudaError_t err = CU(cudaStreamSynchronize(stream));
  if (err != cudaSuccess)
    return fail_node(g->d, &g->d->nodes[v], "cudaStreamSynchronize (a condition)", err);
  memcpy(value, g->scratch, sizeof *value);
  return CGRT_OK;
}

static cgrt_status walk_graph(cgrt_graph *g, uint32_t k, cudaStream_t stream);

/* Node v on the stream: a kernel (none while its grid has an extent 0), a
 * copy or fill, a capture node's work enqueued afresh, or a control node's
 * condition evaluated and the bodies it chooses walked: a while's body
 * while it holds, an if's first body when it holds and its second (else)
 * when not, a switch's body of the value's case, if any. */
static cgrt_status walk_node(cgrt_graph *g, uint32_t v, cudaStream_t stream) {
  const cgrt_node_desc *nd = &g->d->nodes[v];
  const NodeKindInfo *kind = kind_of(nd);
  cgrt_status s;
  if (kind->captured)
    return cgrt_enqueue_work(g, v, stream);
  if (!is_control(nd)) {
    unsigned grid[3] = {1, 1, 1};
    if (nd->grid_expr && (s = cgrt_check_grid(g, v, grid)) != CGRT_OK)
      return s;
    if (!grid[0] || !grid[1] || !grid[2])
      return CGRT_OK;
    NodeParams p;
    cgrt_node_params(g, v, 0, &p);
    return run_params(g, v, &p, stream);
  }
  unsigned value = 0;
  uint32_t body = g->body_base[v];
  if ((s = evaluate(g, v, 0, stream, &value)) != CGRT_OK)
    return s;
  if (kind->repeats) {
    while (s == CGRT_OK && value)
      if ((s = walk_graph(g, body, stream)) == CGRT_OK)
        s = evaluate(g, v, 1, stream, &value);
    return s;
  }
  if (kind->cases)
    return value < nd->nbodies ? walk_graph(g, body + value, stream) : CGRT_OK;
  if (value)
    return walk_graph(g, body, stream);
  return nd->nbodies > 1 ? walk_graph(g, body + 1, stream) : CGRT_OK;
}

static cgrt_status walk_graph(cgrt_graph *g, uint32_t k, cudaStream_t stream) {
  for (uint32_t i = g->walk_start[k]; i < g->walk_start[k + 1]; i++) {
    cgrt_status s = walk_node(g, g->walk_order[i], stream);
    if (s != CGRT_OK)
      return s;
  }
  return CGRT_OK;
}

/* The launch: the scalars set since the last one copied into their slots
 * (the copy takes the values at the call), then the top graph walked.
 * By-value scalars, bindings and grids come from the host's current
 * values as each node is enqueued, so there is nothing else to update. */
cgrt_status cgrt_walk(cgrt_graph *g, cudaStream_t stream) {
  const cgrt_graph_desc *d = g->d;
  for (uint32_t i = 0; i < d->nscalars; i++) {
    if (!(g->pending[i / 64] >> (i % 64) & 1))
      continue;
    cudaError_t err = CU(cudaMemcpyAsync(g->dmem + g->slots + 8 * (uint64_t)i, &g->values[i], 8,
                                         cudaMemcpyHostToDevice, stream));
    if (err != cudaSuccess)
      return fail(d, "cudaMemcpyAsync (a scalar set)", err);
    g->pending[i / 64] &= ~((uint64_t)1 << (i % 64));
  }
  memset(g->value_dirty, 0, d->nscalars);
  memset(g->grid_dirty, 0, d->nscalars);
  g->any_value_dirty = g->any_grid_dirty = 0;
  return walk_graph(g, 0, stream);
}
