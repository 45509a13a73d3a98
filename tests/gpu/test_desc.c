/* test_desc: create refuses a malformed table with CGRT_ERROR_INVALID and
 * a message that says what is wrong, before any CUDA call, so this test
 * needs no GPU.  A table cgc may write (an edge that goes backward in the
 * table, a node inside a body) passes the check. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgrt.h"

static int failures, checks;

static void kernel_stub(void) {}
/* Not a kernel either: with a GPU, adding its node fails (a CUDA error,
 * past the check). */
static const void *template_stub(void) {
  const void *p;
  void (*f)(void) = kernel_stub;
  memcpy(&p, &f, sizeof p);
  return p;
}
static const unsigned char ptx[] = ".version 8.0\n.target sm_75\n";

enum { NODES = 4, EDGES = 3 };

typedef struct Table {
  cgrt_buffer_desc buffers[1];
  cgrt_scalar_desc scalars[1];
  cgrt_node_desc nodes[NODES];
  cgrt_arg_desc args[4];
  uint32_t edges[3 * EDGES];
  uint32_t loads[2];
  cgrt_kernel kernels[1];
  const char *kernel_names[1];
  cgrt_kernel_from kernel_from[1];
  cgrt_module_desc modules[1];
  uint64_t cases[2];
  uint8_t code[3];
  int64_t grid_code[16];
  cgrt_graph_desc desc;
} Table;

/* A well-formed graph: k0 -> k1, k0 -> sw (a switch on scalar 0 with two
 * bodies), and k2 inside the switch's first body; the scalar upload
 * precedes k0. */
static void table_init(Table *t) {
  memset(t, 0, sizeof *t);
  t->buffers[0] = (cgrt_buffer_desc){.name = "x", .kind = CGRT_DEVICE, .type = CGRT_F32,
                                     .ndims = 1, .bytes = 1024, .dims = {256}};
  t->scalars[0] = (cgrt_scalar_desc){.name = "s", .size = 4, .memory = 1, .type = CGRT_U32};
  t->args[0] = (cgrt_arg_desc){CGRT_ARG_BUFFER, 8, 0, 0};
  t->args[1] = (cgrt_arg_desc){CGRT_ARG_SCALAR_PTR, 8, 0, 0};
  t->args[2] = (cgrt_arg_desc){CGRT_ARG_SCALAR_PTR, 8, 0, 0};
  t->args[3] = (cgrt_arg_desc){CGRT_ARG_CONST, 4, 0, 7};
  static const char *const names[NODES] = {"k0", "k1", "sw", "k2"};
  for (int i = 0; i < NODES; i++) {
    cgrt_node_desc *n = &t->nodes[i];
    n->name = names[i];
    n->line = (uint32_t)i + 1;
    n->col = 5;
    n->kind = CGRT_KERNEL_NODE;
    n->arg = 0;
    n->nargs = 2;
    for (int k = 0; k < 3; k++)
      n->grid[k] = n->block[k] = n->cluster[k] = 1;
    n->scope = CGRT_TOP;
    n->default_body = -1;
  }
  t->nodes[2].kind = CGRT_SWITCH_NODE;
  t->nodes[2].arg = 2;
  t->nodes[2].nargs = 1;
  t->nodes[2].nbodies = 2;
  t->nodes[2].first_case = 0;
  t->nodes[2].default_body = 1;
  t->nodes[2].selector_type = CGRT_U32;
  t->nodes[3].scope = 2;
  t->nodes[3].branch = 0;
  t->nodes[3].arg = 3;
  t->nodes[3].nargs = 1;
  uint32_t edges[3 * EDGES] = {0, 1, 0, 0, 2, 0, 1, 2, 0};
  memcpy(t->edges, edges, sizeof edges);
  t->loads[0] = 0;
  t->kernels[0] = kernel_stub;
  t->kernel_names[0] = "kernel";
  t->cases[0] = 3;
  t->desc = (cgrt_graph_desc){.abi = CGRT_ABI,
                              .name = "g",
                              .source = "t.cgraph",
                              .nbuffers = 1,
                              .nscalars = 1,
                              .nnodes = NODES,
                              .nedges = EDGES,
                              .nkernels = 1,
                              .nloads = 1,
                              .ncases = 2,
                              .buffers = t->buffers,
                              .scalars = t->scalars,
                              .nodes = t->nodes,
                              .args = t->args,
                              .edges = t->edges,
                              .loads = t->loads,
                              .kernels = t->kernels,
                              .kernel_names = t->kernel_names,
                              .cases = t->cases};
}

/* The kernel from a PTX module instead. */
static void from_module(Table *t) {
  t->modules[0] = (cgrt_module_desc){"k.ptx", CGRT_MODULE_PTX, sizeof ptx, ptx};
  t->kernel_from[0] = (cgrt_kernel_from){CGRT_KERNEL_MODULE, 0, "k", NULL};
  t->kernels[0] = NULL;
  t->desc.kernel_from = t->kernel_from;
  t->desc.nmodules = 1;
  t->desc.modules = t->modules;
}

/* Node 2 as a while of one body whose condition is code[0 .. n) over
 * arguments 2 (scalar s) and 3 (the constant 7). */
static void as_while(Table *t, const uint8_t *code, uint32_t n) {
  memcpy(t->code, code, n);
  t->nodes[2].kind = CGRT_WHILE_NODE;
  t->nodes[2].nargs = 2;
  t->nodes[2].nbodies = 1;
  t->nodes[2].code = 0;
  t->nodes[2].ncode = n;
  t->nodes[2].default_body = -1;
  t->desc.ncode = n;
  t->desc.code = t->code;
}

/* create must refuse t with a message containing `want`. */
static void expect_refused(Table *t, const char *what, const char *want) {
  cgrt_graph *g = (cgrt_graph *)t;
  cgrt_status s = cgrt_create(&g, &t->desc, NULL, NULL);
  checks++;
  if (s != CGRT_ERROR_INVALID || g != NULL || !strstr(cgrt_last_error(), want) ||
      !strstr(cgrt_last_error(), "t.cgraph: graph g: ")) {
    failures++;
    fprintf(stderr, "test_desc: %s: status %d, message \"%s\", expected \"%s\"\n", what, s,
            cgrt_last_error(), want);
  }
}

/* create must get past the check: with a GPU it may succeed (then the
 * graph is destroyed), without one it fails at its first CUDA call. */
static void expect_accepted(Table *t, const char *what) {
  cgrt_graph *g = NULL;
  cgrt_status s = cgrt_create(&g, &t->desc, NULL, NULL);
  checks++;
  if (s == CGRT_ERROR_INVALID) {
    failures++;
    fprintf(stderr, "test_desc: %s: refused: %s\n", what, cgrt_last_error());
  }
  cgrt_destroy(g);
}

/* MANY kernel nodes, each joined to the next (every seventh such edge
 * written backward) and most to the one after that: about 5,100 edges.
 * With `dup`, the pair n1000 -> n1002 is given again last, far from the
 * first: refused, naming it; without it, accepted. */
enum { MANY = 3000 };
static void many_edges_case(int dup) {
  static cgrt_node_desc nodes[MANY];
  static char names[MANY][8];
  static uint32_t edges[3 * 2 * MANY];
  static const cgrt_arg_desc args[1] = {{CGRT_ARG_CONST, 4, 0, 7}};
  static cgrt_kernel kernels[1] = {kernel_stub};
  static const char *kernel_names[1] = {"kernel"};
  memset(nodes, 0, sizeof nodes);
  for (uint32_t i = 0; i < MANY; i++) {
    snprintf(names[i], sizeof names[i], "n%u", i);
    nodes[i] = (cgrt_node_desc){.name = names[i],
                                .line = i + 1,
                                .col = 5,
                                .kind = CGRT_KERNEL_NODE,
                                .nargs = 1,
                                .scope = CGRT_TOP,
                                .default_body = -1};
    for (int k = 0; k < 3; k++)
      nodes[i].grid[k] = nodes[i].block[k] = nodes[i].cluster[k] = 1;
  }
  uint32_t m = 0;
  for (uint32_t i = 0; i + 1 < MANY; i++) {
    int back = i % 7 == 3; /* written `b -> a` with b first: backward in the table */
    edges[3 * m] = back ? i + 1 : i, edges[3 * m + 1] = back ? i : i + 1, edges[3 * m + 2] = 0;
    m++;
    if (i + 2 < MANY && !back && (i + 1) % 7 != 3) {
      edges[3 * m] = i, edges[3 * m + 1] = i + 2, edges[3 * m + 2] = 0;
      m++;
    }
  }
  if (dup) {
    edges[3 * m] = 1000, edges[3 * m + 1] = 1002, edges[3 * m + 2] = 0;
    m++;
  }
  cgrt_graph_desc desc = {.abi = CGRT_ABI,
                          .name = "g",
                          .source = "t.cgraph",
                          .nnodes = MANY,
                          .nedges = m,
                          .nkernels = 1,
                          .nodes = nodes,
                          .args = args,
                          .edges = edges,
                          .kernels = kernels,
                          .kernel_names = kernel_names};
  cgrt_graph *g = NULL;
  cgrt_status s = cgrt_create(&g, &desc, NULL, NULL);
  checks++;
  if (dup ? s != CGRT_ERROR_INVALID ||
                !strstr(cgrt_last_error(), "edge n1000 -> n1002 is in the table twice")
          : s == CGRT_ERROR_INVALID) {
    failures++;
    fprintf(stderr, "test_desc: %u edges%s: status %d, message \"%s\"\n", m,
            dup ? ", one pair twice" : "", s, cgrt_last_error());
  }
  cgrt_destroy(g);
}

static void many_edges(void) {
  many_edges_case(1);
  many_edges_case(0);
}

int main(void) {
  Table t;
  table_init(&t);
  expect_accepted(&t, "a well-formed table");

  {
    cgrt_graph *g = (cgrt_graph *)&t; /* overwritten by create */
    const cgrt_status s = cgrt_create(&g, NULL, NULL, NULL);
    checks++;
    if (s != CGRT_ERROR_INVALID || g != NULL ||
        strcmp(cgrt_last_error(), "cgrt_create: the graph description is NULL") != 0) {
      failures++;
      fprintf(stderr, "test_desc: no description: status %d, message \"%s\"\n", s,
              cgrt_last_error());
    }
  }

  table_init(&t);
  t.buffers[0].kind = CGRT_EXTERN;
  expect_refused(&t, "an extern buffer and no extern pointers",
                 "buffer x is extern, and create was given no extern pointers (NULL)");

  table_init(&t);
  t.edges[0] = 1, t.edges[1] = 0; /* k1 -> k0: backward, as `k1 -> k0` written may be */
  expect_accepted(&t, "an edge that goes backward");

  table_init(&t);
  t.nodes[1].kind = 9;
  expect_refused(&t, "an unknown node kind",
                 "node k1: its description is malformed: kind 9 is no kind of node");

  table_init(&t);
  t.nodes[1].kernel = 1;
  expect_refused(&t, "a kernel out of range",
                 "node k1: its description is malformed: kernel 1 of 1");

  table_init(&t);
  t.nodes[3].scope = 3;
  expect_refused(&t, "a node in its own body",
                 "node k2: its description is malformed: its body is not one of an earlier "
                 "control node");

  table_init(&t);
  t.nodes[1].scope = 0;
  expect_refused(&t, "a body of a kernel node", "its body is not one of an earlier control node");

  table_init(&t);
  t.nodes[3].branch = 2;
  expect_refused(&t, "a body the switch lacks", "its body is not one of an earlier control node");

  table_init(&t);
  t.nodes[2].first_case = 1;
  expect_refused(&t, "cases past the case table", "node sw: its description is malformed: ");

  table_init(&t);
  t.nodes[2].default_body = 2;
  expect_refused(&t, "a default past the bodies", "node sw: its description is malformed: ");

  table_init(&t);
  t.nodes[0].nargs = 3;
  t.args[2].kind = 7;
  expect_refused(&t, "an unknown argument kind", "argument 2: kind 7 is no kind of argument");

  table_init(&t);
  t.args[3] = (cgrt_arg_desc){CGRT_ARG_HANDLE, 8, 2, 0};
  expect_refused(&t, "a handle of a switch", "argument 0: the handle of node 2, which is no while");

  /* The switch as a while on `s < 7` (its operands: args 2 and 3). */
  const uint8_t lt = CGRT_COND_COMPARE(CGRT_U32, CGRT_CMP_LT, 0);
  table_init(&t);
  as_while(&t, (uint8_t[]){lt}, 1);
  expect_accepted(&t, "a while of one comparison");

  table_init(&t);
  as_while(&t, (uint8_t[]){CGRT_COND_COMPARE(CGRT_F64, CGRT_CMP_GE, 1) + 1}, 1);
  expect_refused(&t, "an instruction past the comparisons",
                 "node sw: its description is malformed: instruction 0 of the condition (146) is "
                 "no comparison");

  table_init(&t);
  as_while(&t, (uint8_t[]){lt, CGRT_COND_AND}, 2);
  expect_refused(&t, "an and of one value",
                 "node sw: its description is malformed: instruction 1 of the condition joins two "
                 "values, with 1 on the stack");

  table_init(&t);
  as_while(&t, (uint8_t[]){lt, lt}, 2);
  expect_refused(&t, "a condition that leaves two values",
                 "node sw: its description is malformed: a condition that leaves 2 values on the "
                 "stack, not 1");

  table_init(&t);
  as_while(&t, (uint8_t[]){lt}, 1);
  t.nodes[2].nargs = 1;
  expect_refused(&t, "a comparison short of an operand",
                 "node sw: its description is malformed: a condition that reads 2 operands of 1");

  table_init(&t);
  t.nodes[1].body_sets_handle = 1;
  expect_refused(&t, "a kernel node that sets a handle", "a node that is no while sets its handle");

  table_init(&t);
  t.buffers[0].kind = 4;
  expect_refused(&t, "an unknown buffer kind",
                 "its description is malformed: buffer x: kind 4 is no kind of buffer");

  table_init(&t);
  t.args[0].index = 1;
  expect_refused(&t, "a buffer out of range", "argument 0: buffer 1 of 1");

  table_init(&t);
  t.args[1].index = 1;
  expect_refused(&t, "a scalar out of range", "argument 1: scalar 1 of 1");

  table_init(&t);
  t.nodes[1].kind = CGRT_FILL_NODE;
  t.nodes[1].elem_size = 3;
  expect_refused(&t, "a fill of 3-byte elements", "node k1: its description is malformed: ");

  table_init(&t);
  t.edges[4] = 4;
  expect_refused(&t, "an edge to no node",
                 "its description is malformed: edge 1 joins node 0 to node 4 of 4");

  table_init(&t);
  t.edges[4] = 0;
  expect_refused(&t, "an edge from a node to itself", "edge 1 joins node 0 to node 0 of 4");

  table_init(&t);
  t.edges[4] = 3;
  expect_refused(&t, "an edge into a body",
                 "its description is malformed: edge k0 -> k2 joins two bodies");

  table_init(&t);
  t.edges[5] = 1;
  expect_refused(&t, "a programmatic edge into a switch",
                 "its description is malformed: programmatic edge k0 => sw is not between kernels");

  /* The same pair twice: CUDA refuses a dependency given twice, with an
   * error that names neither node; cgc writes each pair once. */
  table_init(&t);
  t.edges[6] = 0, t.edges[7] = 1; /* k0 -> k1 again, apart from the first */
  expect_refused(&t, "an edge given twice",
                 "its description is malformed: edge k0 -> k1 is in the table twice (edges 0 "
                 "and 2)");

  table_init(&t);
  t.edges[3] = 0, t.edges[4] = 1, t.edges[5] = 1; /* k0 => k1 beside k0 -> k1 */
  expect_refused(&t, "an edge given twice, once programmatic",
                 "edge k0 -> k1 is in the table twice (edges 0 and 1, one of them programmatic)");

  table_init(&t);
  t.edges[2] = 1, t.edges[3] = 0, t.edges[4] = 1, t.edges[5] = 1;
  expect_refused(&t, "a programmatic edge given twice",
                 "edge k0 => k1 is in the table twice (edges 0 and 1)");

  table_init(&t);
  t.edges[0] = 1, t.edges[1] = 0, t.edges[6] = 1, t.edges[7] = 0; /* backward, twice */
  expect_refused(&t, "a backward edge given twice",
                 "edge k1 -> k0 is in the table twice (edges 0 and 2)");

  table_init(&t);
  t.edges[6] = 1, t.edges[7] = 0; /* k0 -> k1 and k1 -> k0: a cycle, not a pair twice */
  {
    cgrt_graph *g = NULL;
    const cgrt_status s = cgrt_create(&g, &t.desc, NULL, NULL);
    checks++;
    if (s == CGRT_ERROR_INVALID && strstr(cgrt_last_error(), "twice")) {
      failures++;
      fprintf(stderr, "test_desc: two edges of opposite directions: %s\n", cgrt_last_error());
    }
    cgrt_destroy(g);
  }

  many_edges();

  table_init(&t);
  t.loads[0] = 3;
  expect_refused(&t, "the scalar upload into a body",
                 "its description is malformed: the scalar upload precedes node 3 of 4");

  table_init(&t);
  t.loads[1] = 1, t.desc.nloads = 2; /* k0, k1: each once */
  expect_accepted(&t, "the scalar upload before two nodes");

  table_init(&t);
  t.loads[1] = 0, t.desc.nloads = 2;
  expect_refused(&t, "a node after the scalar upload twice",
                 "its description is malformed: the scalar upload precedes k0 twice (entries 0 "
                 "and 1 of its list)");

  /* Kernels that are not linked in. */
  table_init(&t);
  from_module(&t);
  expect_accepted(&t, "a kernel from a PTX module");

  table_init(&t);
  t.kernels[0] = NULL;
  expect_refused(&t, "a linked kernel without an address",
                 "its description is malformed: kernel kernel: linked in, but no address");

  table_init(&t);
  from_module(&t);
  t.kernel_from[0].kind = 5;
  expect_refused(&t, "an unknown kernel kind", "kernel kernel: kind 5 is no kind of kernel");

  table_init(&t);
  from_module(&t);
  t.kernel_from[0].module = 1;
  expect_refused(&t, "a module out of range", "kernel kernel: module 1 of 1, symbol k");

  table_init(&t);
  from_module(&t);
  t.kernel_from[0].symbol = NULL;
  expect_refused(&t, "a module kernel without a symbol", "module 0 of 1, symbol (none)");

  table_init(&t);
  from_module(&t);
  t.desc.modules = NULL;
  expect_refused(&t, "modules without their table", "1 modules, but no module table");

  table_init(&t);
  from_module(&t);
  t.modules[0].bytes = sizeof ptx - 1;
  expect_refused(&t, "PTX without its NUL", "module k.ptx: its PTX does not end with a NUL");

  table_init(&t);
  from_module(&t);
  t.modules[0].format = 3;
  expect_refused(&t, "an unknown module format", "module 0: no path, no bytes or format 3");

  table_init(&t);
  from_module(&t);
  t.modules[0].image = NULL;
  expect_refused(&t, "a module without bytes", "module 0: no path, no bytes or format 0");

  table_init(&t);
  from_module(&t);
  t.kernel_from[0] = (cgrt_kernel_from){CGRT_KERNEL_TEMPLATE, 0, NULL, NULL};
  expect_refused(&t, "a template without its accessor",
                 "kernel kernel: a template, but no accessor");
  t.kernel_from[0].address = template_stub;
  t.desc.nmodules = 0;
  t.desc.modules = NULL;
  expect_accepted(&t, "a template kernel");

  /* Grids that follow scalars: k1's grid is cdiv(s, 256) x 1 x 1. */
  static const int64_t grid[] = {CGRT_GRID_SCALAR, 0, CGRT_GRID_CONST, 256, CGRT_GRID_CDIV,
                                 CGRT_GRID_END,    CGRT_GRID_CONST, 1, CGRT_GRID_END,
                                 CGRT_GRID_CONST,  1, CGRT_GRID_END};
  table_init(&t);
  memcpy(t.grid_code, grid, sizeof grid);
  t.desc.grid_code = t.grid_code;
  t.desc.ngrid_code = sizeof grid / sizeof *grid;
  t.scalars[0].bounded = 1;
  t.scalars[0].max = 4096;
  t.nodes[1].grid_expr = 1;
  expect_accepted(&t, "a grid that follows a scalar");
  t.nodes[1].grid_expr = 13;
  expect_refused(&t, "a grid program past the table", "node k1: its description is malformed: grid program 13 of 12 words");
  t.nodes[1].grid_expr = 1;
  t.grid_code[1] = 1;
  expect_refused(&t, "a grid that follows scalar 1 of 1", "its grid follows scalar 1, not an integer one of 1");
  t.grid_code[1] = 0;
  t.scalars[0].type = CGRT_F32;
  t.scalars[0].bounded = 0;
  expect_refused(&t, "a grid that follows a float", "its grid follows scalar 0, not an integer one of 1");
  t.scalars[0].type = CGRT_U32;
  t.scalars[0].bounded = 1;
  t.grid_code[4] = CGRT_GRID_NOPS;
  expect_refused(&t, "an unknown instruction", "its grid program has instruction 12");
  t.grid_code[4] = CGRT_GRID_NEG;
  expect_refused(&t, "two values left", "its grid program leaves 2 values");
  t.grid_code[4] = CGRT_GRID_CDIV;
  t.desc.ngrid_code = 8;
  expect_refused(&t, "a program cut short", "its grid program ends");
  t.desc.ngrid_code = sizeof grid / sizeof *grid;
  t.nodes[2].grid_expr = 1;
  expect_refused(&t, "a grid program on a switch", "node sw: its description is malformed: a grid program on a node that is no kernel node");
  t.nodes[2].grid_expr = 0;
  t.scalars[0].type = CGRT_F32;
  t.nodes[1].grid_expr = 0;
  expect_refused(&t, "a bound on a float", "scalar s: a bound on a type that is no integer");

  /* CGRT_SANITIZER_SAFE: a word it does not know refuses create before any
   * CUDA call, so that a misspelt switch is not silently off. */
  static const char *const unknown[] = {"racecheck", "programmatic,", "1,pdl", "yes"};
  for (size_t i = 0; i < sizeof unknown / sizeof *unknown; i++) {
    char want[128];
    table_init(&t);
    setenv("CGRT_SANITIZER_SAFE", unknown[i], 1);
    snprintf(want, sizeof want, "CGRT_SANITIZER_SAFE is '%s': it takes 1 (or all)", unknown[i]);
    expect_refused(&t, "an unknown CGRT_SANITIZER_SAFE", want);
  }
  static const char *const known[] = {"",       "0",
                                      "1",      "all",
                                      "device-updates", "programmatic",
                                      "stream", "programmatic,device-updates,stream"};
  for (size_t i = 0; i < sizeof known / sizeof *known; i++) {
    table_init(&t);
    setenv("CGRT_SANITIZER_SAFE", known[i], 1);
    expect_accepted(&t, "a CGRT_SANITIZER_SAFE create knows");
  }
  unsetenv("CGRT_SANITIZER_SAFE");

  printf("test_desc: %d checks, %d failed\n", checks, failures);
  return failures ? 1 : 0;
}
