// Kernels of types.cgraph: y = x + *p + v in each element type.
#include "types_graph.h"

#define ADD(name, T)                                                              \
  extern "C" __global__ void add_##name(const T *x, const T *p, T v, T *y, uint32_t n) { \
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;                             \
    if (i < n)                                                                      \
      y[i] = (T)(x[i] + *p + v);                                                    \
  }

ADD(i8, int8_t)
ADD(i16, int16_t)
ADD(i32, int32_t)
ADD(i64, int64_t)
ADD(u8, uint8_t)
ADD(u16, uint16_t)
ADD(u32, uint32_t)
ADD(u64, uint64_t)
ADD(f32, float)
ADD(f64, double)

extern "C" __global__ void add_f16(const __half *x, const __half *p, __half v, __half *y, uint32_t n) {
  uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = __float2half(__half2float(x[i]) + __half2float(*p) + __half2float(v));
}

extern "C" __global__ void add_bf16(const __nv_bfloat16 *x, const __nv_bfloat16 *p, __nv_bfloat16 v,
                                    __nv_bfloat16 *y, uint32_t n) {
  uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = __float2bfloat16(__bfloat162float(x[i]) + __bfloat162float(*p) + __bfloat162float(v));
}
