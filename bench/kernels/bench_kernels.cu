// The benchmarks' kernels: small, so that launch and graph overheads show.
// Stream launches, stream capture, hand-written graphs, cgc's graphs and
// PyTorch's graphs all run these same definitions.
#include <cstdint>

extern "C" __global__ void tick(float *x, uint32_t n) {
  uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] += 1.0f;
}

extern "C" __global__ void tick_ptr(float *x, const uint32_t *s, uint32_t n) {
  uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] += (float)*s;
}

extern "C" __global__ void tick_val(float *x, uint32_t s, uint32_t n) {
  uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] += (float)s;
}

// Busy-waits about ns nanoseconds, then ticks: work long enough for
// independent branches to overlap.
extern "C" __global__ void spin_tick(float *x, uint64_t ns) {
  uint64_t start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  while (now - start < ns);
  x[threadIdx.x] += 1.0f;
}

// The same tick as a pdl kernel: it waits for its predecessors first.
extern "C" __global__ void tick_pdl(float *x, uint32_t n) {
#if __CUDA_ARCH__ >= 900
  cudaGridDependencySynchronize();
  cudaTriggerProgrammaticLaunchCompletion();
#endif
  uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] += 1.0f;
}

// A large kernel: one pass over n floats.
extern "C" __global__ void sweep(float *x, uint32_t n) {
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    x[i] = x[i] * 0.5f + 1.0f;
}

extern "C" __global__ void sweep_pdl(float *x, uint32_t n) {
#if __CUDA_ARCH__ >= 900
  cudaGridDependencySynchronize();
  cudaTriggerProgrammaticLaunchCompletion();
#endif
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    x[i] = x[i] * 0.5f + 1.0f;
}

// ---- loops ----

extern "C" __global__ void set_u32(uint32_t *s, uint32_t v) { *s = v; }

extern "C" __global__ void tick_count(float *x, uint32_t *it, uint32_t n) {
  uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] += 1.0f;
  if (i == 0)
    *it += 1;
}

// The hand-written while loop's kernels: the body kernel itself sets the
// condition, so an iteration is one kernel (cgc's check1 loop runs a
// condition kernel after the body's last node instead; its loop_handle
// graph passes the handle to its body's kernel, as here).
extern "C" __global__ void hand_loop_start(uint32_t *it, uint32_t limit,
                                           cudaGraphConditionalHandle h) {
  *it = 0;
  cudaGraphSetConditional(h, 0 < limit);
}

// An iteration: x += 1, the count advanced, and the loop's handle set to
// go on while the count is under limit.
static __device__ void tick_and_set(float *x, uint32_t *it, uint32_t n, uint32_t limit,
                                    cudaGraphConditionalHandle h) {
  uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] += 1.0f;
  if (i == 0) {
    uint32_t v = *it + 1;
    *it = v;
    cudaGraphSetConditional(h, v < limit);
  }
}

extern "C" __global__ void hand_loop_body(float *x, uint32_t *it, uint32_t n, uint32_t limit,
                                          cudaGraphConditionalHandle h) {
  tick_and_set(x, it, n, limit, h);
}

// cgc's loop whose body sets the handle (graph loop_handle): the same work
// as hand_loop_body, with the handle passed by cgc.
extern "C" __global__ void tick_count_set(float *x, uint32_t *it, uint32_t n, uint32_t limit,
                                          cudaGraphConditionalHandle h) {
  tick_and_set(x, it, n, limit, h);
}
