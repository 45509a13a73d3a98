/* cgrt_params.c: what CUDA is given for a node, built in one place for
 * adding it and for updating it in the executable graph. */
#include "cgrt_internal.h"

/* A buffer argument's or a scalar slot's device address. */
static void *arg_pointer(const cgrt_graph *g, const cgrt_arg_desc *a) {
  if (arg_kind(a) == CGRT_ARG_BUFFER)
    return g->base[a->index] + a->value;
  return g->dmem + g->slots + 8 * (uint64_t)a->index; /* CGRT_ARG_SCALAR_PTR */
}

/* A fill of 8-byte elements with differing halves runs cgrt_fill64. */
static int fill_needs_kernel(const cgrt_node_desc *nd) {
  return nd->elem_size == 8 && (uint32_t)nd->value != (uint32_t)(nd->value >> 32);
}

/* A user kernel's parameters: g->params, one a node argument. */
void **cgrt_kernel_args(cgrt_graph *g, const cgrt_node_desc *nd) {
  for (uint32_t i = nd->arg; i < nd->arg + nd->nargs; i++) {
    const cgrt_arg_desc *a = &g->d->args[i];
    switch (arg_kind(a)) {
    case CGRT_ARG_BUFFER:
    case CGRT_ARG_SCALAR_PTR: {
      void *p = arg_pointer(g, a);
      memcpy(&g->params[i], &p, sizeof p);
      break;
    }
    case CGRT_ARG_SCALAR_VALUE: g->params[i] = g->values[a->index]; break;
    case CGRT_ARG_CONST: g->params[i] = a->value; break;
    case CGRT_ARG_HANDLE: /* created with the while, which comes before its body */
      g->params[i] = (uint64_t)g->handles[a->index];
      break;
    }
  }
  return &g->param_ptrs[nd->arg];
}

/* Where a condition kernel stores its value in a launch without the graph
 * (cgrt_walk.c): the pinned word the host reads; 0 (set the handle) in the
 * graph. */
static uint64_t walk_result(const cgrt_graph *g) {
  return g->safe & CGRT_SAFE_STREAM ? (uint64_t)(uintptr_t)g->scratch : 0;
}

/* The argument of cgrt_cond for control node v (while, if): its operands'
 * addresses from the current bindings. */
static void cond_args(const cgrt_graph *g, uint32_t v, unsigned step, cgrt_cond_args *a) {
  const cgrt_node_desc *nd = &g->d->nodes[v];
  memset(a, 0, sizeof *a);
  for (uint32_t i = 0; i < nd->nargs && i < CGRT_COND_OPERANDS; i++) {
    const cgrt_arg_desc *arg = &g->d->args[nd->arg + i];
    if (arg_kind(arg) == CGRT_ARG_CONST) {
      a->operand[i] = arg->value;
      a->imm |= 1u << i;
    } else {
      a->operand[i] = (uint64_t)(uintptr_t)arg_pointer(g, arg);
    }
  }
  for (uint32_t i = 0; i < nd->ncode && i < CGRT_COND_CODE; i++)
    a->code[i] = g->d->code[nd->code + i];
  a->ncode = nd->ncode;
  a->step = step;
  a->result = walk_result(g);
  if (kind_of(nd)->repeats && nd->max_iter) {
    a->max = nd->max_iter;
    a->counter = (uint64_t)(uintptr_t)(g->dmem + g->extra + g->extra_at[v]);
  }
}

static void runtime_kernel(NodeParams *p, cgrt_kernel k, unsigned grid, unsigned block) {
  p->type = KERNEL_PARAMS;
  p->kernel.func = (void *)kernel_address(k);
  p->kernel.gridDim = (dim3){grid, 1, 1};
  p->kernel.blockDim = (dim3){block, 1, 1};
  p->kernel.kernelParams = p->ptrs;
}

/* Kernel node v's grid as its node holds it: the scalars' grid, with 1
 * where an extent is 0 or refused (apply_grids and check_grid deal with
 * those), or its constant one. */
void cgrt_node_grid(const cgrt_graph *g, uint32_t v, unsigned grid[3]) {
  const cgrt_node_desc *nd = &g->d->nodes[v];
  for (int i = 0; i < 3; i++)
    grid[i] = nd->grid[i];
  if (!nd->grid_expr)
    return;
  int64_t e[3];
  int which;
  int ok = cgrt_eval_grid(g, v, e, &which) == CGRT_GRID_OK;
  grid[0] = ok && e[0] > 0 && e[0] <= INT32_MAX ? (unsigned)e[0] : 1;
  grid[1] = ok && e[1] > 0 && e[1] <= 65535 ? (unsigned)e[1] : 1;
  grid[2] = ok && e[2] > 0 && e[2] <= 65535 ? (unsigned)e[2] : 1;
}

/* Node v's parameters; for a control node, those of its condition kernel
 * before the node (step 0) or at the end of a while's body (step 1). */
void cgrt_node_params(cgrt_graph *g, uint32_t v, unsigned step, NodeParams *p) {
  const cgrt_node_desc *nd = &g->d->nodes[v];
  memset(p, 0, sizeof *p);
  switch (node_kind(nd)) {
  case CGRT_KERNEL_NODE:
    p->type = KERNEL_PARAMS;
    p->kernel.func = (void *)g->funcs[nd->kernel];
    unsigned grid[3];
    cgrt_node_grid(g, v, grid);
    p->kernel.gridDim = (dim3){grid[0], grid[1], grid[2]};
    p->kernel.blockDim = (dim3){nd->block[0], nd->block[1], nd->block[2]};
    p->kernel.sharedMemBytes = nd->smem;
    p->kernel.kernelParams = cgrt_kernel_args(g, nd);
    break;
  case CGRT_COPY_NODE:
    p->type = COPY_PARAMS;
    p->dst = arg_pointer(g, &g->d->args[nd->arg]);
    p->src = arg_pointer(g, &g->d->args[nd->arg + 1]);
    p->bytes = nd->bytes;
    break;
  case CGRT_FILL_NODE: {
    void *dst = arg_pointer(g, &g->d->args[nd->arg]);
    if (fill_needs_kernel(nd)) {
      uint64_t count = nd->bytes / 8, blocks = (count + 255) / 256;
      runtime_kernel(p, cgrt_fill64, (unsigned)(blocks < 1024 ? blocks : 1024), 256);
      p->fill[0] = (uint64_t)(uintptr_t)dst;
      p->fill[1] = nd->value;
      p->fill[2] = count;
      for (int i = 0; i < 3; i++)
        p->ptrs[i] = &p->fill[i];
    } else {
      unsigned size = nd->elem_size == 8 ? 4 : nd->elem_size;
      p->type = MEMSET_PARAMS;
      p->memset_node.dst = dst;
      p->memset_node.value = (unsigned)nd->value;
      p->memset_node.elementSize = size;
      p->memset_node.width = nd->bytes / size;
      p->memset_node.height = 1;
    }
    break;
  }
  case CGRT_WHILE_NODE:
  case CGRT_IF_NODE:
    p->condition = 1;
    cond_args(g, v, step, &p->cond);
    p->ptrs[0] = &g->handles[v];
    if (nd->ncode == 1) { /* one comparison: a kernel of its own for the type and operator */
      runtime_kernel(p, cgrt_cond1_kernel(p->cond.code[0]), 1, 1);
      p->cond1.operand[0] = p->cond.operand[0];
      p->cond1.operand[1] = p->cond.operand[1];
      p->cond1.counter = p->cond.counter;
      p->cond1.max = p->cond.max;
      p->cond1.imm = p->cond.imm;
      p->cond1.step = p->cond.step;
      p->cond1.result = p->cond.result;
      p->cond1.code = p->cond.code[0];
      p->ptrs[1] = &p->cond1;
    } else {
      runtime_kernel(p, cgrt_cond, 1, 1);
      p->ptrs[1] = &p->cond;
    }
    break;
  case CGRT_CAPTURE_NODE:
  case CGRT_COLLECTIVE_NODE: break; /* its work is captured: capture_node */
  case CGRT_SWITCH_NODE:
    runtime_kernel(p, cgrt_switch, 1, 1);
    p->condition = 1;
    p->slot = (uint64_t)(uintptr_t)arg_pointer(g, &g->d->args[nd->arg]);
    p->selector_type = nd->selector_type;
    p->table = (uint64_t)(uintptr_t)(g->dmem + g->extra + g->extra_at[v]);
    p->ncases = nd->nbodies - (nd->default_body >= 0);
    p->fallback = nd->default_body >= 0 ? (unsigned)nd->default_body : nd->nbodies;
    p->result = walk_result(g);
    p->ptrs[0] = &g->handles[v];
    p->ptrs[1] = &p->slot;
    p->ptrs[2] = &p->selector_type;
    p->ptrs[3] = &p->table;
    p->ptrs[4] = &p->ncases;
    p->ptrs[5] = &p->fallback;
    p->ptrs[6] = &p->result;
    break;
  }
}

/* Adds a node with parameters p for node v to `graph` after `deps`. */
cgrt_status cgrt_add_params(cgrt_graph *g, uint32_t v, const NodeParams *p, cudaGraphNode_t *node,
                            cudaGraph_t graph, const cudaGraphNode_t *deps, size_t ndeps) {
  cudaError_t err = cudaSuccess;
  const char *call = "";
  switch (p->type) {
  case KERNEL_PARAMS:
    call = p->condition ? "cudaGraphAddKernelNode (condition)" : "cudaGraphAddKernelNode";
    err = CU(cudaGraphAddKernelNode(node, graph, deps, ndeps, &p->kernel));
    break;
  case COPY_PARAMS:
    call = "cudaGraphAddMemcpyNode1D";
    err = CU(cudaGraphAddMemcpyNode1D(node, graph, deps, ndeps, p->dst, p->src, p->bytes,
                                      cudaMemcpyDefault));
    break;
  case MEMSET_PARAMS:
    call = "cudaGraphAddMemsetNode";
    err = CU(cudaGraphAddMemsetNode(node, graph, deps, ndeps, &p->memset_node));
    break;
  }
  return err == cudaSuccess ? CGRT_OK : fail_node(g->d, &g->d->nodes[v], call, err);
}

/* Gives kernel node `node` parameters p in the executable graph, which run
 * f: one call for the fault hook, the driver's where it was found (see
 * find_driver) and f is known, else or where it fails the runtime's
 * (which then says why). */
cudaError_t cgrt_update_kernel(cgrt_graph *g, cudaGraphNode_t node,
                               const struct cudaKernelNodeParams *p, CUfunction f) {
  if (++cgrt_calls == cgrt_fail_at)
    return cudaErrorMemoryAllocation;
  if (g->drv_update && f) {
    CUDA_KERNEL_NODE_PARAMS_v2 q;
    memset(&q, 0, sizeof q);
    q.func = f;
    q.gridDimX = p->gridDim.x;
    q.gridDimY = p->gridDim.y;
    q.gridDimZ = p->gridDim.z;
    q.blockDimX = p->blockDim.x;
    q.blockDimY = p->blockDim.y;
    q.blockDimZ = p->blockDim.z;
    q.sharedMemBytes = p->sharedMemBytes;
    q.kernelParams = p->kernelParams;
    q.ctx = g->ctx;
    if (g->drv_update((CUgraphExec)g->exec, (CUgraphNode)node, &q) == CUDA_SUCCESS)
      return cudaSuccess;
  }
  return cudaGraphExecKernelNodeSetParams(g->exec, node, p);
}

/* Gives `node`, of node v, parameters p in the executable graph. */
cgrt_status cgrt_set_params(cgrt_graph *g, uint32_t v, const NodeParams *p, cudaGraphNode_t node) {
  cudaError_t err = cudaSuccess;
  const char *call = "";
  switch (p->type) {
  case KERNEL_PARAMS:
    call = p->condition ? "cudaGraphExecKernelNodeSetParams (condition)"
                        : "cudaGraphExecKernelNodeSetParams";
    /* A condition or fill kernel is the runtime's own: no CUfunction. */
    err = cgrt_update_kernel(g, node, &p->kernel,
                        kind_of(&g->d->nodes[v])->runs_kernel
                            ? g->drv_funcs[g->d->nodes[v].kernel]
                            : NULL);
    break;
  case COPY_PARAMS:
    call = "cudaGraphExecMemcpyNodeSetParams1D";
    err = CU(cudaGraphExecMemcpyNodeSetParams1D(g->exec, node, p->dst, p->src, p->bytes,
                                                cudaMemcpyDefault));
    break;
  case MEMSET_PARAMS:
    call = "cudaGraphExecMemsetNodeSetParams";
    err = CU(cudaGraphExecMemsetNodeSetParams(g->exec, node, &p->memset_node));
    break;
  }
  return err == cudaSuccess ? CGRT_OK : fail_node(g->d, &g->d->nodes[v], call, err);
}
