/* emit_tables.c: a graph's constant tables and its description, the rows
 * the runtime walks (cgrt_abi.h), each table printed by a function of its
 * own, each only if it has rows. */
#include "emit_internal.h"

#include <stdlib.h>
#include <string.h>

/* Index of each resource among its kind: buffers and scalars are numbered
 * separately in the tables. */
static void number_resources(const Graph *g, uint32_t *index) {
  uint32_t nb = 0, ns = 0;
  for (size_t r = 0; r < g->res.n; r++)
    index[r] = g->res.v[r].kind == RES_SCALAR ? ns++ : nb++;
}

static const char *buffer_kind_name(BufferKind k) {
  switch (k) {
  case BUF_DEVICE: return "CGRT_DEVICE";
  case BUF_EXTERN: return "CGRT_EXTERN";
  case BUF_HOST: return "CGRT_HOST";
  case BUF_EXTERN_HOST: return "CGRT_EXTERN_HOST";
  }
  return "";
}

/* One row of the argument table; `what` says whose argument it is. */
static void emit_arg(FILE *c, const Graph *g, const uint32_t *index, const Arg *a, int size,
                     const char *node, const char *what) {
  switch (a->kind) {
  case ARG_VIEW:
    fprintf(c, "  {.kind = CGRT_ARG_BUFFER, .size = 8, .index = %u, .value = UINT64_C(%lld)}",
            index[a->res], (long long)a->offset);
    break;
  case ARG_SCALAR_PTR:
    fprintf(c, "  {.kind = CGRT_ARG_SCALAR_PTR, .size = 8, .index = %u}", index[a->res]);
    break;
  case ARG_SCALAR_VALUE:
    fprintf(c, "  {.kind = CGRT_ARG_SCALAR_VALUE, .size = %d, .index = %u}",
            type_size(g->res.v[a->res].type), index[a->res]);
    break;
  case ARG_INT:
  case ARG_FLOAT:
    fprintf(c, "  {.kind = CGRT_ARG_CONST, .size = %d, .value = UINT64_C(0x%llx)}", size,
            (unsigned long long)a->bits);
    break;
  case ARG_HANDLE:
    fprintf(c, "  {.kind = CGRT_ARG_HANDLE, .size = 8, .index = %d}, /* %s: %s = the handle of %s */\n",
            a->res, node, what, g->nodes.v[a->res].name);
    return;
  }
  fprintf(c, ", /* %s: %s", node, what);
  if (a->kind != ARG_INT && a->kind != ARG_FLOAT && strcmp(what, g->res.v[a->res].name->name))
    fprintf(c, " = %s", g->res.v[a->res].name->name);
  if (a->kind == ARG_VIEW && a->offset)
    fprintf(c, " + %lld bytes", (long long)a->offset);
  fprintf(c, " */\n");
}

/* A node's instructions of condition code (a while's or an if's). */
static int cond_code_len(const Node *n) {
  return node_kinds[n->kind].bodies ? n->control->ncond_code : 0;
}

/* A node's words of grid programs (a kernel whose grid follows scalars). */
static int grid_code_len(const Node *n) {
  return node_kinds[n->kind].launch ? n->launch->ngrid_code : 0;
}

/* The comparisons of a node's condition: each takes two operands. */
static int cond_comparisons(const Node *n) {
  int k = 0;
  for (int i = 0; i < cond_code_len(n); i++)
    k += n->control->cond_code[i].op == CGRT_COND_CMP;
  return k;
}

/* The entries a node has in the argument table: a kernel's arguments, a
 * copy's two sides, a fill's destination (its value is in the node), a
 * condition's operands, a switch's scalar. */
static size_t node_args(const Node *n) {
  switch (n->kind) {
  case NK_KERNEL:
  case NK_CAPTURE:
  case NK_COLLECTIVE:
  case NK_COPY: return (size_t)n->nargs;
  case NK_FILL:
  case NK_SWITCH: return 1;
  case NK_WHILE:
  case NK_IF: return 2 * (size_t)cond_comparisons(n);
  }
  return 0;
}

/* A node row's fields of what it runs: a kernel's cluster and priority
 * flags and its kernel (or capture function), a fill's element size. */
static void emit_node_runs(FILE *c, const Kernels *k, const Kernels *captures, const Graph *g,
                           const Node *n) {
  switch (n->kind) {
  case NK_KERNEL:
    if (n->launch->has_cluster)
      fprintf(c, ".has_cluster = 1, ");
    if (n->launch->has_priority)
      fprintf(c, ".has_priority = 1, ");
    fprintf(c, ".kernel = %zu, ", kernel_index(k, n->kernel));
    break;
  case NK_CAPTURE: fprintf(c, ".kernel = %zu, ", kernel_index(captures, n->kernel)); break;
  case NK_FILL: fprintf(c, ".elem_size = %d, ", type_size(g->res.v[n->args[0].res].type)); break;
  case NK_COPY:
  case NK_WHILE:
  case NK_IF:
  case NK_SWITCH:
  case NK_COLLECTIVE: break;
  }
}

/* A node row's launch configuration (kernel) or bytes (copy, fill, and a
 * while's bound). */
static void emit_node_launch(FILE *c, const Graph *g, const Node *n) {
  switch (n->kind) {
  case NK_KERNEL: {
    const Launch *l = n->launch;
    fprintf(c, ".grid = {%lld, %lld, %lld}, .block = {%lld, %lld, %lld}, ", (long long)l->grid[0],
            (long long)l->grid[1], (long long)l->grid[2], (long long)l->block[0],
            (long long)l->block[1], (long long)l->block[2]);
    if (l->has_cluster)
      fprintf(c, ".cluster = {%lld, %lld, %lld}, ", (long long)l->cluster[0],
              (long long)l->cluster[1], (long long)l->cluster[2]);
    if (l->smem)
      fprintf(c, ".smem = %lld, ", (long long)l->smem);
    if (l->has_priority)
      fprintf(c, ".priority = %lld, ", (long long)l->priority);
    break;
  }
  case NK_COPY:
    fprintf(c, ".bytes = UINT64_C(%lld), ", (long long)arg_bytes(g, &n->args[0]));
    break;
  case NK_FILL:
    fprintf(c, ".bytes = UINT64_C(%lld), .value = UINT64_C(0x%llx), ",
            (long long)arg_bytes(g, &n->args[0]), (unsigned long long)n->args[1].bits);
    break;
  case NK_WHILE:
    if (n->control->max_iter)
      fprintf(c, ".max_iter = UINT64_C(%lld), ", (long long)n->control->max_iter);
    break;
  case NK_IF:
  case NK_SWITCH:
  case NK_CAPTURE:
  case NK_COLLECTIVE: break;
  }
}

/* A node row's place (the top, or a body) and what a control node or a
 * collective has. */
static void emit_node_control(FILE *c, const Graph *g, const Node *n, size_t code, size_t ncode,
                              size_t grid_code) {
  char type[16];
  if (n->scope < 0)
    fprintf(c, ".scope = CGRT_TOP");
  else
    fprintf(c, ".scope = %d, .branch = %d", n->scope, n->branch);
  switch (n->kind) {
  case NK_WHILE:
  case NK_IF:
    fprintf(c, ", .nbodies = %d, .code = %zu, .ncode = %zu", n->control->nbodies, code, ncode);
    break;
  case NK_SWITCH:
    fprintf(c, ", .nbodies = %d, .first_case = %zu, .default_body = %d, .selector_type = %s",
            n->control->nbodies, code, n->control->default_body,
            abi_type_name(type, sizeof type, g->res.v[n->control->selector].type));
    break;
  case NK_COLLECTIVE:
    fprintf(c,
            ",\n     .elem_type = %s, .collective = %s, .reduce_op = %s, .root = %lld, "
            ".send_count = UINT64_C(%lld), .recv_count = UINT64_C(%lld)",
            abi_type_name(type, sizeof type, g->res.v[n->args[0].res].type),
            collective_kinds[n->collective->which].abi, reductions[n->collective->reduce_op].abi,
            (long long)n->collective->root, (long long)n->collective->send_count,
            (long long)n->collective->recv_count);
    break;
  case NK_KERNEL:
  case NK_COPY:
  case NK_FILL:
  case NK_CAPTURE: break;
  }
  if (grid_code_len(n))
    fprintf(c, ", .grid_expr = %zu", grid_code + 1);
  if (node_kinds[n->kind].loop && pos_set(n->control->handle_at))
    fprintf(c, ", .body_sets_handle = 1");
}

/* One row of the node table: the fields its kind uses, by name, in the
 * order cgrt_node_desc declares them (C++ requires it). */
static void emit_node(FILE *c, Diag *d, const Kernels *k, const Kernels *captures, const Graph *g,
                      const Node *n, size_t v, size_t arg, size_t nargs, size_t code, size_t ncode,
                      size_t grid_code) {
  const Loc at = pos_loc(d, node_pos(n));
  fprintf(c, "  [%zu] = {.name = \"%s\", .line = %d, .col = %d, .kind = %s,\n     ", v, n->name,
          at.line, at.col, node_kinds[n->kind].abi);
  emit_node_runs(c, k, captures, g, n);
  if (nargs)
    fprintf(c, ".arg = %zu, .nargs = %zu, ", arg, nargs);
  emit_node_launch(c, g, n);
  emit_node_control(c, g, n, code, ncode, grid_code);
  fprintf(c, "},\n");
}

/* A grid program's word: its instruction's name, or a value. */
static void emit_grid_word(FILE *c, const int64_t *code, size_t i, bool operand) {
  static const char *const ops[CGRT_GRID_NOPS] = {
      "CGRT_GRID_END", "CGRT_GRID_CONST", "CGRT_GRID_SCALAR", "CGRT_GRID_ADD",
      "CGRT_GRID_SUB", "CGRT_GRID_MUL",   "CGRT_GRID_DIV",    "CGRT_GRID_MOD",
      "CGRT_GRID_CDIV", "CGRT_GRID_MIN",  "CGRT_GRID_MAX",    "CGRT_GRID_NEG"};
  if (!operand)
    fputs(ops[code[i]], c);
  else if (code[i] == INT64_MIN)
    fputs("-INT64_C(9223372036854775807) - 1", c);
  else
    fprintf(c, "INT64_C(%lld)", (long long)code[i]);
}

/* One graph's tables as they are printed: the numbering of its resources,
 * each node's condition code and how many rows each table has. */
typedef struct Tables {
  FILE *c;
  Diag *diag; /* the nodes' lines and columns */
  const Graph *g;
  char name[CNAME_SIZE]; /* the table being printed */
  uint32_t *index;       /* resource -> its row among the buffers or scalars */
  size_t nbuf, nsc, nargs, ncode, ncases, ngrid;
} Tables;

static void tables_init(Tables *t, FILE *c, Diag *d, const Graph *g) {
  *t = (Tables){.c = c, .diag = d, .g = g};
  t->index = xrealloc(NULL, (g->res.n + 1) * sizeof *t->index);
  number_resources(g, t->index);
  for (size_t r = 0; r < g->res.n; r++)
    g->res.v[r].kind == RES_SCALAR ? t->nsc++ : t->nbuf++;
  for (size_t v = 0; v < g->nodes.n; v++) {
    const Node *n = &g->nodes.v[v];
    t->ncode += (size_t)cond_code_len(n);
    if (node_kinds[n->kind].cases)
      t->ncases += (size_t)n->control->nbodies;
    t->nargs += node_args(n);
    t->ngrid += (size_t)grid_code_len(n);
  }
}

static void tables_free(Tables *t) { free(t->index); }

static const char *table_name(Tables *t, const char *what) {
  return graph_table_c_name(t->name, t->g, what);
}

static void emit_buffer_table(Tables *t) {
  FILE *c = t->c;
  const Graph *g = t->g;
  char buf[256], type[16];
  fprintf(c, "static const cgrt_buffer_desc %s[] = {\n", table_name(t, "buffers"));
  for (size_t r = 0; r < g->res.n; r++) {
    const Resource *res = &g->res.v[r];
    if (res->kind != RES_BUFFER)
      continue;
    fprintf(c, "  {.name = \"%s\", .kind = %s, .zero = %d, .type = %s, .ndims = %d,\n"
               "   .bytes = UINT64_C(%lld), .dims = {",
            res->name->name, buffer_kind_name(res->buffer_kind), res->zero,
            abi_type_name(type, sizeof type, res->type), res->ndims, (long long)res->bytes);
    for (int d = 0; d < res->ndims; d++)
      fprintf(c, "%sUINT64_C(%lld)", d ? ", " : "", (long long)res->dims[d]);
    fprintf(c, "}}, /* %s */\n", shape(buf, sizeof buf, res));
  }
  fprintf(c, "};\n");
}

static void emit_scalar_table(Tables *t) {
  FILE *c = t->c;
  const Graph *g = t->g;
  char type[16];
  fprintf(c, "static const cgrt_scalar_desc %s[] = {\n", table_name(t, "scalars"));
  for (size_t r = 0; r < g->res.n; r++) {
    const Resource *res = &g->res.v[r];
    if (res->kind != RES_SCALAR)
      continue;
    fprintf(c, "  {.name = \"%s\", .size = %d, .memory = %d, .type = %s, .init = UINT64_C(0x%llx)%s",
            res->name->name, type_size(res->type), res->memory,
            abi_type_name(type, sizeof type, res->type), (unsigned long long)res->init_bits,
            res->from_comm == CGRT_RANK    ? ", .from_comm = CGRT_RANK"
            : res->from_comm == CGRT_RANKS ? ", .from_comm = CGRT_RANKS"
                                           : "");
    if (res->bounded)
      fprintf(c, ", .bounded = 1, .max = UINT64_C(0x%llx)",
              (unsigned long long)value_bits(res->type, false, res->bound, 0));
    fprintf(c, "},\n");
  }
  fprintf(c, "};\n");
}

/* A node's rows of args: its condition's operands, then its own. */
static void emit_node_args(Tables *t, size_t v) {
  FILE *c = t->c;
  const Graph *g = t->g;
  const uint32_t *index = t->index;
  const Node *n = &g->nodes.v[v];
  char buf[256];
  size_t operand = 0;
  for (int i = 0; i < cond_code_len(n); i++) { /* a constant takes its operand's size */
    const CondInstr *in = &n->control->cond_code[i];
    if (in->op != CGRT_COND_CMP)
      continue;
    for (int side = 0; side < 2; side++) {
      const Arg *op = side ? in->rhs : in->lhs;
      bool constant = op->kind == ARG_INT || op->kind == ARG_FLOAT;
      snprintf(buf, sizeof buf, "operand %zu", operand++);
      emit_arg(c, g, index, op, constant ? type_size(in->type) : 8, n->name, buf);
    }
  }
  switch (n->kind) {
  case NK_KERNEL:
  case NK_CAPTURE:
    for (int a = 0; a < n->nargs; a++) {
      const Param *p = &n->kernel->params[a];
      emit_arg(c, g, index, &n->args[a], p->pointer ? 8 : type_size(p->type), n->name,
               p->name->name);
    }
    break;
  case NK_COPY:
  case NK_COLLECTIVE:
    emit_arg(c, g, index, &n->args[0], 8, n->name, "dst");
    emit_arg(c, g, index, &n->args[1], 8, n->name, "src");
    break;
  case NK_FILL: /* the value is in the node */
    emit_arg(c, g, index, &n->args[0], 8, n->name, "dst");
    break;
  case NK_SWITCH:
    emit_arg(c, g, index, &(Arg){.kind = ARG_SCALAR_PTR, .res = n->control->selector}, 8, n->name,
             "selector");
    break;
  case NK_WHILE:
  case NK_IF: break; /* the operands above */
  }
}

static void emit_arg_table(Tables *t) {
  fprintf(t->c, "static const cgrt_arg_desc %s[] = {\n", table_name(t, "args"));
  for (size_t v = 0; v < t->g->nodes.n; v++)
    emit_node_args(t, v);
  fprintf(t->c, "};\n");
}

static void emit_node_table(Tables *t, const Kernels *k, const Kernels *captures) {
  const Graph *g = t->g;
  fprintf(t->c, "static const cgrt_node_desc %s[] = {\n", table_name(t, "nodes"));
  size_t first = 0, code = 0, cases = 0, grid = 0;
  for (size_t v = 0; v < g->nodes.n; v++) {
    const Node *n = &g->nodes.v[v];
    emit_node(t->c, t->diag, k, captures, g, n, v, first, node_args(n),
              node_kinds[n->kind].cases ? cases : code, (size_t)cond_code_len(n), grid);
    grid += (size_t)grid_code_len(n);
    first += node_args(n);
    code += (size_t)cond_code_len(n);
    if (node_kinds[n->kind].cases)
      cases += (size_t)n->control->nbodies;
  }
  fprintf(t->c, "};\n");
}

static void emit_edge_table(Tables *t) {
  FILE *c = t->c;
  const Graph *g = t->g;
  fprintf(c, "static const uint32_t %s[] = {\n", table_name(t, "edges"));
  for (size_t e = 0; e < g->edges.n; e++)
    fprintf(c, "  %u, %u, %d, /* %s %s %s */\n", g->edges.v[e].from, g->edges.v[e].to,
            g->edges.v[e].programmatic, g->nodes.v[g->edges.v[e].from].name,
            g->edges.v[e].programmatic ? "=>" : "->", g->nodes.v[g->edges.v[e].to].name);
  fprintf(c, "};\n");
}

/* The shortest spelling that reads back as the same double, with a point
 * (as a float constant is written). */
static void spell_float(FILE *c, double v) {
  char buf[40];
  shortest_float(buf, sizeof buf, v);
  fputs(buf, c);
  if (!strpbrk(buf, ".eEni")) /* not 1e-06, inf or nan */
    fputs(".0", c);
}

/* A condition's operand as the source spells it: a constant, a scalar, or
 * a buffer's element. */
static void spell_operand(FILE *c, const Graph *g, const Arg *a, Type type) {
  switch (a->kind) {
  case ARG_INT:
    fprintf(c, type_is_float(type) ? "%lld.0" : "%lld", (long long)a->ival);
    return;
  case ARG_FLOAT: spell_float(c, a->fval); return;
  case ARG_VIEW: {
    const Resource *r = &g->res.v[a->res];
    fprintf(c, "%s[%lld]", r->name->name, (long long)(a->offset / type_size(r->type)));
    return;
  }
  default: fputs(g->res.v[a->res].name->name, c); return;
  }
}

/* A condition as the source spells it (an || inside an && and what `!`
 * negates in parentheses), for the comment beside its code. */
static void spell_cond(FILE *c, const Graph *g, const CheckedCond *cc, CondKind outer) {
  switch (cc->kind) {
  case COND_CMP:
    spell_operand(c, g, &cc->lhs, cc->type);
    fprintf(c, " %s ", comparisons[cc->cmp].name);
    spell_operand(c, g, &cc->rhs, cc->type);
    return;
  case COND_NOT:
    fputs("!(", c);
    spell_cond(c, g, cc->a, COND_NOT);
    fputs(")", c);
    return;
  case COND_AND:
  case COND_OR: {
    bool paren = outer == COND_AND && cc->kind == COND_OR;
    fputs(paren ? "(" : "", c);
    spell_cond(c, g, cc->a, cc->kind);
    fputs(cc->kind == COND_AND ? " && " : " || ", c);
    spell_cond(c, g, cc->b, cc->kind);
    fputs(paren ? ")" : "", c);
    return;
  }
  }
}

/* One instruction, symbolically: the runtime's macros, not their values. */
static void emit_cond_instr(FILE *c, const CondInstr *in) {
  char type[64];
  if (in->op == CGRT_COND_CMP)
    fprintf(c, "CGRT_COND_COMPARE(%s, %s, %d)", abi_type_name(type, sizeof type, in->type),
            comparisons[in->cmp].abi, in->negate);
  else
    fputs(in->op == CGRT_COND_AND ? "CGRT_COND_AND" : "CGRT_COND_OR", c);
}

/* The conditions' code, an instruction a line, each node's after its
 * condition as written. */
static void emit_code_table(Tables *t) {
  FILE *c = t->c;
  fprintf(c, "static const uint8_t %s[] = {\n", table_name(t, "code"));
  for (size_t v = 0; v < t->g->nodes.n; v++) {
    const Node *n = &t->g->nodes.v[v];
    if (!cond_code_len(n))
      continue;
    fprintf(c, "  /* %s: ", n->name);
    spell_cond(c, t->g, n->control->cond, COND_CMP);
    fputs(" */\n", c);
    for (int i = 0; i < n->control->ncond_code; i++) {
      fputs("  ", c);
      emit_cond_instr(c, &n->control->cond_code[i]);
      fputs(",\n", c);
    }
  }
  fprintf(c, "};\n");
}

static void emit_case_table(Tables *t) {
  FILE *c = t->c;
  const Graph *g = t->g;
  fprintf(c, "static const uint64_t %s[] = {\n", table_name(t, "cases"));
  for (size_t v = 0; v < g->nodes.n; v++) {
    const Node *n = &g->nodes.v[v];
    if (!node_kinds[n->kind].cases)
      continue;
    const Control *ctl = n->control;
    for (int b = 0; b < ctl->nbodies; b++) {
      if (b == ctl->default_body)
        fprintf(c, "  UINT64_C(0x0), /* %s: default */\n", n->name);
      else
        fprintf(c, "  UINT64_C(0x%llx), /* %s: case %lld */\n",
                (unsigned long long)ctl->case_values[b], n->name, (long long)ctl->case_values[b]);
    }
  }
  fprintf(c, "};\n");
}

/* A node's grid program: x, y and z, each ended by CGRT_GRID_END. */
static void emit_node_grid(Tables *t, const Node *n) {
  FILE *c = t->c;
  fprintf(c, "  /* %s: x, y, z */", n->name);
  const int64_t *code = n->launch->grid_code;
  bool start = true;
  for (size_t i = 0; i < (size_t)n->launch->ngrid_code; i++) {
    int64_t w = code[i];
    fputs(start ? "\n  " : " ", c);
    start = w == CGRT_GRID_END;
    emit_grid_word(c, code, i, false);
    if (w == CGRT_GRID_CONST || w == CGRT_GRID_SCALAR) {
      i++;
      fputs(", ", c);
      if (w == CGRT_GRID_SCALAR)
        fprintf(c, "%u /* %s */", t->index[code[i]], t->g->res.v[code[i]].name->name);
      else
        emit_grid_word(c, code, i, true);
    }
    fputs(",", c);
  }
  fputs("\n", c);
}

static void emit_grid_table(Tables *t) {
  fprintf(t->c, "static const int64_t %s[] = {\n", table_name(t, "grid_code"));
  for (size_t v = 0; v < t->g->nodes.n; v++)
    if (grid_code_len(&t->g->nodes.v[v]))
      emit_node_grid(t, &t->g->nodes.v[v]);
  fprintf(t->c, "};\n");
}

static void emit_load_table(Tables *t) {
  const Graph *g = t->g;
  fprintf(t->c, "static const uint32_t %s[] = {", table_name(t, "loads"));
  for (size_t i = 0; i < g->loads.n; i++)
    fprintf(t->c, "%s%u", i ? ", " : "", g->loads.v[i]);
  fprintf(t->c, "};\n");
}

/* Collectives, or scalars the communicator sets: NCCL's part. */
static bool uses_comm(const Graph *g) {
  bool comm = false;
  for (size_t v = 0; v < g->nodes.n; v++)
    comm |= node_kinds[g->nodes.v[v].kind].collective;
  for (size_t r = 0; r < g->res.n; r++)
    comm |= g->res.v[r].kind == RES_SCALAR && g->res.v[r].from_comm != CGRT_FROM_VALUE;
  return comm;
}

/* The graph's description, which points to its tables. */
static void emit_graph_desc(Tables *t, const Kernels *k, const Kernels *captures,
                            size_t nmodules, const char *source) {
  FILE *c = t->c;
  const Graph *g = t->g;
  fprintf(c, "static const cgrt_graph_desc %s = {\n  .abi = CGRT_ABI, .name = \"%s\", .source = ",
          table_name(t, "desc"), g->name->name);
  emit_string(c, source);
  fprintf(c, ",\n  .nbuffers = %zu, .nscalars = %zu, .nnodes = %zu, .nedges = %zu, .nkernels = %zu, "
             ".nloads = %zu, .ncode = %zu, .ncases = %zu",
          t->nbuf, t->nsc, g->nodes.n, g->edges.n, k->n, g->loads.n, t->ncode, t->ncases);
  /* The description points to each table that is not empty, in the order
   * cgrt_graph_desc declares them. */
  static const char *const tables[] = {"buffers", "scalars", "nodes", "args", "edges",
                                       "loads",   "",        "code",  "cases"};
  size_t counts[] = {t->nbuf,    t->nsc,     g->nodes.n, t->nargs,  g->edges.n,
                     g->loads.n, k->n,       t->ncode,   t->ncases};
  for (size_t i = 0; i < sizeof counts / sizeof *counts; i++)
    if (counts[i] && !*tables[i])
      fprintf(c, ",\n  .kernels = cgc_kernels, .kernel_names = cgc_kernel_names");
    else if (counts[i])
      fprintf(c, ",\n  .%s = %s", tables[i], table_name(t, tables[i]));
  if (captures->n)
    fprintf(c, ",\n  .ncaptures = %zu, .captures = cgc_captures, .capture_names = cgc_capture_names",
            captures->n);
  if (uses_comm(g))
    fprintf(c, ",\n  .collectives = &cgrt_nccl");
  if (!all_linked(k))
    fprintf(c, ",\n  .kernel_from = cgc_kernel_from");
  if (nmodules)
    fprintf(c, ",\n  .nmodules = %zu, .modules = cgc_modules", nmodules);
  if (t->ngrid)
    fprintf(c, ",\n  .ngrid_code = %zu, .grid_code = %s", t->ngrid,
            table_name(t, "grid_code"));
  fprintf(c, "\n};\n");
}

/* A graph's tables, each only if it has rows, and its description. */
void emit_tables(FILE *c, Diag *d, const Kernels *k, const Kernels *captures, size_t nmodules,
                 const Graph *g, const char *source) {
  Tables t;
  tables_init(&t, c, d, g);
  fprintf(c, "\n/* graph %s */\n", g->name->name);
  if (t.nbuf)
    emit_buffer_table(&t);
  if (t.nsc)
    emit_scalar_table(&t);
  if (t.nargs)
    emit_arg_table(&t);
  if (g->nodes.n)
    emit_node_table(&t, k, captures);
  if (g->edges.n)
    emit_edge_table(&t);
  if (t.ncode)
    emit_code_table(&t);
  if (t.ncases)
    emit_case_table(&t);
  if (t.ngrid)
    emit_grid_table(&t);
  if (g->loads.n)
    emit_load_table(&t);
  emit_graph_desc(&t, k, captures, nmodules, source);
  tables_free(&t);
}
