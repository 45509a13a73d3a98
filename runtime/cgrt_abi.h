/* cgrt_abi.h: the tables that cgc generates and the runtime reads.
 *
 * The one definition of their layout and constants, shared by the compiler
 * (which includes this file alone) and the runtime (through cgrt.h).  It
 * needs no CUDA header.  A change of layout or meaning changes CGRT_ABI;
 * the generated C refuses to compile against another. */
#ifndef CGRT_ABI_H
#define CGRT_ABI_H

#include <stdint.h>

#define CGRT_ABI 8

#ifdef __cplusplus
extern "C" {
#endif

/* The address of a kernel's host stub: nvcc registers it as the kernel. */
typedef void (*cgrt_kernel)(void);

/* A template kernel's accessor, defined in the companion CUDA file that cgc
 * writes beside the C: the address of the instantiation's host stub. */
typedef const void *(*cgrt_kernel_address)(void);

/* Where a kernel comes from: linked into the program (the kernel table
 * holds its host stub), a C++ template instantiated in the companion CUDA
 * file (an accessor gives its stub), or a module (PTX, cubin or fatbin)
 * embedded in the generated C and loaded at create. */
typedef enum cgrt_kernel_kind { CGRT_KERNEL_LINKED, CGRT_KERNEL_TEMPLATE, CGRT_KERNEL_MODULE } cgrt_kernel_kind;

typedef enum cgrt_module_format { CGRT_MODULE_PTX, CGRT_MODULE_CUBIN, CGRT_MODULE_FATBIN } cgrt_module_format;

/* A module's bytes, as cgc read them; PTX ends with a NUL, counted in
 * bytes.  `path` is the module's path as the .cgraph wrote it. */
typedef struct cgrt_module_desc {
  const char *path;
  uint8_t format; /* CGRT_MODULE_PTX ... */
  uint64_t bytes;
  const unsigned char *image;
} cgrt_module_desc;

/* A kernel that is not linked in: how to find it. */
typedef struct cgrt_kernel_from {
  uint8_t kind;                 /* CGRT_KERNEL_LINKED ... */
  uint32_t module;              /* CGRT_KERNEL_MODULE: index into the module table */
  const char *symbol;           /* CGRT_KERNEL_MODULE: its name in the module */
  cgrt_kernel_address address;  /* CGRT_KERNEL_TEMPLATE: its accessor */
} cgrt_kernel_from;

/* A capture function as the generated code wraps it: it enqueues the
 * function's work on `stream` (a cudaStream_t being captured), with the
 * node's arguments as 64-bit words (an address, or a constant's bits), and
 * returns the function's cudaError_t. */
typedef int (*cgrt_capture)(void *stream, void *user, const uint64_t *args);

typedef enum cgrt_buffer_kind { CGRT_DEVICE, CGRT_EXTERN, CGRT_HOST, CGRT_EXTERN_HOST } cgrt_buffer_kind;

/* The element types of buffers and scalars, as the tables number them. */
enum {
  CGRT_I8, CGRT_I16, CGRT_I32, CGRT_I64, CGRT_U8, CGRT_U16, CGRT_U32, CGRT_U64,
  CGRT_F16, CGRT_BF16, CGRT_F32, CGRT_F64
};

/* The most dimensions a buffer has. */
#define CGRT_MAX_DIMS 8

/* The runtime reads a buffer's kind, zero and bytes; its type and shape
 * are there for drivers that check what they bind (the Python package). */
typedef struct cgrt_buffer_desc {
  const char *name;
  uint8_t kind;  /* CGRT_DEVICE ... CGRT_EXTERN_HOST */
  uint8_t zero;  /* zeroed at create */
  uint8_t type;  /* element type: CGRT_I8 ... CGRT_F64 */
  uint8_t ndims; /* 1 to CGRT_MAX_DIMS */
  uint64_t bytes;
  uint64_t dims[CGRT_MAX_DIMS]; /* row-major, the first ndims used */
} cgrt_buffer_desc;

typedef struct cgrt_scalar_desc {
  const char *name;
  uint8_t size;   /* bytes: 1, 2, 4 or 8 */
  uint8_t memory; /* has a device slot: passed by pointer, copied or filled */
  uint8_t type;   /* CGRT_I8 ... CGRT_F64 */
  uint64_t init;  /* initial value, as bits */
  uint8_t from_comm; /* CGRT_FROM_VALUE, or set at create to the rank (CGRT_RANK)
                        or the number of ranks (CGRT_RANKS) */
  uint8_t bounded;   /* declared with `max`: a set above `max` is refused */
  uint64_t max;      /* the bound, as bits of the (integer) type */
} cgrt_scalar_desc;

typedef enum cgrt_arg_kind {
  CGRT_ARG_BUFFER,       /* pointer into a buffer: index, offset */
  CGRT_ARG_SCALAR_PTR,   /* a scalar's device slot: index */
  CGRT_ARG_SCALAR_VALUE, /* a scalar's value: index */
  CGRT_ARG_CONST,        /* a constant: value */
  CGRT_ARG_HANDLE        /* a while's conditional handle (a kernel in its body
                            sets the loop's condition): index, the while node */
} cgrt_arg_kind;

typedef struct cgrt_arg_desc {
  uint8_t kind;
  uint8_t size;    /* bytes the kernel parameter takes */
  uint32_t index;  /* buffer or scalar; CGRT_ARG_HANDLE: the while node */
  uint64_t value;  /* CGRT_ARG_BUFFER: byte offset; CGRT_ARG_CONST: bits */
} cgrt_arg_desc;

/* The kinds are named types so that a runtime's switch over one, with no
 * default, is warned about (-Wswitch) when a kind is added. */
typedef enum cgrt_node_kind {
  CGRT_KERNEL_NODE,
  CGRT_COPY_NODE,
  CGRT_FILL_NODE,
  CGRT_WHILE_NODE, /* control nodes: a CUDA conditional node and the runtime's */
  CGRT_IF_NODE,    /* kernels that evaluate its condition */
  CGRT_SWITCH_NODE,
  CGRT_CAPTURE_NODE, /* a capture function's stream work, captured into a child graph */
  CGRT_COLLECTIVE_NODE /* an NCCL collective, captured into a child graph */
} cgrt_node_kind;

/* Collective nodes: which, and the reduction. */
enum { CGRT_ALL_REDUCE, CGRT_ALL_GATHER, CGRT_REDUCE_SCATTER, CGRT_BROADCAST };
enum { CGRT_SUM, CGRT_PROD, CGRT_MAX, CGRT_MIN, CGRT_AVG };
/* A scalar whose value the communicator gives at create. */
enum { CGRT_FROM_VALUE, CGRT_RANK, CGRT_RANKS };

/* Where a node is: the top of the graph, or body `branch` of control node
 * `scope` (which comes before it in the node table). */
#define CGRT_TOP UINT32_MAX

/* A condition of while or if is a program in the code table, in postfix
 * order, over its node's arguments (scalar slots, buffer elements,
 * constants), which comparisons take two at a time in order. */
enum {
  CGRT_COND_AND = 0,
  CGRT_COND_OR = 1,
  CGRT_COND_CMP = 2 /* the first comparison: see CGRT_COND_COMPARE */
};
enum { CGRT_CMP_EQ, CGRT_CMP_NE, CGRT_CMP_LT, CGRT_CMP_LE, CGRT_CMP_GT, CGRT_CMP_GE, CGRT_NCMP };
/* The instruction that compares two operands of a type (CGRT_I8 ...) with
 * op (CGRT_CMP_EQ ...) and pushes the result, negated when `negate` is 1;
 * and the three back from an instruction c >= CGRT_COND_CMP. */
#define CGRT_COND_COMPARE(type, op, negate) \
  ((int)CGRT_COND_CMP + 2 * ((int)CGRT_NCMP * (int)(type) + (int)(op)) + (int)(negate))
#define CGRT_COND_NEGATE(c) (((c) - CGRT_COND_CMP) & 1)
#define CGRT_COND_OP(c) ((((c) - CGRT_COND_CMP) >> 1) % CGRT_NCMP)
#define CGRT_COND_TYPE(c) ((((c) - CGRT_COND_CMP) >> 1) / CGRT_NCMP)
/* The most comparisons one condition holds (cgc refuses more). */
#define CGRT_COND_MAX_CMP 16

typedef struct cgrt_node_desc {
  const char *name;
  uint32_t line, col;
  uint8_t kind;
  uint8_t has_cluster, has_priority;
  uint8_t elem_size;  /* fill */
  uint32_t kernel;    /* kernel node: index into the kernel table; capture
                         node: into the capture table */
  uint32_t arg;       /* first argument in the argument table; copy: dst,
                         src; fill: dst */
  uint32_t nargs;
  uint32_t grid[3], block[3], cluster[3];
  uint32_t smem;
  int32_t priority;
  uint64_t bytes;     /* copy, fill: the bytes written */
  uint64_t value;     /* fill: the element's bits */
  uint64_t max_iter;  /* while: its bound (max N), 0 if none */
  uint32_t scope, branch; /* CGRT_TOP, or the body holding this node */
  uint32_t nbodies;   /* control nodes: while 1, if 1 or 2, switch one a case */
  uint32_t code;      /* while, if: the condition's first instruction */
  uint32_t ncode;     /* while, if: the condition's instructions */
  uint32_t first_case; /* switch: its first value in the case table, one a body */
  int32_t default_body; /* switch: the body of `default`, or -1 */
  uint8_t selector_type; /* switch: CGRT_I8 ... of its scalar (argument 0) */
  uint8_t elem_type;     /* collective: CGRT_I8 ... of its elements */
  uint8_t collective, reduce_op; /* collective: CGRT_ALL_REDUCE ..., CGRT_SUM ... */
  uint32_t root;         /* broadcast */
  uint64_t send_count, recv_count; /* collective: elements of argument 1, of 0 */
  uint32_t grid_expr; /* kernel: 0 when its grid is grid[]; else 1 + the first
                         word in grid_code of the programs of its extents x, y
                         and z (grid[] then holds the grid at the bounds) */
  uint8_t body_sets_handle; /* while: a kernel of its body takes its handle
                               (CGRT_ARG_HANDLE) and sets the condition, so
                               the body ends without the runtime's condition
                               kernel (the one before the loop stays) */
} cgrt_node_desc;

/* A grid that follows scalars (`grid(cdiv(n, 256))` with `scalar n: u32
 * max 4096`): each extent of such a node is a program in the grid_code
 * table, in postfix order, ending with CGRT_GRID_END; CGRT_GRID_CONST and
 * CGRT_GRID_SCALAR take the next word (a value, a scalar's index).  The
 * arithmetic is the language's, on 64-bit signed integers: / and %
 * truncate, cdiv rounds up. */
enum {
  CGRT_GRID_END, CGRT_GRID_CONST, CGRT_GRID_SCALAR, CGRT_GRID_ADD, CGRT_GRID_SUB, CGRT_GRID_MUL,
  CGRT_GRID_DIV, CGRT_GRID_MOD, CGRT_GRID_CDIV, CGRT_GRID_MIN, CGRT_GRID_MAX, CGRT_GRID_NEG,
  CGRT_GRID_NOPS
};
/* The most operands one program holds at once (cgc refuses more). */
#define CGRT_GRID_STACK 16
/* Why cgrt_grid_eval failed. */
enum { CGRT_GRID_OK, CGRT_GRID_DIVZERO, CGRT_GRID_OVERFLOW, CGRT_GRID_MALFORMED };

/* A scalar's value (bits) as a 64-bit signed integer, by its type; an
 * unsigned 64-bit value past INT64_MAX is an overflow. */
static inline int cgrt_grid_value(uint8_t type, uint64_t bits, int64_t *out) {
  switch (type) {
  case CGRT_I8: *out = (int8_t)(uint8_t)bits; return CGRT_GRID_OK;
  case CGRT_I16: *out = (int16_t)(uint16_t)bits; return CGRT_GRID_OK;
  case CGRT_I32: *out = (int32_t)(uint32_t)bits; return CGRT_GRID_OK;
  case CGRT_I64: *out = (int64_t)bits; return CGRT_GRID_OK;
  case CGRT_U8: *out = (uint8_t)bits; return CGRT_GRID_OK;
  case CGRT_U16: *out = (uint16_t)bits; return CGRT_GRID_OK;
  case CGRT_U32: *out = (uint32_t)bits; return CGRT_GRID_OK;
  case CGRT_U64:
    if (bits > (uint64_t)INT64_MAX)
      return CGRT_GRID_OVERFLOW;
    *out = (int64_t)bits;
    return CGRT_GRID_OK;
  default: return CGRT_GRID_MALFORMED;
  }
}

/* Runs the program at code[*at] (of ncode words) to its CGRT_GRID_END,
 * with the scalars' values as bits; *at ends past the END.  The one
 * evaluator: cgc runs it at the bounds, the runtime at each launch whose
 * scalars changed. */
static inline int cgrt_grid_eval(const int64_t *code, uint32_t ncode, uint32_t *at,
                                 const cgrt_scalar_desc *scalars, uint32_t nscalars,
                                 const uint64_t *values, int64_t *out) {
  int64_t stack[CGRT_GRID_STACK];
  int sp = 0;
  uint32_t i = *at;
  while (i < ncode) {
    int64_t op = code[i++], a, b, r = 0;
    int err = CGRT_GRID_OK;
    if (op == CGRT_GRID_END) {
      if (sp != 1)
        return CGRT_GRID_MALFORMED;
      *out = stack[0];
      *at = i;
      return CGRT_GRID_OK;
    }
    if (op == CGRT_GRID_CONST || op == CGRT_GRID_SCALAR) {
      if (i >= ncode || sp == CGRT_GRID_STACK)
        return CGRT_GRID_MALFORMED;
      int64_t w = code[i++];
      if (op == CGRT_GRID_CONST) {
        r = w;
      } else {
        if (w < 0 || (uint64_t)w >= nscalars)
          return CGRT_GRID_MALFORMED;
        if ((err = cgrt_grid_value(scalars[w].type, values[w], &r)) != CGRT_GRID_OK)
          return err;
      }
      stack[sp++] = r;
      continue;
    }
    if (op == CGRT_GRID_NEG) {
      if (sp < 1)
        return CGRT_GRID_MALFORMED;
      if (stack[sp - 1] == INT64_MIN)
        return CGRT_GRID_OVERFLOW;
      stack[sp - 1] = -stack[sp - 1];
      continue;
    }
    if (sp < 2 || op < CGRT_GRID_ADD || op >= CGRT_GRID_NOPS)
      return CGRT_GRID_MALFORMED;
    a = stack[sp - 2];
    b = stack[sp - 1];
    switch (op) {
    case CGRT_GRID_ADD: err = __builtin_add_overflow(a, b, &r) ? CGRT_GRID_OVERFLOW : 0; break;
    case CGRT_GRID_SUB: err = __builtin_sub_overflow(a, b, &r) ? CGRT_GRID_OVERFLOW : 0; break;
    case CGRT_GRID_MUL: err = __builtin_mul_overflow(a, b, &r) ? CGRT_GRID_OVERFLOW : 0; break;
    case CGRT_GRID_MIN: r = a < b ? a : b; break;
    case CGRT_GRID_MAX: r = a < b ? b : a; break;
    default: /* DIV, MOD, CDIV */
      if (b == 0)
        return CGRT_GRID_DIVZERO;
      if (a == INT64_MIN && b == -1)
        return CGRT_GRID_OVERFLOW;
      r = op == CGRT_GRID_MOD ? a % b : a / b;
      if (op == CGRT_GRID_CDIV && a % b != 0 && (a < 0) == (b < 0))
        r++;
      break;
    }
    if (err)
      return err;
    stack[--sp - 1] = r;
  }
  return CGRT_GRID_MALFORMED;
}

/* A graph's description.  A driver that creates graphs by description
 * (cgrt_create, cgrt_set_scalar, cgrt_bind, cgrt_buffer, by index) finds
 * a program's graphs through the function that its generated C defines
 * when compiled with -DCGC_PROGRAM=NAME:
 *   const cgrt_graph_desc *const *NAME(void);   every graph, NULL last */
typedef struct cgrt_graph_desc {
  int abi; /* CGRT_ABI */
  const char *name;
  const char *source;
  uint32_t nbuffers, nscalars, nnodes, nedges, nkernels, nloads, ncode, ncases;
  const cgrt_buffer_desc *buffers;
  const cgrt_scalar_desc *scalars;
  const cgrt_node_desc *nodes;
  const cgrt_arg_desc *args;
  const uint32_t *edges;   /* nedges triples (from, to, programmatic) */
  const uint32_t *loads;   /* the nodes that follow the scalar upload */
  const cgrt_kernel *kernels;
  const char *const *kernel_names;
  const uint8_t *code;     /* conditions of while and if */
  const uint64_t *cases;   /* switch: a value per body, as bits (the
                              default's unused) */
  uint32_t ncaptures;
  const cgrt_capture *captures;         /* capture nodes' functions */
  const char *const *capture_names;
  const struct cgrt_collective_ops *collectives; /* NULL unless the graph has
                                                    collectives or = rank scalars */
  /* Kernels that are not linked in: NULL when every kernel is; otherwise
   * one row per kernel (a linked one's kernels[] entry is its stub, the
   * others' are NULL). */
  const cgrt_kernel_from *kernel_from;
  uint32_t nmodules;
  const cgrt_module_desc *modules;
  /* Grids that follow scalars: the nodes' programs (see CGRT_GRID_END). */
  uint32_t ngrid_code;
  const int64_t *grid_code;
} cgrt_graph_desc;

#ifdef __cplusplus
}
#endif

#endif
