// device_nodes.cu: what device-updatable kernel nodes cost a launch.  A
// graph of K independent small kernels after an entry kernel, twice: plain
// and with every one of the K device-updatable
// (cudaLaunchAttributeDeviceUpdatableKernelNode), which cgrt does to the
// nodes whose by-value scalars or grids the scalar upload writes on the
// device.  Host time of a launch, 200 issued back to back, the two graphs
// taking turns for 21 rounds, the median.  Prints CSV rows
// "device_nodes,K_nodes,way,host_us,value" like bench/bench.
#include <cuda_runtime.h>

#include <cstdio>
#include <vector>

#include "check.h"
#include "timing.h"

__global__ void entry() {}

__global__ void tick(float *x) {
  if (threadIdx.x == 0)
    x[blockIdx.x] += 1;
}

static cudaGraphExec_t make(int k, bool updatable, float *x, cudaStream_t s) {
  cudaGraph_t g;
  CUDA(cudaGraphCreate(&g, 0));
  cudaKernelNodeParams p = {};
  p.func = (void *)entry;
  p.gridDim = dim3(1);
  p.blockDim = dim3(32);
  cudaGraphNode_t first;
  CUDA(cudaGraphAddKernelNode(&first, g, nullptr, 0, &p));
  for (int i = 0; i < k; i++) {
    float *xi = x + 32 * i;
    void *args[] = {&xi};
    cudaKernelNodeParams q = {};
    q.func = (void *)tick;
    q.gridDim = dim3(1);
    q.blockDim = dim3(32);
    q.kernelParams = args;
    cudaGraphNode_t n;
    CUDA(cudaGraphAddKernelNode(&n, g, &first, 1, &q));
    if (updatable) {
      cudaLaunchAttributeValue a = {};
      a.deviceUpdatableKernelNode.deviceUpdatable = 1;
      CUDA(cudaGraphKernelNodeSetAttribute(n, cudaLaunchAttributeDeviceUpdatableKernelNode, &a));
    }
  }
  cudaGraphExec_t exec;
  CUDA(cudaGraphInstantiate(&exec, g, 0));
  CUDA(cudaGraphUpload(exec, s)); // required before the first launch of device-updatable nodes
  CUDA(cudaStreamSynchronize(s));
  CUDA(cudaGraphDestroy(g));
  return exec;
}

int main() {
  cudaStream_t s;
  CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  float *x;
  CUDA(cudaMalloc(&x, 32 * 128 * sizeof(float)));
  static const char *const ways[] = {"plain", "device_updatable"};
  std::printf("section,case,way,metric,value\n");
  for (int k : {8, 16, 32, 48, 56, 64, 100}) {
    cudaGraphExec_t exec[2] = {make(k, false, x, s), make(k, true, x, s)};
    std::vector<double> host[2];
    for (int r = 0; r < 21; r++)
      for (int i = 0; i < 2; i++) {
        int w = (i + r) % 2;
        CUDA(cudaStreamSynchronize(s));
        double t0 = bench_now_us();
        for (int j = 0; j < 200; j++)
          CUDA(cudaGraphLaunch(exec[w], s));
        host[w].push_back((bench_now_us() - t0) / 200);
        CUDA(cudaStreamSynchronize(s));
      }
    for (int w = 0; w < 2; w++) {
      char name[32];
      std::snprintf(name, sizeof name, "%d_nodes", k);
      bench_row("device_nodes", name, ways[w], "host_us",
                bench_median(host[w].data(), (int)host[w].size()));
      CUDA(cudaGraphExecDestroy(exec[w]));
    }
  }
  CUDA(cudaFree(x));
  CUDA(cudaStreamDestroy(s));
  return 0;
}
