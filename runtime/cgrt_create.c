/* cgrt_create.c: create and destroy. */
#include "cgrt_internal.h"

static _Atomic unsigned upload_room;
void cgrt_test_upload_room(unsigned n) {
  atomic_store_explicit(&upload_room, n, memory_order_relaxed);
}

/* The communicator's rank and size: into the scalars that ask for them,
 * and checked against each collective's sizes and root. */
static cgrt_status join_comm(cgrt_graph *g, void *comm) {
  const cgrt_graph_desc *d = g->d;
  const cgrt_collective_ops *ops = d->collectives;
  if (!comm)
    return invalid(d, "it has collectives or scalars set from the communicator; create needs "
                      "the communicator (an ncclComm_t) in cgrt_options.comm");
  int ranks = 0, rank = 0, r = ops->ranks(comm, &ranks, &rank);
  if (r) {
    snprintf(cgrt_error_text, sizeof cgrt_error_text,
             "%s: graph %s: %s: the communicator's size and rank: %s", d->source, d->name, ops->name,
             ops->error_string(comm, r));
    return CGRT_ERROR_COMM;
  }
  g->comm = comm;
  for (uint32_t i = 0; i < d->nscalars; i++)
    if (d->scalars[i].from_comm != CGRT_FROM_VALUE)
      g->values[i] = (uint64_t)(d->scalars[i].from_comm == CGRT_RANK ? rank : ranks);
  for (uint32_t v = 0; v < d->nnodes; v++) {
    const cgrt_node_desc *nd = &d->nodes[v];
    if (kind_of(nd)->captured != CAPTURE_COLLECTIVE)
      continue;
    const char *what = NULL;
    uint64_t n = (uint64_t)ranks;
    if (nd->collective == CGRT_ALL_GATHER && nd->recv_count != nd->send_count * n)
      what = "all_gather's destination must hold the source's elements times the ranks";
    else if (nd->collective == CGRT_REDUCE_SCATTER && nd->send_count != nd->recv_count * n)
      what = "reduce_scatter's source must hold the destination's elements times the ranks";
    else if (nd->collective == CGRT_BROADCAST && nd->root >= n)
      what = "broadcast's root is not a rank of the communicator";
    if (what)
      return invalid(d, "node %s (%s:%u:%u): %s; the communicator has %d rank%s (source %llu "
                        "elements, destination %llu, root %u)",
                     nd->name, d->source, nd->line, nd->col, what, ranks, ranks == 1 ? "" : "s",
                     (unsigned long long)nd->send_count, (unsigned long long)nd->recv_count,
                     nd->root);
  }
  return CGRT_OK;
}

/* The upload's parameter: room for the scalars in device memory and the
 * grids the upload sets, as pairs. */
static cgrt_status alloc_loads(cgrt_graph *g) {
  const cgrt_graph_desc *d = g->d;
  uint32_t memory = g->ngrids; /* pairs: a scalar's value, or a node's grid */
  for (uint32_t i = 0; i < d->nscalars; i++)
    memory += d->scalars[i].memory || g->dev_scalar[i];
  g->load_cap = memory <= 8 ? 8 : memory <= 64 ? 64 : memory <= 512 ? 512 : LOADS_MOST;
  unsigned room = atomic_load_explicit(&upload_room, memory_order_relaxed);
  g->load_room = room && room < g->load_cap ? room : g->load_cap;
  g->loads = xcalloc(1, CGRT_LOADS_BYTES(g->load_cap));
  return g->loads ? CGRT_OK : no_memory(d);
}

/* The graph's arrays per argument and per node; the scalars' first
 * values. */
static cgrt_status alloc_state(cgrt_graph *g) {
  const cgrt_graph_desc *d = g->d;
  uint32_t nargs = 0;
  for (uint32_t n = 0; n < d->nnodes; n++)
    if (d->nodes[n].arg + d->nodes[n].nargs > nargs)
      nargs = d->nodes[n].arg + d->nodes[n].nargs;
  g->value_dirty = xcalloc(d->nscalars, 1);
  g->params = xcalloc(nargs, sizeof *g->params);
  g->param_ptrs = xcalloc(nargs, sizeof *g->param_ptrs);
  g->nodes = xcalloc(d->nnodes, sizeof *g->nodes);
  g->extra_at = xcalloc(d->nnodes, sizeof *g->extra_at);
  g->body_base = xcalloc(d->nnodes, sizeof *g->body_base);
  g->shapes = xcalloc(d->nnodes, sizeof *g->shapes);
  g->grid_off = xcalloc(d->nnodes, 1);
  g->stamp = xcalloc(d->nnodes, sizeof *g->stamp);
  if (!g->base || !g->values || !g->pending || !g->value_dirty || !g->params || !g->param_ptrs ||
      !g->nodes || !g->extra_at || !g->body_base || !g->shapes || !g->grid_off || !g->stamp)
    return no_memory(d);
  for (uint32_t i = 0; i < nargs; i++)
    g->param_ptrs[i] = &g->params[i];
  for (uint32_t i = 0; i < d->nscalars; i++)
    g->values[i] = d->scalars[i].init;
  return CGRT_OK;
}

/* The extern buffers at the pointers create was given, each checked. */
static cgrt_status bind_externs(cgrt_graph *g, void *const *externs) {
  const cgrt_graph_desc *d = g->d;
  for (uint32_t i = 0, e = 0; i < d->nbuffers; i++) {
    const cgrt_buffer_desc *b = &d->buffers[i];
    if (!is_extern(buffer_kind(b)))
      continue;
    cgrt_status s = cgrt_check_pointer(d, b, externs[e]);
    if (s != CGRT_OK)
      return s;
    g->base[i] = externs[e++];
  }
  return CGRT_OK;
}

/* The features that the environment variable CGRT_SANITIZER_SAFE leaves
 * out: "1" or "all" those of CGRT_SAFE_ALL, else those it names, separated
 * by commas; unset, empty or "0" none.  A word it does not know refuses create, so
 * that a misspelt switch is not silently off. */
static cgrt_status sanitizer_safe(const cgrt_graph_desc *d, unsigned *safe) {
  static const struct {
    const char *word;
    unsigned safe;
  } words[] = {{"1", CGRT_SAFE_ALL},
               {"all", CGRT_SAFE_ALL},
               {"device-updates", CGRT_SAFE_DEVICE_UPDATES},
               {"programmatic", CGRT_SAFE_PROGRAMMATIC},
               {"stream", CGRT_SAFE_STREAM}};
  const char *env = getenv("CGRT_SANITIZER_SAFE");
  *safe = 0;
  if (!env || !*env || !strcmp(env, "0"))
    return CGRT_OK;
  for (const char *p = env;; p++) {
    size_t n = strcspn(p, ","), w = 0;
    while (w < sizeof words / sizeof words[0] &&
           (strlen(words[w].word) != n || strncmp(p, words[w].word, n)))
      w++;
    if (w == sizeof words / sizeof words[0])
      return invalid(d, "CGRT_SANITIZER_SAFE is '%s': it takes 1 (or all), or device-updates, "
                        "programmatic and stream separated by commas",
                     env);
    *safe |= words[w].safe;
    if (!p[n])
      return CGRT_OK;
    p += n;
  }
}

/* What create makes, in order: the plan of updates, host state, device
 * memory, the kernels, then the graph (freed by cgrt_destroy on failure). */
static cgrt_status build(cgrt_graph *g, void *const *externs, const cgrt_options *o) {
  const cgrt_graph_desc *d = g->d;
  g->words = (d->nscalars + 63) / 64;
  g->base = xcalloc(d->nbuffers, sizeof *g->base);
  g->values = xcalloc(d->nscalars, sizeof *g->values);
  g->pending = xcalloc(g->words, sizeof *g->pending);
  cgrt_status s;
  if ((s = cgrt_plan_updates(g)) != CGRT_OK ||
      ((d->nloads || g->nupdates || g->ngrids) && (s = alloc_loads(g)) != CGRT_OK) ||
      (s = alloc_state(g)) != CGRT_OK || (s = cgrt_number_graphs(g)) != CGRT_OK ||
      ((g->safe & CGRT_SAFE_STREAM) && (s = cgrt_plan_walk(g)) != CGRT_OK) ||
      (d->collectives && (s = join_comm(g, o->comm)) != CGRT_OK) ||
      (s = bind_externs(g, externs)) != CGRT_OK || (s = cgrt_alloc_memory(g)) != CGRT_OK ||
      (s = cgrt_init_memory(g)) != CGRT_OK || (s = cgrt_index_uses(g)) != CGRT_OK ||
      (s = cgrt_find_kernels(g)) != CGRT_OK)
    return s;
  g->upload = o->upload;
  return cgrt_make_graph(g, o->stream);
}

cgrt_status cgrt_create(cgrt_graph **out, const cgrt_graph_desc *d, void *const *externs,
                        const cgrt_options *opt) {
  if (!out)
    return invalid(d, "create: the result pointer is NULL");
  *out = NULL;
  if (!d)
    return invalid(NULL, "cgrt_create: the graph description is NULL");
  if (d->abi != CGRT_ABI)
    return invalid(d, "generated for runtime ABI %d, but this runtime is ABI %d", d->abi,
                   CGRT_ABI);
  cgrt_status s = cgrt_check_desc(d);
  if (s != CGRT_OK)
    return s;
  for (uint32_t i = 0; !externs && i < d->nbuffers; i++)
    if (is_extern(buffer_kind(&d->buffers[i])))
      return invalid(d, "buffer %s is extern, and create was given no extern pointers (NULL)",
                     d->buffers[i].name);
  cgrt_options o = CGRT_OPTIONS_INIT;
  if (opt)
    o = *opt;
  unsigned safe = 0;
  if ((s = sanitizer_safe(d, &safe)) != CGRT_OK)
    return s;
  o.safe |= safe;
  int previous = 0;
  cudaError_t err = CU(cudaGetDevice(&previous));
  const char *no_gpu;
  if (err != cudaSuccess && (no_gpu = cgrt_no_gpu()))
    return cgrt_fail(CGRT_ERROR_CUDA, "%s: graph %s: %s", d->source, d->name, no_gpu);
  if (err != cudaSuccess)
    return fail(d, "cudaGetDevice", err);
  if (o.device != CGRT_CURRENT_DEVICE && o.device != previous &&
      (err = CU(cudaSetDevice(o.device))) != cudaSuccess)
    return fail(d, "cudaSetDevice", err);
  cgrt_graph *g = xcalloc(1, sizeof *g);
  if (!g) {
    s = no_memory(d);
  } else {
    g->d = d;
    g->device = o.device == CGRT_CURRENT_DEVICE ? previous : o.device;
    g->user = o.user;
    g->safe = o.safe;
    s = o.pool ? cgrt_join_pool(g, o.pool) : CGRT_OK;
    if (s == CGRT_OK)
      s = build(g, externs, &o);
    if (s != CGRT_OK) {
      cgrt_destroy(g);
      g = NULL;
    }
  }
  if (o.device != CGRT_CURRENT_DEVICE && o.device != previous)
    cudaSetDevice(previous); /* restoring the caller's device cannot sensibly fail */
  *out = g;
  return s;
}

void cgrt_destroy(cgrt_graph *g) {
  if (!g)
    return;
  /* Freeing memory waits for the device, so nothing in flight still uses
   * what is released after it.  These calls bypass the fault hook: a
   * release that failed could not be retried anyway. */
  if (g->dmem && cudaFree(g->dmem) == cudaSuccess)
    account(-1, g->dmem_bytes);
  if (g->updates && cudaFree(g->updates) == cudaSuccess)
    account(-1, g->updates_bytes);
  if (g->hmem && cudaFreeHost(g->hmem) == cudaSuccess)
    account(-1, g->hmem_bytes);
  if (g->exec && cudaGraphExecDestroy(g->exec) == cudaSuccess)
    account(-1, 0);
  if (g->graph && cudaGraphDestroy(g->graph) == cudaSuccess)
    account(-1, 0);
  if (g->capture_stream && cudaStreamDestroy(g->capture_stream) == cudaSuccess)
    account(-1, 0);
  if (g->done && cudaEventDestroy(g->done) == cudaSuccess)
    account(-1, 0);
  /* The modules last: the graphs that ran their kernels are gone. */
  for (uint32_t m = 0; g->libraries && m < g->d->nmodules; m++)
    if (g->libraries[m] && cudaLibraryUnload(g->libraries[m]) == cudaSuccess)
      account(-1, 0);
  xfree(g->libraries);
  xfree((void *)g->funcs);
  xfree(g->drv_funcs);
  xfree(g->shapes);
  xfree(g->grid_off);
  xfree(g->stamp);
  xfree(g->base);
  xfree(g->values);
  xfree(g->pending);
  xfree(g->loads);
  xfree(g->value_dirty);
  xfree(g->params);
  xfree(g->param_ptrs);
  xfree(g->use_start);
  xfree(g->use);
  xfree(g->nodes);
  xfree(g->extra_at);
  xfree(g->body_base);
  xfree(g->bodies);
  xfree(g->owner);
  xfree(g->evals);
  xfree(g->handles);
  xfree(g->dev_node);
  xfree(g->dev_scalar);
  xfree(g->dev_grid);
  xfree(g->grid_entry);
  xfree(g->grid_dims);
  xfree(g->grid_dirty);
  xfree(g->grid_queue);
  xfree(g->grid_value);
  xfree(g->dev_edges);
  xfree(g->dev_handles);
  xfree(g->walk_order);
  xfree(g->walk_start);
  if (g->pool)
    atomic_fetch_sub(&g->pool->members, 1);
  xfree(g);
}
