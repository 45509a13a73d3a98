// scale.cuh: a template header for the diagnostics tests.
template <typename T, int K> __global__ void scale(T *x, float s, unsigned n);
