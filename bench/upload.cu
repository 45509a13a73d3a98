// upload.cu: ways a launch scalar set on the host can reach device memory
// before a graph's nodes read it, written by hand and timed in one run.
// Prints CSV rows "upload,K_readers,way,metric,value" like bench/bench.
//
//   bare      the graph alone: an entry node, then K reader nodes
//   ring      cgrt's first design: the graph starts with a loader kernel
//             that reads the value from a ring in mapped host memory
//   params    a loader kernel that takes the value as a kernel parameter
//             (what cgrt does, disabling it in launches that follow no set),
//             updated in the executable graph before each launch
//   driver    the same update through the driver's cuGraphExecKernelNodeSetParams
//             with the kernel's CUfunction (no lookup of a host stub)
//   memop     cuStreamWriteValue64 on the stream just before the launch:
//             the GPU's front end writes the slot, no kernel and no copy
//   memcpy    cudaMemcpyAsync from pinned host memory before the launch
//
// Each way sets a new value before every launch; every reader writes what
// it read, and the last launch's value is checked.
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "timing.h"

#define CK(x)                                                                              \
  do {                                                                                     \
    cudaError_t e_ = (x);                                                                  \
    if (e_ != cudaSuccess) {                                                               \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                        \
    }                                                                                      \
  } while (0)

__global__ void entry() {}

__global__ void reader(const unsigned long long *slot, unsigned long long *out) {
  if (threadIdx.x == 0)
    out[blockIdx.x] = *slot;
}

__global__ void load_ring(const volatile unsigned long long *ring, unsigned long long *counter,
                          unsigned long long *slot) {
  unsigned long long k = *counter;
  *counter = k + 1;
  *slot = ring[k % 1024];
}

__global__ void load_param(unsigned long long value, unsigned long long *slot) { *slot = value; }

typedef CUresult (*WriteValue64)(CUstream, CUdeviceptr, cuuint64_t, unsigned int);
typedef CUresult (*ExecSetParams)(CUgraphExec, CUgraphNode, const CUDA_KERNEL_NODE_PARAMS *);

enum Way { BARE, RING, PARAMS, MEMOP, MEMCPY, DRIVER, NWAYS };
static const char *const way_names[] = {"bare", "ring", "params", "memop", "memcpy", "driver"};

struct Case {
  Way way;
  int k;
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  cudaGraphNode_t loader;
  unsigned long long *slot, *counter, *out, *ring, *staging;
  unsigned long long value, launches;
  WriteValue64 write64;
  ExecSetParams set_params;
  CUfunction load_fn;
};

static void add_kernel(cudaGraph_t g, cudaGraphNode_t *node, const cudaGraphNode_t *dep,
                       const void *f, void **args, unsigned grid) {
  cudaKernelNodeParams p = {};
  p.func = const_cast<void *>(f);
  p.gridDim = dim3(grid);
  p.blockDim = dim3(32);
  p.kernelParams = args;
  CK(cudaGraphAddKernelNode(node, g, dep, dep ? 1 : 0, &p));
}

static void make(Case &c, cudaStream_t s) {
  CK(cudaMalloc(&c.slot, 8));
  CK(cudaMalloc(&c.counter, 8));
  CK(cudaMemset(c.counter, 0, 8));
  CK(cudaMalloc(&c.out, 8 * c.k));
  CK(cudaHostAlloc(&c.ring, 1024 * 8, cudaHostAllocMapped));
  CK(cudaHostAlloc(&c.staging, 1024 * 8, cudaHostAllocDefault));
  CK(cudaGraphCreate(&c.graph, 0));
  cudaGraphNode_t first;
  if (c.way == RING) {
    unsigned long long *dring;
    CK(cudaHostGetDevicePointer((void **)&dring, c.ring, 0));
    void *args[] = {&dring, &c.counter, &c.slot};
    add_kernel(c.graph, &first, nullptr, (const void *)load_ring, args, 1);
  } else if (c.way == PARAMS || c.way == DRIVER) {
    unsigned long long v = 0;
    void *args[] = {&v, &c.slot};
    add_kernel(c.graph, &first, nullptr, (const void *)load_param, args, 1);
    c.loader = first;
  } else {
    add_kernel(c.graph, &first, nullptr, (const void *)entry, nullptr, 1);
  }
  for (int i = 0; i < c.k; i++) {
    unsigned long long *o = c.out + i;
    void *args[] = {&c.slot, &o};
    cudaGraphNode_t n;
    add_kernel(c.graph, &n, &first, (const void *)reader, args, 1);
  }
  CK(cudaGraphInstantiate(&c.exec, c.graph, 0));
  CK(cudaGraphUpload(c.exec, s));
  CK(cudaStreamSynchronize(s));
}

static void step(Case &c, cudaStream_t s) {
  unsigned long long v = ++c.value;
  switch (c.way) {
  case BARE:
    break;
  case RING:
    c.ring[c.launches % 1024] = v;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    break;
  case PARAMS: {
    void *args[] = {&v, &c.slot};
    cudaKernelNodeParams p = {};
    p.func = (void *)load_param;
    p.gridDim = dim3(1);
    p.blockDim = dim3(32);
    p.kernelParams = args;
    CK(cudaGraphExecKernelNodeSetParams(c.exec, c.loader, &p));
    break;
  }
  case DRIVER: {
    void *args[] = {&v, &c.slot};
    CUDA_KERNEL_NODE_PARAMS p = {};
    p.func = c.load_fn;
    p.gridDimX = p.gridDimY = p.gridDimZ = 1;
    p.blockDimX = 32;
    p.blockDimY = p.blockDimZ = 1;
    p.kernelParams = args;
    if (c.set_params((CUgraphExec)c.exec, (CUgraphNode)c.loader, &p) != CUDA_SUCCESS) {
      std::fprintf(stderr, "cuGraphExecKernelNodeSetParams failed\n");
      std::exit(1);
    }
    break;
  }
  case MEMOP:
    if (c.write64((CUstream)s, (CUdeviceptr)c.slot, v, 0) != CUDA_SUCCESS) {
      std::fprintf(stderr, "cuStreamWriteValue64 failed\n");
      std::exit(1);
    }
    break;
  case MEMCPY: {
    unsigned long long *h = c.staging + c.launches % 1024; // reused after 1024 launches: the
    *h = v;                                                 // runs here wait far more often
    CK(cudaMemcpyAsync(c.slot, h, 8, cudaMemcpyHostToDevice, s));
    break;
  }
  default:
    break;
  }
  CK(cudaGraphLaunch(c.exec, s));
  c.launches++;
}

int main() {
  cudaStream_t s;
  CK(cudaSetDevice(0));
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  void *f = nullptr;
  cudaDriverEntryPointQueryResult q;
  CK(cudaGetDriverEntryPointByVersion("cuStreamWriteValue64", &f, 12000, cudaEnableDefault, &q));
  if (q != cudaDriverEntryPointSuccess) {
    std::fprintf(stderr, "no cuStreamWriteValue64\n");
    return 1;
  }
  void *sp = nullptr;
  CK(cudaGetDriverEntryPointByVersion("cuGraphExecKernelNodeSetParams", &sp, 12000,
                                      cudaEnableDefault, &q));
  if (q != cudaDriverEntryPointSuccess) {
    std::fprintf(stderr, "no cuGraphExecKernelNodeSetParams\n");
    return 1;
  }
  cudaFunction_t load_fn;
  CK(cudaGetFuncBySymbol(&load_fn, (const void *)load_param));
  std::printf("section,case,way,metric,value\n");
  for (int k : {1, 10, 100}) {
    Case cases[NWAYS];
    for (int w = 0; w < NWAYS; w++) {
      cases[w] = Case{};
      cases[w].way = (Way)w;
      cases[w].k = k;
      cases[w].write64 = (WriteValue64)f;
      cases[w].set_params = (ExecSetParams)sp;
      cases[w].load_fn = (CUfunction)load_fn;
      make(cases[w], s);
    }
    char name[32];
    std::snprintf(name, sizeof name, "%d_readers", k);
    // Latency: set, launch, wait; the ways interleaved round by round.
    std::vector<double> lat[NWAYS], host[NWAYS];
    for (int w = 0; w < NWAYS; w++)
      for (int i = 0; i < 50; i++) {
        step(cases[w], s);
        CK(cudaStreamSynchronize(s));
      }
    for (int r = 0; r < 400; r++)
      for (int w0 = 0; w0 < NWAYS; w0++) {
        int w = (w0 + r) % NWAYS;
        double t0 = bench_now_us();
        step(cases[w], s);
        CK(cudaStreamSynchronize(s));
        lat[w].push_back(bench_now_us() - t0);
      }
    // Host cost: 200 set-and-launch calls issued without waiting.
    for (int r = 0; r < 11; r++)
      for (int w = 0; w < NWAYS; w++) {
        CK(cudaStreamSynchronize(s));
        double t0 = bench_now_us();
        for (int i = 0; i < 200; i++)
          step(cases[w], s);
        host[w].push_back((bench_now_us() - t0) / 200);
        CK(cudaStreamSynchronize(s));
      }
    for (int w = 0; w < NWAYS; w++) {
      std::vector<unsigned long long> out(k);
      CK(cudaMemcpy(out.data(), cases[w].out, 8 * k, cudaMemcpyDeviceToHost));
      for (int i = 0; i < k && w != BARE; i++)
        if (out[i] != cases[w].value) {
          std::fprintf(stderr, "%s: reader %d read %llu, the last value set was %llu\n",
                       way_names[w], i, out[i], cases[w].value);
          return 1;
        }
      bench_row("upload", name, way_names[w], "latency_us",
                bench_median(lat[w].data(), (int)lat[w].size()));
      bench_row("upload", name, way_names[w], "host_us",
                bench_median(host[w].data(), (int)host[w].size()));
      CK(cudaGraphExecDestroy(cases[w].exec));
      CK(cudaGraphDestroy(cases[w].graph));
      CK(cudaFree(cases[w].slot));
      CK(cudaFree(cases[w].counter));
      CK(cudaFree(cases[w].out));
      CK(cudaFreeHost(cases[w].ring));
      CK(cudaFreeHost(cases[w].staging));
    }
  }
  CK(cudaStreamDestroy(s));
  return 0;
}
