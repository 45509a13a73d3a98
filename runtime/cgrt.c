/* cgrt.c: builds, launches, rebinds and destroys the graphs cgc describes.
 *
 * Launch scalars.  Every scalar that kernels reach through a pointer (or
 * that copy or fill touch) has an 8-byte slot in device memory.  A set only
 * stores the value on the host and marks it.  The graph's first node, a
 * runtime kernel, copies values into the slots; the values travel as its
 * kernel parameter, which the launch itself copies.  A launch that follows
 * a set first updates that parameter in the executable graph (the marked
 * scalars' values and this launch's index), which affects only later
 * launches; the kernel copies them when the device's launch counter equals
 * that index, so later launches with the same parameter copy nothing and
 * values that kernels write stand.  Setting any number of scalars thus
 * costs one update and the launch, whatever the number of nodes that read
 * them, and no launch waits for another.  A scalar passed by value is a kernel argument: setting
 * it updates those nodes' parameters in the executable graph before the
 * next launch (cudaGraphExecKernelNodeSetParams), which affects only later
 * launches.  A grid that follows bounded scalars is updated the same way:
 * the nodes whose grid a scalar sets are among that scalar's uses, and an
 * extent of 0 disables the node (cudaGraphNodeSetEnabled) until it is
 * nonzero again. */
#include "cgrt.h"
#include "cgrt_cond.h"
#include "cgrt_testing.h"

#include <cuda.h> /* the driver's types, for kernel node updates (find_driver) */

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
  LOADS_MOST = 2048, /* scalars set between two launches that the upload's parameter holds */
  ALIGN = 256,      /* alignment of every owned buffer */
  BIG_SMEM = 48 * 1024,
  ENTRY_ROOTS = 2,  /* entry nodes from which a graph gets a single entry kernel */
  DEVICE_UPDATES = 4, /* nodes taking a scalar by value (or with a grid that follows
                         scalars) from which the upload updates them */
  DEVICE_NODES_MOST = 32 /* device-updatable nodes a graph takes for grids (plan_updates) */
};

/* The tables' kinds as types (cgrt_abi.h), so that -Wswitch names every
 * switch that a new kind must join: the switches over them have no default. */
typedef cgrt_node_kind NodeKind;
typedef cgrt_buffer_kind BufferKind;
typedef cgrt_arg_kind ArgKind;
typedef cgrt_kernel_kind KernelKind;
typedef cgrt_module_format ModuleFormat;

static NodeKind node_kind(const cgrt_node_desc *nd) { return (NodeKind)nd->kind; }
static BufferKind buffer_kind(const cgrt_buffer_desc *b) { return (BufferKind)b->kind; }
static ArgKind arg_kind(const cgrt_arg_desc *a) { return (ArgKind)a->kind; }

/* Whether a table's byte names a kind. */
static int is_node_kind(uint8_t kind) {
  switch ((NodeKind)kind) {
  case CGRT_KERNEL_NODE:
  case CGRT_COPY_NODE:
  case CGRT_FILL_NODE:
  case CGRT_WHILE_NODE:
  case CGRT_IF_NODE:
  case CGRT_SWITCH_NODE:
  case CGRT_CAPTURE_NODE:
  case CGRT_COLLECTIVE_NODE: return 1;
  }
  return 0;
}

/* A node whose work a stream capture makes: a capture function's, or
 * NCCL's for a collective. */
static int is_captured(NodeKind kind) {
  return kind == CGRT_CAPTURE_NODE || kind == CGRT_COLLECTIVE_NODE;
}

static int is_buffer_kind(uint8_t kind) {
  switch ((BufferKind)kind) {
  case CGRT_DEVICE:
  case CGRT_EXTERN:
  case CGRT_HOST:
  case CGRT_EXTERN_HOST: return 1;
  }
  return 0;
}

static int is_kernel_kind(uint8_t kind) {
  switch ((KernelKind)kind) {
  case CGRT_KERNEL_LINKED:
  case CGRT_KERNEL_TEMPLATE:
  case CGRT_KERNEL_MODULE: return 1;
  }
  return 0;
}

static int is_module_format(uint8_t format) {
  switch ((ModuleFormat)format) {
  case CGRT_MODULE_PTX:
  case CGRT_MODULE_CUBIN:
  case CGRT_MODULE_FATBIN: return 1;
  }
  return 0;
}

/* Where kernel k comes from: linked in unless the tables say otherwise. */
static KernelKind kernel_kind(const cgrt_graph_desc *d, uint32_t k) {
  return d->kernel_from ? (KernelKind)d->kernel_from[k].kind : CGRT_KERNEL_LINKED;
}

static int is_arg_kind(uint8_t kind) {
  switch ((ArgKind)kind) {
  case CGRT_ARG_BUFFER:
  case CGRT_ARG_SCALAR_PTR:
  case CGRT_ARG_SCALAR_VALUE:
  case CGRT_ARG_CONST:
  case CGRT_ARG_HANDLE: return 1;
  }
  return 0;
}

/* A while, if or switch: a conditional node, its handle and the kernels
 * that evaluate its condition. */
static int is_control(NodeKind kind) {
  switch (kind) {
  case CGRT_KERNEL_NODE:
  case CGRT_COPY_NODE:
  case CGRT_FILL_NODE:
  case CGRT_CAPTURE_NODE:
  case CGRT_COLLECTIVE_NODE: return 0;
  case CGRT_WHILE_NODE:
  case CGRT_IF_NODE:
  case CGRT_SWITCH_NODE: return 1;
  }
  return 0;
}

/* Passed in by the caller, so bound at create and rebound by bind. */
static int is_extern(BufferKind kind) {
  switch (kind) {
  case CGRT_DEVICE:
  case CGRT_HOST: return 0;
  case CGRT_EXTERN:
  case CGRT_EXTERN_HOST: return 1;
  }
  return 0;
}

/* The runtime's kernels (cgrt_kernels.cu); only their addresses are used. */
extern void cgrt_load_scalars_8(void), cgrt_load_scalars_64(void), cgrt_load_scalars_512(void),
    cgrt_load_scalars_2048(void);
extern void cgrt_fill64(void);
extern void cgrt_entry(void);
extern void cgrt_cond(void);
extern void cgrt_switch(void);

struct cgrt_pool {
  int device;
  unsigned char *mem;
  size_t bytes;
  long members;            /* graphs created with it and not yet destroyed */
  int launched;            /* a member has been launched, last on last_stream */
  cudaStream_t last_stream;
  cudaEvent_t event;       /* recorded on last_stream when a launch changes stream */
};

struct cgrt_graph {
  const cgrt_graph_desc *d;
  int device;
  void *user;
  cgrt_pool *pool;        /* where the owned device buffers are, or NULL */
  void *comm;             /* the collectives' communicator (an ncclComm_t), or NULL */
  unsigned char *dmem;    /* owned device buffers, scalar slots, control tables */
  unsigned char *hmem;    /* owned host buffers, then 8 bytes for get */
  unsigned char *scratch; /* 8 bytes of pinned host memory for get */
  uint64_t dmem_bytes, hmem_bytes;
  unsigned char **base;   /* per buffer */
  uint64_t slots;         /* offset of the scalar slots in dmem */
  uint64_t extra;         /* offset of the loop counters and switch tables */
  uint64_t extra_bytes;
  uint64_t *extra_at;     /* per control node: its counter or table, from extra */
  uint64_t *values;       /* per scalar, as bits */
  uint64_t *pending;      /* scalars set since the last launch, a bit each */
  uint32_t words;         /* 64-bit words in that mask */
  uint8_t *value_dirty;   /* per scalar: by-value arguments to update */
  int any_value_dirty;
  uint32_t *stamp;        /* per node: the launch pass that last updated it (epoch) */
  uint32_t epoch;
  uint64_t node_updates;  /* nodes updated for scalars set, counted for a test */
  uint64_t *params;       /* per argument: its value as a kernel parameter */
  void **param_ptrs;      /* per argument: &params[i] */
  uint32_t *use_start, *use; /* per buffer and scalar: the nodes that use it */
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  cudaGraphNode_t *nodes;
  cudaGraphNode_t *evals;  /* per node, two: a control node's condition
                              kernels, before its first iteration and (while)
                              at the end of its body */
  cudaGraphConditionalHandle *handles; /* per node: a control node's handle */
  uint32_t *body_base;     /* per node: a control node's first body graph */
  cudaGraph_t *bodies;     /* per graph: the top, then every body */
  uint32_t *owner;         /* per graph but the top: its control node */
  uint32_t ngraphs;
  cudaGraphNode_t loader;
  unsigned char *loads;    /* the upload's parameter (cgrt_cond.h), CGRT_LOADS_BYTES(cap) */
  uint32_t load_cap;       /* pairs it holds: 8, 64, 512 or LOADS_MOST */
  uint32_t load_room;      /* pairs it takes: load_cap, or fewer for a test */
  int loader_on;           /* the upload node is enabled in the executable graph */
  /* The driver's cuGraphExecKernelNodeSetParams and what it needs, or
   * NULL: the upload's update then goes through the runtime's. */
  CUresult (*drv_update)(CUgraphExec, CUgraphNode, const CUDA_KERNEL_NODE_PARAMS_v2 *);
  CUfunction loader_fn;
  CUcontext ctx;
  CUfunction *drv_funcs;   /* per kernel: what the driver's call runs, or NULL */
  uint64_t launches;
  cudaStream_t last_stream;
  cudaStream_t checked_stream; /* a stream known to be on the graph's device */
  cudaStream_t capture_stream; /* where capture functions run, made at the first */
  uint64_t *shapes;        /* per node: a capture node's captured work, hashed */
  uint8_t *grid_off;       /* per node: disabled in exec, its grid having an extent 0 */
  const void **funcs;      /* per kernel this graph uses: what a kernel node runs (a
                              host stub's address, or a module's cudaKernel_t) */
  cudaLibrary_t *libraries; /* per module this graph uses: loaded once at create */
  int upload;              /* opt.upload at create: a rebuilt graph is uploaded too */
  /* By-value scalars that many nodes take go through the upload, which
   * writes them into those nodes' parameters on the device (plan_updates). */
  uint8_t *dev_node;       /* per node: takes its by-value scalars that way */
  uint8_t *dev_scalar;     /* per scalar: some node takes it that way */
  uint32_t *dev_edges;     /* such nodes that the table's loads do not already
                              put after the upload */
  uint32_t ndev_edges;
  uint32_t nupdates;       /* node parameters written on the device */
  cudaGraphDeviceNode_t *dev_handles; /* per node: its device handle, when dev_node */
  unsigned char *updates;  /* device memory: per scalar its first entry, then the entries */
  uint64_t updates_bytes;
  int reupload;            /* such a node was updated from the host: upload before launching */
  /* Grids that follow scalars, when many kernel nodes at the top have one:
   * the host works out each grid and the upload sets it on the device
   * (plan_updates, queue_grids). */
  uint8_t *dev_grid;       /* per node: its grid is set on the device */
  uint32_t ngrids;         /* such nodes */
  uint32_t *grid_entry;    /* per node: its entry in the update table, when dev_grid */
  uint32_t *grid_dims;     /* per node, three: the grid its node has (its extents
                              with 0 as 1; grid_off says whether it is disabled) */
  uint8_t *grid_dirty;     /* per scalar: set since the last launch, a dev_grid
                              node following it */
  int any_grid_dirty;
  uint32_t *grid_queue;    /* the dev_grid nodes this launch changes ... */
  uint64_t *grid_value;    /* ... and each one's pair (cgrt_cond.h) */
  uint32_t nqueue;
};

/* ---- errors, accounting and the fault hook ---- */

/* Graphs are created, launched and destroyed from many threads at once, so
 * nothing here is a plain shared variable: the message, the call count and
 * the fault hook belong to each thread (a test fails "the k-th call" of
 * the thread that asked), and what the runtime holds is counted in
 * atomics (relaxed: they are counters, ordering nothing). */
static _Thread_local char last_error[1024];
static _Thread_local long calls, fail_at;
static atomic_long live;
static atomic_llong held_bytes;

const char *cgrt_last_error(void) { return last_error; }
void cgrt_test_fail_call(long k) { fail_at = k > 0 ? calls + k : 0; }
long cgrt_test_calls(void) { return calls; }
static _Atomic unsigned upload_room;
void cgrt_test_upload_room(unsigned n) { atomic_store_explicit(&upload_room, n, memory_order_relaxed); }
static _Atomic unsigned device_updates;
void cgrt_test_device_updates(unsigned n) {
  atomic_store_explicit(&device_updates, n, memory_order_relaxed);
}
long cgrt_test_live(void) { return atomic_load_explicit(&live, memory_order_relaxed); }
long long cgrt_test_bytes(void) { return atomic_load_explicit(&held_bytes, memory_order_relaxed); }

/* Every CUDA call goes through this, so the fault hook reaches it. */
#define CU(call) (++calls == fail_at ? cudaErrorMemoryAllocation : (call))

/* A resource taken (+1) or given back (-1), with its bytes of device or
 * pinned host memory. */
static void account(long n, uint64_t bytes) {
  atomic_fetch_add_explicit(&live, n, memory_order_relaxed);
  atomic_fetch_add_explicit(&held_bytes, n * (long long)bytes, memory_order_relaxed);
}

static void *xcalloc(size_t n, size_t size) {
  void *p = calloc(n ? n : 1, size ? size : 1);
  if (p)
    account(1, 0);
  return p;
}

static void xfree(void *p) {
  if (p) {
    account(-1, 0);
    free(p);
  }
}

static cgrt_status fail_node(const cgrt_graph_desc *d, const cgrt_node_desc *n,
                             const char *call, cudaError_t err) {
  if (n)
    snprintf(last_error, sizeof last_error, "%s:%u:%u: node %s: %s: %s (%s)", d->source, n->line,
             n->col, n->name, call, cudaGetErrorString(err), cudaGetErrorName(err));
  else
    snprintf(last_error, sizeof last_error, "%s: graph %s: %s: %s (%s)", d->source, d->name,
             call, cudaGetErrorString(err), cudaGetErrorName(err));
  return CGRT_ERROR_CUDA;
}

static cgrt_status fail(const cgrt_graph_desc *d, const char *call, cudaError_t err) {
  return fail_node(d, NULL, call, err);
}

static cgrt_status invalid(const cgrt_graph_desc *d, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (d)
    snprintf(last_error, sizeof last_error, "%s: graph %s: %s", d->source, d->name, msg);
  else
    snprintf(last_error, sizeof last_error, "%s", msg);
  return CGRT_ERROR_INVALID;
}

cgrt_status cgrt_fail(cgrt_status s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(last_error, sizeof last_error, fmt, ap);
  va_end(ap);
  return s;
}

cgrt_status cgrt_invalid(const cgrt_graph_desc *d, const char *what) {
  return invalid(d, "%s", what);
}

static cgrt_status no_memory(const cgrt_graph_desc *d) {
  snprintf(last_error, sizeof last_error, "%s: graph %s: out of host memory", d->source, d->name);
  return CGRT_ERROR_NO_MEMORY;
}

static cgrt_status fail_pool(const char *call, cudaError_t err) {
  snprintf(last_error, sizeof last_error, "cgrt_pool_create: %s: %s (%s)", call,
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

static const void *kernel_address(cgrt_kernel k) {
  const void *p;
  memcpy(&p, &k, sizeof p);
  return p;
}

/* ---- node parameters ---- */

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

typedef enum ParamsType { KERNEL_PARAMS, COPY_PARAMS, MEMSET_PARAMS } ParamsType;

/* What CUDA is given for a node, or for one of a control node's condition
 * kernels, from the current bindings and scalar values.  node_params is
 * the one place that builds it, for adding the node at create and for
 * updating it in the executable graph (bind, a scalar passed by value).
 * The runtime's own kernels' parameters live inside it, where
 * kernel.kernelParams points: it is filled in place and used before it
 * goes out of scope (CUDA copies the values when it adds or updates). */
typedef struct NodeParams {
  ParamsType type;
  int condition;                       /* a condition kernel: named so in messages */
  struct cudaKernelNodeParams kernel;  /* KERNEL_PARAMS */
  struct cudaMemsetParams memset_node; /* MEMSET_PARAMS */
  void *dst, *src;                     /* COPY_PARAMS */
  size_t bytes;
  cgrt_cond_args cond;   /* cgrt_cond */
  cgrt_cond1_args cond1; /* cgrt_cond1_kernel: a condition of one comparison */
  uint64_t fill[3];     /* cgrt_fill64: dst, value, count */
  uint64_t slot, table; /* cgrt_switch */
  unsigned selector_type, ncases, fallback;
  void *ptrs[6];
} NodeParams;

/* A user kernel's parameters: g->params, one a node argument. */
static void **kernel_args(cgrt_graph *g, const cgrt_node_desc *nd) {
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
  if (node_kind(nd) == CGRT_WHILE_NODE && nd->bytes) {
    a->max = nd->bytes;
    a->counter = (uint64_t)(uintptr_t)(g->dmem + g->extra + g->extra_at[v]);
  }
}

/* ---- grids that follow scalars ---- */

/* Node v's grid from the scalars' current values into ext: CGRT_GRID_OK,
 * or the evaluator's error with the extent (0, 1, 2) in *which. */
static int eval_grid(const cgrt_graph *g, uint32_t v, int64_t ext[3], int *which) {
  const cgrt_graph_desc *d = g->d;
  uint32_t at = d->nodes[v].grid_expr - 1;
  for (int i = 0; i < 3; i++) {
    int err = cgrt_grid_eval(d->grid_code, d->ngrid_code, &at, d->scalars, d->nscalars,
                             g->values, &ext[i]);
    if (err != CGRT_GRID_OK) {
      *which = i;
      return err;
    }
  }
  return CGRT_GRID_OK;
}

static int used_by(const cgrt_graph_desc *d, const cgrt_node_desc *nd, uint32_t r, uint32_t i,
                   int by_value);

/* "n = 5000, m = 3": the scalars node v's grid follows, with their values. */
static void grid_scalars(const cgrt_graph *g, uint32_t v, char *buf, size_t size) {
  const cgrt_graph_desc *d = g->d;
  size_t len = 0;
  buf[0] = 0;
  for (uint32_t i = d->nodes[v].grid_expr - 1, ends = 0; i < d->ngrid_code && ends < 3; i++) {
    int64_t op = d->grid_code[i];
    ends += op == CGRT_GRID_END;
    if (op != CGRT_GRID_CONST && op != CGRT_GRID_SCALAR)
      continue;
    int64_t w = d->grid_code[++i], x = 0;
    if (op == CGRT_GRID_CONST || len >= size - 1 ||
        used_by(d, &d->nodes[v], d->nbuffers + (uint32_t)w, i, 0)) /* each named once */
      continue;
    if (cgrt_grid_value(d->scalars[w].type, g->values[w], &x) != CGRT_GRID_OK)
      len += (size_t)snprintf(buf + len, size - len, "%s%s = %llu", len ? ", " : "",
                              d->scalars[w].name, (unsigned long long)g->values[w]);
    else
      len += (size_t)snprintf(buf + len, size - len, "%s%s = %lld", len ? ", " : "",
                              d->scalars[w].name, (long long)x);
  }
}

/* Node v's grid for the scalars' current values, checked: each extent 0
 * (the node then does nothing) or within CUDA's limits and a multiple of
 * its cluster's. */
static cgrt_status check_grid(const cgrt_graph *g, uint32_t v, unsigned grid[3]) {
  const cgrt_graph_desc *d = g->d;
  const cgrt_node_desc *nd = &d->nodes[v];
  static const int64_t limit[3] = {INT32_MAX, 65535, 65535};
  int64_t ext[3];
  int which = 0, err = eval_grid(g, v, ext, &which);
  char values[256];
  if (err == CGRT_GRID_OK)
    for (which = 0; which < 3; which++)
      if (ext[which] < 0 || ext[which] > limit[which] ||
          (nd->has_cluster && nd->cluster[which] && ext[which] % nd->cluster[which]))
        break;
  if (err == CGRT_GRID_OK && which == 3) {
    for (int i = 0; i < 3; i++)
      grid[i] = (unsigned)ext[i];
    return CGRT_OK;
  }
  grid_scalars(g, v, values, sizeof values);
  char c = "xyz"[which];
  if (err == CGRT_GRID_DIVZERO)
    return invalid(d, "node %s: grid extent %c divides by zero when %s", nd->name, c, values);
  if (err != CGRT_GRID_OK)
    return invalid(d, "node %s: grid extent %c overflows 64 bits when %s", nd->name, c, values);
  if (ext[which] < 0 || ext[which] > limit[which])
    return invalid(d, "node %s: grid extent %c is %lld when %s; it must be 0 to %lld", nd->name, c,
                   (long long)ext[which], values, (long long)limit[which]);
  return invalid(d, "node %s: grid extent %c is %lld when %s, not a multiple of its cluster's (%u)",
                 nd->name, c, (long long)ext[which], values, nd->cluster[which]);
}

/* Disables node v in the executable graph while its grid has an extent 0,
 * and enables it again once none is. */
static cgrt_status enable_grid(cgrt_graph *g, uint32_t v, const unsigned grid[3]) {
  uint8_t off = !grid[0] || !grid[1] || !grid[2];
  if (off == g->grid_off[v])
    return CGRT_OK;
  cudaError_t err = CU(cudaGraphNodeSetEnabled(g->exec, g->nodes[v], !off));
  if (err != cudaSuccess)
    return fail_node(g->d, &g->d->nodes[v], "cudaGraphNodeSetEnabled", err);
  g->grid_off[v] = off;
  return CGRT_OK;
}

/* After instantiation: every grid that follows scalars checked, and the
 * nodes whose grid has an extent 0 disabled. */
static cgrt_status apply_grids(cgrt_graph *g) {
  for (uint32_t v = 0; v < g->d->nnodes; v++) {
    unsigned grid[3];
    cgrt_status s;
    if (!g->d->nodes[v].grid_expr)
      continue;
    g->grid_off[v] = 0; /* a new executable graph has every node enabled */
    if ((s = check_grid(g, v, grid)) != CGRT_OK || (s = enable_grid(g, v, grid)) != CGRT_OK)
      return s;
  }
  return CGRT_OK;
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
static void node_grid(const cgrt_graph *g, uint32_t v, unsigned grid[3]) {
  const cgrt_node_desc *nd = &g->d->nodes[v];
  for (int i = 0; i < 3; i++)
    grid[i] = nd->grid[i];
  if (!nd->grid_expr)
    return;
  int64_t e[3];
  int which;
  int ok = eval_grid(g, v, e, &which) == CGRT_GRID_OK;
  grid[0] = ok && e[0] > 0 && e[0] <= INT32_MAX ? (unsigned)e[0] : 1;
  grid[1] = ok && e[1] > 0 && e[1] <= 65535 ? (unsigned)e[1] : 1;
  grid[2] = ok && e[2] > 0 && e[2] <= 65535 ? (unsigned)e[2] : 1;
}

/* Node v's parameters; for a control node, those of its condition kernel
 * before the node (step 0) or at the end of a while's body (step 1). */
static void node_params(cgrt_graph *g, uint32_t v, unsigned step, NodeParams *p) {
  const cgrt_node_desc *nd = &g->d->nodes[v];
  memset(p, 0, sizeof *p);
  switch (node_kind(nd)) {
  case CGRT_KERNEL_NODE:
    p->type = KERNEL_PARAMS;
    p->kernel.func = (void *)g->funcs[nd->kernel];
    unsigned grid[3];
    node_grid(g, v, grid);
    p->kernel.gridDim = (dim3){grid[0], grid[1], grid[2]};
    p->kernel.blockDim = (dim3){nd->block[0], nd->block[1], nd->block[2]};
    p->kernel.sharedMemBytes = nd->smem;
    p->kernel.kernelParams = kernel_args(g, nd);
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
    p->ncases = nd->ncode - (nd->default_body >= 0);
    p->fallback = nd->default_body >= 0 ? (unsigned)nd->default_body : nd->ncode;
    p->ptrs[0] = &g->handles[v];
    p->ptrs[1] = &p->slot;
    p->ptrs[2] = &p->selector_type;
    p->ptrs[3] = &p->table;
    p->ptrs[4] = &p->ncases;
    p->ptrs[5] = &p->fallback;
    break;
  }
}

/* Adds a node with parameters p for node v to `graph` after `deps`. */
static cgrt_status add_params(cgrt_graph *g, uint32_t v, const NodeParams *p, cudaGraphNode_t *node,
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
static cudaError_t update_kernel(cgrt_graph *g, cudaGraphNode_t node,
                                 const struct cudaKernelNodeParams *p, CUfunction f) {
  if (++calls == fail_at)
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
static cgrt_status set_params(cgrt_graph *g, uint32_t v, const NodeParams *p,
                              cudaGraphNode_t node) {
  cudaError_t err = cudaSuccess;
  const char *call = "";
  switch (p->type) {
  case KERNEL_PARAMS:
    call = p->condition ? "cudaGraphExecKernelNodeSetParams (condition)"
                        : "cudaGraphExecKernelNodeSetParams";
    /* A condition or fill kernel is the runtime's own: no CUfunction. */
    err = update_kernel(g, node, &p->kernel,
                        node_kind(&g->d->nodes[v]) == CGRT_KERNEL_NODE
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

/* ---- conditions ---- */

/* Adds control node v's condition kernel (step 0: before the node; 1: at
 * the end of a while's body) after `deps`.  The edges are full ones: with
 * programmatic edges into it (the kernel waiting for its predecessors on
 * the device) a loop ran 0.2 us an iteration faster on one H200 and failed
 * with cudaErrorLaunchFailure on another of the same driver. */
static cgrt_status add_eval(cgrt_graph *g, uint32_t v, unsigned step, cudaGraph_t graph,
                            const cudaGraphNode_t *deps, size_t ndeps) {
  NodeParams p;
  node_params(g, v, step, &p);
  return add_params(g, v, &p, &g->evals[2 * v + step], graph, deps, ndeps);
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

/* ---- capture nodes ---- */

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

static void drop_graph(cudaGraph_t graph) {
  if (graph && cudaGraphDestroy(graph) == cudaSuccess)
    account(-1, 0);
}

/* Runs capture node v's function with the current bindings on the
 * capturing stream; *child is what it enqueued, as a graph.  The function
 * runs in thread-local capture mode: a call it may not make while its
 * stream is captured (a synchronisation, an allocation) fails in it and
 * leaves the capture invalid, which cudaStreamEndCapture then reports. */
static const char *collective_name(uint8_t c) {
  static const char *const names[] = {"all_reduce", "all_gather", "reduce_scatter", "broadcast"};
  return c <= CGRT_BROADCAST ? names[c] : "collective";
}

static cgrt_status capture_node(cgrt_graph *g, uint32_t v, cudaGraph_t *child) {
  const cgrt_graph_desc *d = g->d;
  const cgrt_node_desc *nd = &d->nodes[v];
  const int collective = node_kind(nd) == CGRT_COLLECTIVE_NODE;
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
  kernel_args(g, nd); /* its arguments as words in g->params: addresses, constants' bits */
  if ((err = CU(cudaStreamBeginCapture(g->capture_stream, cudaStreamCaptureModeThreadLocal))) !=
      cudaSuccess)
    return fail_node(d, nd, "cudaStreamBeginCapture", err);
  /* The function starts with no error pending: one that checks
   * cudaGetLastError() after its launches sees only its own. */
  (void)cudaGetLastError();
  if (collective) {
    const cgrt_collective_ops *ops = d->collectives;
    int r = ops->enqueue(g->comm, nd->collective, nd->reduce_op, nd->selector_type,
                         (const void *)(uintptr_t)g->params[nd->arg + 1],
                         (void *)(uintptr_t)g->params[nd->arg], nd->send_count, nd->recv_count,
                         nd->root, g->capture_stream);
    if (r) {
      abandon_capture(g->capture_stream);
      snprintf(last_error, sizeof last_error, "%s:%u:%u: node %s: %s %s: %s", d->source, nd->line,
               nd->col, nd->name, ops->name, fn, ops->error_string(g->comm, r));
      return CGRT_ERROR_COMM;
    }
  } else {
    err = (cudaError_t)d->captures[nd->kernel](g->capture_stream, g->user, &g->params[nd->arg]);
    if (err != cudaSuccess) {
      abandon_capture(g->capture_stream);
      snprintf(call, sizeof call, "capture function %s", fn);
      return fail_node(d, nd, call, err);
    }
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
static cgrt_status add_capture(cgrt_graph *g, uint32_t v, cudaGraph_t graph,
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
  drop_graph(child);
  return s;
}

/* ---- create ---- */

static cgrt_status check_pointer(const cgrt_graph_desc *d, const cgrt_buffer_desc *b, void *p) {
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

static cgrt_status alloc_memory(cgrt_graph *g) {
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
    switch (node_kind(nd)) {
    case CGRT_WHILE_NODE: g->extra_bytes += nd->bytes ? 8 : 0; break;         /* the iteration counter */
    case CGRT_SWITCH_NODE: g->extra_bytes += 16 * (uint64_t)nd->ncode; break; /* the case table */
    case CGRT_KERNEL_NODE:
    case CGRT_COPY_NODE:
    case CGRT_FILL_NODE:
    case CGRT_IF_NODE:
    case CGRT_CAPTURE_NODE:
    case CGRT_COLLECTIVE_NODE: break;
    }
  }
  if (d->nscalars || g->extra_bytes)
    dbytes = g->extra + g->extra_bytes;
  uint64_t scratch = hbytes;
  if (d->nscalars)
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
    if (node_kind(nd) != CGRT_SWITCH_NODE)
      continue;
    uint64_t *t = buf + g->extra_at[v] / 8;
    uint32_t k = 0;
    for (uint32_t b = 0; b < nd->ncode; b++)
      if ((int32_t)b != nd->default_body) {
        t[2 * k] = d->cases[nd->code + b];
        t[2 * k++ + 1] = b;
      }
    qsort(t, k, 2 * sizeof *t, cmp_case);
  }
  cudaError_t err = CU(cudaMemcpy(g->dmem + g->extra, buf, g->extra_bytes, cudaMemcpyHostToDevice));
  xfree(buf);
  return err == cudaSuccess ? CGRT_OK : fail(d, "cudaMemcpy", err);
}

/* Zeroes `= 0` buffers and writes the scalars' first values and counter. */
static cgrt_status init_memory(cgrt_graph *g) {
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
static int used_by(const cgrt_graph_desc *d, const cgrt_node_desc *nd, uint32_t r, uint32_t i,
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
static cgrt_status index_uses(cgrt_graph *g) {
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
        if (op == CGRT_GRID_CONST || used_by(d, nd, r, i, 1))
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
static cgrt_status plan_updates(cgrt_graph *g) {
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
  for (uint32_t n = 0; n < d->nnodes; n++) {
    const cgrt_node_desc *nd = &d->nodes[n];
    if (node_kind(nd) != CGRT_KERNEL_NODE || nd->scope != CGRT_TOP || nd->grid_expr)
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
  uint32_t grids = 0, updatable = 0;
  for (uint32_t n = 0; n < d->nnodes; n++)
    updatable += g->dev_node[n];
  for (int pass = 0; pass < 2; pass++)
    for (uint32_t n = 0; n < d->nnodes; n++) {
      const cgrt_node_desc *nd = &d->nodes[n];
      if (node_kind(nd) != CGRT_KERNEL_NODE || nd->scope != CGRT_TOP || !nd->grid_expr)
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
  xfree(takers);
  if (edges && !(g->dev_edges = xcalloc(edges, sizeof *g->dev_edges))) {
    xfree(loaded);
    return no_memory(d);
  }
  for (uint32_t n = 0; n < d->nnodes; n++)
    if (g->dev_node[n] && !loaded[n])
      g->dev_edges[g->ndev_edges++] = n;
  xfree(loaded);
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

/* The update table in device memory, once the device-updatable nodes have
 * their handles: scalar i's entries are [starts[i], starts[i + 1]), each a
 * node and where its parameter is. */
static cgrt_status write_updates(cgrt_graph *g) {
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
  return update_kernel(g, g->loader, &p, g->loader_fn);
}

/* The runtime kernel that copies the scalars set for a launch into their
 * slots, after `deps`; made with nothing to copy. */
static cgrt_status add_loader(cgrt_graph *g, cudaGraph_t graph, const cudaGraphNode_t *deps,
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
static cgrt_status device_updatable(cgrt_graph *g, uint32_t v) {
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
  if (nd->has_cluster) {
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
    return add_loader(g, graph, deps, ndeps);
  switch (node_kind(&g->d->nodes[v])) {
  case CGRT_WHILE_NODE: return add_control(g, v, cudaGraphCondTypeWhile, graph, deps, ndeps);
  case CGRT_IF_NODE: return add_control(g, v, cudaGraphCondTypeIf, graph, deps, ndeps);
  case CGRT_SWITCH_NODE: return add_control(g, v, cudaGraphCondTypeSwitch, graph, deps, ndeps);
  case CGRT_KERNEL_NODE: {
    NodeParams p;
    node_params(g, v, 0, &p);
    cgrt_status s = add_params(g, v, &p, &g->nodes[v], graph, deps, ndeps);
    if (s == CGRT_OK)
      s = set_attributes(g, v);
    return s == CGRT_OK && g->dev_node[v] ? device_updatable(g, v) : s;
  }
  case CGRT_COPY_NODE:
  case CGRT_FILL_NODE: {
    NodeParams p;
    node_params(g, v, 0, &p);
    return add_params(g, v, &p, &g->nodes[v], graph, deps, ndeps);
  }
  case CGRT_CAPTURE_NODE:
  case CGRT_COLLECTIVE_NODE: return add_capture(g, v, graph, deps, ndeps);
  }
  return CGRT_OK; /* check_desc refused other kinds */
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
    if (!d->edges[3 * i + 2])
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
  const cgrt_graph_desc *d = g->d;
  cudaError_t err;
  /* A kernel's limit on dynamic shared memory is raised once, to the most
   * any of its nodes asks. */
  for (uint32_t k = 0; k < d->nkernels; k++) {
    uint32_t most = 0, at = 0;
    for (uint32_t n = 0; n < d->nnodes; n++)
      if (node_kind(&d->nodes[n]) == CGRT_KERNEL_NODE && d->nodes[n].kernel == k &&
          d->nodes[n].smem > most)
        most = d->nodes[n].smem, at = n;
    if (most <= BIG_SMEM)
      continue;
    if (kernel_kind(d, k) == CGRT_KERNEL_MODULE) { /* a module's kernel, for this device */
      if ((err = CU(cudaKernelSetAttributeForDevice((cudaKernel_t)g->funcs[k],
                                                    cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                    (int)most, g->device))) != cudaSuccess)
        return fail_node(d, &d->nodes[at], "cudaKernelSetAttributeForDevice", err);
    } else if ((err = CU(cudaFuncSetAttribute(g->funcs[k],
                                              cudaFuncAttributeMaxDynamicSharedMemorySize,
                                              (int)most))) != cudaSuccess) {
      return fail_node(d, &d->nodes[at], "cudaFuncSetAttribute", err);
    }
  }
  /* Node d->nnodes is the scalar upload, when there is one: the first of
   * the top graph. */
  uint32_t nl = d->nloads + g->ndev_edges;
  uint32_t n = d->nnodes + (nl ? 1 : 0), m = d->nedges + nl;
  uint32_t nfill = (n > g->ngraphs ? n : g->ngraphs) + 1;
  uint32_t *gid = xcalloc(n, sizeof *gid), *start = xcalloc(n + 1, sizeof *start);
  uint32_t *pred = xcalloc(m, sizeof *pred), *fill = xcalloc(nfill, sizeof *fill);
  uint32_t *gstart = xcalloc(g->ngraphs + 1, sizeof *gstart), *glist = xcalloc(n, sizeof *glist);
  uint32_t *lstart = xcalloc(g->ngraphs + 1, sizeof *lstart);
  uint32_t *llist = xcalloc(d->nedges, sizeof *llist);
  uint8_t *has_in = xcalloc(n, 1), *has_out = xcalloc(n, 1), *late = xcalloc(d->nedges, 1);
  uint8_t *prog = xcalloc(d->nedges, 1);
  cudaGraphNode_t *deps = xcalloc(n + 1, sizeof *deps);
  cudaGraphNode_t *from = NULL, *to = NULL;
  cudaGraphEdgeData *data = NULL;
  cgrt_status s = CGRT_OK;
  if (!gid || !start || !pred || !fill || !gstart || !glist || !lstart || !llist || !has_in ||
      !has_out || !late || !prog || !deps) {
    s = no_memory(d);
    goto done;
  }
  if ((s = programmatic_edges(g, prog)) != CGRT_OK)
    goto done;
  for (uint32_t v = 0; v < d->nnodes; v++)
    gid[v] = d->nodes[v].scope == CGRT_TOP ? 0
                                           : g->body_base[d->nodes[v].scope] + d->nodes[v].branch;
  /* Each node's predecessors that go in with it, pred[start[v] ..
   * start[v + 1]); the later edges of each graph, llist[lstart[k] ..
   * lstart[k + 1]). */
  uint32_t nlate = 0;
  for (uint32_t i = 0; i < m; i++) {
    uint32_t a, b;
    edge_ends(g, i, &a, &b);
    has_out[a] = has_in[b] = 1;
    if (i < d->nedges && (prog[i] || a > b)) {
      late[i] = 1;
      lstart[gid[a] + 1]++;
      nlate++;
    } else {
      start[b + 1]++;
    }
  }
  for (uint32_t v = 0; v < n; v++)
    start[v + 1] += start[v];
  for (uint32_t k = 0; k < g->ngraphs; k++)
    lstart[k + 1] += lstart[k];
  for (uint32_t i = 0; i < m; i++) {
    uint32_t a, b;
    edge_ends(g, i, &a, &b);
    if (i >= d->nedges || !late[i])
      pred[start[b] + fill[b]++] = a;
  }
  memset(fill, 0, nfill * sizeof *fill);
  for (uint32_t i = 0; i < d->nedges; i++)
    if (late[i]) {
      uint32_t k = gid[d->edges[3 * i]];
      llist[lstart[k] + fill[k]++] = i;
    }
  /* The nodes of each graph in table order, glist[gstart[k] ..
   * gstart[k + 1]), the scalar upload first. */
  for (uint32_t v = 0; v < n; v++)
    gstart[gid[v] + 1]++;
  for (uint32_t k = 0; k < g->ngraphs; k++)
    gstart[k + 1] += gstart[k];
  memset(fill, 0, nfill * sizeof *fill);
  if (n > d->nnodes)
    glist[fill[0]++] = d->nnodes;
  for (uint32_t v = 0; v < d->nnodes; v++)
    glist[gstart[gid[v]] + fill[gid[v]]++] = v;
  for (uint32_t k = 0; k < g->ngraphs && s == CGRT_OK; k++) {
    cudaGraph_t graph = g->bodies[k];
    uint32_t roots = 0;
    for (uint32_t i = gstart[k]; i < gstart[k + 1]; i++)
      roots += !has_in[glist[i]];
    cudaGraphNode_t entry = NULL;
    if (roots >= ENTRY_ROOTS) {
      struct cudaKernelNodeParams p = {0};
      p.func = (void *)kernel_address(cgrt_entry);
      p.gridDim = (dim3){1, 1, 1};
      p.blockDim = (dim3){1, 1, 1};
      if ((err = CU(cudaGraphAddKernelNode(&entry, graph, NULL, 0, &p))) != cudaSuccess) {
        s = fail(d, "cudaGraphAddKernelNode (entry)", err);
        break;
      }
    }
    for (uint32_t i = gstart[k]; i < gstart[k + 1] && s == CGRT_OK; i++) {
      uint32_t v = glist[i];
      size_t nd = 0;
      for (uint32_t j = start[v]; j < start[v + 1]; j++)
        deps[nd++] = pred[j] == d->nnodes ? g->loader : g->nodes[pred[j]];
      if (!has_in[v] && entry)
        deps[nd++] = entry;
      s = add_node(g, v, graph, deps, nd);
    }
    if (s != CGRT_OK || k == 0)
      continue;
    /* A while's body: the condition again, after the body's last nodes;
     * unless a kernel of the body takes the while's handle and sets it. */
    uint32_t owner = g->owner[k];
    if (node_kind(&d->nodes[owner]) != CGRT_WHILE_NODE || d->nodes[owner].body_sets_handle)
      continue;
    size_t nd = 0;
    for (uint32_t i = gstart[k]; i < gstart[k + 1]; i++)
      if (!has_out[glist[i]])
        deps[nd++] = g->nodes[glist[i]];
    s = add_eval(g, owner, 1, graph, deps, nd);
  }
  if (s != CGRT_OK || !nlate)
    goto done;
  /* The later edges, a call per graph that has some; a programmatic one
   * with the edge data that makes it so. */
  from = xcalloc(nlate, sizeof *from);
  to = xcalloc(nlate, sizeof *to);
  data = xcalloc(nlate, sizeof *data);
  if (!from || !to || !data) {
    s = no_memory(d);
    goto done;
  }
  for (uint32_t k = 0; k < g->ngraphs && s == CGRT_OK; k++) {
    size_t c = 0;
    int backward = 0;
    for (uint32_t j = lstart[k]; j < lstart[k + 1]; j++, c++) {
      uint32_t i = llist[j];
      from[c] = g->nodes[d->edges[3 * i]];
      to[c] = g->nodes[d->edges[3 * i + 1]];
      if (prog[i]) {
        data[c].from_port = cudaGraphKernelNodePortProgrammatic;
        data[c].type = cudaGraphDependencyTypeProgrammatic;
      } else {
        backward = 1;
      }
    }
    if (c && (err = CU(cudaGraphAddDependencies(g->bodies[k], from, to, data, c))) != cudaSuccess)
      s = fail(d, backward ? "cudaGraphAddDependencies" : "cudaGraphAddDependencies (programmatic)",
               err);
  }
done:
  xfree(from);
  xfree(to);
  xfree(data);
  xfree(gid);
  xfree(start);
  xfree(pred);
  xfree(fill);
  xfree(gstart);
  xfree(glist);
  xfree(lstart);
  xfree(llist);
  xfree(has_in);
  xfree(has_out);
  xfree(late);
  xfree(prog);
  xfree(deps);
  return s;
}

/* Numbers the graphs: the top is 0, then each control node's bodies in
 * node order. */
static cgrt_status number_graphs(cgrt_graph *g) {
  const cgrt_graph_desc *d = g->d;
  uint32_t next = 1, controls = 0;
  for (uint32_t v = 0; v < d->nnodes; v++)
    if (is_control(node_kind(&d->nodes[v]))) {
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
    if (is_control(node_kind(&d->nodes[v])))
      for (uint32_t b = 0; b < d->nodes[v].nbodies; b++)
        g->owner[g->body_base[v] + b] = v;
  return CGRT_OK;
}

/* Why a generated table cannot be built: "node x: its description is
 * malformed: why", or without a node "its description is malformed: why". */
static cgrt_status malformed(const cgrt_graph_desc *d, const cgrt_node_desc *nd, const char *fmt,
                             ...) {
  char why[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, sizeof why, fmt, ap);
  va_end(ap);
  if (nd)
    return invalid(d, "node %s: its description is malformed: %s", nd->name, why);
  return invalid(d, "its description is malformed: %s", why);
}

/* A kernel node's grid program, well formed: in the table, its operands
 * there, integer scalars, and one value left by each extent's. */
static cgrt_status check_grid_code(const cgrt_graph_desc *d, const cgrt_node_desc *nd) {
  uint32_t at = nd->grid_expr - 1;
  if (nd->grid_expr > d->ngrid_code || !d->grid_code)
    return malformed(d, nd, "grid program %u of %u words", nd->grid_expr, d->ngrid_code);
  for (int i = 0; i < 3; i++) {
    int depth = 0;
    for (;;) {
      if (at >= d->ngrid_code)
        return malformed(d, nd, "its grid program ends past the table");
      int64_t op = d->grid_code[at++];
      if (op == CGRT_GRID_END)
        break;
      if (op == CGRT_GRID_CONST || op == CGRT_GRID_SCALAR) {
        if (at >= d->ngrid_code || depth == CGRT_GRID_STACK)
          return malformed(d, nd, "its grid program ends early or holds too many values");
        int64_t w = d->grid_code[at++];
        if (op == CGRT_GRID_SCALAR && (w < 0 || (uint64_t)w >= d->nscalars ||
                                       d->scalars[w].type > CGRT_U64))
          return malformed(d, nd, "its grid follows scalar %lld, not an integer one of %u",
                           (long long)w, d->nscalars);
        depth++;
      } else if (op == CGRT_GRID_NEG) {
        if (depth < 1)
          return malformed(d, nd, "its grid program negates nothing");
      } else if (op < CGRT_GRID_ADD || op >= CGRT_GRID_NOPS || depth-- < 2) {
        return malformed(d, nd, "its grid program has instruction %lld", (long long)op);
      }
    }
    if (depth != 1)
      return malformed(d, nd, "its grid program leaves %d values", depth);
  }
  return CGRT_OK;
}

/* A node's own fields and arguments; the nodes before it and the buffers
 * are checked. */
static cgrt_status check_node(const cgrt_graph_desc *d, uint32_t v) {
  const cgrt_node_desc *nd = &d->nodes[v];
  if (!is_node_kind(nd->kind))
    return malformed(d, nd, "kind %u is no kind of node", nd->kind);
  if (nd->scope != CGRT_TOP && (nd->scope >= v || !is_control(node_kind(&d->nodes[nd->scope])) ||
                                nd->branch >= d->nodes[nd->scope].nbodies))
    return malformed(d, nd, "its body is not one of an earlier control node");
  uint32_t least_args = 0;
  switch (node_kind(nd)) {
  case CGRT_KERNEL_NODE:
    if (nd->kernel >= d->nkernels)
      return malformed(d, nd, "kernel %u of %u", nd->kernel, d->nkernels);
    if (nd->grid_expr) {
      cgrt_status s = check_grid_code(d, nd);
      if (s != CGRT_OK)
        return s;
    }
    break;
  case CGRT_CAPTURE_NODE:
    if (nd->kernel >= d->ncaptures || !d->captures || !d->capture_names)
      return malformed(d, nd, "capture function %u of %u", nd->kernel, d->ncaptures);
    for (uint32_t i = nd->arg; i < nd->arg + nd->nargs; i++)
      if (d->args[i].kind == CGRT_ARG_SCALAR_VALUE)
        return malformed(d, nd, "a scalar by value to a capture function");
    break;
  case CGRT_COLLECTIVE_NODE:
    if (!d->collectives)
      return malformed(d, nd, "a collective without the collectives' library");
    if (nd->nargs != 2 || nd->collective > CGRT_BROADCAST || nd->reduce_op > CGRT_AVG ||
        nd->selector_type > CGRT_F64)
      return malformed(d, nd, "a collective's fields");
    for (uint32_t i = nd->arg; i < nd->arg + nd->nargs; i++)
      if (d->args[i].kind != CGRT_ARG_BUFFER && d->args[i].kind != CGRT_ARG_SCALAR_PTR)
        return malformed(d, nd, "a collective's argument %u", i - nd->arg);
    break;
  case CGRT_COPY_NODE: least_args = 2; break;
  case CGRT_FILL_NODE:
    if (nd->elem_size != 1 && nd->elem_size != 2 && nd->elem_size != 4 && nd->elem_size != 8)
      return malformed(d, nd, "elements of %u bytes", nd->elem_size);
    least_args = 1;
    break;
  case CGRT_WHILE_NODE:
  case CGRT_IF_NODE: {
    if (nd->nbodies == 0 || nd->ncode > CGRT_COND_CODE || nd->nargs > CGRT_COND_OPERANDS ||
        nd->code > d->ncode || nd->ncode > d->ncode - nd->code)
      return malformed(d, nd, "a condition of %u instructions from %u, %u operands, %u bodies",
                       nd->ncode, nd->code, nd->nargs, nd->nbodies);
    /* Postfix code that leaves one value, of comparisons the kernels know,
     * reading no operand past the node's (the kernels index by it). */
    uint32_t depth = 0, operands = 0;
    for (uint32_t i = 0; i < nd->ncode; i++) {
      unsigned c = d->code[nd->code + i];
      if (c == CGRT_COND_AND || c == CGRT_COND_OR) {
        if (depth < 2)
          return malformed(d, nd, "instruction %u of the condition joins two values, with %u on "
                                  "the stack", i, depth);
        depth--;
      } else if (c > CGRT_COND_COMPARE(CGRT_F64, CGRT_NCMP - 1, 1)) {
        return malformed(d, nd, "instruction %u of the condition (%u) is no comparison", i, c);
      } else {
        depth++;
        operands += 2;
      }
    }
    if (depth != 1)
      return malformed(d, nd, "a condition that leaves %u values on the stack, not 1", depth);
    if (operands > nd->nargs)
      return malformed(d, nd, "a condition that reads %u operands of %u", operands, nd->nargs);
    break;
  }
  case CGRT_SWITCH_NODE:
    if (nd->nbodies == 0 || nd->ncode != nd->nbodies || nd->code > d->ncases ||
        nd->ncode > d->ncases - nd->code || nd->default_body >= (int32_t)nd->ncode ||
        nd->default_body < -1)
      return malformed(d, nd, "%u bodies, %u cases from %u, default %d", nd->nbodies, nd->ncode,
                       nd->code, nd->default_body);
    least_args = 1;
    break;
  }
  if (nd->grid_expr && node_kind(nd) != CGRT_KERNEL_NODE)
    return malformed(d, nd, "a grid program on a node that is no kernel node");
  if (nd->nargs < least_args)
    return malformed(d, nd, "%u arguments", nd->nargs);
  for (uint32_t i = nd->arg; i < nd->arg + nd->nargs; i++) {
    const cgrt_arg_desc *a = &d->args[i];
    if (!is_arg_kind(a->kind))
      return malformed(d, nd, "argument %u: kind %u is no kind of argument", i - nd->arg, a->kind);
    switch (arg_kind(a)) {
    case CGRT_ARG_BUFFER:
      if (a->index >= d->nbuffers)
        return malformed(d, nd, "argument %u: buffer %u of %u", i - nd->arg, a->index, d->nbuffers);
      break;
    case CGRT_ARG_SCALAR_PTR:
    case CGRT_ARG_SCALAR_VALUE:
      if (a->index >= d->nscalars)
        return malformed(d, nd, "argument %u: scalar %u of %u", i - nd->arg, a->index, d->nscalars);
      break;
    case CGRT_ARG_CONST: break;
    case CGRT_ARG_HANDLE: {
      /* An earlier while that says its body sets its handle, with no
       * bound, whose body holds this kernel node directly (not in nested
       * control flow: see sema.c's check_handle_arg). */
      const cgrt_node_desc *w = a->index < v ? &d->nodes[a->index] : NULL;
      if (node_kind(nd) != CGRT_KERNEL_NODE || !w || node_kind(w) != CGRT_WHILE_NODE ||
          !w->body_sets_handle || w->bytes || w->scope != CGRT_TOP || nd->scope != a->index ||
          a->size != 8)
        return malformed(d, nd, "argument %u: the handle of node %u, which is no while without a "
                         "bound whose body holds this kernel and sets its handle", i - nd->arg,
                         a->index);
      break;
    }
    }
  }
  if (node_kind(nd) != CGRT_WHILE_NODE && nd->body_sets_handle)
    return malformed(d, nd, "a node that is no while sets its handle");
  if (is_control(node_kind(nd)) && nd->scope != CGRT_TOP && nd->scope < v &&
      d->nodes[nd->scope].body_sets_handle)
    return malformed(d, nd, "control flow in the body of a while whose body sets its handle");
  return CGRT_OK;
}

/* Checks once, at create, what building relies on and cgc guarantees:
 * kinds and indices in range, a node's body belonging to an earlier
 * control node, edges between two nodes of one body (programmatic ones
 * between kernels), the scalar upload feeding nodes of the top graph, and
 * at most UINT32_MAX - 1 bodies.  Edges may go backward in the table (a
 * written edge against the written order); a cycle, which cgc refuses,
 * fails instantiation. */
static cgrt_status check_kernels(const cgrt_graph_desc *d) {
  if (d->nkernels && (!d->kernels || !d->kernel_names))
    return malformed(d, NULL, "%u kernels, but no kernel table", d->nkernels);
  if (d->nmodules && !d->modules)
    return malformed(d, NULL, "%u modules, but no module table", d->nmodules);
  for (uint32_t m = 0; m < d->nmodules; m++) {
    const cgrt_module_desc *md = &d->modules[m];
    if (!md->path || !md->image || !md->bytes || !is_module_format(md->format))
      return malformed(d, NULL, "module %u: no path, no bytes or format %u", m, md->format);
    if (md->format == CGRT_MODULE_PTX && md->image[md->bytes - 1])
      return malformed(d, NULL, "module %s: its PTX does not end with a NUL", md->path);
  }
  for (uint32_t k = 0; k < d->nkernels; k++) {
    const cgrt_kernel_from *kf = d->kernel_from ? &d->kernel_from[k] : NULL;
    if (kf && !is_kernel_kind(kf->kind))
      return malformed(d, NULL, "kernel %s: kind %u is no kind of kernel", d->kernel_names[k],
                       kf->kind);
    switch (kernel_kind(d, k)) {
    case CGRT_KERNEL_LINKED:
      if (!d->kernels[k])
        return malformed(d, NULL, "kernel %s: linked in, but no address", d->kernel_names[k]);
      break;
    case CGRT_KERNEL_TEMPLATE:
      if (!kf->address)
        return malformed(d, NULL, "kernel %s: a template, but no accessor", d->kernel_names[k]);
      break;
    case CGRT_KERNEL_MODULE:
      if (kf->module >= d->nmodules || !kf->symbol)
        return malformed(d, NULL, "kernel %s: module %u of %u, symbol %s", d->kernel_names[k],
                         kf->module, d->nmodules, kf->symbol ? kf->symbol : "(none)");
      break;
    }
  }
  return CGRT_OK;
}

/* A while whose body sets its handle has exactly one argument that takes
 * it (check_node checked each such argument): with none, nothing would
 * end the loop; with two, they would race. */
static cgrt_status check_handles(const cgrt_graph_desc *d) {
  uint32_t v = 0;
  while (v < d->nnodes && !d->nodes[v].body_sets_handle)
    v++;
  if (v == d->nnodes)
    return CGRT_OK;
  uint8_t *takers = xcalloc(d->nnodes, 1);
  if (!takers)
    return no_memory(d);
  for (uint32_t n = 0; n < d->nnodes; n++)
    for (uint32_t i = d->nodes[n].arg; i < d->nodes[n].arg + d->nodes[n].nargs; i++)
      if (arg_kind(&d->args[i]) == CGRT_ARG_HANDLE && takers[d->args[i].index] < 2)
        takers[d->args[i].index]++;
  cgrt_status s = CGRT_OK;
  for (v = 0; v < d->nnodes && s == CGRT_OK; v++)
    if (d->nodes[v].body_sets_handle && takers[v] != 1)
      s = malformed(d, &d->nodes[v], "its body sets its handle, but %s takes it",
                    takers[v] ? "more than one argument" : "no argument");
  xfree(takers);
  return s;
}

static cgrt_status check_desc(const cgrt_graph_desc *d) {
  cgrt_status ks = check_kernels(d);
  if (ks != CGRT_OK)
    return ks;
  for (uint32_t i = 0; i < d->nbuffers; i++)
    if (!is_buffer_kind(d->buffers[i].kind))
      return malformed(d, NULL, "buffer %s: kind %u is no kind of buffer", d->buffers[i].name,
                       d->buffers[i].kind);
  for (uint32_t i = 0; i < d->nscalars; i++)
    if (d->scalars[i].bounded && d->scalars[i].type > CGRT_U64)
      return malformed(d, NULL, "scalar %s: a bound on a type that is no integer", d->scalars[i].name);
  uint64_t bodies = 0;
  for (uint32_t v = 0; v < d->nnodes; v++) {
    cgrt_status s = check_node(d, v);
    if (s != CGRT_OK)
      return s;
    if (is_control(node_kind(&d->nodes[v])))
      bodies += d->nodes[v].nbodies;
  }
  if (bodies >= UINT32_MAX)
    return malformed(d, NULL, "%llu bodies", (unsigned long long)bodies);
  for (uint32_t i = 0; i < d->nedges; i++) {
    uint32_t a = d->edges[3 * i], b = d->edges[3 * i + 1];
    if (a >= d->nnodes || b >= d->nnodes || a == b)
      return malformed(d, NULL, "edge %u joins node %u to node %u of %u", i, a, b, d->nnodes);
    const cgrt_node_desc *x = &d->nodes[a], *y = &d->nodes[b];
    if (x->scope != y->scope || (x->scope != CGRT_TOP && x->branch != y->branch))
      return malformed(d, NULL, "edge %s -> %s joins two bodies", x->name, y->name);
    if (d->edges[3 * i + 2] && (node_kind(x) != CGRT_KERNEL_NODE || node_kind(y) != CGRT_KERNEL_NODE))
      return malformed(d, NULL, "programmatic edge %s => %s is not between kernels", x->name,
                       y->name);
  }
  for (uint32_t i = 0; i < d->nloads; i++)
    if (d->loads[i] >= d->nnodes || d->nodes[d->loads[i]].scope != CGRT_TOP)
      return malformed(d, NULL, "the scalar upload precedes node %u of %u, not one at the top",
                       d->loads[i], d->nnodes);
  return check_handles(d);
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
    snprintf(last_error, sizeof last_error, "%s: graph %s: %s: the communicator's size and rank: %s",
             d->source, d->name, ops->name, ops->error_string(comm, r));
    return CGRT_ERROR_COMM;
  }
  g->comm = comm;
  for (uint32_t i = 0; i < d->nscalars; i++)
    if (d->scalars[i].from_comm != CGRT_FROM_VALUE)
      g->values[i] = (uint64_t)(d->scalars[i].from_comm == CGRT_RANK ? rank : ranks);
  for (uint32_t v = 0; v < d->nnodes; v++) {
    const cgrt_node_desc *nd = &d->nodes[v];
    if (node_kind(nd) != CGRT_COLLECTIVE_NODE)
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

/* The graph from the tables, with the current bindings and values (every
 * capture function runs), instantiated and, when create was asked to,
 * uploaded in `stream`. */
static cgrt_status make_graph(cgrt_graph *g, cudaStream_t stream) {
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
      ((g->nupdates || g->ngrids) && (s = write_updates(g)) != CGRT_OK))
    return s;
  int priorities = 0;
  for (uint32_t n = 0; n < d->nnodes; n++)
    priorities |= d->nodes[n].has_priority;
  err = CU(cudaGraphInstantiate(&g->exec, g->graph,
                                priorities ? cudaGraphInstantiateFlagUseNodePriority : 0));
  if (err != cudaSuccess)
    return fail(d, "cudaGraphInstantiate", err);
  account(1, 0);
  if (d->ngrid_code && (s = apply_grids(g)) != CGRT_OK)
    return s;
  for (uint32_t n = 0; n < d->nnodes; n++) /* what the new graph's nodes hold */
    if (g->dev_grid[n])
      node_grid(g, n, &g->grid_dims[3 * n]);
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

/* ---- kernels ---- */

/* What failed while finding kernel k from its module, for a message that
 * names the kernel, its symbol and the module as the .cgraph wrote it. */
static cgrt_status fail_kernel(const cgrt_graph_desc *d, uint32_t k, uint32_t node,
                               const char *call, cudaError_t err) {
  const cgrt_kernel_from *kf = &d->kernel_from[k];
  char what[512];
  snprintf(what, sizeof what, "%s (kernel %s, symbol '%s' in module '%s')", call,
           d->kernel_names[k], kf->symbol, d->modules[kf->module].path);
  return fail_node(d, &d->nodes[node], what, err);
}

/* A module kernel's parameters against the declaration: as many, each of
 * the size its argument takes (node `node`'s).  A module is compiled
 * apart from the .cgraph, so nothing else checks them (Triton adds
 * parameters of its own, for one). */
static cgrt_status check_params(const cgrt_graph_desc *d, uint32_t k, uint32_t node,
                                const void *func) {
  const cgrt_node_desc *nd = &d->nodes[node];
  const cgrt_kernel_from *kf = &d->kernel_from[k];
  size_t offset, size;
  cudaError_t err;
  for (uint32_t i = 0; i <= nd->nargs; i++) {
    err = CU(cudaFuncGetParamInfo(func, i, &offset, &size));
    if (i == nd->nargs) {
      if (err == cudaErrorInvalidValue) { /* no parameter past the declared ones */
        (void)cudaGetLastError();        /* that error is no error of the caller's */
        return CGRT_OK;
      }
      if (err != cudaSuccess)
        return fail_kernel(d, k, node, "cudaFuncGetParamInfo", err);
      return invalid(d, "node %s: kernel %s (symbol '%s' in module '%s') takes more parameters "
                        "than the %u its declaration has",
                     nd->name, d->kernel_names[k], kf->symbol, d->modules[kf->module].path,
                     nd->nargs);
    }
    if (err == cudaErrorInvalidValue) {
      (void)cudaGetLastError();
      return invalid(d, "node %s: kernel %s (symbol '%s' in module '%s') takes %u parameters, "
                        "but its declaration has %u",
                     nd->name, d->kernel_names[k], kf->symbol, d->modules[kf->module].path, i,
                     nd->nargs);
    }
    if (err != cudaSuccess)
      return fail_kernel(d, k, node, "cudaFuncGetParamInfo", err);
    if (size != d->args[nd->arg + i].size)
      return invalid(d, "node %s: parameter %u of kernel %s (symbol '%s' in module '%s') takes "
                        "%zu bytes, but its declaration's takes %u",
                     nd->name, i + 1, d->kernel_names[k], kf->symbol,
                     d->modules[kf->module].path, size, d->args[nd->arg + i].size);
  }
  return CGRT_OK;
}

/* Module kernel k of node `node`: its module loaded once per graph, the
 * kernel found, loaded into this device's context now (so that a module
 * built for another GPU fails here, not at the first launch: with lazy
 * loading the library itself loads without complaint), and its parameters
 * checked. */
static cgrt_status load_module_kernel(cgrt_graph *g, uint32_t k, uint32_t node) {
  const cgrt_graph_desc *d = g->d;
  const cgrt_kernel_from *kf = &d->kernel_from[k];
  cudaError_t err;
  if (!g->libraries[kf->module]) {
    err = CU(cudaLibraryLoadData(&g->libraries[kf->module], d->modules[kf->module].image, NULL,
                                 NULL, 0, NULL, NULL, 0));
    if (err != cudaSuccess) {
      g->libraries[kf->module] = NULL;
      return fail_kernel(d, k, node, "cudaLibraryLoadData", err);
    }
    account(1, 0);
  }
  cudaKernel_t kernel = NULL;
  if ((err = CU(cudaLibraryGetKernel(&kernel, g->libraries[kf->module], kf->symbol))) !=
      cudaSuccess)
    return fail_kernel(d, k, node, "cudaLibraryGetKernel", err);
  struct cudaFuncAttributes attr;
  if ((err = CU(cudaFuncGetAttributes(&attr, (const void *)kernel))) != cudaSuccess)
    return fail_kernel(d, k, node, "cudaFuncGetAttributes", err);
  g->funcs[k] = (const void *)kernel;
  return check_params(d, k, node, kernel);
}

#if CUDART_VERSION >= 12050
/* The driver's function `name` as of CUDA 12.0, or NULL (the failure
 * cleared: it is not sticky, and the runtime's call stays). */
static void *driver_entry(const char *name) {
  void *fn = NULL;
  enum cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
  if (cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &q) != cudaSuccess ||
      q != cudaDriverEntryPointSuccess) {
    (void)cudaGetLastError();
    return NULL;
  }
  return fn;
}
#endif

/* Kernel nodes are updated in the executable graph through the driver's
 * cuGraphExecKernelNodeSetParams where it can be found (CUDA 12.5 and
 * later), with each kernel's CUfunction and the graph's context found here
 * once: the runtime's call looks the kernel up by its host stub every
 * time, which costs about 0.3 us of host time an update on an H200
 * (bench/upload.cu, "driver" against "params"), and a set and launch of a
 * pointer scalar makes one.  What cannot be found leaves the runtime's
 * call. */
static cgrt_status find_driver(cgrt_graph *g) {
  const cgrt_graph_desc *d = g->d;
  if (!(g->drv_funcs = xcalloc(d->nkernels, sizeof *g->drv_funcs)))
    return no_memory(d);
#if CUDART_VERSION >= 12050
  void *update = driver_entry("cuGraphExecKernelNodeSetParams");
  void *current = driver_entry("cuCtxGetCurrent");
  void *get = driver_entry("cuKernelGetFunction"); /* for a module's kernels */
  CUcontext ctx = NULL;
  if (!update || !current || ((CUresult(*)(CUcontext *))current)(&ctx) != CUDA_SUCCESS || !ctx)
    return CGRT_OK;
  g->drv_update = (CUresult(*)(CUgraphExec, CUgraphNode, const CUDA_KERNEL_NODE_PARAMS_v2 *))update;
  g->ctx = ctx;
  for (uint32_t k = 0; k < d->nkernels; k++) {
    CUfunction f = NULL;
    if (!g->funcs[k])
      continue;
    if (kernel_kind(d, k) == CGRT_KERNEL_MODULE) {
      if (!get || ((CUresult(*)(CUfunction *, CUkernel))get)(&f, (CUkernel)g->funcs[k]) !=
                      CUDA_SUCCESS)
        f = NULL;
    } else if (cudaGetFuncBySymbol((cudaFunction_t *)&f, g->funcs[k]) != cudaSuccess) {
      (void)cudaGetLastError();
      f = NULL;
    }
    g->drv_funcs[k] = f;
  }
#endif
  return CGRT_OK;
}

/* What each kernel node of this graph runs: a linked kernel's host stub,
 * a template's instantiation (its accessor's answer), or a module's
 * kernel. */
static cgrt_status find_kernels(cgrt_graph *g) {
  const cgrt_graph_desc *d = g->d;
  g->funcs = xcalloc(d->nkernels, sizeof *g->funcs);
  g->libraries = xcalloc(d->nmodules, sizeof *g->libraries);
  if (!g->funcs || !g->libraries)
    return no_memory(d);
  for (uint32_t v = 0; v < d->nnodes; v++) {
    const cgrt_node_desc *nd = &d->nodes[v];
    uint32_t k = nd->kernel;
    if (node_kind(nd) != CGRT_KERNEL_NODE || g->funcs[k])
      continue;
    cgrt_status s = CGRT_OK;
    switch (kernel_kind(d, k)) {
    case CGRT_KERNEL_LINKED: g->funcs[k] = kernel_address(d->kernels[k]); break;
    case CGRT_KERNEL_TEMPLATE:
      if (!(g->funcs[k] = d->kernel_from[k].address()))
        s = invalid(d, "node %s: template kernel %s has no address", nd->name,
                    d->kernel_names[k]);
      break;
    case CGRT_KERNEL_MODULE: s = load_module_kernel(g, k, v); break;
    }
    if (s != CGRT_OK)
      return s;
  }
  return find_driver(g);
}

static cgrt_status build(cgrt_graph *g, void *const *externs, const cgrt_options *o) {
  const cgrt_graph_desc *d = g->d;
  uint32_t nargs = 0;
  for (uint32_t n = 0; n < d->nnodes; n++)
    if (d->nodes[n].arg + d->nodes[n].nargs > nargs)
      nargs = d->nodes[n].arg + d->nodes[n].nargs;
  g->words = (d->nscalars + 63) / 64;
  g->base = xcalloc(d->nbuffers, sizeof *g->base);
  g->values = xcalloc(d->nscalars, sizeof *g->values);
  g->pending = xcalloc(g->words, sizeof *g->pending);
  cgrt_status s = plan_updates(g);
  if (s != CGRT_OK)
    return s;
  if (d->nloads || g->nupdates || g->ngrids) {
    uint32_t memory = g->ngrids; /* pairs: a scalar's value, or a node's grid */
    for (uint32_t i = 0; i < d->nscalars; i++)
      memory += d->scalars[i].memory || g->dev_scalar[i];
    g->load_cap = memory <= 8 ? 8 : memory <= 64 ? 64 : memory <= 512 ? 512 : LOADS_MOST;
    unsigned room = atomic_load_explicit(&upload_room, memory_order_relaxed);
    g->load_room = room && room < g->load_cap ? room : g->load_cap;
    g->loads = xcalloc(1, CGRT_LOADS_BYTES(g->load_cap));
    if (!g->loads)
      return no_memory(d);
  }
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
  s = number_graphs(g);
  if (s != CGRT_OK)
    return s;
  for (uint32_t i = 0; i < nargs; i++)
    g->param_ptrs[i] = &g->params[i];
  for (uint32_t i = 0; i < d->nscalars; i++)
    g->values[i] = d->scalars[i].init;
  if (d->collectives && (s = join_comm(g, o->comm)) != CGRT_OK)
    return s;
  for (uint32_t i = 0, e = 0; i < d->nbuffers; i++) {
    const cgrt_buffer_desc *b = &d->buffers[i];
    if (!is_extern(buffer_kind(b)))
      continue;
    if ((s = check_pointer(d, b, externs[e])) != CGRT_OK)
      return s;
    g->base[i] = externs[e++];
  }
  if ((s = alloc_memory(g)) != CGRT_OK || (s = init_memory(g)) != CGRT_OK ||
      (s = index_uses(g)) != CGRT_OK || (s = find_kernels(g)) != CGRT_OK)
    return s;
  g->upload = o->upload;
  if ((s = make_graph(g, o->stream)) != CGRT_OK)
    return s;
  return CGRT_OK;
}

/* g becomes a member of pool, if it can be one. */
static cgrt_status join_pool(cgrt_graph *g, cgrt_pool *pool) {
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
  pool->members++;
  return CGRT_OK;
}

cgrt_status cgrt_create(cgrt_graph **out, const cgrt_graph_desc *d, void *const *externs,
                        const cgrt_options *opt) {
  if (!out)
    return invalid(d, "create: the result pointer is NULL");
  *out = NULL;
  if (d->abi != CGRT_ABI)
    return invalid(d, "generated for runtime ABI %d, but this runtime is ABI %d", d->abi,
                   CGRT_ABI);
  cgrt_status s = check_desc(d);
  if (s != CGRT_OK)
    return s;
  cgrt_options o = CGRT_OPTIONS_INIT;
  if (opt)
    o = *opt;
  int previous = 0;
  cudaError_t err = CU(cudaGetDevice(&previous));
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
    s = o.pool ? join_pool(g, o.pool) : CGRT_OK;
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

/* ---- use ---- */

/* Captures capture node v again and gives the executable graph the new
 * work, if it has the shape of what the graph was built with (*reshaped
 * stays 0); otherwise the graph is left as it was and *reshaped is 1. */
static cgrt_status update_capture(cgrt_graph *g, uint32_t v, int *reshaped) {
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
  drop_graph(child);
  return s;
}

/* Gives node n the current bindings and values in the executable graph:
 * a control node's condition kernels, which hold its operands' addresses,
 * a capture node's work captured again (*reshaped: see update_capture),
 * or the node itself. */
static cgrt_status update_node(cgrt_graph *g, uint32_t n, int *reshaped) {
  NodeParams p;
  if (is_captured(node_kind(&g->d->nodes[n])))
    return update_capture(g, n, reshaped);
  if (!is_control(node_kind(&g->d->nodes[n]))) {
    unsigned grid[3] = {1, 1, 1};
    cgrt_status s;
    if (g->d->nodes[n].grid_expr && (s = check_grid(g, n, grid)) != CGRT_OK)
      return s;
    if (grid[0] && grid[1] && grid[2]) { /* a disabled node gets its parameters when enabled */
      node_params(g, n, 0, &p);
      if ((s = set_params(g, n, &p, g->nodes[n])) != CGRT_OK)
        return s;
    }
    return g->d->nodes[n].grid_expr ? enable_grid(g, n, grid) : CGRT_OK;
  }
  for (unsigned step = 0; step < 2; step++)
    if (g->evals[2 * n + step]) {
      node_params(g, n, step, &p);
      cgrt_status s = set_params(g, n, &p, g->evals[2 * n + step]);
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
static void next_pass(cgrt_graph *g) {
  if (++g->epoch == 0) {
    memset(g->stamp, 0, g->d->nnodes * sizeof *g->stamp);
    g->epoch = 1;
  }
}

/* The grids of the dev_grid nodes that follow the scalars set since the
 * last launch, checked (a refused grid fails the launch, as on the host
 * path), and the pairs of those whose node must change: grid_queue and
 * grid_value.  Nothing is committed until the launch is issued
 * (commit_grids). */
static cgrt_status queue_grids(cgrt_graph *g) {
  const cgrt_graph_desc *d = g->d;
  g->nqueue = 0;
  next_pass(g);
  for (uint32_t i = 0; i < d->nscalars; i++) {
    if (!g->grid_dirty[i])
      continue;
    uint32_t r = d->nbuffers + d->nscalars + i;
    for (uint32_t u = g->use_start[r]; u < g->use_start[r + 1]; u++) {
      uint32_t n = g->use[u];
      if (g->stamp[n] == g->epoch)
        continue;
      g->stamp[n] = g->epoch;
      unsigned grid[3];
      cgrt_status s = check_grid(g, n, grid);
      if (s != CGRT_OK)
        return s;
      const uint32_t *has = &g->grid_dims[3 * n];
      uint64_t value;
      if (!grid[0] || !grid[1] || !grid[2]) {
        if (g->grid_off[n])
          continue; /* off already */
        value = CGRT_GRID_OFF;
      } else {
        if (!g->grid_off[n] && grid[0] == has[0] && grid[1] == has[1] && grid[2] == has[2])
          continue; /* the grid it has */
        value = CGRT_GRID_PAIR_VALUE(grid[0], grid[1], grid[2], g->grid_off[n]);
      }
      g->grid_queue[g->nqueue] = n;
      g->grid_value[g->nqueue++] = value;
    }
  }
  return CGRT_OK;
}

/* The queued grids are what the nodes have once the launch that carries
 * them is issued (or the host set them: the slow path). */
static void commit_grids(cgrt_graph *g) {
  for (uint32_t q = 0; q < g->nqueue; q++) {
    uint32_t n = g->grid_queue[q];
    uint64_t v = g->grid_value[q];
    if (v == CGRT_GRID_OFF) {
      g->grid_off[n] = 1;
    } else {
      g->grid_dims[3 * n] = CGRT_GRID_PAIR_X(v);
      g->grid_dims[3 * n + 1] = CGRT_GRID_PAIR_Y(v);
      g->grid_dims[3 * n + 2] = CGRT_GRID_PAIR_Z(v);
      g->grid_off[n] = 0;
    }
  }
  g->nqueue = 0;
  memset(g->grid_dirty, 0, g->d->nscalars);
  g->any_grid_dirty = 0;
}

/* Puts the scalars set since the last launch into the upload's parameter
 * for the launch about to be issued, and enables the upload; with none set
 * it disables the upload, which then costs a launch nothing (*loaded: the
 * marks can go).  More than its room holds go the slow way: once every
 * launch issued has finished, straight into the slots. */
static cgrt_status upload(cgrt_graph *g, int *loaded) {
  const cgrt_graph_desc *d = g->d;
  uint32_t count = g->nqueue;
  for (uint32_t w = 0; w < g->words; w++)
    count += (uint32_t)__builtin_popcountll(g->pending[w]);
  cudaError_t err;
  if (count > g->load_room) {
    if (g->launches && (err = CU(cudaStreamSynchronize(g->last_stream))) != cudaSuccess)
      return fail(d, "cudaStreamSynchronize (more scalars set than one upload holds)", err);
    for (uint32_t i = 0; i < d->nscalars; i++)
      if (g->pending[i / 64] >> (i % 64) & 1 &&
          (err = CU(cudaMemcpy(g->dmem + g->slots + 8 * (uint64_t)i, &g->values[i], 8,
                               cudaMemcpyHostToDevice))) != cudaSuccess)
        return fail(d, "cudaMemcpy (more scalars set than one upload holds)", err);
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
        cgrt_status s = update_node(g, n, &reshaped);
        if (s != CGRT_OK)
          return s;
        g->reupload = 1;
      }
    }
    /* And the queued grids, from the host likewise. */
    for (uint32_t q = 0; q < g->nqueue; q++) {
      int reshaped = 0;
      cgrt_status s = update_node(g, g->grid_queue[q], &reshaped);
      if (s != CGRT_OK)
        return s;
      g->reupload = 1;
    }
    commit_grids(g);
    memset(g->pending, 0, g->words * sizeof *g->pending);
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

cgrt_status cgrt_launch(cgrt_graph *g, cudaStream_t stream) {
  if (!g)
    return invalid(NULL, "launch: the graph is NULL");
  const cgrt_graph_desc *d = g->d;
  cgrt_status s = check_stream(g, stream);
  if (s != CGRT_OK)
    return s;
  if (g->any_value_dirty) {
    /* A node is updated once however many of the scalars it follows were
     * set: an update takes every current value.  Each pass has its own
     * stamp, so a pass that fails leaves the next one to update again. */
    next_pass(g);
    for (uint32_t i = 0; i < d->nscalars; i++) {
      if (!g->value_dirty[i])
        continue;
      uint32_t r = d->nbuffers + i;
      int reshaped = 0; /* no capture node takes a scalar by value */
      for (uint32_t u = g->use_start[r]; u < g->use_start[r + 1]; u++) {
        uint32_t n = g->use[u];
        if (g->stamp[n] == g->epoch)
          continue;
        if ((s = update_node(g, n, &reshaped)) != CGRT_OK)
          return s; /* still dirty: the next launch tries again */
        g->stamp[n] = g->epoch;
        g->node_updates++;
      }
      g->value_dirty[i] = 0;
    }
    g->any_value_dirty = 0;
  }
  if (g->any_grid_dirty && (s = queue_grids(g)) != CGRT_OK)
    return s; /* the scalars stay marked: the next launch works them out again */
  cudaError_t err;
  int loaded = 0;
  if (g->loads && (s = upload(g, &loaded)) != CGRT_OK)
    return s; /* the marks stay for the next launch */
  if (g->reupload) {
    if ((err = CU(cudaGraphUpload(g->exec, stream))) != cudaSuccess)
      return fail(d, "cudaGraphUpload (device-updatable nodes updated from the host)", err);
    g->reupload = 0;
  }
  cgrt_pool *pool = g->pool;
  if (pool && pool->launched && pool->last_stream != stream) {
    /* The pool's previous launch may be running: wait for its stream. */
    if ((err = CU(cudaEventRecord(pool->event, pool->last_stream))) != cudaSuccess)
      return fail(d, "cudaEventRecord (the pool's previous stream)", err);
    if ((err = CU(cudaStreamWaitEvent(stream, pool->event, 0))) != cudaSuccess)
      return fail(d, "cudaStreamWaitEvent (the pool's previous stream)", err);
  }
  if ((err = CU(cudaGraphLaunch(g->exec, stream))) != cudaSuccess)
    return fail(d, "cudaGraphLaunch", err); /* the marks stay for the next launch */
  if (pool) {
    pool->launched = 1;
    pool->last_stream = stream;
  }
  g->launches++;
  g->last_stream = stream;
  if (loaded)
    memset(g->pending, 0, g->words * sizeof *g->pending);
  if (g->any_grid_dirty)
    commit_grids(g);
  return CGRT_OK;
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
  cudaError_t err =
      CU(cudaMemcpyAsync(scratch, g->dmem + g->slots + 8 * (uint64_t)i, d->scalars[i].size,
                         cudaMemcpyDeviceToHost, g->last_stream));
  if (err != cudaSuccess)
    return fail(d, "cudaMemcpyAsync", err);
  if ((err = CU(cudaStreamSynchronize(g->last_stream))) != cudaSuccess)
    return fail(d, "cudaStreamSynchronize", err);
  memcpy(value, scratch, d->scalars[i].size);
  return CGRT_OK;
}

/* The graph built again from the tables with the current bindings, put
 * in place of the one there, which stays whole if this fails: after a
 * bind gave a capture node's work another shape.  Every capture function
 * runs again and the graph is instantiated (and uploaded) anew, as at
 * create. */
static cgrt_status rebuild(cgrt_graph *g) {
  const cgrt_graph_desc *d = g->d;
  size_t controls = 0;
  for (uint32_t v = 0; v < d->nnodes; v++)
    controls += is_control(node_kind(&d->nodes[v]));
  size_t per_node = controls ? d->nnodes : 0;
  cudaGraph_t graph = g->graph, *bodies = g->bodies;
  cudaGraphExec_t exec = g->exec;
  cudaGraphNode_t *nodes = g->nodes, *evals = g->evals, loader = g->loader;
  int loader_on = g->loader_on;
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
                      : make_graph(g, g->capture_stream);
  int ok = s == CGRT_OK;
  /* Drop the graph that lost: the old one, or the new one and whatever
   * of it was made. */
  cudaGraphExec_t drop_exec = ok ? exec : g->exec;
  cudaGraph_t drop = ok ? graph : g->graph;
  if (drop_exec && cudaGraphExecDestroy(drop_exec) == cudaSuccess)
    account(-1, 0);
  drop_graph(drop);
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
  g->bodies = bodies;
  g->handles = handles;
  g->shapes = shapes;
  g->updates = updates;
  if (g->loads)
    memcpy(g->loads, &head, sizeof head);
  return s;
}

/* Moves every node that uses buffer b to its new base; `old` is where it
 * was, for putting back the nodes already moved when one fails. */
static cgrt_status move_uses(cgrt_graph *g, uint32_t b, unsigned char *old) {
  cgrt_status s = CGRT_OK;
  int reshaped = 0;
  uint32_t u;
  for (u = g->use_start[b]; u < g->use_start[b + 1]; u++)
    if ((s = update_node(g, g->use[u], &reshaped)) != CGRT_OK || reshaped)
      break;
  if (s == CGRT_OK && reshaped)
    s = rebuild(g); /* every node at once, from the new bindings */
  if (s == CGRT_OK)
    return CGRT_OK;
  /* Put back the nodes already moved, so the graph stays whole; the
   * failed one too, since a control node's first condition kernel may
   * have moved before its second failed.  The message stays the
   * failure's. */
  char msg[sizeof last_error];
  memcpy(msg, last_error, sizeof msg);
  g->base[b] = old;
  for (uint32_t v = g->use_start[b]; v <= u && v < g->use_start[b + 1]; v++)
    update_node(g, g->use[v], &reshaped);
  memcpy(last_error, msg, sizeof msg);
  return s;
}

cgrt_status cgrt_bind(cgrt_graph *g, uint32_t b, void *ptr) {
  if (!g)
    return invalid(NULL, "bind: the graph is NULL");
  const cgrt_graph_desc *d = g->d;
  cgrt_status s = check_pointer(d, &d->buffers[b], ptr);
  if (s != CGRT_OK)
    return s;
  /* A capture function enqueues its work on the graph's device. */
  int captures = 0, previous = g->device;
  for (uint32_t u = g->use_start[b]; u < g->use_start[b + 1]; u++)
    captures |= is_captured(node_kind(&d->nodes[g->use[u]]));
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
  if (g->pool)
    g->pool->members--;
  xfree(g);
}

/* ---- pools ---- */

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
  if (err != cudaSuccess)
    return fail_pool("cudaGetDevice", err);
  if (device != CGRT_CURRENT_DEVICE && device != previous &&
      (err = CU(cudaSetDevice(device))) != cudaSuccess)
    return fail_pool("cudaSetDevice", err);
  cgrt_status s = CGRT_OK;
  cgrt_pool *p = xcalloc(1, sizeof *p);
  if (!p) {
    snprintf(last_error, sizeof last_error, "cgrt_pool_create: out of host memory");
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
  if (p->members)
    return invalid(NULL, "cgrt_pool_destroy: %ld graph%s still use%s the pool; destroy them first",
                   p->members, p->members == 1 ? "" : "s", p->members == 1 ? "s" : "");
  release_pool(p);
  return CGRT_OK;
}

size_t cgrt_pool_size(const cgrt_pool *p) { return p ? p->bytes : 0; }
