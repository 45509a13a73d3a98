// raw_probes.cu: minimal programs on the CUDA graph API alone, one feature
// of those cgc's runtime uses (or a combination) each, to find which of
// them compute-sanitizer's racecheck and synccheck cannot run (README.md
// beside this file).  `raw_probes NAME` runs probe NAME and checks what it
// computed (exit 0; 1 on a wrong result or a failed call, which it names;
// 77 when the GPU lacks what the probe needs, or there is no GPU);
// `raw_probes --list` prints the names.
//
// Every kernel's barriers are uniform and its shared memory is used
// race-free, so a clean tool must report nothing.
#include <cooperative_groups.h>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "check.h"

namespace {

constexpr unsigned THREADS = 256; // smem_sum's block
constexpr unsigned BLOCKS = 8;
constexpr unsigned N = THREADS * BLOCKS;
constexpr unsigned ITERATIONS = 20; // of the loops
// The long loops' body: as wide as samples/solver's (264 blocks) and run
// LONG times.
constexpr unsigned WIDE = 264, LONG = 1000;

// ---- kernels ----

// part[b] = the sum of block b's THREADS values of x (each 1.0f): a tree in
// shared memory, barriers every thread reaches.
__device__ void block_sum(const float *x, float *part) {
  __shared__ float s[THREADS];
  s[threadIdx.x] = x[blockIdx.x * THREADS + threadIdx.x];
  __syncthreads();
  for (unsigned half = THREADS / 2; half > 0; half /= 2) {
    if (threadIdx.x < half)
      s[threadIdx.x] += s[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0)
    part[blockIdx.x] = s[0];
}

__global__ void smem_sum(const float *x, float *part) { block_sum(x, part); }

// smem_sum that also counts its runs in *it and, in one thread of block 0,
// sets the loop's handle: go on while *it < n (the body sets the handle
// itself, as a cgc kernel that takes a `handle` argument does).
__global__ void smem_sum_set(const float *x, float *part, unsigned *it, unsigned n,
                             cudaGraphConditionalHandle h) {
  block_sum(x, part);
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    unsigned v = *it + 1;
    *it = v;
    cudaGraphSetConditional(h, v < n ? 1u : 0u);
  }
}

// test_handle's step: 32 threads, one of which counts and sets the handle.
__global__ void step_set(unsigned *it, unsigned n, cudaGraphConditionalHandle h) {
  if (threadIdx.x != 0)
    return;
  unsigned v = *it + 1;
  *it = v;
  cudaGraphSetConditional(h, v < n ? 1u : 0u);
}

__global__ void put(unsigned *x, unsigned v) { *x = v; }
__global__ void count(unsigned *x) { *x += 1; }
__global__ void fill_f32(float *x, float v, unsigned n) {
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    x[i] = v;
}
__global__ void fill_u16(uint16_t *x, uint16_t v, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    x[i] = v;
}

// What cgrt's condition kernels do: the handle set from `*it < n` by one
// thread (the others of a wider launch do nothing).  With a bound (max),
// the iterations are counted in *counter, reset before the first (step 0)
// and stopped at the bound, as cgrt_kernels.cu's set_handle does.
__global__ void cond_lt(cudaGraphConditionalHandle h, const unsigned *it, unsigned n,
                        unsigned long long *counter, unsigned long long max, unsigned step) {
  if (threadIdx.x != 0 || blockIdx.x != 0)
    return;
  bool go = *it < n;
  if (max) {
    unsigned long long c = step ? *counter + 1 : 0;
    *counter = c;
    go = go && c < max;
  }
  cudaGraphSetConditional(h, go ? 1u : 0u);
}

// A switch's handle: body `which`.
__global__ void cond_switch(cudaGraphConditionalHandle h, unsigned which) {
  cudaGraphSetConditional(h, which);
}

// Programmatic dependent launch exists from sm_90 on; built for an older
// GPU the kernels neither wait nor let their dependents start early.
__device__ __forceinline__ void pdl_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  cudaGridDependencySynchronize();
#endif
}
__device__ __forceinline__ void pdl_trigger() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  cudaTriggerProgrammaticLaunchCompletion();
#endif
}

// pdl: the producer lets its dependent start early; the consumer waits for
// it before it reads (cudaGridDependencySynchronize).
__global__ void pdl_producer(float *x, float v) {
  x[blockIdx.x * blockDim.x + threadIdx.x] = v;
  __threadfence();
  pdl_trigger();
}
__global__ void pdl_consumer(const float *x, float *part) {
  pdl_wait();
  block_sum(x, part);
}

// Device-updatable nodes: the loader writes `value` into the target's
// parameter (offset 8: after its pointer), or sets its grid and enables it.
__global__ void write_value(unsigned *out, unsigned value) {
  if (threadIdx.x == 0)
    atomicAdd(out, value);
}
__global__ void load_param(cudaGraphDeviceNode_t node, unsigned value) {
  if (cudaGraphKernelNodeSetParam(node, 8, &value, sizeof value) != cudaSuccess)
    __trap();
}
__global__ void load_grid(cudaGraphDeviceNode_t node, unsigned blocks) {
  if (cudaGraphKernelNodeSetGridDim(node, dim3(blocks, 1, 1)) != cudaSuccess ||
      cudaGraphKernelNodeSetEnabled(node, true) != cudaSuccess)
    __trap();
}

// A cluster of 2 blocks: block 1 writes its sum into block 0's shared
// memory (distributed shared memory), as samples/dense_block's attention
// does.  Clusters exist from compute capability 9.0 on: built for an older
// GPU the kernel has no cluster and traps, and cluster_ready() says no.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#define PROBE_CLUSTER_DIMS
#else
#define PROBE_CLUSTER_DIMS __cluster_dims__(2, 1, 1)
#endif
__global__ void PROBE_CLUSTER_DIMS cluster_sum(const float *x, float *out) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
  (void)x;
  (void)out;
  __trap();
#else
  namespace cg = cooperative_groups;
  cg::cluster_group cluster = cg::this_cluster();
  __shared__ float s[THREADS];
  __shared__ float other;
  s[threadIdx.x] = x[blockIdx.x * THREADS + threadIdx.x];
  __syncthreads();
  for (unsigned half = THREADS / 2; half > 0; half /= 2) {
    if (threadIdx.x < half)
      s[threadIdx.x] += s[threadIdx.x + half];
    __syncthreads();
  }
  cluster.sync(); // block 0's `other` may be written
  if (cluster.block_rank() == 1 && threadIdx.x == 0)
    *cluster.map_shared_rank(&other, 0) = s[0];
  cluster.sync();
  if (cluster.block_rank() == 0 && threadIdx.x == 0)
    out[blockIdx.x / 2] = s[0] + other;
#endif
}

// ---- the host side ----

// The device memory a probe uses: x (WIDE * THREADS ones), part (WIDE
// sums), it and the bound's counter.
struct Mem {
  float *x, *part;
  unsigned *it;
  unsigned long long *counter;
};

void alloc_mem(Mem *m) {
  CUDA(cudaMalloc(&m->x, WIDE * THREADS * sizeof(float)));
  CUDA(cudaMalloc(&m->part, WIDE * sizeof(float)));
  CUDA(cudaMalloc(&m->it, sizeof(unsigned)));
  CUDA(cudaMalloc(&m->counter, sizeof(unsigned long long)));
  fill_f32<<<WIDE, THREADS>>>(m->x, 1.0f, WIDE * THREADS);
  CUDA(cudaGetLastError());
  CUDA(cudaMemset(m->part, 0, WIDE * sizeof(float)));
  CUDA(cudaMemset(m->it, 0, sizeof(unsigned)));
  CUDA(cudaDeviceSynchronize());
}

void free_mem(Mem *m) {
  CUDA(cudaFree(m->x));
  CUDA(cudaFree(m->part));
  CUDA(cudaFree(m->it));
  CUDA(cudaFree(m->counter));
}

// Whether every part holds `want`; says which does not.
int parts_are(const Mem *m, float want, const char *what) {
  float part[BLOCKS];
  CUDA(cudaMemcpy(part, m->part, sizeof part, cudaMemcpyDeviceToHost));
  for (unsigned b = 0; b < BLOCKS; b++)
    if (part[b] != want) {
      fprintf(stderr, "%s: part[%u] is %g, not %g\n", what, b, part[b], want);
      return 1;
    }
  return 0;
}

unsigned read_u32(const unsigned *p) {
  unsigned v;
  CUDA(cudaMemcpy(&v, p, sizeof v, cudaMemcpyDeviceToHost));
  return v;
}

// A kernel node with up to 6 parameters (their addresses in `args`).
cudaGraphNode_t add_kernel(cudaGraph_t graph, const void *func, unsigned grid, unsigned block,
                           void **args, const cudaGraphNode_t *deps, size_t ndeps) {
  cudaKernelNodeParams p{};
  p.func = const_cast<void *>(func);
  p.gridDim = dim3(grid, 1, 1);
  p.blockDim = dim3(block, 1, 1);
  p.kernelParams = args;
  cudaGraphNode_t node;
  CUDA(cudaGraphAddKernelNode(&node, graph, deps, ndeps, &p));
  return node;
}

cudaGraphNode_t add_smem_sum(cudaGraph_t graph, Mem *m, const cudaGraphNode_t *deps, size_t ndeps,
                             unsigned blocks = BLOCKS) {
  void *args[] = {&m->x, &m->part};
  return add_kernel(graph, (const void *)smem_sum, blocks, THREADS, args, deps, ndeps);
}

// A conditional node of `type` with `nbodies` bodies after `deps`; its
// handle in *h (made before, by the caller, in `graph`), its bodies in
// bodies[].
cudaGraphNode_t add_conditional(cudaGraph_t graph, cudaGraphConditionalHandle h,
                                cudaGraphConditionalNodeType type, unsigned nbodies,
                                cudaGraph_t *bodies, const cudaGraphNode_t *deps, size_t ndeps) {
  // In C++ the struct's union has no default constructor: zeroed bytes.
  alignas(cudaGraphNodeParams) unsigned char bytes[sizeof(cudaGraphNodeParams)];
  memset(bytes, 0, sizeof bytes);
  cudaGraphNodeParams *c = reinterpret_cast<cudaGraphNodeParams *>(bytes);
  c->type = cudaGraphNodeTypeConditional;
  c->conditional.handle = h;
  c->conditional.type = type;
  c->conditional.size = nbodies;
  cudaGraphNode_t node;
  CUDA(cudaGraphAddNode(&node, graph, deps, NULL, ndeps, c));
  for (unsigned b = 0; b < nbodies; b++)
    bodies[b] = c->conditional.phGraph_out[b];
  return node;
}

// The condition kernel cond_lt after `deps`, `threads` wide.
cudaGraphNode_t add_cond(cudaGraph_t graph, cudaGraphConditionalHandle *h, Mem *m, unsigned *n,
                         unsigned long long *max, unsigned *step, unsigned threads,
                         const cudaGraphNode_t *deps, size_t ndeps) {
  void *args[] = {h, &m->it, n, &m->counter, max, step};
  return add_kernel(graph, (const void *)cond_lt, 1, threads, args, deps, ndeps);
}

// Instantiates, uploads and launches the graph `launches` times, waits,
// and destroys both.
void run_graph(cudaGraph_t graph, int launches) {
  cudaGraphExec_t exec;
  cudaStream_t stream;
  CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  CUDA(cudaGraphInstantiate(&exec, graph, 0));
  CUDA(cudaGraphUpload(exec, stream));
  for (int i = 0; i < launches; i++)
    CUDA(cudaGraphLaunch(exec, stream));
  CUDA(cudaStreamSynchronize(stream));
  CUDA(cudaGraphExecDestroy(exec));
  CUDA(cudaGraphDestroy(graph));
  CUDA(cudaStreamDestroy(stream));
}

// ---- the probes ----

// smem_sum on a stream, no graph: the tools' baseline.
int stream_smem(Mem *m) {
  smem_sum<<<BLOCKS, THREADS>>>(m->x, m->part);
  CUDA(cudaGetLastError());
  CUDA(cudaDeviceSynchronize());
  return parts_are(m, THREADS, "stream_smem");
}

// smem_sum as a graph's one kernel node.
int graph_smem(Mem *m) {
  cudaGraph_t g;
  CUDA(cudaGraphCreate(&g, 0));
  add_smem_sum(g, m, NULL, 0);
  run_graph(g, 2);
  return parts_are(m, THREADS, "graph_smem");
}

// A kernel node disabled in the executable graph (cgrt disables the
// scalar upload in launches that follow no set), then smem_sum.
int graph_disabled_node(Mem *m) {
  cudaGraph_t g;
  cudaGraphExec_t exec;
  cudaStream_t stream;
  unsigned v = 7;
  CUDA(cudaGraphCreate(&g, 0));
  void *args[] = {&m->it, &v};
  cudaGraphNode_t first = add_kernel(g, (const void *)put, 1, 32, args, NULL, 0);
  add_smem_sum(g, m, &first, 1);
  CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  CUDA(cudaGraphInstantiate(&exec, g, 0));
  CUDA(cudaGraphNodeSetEnabled(exec, first, 0));
  CUDA(cudaGraphLaunch(exec, stream));
  CUDA(cudaGraphNodeSetEnabled(exec, first, 1));
  CUDA(cudaGraphLaunch(exec, stream));
  CUDA(cudaStreamSynchronize(stream));
  CUDA(cudaGraphExecDestroy(exec));
  CUDA(cudaGraphDestroy(g));
  CUDA(cudaStreamDestroy(stream));
  unsigned it = read_u32(m->it);
  if (it != 7) {
    fprintf(stderr, "graph_disabled_node: it is %u, not 7\n", it);
    return 1;
  }
  return parts_are(m, THREADS, "graph_disabled_node");
}

// A kernel node's parameters updated in the executable graph between
// launches (cgrt's by-value scalars and the upload's parameter).
int exec_set_params(Mem *m) {
  cudaGraph_t g;
  cudaGraphExec_t exec;
  cudaStream_t stream;
  unsigned v = 1;
  CUDA(cudaGraphCreate(&g, 0));
  void *args[] = {&m->it, &v};
  cudaGraphNode_t node = add_kernel(g, (const void *)put, 1, 32, args, NULL, 0);
  add_smem_sum(g, m, &node, 1);
  CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  CUDA(cudaGraphInstantiate(&exec, g, 0));
  for (v = 1; v <= 3; v++) {
    cudaKernelNodeParams p{};
    p.func = (void *)put;
    p.gridDim = dim3(1, 1, 1);
    p.blockDim = dim3(32, 1, 1);
    p.kernelParams = args;
    CUDA(cudaGraphExecKernelNodeSetParams(exec, node, &p));
    CUDA(cudaGraphLaunch(exec, stream));
  }
  CUDA(cudaStreamSynchronize(stream));
  CUDA(cudaGraphExecDestroy(exec));
  CUDA(cudaGraphDestroy(g));
  CUDA(cudaStreamDestroy(stream));
  unsigned it = read_u32(m->it);
  if (it != 3) {
    fprintf(stderr, "exec_set_params: it is %u, not 3\n", it);
    return 1;
  }
  return parts_are(m, THREADS, "exec_set_params");
}

// memset and memcpy nodes around smem_sum (cgc's fill and copy).
int memset_memcpy(Mem *m) {
  cudaGraph_t g;
  float *y;
  CUDA(cudaMalloc(&y, N * sizeof(float)));
  CUDA(cudaGraphCreate(&g, 0));
  cudaMemsetParams ms;
  memset(&ms, 0, sizeof ms);
  ms.dst = m->part;
  ms.value = 0;
  ms.elementSize = 4;
  ms.width = BLOCKS;
  ms.height = 1;
  cudaGraphNode_t set, copy;
  CUDA(cudaGraphAddMemsetNode(&set, g, NULL, 0, &ms));
  CUDA(cudaGraphAddMemcpyNode1D(&copy, g, &set, 1, y, m->x, N * sizeof(float),
                                cudaMemcpyDeviceToDevice));
  void *args[] = {&y, &m->part};
  add_kernel(g, (const void *)smem_sum, BLOCKS, THREADS, args, &copy, 1);
  run_graph(g, 2);
  CUDA(cudaFree(y));
  return parts_are(m, THREADS, "memset_memcpy");
}

// smem_sum captured on a stream into a child graph node (cgc's capture
// nodes).
int child_graph(Mem *m) {
  cudaGraph_t g, child;
  cudaStream_t s;
  CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  smem_sum<<<BLOCKS, THREADS, 0, s>>>(m->x, m->part);
  CUDA(cudaGetLastError());
  CUDA(cudaStreamEndCapture(s, &child));
  CUDA(cudaGraphCreate(&g, 0));
  cudaGraphNode_t node;
  CUDA(cudaGraphAddChildGraphNode(&node, g, NULL, 0, child));
  CUDA(cudaGraphDestroy(child));
  CUDA(cudaStreamDestroy(s));
  run_graph(g, 2);
  return parts_are(m, THREADS, "child_graph");
}

// An if node whose body is smem_sum; a one-thread kernel sets its handle.
int if_smem(Mem *m) {
  cudaGraph_t g, body;
  cudaGraphConditionalHandle h;
  unsigned n = 1, step = 0;
  unsigned long long max = 0;
  CUDA(cudaGraphCreate(&g, 0));
  CUDA(cudaGraphConditionalHandleCreate(&h, g, 0, 0));
  CUDA(cudaMemset(m->it, 0, sizeof(unsigned)));
  cudaGraphNode_t cond = add_cond(g, &h, m, &n, &max, &step, 1, NULL, 0);
  add_conditional(g, h, cudaGraphCondTypeIf, 1, &body, &cond, 1);
  add_smem_sum(body, m, NULL, 0);
  run_graph(g, 2);
  return parts_are(m, THREADS, "if_smem");
}

// A switch node of two bodies, the second smem_sum (chosen).
int switch_smem(Mem *m) {
  cudaGraph_t g, bodies[2];
  cudaGraphConditionalHandle h;
  unsigned which = 1;
  CUDA(cudaGraphCreate(&g, 0));
  CUDA(cudaGraphConditionalHandleCreate(&h, g, 0, 0));
  void *args[] = {&h, &which};
  cudaGraphNode_t cond = add_kernel(g, (const void *)cond_switch, 1, 1, args, NULL, 0);
  add_conditional(g, h, cudaGraphCondTypeSwitch, 2, bodies, &cond, 1);
  unsigned v = 5;
  void *put_args[] = {&m->it, &v};
  add_kernel(bodies[0], (const void *)put, 1, 1, put_args, NULL, 0);
  add_smem_sum(bodies[1], m, NULL, 0);
  run_graph(g, 2);
  return parts_are(m, THREADS, "switch_smem");
}

// The loops.  A while node after a condition kernel (step 0) whose body
// is `body_kind`:
//   TAIL: the body's nodes (smem_sum if `smem`), count(it), then the
//         condition kernel again (step 1), `cond_threads` wide: what cgc
//         makes of `while it < n { ... }`;
//   SETS: smem_sum_set (or, without smem, test_handle's step_set), which
//         sets the handle itself: cgc's `handle` argument.
// `max` bounds the loop as cgc's `max` does; `pdl` makes the edge from a
// producer to smem_sum (then pdl_consumer) in the body programmatic;
// `blocks` is the width of the body's kernels (0: BLOCKS).
enum BodyKind { TAIL, SETS };
struct Loop {
  BodyKind kind;
  int smem, pdl;
  unsigned n, cond_threads;
  unsigned long long max;
  unsigned blocks;
};

// The loop's nodes into `graph` after deps; returns the while node.
cudaGraphNode_t add_loop(cudaGraph_t graph, Mem *m, const Loop *l, cudaGraphConditionalHandle *h,
                         unsigned *n, unsigned long long *max, unsigned *step0, unsigned *step1,
                         const cudaGraphNode_t *deps, size_t ndeps) {
  cudaGraph_t body;
  *n = l->n;
  *max = l->max;
  *step0 = 0;
  *step1 = 1;
  CUDA(cudaGraphConditionalHandleCreate(h, graph, 0, 0));
  cudaGraphNode_t cond = add_cond(graph, h, m, n, max, step0, l->cond_threads, deps, ndeps);
  cudaGraphNode_t loop = add_conditional(graph, *h, cudaGraphCondTypeWhile, 1, &body, &cond, 1);
  unsigned blocks = l->blocks ? l->blocks : BLOCKS;
  if (l->kind == SETS) {
    if (l->smem) {
      void *args[] = {&m->x, &m->part, &m->it, n, h};
      add_kernel(body, (const void *)smem_sum_set, blocks, THREADS, args, NULL, 0);
    } else {
      void *args[] = {&m->it, n, h};
      add_kernel(body, (const void *)step_set, 1, 32, args, NULL, 0);
    }
    return loop;
  }
  cudaGraphNode_t last = NULL;
  if (l->smem && l->pdl) {
    static float one = 1.0f;
    void *pargs[] = {&m->x, &one};
    cudaGraphNode_t prod =
        add_kernel(body, (const void *)pdl_producer, blocks, THREADS, pargs, NULL, 0);
    void *cargs[] = {&m->x, &m->part};
    last = add_kernel(body, (const void *)pdl_consumer, blocks, THREADS, cargs, NULL, 0);
    cudaGraphEdgeData e;
    memset(&e, 0, sizeof e);
    e.from_port = cudaGraphKernelNodePortProgrammatic;
    e.type = cudaGraphDependencyTypeProgrammatic;
    CUDA(cudaGraphAddDependencies(body, &prod, &last, &e, 1));
  } else if (l->smem) {
    last = add_smem_sum(body, m, NULL, 0, blocks);
  }
  void *cargs[] = {&m->it};
  cudaGraphNode_t counted =
      add_kernel(body, (const void *)count, 1, 1, cargs, last ? &last : NULL, last ? 1 : 0);
  add_cond(body, h, m, n, max, step1, l->cond_threads, &counted, 1);
  return loop;
}

// Runs loop l once from it = 0 and checks the iterations.
int run_loop(Mem *m, const Loop *l, const char *name) {
  cudaGraph_t g;
  cudaGraphConditionalHandle h;
  unsigned n, step0, step1;
  unsigned long long max;
  CUDA(cudaMemset(m->it, 0, sizeof(unsigned)));
  CUDA(cudaMemset(m->part, 0, BLOCKS * sizeof(float)));
  CUDA(cudaGraphCreate(&g, 0));
  add_loop(g, m, l, &h, &n, &max, &step0, &step1, NULL, 0);
  run_graph(g, 1);
  unsigned want = l->max && l->max < l->n ? (unsigned)l->max : l->n;
  unsigned it = read_u32(m->it);
  if (it != want) {
    fprintf(stderr, "%s: %u iterations, not %u\n", name, it, want);
    return 1;
  }
  return l->smem ? parts_are(m, THREADS, name) : 0;
}

int while_tail(Mem *m) {
  Loop l = {TAIL, 1, 0, ITERATIONS, 1, 0, 0};
  return run_loop(m, &l, "while_tail");
}
int while_tail_once(Mem *m) {
  Loop l = {TAIL, 1, 0, 1, 1, 0, 0};
  return run_loop(m, &l, "while_tail_once");
}
int while_tail_nosmem(Mem *m) {
  Loop l = {TAIL, 0, 0, ITERATIONS, 1, 0, 0};
  return run_loop(m, &l, "while_tail_nosmem");
}
int while_tail_max(Mem *m) {
  Loop l = {TAIL, 1, 0, ITERATIONS, 1, 5, 0};
  return run_loop(m, &l, "while_tail_max");
}
int while_tail_wide(Mem *m) { /* the condition kernels as wide as smem_sum's blocks */
  Loop l = {TAIL, 1, 0, ITERATIONS, THREADS, 0, 0};
  return run_loop(m, &l, "while_tail_wide");
}
int while_sets(Mem *m) {
  Loop l = {SETS, 1, 0, ITERATIONS, 1, 0, 0};
  return run_loop(m, &l, "while_sets");
}
int while_sets_nosmem(Mem *m) {
  Loop l = {SETS, 0, 0, ITERATIONS, 1, 0, 0};
  return run_loop(m, &l, "while_sets_nosmem");
}
int while_pdl(Mem *m) {
  Loop l = {TAIL, 1, 1, ITERATIONS, 1, 0, 0};
  return run_loop(m, &l, "while_pdl");
}
int while_tail_long(Mem *m) { /* samples/solver's shape */
  Loop l = {TAIL, 1, 0, LONG, 1, 0, WIDE};
  return run_loop(m, &l, "while_tail_long");
}
int while_sets_long(Mem *m) {
  Loop l = {SETS, 1, 0, LONG, 1, 0, WIDE};
  return run_loop(m, &l, "while_sets_long");
}

// A while in a while (test_control's last loop): the inner one runs
// ITERATIONS times from 0 in each of 3 outer iterations, which count in
// `outer`; no shared memory.
int while_nested(Mem *m) {
  cudaGraph_t g, body;
  cudaGraphConditionalHandle oh, ih;
  unsigned *outer;
  unsigned on = 3, zero = 0, s0 = 0, s1 = 1, in, is0, is1;
  unsigned long long omax = 0, imax;
  Mem om = *m;
  CUDA(cudaMalloc(&outer, sizeof(unsigned)));
  CUDA(cudaMemset(outer, 0, sizeof(unsigned)));
  om.it = outer;
  CUDA(cudaGraphCreate(&g, 0));
  CUDA(cudaGraphConditionalHandleCreate(&oh, g, 0, 0));
  cudaGraphNode_t cond = add_cond(g, &oh, &om, &on, &omax, &s0, 1, NULL, 0);
  add_conditional(g, oh, cudaGraphCondTypeWhile, 1, &body, &cond, 1);
  void *reset_args[] = {&m->it, &zero};
  cudaGraphNode_t reset = add_kernel(body, (const void *)put, 1, 1, reset_args, NULL, 0);
  Loop inner = {TAIL, 0, 0, ITERATIONS, 1, 0, 0};
  cudaGraphNode_t loop = add_loop(body, m, &inner, &ih, &in, &imax, &is0, &is1, &reset, 1);
  void *count_args[] = {&outer};
  cudaGraphNode_t counted = add_kernel(body, (const void *)count, 1, 1, count_args, &loop, 1);
  add_cond(body, &oh, &om, &on, &omax, &s1, 1, &counted, 1);
  run_graph(g, 1);
  unsigned o = read_u32(outer), i = read_u32(m->it);
  CUDA(cudaFree(outer));
  if (o != 3 || i != ITERATIONS) {
    fprintf(stderr, "while_nested: %u outer and %u inner iterations, not 3 and %u\n", o, i,
            ITERATIONS);
    return 1;
  }
  return 0;
}

// A while inside an if's body (test_control's `if k > 1 { while j < k }`).
int while_in_if(Mem *m) {
  cudaGraph_t g, body;
  cudaGraphConditionalHandle h, lh;
  unsigned *flag;
  unsigned n1 = 1, s0 = 0, ln, ls0, ls1;
  unsigned long long max = 0, lmax;
  Mem fm = *m;
  CUDA(cudaMalloc(&flag, sizeof(unsigned)));
  CUDA(cudaMemset(flag, 0, sizeof(unsigned)));
  fm.it = flag; /* 0 < 1: the if runs */
  CUDA(cudaGraphCreate(&g, 0));
  CUDA(cudaGraphConditionalHandleCreate(&h, g, 0, 0));
  CUDA(cudaMemset(m->it, 0, sizeof(unsigned)));
  CUDA(cudaMemset(m->part, 0, BLOCKS * sizeof(float)));
  cudaGraphNode_t cond = add_cond(g, &h, &fm, &n1, &max, &s0, 1, NULL, 0);
  add_conditional(g, h, cudaGraphCondTypeIf, 1, &body, &cond, 1);
  Loop inner = {TAIL, 1, 0, ITERATIONS, 1, 0, 0};
  add_loop(body, m, &inner, &lh, &ln, &lmax, &ls0, &ls1, NULL, 0);
  run_graph(g, 1);
  CUDA(cudaFree(flag));
  unsigned it = read_u32(m->it);
  if (it != ITERATIONS) {
    fprintf(stderr, "while_in_if: %u iterations, not %u\n", it, ITERATIONS);
    return 1;
  }
  return parts_are(m, THREADS, "while_in_if");
}

// A programmatic edge at the top: producer => consumer (cgc's pdl kernels).
int pdl(Mem *m) {
  cudaGraph_t g;
  float two = 2.0f;
  CUDA(cudaGraphCreate(&g, 0));
  void *pargs[] = {&m->x, &two};
  cudaGraphNode_t prod = add_kernel(g, (const void *)pdl_producer, BLOCKS, THREADS, pargs, NULL, 0);
  void *cargs[] = {&m->x, &m->part};
  cudaGraphNode_t cons = add_kernel(g, (const void *)pdl_consumer, BLOCKS, THREADS, cargs, NULL, 0);
  cudaGraphEdgeData e;
  memset(&e, 0, sizeof e);
  e.from_port = cudaGraphKernelNodePortProgrammatic;
  e.type = cudaGraphDependencyTypeProgrammatic;
  CUDA(cudaGraphAddDependencies(g, &prod, &cons, &e, 1));
  run_graph(g, 2);
  return parts_are(m, 2.0f * THREADS, "pdl");
}

// A device-updatable node whose parameter (offset 8) a loader kernel
// before it writes on the device (cgrt's by-value scalars taken by many
// nodes); or whose grid it sets and enables (grids that follow scalars).
int devupd(Mem *m, int grid) {
  cudaGraph_t g;
  cudaGraphExec_t exec;
  cudaStream_t stream;
  unsigned zero = 0, value = grid ? 3 : 11;
  CUDA(cudaMemset(m->it, 0, sizeof(unsigned)));
  CUDA(cudaGraphCreate(&g, 0));
  void *targs[] = {&m->it, grid ? (void *)&value : (void *)&zero};
  cudaKernelNodeParams tp{};
  tp.func = (void *)write_value;
  tp.gridDim = dim3(1, 1, 1);
  tp.blockDim = dim3(32, 1, 1);
  tp.kernelParams = targs;
  cudaGraphNode_t target;
  CUDA(cudaGraphAddKernelNode(&target, g, NULL, 0, &tp));
  cudaLaunchAttributeValue a;
  memset(&a, 0, sizeof a);
  a.deviceUpdatableKernelNode.deviceUpdatable = 1;
  CUDA(cudaGraphKernelNodeSetAttribute(target, cudaLaunchAttributeDeviceUpdatableKernelNode, &a));
  memset(&a, 0, sizeof a);
  CUDA(cudaGraphKernelNodeGetAttribute(target, cudaLaunchAttributeDeviceUpdatableKernelNode, &a));
  cudaGraphDeviceNode_t dev = a.deviceUpdatableKernelNode.devNode;
  void *largs[] = {&dev, &value};
  cudaGraphNode_t loader = add_kernel(g, grid ? (const void *)load_grid : (const void *)load_param,
                                      1, 32, largs, NULL, 0);
  CUDA(cudaGraphAddDependencies(g, &loader, &target, NULL, 1));
  add_smem_sum(g, m, &target, 1);
  CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  CUDA(cudaGraphInstantiate(&exec, g, 0));
  CUDA(cudaGraphUpload(exec, stream)); /* required of graphs with device-updatable nodes */
  CUDA(cudaGraphLaunch(exec, stream));
  CUDA(cudaStreamSynchronize(stream));
  CUDA(cudaGraphExecDestroy(exec));
  CUDA(cudaGraphDestroy(g));
  CUDA(cudaStreamDestroy(stream));
  unsigned got = read_u32(m->it), want = grid ? 3 * 3 : 11; /* grid: 3 blocks add 3 each */
  if (got != want) {
    fprintf(stderr, "devupd%s: %u, not %u\n", grid ? "_grid" : "_param", got, want);
    return 1;
  }
  return parts_are(m, THREADS, grid ? "devupd_grid" : "devupd_param");
}
int devupd_param(Mem *m) { return devupd(m, 0); }
int devupd_grid(Mem *m) { return devupd(m, 1); }

// Whether this device and build can run cluster_sum.
int cluster_ready(void) {
  int dev, major;
  cudaFuncAttributes attr;
  CUDA(cudaGetDevice(&dev));
  CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
  CUDA(cudaFuncGetAttributes(&attr, (const void *)cluster_sum));
  return major >= 9 && attr.binaryVersion >= 90;
}

// cluster_sum on a stream, or as a graph's kernel node: BLOCKS / 2
// clusters, each 2 * THREADS.
int cluster(Mem *m, int graph) {
  if (!cluster_ready()) {
    printf("cluster: skipped: needs compute capability 9.0 and a build for it\n");
    return 77;
  }
  CUDA(cudaMemset(m->part, 0, BLOCKS * sizeof(float)));
  if (graph) {
    cudaGraph_t g;
    CUDA(cudaGraphCreate(&g, 0));
    void *args[] = {&m->x, &m->part};
    add_kernel(g, (const void *)cluster_sum, BLOCKS, THREADS, args, NULL, 0);
    run_graph(g, 1);
  } else {
    cluster_sum<<<BLOCKS, THREADS>>>(m->x, m->part);
    CUDA(cudaGetLastError());
    CUDA(cudaDeviceSynchronize());
  }
  float part[BLOCKS];
  CUDA(cudaMemcpy(part, m->part, sizeof part, cudaMemcpyDeviceToHost));
  for (unsigned c = 0; c < BLOCKS / 2; c++)
    if (part[c] != 2.0f * THREADS) {
      fprintf(stderr, "cluster: cluster %u's sum is %g, not %g\n", c, part[c], 2.0f * THREADS);
      return 1;
    }
  return 0;
}
int cluster_stream(Mem *m) { return cluster(m, 0); }
int cluster_graph(Mem *m) { return cluster(m, 1); }

// samples/dense_block's first GEMM: cublasGemmEx, bf16, 3648 x 2048 times a
// vector, f32 accumulation, a 32 MB workspace; on a stream, or captured
// into a child graph node as cgc's capture nodes are.  Every w is 1/64 and
// every x 1: every y is 32.
int cublas(int graph) {
  const int M = 3648, K = 2048;
  const size_t WS = 32u << 20;
  __nv_bfloat16 *w, *x, *y;
  void *ws;
  cublasHandle_t blas;
  cudaStream_t s;
  CUDA(cudaMalloc(&w, (size_t)M * K * sizeof *w));
  CUDA(cudaMalloc(&x, K * sizeof *x));
  CUDA(cudaMalloc(&y, M * sizeof *y));
  CUDA(cudaMalloc(&ws, WS));
  fill_u16<<<256, 256>>>((uint16_t *)w, 0x3c80, (size_t)M * K); /* 1/64 */
  fill_u16<<<8, 256>>>((uint16_t *)x, 0x3f80, K);               /* 1 */
  CUDA(cudaGetLastError());
  CUDA(cudaDeviceSynchronize());
  CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  if (cublasCreate(&blas) != CUBLAS_STATUS_SUCCESS) {
    fprintf(stderr, "cublas: cublasCreate failed\n");
    return 1;
  }
  const float alpha = 1.0f, beta = 0.0f;
  cudaGraph_t child = NULL;
  if (graph)
    CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  if (cublasSetStream(blas, s) != CUBLAS_STATUS_SUCCESS ||
      cublasSetWorkspace(blas, ws, WS) != CUBLAS_STATUS_SUCCESS ||
      cublasGemmEx(blas, CUBLAS_OP_T, CUBLAS_OP_N, M, 1, K, &alpha, w, CUDA_R_16BF, K, x,
                   CUDA_R_16BF, K, &beta, y, CUDA_R_16BF, M, CUBLAS_COMPUTE_32F,
                   CUBLAS_GEMM_DEFAULT) != CUBLAS_STATUS_SUCCESS) {
    fprintf(stderr, "cublas: the GEMM failed\n");
    return 1;
  }
  if (graph) {
    CUDA(cudaStreamEndCapture(s, &child));
    cudaGraph_t g;
    cudaGraphNode_t node;
    CUDA(cudaGraphCreate(&g, 0));
    CUDA(cudaGraphAddChildGraphNode(&node, g, NULL, 0, child));
    CUDA(cudaGraphDestroy(child));
    run_graph(g, 2);
  }
  CUDA(cudaStreamSynchronize(s));
  uint16_t *host = (uint16_t *)malloc(M * sizeof *host);
  if (!host) {
    fprintf(stderr, "cublas: out of memory\n");
    return 1;
  }
  CUDA(cudaMemcpy(host, y, M * sizeof *host, cudaMemcpyDeviceToHost));
  int bad = -1;
  for (int i = 0; i < M && bad < 0; i++)
    if (host[i] != 0x4200) /* 32 */
      bad = i;
  if (bad >= 0)
    fprintf(stderr, "cublas: y[%d] has bits 0x%04x, not 0x4200 (32)\n", bad, host[bad]);
  free(host);
  if (cublasDestroy(blas) != CUBLAS_STATUS_SUCCESS) {
    fprintf(stderr, "cublas: cublasDestroy failed\n");
    return 1;
  }
  CUDA(cudaStreamDestroy(s));
  CUDA(cudaFree(w));
  CUDA(cudaFree(x));
  CUDA(cudaFree(y));
  CUDA(cudaFree(ws));
  return bad >= 0;
}
int cublas_stream(Mem *) { return cublas(0); }
int cublas_graph(Mem *) { return cublas(1); }

struct Probe {
  const char *name;
  int (*run)(Mem *);
};

const Probe probes[] = {
    {"stream_smem", stream_smem},
    {"graph_smem", graph_smem},
    {"graph_disabled_node", graph_disabled_node},
    {"exec_set_params", exec_set_params},
    {"memset_memcpy", memset_memcpy},
    {"child_graph", child_graph},
    {"if_smem", if_smem},
    {"switch_smem", switch_smem},
    {"while_tail", while_tail},
    {"while_tail_once", while_tail_once},
    {"while_tail_nosmem", while_tail_nosmem},
    {"while_tail_max", while_tail_max},
    {"while_tail_wide", while_tail_wide},
    {"while_sets", while_sets},
    {"while_sets_nosmem", while_sets_nosmem},
    {"while_pdl", while_pdl},
    {"while_tail_long", while_tail_long},
    {"while_sets_long", while_sets_long},
    {"while_nested", while_nested},
    {"while_in_if", while_in_if},
    {"pdl", pdl},
    {"devupd_param", devupd_param},
    {"devupd_grid", devupd_grid},
    {"cluster_stream", cluster_stream},
    {"cluster_graph", cluster_graph},
    {"cublas_stream", cublas_stream},
    {"cublas_graph", cublas_graph},
};

} // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: raw_probes NAME | --list\n");
    return 2;
  }
  if (!strcmp(argv[1], "--list")) {
    for (const Probe &p : probes)
      printf("%s\n", p.name);
    return 0;
  }
  const Probe *probe = NULL;
  for (const Probe &p : probes)
    if (!strcmp(argv[1], p.name))
      probe = &p;
  if (!probe) {
    fprintf(stderr, "raw_probes: no probe '%s' (--list names them)\n", argv[1]);
    return 2;
  }
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    printf("raw_probes: skipped: no GPU\n");
    return 77;
  }
  Mem m;
  alloc_mem(&m);
  int rc = probe->run(&m);
  free_mem(&m);
  if (rc == 0)
    printf("%s: ok\n", probe->name);
  return rc;
}
