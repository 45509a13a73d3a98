// loops.cu: what a loop on the device costs an iteration, by hand, and
// what the runtime's condition kernels add to it.  Every way runs 1,024
// ticks of one small kernel on one buffer (tick_count: a block of 32
// threads, each adding 1 to its float, thread 0 counting the tick), and
// the time of a launch, divided by 1,024, is the cost of a tick:
//
//   chain           1,024 tick nodes, one after the other (no loop)
//   while_set1      a WHILE node whose body is one kernel that ticks and
//                   sets the handle (what cgc's `handle` parameter builds)
//   while_cond1     a WHILE node whose body is a tick, then a condition
//                   kernel written for `it < limit`
//   while_cgrt1     ... then the runtime's kernel for one comparison
//                   (cgrt_cond1_kernel), what cgc builds for `while it < n`
//   while_generic1  ... then the runtime's general condition kernel
//                   (cgrt_cond), which cgc builds for conditions of two or
//                   more comparisons
//   tail_set1       no conditional node: a graph of one kernel that ticks
//                   and, while it < limit, launches its own graph again
//                   (cudaGetCurrentGraphExec, cudaStreamGraphTailLaunch)
//   tail_cond1      a graph of a tick, then a kernel that relaunches it
//   while_set16     a WHILE body of 16 ticks, the last setting the handle
//   while_cgrt16    a WHILE body of 16 ticks, then cgrt's one-comparison kernel
//   tail_set16      16 ticks, the last relaunching the graph
//
// The ways take turns, 21 rounds; the median.  After every launch the
// counter must say 1,024.  Prints CSV rows "loops,1024_ticks,way,
// per_tick_us,value" like bench/bench.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "cgrt_cond.h"
#include "check.h"

// The runtime's condition kernels (runtime/cgrt_kernels.cu): only their
// host stubs' addresses are used here, as the runtime does.
extern "C" void cgrt_cond(void);

enum { TICKS = 1024, THREADS = 32, ROUNDS = 21 };

__global__ void tick_count(float *x, uint32_t *it) {
  x[threadIdx.x] += 1.0f;
  if (threadIdx.x == 0)
    *it += 1;
}

__global__ void tick_set(float *x, uint32_t *it, uint32_t limit, cudaGraphConditionalHandle h) {
  x[threadIdx.x] += 1.0f;
  if (threadIdx.x == 0) {
    uint32_t v = *it + 1;
    *it = v;
    cudaGraphSetConditional(h, v < limit);
  }
}

__global__ void cond_lt(const uint32_t *it, uint32_t limit, cudaGraphConditionalHandle h) {
  cudaGraphSetConditional(h, *it < limit);
}

// A relaunch that fails leaves the counter short of TICKS, which the
// check after every launch catches.
__global__ void tick_tail(float *x, uint32_t *it, uint32_t limit) {
  x[threadIdx.x] += 1.0f;
  if (threadIdx.x == 0) {
    uint32_t v = *it + 1;
    *it = v;
    if (v < limit)
      cudaGraphLaunch(cudaGetCurrentGraphExec(), cudaStreamGraphTailLaunch);
  }
}

__global__ void cond_tail(const uint32_t *it, uint32_t limit) {
  if (*it < limit)
    cudaGraphLaunch(cudaGetCurrentGraphExec(), cudaStreamGraphTailLaunch);
}

// Adds kernel f(args) of `threads` threads after `dep` (none if null).
static cudaGraphNode_t add(cudaGraph_t g, cudaGraphNode_t dep, const void *f, void **args,
                           unsigned threads) {
  cudaKernelNodeParams p = {};
  p.func = const_cast<void *>(f);
  p.gridDim = dim3(1);
  p.blockDim = dim3(threads);
  p.kernelParams = args;
  cudaGraphNode_t n;
  CUDA(cudaGraphAddKernelNode(&n, g, dep ? &dep : nullptr, dep ? 1 : 0, &p));
  return n;
}

enum Cond { SET, HAND, CGRT1, GENERIC };

// A WHILE loop of `body` ticks a round, checked at its end by `cond`; the
// handle starts at 1, so the first round runs without a check before it.
static cudaGraph_t while_graph(int body, Cond cond, float *x, uint32_t *it) {
  cudaGraph_t g;
  CUDA(cudaGraphCreate(&g, 0));
  cudaGraphConditionalHandle h;
  CUDA(cudaGraphConditionalHandleCreate(&h, g, 1, cudaGraphCondAssignDefault));
  cudaGraphNodeParams c = {};
  c.type = cudaGraphNodeTypeConditional;
  c.conditional.handle = h;
  c.conditional.type = cudaGraphCondTypeWhile;
  c.conditional.size = 1;
  cudaGraphNode_t loop;
  CUDA(cudaGraphAddNode(&loop, g, nullptr, nullptr, 0, &c));
  cudaGraph_t b = c.conditional.phGraph_out[0];
  uint32_t limit = TICKS;
  void *ticks[] = {&x, &it}, *set[] = {&x, &it, &limit, &h}, *lt[] = {&it, &limit, &h};
  cgrt_cond_args ga = {};
  ga.operand[0] = reinterpret_cast<uintptr_t>(it);
  ga.operand[1] = limit;
  ga.imm = 2;
  ga.step = 1;
  ga.code[0] = CGRT_COND_COMPARE(CGRT_U32, CGRT_CMP_LT, 0);
  ga.ncode = 1;
  cgrt_cond1_args a1 = {};
  a1.operand[0] = ga.operand[0];
  a1.operand[1] = ga.operand[1];
  a1.imm = ga.imm;
  a1.step = 1;
  a1.code = ga.code[0];
  void *generic[] = {&h, &ga}, *one[] = {&h, &a1};
  cudaGraphNode_t last = nullptr;
  for (int i = 0; i < body; i++) {
    if (i == body - 1 && cond == SET)
      last = add(b, last, (const void *)tick_set, set, THREADS);
    else
      last = add(b, last, (const void *)tick_count, ticks, THREADS);
  }
  if (cond == HAND)
    add(b, last, (const void *)cond_lt, lt, 1);
  else if (cond == CGRT1)
    add(b, last, (const void *)cgrt_cond1_kernel(a1.code), one, 1);
  else if (cond == GENERIC)
    add(b, last, (const void *)cgrt_cond, generic, 1);
  return g;
}

// The same loop without a conditional node: the graph's last kernel
// launches the graph again while the count is short.
static cudaGraph_t tail_graph(int body, bool fused, float *x, uint32_t *it) {
  cudaGraph_t g;
  CUDA(cudaGraphCreate(&g, 0));
  uint32_t limit = TICKS;
  void *ticks[] = {&x, &it}, *tail[] = {&x, &it, &limit}, *cond[] = {&it, &limit};
  cudaGraphNode_t last = nullptr;
  for (int i = 0; i < body; i++) {
    if (i == body - 1 && fused)
      last = add(g, last, (const void *)tick_tail, tail, THREADS);
    else
      last = add(g, last, (const void *)tick_count, ticks, THREADS);
  }
  if (!fused)
    add(g, last, (const void *)cond_tail, cond, 1);
  return g;
}

static cudaGraph_t chain_graph(float *x, uint32_t *it) {
  cudaGraph_t g;
  CUDA(cudaGraphCreate(&g, 0));
  void *ticks[] = {&x, &it};
  cudaGraphNode_t last = nullptr;
  for (int i = 0; i < TICKS; i++)
    last = add(g, last, (const void *)tick_count, ticks, THREADS);
  return g;
}

int main() {
  cudaStream_t s;
  CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  float *x;
  uint32_t *it;
  CUDA(cudaMalloc(&x, THREADS * sizeof *x));
  CUDA(cudaMalloc(&it, sizeof *it));
  CUDA(cudaMemset(x, 0, THREADS * sizeof *x));
  struct Way {
    const char *name;
    cudaGraph_t graph;
    bool device_launch; // instantiated for launches from the device
  } ways[] = {
      {"chain", chain_graph(x, it), false},
      {"while_set1", while_graph(1, SET, x, it), false},
      {"while_cond1", while_graph(1, HAND, x, it), false},
      {"while_cgrt1", while_graph(1, CGRT1, x, it), false},
      {"while_generic1", while_graph(1, GENERIC, x, it), false},
      {"tail_set1", tail_graph(1, true, x, it), true},
      {"tail_cond1", tail_graph(1, false, x, it), true},
      {"while_set16", while_graph(16, SET, x, it), false},
      {"while_cgrt16", while_graph(16, CGRT1, x, it), false},
      {"tail_set16", tail_graph(16, true, x, it), true},
  };
  const int n = sizeof ways / sizeof ways[0];
  std::vector<cudaGraphExec_t> exec(n);
  for (int w = 0; w < n; w++) {
    unsigned long long flags = ways[w].device_launch ? cudaGraphInstantiateFlagDeviceLaunch : 0;
    CUDA(cudaGraphInstantiateWithFlags(&exec[w], ways[w].graph, flags));
    CUDA(cudaGraphUpload(exec[w], s)); // a device launch needs the graph on the device
  }
  cudaEvent_t start, stop;
  CUDA(cudaEventCreate(&start));
  CUDA(cudaEventCreate(&stop));
  std::vector<std::vector<double>> t(n);
  for (int r = -2; r < ROUNDS; r++) // two rounds of warm-up
    for (int i = 0; i < n; i++) {
      int w = (i + (r < 0 ? 0 : r)) % n;
      CUDA(cudaMemsetAsync(it, 0, sizeof *it, s));
      CUDA(cudaEventRecord(start, s));
      CUDA(cudaGraphLaunch(exec[w], s));
      CUDA(cudaEventRecord(stop, s));
      CUDA(cudaEventSynchronize(stop));
      uint32_t count = 0;
      CUDA(cudaMemcpy(&count, it, sizeof count, cudaMemcpyDeviceToHost));
      if (count != TICKS) {
        std::fprintf(stderr, "bench_loops: %s ran %u ticks, not %d\n", ways[w].name, count, TICKS);
        return 1;
      }
      float ms;
      CUDA(cudaEventElapsedTime(&ms, start, stop));
      if (r >= 0)
        t[w].push_back(ms * 1e3 / TICKS);
    }
  std::printf("section,case,way,metric,value\n");
  for (int w = 0; w < n; w++) {
    std::sort(t[w].begin(), t[w].end());
    std::printf("loops,1024_ticks,%s,per_tick_us,%.4f\n", ways[w].name, t[w][t[w].size() / 2]);
  }
  for (int w = 0; w < n; w++) {
    CUDA(cudaGraphExecDestroy(exec[w]));
    CUDA(cudaGraphDestroy(ways[w].graph));
  }
  CUDA(cudaEventDestroy(start));
  CUDA(cudaEventDestroy(stop));
  CUDA(cudaFree(x));
  CUDA(cudaFree(it));
  CUDA(cudaStreamDestroy(s));
  return 0;
}
