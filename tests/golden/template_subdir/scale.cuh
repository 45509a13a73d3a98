// The header template_subdir/kernels.cgraph names.
template <typename T, int N>
__global__ void scale(T *x, float s, unsigned n) {
  if (threadIdx.x < n)
    x[threadIdx.x] = (T)((float)x[threadIdx.x] * s * N);
}
