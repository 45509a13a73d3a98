// cgrt_kernels.cu: the runtime's own kernels.
#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "cgrt_cond.h"

// Copies the launch scalars set since the previous launch into their
// device slots.  The values are the kernel's parameter, which the launch
// itself copies: the host updates it in the executable graph before a
// launch that follows a set, which affects only later launches, and
// disables this node in launches that follow no set, so that values
// kernels write to slots stand.
template <unsigned N> struct cgrt_loads {
  cgrt_loads_head head;
  unsigned long long value[N];
  unsigned index[N];
};
static_assert(sizeof(cgrt_loads_head) == CGRT_LOADS_HEAD, "the header's layout");
static_assert(sizeof(cgrt_loads<8>) == CGRT_LOADS_BYTES(8), "the parameter's layout");
static_assert(sizeof(cgrt_loads<2048>) == CGRT_LOADS_BYTES(2048), "the parameter's layout");

// A node's grid (a pair with CGRT_GRID_PAIR, cgrt_cond.h): set on the
// device-updatable node, or the node disabled or enabled.  A refusal
// would leave the node with a stale grid: the launch fails instead.
static __device__ void set_grid(const cgrt_value_update *u, unsigned index,
                                unsigned long long v) {
  cudaGraphDeviceNode_t node = reinterpret_cast<cudaGraphDeviceNode_t>(u[index].node);
  cudaError_t err;
  if (v == CGRT_GRID_OFF) {
    err = cudaGraphKernelNodeSetEnabled(node, false);
  } else {
    err = cudaGraphKernelNodeSetGridDim(
        node, dim3(CGRT_GRID_PAIR_X(v), CGRT_GRID_PAIR_Y(v), CGRT_GRID_PAIR_Z(v)));
    if (err == cudaSuccess && CGRT_GRID_PAIR_ENABLE(v))
      err = cudaGraphKernelNodeSetEnabled(node, true);
  }
  if (err != cudaSuccess)
    __trap();
}

template <unsigned N> static __device__ void load_scalars(const cgrt_loads<N> &a) {
  unsigned long long *slots = reinterpret_cast<unsigned long long *>(a.head.slots);
  const cgrt_value_update *u = reinterpret_cast<const cgrt_value_update *>(a.head.updates);
  for (unsigned i = threadIdx.x; i < a.head.count; i += blockDim.x)
    if (a.index[i] & CGRT_GRID_PAIR)
      set_grid(u, a.index[i] & ~CGRT_GRID_PAIR, a.value[i]);
    else
      slots[a.index[i]] = a.value[i];
  if (!a.head.starts)
    return;
  // The parameters of the nodes that take a scalar by value; those nodes
  // follow this one, and see the update in this launch.  An update the
  // driver refuses would leave a node with a stale value: the launch fails
  // instead.
  const unsigned *starts = reinterpret_cast<const unsigned *>(a.head.starts);
  for (unsigned i = 0; i < a.head.count; i++) {
    if (a.index[i] & CGRT_GRID_PAIR)
      continue;
    for (unsigned j = starts[a.index[i]] + threadIdx.x; j < starts[a.index[i] + 1]; j += blockDim.x)
      if (cudaGraphKernelNodeSetParam(reinterpret_cast<cudaGraphDeviceNode_t>(u[j].node),
                                      u[j].offset, &a.value[i], u[j].size) != cudaSuccess)
        __trap();
  }
}

// __grid_constant__: read in place from the parameter bank, never copied.
#define CGRT_LOADER(n)                                                                      \
  extern "C" __global__ void cgrt_load_scalars_##n(const __grid_constant__ cgrt_loads<n> a) { \
    load_scalars(a);                                                                        \
  }
CGRT_LOADER(8)
CGRT_LOADER(64)
CGRT_LOADER(512)
CGRT_LOADER(2048)

// The single entry of a graph with many: a launch then starts one kernel,
// and the rest follow on the device.
extern "C" __global__ void cgrt_entry(void) {}

// fill of 1-, 2- or 4-byte elements, for a launch without the graph
// (cgrt_walk.c), which has no memset node: what cudaMemsetAsync cannot do.
extern "C" __global__ void cgrt_fill_elems(void *dst, unsigned value, unsigned size,
                                           unsigned long long n) {
  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
       i += (unsigned long long)gridDim.x * blockDim.x)
    if (size == 4)
      static_cast<unsigned *>(dst)[i] = value;
    else if (size == 2)
      static_cast<unsigned short *>(dst)[i] = static_cast<unsigned short>(value);
    else
      static_cast<unsigned char *>(dst)[i] = static_cast<unsigned char>(value);
}

// fill of 8-byte elements whose halves differ, which a memset node cannot do.
extern "C" __global__ void cgrt_fill64(unsigned long long *dst, unsigned long long value,
                                       unsigned long long n) {
  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
       i += (unsigned long long)gridDim.x * blockDim.x)
    dst[i] = value;
}

// ---- conditions ----

// One operand's bits: loaded through its address, or the constant itself
// (imm).  The nodes before the condition kernel finished before it
// started, so plain loads see what they wrote.
static __device__ unsigned long long operand(unsigned long long bits, bool imm, int size) {
  if (imm)
    return bits;
  const void *p = reinterpret_cast<const void *>(bits);
  switch (size) {
  case 1: return *static_cast<const uint8_t *>(p);
  case 2: return *static_cast<const uint16_t *>(p);
  case 4: return *static_cast<const uint32_t *>(p);
  default: return *static_cast<const unsigned long long *>(p);
  }
}

template <typename T> static __device__ bool compare(int op, T x, T y) {
  switch (op) {
  case CGRT_CMP_EQ: return x == y;
  case CGRT_CMP_NE: return x != y;
  case CGRT_CMP_LT: return x < y;
  case CGRT_CMP_LE: return x <= y;
  case CGRT_CMP_GT: return x > y;
  default: return x >= y;
  }
}

static __device__ float half_bits(unsigned long long b) {
  __half_raw r;
  r.x = static_cast<unsigned short>(b);
  return __half2float(__half(r));
}

static __device__ float bfloat_bits(unsigned long long b) {
  __nv_bfloat16_raw r;
  r.x = static_cast<unsigned short>(b);
  return __bfloat162float(__nv_bfloat16(r));
}

static __device__ bool comparison(int type, int op, unsigned long long x, unsigned long long y) {
  switch (type) {
  case CGRT_I8: return compare(op, static_cast<int8_t>(x), static_cast<int8_t>(y));
  case CGRT_I16: return compare(op, static_cast<int16_t>(x), static_cast<int16_t>(y));
  case CGRT_I32: return compare(op, static_cast<int32_t>(x), static_cast<int32_t>(y));
  case CGRT_I64: return compare(op, static_cast<int64_t>(x), static_cast<int64_t>(y));
  case CGRT_U8: return compare(op, static_cast<uint8_t>(x), static_cast<uint8_t>(y));
  case CGRT_U16: return compare(op, static_cast<uint16_t>(x), static_cast<uint16_t>(y));
  case CGRT_U32: return compare(op, static_cast<uint32_t>(x), static_cast<uint32_t>(y));
  case CGRT_U64: return compare(op, x, y);
  case CGRT_F16: return compare(op, half_bits(x), half_bits(y));
  case CGRT_BF16: return compare(op, bfloat_bits(x), bfloat_bits(y));
  case CGRT_F32:
    return compare(op, __uint_as_float(static_cast<unsigned>(x)),
                   __uint_as_float(static_cast<unsigned>(y)));
  default: return compare(op, __longlong_as_double(x), __longlong_as_double(y));
  }
}

static constexpr __host__ __device__ int type_size(int type) {
  // 1, 2, 4, 8 for i8 ... u64 (two bits each), then f16, bf16, f32, f64.
  return type < CGRT_F16 ? 1 << (type & 3) : type == CGRT_F32 ? 4 : type == CGRT_F64 ? 8 : 2;
}

// One comparison, instruction c >= CGRT_COND_CMP, of operands x and y.
static __device__ bool compare_code(unsigned c, unsigned long long x, bool xi, unsigned long long y,
                                    bool yi) {
  int negate = CGRT_COND_NEGATE(c), op = CGRT_COND_OP(c), type = CGRT_COND_TYPE(c);
  int size = type_size(type);
  return comparison(type, op, operand(x, xi, size), operand(y, yi, size)) != negate;
}

// Sets the handle to `value`, or, in a launch without the graph
// (cgrt_walk.c), stores it at `result` for the host to read.
static __device__ void set_value(cudaGraphConditionalHandle handle, unsigned value,
                                 unsigned long long result) {
  if (result)
    *reinterpret_cast<unsigned *>(result) = value;
  else
    cudaGraphSetConditional(handle, value);
}

// Sets the handle from the condition's value `go`.  A bound counts the
// iterations run (step 0: before the first; 1: after one); the loop stops
// at it.
static __device__ void set_handle(cudaGraphConditionalHandle handle, bool go,
                                  unsigned long long counter, unsigned long long max,
                                  unsigned step, unsigned long long result) {
  if (max) {
    unsigned long long *c = reinterpret_cast<unsigned long long *>(counter);
    unsigned long long n = step ? *c + 1 : 0;
    *c = n;
    go = go && n < max;
  }
  set_value(handle, go ? 1u : 0u, result);
}

// Sets the handle of a while or if node from its condition: before the
// first iteration (step 0) and, in a while's body, after each (step 1).
// The stack of results is a register's bits (at most 16 are ever on it).
extern "C" __global__ void cgrt_cond(cudaGraphConditionalHandle handle, cgrt_cond_args a) {
  unsigned stack = 0, next = 0;
  for (unsigned i = 0; i < a.ncode; i++) {
    unsigned c = a.code[i];
    if (c == CGRT_COND_AND || c == CGRT_COND_OR) {
      unsigned y = stack & 1, x = stack >> 1 & 1;
      stack = (stack >> 2) << 1 | (c == CGRT_COND_AND ? x & y : x | y);
      continue;
    }
    bool r = compare_code(c, a.operand[next], a.imm >> next & 1, a.operand[next + 1],
                          a.imm >> (next + 1) & 1);
    next += 2;
    stack = stack << 1 | r;
  }
  set_handle(handle, stack & 1, a.counter, a.max, a.step, a.result);
}

// A condition of one comparison: a kernel for each type and operator,
// whose code is that comparison's few instructions.  A body's condition
// kernel runs once an iteration, and the general kernel's switches cost a
// loop about 0.3 us an iteration more than a kernel written for it on the
// H200 (bench/loops.cu); a smaller parameter alone saved 0.02.
template <int Type, int Op>
__global__ void cond1(cudaGraphConditionalHandle handle, cgrt_cond1_args a) {
  constexpr int size = type_size(Type);
  bool go = comparison(Type, Op, operand(a.operand[0], a.imm & 1, size),
                       operand(a.operand[1], a.imm >> 1 & 1, size)) != CGRT_COND_NEGATE(a.code);
  set_handle(handle, go, a.counter, a.max, a.step, a.result);
}

#define COND1_OPS(t) \
  {cond1<t, CGRT_CMP_EQ>, cond1<t, CGRT_CMP_NE>, cond1<t, CGRT_CMP_LT>, \
   cond1<t, CGRT_CMP_LE>, cond1<t, CGRT_CMP_GT>, cond1<t, CGRT_CMP_GE>}

typedef void (*cond1_kernel)(cudaGraphConditionalHandle, cgrt_cond1_args);
static_assert(CGRT_NCMP == 6, "a kernel for each operator");
static const cond1_kernel cond1_kernels[CGRT_F64 + 1][CGRT_NCMP] = {
    COND1_OPS(CGRT_I8),  COND1_OPS(CGRT_I16), COND1_OPS(CGRT_I32),  COND1_OPS(CGRT_I64),
    COND1_OPS(CGRT_U8),  COND1_OPS(CGRT_U16), COND1_OPS(CGRT_U32),  COND1_OPS(CGRT_U64),
    COND1_OPS(CGRT_F16), COND1_OPS(CGRT_BF16), COND1_OPS(CGRT_F32), COND1_OPS(CGRT_F64)};

// The kernel (its host stub, as cgrt_kernel) for the comparison of
// instruction `code` (>= CGRT_COND_CMP).
extern "C" cgrt_kernel cgrt_cond1_kernel(unsigned code) {
  return reinterpret_cast<cgrt_kernel>(cond1_kernels[CGRT_COND_TYPE(code)][CGRT_COND_OP(code)]);
}

// Sets the handle of a switch node to the body of its scalar's value: the
// table holds (value, body) pairs sorted by value, as 64-bit bits with the
// scalar's sign extended; a value without a case selects `fallback` (the
// default's body, or one past the last body, which runs none).  `result`
// as set_value's.
extern "C" __global__ void cgrt_switch(cudaGraphConditionalHandle handle, const void *slot,
                                       unsigned type, const unsigned long long *table,
                                       unsigned ncases, unsigned fallback,
                                       unsigned long long result) {
  unsigned long long v;
  switch (type) {
  case CGRT_I8: v = static_cast<long long>(*static_cast<const int8_t *>(slot)); break;
  case CGRT_I16: v = static_cast<long long>(*static_cast<const int16_t *>(slot)); break;
  case CGRT_I32: v = static_cast<long long>(*static_cast<const int32_t *>(slot)); break;
  case CGRT_U8: v = *static_cast<const uint8_t *>(slot); break;
  case CGRT_U16: v = *static_cast<const uint16_t *>(slot); break;
  case CGRT_U32: v = *static_cast<const uint32_t *>(slot); break;
  default: v = *static_cast<const unsigned long long *>(slot); break;
  }
  unsigned lo = 0, hi = ncases, body = fallback;
  while (lo < hi) {
    unsigned mid = lo + (hi - lo) / 2;
    unsigned long long key = table[2 * mid];
    if (key == v) {
      body = static_cast<unsigned>(table[2 * mid + 1]);
      break;
    }
    if (key < v)
      lo = mid + 1;
    else
      hi = mid;
  }
  set_value(handle, body, result);
}
