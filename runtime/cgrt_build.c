/* cgrt_build.c: the CUDA graph made from the tables: nodes, conditions and
 * edges added, instantiated and uploaded; and made again. */
#include "cgrt_internal.h"

/* Adds control node v's condition kernel (step 0: before the node; 1: at
 * the end of a while's body) after `deps`.  The edges are full ones: with
 * programmatic edges into it (the kernel waiting for its predecessors on
 * the device) a loop ran 0.2 us an iteration faster on one H200 and failed
 * with cudaErrorLaunchFailure on another of the same driver. */
static cgrt_status add_eval(cgrt_graph *g, uint32_t v, unsigned step, cudaGraph_t graph,
                            const cudaGraphNode_t *deps, size_t ndeps) {
  NodeParams p;
  cgrt_node_params(g, v, step, &p);
  return cgrt_add_params(g, v, &p, &g->evals[2 * v + step], graph, deps, ndeps);
}

/* A control node: its handle in the graph that holds it, the kernel that
 * sets it, then the conditional node with its bodies. */
static cgrt_status add_control(cgrt_graph *g, uint32_t v, enum cudaGraphConditionalNodeType type,
                               cudaGraph_t graph, const cudaGraphNode_t *deps, size_t ndeps) {
  const cgrt_graph_desc *d = g->d;
  const cgrt_node_desc *nd = &d->nodes[v];
  cudaError_t err;
  if ((err = CU(cudaGraphConditionalHandleCreate(&g->handles[v], graph, 0, 0))) != cudaSuccess)
    return fail_node(d, nd, "cudaGraphConditionalHandleCreate", err);
  cgrt_status s = add_eval(g, v, 0, graph, deps, ndeps);
  if (s != CGRT_OK)
    return s;
  struct cudaGraphNodeParams c;
  memset(&c, 0, sizeof c);
  c.type = cudaGraphNodeTypeConditional;
  c.conditional.handle = g->handles[v];
  c.conditional.type = type;
  c.conditional.size = nd->nbodies;
  if ((err = CU(cudaGraphAddNode(&g->nodes[v], graph, &g->evals[2 * v], NULL, 1, &c))) !=
      cudaSuccess)
    return fail_node(d, nd, "cudaGraphAddNode (conditional)", err);
  for (uint32_t b = 0; b < nd->nbodies; b++)
    g->bodies[g->body_base[v] + b] = c.conditional.phGraph_out[b];
  return CGRT_OK;
}

/* A kernel node's priority and cluster, which only adding it sets. */
static cgrt_status set_attributes(cgrt_graph *g, uint32_t v) {
  const cgrt_node_desc *nd = &g->d->nodes[v];
  cudaLaunchAttributeValue a;
  cudaError_t err;
  if (nd->has_priority) {
    memset(&a, 0, sizeof a);
    a.priority = nd->priority;
    if ((err = CU(cudaGraphKernelNodeSetAttribute(g->nodes[v], cudaLaunchAttributePriority, &a))) !=
        cudaSuccess)
      return fail_node(g->d, nd, "cudaGraphKernelNodeSetAttribute", err);
  }
  if (in_clusters(nd)) {
    memset(&a, 0, sizeof a);
    a.clusterDim.x = nd->cluster[0];
    a.clusterDim.y = nd->cluster[1];
    a.clusterDim.z = nd->cluster[2];
    if ((err = CU(cudaGraphKernelNodeSetAttribute(g->nodes[v], cudaLaunchAttributeClusterDimension,
                                                  &a))) != cudaSuccess)
      return fail_node(g->d, nd, "cudaGraphKernelNodeSetAttribute", err);
  }
  return CGRT_OK;
}

/* Adds node v (nnodes: the scalar upload) to `graph` with its dependencies. */
static cgrt_status add_node(cgrt_graph *g, uint32_t v, cudaGraph_t graph,
                            const cudaGraphNode_t *deps, size_t ndeps) {
  if (v == g->d->nnodes)
    return cgrt_add_loader(g, graph, deps, ndeps);
  const NodeKindInfo *kind = kind_of(&g->d->nodes[v]);
  switch (kind->add) {
  case ADD_CONTROL: return add_control(g, v, kind->cond, graph, deps, ndeps);
  case ADD_CAPTURE: return cgrt_add_capture(g, v, graph, deps, ndeps);
  case ADD_PARAMS: break;
  }
  NodeParams p;
  cgrt_node_params(g, v, 0, &p);
  cgrt_status s = cgrt_add_params(g, v, &p, &g->nodes[v], graph, deps, ndeps);
  if (s == CGRT_OK && kind->runs_kernel)
    s = set_attributes(g, v);
  return s == CGRT_OK && g->dev_node[v] ? cgrt_device_updatable(g, v) : s;
}

/* Marks, for each edge, whether it goes in as programmatic.  A pdl kernel
 * built for an architecture below 9.0 cannot contain the wait
 * (griddepcontrol.wait) that a programmatic edge relies on, even when its
 * PTX runs on a newer GPU, and a GPU below 9.0 has no such edges: then the
 * edge stays a full one. */
static cgrt_status programmatic_edges(cgrt_graph *g, uint8_t *prog) {
  const cgrt_graph_desc *d = g->d;
  int major = 0;
  cudaError_t err;
  uint8_t *checked = NULL, *ok = NULL;
  cgrt_status s = CGRT_OK;
  for (uint32_t i = 0; i < d->nedges && s == CGRT_OK; i++) {
    prog[i] = 0;
    if (!d->edges[3 * i + 2] || (g->safe & CGRT_SAFE_PROGRAMMATIC))
      continue;
    if (!checked) {
      checked = xcalloc(d->nkernels, 1);
      ok = xcalloc(d->nkernels, 1);
      if (!checked || !ok) {
        s = no_memory(d);
        break;
      }
      if ((err = CU(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor,
                                           g->device))) != cudaSuccess) {
        s = fail(d, "cudaDeviceGetAttribute", err);
        break;
      }
    }
    const cgrt_node_desc *to = &d->nodes[d->edges[3 * i + 1]];
    uint32_t k = to->kernel;
    if (!checked[k]) {
      struct cudaFuncAttributes attr;
      if ((err = CU(cudaFuncGetAttributes(&attr, g->funcs[k]))) != cudaSuccess) {
        s = fail_node(d, to, "cudaFuncGetAttributes", err);
        break;
      }
      checked[k] = 1;
      ok[k] = major >= 9 && attr.ptxVersion >= 90;
    }
    prog[i] = ok[k];
  }
  xfree(checked);
  xfree(ok);
  return s;
}

/* Edge i of the table (from i < nedges) or an edge from the scalar upload
 * (node nnodes) to a node that reads a scalar slot (the table's loads) or
 * takes a scalar the upload writes into its parameters (g->dev_edges). */
static void edge_ends(const cgrt_graph *g, uint32_t i, uint32_t *from, uint32_t *to) {
  const cgrt_graph_desc *d = g->d;
  *from = i < d->nedges ? d->edges[3 * i] : d->nnodes;
  *to = i < d->nedges                ? d->edges[3 * i + 1]
        : i < d->nedges + d->nloads ? d->loads[i - d->nedges]
                                    : g->dev_edges[i - d->nedges - d->nloads];
}

/* Sets attribute `attr` of kernel k to `value` (node `at` the one that
 * asks): a module's kernel (a cudaKernel_t) for this device, any other
 * through its host stub or address. */
static cgrt_status set_kernel_attribute(cgrt_graph *g, uint32_t k, enum cudaFuncAttribute attr,
                                        int value, uint32_t at) {
  const cgrt_graph_desc *d = g->d;
  cudaError_t err;
  if (kernel_kind(d, k) == CGRT_KERNEL_MODULE) { /* a module's kernel, for this device */
    if ((err = CU(cudaKernelSetAttributeForDevice((cudaKernel_t)g->funcs[k], attr, value,
                                                  g->device))) != cudaSuccess)
      return fail_node(d, &d->nodes[at], "cudaKernelSetAttributeForDevice", err);
  } else if ((err = CU(cudaFuncSetAttribute(g->funcs[k], attr, value))) != cudaSuccess) {
    return fail_node(d, &d->nodes[at], "cudaFuncSetAttribute", err);
  }
  return CGRT_OK;
}

/* A kernel's limit on dynamic shared memory is raised once, to the most
 * any of its nodes asks, where that and the kernel's static shared memory
 * together pass the 48 KiB a launch has without opting in. */
static cgrt_status raise_smem(cgrt_graph *g) {
  const cgrt_graph_desc *d = g->d;
  cudaError_t err;
  for (uint32_t k = 0; k < d->nkernels; k++) {
    uint32_t most = 0, at = 0;
    for (uint32_t n = 0; n < d->nnodes; n++)
      if (kind_of(&d->nodes[n])->runs_kernel && d->nodes[n].kernel == k &&
          d->nodes[n].smem > most)
        most = d->nodes[n].smem, at = n;
    if (!most)
      continue;
    struct cudaFuncAttributes attr;
    if ((err = CU(cudaFuncGetAttributes(&attr, g->funcs[k]))) != cudaSuccess)
      return fail_node(d, &d->nodes[at], "cudaFuncGetAttributes", err);
    if (most + attr.sharedSizeBytes <= BIG_SMEM)
      continue;
    cgrt_status s = set_kernel_attribute(g, k, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         (int)most, at);
    if (s != CGRT_OK)
      return s;
  }
  return CGRT_OK;
}

/* A kernel with a node in clusters of more than the portable 8 blocks
 * (cgc allows up to 16) is opted in to such sizes once, before any node
 * is added or launched: the graph's nodes and the walk's launches
 * (cgrt_walk.c), which CGRT_SAFE_STREAM makes after create has built the
 * graph, both run the kernel so set.  A GPU that allows no more than 8
 * (below compute capability 9.0) refuses here, or where the node is added
 * or instantiated, with CUDA's error. */
static cgrt_status allow_big_clusters(cgrt_graph *g) {
  const cgrt_graph_desc *d = g->d;
  uint8_t *done = NULL;
  cgrt_status s = CGRT_OK;
  for (uint32_t n = 0; n < d->nnodes && s == CGRT_OK; n++) {
    const cgrt_node_desc *nd = &d->nodes[n];
    if (!kind_of(nd)->runs_kernel || cluster_blocks(nd) <= PORTABLE_CLUSTER)
      continue;
    if (!done && !(done = xcalloc(d->nkernels, 1)))
      return no_memory(d);
    if (!done[nd->kernel]) {
      done[nd->kernel] = 1;
      s = set_kernel_attribute(g, nd->kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1,
                               n);
    }
  }
  xfree(done);
  return s;
}

/* What add_nodes works out before it adds anything.  Node d->nnodes is the
 * scalar upload, when there is one: the first of the top graph. */
typedef struct Layout {
  uint32_t n, m;           /* nodes and edges, the upload's included */
  uint32_t *gid;           /* per node: its graph */
  uint32_t *start, *pred;  /* node v's predecessors that go in with it:
                              pred[start[v] .. start[v + 1]) */
  uint32_t *gstart, *glist; /* graph k's nodes in table order, the upload first:
                               glist[gstart[k] .. gstart[k + 1]) */
  uint32_t *lstart, *llist; /* graph k's later edges (backward or programmatic):
                               llist[lstart[k] .. lstart[k + 1]) */
  uint32_t nlate;
  uint32_t *fill; /* scratch for filling those lists */
  uint32_t nfill;
  uint8_t *has_in, *has_out; /* per node: an edge ends at it, starts at it */
  uint8_t *late, *prog;      /* per edge of the table: added later; programmatic */
  cudaGraphNode_t *deps;     /* room for one node's dependencies */
} Layout;

static void free_layout(Layout *l) {
  xfree(l->gid);
  xfree(l->start);
  xfree(l->pred);
  xfree(l->fill);
  xfree(l->gstart);
  xfree(l->glist);
  xfree(l->lstart);
  xfree(l->llist);
  xfree(l->has_in);
  xfree(l->has_out);
  xfree(l->late);
  xfree(l->prog);
  xfree(l->deps);
}

static cgrt_status alloc_layout(cgrt_graph *g, Layout *l) {
  const cgrt_graph_desc *d = g->d;
  uint32_t nl = d->nloads + g->ndev_edges;
  memset(l, 0, sizeof *l);
  l->n = d->nnodes + (nl ? 1 : 0);
  l->m = d->nedges + nl;
  l->nfill = (l->n > g->ngraphs ? l->n : g->ngraphs) + 1;
  l->gid = xcalloc(l->n, sizeof *l->gid);
  l->start = xcalloc(l->n + 1, sizeof *l->start);
  l->pred = xcalloc(l->m, sizeof *l->pred);
  l->fill = xcalloc(l->nfill, sizeof *l->fill);
  l->gstart = xcalloc(g->ngraphs + 1, sizeof *l->gstart);
  l->glist = xcalloc(l->n, sizeof *l->glist);
  l->lstart = xcalloc(g->ngraphs + 1, sizeof *l->lstart);
  l->llist = xcalloc(d->nedges, sizeof *l->llist);
  l->has_in = xcalloc(l->n, 1);
  l->has_out = xcalloc(l->n, 1);
  l->late = xcalloc(d->nedges, 1);
  l->prog = xcalloc(d->nedges, 1);
  l->deps = xcalloc(l->n + 1, sizeof *l->deps);
  if (!l->gid || !l->start || !l->pred || !l->fill || !l->gstart || !l->glist || !l->lstart ||
      !l->llist || !l->has_in || !l->has_out || !l->late || !l->prog || !l->deps)
    return no_memory(d);
  return CGRT_OK;
}

/* Each node's graph and the predecessors that go in with it; the later
 * edges of each graph. */
static void list_edges(cgrt_graph *g, Layout *l) {
  const cgrt_graph_desc *d = g->d;
  for (uint32_t v = 0; v < d->nnodes; v++)
    l->gid[v] = d->nodes[v].scope == CGRT_TOP
                    ? 0
                    : g->body_base[d->nodes[v].scope] + d->nodes[v].branch;
  for (uint32_t i = 0; i < l->m; i++) {
    uint32_t a, b;
    edge_ends(g, i, &a, &b);
    l->has_out[a] = l->has_in[b] = 1;
    if (i < d->nedges && (l->prog[i] || a > b)) {
      l->late[i] = 1;
      l->lstart[l->gid[a] + 1]++;
      l->nlate++;
    } else {
      l->start[b + 1]++;
    }
  }
  for (uint32_t v = 0; v < l->n; v++)
    l->start[v + 1] += l->start[v];
  for (uint32_t k = 0; k < g->ngraphs; k++)
    l->lstart[k + 1] += l->lstart[k];
  memset(l->fill, 0, l->nfill * sizeof *l->fill);
  for (uint32_t i = 0; i < l->m; i++) {
    uint32_t a, b;
    edge_ends(g, i, &a, &b);
    if (i >= d->nedges || !l->late[i])
      l->pred[l->start[b] + l->fill[b]++] = a;
  }
  memset(l->fill, 0, l->nfill * sizeof *l->fill);
  for (uint32_t i = 0; i < d->nedges; i++)
    if (l->late[i]) {
      uint32_t k = l->gid[d->edges[3 * i]];
      l->llist[l->lstart[k] + l->fill[k]++] = i;
    }
}

/* The nodes of each graph in table order, the scalar upload first. */
static void list_nodes(cgrt_graph *g, Layout *l) {
  const cgrt_graph_desc *d = g->d;
  for (uint32_t v = 0; v < l->n; v++)
    l->gstart[l->gid[v] + 1]++;
  for (uint32_t k = 0; k < g->ngraphs; k++)
    l->gstart[k + 1] += l->gstart[k];
  memset(l->fill, 0, l->nfill * sizeof *l->fill);
  if (l->n > d->nnodes)
    l->glist[l->fill[0]++] = d->nnodes;
  for (uint32_t v = 0; v < d->nnodes; v++)
    l->glist[l->gstart[l->gid[v]] + l->fill[l->gid[v]]++] = v;
}

/* The empty kernel in front of a graph's entry nodes. */
static cgrt_status add_entry(cgrt_graph *g, cudaGraph_t graph, cudaGraphNode_t *entry) {
  struct cudaKernelNodeParams p = {0};
  p.func = (void *)kernel_address(cgrt_entry);
  p.gridDim = (dim3){1, 1, 1};
  p.blockDim = (dim3){1, 1, 1};
  cudaError_t err = CU(cudaGraphAddKernelNode(entry, graph, NULL, 0, &p));
  return err == cudaSuccess ? CGRT_OK : fail(g->d, "cudaGraphAddKernelNode (entry)", err);
}

/* Graph k's nodes, each after its predecessors that go in with it (and
 * the entry kernel, if any); a while's body then ends in its condition. */
static cgrt_status add_graph(cgrt_graph *g, const Layout *l, uint32_t k) {
  const cgrt_graph_desc *d = g->d;
  cudaGraph_t graph = g->bodies[k];
  cgrt_status s = CGRT_OK;
  uint32_t roots = 0;
  for (uint32_t i = l->gstart[k]; i < l->gstart[k + 1]; i++)
    roots += !l->has_in[l->glist[i]];
  cudaGraphNode_t entry = NULL;
  if (roots >= ENTRY_ROOTS && (s = add_entry(g, graph, &entry)) != CGRT_OK)
    return s;
  for (uint32_t i = l->gstart[k]; i < l->gstart[k + 1] && s == CGRT_OK; i++) {
    uint32_t v = l->glist[i];
    size_t nd = 0;
    for (uint32_t j = l->start[v]; j < l->start[v + 1]; j++)
      l->deps[nd++] = l->pred[j] == d->nnodes ? g->loader : g->nodes[l->pred[j]];
    if (!l->has_in[v] && entry)
      l->deps[nd++] = entry;
    s = add_node(g, v, graph, l->deps, nd);
  }
  if (s != CGRT_OK || k == 0)
    return s;
  /* A while's body: the condition again, after the body's last nodes;
   * unless a kernel of the body takes the while's handle and sets it. */
  uint32_t owner = g->owner[k];
  if (!kind_of(&d->nodes[owner])->repeats || d->nodes[owner].body_sets_handle)
    return CGRT_OK;
  size_t nd = 0;
  for (uint32_t i = l->gstart[k]; i < l->gstart[k + 1]; i++)
    if (!l->has_out[l->glist[i]])
      l->deps[nd++] = g->nodes[l->glist[i]];
  return add_eval(g, owner, 1, graph, l->deps, nd);
}

/* The later edges, a call per graph that has some; a programmatic one
 * with the edge data that makes it so. */
static cgrt_status add_late_edges(cgrt_graph *g, const Layout *l) {
  const cgrt_graph_desc *d = g->d;
  cudaGraphNode_t *from = xcalloc(l->nlate, sizeof *from);
  cudaGraphNode_t *to = xcalloc(l->nlate, sizeof *to);
  cudaGraphEdgeData *data = xcalloc(l->nlate, sizeof *data);
  cgrt_status s = CGRT_OK;
  if (!from || !to || !data)
    s = no_memory(d);
  for (uint32_t k = 0; k < g->ngraphs && s == CGRT_OK; k++) {
    size_t c = 0;
    int backward = 0;
    for (uint32_t j = l->lstart[k]; j < l->lstart[k + 1]; j++, c++) {
      uint32_t i = l->llist[j];
      from[c] = g->nodes[d->edges[3 * i]];
      to[c] = g->nodes[d->edges[3 * i + 1]];
      if (l->prog[i]) {
        data[c].from_port = cudaGraphKernelNodePortProgrammatic;
        data[c].type = cudaGraphDependencyTypeProgrammatic;
        g->nprogrammatic++;
      } else {
        backward = 1;
      }
    }
    cudaError_t err;
    if (c && (err = CU(cudaGraphAddDependencies(g->bodies[k], from, to, data, c))) != cudaSuccess)
      s = fail(d, backward ? "cudaGraphAddDependencies" : "cudaGraphAddDependencies (programmatic)",
               err);
  }
  xfree(from);
  xfree(to);
  xfree(data);
  return s;
}

unsigned cgrt_test_programmatic_edges(const cgrt_graph *g) { return g ? g->nprogrammatic : 0; }

/* Adds the nodes of each graph (the top, then every body) in the order of
 * the node table, each with its predecessors as dependencies, as a
 * hand-written graph does (adding every edge in one call afterwards
 * replayed no faster and created 10,000 nodes about 10% slower on the
 * H200: BENCHMARKS.md).  cgc writes the table in the order the nodes are
 * written, and data flow only ever adds an edge from an earlier node to a
 * later one; a written edge may still go backward (`b -> a` with a
 * written first), and such an edge, like a programmatic one, is added
 * once every node of its graph exists.  A control node comes before its
 * bodies' nodes, so a body's graph exists (its control node was added)
 * before its turn comes; edges never leave a body.  A graph with several
 * entry nodes gets one empty kernel in front of them: a launch of 100
 * independent nodes then takes about 30 us instead of 110, and the decode
 * step's two entries cost 5 us a step more than one; an empty graph node
 * does not do it, instantiation drops it.  A while's body ends in the
 * kernel that evaluates its condition again, after every node of the
 * body. */
static cgrt_status add_nodes(cgrt_graph *g) {
  Layout l = {0}; /* freed whole even when raise_smem fails */
  cgrt_status s;
  if ((s = raise_smem(g)) == CGRT_OK && (s = allow_big_clusters(g)) == CGRT_OK &&
      (s = alloc_layout(g, &l)) == CGRT_OK &&
      (s = programmatic_edges(g, l.prog)) == CGRT_OK) {
    list_edges(g, &l);
    list_nodes(g, &l);
    for (uint32_t k = 0; k < g->ngraphs && s == CGRT_OK; k++)
      s = add_graph(g, &l, k);
    if (s == CGRT_OK && l.nlate)
      s = add_late_edges(g, &l);
  }
  free_layout(&l);
  return s;
}

/* Numbers the graphs: the top is 0, then each control node's bodies in
 * node order. */
cgrt_status cgrt_number_graphs(cgrt_graph *g) {
  const cgrt_graph_desc *d = g->d;
  uint32_t next = 1, controls = 0;
  for (uint32_t v = 0; v < d->nnodes; v++)
    if (is_control(&d->nodes[v])) {
      controls++;
      g->body_base[v] = next;
      next += d->nodes[v].nbodies;
    }
  g->ngraphs = next;
  g->bodies = xcalloc(next, sizeof *g->bodies);
  g->owner = xcalloc(next, sizeof *g->owner);
  g->evals = xcalloc(2 * (size_t)(controls ? d->nnodes : 0), sizeof *g->evals);
  g->handles = xcalloc(controls ? d->nnodes : 0, sizeof *g->handles);
  if (!g->bodies || !g->owner || !g->evals || !g->handles)
    return no_memory(d);
  for (uint32_t v = 0; v < d->nnodes; v++)
    if (is_control(&d->nodes[v]))
      for (uint32_t b = 0; b < d->nodes[v].nbodies; b++)
        g->owner[g->body_base[v] + b] = v;
  return CGRT_OK;
}

/* The graph from the tables, with the current bindings and values (every
 * capture function runs), instantiated and, when create was asked to,
 * uploaded in `stream`. */
cgrt_status cgrt_make_graph(cgrt_graph *g, cudaStream_t stream) {
  const cgrt_graph_desc *d = g->d;
  cudaError_t err;
  cgrt_status s;
  if ((err = CU(cudaGraphCreate(&g->graph, 0))) != cudaSuccess)
    return fail(d, "cudaGraphCreate", err);
  account(1, 0);
  g->bodies[0] = g->graph;
  if (g->nupdates || g->ngrids) { /* the table's address goes into the upload's parameter */
    void *p = NULL;
    if ((err = CU(cudaMalloc(&p, g->updates_bytes))) != cudaSuccess)
      return fail(d, "cudaMalloc (device updates)", err);
    g->updates = p;
    account(1, g->updates_bytes);
  }
  if ((s = add_nodes(g)) != CGRT_OK ||
      ((g->nupdates || g->ngrids) && (s = cgrt_write_updates(g)) != CGRT_OK))
    return s;
  int priorities = 0;
  for (uint32_t n = 0; n < d->nnodes; n++)
    priorities |= d->nodes[n].has_priority;
  err = CU(cudaGraphInstantiate(&g->exec, g->graph,
                                priorities ? cudaGraphInstantiateFlagUseNodePriority : 0));
  if (err != cudaSuccess)
    return fail(d, "cudaGraphInstantiate", err);
  account(1, 0);
  if (d->ngrid_code && (s = cgrt_apply_grids(g)) != CGRT_OK)
    return s;
  for (uint32_t n = 0; n < d->nnodes; n++) /* what the new graph's nodes hold */
    if (g->dev_grid[n])
      cgrt_node_grid(g, n, &g->grid_dims[3 * n]);
  /* A graph whose nodes update others on the device must be uploaded
   * before its first launch. */
  if (g->upload || g->nupdates || g->ngrids) {
    if ((err = CU(cudaGraphUpload(g->exec, stream))) != cudaSuccess)
      return fail(d, "cudaGraphUpload", err);
    if ((err = CU(cudaStreamSynchronize(stream))) != cudaSuccess)
      return fail(d, "cudaStreamSynchronize", err);
  }
  return CGRT_OK;
}

/* The graph built again from the tables with the current bindings, put
 * in place of the one there, which stays whole if this fails: after a
 * bind gave a capture node's work another shape.  Every capture function
 * runs again and the graph is instantiated (and uploaded) anew, as at
 * create.  It first waits for the launches issued so far: launches of
 * one executable graph run in the order issued whatever their streams,
 * but the new one's first launch, on another stream than the last, would
 * not follow the old one's, and both use the same memory. */
cgrt_status cgrt_rebuild(cgrt_graph *g) {
  const cgrt_graph_desc *d = g->d;
  cgrt_status ws = cgrt_wait_launches(g, "a rebuild: the launches issued before it");
  if (ws != CGRT_OK)
    return ws;
  size_t controls = 0;
  for (uint32_t v = 0; v < d->nnodes; v++)
    controls += is_control(&d->nodes[v]);
  size_t per_node = controls ? d->nnodes : 0;
  cudaGraph_t graph = g->graph, *bodies = g->bodies;
  cudaGraphExec_t exec = g->exec;
  cudaGraphNode_t *nodes = g->nodes, *evals = g->evals, loader = g->loader;
  int loader_on = g->loader_on;
  /* Counted anew for the new graph (add_late_edges), the old count kept
   * for the old graph if this fails. */
  uint32_t nprogrammatic = g->nprogrammatic;
  g->nprogrammatic = 0;
  cudaGraphConditionalHandle *handles = g->handles;
  uint64_t *shapes = g->shapes;
  unsigned char *updates = g->updates; /* the old graph's nodes' handles */
  cgrt_loads_head head;
  if (g->loads)
    memcpy(&head, g->loads, sizeof head);
  uint8_t *grid_off = xcalloc(d->nnodes, 1); /* the old exec's, for a failure */
  uint32_t *grid_dims = xcalloc(3 * (size_t)d->nnodes, sizeof *grid_dims);
  if (grid_off)
    memcpy(grid_off, g->grid_off, d->nnodes);
  if (grid_dims)
    memcpy(grid_dims, g->grid_dims, 3 * (size_t)d->nnodes * sizeof *grid_dims);
  g->graph = NULL;
  g->exec = NULL;
  g->loader = NULL;
  g->updates = NULL;
  g->nodes = xcalloc(d->nnodes, sizeof *g->nodes);
  g->evals = xcalloc(2 * per_node, sizeof *g->evals);
  g->bodies = xcalloc(g->ngraphs, sizeof *g->bodies);
  g->handles = xcalloc(per_node, sizeof *g->handles);
  g->shapes = xcalloc(d->nnodes, sizeof *g->shapes);
  cgrt_status s = !g->nodes || !g->evals || !g->bodies || !g->handles || !g->shapes ||
                          !grid_off || !grid_dims
                      ? no_memory(d)
                      : cgrt_make_graph(g, g->capture_stream);
  int ok = s == CGRT_OK;
  /* Drop the graph that lost: the old one, or the new one and whatever
   * of it was made. */
  cudaGraphExec_t drop_exec = ok ? exec : g->exec;
  cudaGraph_t drop = ok ? graph : g->graph;
  if (drop_exec && cudaGraphExecDestroy(drop_exec) == cudaSuccess)
    account(-1, 0);
  cgrt_drop_graph(drop);
  unsigned char *drop_updates = ok ? updates : g->updates;
  if (drop_updates && cudaFree(drop_updates) == cudaSuccess) /* waits for launches in flight */
    account(-1, g->updates_bytes);
  if (ok) {
    g->reupload = 0;
    xfree(nodes);
    xfree(evals);
    xfree(bodies);
    xfree(handles);
    xfree(shapes);
    xfree(grid_off);
    xfree(grid_dims);
    return CGRT_OK;
  }
  if (grid_off)
    memcpy(g->grid_off, grid_off, d->nnodes);
  if (grid_dims)
    memcpy(g->grid_dims, grid_dims, 3 * (size_t)d->nnodes * sizeof *grid_dims);
  xfree(grid_off);
  xfree(grid_dims);
  xfree(g->nodes);
  xfree(g->evals);
  xfree(g->bodies);
  xfree(g->handles);
  xfree(g->shapes);
  g->graph = graph;
  g->exec = exec;
  g->nodes = nodes;
  g->evals = evals;
  g->loader = loader;
  g->loader_on = loader_on;
  g->nprogrammatic = nprogrammatic;
  g->bodies = bodies;
  g->handles = handles;
  g->shapes = shapes;
  g->updates = updates;
  if (g->loads)
    memcpy(g->loads, &head, sizeof head);
  return s;
}
