/* emit_c.c: the generated C and header (language reference, section 8).
 *
 * Each graph becomes constant tables that the runtime walks (buffers,
 * scalars, arguments, nodes, edges) and a few one-line functions, so the C
 * compiles in time linear in the graph.  Everything here was decided by
 * sema.c and order.c; this file only prints. */
#include "cgc.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static const char *c_type(Type t) {
  static const char *const names[] = {
      [TY_I8] = "int8_t",    [TY_I16] = "int16_t",   [TY_I32] = "int32_t",
      [TY_I64] = "int64_t",  [TY_U8] = "uint8_t",    [TY_U16] = "uint16_t",
      [TY_U32] = "uint32_t", [TY_U64] = "uint64_t",  [TY_F16] = "uint16_t",
      [TY_BF16] = "uint16_t", [TY_F32] = "float",    [TY_F64] = "double",
      [TY_HANDLE] = "uint64_t", /* a cudaGraphConditionalHandle */
  };
  return names[t];
}

static const char *cuda_type(Type t) {
  switch (t) {
  case TY_F16: return "__half";
  case TY_BF16: return "__nv_bfloat16";
  case TY_HANDLE: return "cudaGraphConditionalHandle";
  default: return c_type(t);
  }
}

/* A type's constant in the tables: CGRT_F32 for f32. */
static const char *abi_type_name(char *buf, size_t size, Type t) {
  int n = snprintf(buf, size, "CGRT_");
  for (const char *p = type_name(t); *p && n < (int)size - 1; p++)
    buf[n++] = (char)toupper((unsigned char)*p);
  buf[n] = 0;
  return buf;
}

static const char *shape(char *buf, size_t size, const Resource *r) {
  int n = snprintf(buf, size, "%s[", type_name(r->type));
  for (int i = 0; i < r->ndims && n < (int)size - 24; i++)
    n += snprintf(buf + n, size - (size_t)n, "%s%lld", i ? ", " : "", (long long)r->dims[i]);
  snprintf(buf + n, size - (size_t)n, "]");
  return buf;
}

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

/* The kernels (or the capture functions) some graph calls, in declaration
 * order: only these are referenced, so one declared and never used need
 * not be linked. */
typedef struct Kernels {
  const Item **v;
  size_t n;
} Kernels;

static Kernels used_kernels(Compiler *cc, const Program *p, NodeKind kind) {
  Map used = {0};
  for (size_t i = 0; i < p->graphs.n; i++)
    for (size_t v = 0; v < p->graphs.v[i]->nodes.n; v++) {
      const Node *n = &p->graphs.v[i]->nodes.v[v];
      if (n->kind == kind)
        map_put(&used, n->kernel, (void *)n->kernel);
    }
  Kernels k = {xrealloc(NULL, (cc->items.n + 1) * sizeof *k.v), 0};
  for (size_t j = 0; j < cc->items.n; j++)
    if (cc->items.v[j]->kind == IT_KERNEL && map_get(&used, cc->items.v[j]))
      k.v[k.n++] = cc->items.v[j];
  map_free(&used);
  return k;
}

static size_t kernel_index(const Kernels *k, const Item *kernel) {
  size_t i = 0;
  while (i < k->n && k->v[i] != kernel)
    i++;
  return i;
}

/* Whether every kernel is linked in: then the tables need no kernel_from. */
static bool all_linked(const Kernels *k) {
  for (size_t i = 0; i < k->n; i++)
    if (k->v[i]->source != KS_LINKED)
      return false;
  return true;
}

/* A C string literal.  A '?' after a '?' is written \? so that no ??/,
 * ??= ... stands in the literal: under -std=c11 those are trigraphs. */
static void emit_string(FILE *f, const char *s) {
  fputc('"', f);
  for (const char *start = s; *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '"' || ch == '\\' || (ch == '?' && s > start && s[-1] == '?'))
      fprintf(f, "\\%c", ch);
    else if (ch < 0x20 || ch >= 0x7f)
      fprintf(f, "\\%03o", ch);
    else
      fputc(ch, f);
  }
  fputc('"', f);
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

/* A control node's condition as the runtime evaluates it: postfix code
 * over operands taken two at a time by the comparisons.  `!` is pushed
 * down to the comparisons (De Morgan), each of which can negate its
 * result, so the code holds no NOT and no deeper stack than the
 * comparisons. */
typedef struct CondCode {
  VEC(uint8_t) code;
  VEC(const Arg *) ops;
  VEC(Type) types; /* each operand's */
} CondCode;

static void cond_code(CondCode *cc, const CheckedCond *c, bool negate) {
  switch (c->kind) {
  case COND_CMP:
    vec_push(&cc->code, (uint8_t)CGRT_COND_COMPARE(abi_type(c->type), c->cmp, negate));
    vec_push(&cc->ops, &c->lhs);
    vec_push(&cc->ops, &c->rhs);
    vec_push(&cc->types, c->type);
    vec_push(&cc->types, c->type);
    break;
  case COND_AND:
  case COND_OR:
    cond_code(cc, c->a, negate);
    cond_code(cc, c->b, negate);
    vec_push(&cc->code, (uint8_t)((c->kind == COND_AND) != negate ? CGRT_COND_AND : CGRT_COND_OR));
    break;
  case COND_NOT: cond_code(cc, c->a, !negate); break;
  }
}

/* The entries a node has in the argument table: a kernel's arguments, a
 * copy's two sides, a fill's destination (its value is in the node), a
 * condition's operands, a switch's scalar. */
static size_t node_args(const Node *n, const CondCode *cc) {
  switch (n->kind) {
  case NK_KERNEL:
  case NK_CAPTURE:
  case NK_COLLECTIVE:
  case NK_COPY: return (size_t)n->nargs;
  case NK_FILL:
  case NK_SWITCH: return 1;
  case NK_WHILE:
  case NK_IF: return cc->ops.n;
  }
  return 0;
}

/* One row of the node table: the fields its kind uses, by name, in the
 * order cgrt_node_desc declares them (C++ requires it). */
static void emit_node(FILE *c, const Kernels *k, const Kernels *captures, const Graph *g,
                      const Node *n, size_t v, size_t arg, size_t nargs, size_t code,
                      size_t ncode, size_t grid_code) {
  fprintf(c, "  [%zu] = {.name = \"%s\", .line = %d, .col = %d, .kind = %s,\n     ", v, n->name,
          n->pos.line, n->pos.col, node_kinds[n->kind].abi);
  switch (n->kind) {
  case NK_KERNEL:
    if (n->has_cluster)
      fprintf(c, ".has_cluster = 1, ");
    if (n->has_priority)
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
  if (nargs)
    fprintf(c, ".arg = %zu, .nargs = %zu, ", arg, nargs);
  switch (n->kind) {
  case NK_KERNEL:
    fprintf(c, ".grid = {%lld, %lld, %lld}, .block = {%lld, %lld, %lld}, ", (long long)n->grid[0],
            (long long)n->grid[1], (long long)n->grid[2], (long long)n->block[0],
            (long long)n->block[1], (long long)n->block[2]);
    if (n->has_cluster)
      fprintf(c, ".cluster = {%lld, %lld, %lld}, ", (long long)n->cluster[0],
              (long long)n->cluster[1], (long long)n->cluster[2]);
    if (n->smem)
      fprintf(c, ".smem = %lld, ", (long long)n->smem);
    if (n->has_priority)
      fprintf(c, ".priority = %lld, ", (long long)n->priority);
    break;
  case NK_COPY: fprintf(c, ".bytes = UINT64_C(%lld), ", (long long)n->args[0].bytes); break;
  case NK_FILL:
    fprintf(c, ".bytes = UINT64_C(%lld), .value = UINT64_C(0x%llx), ", (long long)n->args[0].bytes,
            (unsigned long long)n->args[1].bits);
    break;
  case NK_WHILE:
    if (n->max_iter)
      fprintf(c, ".bytes = UINT64_C(%lld), ", (long long)n->max_iter); /* the bound */
    break;
  case NK_IF:
  case NK_SWITCH:
  case NK_CAPTURE:
  case NK_COLLECTIVE: break;
  }
  if (n->scope < 0)
    fprintf(c, ".scope = CGRT_TOP");
  else
    fprintf(c, ".scope = %d, .branch = %d", n->scope, n->branch);
  switch (n->kind) {
  case NK_WHILE:
  case NK_IF:
    fprintf(c, ", .nbodies = %d, .code = %zu, .ncode = %zu", n->nbodies, code, ncode);
    break;
  case NK_SWITCH:
    fprintf(c, ", .nbodies = %d, .code = %zu, .ncode = %d, .default_body = %d, .selector_type = %d",
            n->nbodies, code, n->nbodies, n->default_body, abi_type(g->res.v[n->selector].type));
    break;
  case NK_COLLECTIVE:
    fprintf(c, ",\n     .selector_type = %d, .collective = %s, .reduce_op = %s, .root = %lld, "
               ".send_count = UINT64_C(%lld), .recv_count = UINT64_C(%lld)",
            abi_type(g->res.v[n->args[0].res].type), collective_kinds[n->collective].abi,
            reductions[n->reduce_op].abi,
            (long long)n->root, (long long)n->send_count, (long long)n->recv_count);
    break;
  case NK_KERNEL:
  case NK_COPY:
  case NK_FILL:
  case NK_CAPTURE: break;
  }
  if (n->grid_code)
    fprintf(c, ", .grid_expr = %zu", grid_code + 1);
  if (n->kind == NK_WHILE && n->handle_at.file >= 0)
    fprintf(c, ", .body_sets_handle = 1");
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
  const Graph *g;
  char name[CNAME_SIZE]; /* the table being printed */
  uint32_t *index;       /* resource -> its row among the buffers or scalars */
  CondCode *conds;       /* per node */
  size_t nbuf, nsc, nargs, ncode, ncases, ngrid;
} Tables;

static void tables_init(Tables *t, FILE *c, const Graph *g) {
  *t = (Tables){.c = c, .g = g};
  t->index = xrealloc(NULL, (g->res.n + 1) * sizeof *t->index);
  number_resources(g, t->index);
  for (size_t r = 0; r < g->res.n; r++)
    g->res.v[r].kind == RES_SCALAR ? t->nsc++ : t->nbuf++;
  t->conds = xrealloc(NULL, (g->nodes.n + 1) * sizeof *t->conds);
  for (size_t v = 0; v < g->nodes.n; v++) {
    const Node *n = &g->nodes.v[v];
    memset(&t->conds[v], 0, sizeof t->conds[v]);
    if (n->kind == NK_WHILE || n->kind == NK_IF)
      cond_code(&t->conds[v], n->cond, false);
    t->ncode += t->conds[v].code.n;
    if (n->kind == NK_SWITCH)
      t->ncases += (size_t)n->nbodies;
    t->nargs += node_args(n, &t->conds[v]);
    t->ngrid += (size_t)n->ngrid_code;
  }
}

static void tables_free(Tables *t) {
  for (size_t v = 0; v < t->g->nodes.n; v++) {
    vec_free(&t->conds[v].code);
    vec_free(&t->conds[v].ops);
    vec_free(&t->conds[v].types);
  }
  free(t->conds);
  free(t->index);
}

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
  const CondCode *cc = &t->conds[v];
  char buf[256];
  for (size_t i = 0; i < cc->ops.n; i++) { /* a constant takes its operand's size */
    const Arg *op = cc->ops.v[i];
    bool constant = op->kind == ARG_INT || op->kind == ARG_FLOAT;
    snprintf(buf, sizeof buf, "operand %zu", i);
    emit_arg(c, g, index, op, constant ? type_size(cc->types.v[i]) : 8, n->name, buf);
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
    emit_arg(c, g, index, &(Arg){.kind = ARG_SCALAR_PTR, .res = n->selector}, 8, n->name,
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
    const CondCode *cc = &t->conds[v];
    emit_node(t->c, k, captures, g, n, v, first, node_args(n, cc),
              n->kind == NK_SWITCH ? cases : code, cc->code.n, grid);
    grid += (size_t)n->ngrid_code;
    first += node_args(n, cc);
    code += cc->code.n;
    if (n->kind == NK_SWITCH)
      cases += (size_t)n->nbodies;
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

static void emit_code_table(Tables *t) {
  FILE *c = t->c;
  fprintf(c, "static const uint8_t %s[] = {", table_name(t, "code"));
  size_t i = 0;
  for (size_t v = 0; v < t->g->nodes.n; v++)
    for (size_t j = 0; j < t->conds[v].code.n; j++, i++)
      fprintf(c, "%s%s%u", i ? "," : "", i % 16 ? " " : "\n  ", t->conds[v].code.v[j]);
  fprintf(c, "\n};\n");
}

static void emit_case_table(Tables *t) {
  FILE *c = t->c;
  const Graph *g = t->g;
  fprintf(c, "static const uint64_t %s[] = {\n", table_name(t, "cases"));
  for (size_t v = 0; v < g->nodes.n; v++) {
    const Node *n = &g->nodes.v[v];
    if (n->kind == NK_SWITCH)
      for (int b = 0; b < n->nbodies; b++) {
        if (b == n->default_body)
          fprintf(c, "  UINT64_C(0x0), /* %s: default */\n", n->name);
        else
          fprintf(c, "  UINT64_C(0x%llx), /* %s: case %lld */\n",
                  (unsigned long long)n->case_values[b], n->name, (long long)n->case_values[b]);
      }
  }
  fprintf(c, "};\n");
}

/* A node's grid program: x, y and z, each ended by CGRT_GRID_END. */
static void emit_node_grid(Tables *t, const Node *n) {
  FILE *c = t->c;
  fprintf(c, "  /* %s: x, y, z */", n->name);
  bool start = true;
  for (size_t i = 0; i < (size_t)n->ngrid_code; i++) {
    int64_t w = n->grid_code[i];
    fputs(start ? "\n  " : " ", c);
    start = w == CGRT_GRID_END;
    emit_grid_word(c, n->grid_code, i, false);
    if (w == CGRT_GRID_CONST || w == CGRT_GRID_SCALAR) {
      i++;
      fputs(", ", c);
      if (w == CGRT_GRID_SCALAR)
        fprintf(c, "%u /* %s */", t->index[n->grid_code[i]],
                t->g->res.v[n->grid_code[i]].name->name);
      else
        emit_grid_word(c, n->grid_code, i, true);
    }
    fputs(",", c);
  }
  fputs("\n", c);
}

static void emit_grid_table(Tables *t) {
  fprintf(t->c, "static const int64_t %s[] = {\n", table_name(t, "grid_code"));
  for (size_t v = 0; v < t->g->nodes.n; v++)
    if (t->g->nodes.v[v].grid_code)
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
    comm |= g->nodes.v[v].kind == NK_COLLECTIVE;
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
static void emit_tables(FILE *c, const Kernels *k, const Kernels *captures, size_t nmodules,
                        const Graph *g, const char *source) {
  Tables t;
  tables_init(&t, c, g);
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

/* A graph's names in C that its functions and declarations spell. */
typedef struct GraphNames {
  char type[CNAME_SIZE], ext[CNAME_SIZE], create[CNAME_SIZE], launch[CNAME_SIZE],
      destroy[CNAME_SIZE], user[CNAME_SIZE], pool_bytes[CNAME_SIZE], desc[CNAME_SIZE];
} GraphNames;

static void graph_names(GraphNames *n, const Graph *g) {
  graph_c_name(n->type, GN_TYPE, g, NULL);
  graph_c_name(n->ext, GN_EXTERN, g, NULL);
  graph_c_name(n->create, GN_CREATE, g, NULL);
  graph_c_name(n->launch, GN_LAUNCH, g, NULL);
  graph_c_name(n->destroy, GN_DESTROY, g, NULL);
  graph_c_name(n->user, GN_USER, g, NULL);
  graph_c_name(n->pool_bytes, GN_POOL_BYTES, g, NULL);
  graph_table_c_name(n->desc, g, "desc");
}

static bool is_extern(const Resource *r) {
  return r->kind == RES_BUFFER &&
         (r->buffer_kind == BUF_EXTERN || r->buffer_kind == BUF_EXTERN_HOST);
}

/* The definitions name their parameters cgc_*, which no name of the
 * program can be, so a graph's type never hides behind a parameter. */
static void emit_functions(FILE *c, const Graph *g) {
  GraphNames n;
  graph_names(&n, g);
  const char *gt = n.type;
  size_t next = 0;
  for (size_t r = 0; r < g->res.n; r++)
    next += is_extern(&g->res.v[r]);
  fprintf(c, "\n");
  if (next) {
    fprintf(c,
            "cgrt_status %s(%s **cgc_out, const %s *cgc_ext, const cgrt_options "
            "*cgc_opt) {\n"
            "  void *cgc_externs[%zu];\n"
            "  cgrt_graph *cgc_graph = NULL;\n"
            "  cgrt_status cgc_status;\n"
            "  if (!cgc_out || !cgc_ext)\n"
            "    return cgrt_invalid(&%s, cgc_out ? \"create: ext is NULL\" : \"create: "
            "out is NULL\");\n",
            n.create, gt, n.ext, next, n.desc);
    size_t e = 0;
    for (size_t r = 0; r < g->res.n; r++)
      if (is_extern(&g->res.v[r]))
        fprintf(c, "  cgc_externs[%zu] = cgc_ext->%s;\n", e++, member_c_name(&g->res.v[r]));
    fprintf(c, "  cgc_status = cgrt_create(&cgc_graph, &%s, cgc_externs, cgc_opt);\n", n.desc);
  } else {
    fprintf(c,
            "cgrt_status %s(%s **cgc_out, const cgrt_options *cgc_opt) {\n"
            "  cgrt_graph *cgc_graph = NULL;\n"
            "  cgrt_status cgc_status;\n"
            "  if (!cgc_out)\n"
            "    return cgrt_invalid(&%s, \"create: out is NULL\");\n"
            "  cgc_status = cgrt_create(&cgc_graph, &%s, NULL, cgc_opt);\n",
            n.create, gt, n.desc, n.desc);
  }
  fprintf(c, "  *cgc_out = (%s *)cgc_graph;\n  return cgc_status;\n}\n\n", gt);
  fprintf(c,
          "cgrt_status %s(%s *cgc_graph, cudaStream_t cgc_stream) {\n"
          "  return cgrt_launch((cgrt_graph *)cgc_graph, cgc_stream);\n}\n\n",
          n.launch, gt);
  uint32_t nb = 0, ns = 0;
  char fn[CNAME_SIZE], fn2[CNAME_SIZE];
  for (size_t r = 0; r < g->res.n; r++) {
    const Resource *res = &g->res.v[r];
    if (res->kind == RES_SCALAR) {
      fprintf(c,
              "cgrt_status %s(%s *cgc_graph, %s cgc_value) {\n"
              "  return cgrt_set_scalar((cgrt_graph *)cgc_graph, %u, &cgc_value);\n}\n\n"
              "cgrt_status %s(%s *cgc_graph, %s *cgc_value) {\n"
              "  return cgrt_get_scalar((cgrt_graph *)cgc_graph, %u, cgc_value);\n}\n\n",
              graph_c_name(fn, GN_SET, g, res), gt, c_type(res->type), ns,
              graph_c_name(fn2, GN_GET, g, res), gt, c_type(res->type), ns);
      ns++;
      continue;
    }
    if (is_extern(res))
      fprintf(c,
              "cgrt_status %s(%s *cgc_graph, void *cgc_ptr) {\n"
              "  return cgrt_bind((cgrt_graph *)cgc_graph, %u, cgc_ptr);\n}\n\n",
              graph_c_name(fn, GN_BIND, g, res), gt, nb);
    else
      fprintf(c,
              "void *%s(%s *cgc_graph) {\n"
              "  return cgrt_buffer((cgrt_graph *)cgc_graph, %u);\n}\n\n",
              graph_c_name(fn, GN_BUFFER, g, res), gt, nb);
    nb++;
  }
  fprintf(c,
          "void *%s(%s *cgc_graph) {\n  return cgrt_user((cgrt_graph *)cgc_graph);\n}\n\n"
          "void %s(%s *cgc_graph) {\n  cgrt_destroy((cgrt_graph *)cgc_graph);\n}\n\n"
          "size_t %s(void) {\n  return cgrt_pool_bytes(&%s);\n}\n",
          n.user, gt, n.destroy, gt, n.pool_bytes, n.desc);
}

static void emit_declarations(FILE *h, const Graph *g) {
  GraphNames n;
  graph_names(&n, g);
  const char *gt = n.type;
  char buf[256], fn[CNAME_SIZE], fn2[CNAME_SIZE];
  bool has_extern = false;
  fprintf(h, "\n/* graph %s */\ntypedef struct %s %s;\n", g->name->name, gt, gt);
  for (size_t r = 0; r < g->res.n; r++) {
    const Resource *res = &g->res.v[r];
    if (!is_extern(res))
      continue;
    if (!has_extern)
      fprintf(h, "\ntypedef struct %s {\n", n.ext);
    has_extern = true;
    fprintf(h, "  void *%s; /* %s%s */\n", member_c_name(res), shape(buf, sizeof buf, res),
            res->buffer_kind == BUF_EXTERN_HOST ? ", pinned host memory" : "");
  }
  if (has_extern)
    fprintf(h, "} %s;\n", n.ext);
  fprintf(h, "\n");
  if (has_extern)
    fprintf(h, "cgrt_status %s(%s **out, const %s *ext, const cgrt_options *opt);\n", n.create,
            gt, n.ext);
  else
    fprintf(h, "cgrt_status %s(%s **out, const cgrt_options *opt);\n", n.create, gt);
  fprintf(h, "cgrt_status %s(%s *graph, cudaStream_t stream);\n", n.launch, gt);
  for (size_t r = 0; r < g->res.n; r++) {
    const Resource *res = &g->res.v[r];
    if (res->kind == RES_SCALAR)
      fprintf(h,
              "cgrt_status %s(%s *graph, %s value); /* %s */\n"
              "cgrt_status %s(%s *graph, %s *value);\n",
              graph_c_name(fn, GN_SET, g, res), gt, c_type(res->type), type_name(res->type),
              graph_c_name(fn2, GN_GET, g, res), gt, c_type(res->type));
    else if (is_extern(res))
      fprintf(h, "cgrt_status %s(%s *graph, void *ptr);\n", graph_c_name(fn, GN_BIND, g, res),
              gt);
    else
      fprintf(h, "void *%s(%s *graph); /* %s%s */\n", graph_c_name(fn, GN_BUFFER, g, res), gt,
              shape(buf, sizeof buf, res), res->buffer_kind == BUF_HOST ? ", pinned host" : "");
  }
  fprintf(h, "void *%s(%s *graph);\nvoid %s(%s *graph);\n", n.user, gt, n.destroy, gt);
  fprintf(h, "size_t %s(void); /* the memory of its owned buffers, for a cgrt_pool */\n",
          n.pool_bytes);
}

static bool has_half_param(const Item *k) {
  for (int i = 0; i < k->nparams; i++)
    if (k->params[i].type == TY_F16 || k->params[i].type == TY_BF16)
      return true;
  return false;
}

/* A kernel's or capture function's parameters, after `sep`: as CUDA
 * types (__half, __nv_bfloat16), or as C types, where f16 and bf16 are
 * uint16_t, the same bits and ABI. */
static void emit_params(FILE *h, const Item *k, const char *sep, bool cuda) {
  for (int i = 0; i < k->nparams; i++) {
    const Param *p = &k->params[i];
    fprintf(h, "%s%s%s%s%s", i ? ", " : sep, p->pointer && p->mode == MODE_IN ? "const " : "",
            cuda ? cuda_type(p->type) : c_type(p->type), p->pointer ? " *" : " ",
            param_c_name(p));
  }
}

/* A capture function's prototype.  The stream and user parameters are
 * named cgc_*, which no parameter of the program can be. */
static void emit_capture_prototype(FILE *h, const Item *k, bool cxx) {
  fprintf(h, "cudaError_t %s(cudaStream_t cgc_stream, void *cgc_user", kernel_c_name(k));
  emit_params(h, k, ", ", cxx);
  fprintf(h, ");\n");
}

static void emit_capture_declarations(FILE *h, Compiler *cc) {
  bool any = false;
  for (size_t i = 0; i < cc->items.n; i++) {
    const Item *k = cc->items.v[i];
    if (k->kind != IT_KERNEL || !k->capture)
      continue;
    if (!any)
      fprintf(h, "\n/* The capture functions, as their definitions must be: each enqueues its\n"
                 " * work on `stream`, which is being captured; `user` is cgrt_options.user. */\n");
    any = true;
    if (has_half_param(k)) {
      fprintf(h, "#ifdef __cplusplus\n");
      emit_capture_prototype(h, k, true);
      fprintf(h, "#else\n");
      emit_capture_prototype(h, k, false);
      fprintf(h, "#endif\n");
    } else {
      emit_capture_prototype(h, k, false);
    }
  }
}

/* Each capture function is called through a function of one type, which
 * turns the runtime's 64-bit argument words into its parameters. */
static void emit_capture_callers(FILE *c, const Kernels *captures) {
  if (!captures->n)
    return;
  char caller[CNAME_SIZE];
  bool f32 = false, f64 = false, f16 = false, bf16 = false, halves = false;
  for (size_t i = 0; i < captures->n; i++)
    for (int j = 0; j < captures->v[i]->nparams; j++) {
      const Param *p = &captures->v[i]->params[j];
      f32 |= !p->pointer && p->type == TY_F32;
      f64 |= !p->pointer && p->type == TY_F64;
      f16 |= !p->pointer && p->type == TY_F16;
      bf16 |= !p->pointer && p->type == TY_BF16;
      halves |= p->type == TY_F16 || p->type == TY_BF16;
    }
  fprintf(c, "\n/* The capture functions, called with the argument words the runtime builds. */\n");
  /* f16 and bf16 are their bits in C, CUDA's types in C++, as the header
   * declares the functions. */
  if (halves)
    fprintf(c, "#ifdef __cplusplus\ntypedef __half cgc_half;\ntypedef __nv_bfloat16 cgc_bfloat16;\n"
               "#else\ntypedef uint16_t cgc_half;\ntypedef uint16_t cgc_bfloat16;\n#endif\n");
  if (f16)
    fprintf(c,
            "static cgc_half cgc_f16(uint64_t cgc_bits) {\n"
            "#ifdef __cplusplus\n  __half_raw cgc_raw;\n  cgc_raw.x = (unsigned short)cgc_bits;\n"
            "  return cgc_half(cgc_raw);\n#else\n  return (cgc_half)cgc_bits;\n#endif\n}\n");
  if (bf16)
    fprintf(c, "static cgc_bfloat16 cgc_bf16(uint64_t cgc_bits) {\n"
               "#ifdef __cplusplus\n  __nv_bfloat16_raw cgc_raw;\n"
               "  cgc_raw.x = (unsigned short)cgc_bits;\n  return cgc_bfloat16(cgc_raw);\n#else\n"
               "  return (cgc_bfloat16)cgc_bits;\n#endif\n}\n");
  if (f32)
    fprintf(c, "static float cgc_f32(uint64_t cgc_bits) {\n"
               "  union { uint32_t u; float f; } cgc_v;\n"
               "  cgc_v.u = (uint32_t)cgc_bits;\n  return cgc_v.f;\n}\n");
  if (f64)
    fprintf(c, "static double cgc_f64(uint64_t cgc_bits) {\n"
               "  union { uint64_t u; double f; } cgc_v;\n"
               "  cgc_v.u = cgc_bits;\n  return cgc_v.f;\n}\n");
  for (size_t i = 0; i < captures->n; i++) {
    const Item *k = captures->v[i];
    fprintf(c,
            "static int %s(void *cgc_stream, void *cgc_user, const uint64_t *cgc_arg) {\n"
            "  return (int)%s((cudaStream_t)cgc_stream, cgc_user",
            capture_caller_c_name(caller, k), kernel_c_name(k));
    if (!k->nparams)
      fprintf(c, ");\n  (void)cgc_arg;\n}\n");
    for (int j = 0; j < k->nparams; j++) {
      const Param *p = &k->params[j];
      const char *type = p->type == TY_F16    ? "cgc_half"
                         : p->type == TY_BF16 ? "cgc_bfloat16"
                                              : c_type(p->type);
      if (p->pointer)
        fprintf(c, ",\n      (%s%s *)(uintptr_t)cgc_arg[%d]", p->mode == MODE_IN ? "const " : "",
                type, j);
      else if (type_is_float(p->type))
        fprintf(c, ",\n      cgc_%s(cgc_arg[%d])", type_name(p->type), j);
      else
        fprintf(c, ",\n      (%s)cgc_arg[%d]", c_type(p->type), j);
    }
    if (k->nparams)
      fprintf(c, ");\n}\n");
  }
  fprintf(c, "\nstatic const cgrt_capture cgc_captures[] = {");
  for (size_t i = 0; i < captures->n; i++)
    fprintf(c, "%s%s", i ? ", " : "", capture_caller_c_name(caller, captures->v[i]));
  fprintf(c, "};\nstatic const char *const cgc_capture_names[] = {");
  for (size_t i = 0; i < captures->n; i++)
    fprintf(c, "%s\"%s\"", i ? ", " : "", captures->v[i]->name->name);
  fprintf(c, "};\n");
}

static bool is_linked_kernel(const Item *it) {
  return it->kind == IT_KERNEL && !it->capture && it->source == KS_LINKED;
}

static void emit_kernel_declaration(FILE *h, const Item *k) {
  fprintf(h, "extern \"C\" __global__ void %s(", kernel_c_name(k));
  emit_params(h, k, "", true);
  fprintf(h, "%s);\n", k->nparams ? "" : "void");
}

/* The source's name inside a comment: a backslash parts every '*' and
 * '/' that would meet as the comment's end or as another comment's start
 * (-Wcomment), and control characters and bytes that are not UTF-8 are
 * written \xNN, so the comment holds one line of text. */
static void emit_comment_text(FILE *f, const char *s) {
  char last = 0;
  while (*s) {
    int n = utf8_len(s);
    unsigned char ch = (unsigned char)*s;
    if (!n || ch < 0x20 || ch == 0x7f) {
      fprintf(f, "\\x%02x", ch);
      last = 0, s++;
      continue;
    }
    if ((ch == '*' && last == '/') || (ch == '/' && last == '*'))
      fputc('\\', f);
    fwrite(s, 1, (size_t)n, f);
    last = *s, s += n;
  }
}

/* The first line of every generated file, in the form tools recognise as
 * generated (`^// Code generated .* DO NOT EDIT\.$`): the source's name,
 * its control characters and bytes that are not UTF-8 written \xNN, so
 * that the comment is one line. */
static void emit_generated_line(FILE *f, const char *source) {
  fprintf(f, "// Code generated by cgc %s from ", CGC_VERSION);
  for (const char *s = source; *s;) {
    int n = utf8_len(s);
    unsigned char ch = (unsigned char)*s;
    if (!n || ch < 0x20 || ch == 0x7f) {
      fprintf(f, "\\x%02x", ch);
      s++;
      continue;
    }
    fwrite(s, 1, (size_t)n, f);
    s += n;
  }
  fputs(". DO NOT EDIT.\n", f);
}

/* Every graph's description, for drivers that create graphs through the
 * runtime by description (the Python package).  The function is defined
 * only under a name given at compile time, so that programs linked
 * together do not define it twice. */
static void emit_program(FILE *c, const Program *p) {
  char table[CNAME_SIZE];
  fprintf(c, "\n/* The program's graphs, NULL last: compiled with -DCGC_PROGRAM=NAME, this\n"
             " * file defines NAME(), which returns them (see cgrt_abi.h). */\n"
             "#ifdef CGC_PROGRAM\n"
             "static const cgrt_graph_desc *const cgc_graphs[] = {");
  for (size_t i = 0; i < p->graphs.n; i++)
    fprintf(c, "&%s, ", graph_table_c_name(table, p->graphs.v[i], "desc"));
  fprintf(c, "NULL};\n"
             "const cgrt_graph_desc *const *CGC_PROGRAM(void);\n"
             "const cgrt_graph_desc *const *CGC_PROGRAM(void) {\n  return cgc_graphs;\n}\n"
             "#endif\n");
}

/* A module's bytes as a C array: 16 a line, in hex. */
static void emit_module(FILE *c, const Module *m) {
  static const char hex[] = "0123456789abcdef";
  fprintf(c, "\n/* ");
  emit_comment_text(c, m->path);
  fprintf(c, " (%s, %zu bytes) */\nstatic const unsigned char cgc_module_%d[] = {", module_format_name(m->format),
          m->len, m->index);
  size_t n = m->len + (m->format == MOD_PTX); /* PTX is loaded as a C string */
  char line[16 * 5 + 4];
  for (size_t i = 0; i < n; i += 16) {
    size_t len = 0;
    line[len++] = '\n';
    for (size_t j = i; j < n && j < i + 16; j++) {
      unsigned byte = j < m->len ? m->bytes[j] : 0;
      line[len++] = '0', line[len++] = 'x', line[len++] = hex[byte >> 4], line[len++] = hex[byte & 15];
      if (j + 1 < n)
        line[len++] = ',';
    }
    fwrite(line, 1, len, c);
  }
  fprintf(c, "\n};\n");
}

/* The kernel table, and for kernels not linked in the accessors of
 * templates, the modules' bytes and where each kernel comes from.  The
 * number of modules embedded. */
static size_t emit_kernels(FILE *c, Compiler *cc, const Kernels *k) {
  if (!k->n)
    return 0;
  char name[CNAME_SIZE];
  bool linked = false, templates = false;
  for (size_t i = 0; i < k->n; i++)
    linked |= k->v[i]->source == KS_LINKED, templates |= k->v[i]->source == KS_TEMPLATE;
  if (linked || templates) /* C linkage when the C is compiled as C++ too */
    fprintf(c, "\n#ifdef __cplusplus\nextern \"C\" {\n#endif");
  if (linked)
    fprintf(c, "\n/* The kernels' host stubs: only their addresses are used. */\n");
  for (size_t i = 0; i < k->n; i++)
    if (k->v[i]->source == KS_LINKED)
      fprintf(c, "extern void %s(void);\n", kernel_c_name(k->v[i]));
  if (templates)
    fprintf(c, "\n/* The template kernels' accessors, in the companion CUDA file: each gives\n"
               " * the address of its instantiation's host stub. */\n");
  for (size_t i = 0; i < k->n; i++)
    if (k->v[i]->source == KS_TEMPLATE)
      fprintf(c, "extern const void *%s(void);\n", template_c_name(name, k->v[i]));
  if (linked || templates)
    fprintf(c, "#ifdef __cplusplus\n}\n#endif\n");
  fprintf(c, "\nstatic const cgrt_kernel cgc_kernels[] = {");
  for (size_t i = 0; i < k->n; i++)
    fprintf(c, "%s%s", i ? ", " : "",
            k->v[i]->source == KS_LINKED ? kernel_c_name(k->v[i]) : "NULL");
  fprintf(c, "};\nstatic const char *const cgc_kernel_names[] = {");
  for (size_t i = 0; i < k->n; i++)
    fprintf(c, "%s\"%s\"", i ? ", " : "", k->v[i]->name->name);
  fprintf(c, "};\n");
  if (all_linked(k))
    return 0;
  /* The modules the kernels come from, each once, numbered as read. */
  bool *used = xrealloc(NULL, (cc->modules.n + 1) * sizeof *used);
  memset(used, 0, (cc->modules.n + 1) * sizeof *used);
  for (size_t i = 0; i < k->n; i++)
    if (k->v[i]->source == KS_MODULE)
      used[k->v[i]->module->index] = true;
  size_t nmodules = 0;
  int *slot = xrealloc(NULL, (cc->modules.n + 1) * sizeof *slot);
  for (size_t m = 0; m < cc->modules.n; m++)
    if (used[m]) {
      slot[m] = (int)nmodules++;
      emit_module(c, cc->modules.v[m]);
    }
  if (nmodules) {
    fprintf(c, "\nstatic const cgrt_module_desc cgc_modules[] = {\n");
    for (size_t m = 0; m < cc->modules.n; m++)
      if (used[m]) {
        const Module *mod = cc->modules.v[m];
        fprintf(c, "  {.path = ");
        emit_string(c, mod->path);
        fprintf(c, ", .format = CGRT_MODULE_%s, .bytes = UINT64_C(%zu), .image = cgc_module_%d},\n",
                mod->format == MOD_PTX ? "PTX" : mod->format == MOD_CUBIN ? "CUBIN" : "FATBIN",
                mod->len + (mod->format == MOD_PTX), mod->index);
      }
    fprintf(c, "};\n");
  }
  fprintf(c, "\nstatic const cgrt_kernel_from cgc_kernel_from[] = {\n");
  for (size_t i = 0; i < k->n; i++) {
    const Item *kn = k->v[i];
    switch (kn->source) {
    case KS_LINKED: fprintf(c, "  {.kind = CGRT_KERNEL_LINKED}, /* %s */\n", kn->name->name); break;
    case KS_TEMPLATE:
      fprintf(c, "  {.kind = CGRT_KERNEL_TEMPLATE, .address = %s}, /* %s = %s<", template_c_name(name, kn),
              kn->name->name, kn->template_name->name);
      emit_comment_text(c, kn->template_args);
      fprintf(c, "> */\n");
      break;
    case KS_MODULE:
      fprintf(c, "  {.kind = CGRT_KERNEL_MODULE, .module = %d, .symbol = ", slot[kn->module->index]);
      emit_string(c, module_symbol(kn));
      fprintf(c, "}, /* %s */\n", kn->name->name);
      break;
    }
  }
  fprintf(c, "};\n");
  free(used);
  free(slot);
  return nmodules;
}

void emit_c(FILE *c, FILE *h, Compiler *cc, const Program *p, const char *source,
            const char *header) {
  const char *base = strrchr(header, '/') ? strrchr(header, '/') + 1 : header;
  char buf[HEADER_GUARD_SIZE];
  const char *guard = header_guard(buf, header, cc, p);

  emit_generated_line(h, source);
  fprintf(h, "#ifndef %s\n#define %s\n\n#include <stdint.h>\n\n#include \"" CGRT_HEADER "\"\n\n",
          guard, guard);
  fprintf(h, "#if !defined(CGRT_ABI) || CGRT_ABI != %d\n"
             "#error \"this header was generated by cgc " CGC_VERSION
             " for cgrt ABI %d, but cgrt.h is another version: regenerate it\"\n#endif\n\n",
          CGRT_ABI, CGRT_ABI);
  bool half_captures = false;
  for (size_t i = 0; i < cc->items.n; i++)
    half_captures |= cc->items.v[i]->kind == IT_KERNEL && cc->items.v[i]->capture &&
                     has_half_param(cc->items.v[i]);
  if (half_captures)
    fprintf(h, "#ifdef __cplusplus\n#include <cuda_bf16.h>\n#include <cuda_fp16.h>\n#endif\n\n");
  fprintf(h, "#ifdef __cplusplus\nextern \"C\" {\n#endif\n");
  for (size_t i = 0; i < p->graphs.n; i++)
    emit_declarations(h, p->graphs.v[i]);
  emit_capture_declarations(h, cc);
  fprintf(h, "\n#ifdef __cplusplus\n}\n#endif\n");
  /* The kernels the user defines: not those from modules or templates. */
  size_t nkernels = 0;
  for (size_t i = 0; i < cc->items.n; i++)
    nkernels += is_linked_kernel(cc->items.v[i]);
  if (nkernels) {
    fprintf(h, "\n#ifdef __CUDACC__\n/* The kernels, as their definitions must be. */\n"
               "#include <cuda_bf16.h>\n#include <cuda_fp16.h>\n\n");
    for (size_t i = 0; i < cc->items.n; i++)
      if (is_linked_kernel(cc->items.v[i]))
        emit_kernel_declaration(h, cc->items.v[i]);
    fprintf(h, "#endif\n");
  }
  fprintf(h, "\n#endif\n");

  Kernels k = used_kernels(cc, p, NK_KERNEL);
  Kernels captures = used_kernels(cc, p, NK_CAPTURE);
  emit_generated_line(c, source);
  fprintf(c, "#include \"%s\"\n", base);
  /* The same C compiles as C++ (g++, clang++), whose C++20 designated
   * initializers these tables also are, save the array index. */
  fprintf(c, "\n#if defined(__cplusplus) && defined(__clang__)\n"
             "#pragma clang diagnostic ignored \"-Wc99-designator\"\n"
             "#pragma clang diagnostic ignored \"-Wc++20-designator\"\n"
             "#pragma clang diagnostic ignored \"-Wmissing-field-initializers\"\n"
             "#elif defined(__cplusplus) && defined(__GNUC__)\n"
             "#pragma GCC diagnostic ignored \"-Wpedantic\"\n"
             "#pragma GCC diagnostic ignored \"-Wmissing-field-initializers\"\n"
             "#if __GNUC__ >= 12\n#pragma GCC diagnostic ignored \"-Wc++20-extensions\"\n#endif\n"
             "#endif\n");
  size_t nmodules = emit_kernels(c, cc, &k);
  emit_capture_callers(c, &captures);
  for (size_t i = 0; i < p->graphs.n; i++) {
    emit_tables(c, &k, &captures, nmodules, p->graphs.v[i], source);
    emit_functions(c, p->graphs.v[i]);
  }
  emit_program(c, p);
  free(k.v);
  free(captures.v);
}

bool uses_templates(Compiler *cc, const Program *p) {
  Kernels k = used_kernels(cc, p, NK_KERNEL);
  bool any = false;
  for (size_t i = 0; i < k.n; i++)
    any |= k.v[i]->source == KS_TEMPLATE;
  free(k.v);
  return any;
}

/* A template kernel's parameter types, as a function pointer to its
 * instantiation must have them (no names: the template's header may
 * define a macro of a parameter's name). */
static void emit_param_types(FILE *f, const Item *k) {
  for (int i = 0; i < k->nparams; i++) {
    const Param *pa = &k->params[i];
    fprintf(f, "%s%s%s%s", i ? ", " : "", pa->pointer && pa->mode == MODE_IN ? "const " : "",
            cuda_type(pa->type), pa->pointer ? " *" : "");
  }
  if (!k->nparams)
    fprintf(f, "void");
}

void emit_templates(FILE *cu, Compiler *cc, const Program *p, const char *source,
                    const char *header) {
  const char *base = strrchr(header, '/') ? strrchr(header, '/') + 1 : header;
  Kernels k = used_kernels(cc, p, NK_KERNEL);
  size_t n = 0;
  for (size_t i = 0; i < k.n; i++)
    if (k.v[i]->source == KS_TEMPLATE)
      k.v[n++] = k.v[i];
  emit_generated_line(cu, source);
  if (!n) {
    fprintf(cu, "/* Its graphs use no template kernel: nothing to compile here. */\n");
    free(k.v);
    return;
  }
  fprintf(cu, "/* The template kernels.  Each accessor gives the address of its\n"
              " * instantiation's host stub (taking it instantiates the template, and nvcc\n"
              " * registers the kernel), through a pointer of the declared signature, so\n"
              " * that nvcc checks the template's parameters against the declaration. */\n"
              "#include \"%s\"\n\n#include <cuda_bf16.h>\n#include <cuda_fp16.h>\n#include <stdint.h>\n\n",
          base);
  /* Each header once, in the order the kernels name them. */
  for (size_t i = 0; i < n; i++) {
    size_t j = 0;
    while (j < i && strcmp(k.v[j]->header, k.v[i]->header))
      j++;
    if (j == i)
      fprintf(cu, "#include \"%s\"\n", k.v[i]->header);
  }
  char name[CNAME_SIZE];
  for (size_t i = 0; i < n; i++) {
    const Item *t = k.v[i];
    fprintf(cu, "\n/* %s */\nextern \"C\" __attribute__((weak)) const void *%s(void) {\n  void (*cgc_kernel)(",
            t->name->name, template_c_name(name, t));
    emit_param_types(cu, t);
    fprintf(cu, ") = %s<%s>;\n  return (const void *)cgc_kernel;\n}\n", t->template_name->name,
            t->template_args);
  }
  free(k.v);
}
