// cgrt_kernels.cu: the runtime's own kernels.
#include <cstdint>

// Copies the launch scalars set since the previous launch from the host
// ring into their device slots.  Launch i reads ring entry i % entries:
// a mask of the scalars set, then every scalar's value.  Launches of one
// executable graph run in issue order, so the device's launch counter and
// the host's agree.
extern "C" __global__ void cgrt_load_scalars(const volatile unsigned long long *ring,
                                             unsigned entries, unsigned words, unsigned n,
                                             unsigned long long *counter,
                                             unsigned long long *slots) {
  __shared__ unsigned long long k;
  if (threadIdx.x == 0) {
    k = *counter;
    *counter = k + 1;
  }
  __syncthreads();
  const volatile unsigned long long *e = ring + (k % entries) * (words + n);
  for (unsigned i = threadIdx.x; i < n; i += blockDim.x) {
    // Both loads before either is used: one trip to host memory, not two.
    unsigned long long mask = e[i / 64], value = e[words + i];
    if (mask >> (i % 64) & 1)
      slots[i] = value;
  }
}

// The single entry of a graph with many: a launch then starts one kernel,
// and the rest follow on the device.
extern "C" __global__ void cgrt_entry(void) {}

// fill of 8-byte elements whose halves differ, which a memset node cannot do.
extern "C" __global__ void cgrt_fill64(unsigned long long *dst, unsigned long long value,
                                       unsigned long long n) {
  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
       i += (unsigned long long)gridDim.x * blockDim.x)
    dst[i] = value;
}
