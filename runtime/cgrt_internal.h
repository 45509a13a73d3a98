/* cgrt_internal.h: what the runtime's files share; not installed.
 *
 * The runtime builds, launches, rebinds and destroys the graphs cgc
 * describes, a file a concern (doc/internals.md has the map).
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

#ifndef CGRT_INTERNAL_H
#define CGRT_INTERNAL_H

#include "cgrt.h"
#include "cgrt_cond.h"
#include "cgrt_testing.h"

#include <cuda.h> /* the driver's types, for kernel node updates (find_driver) */

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What these files share is hidden: the shared library exports only the
 * runtime's API (cgrt.h, cgrt_testing.h, declared above). */
#pragma GCC visibility push(hidden)

enum {
  LOADS_MOST = 2048, /* scalars set between two launches that the upload's parameter holds */
  ALIGN = 256,      /* alignment of every owned buffer */
  BIG_SMEM = 48 * 1024,
  PORTABLE_CLUSTER = 8, /* blocks in a cluster without opting in to non-portable sizes */
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

static inline NodeKind node_kind(const cgrt_node_desc *nd) { return (NodeKind)nd->kind; }
static inline BufferKind buffer_kind(const cgrt_buffer_desc *b) { return (BufferKind)b->kind; }
static inline ArgKind arg_kind(const cgrt_arg_desc *a) { return (ArgKind)a->kind; }

/* How a kind of node goes into the graph. */
typedef enum NodeAdd {
  ADD_PARAMS,  /* a kernel, memcpy or memset node from node_params */
  ADD_CONTROL, /* its handle, the kernel that sets it, a conditional node with bodies */
  ADD_CAPTURE  /* a child graph of work a stream capture made */
} NodeAdd;

/* Whose work a capture node's stream capture makes. */
typedef enum Captured { NOT_CAPTURED, CAPTURE_FUNCTION, CAPTURE_COLLECTIVE } Captured;

/* What the runtime knows of a kind of node: a row a kind in
 * cgrt_node_kinds (cgrt_kinds.c), so that a test of what a node does
 * reads its row instead of naming kinds. */
typedef struct NodeKindInfo {
  const char *name; /* as cgc spells it; NULL: no such kind */
  NodeAdd add;
  enum cudaGraphConditionalNodeType cond; /* ADD_CONTROL: the conditional node's type */
  Captured captured;
  uint8_t runs_kernel;      /* a user's kernel: kernel index, attributes, grid, shared memory;
                               may end a programmatic edge, take a while's handle */
  uint8_t device_updatable; /* the upload may update it on the device (plan_updates) */
  uint8_t repeats;          /* a loop: its body may end in its condition again, count its
                               iterations against a bound, or set its handle itself */
  uint8_t cases;            /* a table of cases in device memory, which its kernel searches */
} NodeKindInfo;

enum { NODE_KINDS = CGRT_COLLECTIVE_NODE + 1 /* the last cgrt_node_kind, plus one */ };
extern const NodeKindInfo cgrt_node_kinds[NODE_KINDS];

/* Node nd's row; its kind was checked at create (check_desc). */
static inline const NodeKindInfo *kind_of(const cgrt_node_desc *nd) {
  return &cgrt_node_kinds[nd->kind];
}

/* Where kernel k comes from: linked in unless the tables say otherwise. */
static inline KernelKind kernel_kind(const cgrt_graph_desc *d, uint32_t k) {
  return d->kernel_from ? (KernelKind)d->kernel_from[k].kind : CGRT_KERNEL_LINKED;
}

/* A while, if or switch: a conditional node, its handle and the kernels
 * that evaluate its condition. */
static inline int is_control(const cgrt_node_desc *nd) { return kind_of(nd)->add == ADD_CONTROL; }
/* The blocks of a node's cluster, and whether the node is launched in
 * clusters at all: a cluster of one block is what a launch without the
 * attribute gets, so none is set for it, and the node then also runs on a
 * GPU without clusters (`cluster(min(8, B))` where B is 1; BENCHMARKS.md,
 * run BF, times it). */
static inline uint64_t cluster_blocks(const cgrt_node_desc *nd) {
  return nd->has_cluster ? (uint64_t)nd->cluster[0] * nd->cluster[1] * nd->cluster[2] : 1;
}
static inline int in_clusters(const cgrt_node_desc *nd) { return cluster_blocks(nd) > 1; }

/* Passed in by the caller, so bound at create and rebound by bind. */
static inline int is_extern(BufferKind kind) {
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
extern void cgrt_fill64(void), cgrt_fill_elems(void);
extern void cgrt_entry(void);
extern void cgrt_cond(void);
extern void cgrt_switch(void);

struct cgrt_pool {
  int device;
  unsigned char *mem;
  size_t bytes;
  atomic_long members;     /* graphs created with it and not yet destroyed: members
                              may be destroyed from several threads at once */
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
  /* Recorded behind each launch on the per-thread default stream, whose
   * handle names another stream in every thread: what get and the slow
   * upload wait for then (cgrt_after_launches).  Made at the first such
   * launch; done_last: it was recorded behind the last launch. */
  cudaEvent_t done;
  int done_last;
  cudaStream_t checked_stream; /* a stream known to be on the graph's device */
  cudaStream_t capture_stream; /* where capture functions run, made at the first */
  uint64_t *shapes;        /* per node: a capture node's captured work, hashed */
  uint8_t *grid_off;       /* per node: disabled in exec, its grid having an extent 0 */
  const void **funcs;      /* per kernel this graph uses: what a kernel node runs (a
                              host stub's address, or a module's cudaKernel_t) */
  cudaLibrary_t *libraries; /* per module this graph uses: loaded once at create */
  int upload;              /* opt.upload at create: a rebuilt graph is uploaded too */
  unsigned safe;           /* CGRT_SAFE_*: features left out for compute-sanitizer */
  uint32_t *walk_order;    /* CGRT_SAFE_STREAM: each graph's nodes in an order that keeps */
  uint32_t *walk_start;    /*   its edges, graph k's from walk_start[k] (cgrt_walk.c) */
  uint32_t nprogrammatic;  /* edges that went in as programmatic, counted for a test */
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
  uint64_t slot, table, result; /* cgrt_switch */
  unsigned selector_type, ncases, fallback;
  void *ptrs[7];
} NodeParams;

static inline const void *kernel_address(cgrt_kernel k) {
  const void *p;
  memcpy(&p, &k, sizeof p);
  return p;
}

/* ---- errors, accounting and the fault hook (cgrt_errors.c) ---- */


/* This thread's last failure (cgrt_last_error), its CUDA calls and the
 * call the fault hook fails; what the runtime holds, in every thread. */
extern _Thread_local char cgrt_error_text[1024];
extern _Thread_local long cgrt_calls, cgrt_fail_at;
extern atomic_long cgrt_live;
extern atomic_llong cgrt_held_bytes;


/* Every CUDA call goes through this, so the fault hook reaches it. */
#define CU(call) (++cgrt_calls == cgrt_fail_at ? cudaErrorMemoryAllocation : (call))

/* A resource taken (+1) or given back (-1), with its bytes of device or
 * pinned host memory. */
static inline void account(long n, uint64_t bytes) {
  atomic_fetch_add_explicit(&cgrt_live, n, memory_order_relaxed);
  atomic_fetch_add_explicit(&cgrt_held_bytes, n * (long long)bytes, memory_order_relaxed);
}

static inline void *xcalloc(size_t n, size_t size) {
  void *p = calloc(n ? n : 1, size ? size : 1);
  if (p)
    account(1, 0);
  return p;
}

static inline void xfree(void *p) {
  if (p) {
    account(-1, 0);
    free(p);
  }
}

static inline cgrt_status fail_node(const cgrt_graph_desc *d, const cgrt_node_desc *n,
                                    const char *call, cudaError_t err) {
  if (n)
    snprintf(cgrt_error_text, sizeof cgrt_error_text, "%s:%u:%u: node %s: %s: %s (%s)", d->source,
             n->line, n->col, n->name, call, cudaGetErrorString(err), cudaGetErrorName(err));
  else
    snprintf(cgrt_error_text, sizeof cgrt_error_text, "%s: graph %s: %s: %s (%s)", d->source,
             d->name, call, cudaGetErrorString(err), cudaGetErrorName(err));
  return CGRT_ERROR_CUDA;
}

static inline cgrt_status fail(const cgrt_graph_desc *d, const char *call, cudaError_t err) {
  return fail_node(d, NULL, call, err);
}

/* CGRT_ERROR_INVALID, the error text "SOURCE: graph NAME: " (where d is
 * given), then `at`, then what fmt formats from ap. */
static inline cgrt_status vinvalid(const cgrt_graph_desc *d, const char *at, const char *fmt,
                                   va_list ap) {
  char msg[512];
  size_t n = strlen(at) < sizeof msg ? strlen(at) : sizeof msg - 1;
  memcpy(msg, at, n);
  vsnprintf(msg + n, sizeof msg - n, fmt, ap);
  if (d)
    snprintf(cgrt_error_text, sizeof cgrt_error_text, "%s: graph %s: %s", d->source, d->name, msg);
  else
    snprintf(cgrt_error_text, sizeof cgrt_error_text, "%s", msg);
  return CGRT_ERROR_INVALID;
}

static inline cgrt_status invalid(const cgrt_graph_desc *d, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  cgrt_status st = vinvalid(d, "", fmt, ap);
  va_end(ap);
  return st;
}

static inline cgrt_status no_memory(const cgrt_graph_desc *d) {
  snprintf(cgrt_error_text, sizeof cgrt_error_text, "%s: graph %s: out of host memory", d->source,
           d->name);
  return CGRT_ERROR_NO_MEMORY;
}

const char *cgrt_no_gpu(void);

/* ---- the tables checked (cgrt_check.c) ---- */

cgrt_status cgrt_check_desc(const cgrt_graph_desc *d);

/* ---- create's memory (cgrt_memory.c) ---- */

cgrt_status cgrt_check_pointer(const cgrt_graph_desc *d, const cgrt_buffer_desc *b, void *p);
cgrt_status cgrt_alloc_memory(cgrt_graph *g);
cgrt_status cgrt_init_memory(cgrt_graph *g);

/* ---- kernels (cgrt_modules.c) ---- */

cgrt_status cgrt_find_kernels(cgrt_graph *g);

/* ---- a module kernel's parameter count (cgrt_module_params.c) ---- */

/* 1 and *count from module md's metadata for kernel `symbol`, or 0 where
 * the module does not say (a compressed fatbin). */
int cgrt_module_params(const cgrt_module_desc *md, const char *symbol, uint32_t *count);

/* ---- node parameters (cgrt_params.c) ---- */

void **cgrt_kernel_args(cgrt_graph *g, const cgrt_node_desc *nd);
void cgrt_node_grid(const cgrt_graph *g, uint32_t v, unsigned grid[3]);
void cgrt_node_params(cgrt_graph *g, uint32_t v, unsigned step, NodeParams *p);
cgrt_status cgrt_add_params(cgrt_graph *g, uint32_t v, const NodeParams *p, cudaGraphNode_t *node,
                            cudaGraph_t graph, const cudaGraphNode_t *deps, size_t ndeps);
cudaError_t cgrt_update_kernel(cgrt_graph *g, cudaGraphNode_t node,
                               const struct cudaKernelNodeParams *p, CUfunction f);
cgrt_status cgrt_set_params(cgrt_graph *g, uint32_t v, const NodeParams *p, cudaGraphNode_t node);

/* ---- grids that follow scalars (cgrt_grids.c) ---- */

int cgrt_eval_grid(const cgrt_graph *g, uint32_t v, int64_t ext[3], int *which);
cgrt_status cgrt_check_grid(const cgrt_graph *g, uint32_t v, unsigned grid[3]);
cgrt_status cgrt_enable_grid(cgrt_graph *g, uint32_t v, const unsigned grid[3]);
cgrt_status cgrt_apply_grids(cgrt_graph *g);
cgrt_status cgrt_queue_grids(cgrt_graph *g);
void cgrt_commit_grids(cgrt_graph *g);

/* ---- capture nodes (cgrt_capture.c) ---- */

void cgrt_drop_graph(cudaGraph_t graph);
cgrt_status cgrt_add_capture(cgrt_graph *g, uint32_t v, cudaGraph_t graph,
                             const cudaGraphNode_t *deps, size_t ndeps);
cgrt_status cgrt_update_capture(cgrt_graph *g, uint32_t v, int *reshaped);
cgrt_status cgrt_enqueue_work(cgrt_graph *g, uint32_t v, cudaStream_t stream);

/* ---- the scalar upload and device updates (cgrt_upload.c) ---- */

int cgrt_used_by(const cgrt_graph_desc *d, const cgrt_node_desc *nd, uint32_t r, uint32_t i,
                 int by_value);
cgrt_status cgrt_index_uses(cgrt_graph *g);
cgrt_status cgrt_plan_updates(cgrt_graph *g);
cgrt_status cgrt_write_updates(cgrt_graph *g);
cgrt_status cgrt_add_loader(cgrt_graph *g, cudaGraph_t graph, const cudaGraphNode_t *deps,
                            size_t ndeps);
cgrt_status cgrt_device_updatable(cgrt_graph *g, uint32_t v);
cgrt_status cgrt_upload(cgrt_graph *g, int *loaded);

/* ---- building the graph (cgrt_build.c) ---- */

cgrt_status cgrt_number_graphs(cgrt_graph *g);
cgrt_status cgrt_make_graph(cgrt_graph *g, cudaStream_t stream);
cgrt_status cgrt_rebuild(cgrt_graph *g);

/* ---- launches without the graph: CGRT_SAFE_STREAM (cgrt_walk.c) ---- */

cgrt_status cgrt_plan_walk(cgrt_graph *g);
cgrt_status cgrt_walk(cgrt_graph *g, cudaStream_t stream);

/* ---- launch, set, bind (cgrt_launch.c) ---- */

cgrt_status cgrt_update_node(cgrt_graph *g, uint32_t n, int *reshaped);
void cgrt_next_pass(cgrt_graph *g);
cgrt_status cgrt_after_launches(cgrt_graph *g, cudaStream_t *stream, const char *why);
cgrt_status cgrt_wait_launches(cgrt_graph *g, const char *why);

/* ---- pools (cgrt_pool.c) ---- */

cgrt_status cgrt_join_pool(cgrt_graph *g, cgrt_pool *pool);

#pragma GCC visibility pop

#endif
