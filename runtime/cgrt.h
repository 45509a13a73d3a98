/* cgrt.h: the cgc runtime library.
 *
 * The C that cgc generates describes each graph in constant tables and
 * calls this library to build, instantiate, launch, rebind and destroy it.
 * Users call the generated functions (G_create, G_launch, ...); the
 * functions below that they may call directly are cgrt_last_error() and
 * the options. */
#ifndef CGRT_H
#define CGRT_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

/* Generated code states the version it was made for; see CGRT_ABI. */
#define CGRT_ABI 2

#ifdef __cplusplus
extern "C" {
#endif

typedef int cgrt_status;
enum {
  CGRT_OK = 0,
  CGRT_ERROR_CUDA = 1,    /* a CUDA call failed; cgrt_last_error() names it */
  CGRT_ERROR_INVALID = 2, /* a NULL or otherwise unusable argument */
  CGRT_ERROR_NO_MEMORY = 3 /* host memory ran out */
};

/* The last failure's message in this thread, e.g.
 * "decode_step.cgraph:21:9: node attn[0]: cudaGraphAddKernelNode: invalid
 * argument (cudaErrorInvalidValue)"; "" if nothing failed yet. */
const char *cgrt_last_error(void);

#define CGRT_CURRENT_DEVICE (-1)

typedef struct cgrt_options {
  int device;           /* device ordinal, or CGRT_CURRENT_DEVICE */
  void *user;           /* returned by G_user() */
  int upload;           /* nonzero: upload the graph at create, so the first
                           launch costs no more than the others */
  cudaStream_t stream;  /* where to upload (create waits for it) */
} cgrt_options;

/* The options used when create is given NULL. */
#define CGRT_OPTIONS_INIT {CGRT_CURRENT_DEVICE, NULL, 1, 0}

/* ---- for generated code ---- */

typedef struct cgrt_graph cgrt_graph;

/* The address of a kernel's host stub: nvcc registers it as the kernel. */
typedef void (*cgrt_kernel)(void);

enum { CGRT_DEVICE, CGRT_EXTERN, CGRT_HOST, CGRT_EXTERN_HOST };

typedef struct cgrt_buffer_desc {
  const char *name;
  uint8_t kind; /* CGRT_DEVICE ... CGRT_EXTERN_HOST */
  uint8_t zero; /* zeroed at create */
  uint64_t bytes;
} cgrt_buffer_desc;

typedef struct cgrt_scalar_desc {
  const char *name;
  uint8_t size;   /* bytes: 1, 2, 4 or 8 */
  uint8_t memory; /* has a device slot: passed by pointer, copied or filled */
  uint64_t init;  /* initial value, as bits */
} cgrt_scalar_desc;

enum {
  CGRT_ARG_BUFFER,       /* pointer into a buffer: index, offset */
  CGRT_ARG_SCALAR_PTR,   /* a scalar's device slot: index */
  CGRT_ARG_SCALAR_VALUE, /* a scalar's value: index */
  CGRT_ARG_CONST         /* a constant: value */
};

typedef struct cgrt_arg_desc {
  uint8_t kind;
  uint8_t size;    /* bytes the kernel parameter takes */
  uint32_t index;  /* buffer or scalar */
  uint64_t value;  /* CGRT_ARG_BUFFER: byte offset; CGRT_ARG_CONST: bits */
} cgrt_arg_desc;

enum {
  CGRT_KERNEL_NODE,
  CGRT_COPY_NODE,
  CGRT_FILL_NODE,
  CGRT_WHILE_NODE, /* control nodes: a CUDA conditional node and the runtime's */
  CGRT_IF_NODE,    /* kernels that evaluate its condition */
  CGRT_SWITCH_NODE
};

/* Where a node is: the top of the graph, or body `branch` of control node
 * `scope` (which comes before it in the node table). */
#define CGRT_TOP UINT32_MAX

/* A condition of while or if is a program in the code table, in postfix
 * order, over its node's arguments (scalar slots, buffer elements,
 * constants), which comparisons take two at a time in order. */
enum {
  CGRT_COND_AND = 0,
  CGRT_COND_OR = 1,
  CGRT_COND_CMP = 2 /* + 2 * (6 * type + op) + negate; type: CGRT_I8 ... */
};
enum { CGRT_CMP_EQ, CGRT_CMP_NE, CGRT_CMP_LT, CGRT_CMP_LE, CGRT_CMP_GT, CGRT_CMP_GE };
enum {
  CGRT_I8, CGRT_I16, CGRT_I32, CGRT_I64, CGRT_U8, CGRT_U16, CGRT_U32, CGRT_U64,
  CGRT_F16, CGRT_BF16, CGRT_F32, CGRT_F64
};
/* The most comparisons one condition holds (cgc refuses more). */
#define CGRT_COND_MAX_CMP 16

typedef struct cgrt_node_desc {
  const char *name;
  uint32_t line, col;
  uint8_t kind;
  uint8_t has_cluster, has_priority;
  uint8_t elem_size;  /* fill */
  uint32_t kernel;    /* kernel node: index into the kernel table */
  uint32_t arg;       /* first argument in the argument table; copy: dst,
                         src; fill: dst */
  uint32_t nargs;
  uint32_t grid[3], block[3], cluster[3];
  uint32_t smem;
  int32_t priority;
  uint64_t bytes;     /* copy, fill; while: the bound (max N), 0 if none */
  uint64_t value;     /* fill: the element's bits */
  uint32_t scope, branch; /* CGRT_TOP, or the body holding this node */
  uint32_t nbodies;   /* control nodes: while 1, if 1 or 2, switch one a case */
  uint32_t code;      /* while, if: the condition's first instruction;
                         switch: its first case value (one per body) */
  uint32_t ncode;     /* instructions; switch: bodies */
  int32_t default_body; /* switch: the body of `default`, or -1 */
  uint8_t selector_type; /* switch: CGRT_I8 ... of its scalar (argument 0) */
} cgrt_node_desc;

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
} cgrt_graph_desc;

cgrt_status cgrt_create(cgrt_graph **out, const cgrt_graph_desc *desc, void *const *externs,
                        const cgrt_options *opt);
cgrt_status cgrt_launch(cgrt_graph *g, cudaStream_t stream);
cgrt_status cgrt_set_scalar(cgrt_graph *g, uint32_t scalar, const void *value);
cgrt_status cgrt_get_scalar(cgrt_graph *g, uint32_t scalar, void *value);
cgrt_status cgrt_bind(cgrt_graph *g, uint32_t buffer, void *ptr);
void *cgrt_buffer(cgrt_graph *g, uint32_t buffer);
void *cgrt_user(cgrt_graph *g);
void cgrt_destroy(cgrt_graph *g);
/* For generated code: a NULL argument before the runtime is reached. */
cgrt_status cgrt_invalid(const cgrt_graph_desc *desc, const char *what);

#ifdef __cplusplus
}
#endif

#endif
