/* cgrt_cond.h: what the runtime passes the kernels that evaluate conditions
 * (cgrt_kernels.cu).  Private to the runtime. */
#ifndef CGRT_COND_H
#define CGRT_COND_H

#include "cgrt.h"

enum {
  CGRT_COND_OPERANDS = 2 * CGRT_COND_MAX_CMP,
  CGRT_COND_CODE = 2 * CGRT_COND_MAX_CMP /* 2c - 1 instructions for c comparisons */
};

/* A condition of while or if, passed by value as one kernel parameter. */
typedef struct cgrt_cond_args {
  unsigned long long operand[CGRT_COND_OPERANDS]; /* an address, or a constant's bits */
  unsigned long long counter; /* while with max: the iteration counter's address */
  unsigned long long max;     /* while: the bound, 0 if none */
  unsigned long long result;  /* 0: set the handle; else where the value goes instead (an
                                 unsigned, for a launch without the graph: cgrt_walk.c) */
  unsigned imm;               /* bit i: operand i is a constant */
  unsigned step;              /* 0: before the first iteration; 1: after one */
  unsigned char code[CGRT_COND_CODE];
  unsigned ncode;
} cgrt_cond_args;

/* A condition of one comparison (most loops: `while it < n`): the fields
 * mean what cgrt_cond_args' do.  Its kernel is cgrt_cond1_kernel(code),
 * one for each type and operator. */
typedef struct cgrt_cond1_args {
  unsigned long long operand[2];
  unsigned long long counter, max, result;
  unsigned imm, step, code;
} cgrt_cond1_args;

#ifdef __cplusplus
extern "C"
#endif
    cgrt_kernel
    cgrt_cond1_kernel(unsigned code);

/* The scalar upload's one kernel parameter: the values of the scalars set
 * since the previous launch, which the launch that follows the set copies
 * into their slots (the upload is disabled in launches with none).  `cap`
 * pairs in four sizes, one kernel each (cgrt_load_scalars_CAP): the header,
 * `cap` values, then `cap` slot indices.
 *
 * A scalar many nodes take by value is also written into those nodes'
 * parameters, on the device (device-updatable kernel nodes): `starts`, when
 * not 0, is the address of nscalars + 1 indices into `updates`, scalar i's
 * entries being updates[starts[i] .. starts[i + 1]). */
enum { CGRT_LOADS_HEAD = 32 };
#define CGRT_LOADS_BYTES(cap) (CGRT_LOADS_HEAD + 12 * (unsigned long long)(cap))
typedef struct cgrt_loads_head {
  unsigned long long slots;   /* the scalar slots' address */
  unsigned count;             /* pairs used */
  unsigned cap;               /* pairs there is room for */
  unsigned long long starts;  /* per scalar, its first update (device memory), or 0 */
  unsigned long long updates; /* the cgrt_value_updates (device memory) */
} cgrt_loads_head;

/* A pair whose index has CGRT_GRID_PAIR set is a node's grid, not a
 * scalar's value: the index (without that bit) is the node's entry in the
 * update table (its node alone), and the value CGRT_GRID_OFF (disable the
 * node) or the extents x (31 bits), y and z (16 bits each), with bit 63
 * set when the node is to be enabled too. */
#define CGRT_GRID_PAIR 0x80000000u
#define CGRT_GRID_OFF 0ull
#define CGRT_GRID_PAIR_VALUE(x, y, z, enable)                                                 \
  ((unsigned long long)(x) | (unsigned long long)(y) << 31 | (unsigned long long)(z) << 47 |  \
   (unsigned long long)((enable) != 0) << 63)
#define CGRT_GRID_PAIR_X(v) ((unsigned)((v) & 0x7fffffffull))
#define CGRT_GRID_PAIR_Y(v) ((unsigned)((v) >> 31 & 0xffffull))
#define CGRT_GRID_PAIR_Z(v) ((unsigned)((v) >> 47 & 0xffffull))
#define CGRT_GRID_PAIR_ENABLE(v) ((unsigned)((v) >> 63))

/* One node parameter that a scalar's value is written into on the device:
 * the node (a cudaGraphDeviceNode_t), and where in its parameters. */
typedef struct cgrt_value_update {
  unsigned long long node;
  unsigned offset;
  unsigned size;
} cgrt_value_update;

#endif
