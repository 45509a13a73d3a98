/* cgrt_upload.c: the scalar upload: which nodes each set and bind
 * updates, which the upload updates on the device, and the upload's
 * parameter for a launch. */
#include "cgrt_internal.h"

/* What bind or a set must update a node for when it has argument a: an
 * extern buffer (its index), a scalar by value (nbuffers + its index), or
 * nothing (UINT32_MAX). */
static uint32_t resource_to_update(const cgrt_graph_desc *d, const cgrt_arg_desc *a) {
  switch (arg_kind(a)) {
  case CGRT_ARG_BUFFER: return is_extern(buffer_kind(&d->buffers[a->index])) ? a->index : UINT32_MAX;
  case CGRT_ARG_SCALAR_VALUE: return d->nbuffers + a->index;
  case CGRT_ARG_SCALAR_PTR:
  case CGRT_ARG_CONST:
  case CGRT_ARG_HANDLE: break;
  }
  return UINT32_MAX;
}

/* Whether node nd already counts resource r (nbuffers + a scalar) among
 * its uses: by value (when by_value), or earlier in its grid program
 * (before word i). */
int cgrt_used_by(const cgrt_graph_desc *d, const cgrt_node_desc *nd, uint32_t r, uint32_t i,
                 int by_value) {
  for (uint32_t a = nd->arg; by_value && a < nd->arg + nd->nargs; a++)
    if (resource_to_update(d, &d->args[a]) == r)
      return 1;
  for (uint32_t j = nd->grid_expr - 1; j + 1 < i; j++) {
    int64_t op = d->grid_code[j];
    if (op == CGRT_GRID_SCALAR && d->nbuffers + (uint32_t)d->grid_code[j + 1] == r)
      return 1;
    j += op == CGRT_GRID_CONST || op == CGRT_GRID_SCALAR;
  }
  return 0;
}

/* Nodes that use each buffer and scalar, for bind and by-value updates,
 * and the nodes whose grid each scalar sets: resource nbuffers + i for
 * those the host updates, nbuffers + nscalars + i for those whose grid
 * the upload sets on the device (dev_grid). */
cgrt_status cgrt_index_uses(cgrt_graph *g) {
  const cgrt_graph_desc *d = g->d;
  uint32_t nres = d->nbuffers + 2 * d->nscalars, total = 0;
  g->use_start = xcalloc(nres + 1, sizeof *g->use_start);
  if (!g->use_start)
    return no_memory(d);
  for (int pass = 0; pass < 2; pass++) {
    uint32_t *fill = NULL;
    if (pass == 1) {
      for (uint32_t r = 0; r < nres; r++)
        g->use_start[r + 1] += g->use_start[r];
      total = g->use_start[nres];
      g->use = xcalloc(total, sizeof *g->use);
      fill = xcalloc(nres, sizeof *fill);
      if (!g->use || !fill) {
        xfree(fill);
        return no_memory(d);
      }
    }
    for (uint32_t n = 0; n < d->nnodes; n++) {
      const cgrt_node_desc *nd = &d->nodes[n];
      uint32_t last = UINT32_MAX;
      for (uint32_t i = nd->arg; i < nd->arg + nd->nargs; i++) {
        uint32_t r = resource_to_update(d, &d->args[i]);
        if (r == UINT32_MAX || r == last || (r >= d->nbuffers && g->dev_node[n]))
          continue; /* the same node twice in a row, or a scalar the upload writes into it */
        last = r;
        if (pass == 0)
          g->use_start[r + 1]++;
        else
          g->use[g->use_start[r] + fill[r]++] = n;
      }
      /* The scalars its grid follows (check_grid_code checked the program). */
      for (uint32_t i = nd->grid_expr ? nd->grid_expr - 1 : d->ngrid_code, ends = 0;
           i < d->ngrid_code && ends < 3; i++) {
        int64_t op = d->grid_code[i];
        ends += op == CGRT_GRID_END;
        if (op != CGRT_GRID_CONST && op != CGRT_GRID_SCALAR)
          continue;
        uint32_t r = d->nbuffers + (uint32_t)d->grid_code[++i];
        if (op == CGRT_GRID_CONST || cgrt_used_by(d, nd, r, i, 1))
          continue; /* a constant, or a scalar this node already has */
        if (g->dev_grid[n])
          r += d->nscalars;
        if (pass == 0)
          g->use_start[r + 1]++;
        else
          g->use[g->use_start[r] + fill[r]++] = n;
      }
    }
    xfree(fill);
  }
  return CGRT_OK;
}

static _Atomic unsigned device_updates;
void cgrt_test_device_updates(unsigned n) {
  atomic_store_explicit(&device_updates, n, memory_order_relaxed);
}

unsigned cgrt_test_updated_params(const cgrt_graph *g) { return g ? g->nupdates : 0; }
unsigned long long cgrt_test_node_updates(const cgrt_graph *g) { return g ? g->node_updates : 0; }
unsigned cgrt_test_device_grids(const cgrt_graph *g) { return g ? g->ngrids : 0; }
unsigned cgrt_test_driver_update(const cgrt_graph *g) {
  unsigned n = 0;
  for (uint32_t k = 0; g && g->drv_update && k < g->d->nkernels; k++)
    n += g->drv_funcs[k] != NULL;
  return n + (g && g->drv_update && g->loader_fn);
}

/* Where in the update table its entries begin, after the per-scalar
 * starts. */
static uint64_t updates_at(const cgrt_graph_desc *d) {
  return ((uint64_t)(d->nscalars + 1) * sizeof(uint32_t) + 7) / 8 * 8;
}

/* Whether node nd takes scalar i by value in an argument before `before`. */
static int takes_value(const cgrt_graph_desc *d, const cgrt_node_desc *nd, uint32_t i,
                       uint32_t before) {
  for (uint32_t a = nd->arg; a < before; a++)
    if (arg_kind(&d->args[a]) == CGRT_ARG_SCALAR_VALUE && d->args[a].index == i)
      return 1;
  return 0;
}

/* Kernel nodes at the top that take a scalar by value and read no extern
 * buffer, each kept only if every scalar it takes by value has at least
 * `least` such takers. */
static void choose_value_nodes(cgrt_graph *g, unsigned least, uint32_t *takers) {
  const cgrt_graph_desc *d = g->d;
  for (uint32_t n = 0; n < d->nnodes; n++) {
    const cgrt_node_desc *nd = &d->nodes[n];
    if (!kind_of(nd)->device_updatable || nd->scope != CGRT_TOP || nd->grid_expr)
      continue;
    int by_value = 0, bound = 0;
    for (uint32_t a = nd->arg; a < nd->arg + nd->nargs; a++) {
      const cgrt_arg_desc *x = &d->args[a];
      by_value |= arg_kind(x) == CGRT_ARG_SCALAR_VALUE;
      bound |= arg_kind(x) == CGRT_ARG_BUFFER && is_extern(buffer_kind(&d->buffers[x->index]));
    }
    if (!by_value || bound)
      continue;
    g->dev_node[n] = 1;
    for (uint32_t a = nd->arg; a < nd->arg + nd->nargs; a++)
      if (arg_kind(&d->args[a]) == CGRT_ARG_SCALAR_VALUE &&
          !takes_value(d, nd, d->args[a].index, a))
        takers[d->args[a].index]++;
  }
  for (uint32_t n = 0; n < d->nnodes; n++) {
    const cgrt_node_desc *nd = &d->nodes[n];
    for (uint32_t a = nd->arg; g->dev_node[n] && a < nd->arg + nd->nargs; a++)
      if (arg_kind(&d->args[a]) == CGRT_ARG_SCALAR_VALUE && takers[d->args[a].index] < least)
        g->dev_node[n] = 0;
  }
}

/* Grids likewise: when at least `least` kernel nodes at the top have a
 * grid that follows scalars (and read no extern buffer and take no
 * scalar by value), the host works out their grids at each launch
 * after a set, as it does for the others, and the upload sets those
 * that changed on the device (cudaGraphKernelNodeSetGridDim, and
 * cudaGraphKernelNodeSetEnabled for an extent of 0): about 1.4 us of
 * host time a node from the host, nothing more than the upload's own
 * update this way.  But only while the graph then has at most
 * DEVICE_NODES_MOST device-updatable nodes: beyond that a launch may
 * cost the host more (bench/device_nodes.cu on an H200, two runs: up to
 * 32 such nodes 1.00x to 1.03x the plain graph's launch, 48 1.00x and
 * 1.43x, 100 1.39x and 1.35x), which a grid that seldom changes would
 * pay at every launch. */
static void choose_grid_nodes(cgrt_graph *g, unsigned least) {
  const cgrt_graph_desc *d = g->d;
  uint32_t grids = 0, updatable = 0;
  for (uint32_t n = 0; n < d->nnodes; n++)
    updatable += g->dev_node[n];
  for (int pass = 0; pass < 2; pass++)
    for (uint32_t n = 0; n < d->nnodes; n++) {
      const cgrt_node_desc *nd = &d->nodes[n];
      if (!kind_of(nd)->device_updatable || nd->scope != CGRT_TOP || !nd->grid_expr)
        continue;
      int other = 0;
      for (uint32_t a = nd->arg; a < nd->arg + nd->nargs; a++) {
        const cgrt_arg_desc *x = &d->args[a];
        other |= arg_kind(x) == CGRT_ARG_SCALAR_VALUE ||
                 (arg_kind(x) == CGRT_ARG_BUFFER && is_extern(buffer_kind(&d->buffers[x->index])));
      }
      if (other)
        continue;
      if (pass == 0)
        grids++;
      else if (grids >= least && updatable + grids <= DEVICE_NODES_MOST)
        g->dev_grid[n] = g->dev_node[n] = 1;
    }
}

/* The device-updatable nodes that the table's loads do not already put
 * after the upload (dev_edges), and the update table's entries: a node's
 * by-value scalars, then the grids. */
static cgrt_status list_updates(cgrt_graph *g, uint8_t *loaded) {
  const cgrt_graph_desc *d = g->d;
  for (uint32_t i = 0; i < d->nloads; i++)
    loaded[d->loads[i]] = 1;
  uint32_t edges = 0;
  for (uint32_t n = 0; n < d->nnodes; n++) {
    const cgrt_node_desc *nd = &d->nodes[n];
    if (!g->dev_node[n])
      continue;
    edges += !loaded[n];
    for (uint32_t a = nd->arg; a < nd->arg + nd->nargs; a++)
      if (arg_kind(&d->args[a]) == CGRT_ARG_SCALAR_VALUE) {
        g->dev_scalar[d->args[a].index] = 1;
        g->nupdates++;
      }
  }
  if (edges && !(g->dev_edges = xcalloc(edges, sizeof *g->dev_edges)))
    return no_memory(d);
  for (uint32_t n = 0; n < d->nnodes; n++)
    if (g->dev_node[n] && !loaded[n])
      g->dev_edges[g->ndev_edges++] = n;
  for (uint32_t n = 0; n < d->nnodes; n++)
    if (g->dev_grid[n])
      g->grid_entry[n] = g->nupdates + g->ngrids++; /* after the parameters' entries */
  if (g->ngrids && (!(g->grid_queue = xcalloc(g->ngrids, sizeof *g->grid_queue)) ||
                    !(g->grid_value = xcalloc(g->ngrids, sizeof *g->grid_value))))
    return no_memory(d);
  if (g->nupdates || g->ngrids)
    g->updates_bytes = updates_at(d) + (uint64_t)(g->nupdates + g->ngrids) *
                                           sizeof(cgrt_value_update);
  return CGRT_OK;
}

/* Which by-value scalars the upload writes into node parameters on the
 * device, and into which nodes.  Updating a kernel node from the host
 * costs about 0.5 us of host time a node at every launch after a set; a
 * device-updatable node is updated by the upload kernel instead, within
 * the launch, for one update of the upload's own parameter whatever the
 * number of nodes, at the price of the upload in front of those nodes
 * (about 1 us of latency).  So a scalar goes this way when at least
 * DEVICE_UPDATES nodes could take it so: kernel nodes at the top of the
 * graph (bodies are left alone) with no grid that follows scalars and no
 * extern buffer (a bind updates such a node from the host, which a
 * device-updatable node allows only with no launch in flight); and a node
 * goes this way when every scalar it takes by value does. */
cgrt_status cgrt_plan_updates(cgrt_graph *g) {
  const cgrt_graph_desc *d = g->d;
  unsigned least = atomic_load_explicit(&device_updates, memory_order_relaxed);
  if (!least)
    least = DEVICE_UPDATES;
  g->dev_node = xcalloc(d->nnodes, 1);
  g->dev_scalar = xcalloc(d->nscalars, 1);
  g->dev_handles = xcalloc(d->nnodes, sizeof *g->dev_handles);
  g->dev_grid = xcalloc(d->nnodes, 1);
  g->grid_entry = xcalloc(d->nnodes, sizeof *g->grid_entry);
  g->grid_dims = xcalloc(3 * (size_t)d->nnodes, sizeof *g->grid_dims);
  g->grid_dirty = xcalloc(d->nscalars, 1);
  uint32_t *takers = xcalloc(d->nscalars, sizeof *takers);
  uint8_t *loaded = xcalloc(d->nnodes, 1);
  if (!g->dev_node || !g->dev_scalar || !g->dev_handles || !g->dev_grid || !g->grid_entry ||
      !g->grid_dims || !g->grid_dirty || !takers || !loaded) {
    xfree(takers);
    xfree(loaded);
    return no_memory(d);
  }
  if (!(g->safe & CGRT_SAFE_DEVICE_UPDATES)) {
    choose_value_nodes(g, least, takers);
    choose_grid_nodes(g, least);
  }
  cgrt_status s = list_updates(g, loaded);
  xfree(takers);
  xfree(loaded);
  return s;
}

/* The update table in device memory, once the device-updatable nodes have
 * their handles: scalar i's entries are [starts[i], starts[i + 1]), each a
 * node and where its parameter is. */
cgrt_status cgrt_write_updates(cgrt_graph *g) {
  const cgrt_graph_desc *d = g->d;
  unsigned char *buf = xcalloc(1, g->updates_bytes);
  uint32_t *fill = xcalloc(d->nscalars, sizeof *fill);
  if (!buf || !fill) {
    xfree(buf);
    xfree(fill);
    return no_memory(d);
  }
  uint32_t *starts = (uint32_t *)(void *)buf;
  cgrt_value_update *u = (cgrt_value_update *)(void *)(buf + updates_at(d));
  cgrt_status s = CGRT_OK;
  for (uint32_t n = 0; n < d->nnodes; n++)
    for (uint32_t a = d->nodes[n].arg; g->dev_node[n] && a < d->nodes[n].arg + d->nodes[n].nargs;
         a++)
      if (arg_kind(&d->args[a]) == CGRT_ARG_SCALAR_VALUE)
        starts[d->args[a].index + 1]++;
  for (uint32_t i = 0; i < d->nscalars; i++)
    starts[i + 1] += starts[i];
  for (uint32_t n = 0; n < d->nnodes && s == CGRT_OK; n++) {
    const cgrt_node_desc *nd = &d->nodes[n];
    for (uint32_t a = nd->arg; g->dev_node[n] && a < nd->arg + nd->nargs; a++) {
      if (arg_kind(&d->args[a]) != CGRT_ARG_SCALAR_VALUE)
        continue;
      size_t offset = 0, size = 0;
      cudaError_t err = CU(cudaFuncGetParamInfo(g->funcs[nd->kernel], a - nd->arg, &offset, &size));
      if (err != cudaSuccess) {
        s = fail_node(d, nd, "cudaFuncGetParamInfo", err);
        break;
      }
      if (size != d->args[a].size) {
        s = invalid(d, "node %s: parameter %u of kernel %s takes %zu bytes, but its "
                       "declaration's takes %u",
                    nd->name, a - nd->arg + 1, d->kernel_names[nd->kernel], size, d->args[a].size);
        break;
      }
      uint32_t i = d->args[a].index;
      cgrt_value_update *e = &u[starts[i] + fill[i]++];
      e->node = (uint64_t)(uintptr_t)g->dev_handles[n];
      e->offset = (unsigned)offset;
      e->size = d->args[a].size;
    }
  }
  for (uint32_t n = 0; n < d->nnodes; n++)
    if (g->dev_grid[n]) /* a grid's entry: its node alone */
      u[g->grid_entry[n]].node = (uint64_t)(uintptr_t)g->dev_handles[n];
  cudaError_t err = cudaSuccess;
  if (s == CGRT_OK &&
      (err = CU(cudaMemcpy(g->updates, buf, g->updates_bytes, cudaMemcpyHostToDevice))) !=
          cudaSuccess)
    s = fail(d, "cudaMemcpy (device updates)", err);
  /* landed before any launch, on whatever stream (as in cgrt_init_memory) */
  if (s == CGRT_OK && (err = CU(cudaStreamSynchronize(0))) != cudaSuccess)
    s = fail(d, "cudaStreamSynchronize (device updates)", err);
  xfree(buf);
  xfree(fill);
  return s;
}

/* The upload kernel's node parameters for the values in g->loads. */
static struct cudaKernelNodeParams loader_params(cgrt_graph *g, void **ptr) {
  cgrt_kernel k = g->load_cap == 8     ? cgrt_load_scalars_8
                  : g->load_cap == 64  ? cgrt_load_scalars_64
                  : g->load_cap == 512 ? cgrt_load_scalars_512
                                       : cgrt_load_scalars_2048;
  *ptr = g->loads;
  struct cudaKernelNodeParams p = {0};
  p.func = (void *)kernel_address(k);
  p.gridDim = (dim3){1, 1, 1};
  /* A thread per node parameter or grid written on the device, up to 256:
   * each write is a call into the device runtime, and they run side by side. */
  uint32_t writes = g->nupdates + g->ngrids;
  unsigned threads = writes <= 32 ? 32 : writes >= 256 ? 256 : (writes + 31) / 32 * 32;
  p.blockDim = (dim3){threads, 1, 1};
  p.kernelParams = ptr;
  return p;
}

/* Puts the upload's parameter, g->loads, into the executable graph. */
static cudaError_t update_loader(cgrt_graph *g) {
  void *ptr;
  struct cudaKernelNodeParams p = loader_params(g, &ptr);
  return cgrt_update_kernel(g, g->loader, &p, g->loader_fn);
}

/* The runtime kernel that copies the scalars set for a launch into their
 * slots, after `deps`; made with nothing to copy. */
cgrt_status cgrt_add_loader(cgrt_graph *g, cudaGraph_t graph, const cudaGraphNode_t *deps,
                            size_t ndeps) {
  cgrt_loads_head h = {(uint64_t)(uintptr_t)(g->dmem + g->slots), 0, g->load_cap, 0, 0};
  if (g->updates) {
    h.starts = (uint64_t)(uintptr_t)g->updates;
    h.updates = (uint64_t)(uintptr_t)(g->updates + updates_at(g->d));
  }
  memcpy(g->loads, &h, sizeof h);
  void *ptr;
  struct cudaKernelNodeParams p = loader_params(g, &ptr);
  cudaError_t err = CU(cudaGraphAddKernelNode(&g->loader, graph, deps, ndeps, &p));
  if (err != cudaSuccess)
    return fail(g->d, "cudaGraphAddKernelNode (scalar upload)", err);
  g->loader_on = 1; /* in the executable graph to be made from this one */
  cudaFunction_t f = NULL;
  if (g->drv_update && cudaGetFuncBySymbol(&f, p.func) != cudaSuccess) {
    (void)cudaGetLastError(); /* not sticky: the runtime's call stays */
    f = NULL;
  }
  g->loader_fn = (CUfunction)f;
  return CGRT_OK;
}

/* Node v made device-updatable, and its handle kept for the upload. */
cgrt_status cgrt_device_updatable(cgrt_graph *g, uint32_t v) {
  cudaLaunchAttributeValue a;
  memset(&a, 0, sizeof a);
  a.deviceUpdatableKernelNode.deviceUpdatable = 1;
  cudaError_t err = CU(cudaGraphKernelNodeSetAttribute(
      g->nodes[v], cudaLaunchAttributeDeviceUpdatableKernelNode, &a));
  if (err == cudaSuccess) {
    memset(&a, 0, sizeof a);
    err = CU(cudaGraphKernelNodeGetAttribute(g->nodes[v],
                                             cudaLaunchAttributeDeviceUpdatableKernelNode, &a));
  }
  if (err != cudaSuccess)
    return fail_node(g->d, &g->d->nodes[v], "cudaGraphKernelNodeSetAttribute (device-updatable)",
                     err);
  g->dev_handles[v] = a.deviceUpdatableKernelNode.devNode;
  return CGRT_OK;
}

/* More scalars set than the upload's parameter holds: once every launch
 * issued has finished, straight into their slots, and the nodes the
 * upload would have updated on the device updated from the host. */
static cgrt_status upload_slow(cgrt_graph *g) {
  const cgrt_graph_desc *d = g->d;
  cudaError_t err;
  cgrt_status ws = cgrt_wait_launches(g, "more scalars set than one upload holds");
  if (ws != CGRT_OK)
    return ws;
  int copied = 0;
  for (uint32_t i = 0; i < d->nscalars; i++)
    if (g->pending[i / 64] >> (i % 64) & 1) {
      if ((err = CU(cudaMemcpy(g->dmem + g->slots + 8 * (uint64_t)i, &g->values[i], 8,
                               cudaMemcpyHostToDevice))) != cudaSuccess)
        return fail(d, "cudaMemcpy (more scalars set than one upload holds)", err);
      copied = 1;
    }
  /* From pageable memory a copy returns before its DMA lands, on the
   * legacy stream, which a launch on a non-blocking stream does not wait
   * for: the launch could read the slots before (gpu.updates, under load). */
  if (copied && (err = CU(cudaStreamSynchronize(0))) != cudaSuccess)
    return fail(d, "cudaStreamSynchronize (more scalars set than one upload holds)", err);
  /* The nodes the upload would have written these into: from the host,
   * with nothing in flight, and the graph uploaded again before the
   * launch (cgrt_launch). */
  for (uint32_t n = 0; n < d->nnodes; n++) {
    const cgrt_node_desc *nd = &d->nodes[n];
    int stale = 0;
    for (uint32_t a = nd->arg; g->dev_node[n] && a < nd->arg + nd->nargs; a++)
      stale |= arg_kind(&d->args[a]) == CGRT_ARG_SCALAR_VALUE &&
               g->pending[d->args[a].index / 64] >> (d->args[a].index % 64) & 1;
    if (stale) {
      int reshaped = 0;
      cgrt_status s = cgrt_update_node(g, n, &reshaped);
      if (s != CGRT_OK)
        return s;
      g->reupload = 1;
    }
  }
  /* And the queued grids, from the host likewise. */
  for (uint32_t q = 0; q < g->nqueue; q++) {
    int reshaped = 0;
    cgrt_status s = cgrt_update_node(g, g->grid_queue[q], &reshaped);
    if (s != CGRT_OK)
      return s;
    g->reupload = 1;
  }
  cgrt_commit_grids(g);
  memset(g->pending, 0, g->words * sizeof *g->pending);
  return CGRT_OK;
}

/* Puts the scalars set since the last launch into the upload's parameter
 * for the launch about to be issued, and enables the upload; with none set
 * it disables the upload, which then costs a launch nothing (*loaded: the
 * marks can go).  More than its room holds go the slow way: once every
 * launch issued has finished, straight into the slots. */
cgrt_status cgrt_upload(cgrt_graph *g, int *loaded) {
  const cgrt_graph_desc *d = g->d;
  uint32_t count = g->nqueue;
  for (uint32_t w = 0; w < g->words; w++)
    count += (uint32_t)__builtin_popcountll(g->pending[w]);
  cudaError_t err;
  if (count > g->load_room) {
    cgrt_status s = upload_slow(g);
    if (s != CGRT_OK)
      return s;
    count = 0; /* in the slots already: nothing is left for the kernel */
  }
  if (count == 0) {
    if (g->loader_on) {
      if ((err = CU(cudaGraphNodeSetEnabled(g->exec, g->loader, 0))) != cudaSuccess)
        return fail(d, "cudaGraphNodeSetEnabled (scalar upload)", err);
      g->loader_on = 0;
    }
    return CGRT_OK;
  }
  cgrt_loads_head h;
  memcpy(&h, g->loads, sizeof h);
  h.count = count;
  memcpy(g->loads, &h, sizeof h);
  uint64_t *value = (uint64_t *)(void *)(g->loads + CGRT_LOADS_HEAD);
  uint32_t *index = (uint32_t *)(void *)(g->loads + CGRT_LOADS_HEAD + 8 * (size_t)g->load_cap);
  uint32_t k = 0;
  for (uint32_t i = 0; i < d->nscalars && k < count; i++)
    if (g->pending[i / 64] >> (i % 64) & 1) {
      value[k] = g->values[i];
      index[k++] = i;
    }
  for (uint32_t q = 0; q < g->nqueue; q++, k++) {
    value[k] = g->grid_value[q];
    index[k] = CGRT_GRID_PAIR | g->grid_entry[g->grid_queue[q]];
  }
  if ((err = update_loader(g)) != cudaSuccess)
    return fail(d, "cudaGraphExecKernelNodeSetParams (scalar upload)", err);
  if (!g->loader_on) {
    if ((err = CU(cudaGraphNodeSetEnabled(g->exec, g->loader, 1))) != cudaSuccess)
      return fail(d, "cudaGraphNodeSetEnabled (scalar upload)", err);
    g->loader_on = 1;
  }
  *loaded = 1;
  return CGRT_OK;
}
