/* cgrt_capture.c: capture nodes and collectives, whose work a stream
 * capture makes into a child graph. */
#include "cgrt_internal.h"

/* Ends a capture that a failure left open (its function failed, or the
 * fault hook stood in for cudaStreamEndCapture) and drops what it held, so
 * that the stream can capture again. */
static void abandon_capture(cudaStream_t stream) {
  enum cudaStreamCaptureStatus status;
  cudaGraph_t left = NULL;
  if (cudaStreamIsCapturing(stream, &status) == cudaSuccess && status != cudaStreamCaptureStatusNone &&
      cudaStreamEndCapture(stream, &left) == cudaSuccess && left)
    cudaGraphDestroy(left);
}

void cgrt_drop_graph(cudaGraph_t graph) {
  if (graph && cudaGraphDestroy(graph) == cudaSuccess)
    account(-1, 0);
}

static const char *collective_name(uint8_t c) {
  static const char *const names[] = {"all_reduce", "all_gather", "reduce_scatter", "broadcast"};
  return c <= CGRT_BROADCAST ? names[c] : "collective";
}

/* Enqueues capture node v's work on `stream` with the current bindings:
 * its function's, or its collective (into a capture, or, in a launch
 * without the graph, to run).  The function starts with no error
 * pending: one that checks cudaGetLastError() after its launches sees only
 * its own. */
cgrt_status cgrt_enqueue_work(cgrt_graph *g, uint32_t v, cudaStream_t stream) {
  const cgrt_graph_desc *d = g->d;
  const cgrt_node_desc *nd = &d->nodes[v];
  cgrt_kernel_args(g, nd); /* its arguments as words in g->params: addresses, constants' bits */
  (void)cudaGetLastError();
  if (kind_of(nd)->captured == CAPTURE_COLLECTIVE) {
    const cgrt_collective_ops *ops = d->collectives;
    int r = ops->enqueue(g->comm, nd->collective, nd->reduce_op, nd->elem_type,
                         (const void *)(uintptr_t)g->params[nd->arg + 1],
                         (void *)(uintptr_t)g->params[nd->arg], nd->send_count, nd->recv_count,
                         nd->root, stream);
    if (r) {
      snprintf(cgrt_error_text, sizeof cgrt_error_text, "%s:%u:%u: node %s: %s %s: %s", d->source,
               nd->line, nd->col, nd->name, ops->name, collective_name(nd->collective),
               ops->error_string(g->comm, r));
      return CGRT_ERROR_COMM;
    }
    return CGRT_OK;
  }
  cudaError_t err = (cudaError_t)d->captures[nd->kernel](stream, g->user, &g->params[nd->arg]);
  if (err != cudaSuccess) {
    char call[300];
    snprintf(call, sizeof call, "capture function %s", d->capture_names[nd->kernel]);
    return fail_node(d, nd, call, err);
  }
  return CGRT_OK;
}

/* Runs capture node v's function with the current bindings on the
 * capturing stream; *child is what it enqueued, as a graph.  The function
 * runs in thread-local capture mode: a call it may not make while its
 * stream is captured (a synchronisation, an allocation) fails in it and
 * leaves the capture invalid, which cudaStreamEndCapture then reports. */
static cgrt_status capture_node(cgrt_graph *g, uint32_t v, cudaGraph_t *child) {
  const cgrt_graph_desc *d = g->d;
  const cgrt_node_desc *nd = &d->nodes[v];
  const int collective = kind_of(nd)->captured == CAPTURE_COLLECTIVE;
  const char *fn = collective ? collective_name(nd->collective) : d->capture_names[nd->kernel];
  char call[300];
  cudaError_t err;
  *child = NULL;
  if (!g->capture_stream) {
    if ((err = CU(cudaStreamCreateWithFlags(&g->capture_stream, cudaStreamNonBlocking))) !=
        cudaSuccess)
      return fail_node(d, nd, "cudaStreamCreateWithFlags (capture)", err);
    account(1, 0);
  }
  if ((err = CU(cudaStreamBeginCapture(g->capture_stream, cudaStreamCaptureModeThreadLocal))) !=
      cudaSuccess)
    return fail_node(d, nd, "cudaStreamBeginCapture", err);
  cgrt_status s = cgrt_enqueue_work(g, v, g->capture_stream);
  if (s != CGRT_OK) {
    abandon_capture(g->capture_stream);
    return s;
  }
  cudaGraph_t captured = NULL;
  if ((err = CU(cudaStreamEndCapture(g->capture_stream, &captured))) != cudaSuccess) {
    abandon_capture(g->capture_stream);
    snprintf(call, sizeof call, "cudaStreamEndCapture (after %s %s)",
             collective ? d->collectives->name : "capture function", fn);
    return fail_node(d, nd, call, err);
  }
  account(1, 0);
  *child = captured;
  return CGRT_OK;
}

/* A captured graph's shape: its nodes' kinds in the order they were made
 * and its edges, hashed.  An executable graph takes another capture of the
 * same shape by an update; another shape needs the graph built again. */
static cgrt_status capture_shape(cgrt_graph *g, uint32_t v, cudaGraph_t child, uint64_t *shape) {
  const cgrt_graph_desc *d = g->d;
  size_t n = 0, m = 0;
  cudaGraphNode_t *nodes = NULL, *ends = NULL;
  cudaGraphEdgeData *data = NULL;
  cgrt_status s = CGRT_OK;
  cudaError_t err;
  uint64_t h = 14695981039346656037u;
#define MIX(x) (h = (h ^ (uint64_t)(x)) * 1099511628211u)
  if ((err = CU(cudaGraphGetNodes(child, NULL, &n))) != cudaSuccess)
    return fail_node(d, &d->nodes[v], "cudaGraphGetNodes", err);
  if ((err = CU(cudaGraphGetEdges(child, NULL, NULL, NULL, &m))) != cudaSuccess)
    return fail_node(d, &d->nodes[v], "cudaGraphGetEdges", err);
  nodes = xcalloc(n, sizeof *nodes);
  ends = xcalloc(2 * m, sizeof *ends);
  data = xcalloc(m, sizeof *data); /* libraries capture programmatic edges too */
  if (!nodes || !ends || !data) {
    s = no_memory(d);
    goto done;
  }
  if (n && (err = CU(cudaGraphGetNodes(child, nodes, &n))) != cudaSuccess) {
    s = fail_node(d, &d->nodes[v], "cudaGraphGetNodes", err);
    goto done;
  }
  if (m && (err = CU(cudaGraphGetEdges(child, ends, ends + m, data, &m))) != cudaSuccess) {
    s = fail_node(d, &d->nodes[v], "cudaGraphGetEdges", err);
    goto done;
  }
  MIX(n);
  for (size_t i = 0; i < n; i++) {
    enum cudaGraphNodeType type;
    if ((err = CU(cudaGraphNodeGetType(nodes[i], &type))) != cudaSuccess) {
      s = fail_node(d, &d->nodes[v], "cudaGraphNodeGetType", err);
      goto done;
    }
    MIX(type);
  }
  MIX(m);
  for (size_t e = 0; e < 2 * m; e++) /* each end by its place among the nodes */
    for (size_t i = 0; i < n; i++)
      if (nodes[i] == ends[e]) {
        MIX(i);
        break;
      }
  for (size_t e = 0; e < m; e++)
    MIX((uint64_t)data[e].type << 16 | (uint64_t)data[e].from_port << 8 | data[e].to_port);
#undef MIX
  *shape = h;
done:
  xfree(nodes);
  xfree(ends);
  xfree(data);
  return s;
}

/* Capture node v, added to `graph` after `deps`: its function's work,
 * captured now, as a child graph node (which holds a copy of it). */
cgrt_status cgrt_add_capture(cgrt_graph *g, uint32_t v, cudaGraph_t graph,
                             const cudaGraphNode_t *deps, size_t ndeps) {
  cudaGraph_t child;
  cgrt_status s = capture_node(g, v, &child);
  if (s != CGRT_OK)
    return s;
  if ((s = capture_shape(g, v, child, &g->shapes[v])) == CGRT_OK) {
    cudaError_t err = CU(cudaGraphAddChildGraphNode(&g->nodes[v], graph, deps, ndeps, child));
    if (err != cudaSuccess)
      s = fail_node(g->d, &g->d->nodes[v], "cudaGraphAddChildGraphNode", err);
  }
  cgrt_drop_graph(child);
  return s;
}

/* Captures capture node v again and gives the executable graph the new
 * work, if it has the shape of what the graph was built with (*reshaped
 * stays 0); otherwise the graph is left as it was and *reshaped is 1. */
cgrt_status cgrt_update_capture(cgrt_graph *g, uint32_t v, int *reshaped) {
  cudaGraph_t child;
  uint64_t shape = 0;
  cgrt_status s = capture_node(g, v, &child);
  if (s != CGRT_OK)
    return s;
  if ((s = capture_shape(g, v, child, &shape)) == CGRT_OK) {
    if (shape != g->shapes[v]) {
      *reshaped = 1;
    } else {
      cudaError_t err = CU(cudaGraphExecChildGraphNodeSetParams(g->exec, g->nodes[v], child));
      if (err != cudaSuccess)
        s = fail_node(g->d, &g->d->nodes[v], "cudaGraphExecChildGraphNodeSetParams", err);
    }
  }
  cgrt_drop_graph(child);
  return s;
}
