/* cgrt_launch.c: a graph in use: launch, set and get, bind. */
#include "cgrt_internal.h"

/* Gives node n the current bindings and values in the executable graph:
 * a control node's condition kernels, which hold its operands' addresses,
 * a capture node's work captured again (*reshaped: see update_capture),
 * or the node itself. */
cgrt_status cgrt_update_node(cgrt_graph *g, uint32_t n, int *reshaped) {
  NodeParams p;
  if (kind_of(&g->d->nodes[n])->captured)
    return cgrt_update_capture(g, n, reshaped);
  if (!is_control(&g->d->nodes[n])) {
    unsigned grid[3] = {1, 1, 1};
    cgrt_status s;
    if (g->d->nodes[n].grid_expr && (s = cgrt_check_grid(g, n, grid)) != CGRT_OK)
      return s;
    if (grid[0] && grid[1] && grid[2]) { /* a disabled node gets its parameters when enabled */
      cgrt_node_params(g, n, 0, &p);
      if ((s = cgrt_set_params(g, n, &p, g->nodes[n])) != CGRT_OK)
        return s;
    }
    return g->d->nodes[n].grid_expr ? cgrt_enable_grid(g, n, grid) : CGRT_OK;
  }
  for (unsigned step = 0; step < 2; step++)
    if (g->evals[2 * n + step]) {
      cgrt_node_params(g, n, step, &p);
      cgrt_status s = cgrt_set_params(g, n, &p, g->evals[2 * n + step]);
      if (s != CGRT_OK)
        return s;
    }
  return CGRT_OK;
}

/* A stream of another device would launch the graph where its memory is
 * not: refused.  The default streams belong to the current device; any
 * other stream's device is asked once (the last one that passed is kept). */
static cgrt_status check_stream(cgrt_graph *g, cudaStream_t stream) {
  int device = -1;
  cudaError_t err;
  int by_default = stream == 0 || stream == cudaStreamLegacy || stream == cudaStreamPerThread;
  if (!by_default && stream == g->checked_stream)
    return CGRT_OK;
  if (by_default) {
    if ((err = CU(cudaGetDevice(&device))) != cudaSuccess)
      return fail(g->d, "cudaGetDevice", err);
  } else if ((err = CU(cudaStreamGetDevice(stream, &device))) != cudaSuccess) {
    return fail(g->d, "cudaStreamGetDevice", err);
  }
  if (device != g->device)
    return invalid(g->d, by_default ? "launch: the current device is %d, but the graph was made "
                                      "on device %d (make it current or pass a stream of it)"
                                    : "launch: the stream belongs to device %d, but the graph "
                                      "was made on device %d",
                   device, g->device);
  if (!by_default)
    g->checked_stream = stream;
  return CGRT_OK;
}

/* A new pass over the nodes (stamp): each is updated once in it. */
void cgrt_next_pass(cgrt_graph *g) {
  if (++g->epoch == 0) {
    memset(g->stamp, 0, g->d->nnodes * sizeof *g->stamp);
    g->epoch = 1;
  }
}

/* The nodes that take a scalar set since the last launch by value (or
 * whose grid follows one, on the host's way), each updated once however
 * many of its scalars were set: an update takes every current value.
 * Each pass has its own stamp, so a pass that fails leaves the next one to
 * update again. */
static cgrt_status update_values(cgrt_graph *g) {
  const cgrt_graph_desc *d = g->d;
  cgrt_next_pass(g);
  for (uint32_t i = 0; i < d->nscalars; i++) {
    if (!g->value_dirty[i])
      continue;
    uint32_t r = d->nbuffers + i;
    int reshaped = 0; /* no capture node takes a scalar by value */
    for (uint32_t u = g->use_start[r]; u < g->use_start[r + 1]; u++) {
      uint32_t n = g->use[u];
      if (g->stamp[n] == g->epoch)
        continue;
      cgrt_status s = cgrt_update_node(g, n, &reshaped);
      if (s != CGRT_OK)
        return s;
      g->stamp[n] = g->epoch;
      g->node_updates++;
    }
    g->value_dirty[i] = 0;
  }
  g->any_value_dirty = 0;
  return CGRT_OK;
}

/* A launch on another stream than its pool's previous one: the previous
 * launch may be running, so this stream waits for that one's work. */
static cgrt_status wait_pool(cgrt_graph *g, cudaStream_t stream) {
  cgrt_pool *pool = g->pool;
  cudaError_t err;
  if ((err = CU(cudaEventRecord(pool->event, pool->last_stream))) != cudaSuccess)
    return fail(g->d, "cudaEventRecord (the pool's previous stream)", err);
  if ((err = CU(cudaStreamWaitEvent(stream, pool->event, 0))) != cudaSuccess)
    return fail(g->d, "cudaStreamWaitEvent (the pool's previous stream)", err);
  return CGRT_OK;
}

/* The stream in which work is ordered after every launch issued so far,
 * once this thread has waited for what that stream cannot order.  The
 * launches of a graph run in the order they were issued (a launch of an
 * executable graph follows the one before it, whatever its stream; walked
 * launches, CGRT_SAFE_STREAM, only within one stream), so the last
 * launch's end is theirs: its stream, as that launch named it
 * (with none yet, the legacy default stream, where create's writes have
 * landed).  Except the per-thread default stream: cudaStreamPerThread
 * names each thread's own stream, and in another thread than the
 * launch's it would order nothing after it; so the event recorded behind
 * that launch is waited for, then this thread's stream serves. */
cgrt_status cgrt_after_launches(cgrt_graph *g, cudaStream_t *stream, const char *why) {
  *stream = g->last_stream;
  if (g->last_stream != cudaStreamPerThread || !g->done_last)
    return CGRT_OK;
  cudaError_t err = CU(cudaEventSynchronize(g->done));
  if (err != cudaSuccess) {
    char call[128];
    snprintf(call, sizeof call, "cudaEventSynchronize (%s)", why);
    return fail(g->d, call, err);
  }
  return CGRT_OK;
}

/* Waits here until the launches issued so far are done (before any,
 * there is nothing to wait for): the slow way of scalars and a rebuild. */
cgrt_status cgrt_wait_launches(cgrt_graph *g, const char *why) {
  if (!g->launches)
    return CGRT_OK;
  cudaStream_t last;
  cgrt_status s = cgrt_after_launches(g, &last, why);
  if (s != CGRT_OK)
    return s;
  cudaError_t err = CU(cudaStreamSynchronize(last));
  if (err != cudaSuccess) {
    char call[128];
    snprintf(call, sizeof call, "cudaStreamSynchronize (%s)", why);
    return fail(g->d, call, err);
  }
  return CGRT_OK;
}

/* Behind a launch on the per-thread default stream, the event that
 * cgrt_after_launches waits for.  Should recording it fail, the launch is
 * waited for here, in the thread whose stream the handle names, so that
 * nothing later need wait for it. */
static cgrt_status mark_done(cgrt_graph *g, cudaStream_t stream) {
  g->done_last = 0;
  if (stream != cudaStreamPerThread)
    return CGRT_OK;
  cudaError_t err = CU(cudaEventRecord(g->done, stream));
  if (err == cudaSuccess) {
    g->done_last = 1;
    return CGRT_OK;
  }
  cgrt_status s = fail(g->d, "cudaEventRecord (behind a launch on the per-thread default stream; "
                             "the launch was waited for)", err);
  if ((err = CU(cudaStreamSynchronize(stream))) != cudaSuccess)
    s = fail(g->d, "cudaStreamSynchronize (a launch on the per-thread default stream, whose "
                   "event could not be recorded)", err);
  return s;
}

cgrt_status cgrt_launch(cgrt_graph *g, cudaStream_t stream) {
  if (!g)
    return invalid(NULL, "launch: the graph is NULL");
  const cgrt_graph_desc *d = g->d;
  cgrt_status s = check_stream(g, stream);
  if (s != CGRT_OK)
    return s;
  const int walk = (g->safe & CGRT_SAFE_STREAM) != 0; /* no graph: cgrt_walk.c */
  if (!walk && g->any_value_dirty && (s = update_values(g)) != CGRT_OK)
    return s; /* still marked: the next launch tries again */
  if (!walk && g->any_grid_dirty && (s = cgrt_queue_grids(g)) != CGRT_OK)
    return s; /* the scalars stay marked: the next launch works them out again */
  cudaError_t err;
  int loaded = 0;
  if (!walk && g->loads && (s = cgrt_upload(g, &loaded)) != CGRT_OK)
    return s; /* the marks stay for the next launch */
  if (!walk && g->reupload) {
    if ((err = CU(cudaGraphUpload(g->exec, stream))) != cudaSuccess)
      return fail(d, "cudaGraphUpload (device-updatable nodes updated from the host)", err);
    g->reupload = 0;
  }
  cgrt_pool *pool = g->pool;
  if (pool && pool->launched && pool->last_stream != stream &&
      (s = wait_pool(g, stream)) != CGRT_OK)
    return s;
  if (stream == cudaStreamPerThread && !g->done) { /* made once, before anything is issued */
    if ((err = CU(cudaEventCreateWithFlags(&g->done, cudaEventDisableTiming))) != cudaSuccess)
      return fail(d, "cudaEventCreateWithFlags (launches on the per-thread default stream)", err);
    account(1, 0);
  }
  if (walk) {
    s = cgrt_walk(g, stream); /* which may have enqueued part of the work when it fails */
  } else if ((err = CU(cudaGraphLaunch(g->exec, stream))) != cudaSuccess) {
    return fail(d, "cudaGraphLaunch", err); /* the marks stay for the next launch */
  }
  if (pool) {
    pool->launched = 1;
    pool->last_stream = stream;
  }
  g->launches++;
  g->last_stream = stream;
  cgrt_status ms = mark_done(g, stream); /* after a walk that failed part way too */
  if (s == CGRT_OK)
    s = ms;
  if (loaded)
    memset(g->pending, 0, g->words * sizeof *g->pending);
  if (!walk && g->any_grid_dirty)
    cgrt_commit_grids(g);
  return s;
}

/* Whether bits (of scalar sd's integer type) are above its bound. */
static int above_bound(const cgrt_scalar_desc *sd, uint64_t bits) {
  int64_t x = 0, bound = 0;
  if (sd->type == CGRT_U64 || cgrt_grid_value(sd->type, bits, &x) != CGRT_GRID_OK ||
      cgrt_grid_value(sd->type, sd->max, &bound) != CGRT_GRID_OK)
    return bits > sd->max;
  return x > bound;
}

static cgrt_status refuse_above(cgrt_graph *g, uint32_t i, uint64_t bits) {
  const cgrt_scalar_desc *sd = &g->d->scalars[i];
  int64_t x = 0, bound = 0;
  if (sd->type != CGRT_U64 && cgrt_grid_value(sd->type, bits, &x) == CGRT_GRID_OK &&
      cgrt_grid_value(sd->type, sd->max, &bound) == CGRT_GRID_OK)
    return invalid(g->d, "set: scalar '%s' is %lld, above its bound %lld (max); it keeps %s",
                   sd->name, (long long)x, (long long)bound, "its value");
  return invalid(g->d, "set: scalar '%s' is %llu, above its bound %llu (max); it keeps %s",
                 sd->name, (unsigned long long)bits, (unsigned long long)sd->max, "its value");
}

cgrt_status cgrt_set_scalar(cgrt_graph *g, uint32_t i, const void *value) {
  if (!g || !value)
    return invalid(g ? g->d : NULL, "set: NULL argument");
  const cgrt_graph_desc *d = g->d;
  uint64_t bits = 0;
  memcpy(&bits, value, d->scalars[i].size);
  if (d->scalars[i].bounded && above_bound(&d->scalars[i], bits))
    return refuse_above(g, i, bits);
  /* A scalar with no slot lives only in node parameters, which hold (or
   * are marked to get) g->values[i]: setting the same value again changes
   * nothing.  A slot may hold what a kernel wrote, so a set always goes. */
  if (!d->scalars[i].memory && bits == g->values[i])
    return CGRT_OK;
  g->values[i] = bits;
  if (d->scalars[i].memory || g->dev_scalar[i])
    g->pending[i / 64] |= (uint64_t)1 << (i % 64);
  uint32_t r = d->nbuffers + i;
  if (g->use_start[r + 1] > g->use_start[r])
    g->value_dirty[i] = 1, g->any_value_dirty = 1;
  r += d->nscalars; /* the grids set on the device */
  if (g->use_start[r + 1] > g->use_start[r])
    g->grid_dirty[i] = 1, g->any_grid_dirty = 1;
  return CGRT_OK;
}

cgrt_status cgrt_set_launch(cgrt_graph *g, uint8_t *set, const void *const *values,
                            cudaStream_t stream) {
  if (!g || !set || !values)
    return invalid(g ? g->d : NULL, "set_launch: NULL argument");
  for (uint32_t i = 0; i < g->d->nscalars; i++)
    if (set[i]) {
      cgrt_status s = cgrt_set_scalar(g, i, values[i]);
      if (s != CGRT_OK)
        return s;
      set[i] = 0;
    }
  return cgrt_launch(g, stream);
}

cgrt_status cgrt_get_scalar(cgrt_graph *g, uint32_t i, void *value) {
  if (!g || !value)
    return invalid(g ? g->d : NULL, "get: NULL argument");
  const cgrt_graph_desc *d = g->d;
  if (!d->scalars[i].memory) {
    memcpy(value, &g->values[i], d->scalars[i].size);
    return CGRT_OK;
  }
  unsigned char *scratch = g->scratch;
  cudaStream_t stream;
  cgrt_status s = cgrt_after_launches(g, &stream, "get: the last launch");
  if (s != CGRT_OK)
    return s;
  cudaError_t err =
      CU(cudaMemcpyAsync(scratch, g->dmem + g->slots + 8 * (uint64_t)i, d->scalars[i].size,
                         cudaMemcpyDeviceToHost, stream));
  if (err != cudaSuccess)
    return fail(d, "cudaMemcpyAsync", err);
  if ((err = CU(cudaStreamSynchronize(stream))) != cudaSuccess)
    return fail(d, "cudaStreamSynchronize", err);
  memcpy(value, scratch, d->scalars[i].size);
  return CGRT_OK;
}

/* Moves every node that uses buffer b to its new base; `old` is where it
 * was, for putting back the nodes already moved when one fails. */
static cgrt_status move_uses(cgrt_graph *g, uint32_t b, unsigned char *old) {
  cgrt_status s = CGRT_OK;
  int reshaped = 0;
  uint32_t u;
  for (u = g->use_start[b]; u < g->use_start[b + 1]; u++)
    if ((s = cgrt_update_node(g, g->use[u], &reshaped)) != CGRT_OK || reshaped)
      break;
  if (s == CGRT_OK && reshaped)
    s = cgrt_rebuild(g); /* every node at once, from the new bindings */
  if (s == CGRT_OK)
    return CGRT_OK;
  /* Put back the nodes already moved, so the graph stays whole; the
   * failed one too, since a control node's first condition kernel may
   * have moved before its second failed.  The message stays the
   * failure's. */
  char msg[sizeof cgrt_error_text];
  memcpy(msg, cgrt_error_text, sizeof msg);
  g->base[b] = old;
  for (uint32_t v = g->use_start[b]; v <= u && v < g->use_start[b + 1]; v++)
    cgrt_update_node(g, g->use[v], &reshaped);
  memcpy(cgrt_error_text, msg, sizeof msg);
  return s;
}

cgrt_status cgrt_bind(cgrt_graph *g, uint32_t b, void *ptr) {
  if (!g)
    return invalid(NULL, "bind: the graph is NULL");
  const cgrt_graph_desc *d = g->d;
  cgrt_status s = cgrt_check_pointer(d, &d->buffers[b], ptr);
  if (s != CGRT_OK)
    return s;
  /* A capture function enqueues its work on the graph's device. */
  int captures = 0, previous = g->device;
  for (uint32_t u = g->use_start[b]; u < g->use_start[b + 1]; u++)
    captures |= kind_of(&d->nodes[g->use[u]])->captured;
  cudaError_t err;
  if (captures && (err = CU(cudaGetDevice(&previous))) != cudaSuccess)
    return fail(d, "cudaGetDevice", err);
  if (previous != g->device && (err = CU(cudaSetDevice(g->device))) != cudaSuccess)
    return fail(d, "cudaSetDevice", err);
  unsigned char *old = g->base[b];
  g->base[b] = ptr;
  s = move_uses(g, b, old);
  if (previous != g->device)
    cudaSetDevice(previous); /* restoring the caller's device cannot sensibly fail */
  return s;
}

void *cgrt_buffer(cgrt_graph *g, uint32_t b) { return g ? g->base[b] : NULL; }
void *cgrt_user(cgrt_graph *g) { return g ? g->user : NULL; }
