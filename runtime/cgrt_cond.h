/* cgrt_cond.h: what cgrt.c passes the kernels that evaluate conditions
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
  unsigned imm;               /* bit i: operand i is a constant */
  unsigned step;              /* 0: before the first iteration; 1: after one */
  unsigned char code[CGRT_COND_CODE];
  unsigned ncode;
} cgrt_cond_args;

/* The scalar upload's one kernel parameter: the values of the scalars set
 * since the previous launch, which the launch that follows the set copies
 * into their slots (the upload is disabled in launches with none).  `cap`
 * pairs in four sizes, one kernel each (cgrt_load_scalars_CAP): the header,
 * `cap` values, then `cap` slot indices. */
enum { CGRT_LOADS_HEAD = 16 };
#define CGRT_LOADS_BYTES(cap) (CGRT_LOADS_HEAD + 12 * (unsigned long long)(cap))
typedef struct cgrt_loads_head {
  unsigned long long slots; /* the scalar slots' address */
  unsigned count;           /* pairs used */
  unsigned cap;             /* pairs there is room for */
} cgrt_loads_head;

#endif
