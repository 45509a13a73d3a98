/* sema.c: names, the top level, a graph's declarations and edges, the
 * program's limits, and the walk that unrolls `for` and builds each graph's
 * nodes with their accesses (sema_internal.h names the other files of sema).
 *
 * Top-level constants and kernels are checked in order first, so graphs
 * see all of them; inside a graph, names are used after their declaration,
 * as in C.  `for` bodies are checked once per iteration (source.c prints
 * each distinct message once). */
#include "sema_internal.h"

#include <assert.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- names ---- */

static Binding *lookup_local(Sema *s, Sym *name) {
  uintptr_t i = (uintptr_t)map_get(&s->local_index, name);
  return i ? &s->locals.v[i - 1] : NULL;
}

void push_local(Sema *s, Binding b) {
  b.shadowed = (uintptr_t)map_get(&s->local_index, b.name);
  vec_push(&s->locals, b);
  map_put(&s->local_index, b.name, (void *)(uintptr_t)s->locals.n);
}

/* Ends the scopes opened since the locals numbered `mark`. */
void pop_locals(Sema *s, size_t mark) {
  while (s->locals.n > mark) {
    const Binding *b = &s->locals.v[--s->locals.n];
    map_put(&s->local_index, b->name, (void *)b->shadowed);
  }
}

Binding *lookup(Sema *s, Sym *name) {
  Binding *b = lookup_local(s, name);
  return b ? b : map_get(&s->names, name);
}

/* Every key of a map keyed by Sym, as a candidate. */
static void suggest_keys(Suggest *sg, const Map *m) {
  for (size_t i = 0; i < m->cap; i++)
    if (m->slots[i].key)
      suggest_try(sg, ((const Sym *)m->slots[i].key)->name);
}

/* Whether an undefined name at p was reported already, and from now on it
 * is: a for body's mistake repeats at every iteration, and the diagnostics
 * would drop the repeats, but the "did you mean" (a search of every name
 * in scope, each by edit distance) would be worked out again each time. */
bool undefined_reported(Sema *s, Pos p) {
  char *key = arena_printf(s->c->arena, "%" PRIu32, p.off);
  if (map_get(&s->undefined_at, key))
    return true;
  map_put(&s->undefined_at, key, key);
  return false;
}

/* "undefined name 'x'", with "did you mean" and its fix when a name is
 * close to it. */
void report_undefined(Sema *s, Pos p, Undefined what, const Sym *name, const char *meant) {
  if (map_get(&s->c->lost, name))
    return; /* text a syntax error discarded named it, and may have declared it */
  const char *n = name->name;
  switch (what) {
  case UNDEFINED_NAME:
    if (meant)
      error_at(s->d, p, "undefined name '%s'; did you mean '%s'?", n, meant);
    else
      error_at(s->d, p, "undefined name '%s'", n);
    break;
  case UNDEFINED_KERNEL:
    if (meant)
      error_at(s->d, p, "undefined kernel '%s'; did you mean '%s'?", n, meant);
    else
      error_at(s->d, p, "undefined kernel '%s'", n);
    break;
  case UNDEFINED_NODE:
    if (meant)
      error_at(s->d, p, "undefined node '%s'; did you mean '%s'?", n, meant);
    else
      error_at(s->d, p, "undefined node '%s'", n);
    break;
  }
  if (meant)
    diag_fix(s->d, span_at(p), meant);
}

void undefined(Sema *s, Pos p, Sym *name) {
  Stmt *decl = map_get(&s->later, name);
  Item *top = map_get(&s->consts, name);
  if (name == s->defining) {
    error_at(s->d, p, "'%s' is used in its own definition", name->name);
  } else if (top && !map_get(&s->globals, name)) {
    error_at(s->d, p, "'%s' is used before its declaration; a top-level constant sees those above it",
             name->name);
    note_at(s->d, top->name_pos, "'%s' is declared here", name->name);
  } else if (decl) {
    error_at(s->d, p, "'%s' is used before its declaration", name->name);
    note_at(s->d, decl->name_pos, "'%s' is declared here", name->name);
  } else if (map_get(&s->node_decls, name)) {
    error_at(s->d, p, "'%s' is a node; only edges name nodes", name->name);
  } else if (!s->c->include_failed && !undefined_reported(s, p)) {
    /* (with an include that failed, it may be the missing file's) */
    Suggest sg;
    suggest_init(&sg, name->name);
    for (size_t i = 0; i < s->locals.n; i++)
      suggest_try(&sg, s->locals.v[i].name->name);
    suggest_keys(&sg, &s->names);
    for (size_t i = 0; i < s->globals.cap; i++) {
      const Global *gl = s->globals.slots[i].value;
      if (s->globals.slots[i].key && gl->item->kind == IT_CONST)
        suggest_try(&sg, gl->item->name->name);
    }
    report_undefined(s, p, UNDEFINED_NAME, name, suggest_best(&sg));
  }
}

/* A new graph-level or loop-level name must not hide another. */
static bool check_new_name(Sema *s, Sym *name, Pos p) {
  Binding *b = lookup(s, name);
  Global *gl = map_get(&s->globals, name);
  if (b) {
    error_at(s->d, p, "redefinition of '%s'", name->name);
    note_at(s->d, b->pos, "'%s' was defined here", name->name);
    return false;
  }
  if (gl && gl->item->kind == IT_CONST) {
    error_at(s->d, p, "'%s' redefines a top-level constant", name->name);
    note_at(s->d, gl->item->name_pos, "'%s' was defined here", name->name);
    return false;
  }
  return true;
}

/* Whatever needs a value that could not be computed is dropped without
 * a message of its own: the value's error was reported where it was
 * computed, and any error stops the compilation before output.  This
 * holds the checks to that, so that nothing is ever dropped silently: a
 * debug build stops, a release build reports the place. */
bool dropped(Sema *s, Pos p) {
  if (diag_errors(s->d) == 0) {
    assert(!"a value was dropped without a diagnostic");
    error_at(s->d, p, "internal error: this has no value, and no error said why");
  }
  return false;
}

/* ---- constant expressions ---- */

const char *describe_res(Sema *s, int res) {
  return s->g->res.v[res].kind == RES_SCALAR ? "scalar" : "buffer";
}

/* ---- top level ---- */

static void check_kernel(Sema *s, Item *k) {
  Map seen = {0}; /* Sym -> its first Param */
  int64_t bytes = 0;
  for (int i = 0; i < k->nparams; i++) {
    Param *p = &k->params[i];
    Param *first = map_get(&seen, p->name);
    if (first) {
      error_at(s->d, p->pos, "duplicate parameter '%s'", p->name->name);
      note_at(s->d, first->pos, "'%s' was declared here", p->name->name);
    } else {
      map_put(&seen, p->name, p);
    }
    /* Laid out as C lays out arguments: each aligned to its size. */
    int64_t size = p->pointer ? 8 : type_size(p->type);
    bytes = (bytes + size - 1) / size * size + size;
    if (!p->pointer && p->mode != MODE_NONE)
      error_at(s->d, p->pos,
               "value parameter '%s' takes no access mode; only pointers are in, out or inout",
               p->name->name);
    if (p->pointer && p->mode == MODE_NONE)
      p->mode = MODE_INOUT;
    if (p->type == TY_HANDLE && p->pointer)
      error_at(s->d, p->pos, "parameter '%s' is a pointer to a handle; a handle is passed by value "
               "('%s: handle')", p->name->name, p->name->name);
    else if (p->type == TY_HANDLE && k->capture)
      error_at(s->d, p->pos,
               "capture function '%s' cannot take a handle (parameter '%s'); only a kernel in a "
               "while's body sets the loop's condition",
               k->name->name, p->name->name);
  }
  map_free(&seen);
  if (!k->capture && bytes > MAX_PARAM_BYTES) /* a capture function is a host function */
    error_at(s->d, k->name_pos,
             "the parameters of kernel '%s' take %lld bytes; CUDA allows at most %d "
             "(CUDA 12.1 and later, compute capability 7.0 and later)",
             k->name->name, (long long)bytes, MAX_PARAM_BYTES);
  /* Where it comes from: its module, read and searched for it, or its
   * template's header (module.c). */
  if (k->from && k->source == KS_MODULE)
    module_kernel(s->c, k);
  else if (k->from && k->source == KS_TEMPLATE)
    template_header(s->c, k);
}

static bool define_global(Sema *s, Item *it) {
  Global *old = map_get(&s->globals, it->name);
  if (old) {
    error_at(s->d, it->name_pos, "redefinition of '%s'", it->name->name);
    note_at(s->d, old->item->name_pos, "'%s' was defined here", it->name->name);
    return false;
  }
  Global *gl = arena_alloc(s->c->arena, sizeof *gl);
  gl->item = it;
  map_put(&s->globals, it->name, gl);
  if (it->kind != IT_CONST)
    return true;
  /* The initialiser is checked even when -D overrides it, so that an
   * error in it does not depend on the command line. */
  Value v;
  gl->defining = true;
  if (eval(s, it->value, &v)) {
    if (v.is_float)
      error_span(s->d, expr_span(it->value),
                 "constant '%s' must be an integer; for a float, pass the number as the argument "
                 "itself, or declare a scalar ('scalar %s: f32 = ...;' in the graph)",
                 it->name->name, it->name->name);
    else
      gl->value = v.i, gl->valid = true;
  }
  gl->defining = false;
  for (int i = 0; i < s->c->ndefines; i++)
    if (!strcmp(s->c->defines[i].name, it->name->name)) {
      s->c->defines[i].used = true;
      gl->value = s->c->defines[i].value;
      gl->valid = true;
      return true;
    }
  return true;
}

/* ---- graphs: declarations ---- */

static Resource *add_res(Sema *s, Stmt *st, ResKind kind) {
  Resource r = {.kind = kind, .name = st->name, .pos = st->name_pos, .type = st->type};
  vec_push(&s->g->res, r);
  Binding *b = arena_alloc(s->c->arena, sizeof *b);
  *b = (Binding){.kind = B_RES, .name = st->name, .pos = st->name_pos,
                 .res = (int)s->g->res.n - 1, .stmt = st};
  map_put(&s->names, st->name, b);
  return &s->g->res.v[s->g->res.n - 1];
}

static void declare_scalar(Sema *s, Stmt *st) {
  if (!check_new_name(s, st->name, st->name_pos))
    return;
  Resource *r = add_res(s, st, RES_SCALAR);
  r->count = 1;
  r->bytes = type_size(st->type);
  Value v;
  /* `= rank` and `= ranks`, unless a constant has that name: the
   * communicator's, given at create. */
  if (st->value && st->value->kind == EX_NAME && !lookup(s, st->value->name) &&
      !map_get(&s->globals, st->value->name) &&
      (!strcmp(st->value->name->name, "rank") || !strcmp(st->value->name->name, "ranks"))) {
    if (type_is_float(st->type) || type_size(st->type) < 4) {
      error_at(s->d, st->value->pos,
               "scalar '%s' takes the communicator's %s, which needs an integer type of 32 or 64 "
               "bits, not %s",
               st->name->name, st->value->name->name, type_name(st->type));
      return;
    }
    r->from_comm = strcmp(st->value->name->name, "rank") ? CGRT_RANKS : CGRT_RANK;
    r->bound_written = st->bound != NULL;
    if (st->bound)
      error_span(s->d, expr_span(st->bound),
                 "scalar '%s' takes the communicator's %s, so it takes no bound ('max')",
                 st->name->name, st->value->name->name);
    return;
  }
  r->bound_written = st->bound != NULL;
  r->bound_at = pos_plus(st->type_pos, (int64_t)strlen(type_name(st->type)));
  if (st->bound) {
    int64_t b;
    char what[300];
    snprintf(what, sizeof what, "the bound of scalar '%s'", st->name->name);
    if (type_is_float(st->type))
      error_span(s->d, expr_span(st->bound),
                 "scalar '%s' is %s; only integer scalars take a bound ('max')", st->name->name,
                 type_name(st->type));
    else if (eval_int(s, st->bound, &b)) {
      if (b < 0)
        error_span(s->d, expr_span(st->bound), "the bound of scalar '%s' is %lld; it must be at least 0",
                   st->name->name, (long long)b);
      else if (check_fits(s, expr_span(st->bound), (Value){.i = b}, st->type, what)) {
        r->bounded = true;
        r->bound = b;
      }
    }
  }
  if (st->value && eval(s, st->value, &v)) {
    char what[300];
    snprintf(what, sizeof what, "scalar '%s'", st->name->name);
    if (r->bounded && !v.is_float && v.i > r->bound) {
      error_span(s->d, expr_span(st->value),
                 "the initial value %lld of scalar '%s' is above its bound %lld", (long long)v.i,
                 st->name->name, (long long)r->bound);
    } else if (check_fits(s, expr_span(st->value), v, st->type, what)) {
      r->has_init = true;
      r->init_is_float = v.is_float;
      r->init_i = v.i;
      r->init_f = v.f;
      r->init_bits = value_bits(st->type, v.is_float, v.i, v.f);
    }
  }
}

/* ---- a buffer's size over bounded scalars ---- */

/* How a buffer's size expression varies with the bounded scalars in it. */
typedef enum Growth {
  GROWS_NOT,     /* no bounded scalar: a constant */
  GROWS_NONNEG,  /* grows with them, and is never negative */
  GROWS,         /* grows with them, and may be negative */
  GROWS_REFUSED, /* not known to grow: reported */
} Growth;

/* A buffer's size takes each bounded scalar at its bound, which gives the
 * largest value the size needs only where the size never falls as a
 * scalar grows over its range (its type's least value up to its bound).
 * Refuses, at the part that breaks that, a scalar subtracted, negated,
 * divided by or taken modulo, a product of parts that may be negative, and
 * a factor or divisor that is not a positive constant. */
static Growth size_growth(Sema *s, Expr *e) {
  const char *why = NULL;
  Growth a = GROWS_NOT, b = GROWS_NOT;
  switch (e->kind) {
  case EX_NAME: {
    Binding *bd = lookup_use(s, e);
    const Resource *r = bd && bd->kind == B_RES ? &s->g->res.v[bd->res] : NULL;
    if (!r || r->kind != RES_SCALAR || !r->bounded)
      return GROWS_NOT;
    return type_is_signed(r->type) ? GROWS : GROWS_NONNEG;
  }
  case EX_NEG:
    a = size_growth(s, e->a);
    if (a == GROWS_NOT || a == GROWS_REFUSED)
      return a;
    why = "negates a bounded scalar";
    break;
  case EX_CALL:
    if (e->nargs != 2)
      return GROWS_NOT; /* reported by eval */
    a = size_growth(s, e->args[0]);
    b = size_growth(s, e->args[1]);
    if (a == GROWS_REFUSED || b == GROWS_REFUSED)
      return GROWS_REFUSED;
    if (!strcmp(e->fn->name, "cdiv") && b != GROWS_NOT) {
      why = "divides by a bounded scalar";
      break;
    }
    if (!strcmp(e->fn->name, "cdiv") && a != GROWS_NOT) {
      int64_t d;
      if (eval_int(s, e->args[1], &d) && d <= 0) {
        why = "divides by a constant that is not positive";
        break;
      }
    }
    return a > b ? a : b;
  case EX_BIN:
    a = size_growth(s, e->a);
    b = size_growth(s, e->b);
    if (a == GROWS_REFUSED || b == GROWS_REFUSED)
      return GROWS_REFUSED;
    if (a == GROWS_NOT && b == GROWS_NOT)
      return GROWS_NOT;
    switch (e->op) {
    case '+': {
      Expr *c = a == GROWS_NOT ? e->a : b == GROWS_NOT ? e->b : NULL;
      int64_t v = 0;
      if (c && eval_int(s, c, &v) && v < 0)
        return GROWS;
      return a > b ? a : b;
    }
    case '-':
      if (b != GROWS_NOT) {
        why = "subtracts a bounded scalar";
        break;
      }
      return GROWS;
    case '*':
      if (a == GROWS_NOT || b == GROWS_NOT) {
        int64_t v;
        if (eval_int(s, a == GROWS_NOT ? e->a : e->b, &v) && v < 0) {
          why = "multiplies a bounded scalar by a negative constant";
          break;
        }
        return a == GROWS_NOT ? b : a;
      }
      if (a == GROWS || b == GROWS) {
        why = "multiplies parts that may be negative (a signed scalar takes values below 0)";
        break;
      }
      return GROWS_NONNEG;
    case '/':
      if (b != GROWS_NOT) {
        why = "divides by a bounded scalar";
        break;
      }
      int64_t d;
      if (eval_int(s, e->b, &d) && d <= 0) {
        why = "divides by a constant that is not positive";
        break;
      }
      return a;
    default: /* % */ why = "takes a remainder of a bounded scalar"; break;
    }
    break;
  default: return GROWS_NOT;
  }
  error_span(s->d, expr_span(e),
             "a buffer's size takes a bounded scalar at its bound, the largest value only of a "
             "size that grows with the scalar; this %s",
             why);
  return GROWS_REFUSED;
}

static void declare_buffer(Sema *s, Stmt *st) {
  if (!check_new_name(s, st->name, st->name_pos))
    return;
  Resource *r = add_res(s, st, RES_BUFFER);
  r->buffer_kind = st->buffer_kind;
  if (st->ndims > 8) {
    error_span(s->d, expr_span(st->dims[8]), "a buffer has at most 8 dimensions");
    return;
  }
  int64_t count = 1;
  bool ok = true;
  for (int i = 0; i < st->ndims; i++) {
    int64_t n;
    s->at_bound = true;
    bool valid = size_growth(s, st->dims[i]) != GROWS_REFUSED && eval_int(s, st->dims[i], &n);
    s->at_bound = false;
    if (!valid) {
      ok = false;
      continue;
    }
    if (n < 1) {
      error_span(s->d, expr_span(st->dims[i]),
                 "dimension %d of '%s' is %lld; it must be at least 1", i, st->name->name,
                 (long long)n);
      ok = false;
      continue;
    }
    r->dims[i] = n;
    if (ok && __builtin_mul_overflow(count, n, &count)) {
      error_span(s->d, expr_span(st->dims[i]), "the size of '%s' overflows 64 bits",
                 st->name->name);
      ok = false;
    }
  }
  int64_t bytes = 0;
  if (ok && __builtin_mul_overflow(count, (int64_t)type_size(st->type), &bytes)) {
    error_at(s->d, st->name_pos, "the size of '%s' overflows 64 bits", st->name->name);
    ok = false;
  }
  if (!ok)
    return; /* leaves count 0: views of it report nothing further */
  r->ndims = st->ndims;
  r->count = count;
  r->bytes = bytes;
  if (st->buffer_kind == BUF_DEVICE || st->buffer_kind == BUF_HOST) {
    int64_t aligned = 0;
    if (bytes > INT64_MAX - 255 ||
        (aligned = (bytes + 255) & ~(int64_t)255,
         __builtin_add_overflow(s->owned_bytes, aligned, &s->owned_bytes)))
      error_at(s->d, st->name_pos, "the buffers of graph '%s' total more than 2^63 bytes",
               s->g->name->name);
  }
  if (st->value) {
    int64_t z;
    if (eval_int(s, st->value, &z)) {
      if (z != 0)
        error_span(s->d, expr_span(st->value), "a buffer's initialiser can only be '= 0'");
      else if (st->buffer_kind == BUF_EXTERN || st->buffer_kind == BUF_EXTERN_HOST)
        error_span(s->d, expr_span(st->value),
                   "'= 0' is only for buffers the graph owns; '%s' is extern", st->name->name);
      else
        r->zero = true;
    }
  }
}

static void declare_const(Sema *s, Stmt *st) {
  Value v;
  s->defining = st->name;
  bool valid = eval(s, st->value, &v);
  s->defining = NULL;
  if (valid && v.is_float) {
    error_span(s->d, expr_span(st->value),
               "constant '%s' must be an integer; for a float, pass the number as the argument "
               "itself, or declare a scalar ('scalar %s: f32 = ...;' in the graph)",
               st->name->name, st->name->name);
    valid = false;
  }
  if (!check_new_name(s, st->name, st->name_pos))
    return;
  Binding b = {.kind = B_CONST, .name = st->name, .pos = st->name_pos,
               .value = valid ? v.i : 0, .valid = valid, .stmt = st};
  if (s->depth > 0 || s->blocks > 0) {
    push_local(s, b);
  } else {
    Binding *p = arena_alloc(s->c->arena, sizeof *p);
    *p = b;
    map_put(&s->names, st->name, p);
  }
}

/* ---- limits on the whole program (cgc.h) ---- */

/* The first limit reached is reported where it was reached, and checking
 * stops there: the rest of the program is not unrolled. */
static void limit_reached(Sema *s, Pos p, int64_t limit, const char *what) {
  if (!s->too_big)
    error_at(s->d, p, "the program has more than %lld %s", (long long)limit, what);
  s->too_big = true;
}

static void statement_limit(Sema *s, Pos p) {
  limit_reached(s, p, s->c->max_statements ? s->c->max_statements : MAX_EXPANSION,
                "statements once its loops are unrolled, all graphs together (each "
                "iteration counts as one)");
}

/* Counts one statement run by unrolling. */
static bool budget(Sema *s, Pos p) {
  int64_t max_statements = s->c->max_statements ? s->c->max_statements : MAX_EXPANSION;
  if (s->too_big)
    return false;
  if (++s->expanded <= max_statements)
    return true;
  statement_limit(s, p);
  return false;
}

/* Counts `accesses` node arguments or accesses a control node repeats. */
bool access_budget(Sema *s, Pos p, int64_t accesses) {
  int64_t max_accesses = s->c->max_accesses ? s->c->max_accesses : MAX_ACCESSES;
  if (s->too_big)
    return false;
  if (accesses > max_accesses - s->accesses) {
    limit_reached(s, p, max_accesses,
                  "node arguments once its loops are unrolled, all graphs together (a while, "
                  "if or switch counts its bodies' accesses again)");
    return false;
  }
  s->accesses += accesses;
  return true;
}

/* Room for one more node, with `accesses` arguments. */
bool node_budget(Sema *s, Pos p, int64_t accesses) {
  int64_t max_nodes = s->c->max_nodes ? s->c->max_nodes : MAX_NODES;
  if (s->too_big)
    return false;
  if (s->nodes_before + (int64_t)s->g->nodes.n >= max_nodes) {
    limit_reached(s, p, max_nodes, "nodes once its loops are unrolled, all graphs together");
    return false;
  }
  return access_budget(s, p, accesses);
}

/* Counts one written edge. */
static bool edge_budget(Sema *s, Pos p) {
  int64_t max_edges = s->c->max_edges ? s->c->max_edges : MAX_EDGES;
  if (s->too_big)
    return false;
  if (++s->c->nedges <= max_edges)
    return true;
  limit_reached(s, p, max_edges, EDGE_LIMIT_TEXT);
  return false;
}

/* ---- graphs: edges ---- */

/* Names the node an edge endpoint refers to, or NULL after an error. */
static const char *edge_ref(Sema *s, Stmt *st, Expr *e) {
  Expr *idx[MAX_EXPR_DEPTH + 1];
  int k = 0;
  Expr *root = e;
  for (; root->kind == EX_INDEX; root = root->a)
    idx[k++] = root->b;
  Stmt *decl = map_get(&s->node_decls, root->name);
  if (!decl) {
    Binding *b = lookup_use(s, root);
    if (b || map_get(&s->globals, root->name)) {
      error_at(s->d, root->pos, "'%s' is not a node", root->name->name);
    } else if (!undefined_reported(s, root->pos)) {
      Suggest sg;
      suggest_init(&sg, root->name->name);
      suggest_keys(&sg, &s->node_decls);
      report_undefined(s, root->pos, UNDEFINED_NODE, root->name, suggest_best(&sg));
    }
    return NULL;
  }
  note_stmt(s, root, root->pos, decl);
  int depth = decl->loop_depth;
  if (k == 0) {
    /* A bare name: this iteration's node, when the reference is inside the
     * loops that declare it. */
    int ref_depth = st->loop_depth;
    Stmt *a = decl->parent_for, *b = st->parent_for;
    for (; ref_depth > depth; ref_depth--)
      b = b->parent_for;
    if (ref_depth < depth || a != b) {
      error_at(s->d, root->pos, "node '%s' is declared in a 'for' loop; name an iteration, as in %s[0]",
               root->name->name, root->name->name);
      return NULL;
    }
    return node_name(s, root->pos, decl->base, depth);
  }
  if (k != depth) {
    if (depth == 0)
      error_span(s->d, expr_span(e), "node '%s' is not declared in a 'for' loop and takes no index",
                 root->name->name);
    else
      error_span(s->d, expr_span(e), "node '%s' takes %d ind%s, one for each enclosing 'for'",
                 root->name->name, depth, depth == 1 ? "ex" : "ices");
    return NULL;
  }
  char buf[NAME_BUF];
  int n = snprintf(buf, sizeof buf, "%s", decl->base->name);
  for (int i = k - 1; i >= 0; i--) {
    int64_t v;
    if (!eval_int(s, idx[i], &v))
      return NULL;
    n += snprintf(buf + n, sizeof buf - (size_t)n, "[%lld]", (long long)v);
  }
  assert(n < (int)sizeof buf);
  return checked_name(s, e->pos, buf, n, "would have");
}

/* The node names of one side of an edge statement (NULL after an error). */
static const char **edge_refs(Sema *s, Stmt *st, const EdgeGroup *group) {
  const char **names = xrealloc(NULL, ((size_t)group->nrefs + 1) * sizeof *names);
  for (int i = 0; i < group->nrefs; i++)
    names[i] = edge_ref(s, st, group->refs[i]);
  return names;
}

/* `{a, b} -> {c, d}` is an edge from each on the left to each on the right. */
static void add_edges(Sema *s, Stmt *st) {
  const char **to_names = st->ngroups ? edge_refs(s, st, &st->groups[0]) : NULL;
  for (int i = 0; i + 1 < st->ngroups; i++) {
    EdgeGroup *from = &st->groups[i], *to = &st->groups[i + 1];
    const char **from_names = to_names;
    to_names = edge_refs(s, st, to);
    for (int a = 0; a < from->nrefs; a++) {
      const char *fa = from_names[a];
      for (int b = 0; b < to->nrefs; b++) {
        const char *tb = to_names[b];
        if (fa && tb) {
          if (!edge_budget(s, from->arrow)) {
            free(from_names);
            free(to_names);
            return;
          }
          PendingEdge pe = {fa, tb, from->refs[a]->pos, to->refs[b]->pos, from->arrow,
                            from->programmatic};
          vec_push(&s->pending, pe);
        }
      }
    }
    free(from_names);
  }
  free(to_names);
}

/* Where an edge names a node that an if of constants did not make: says
 * so, at the if. */
static void note_undecided(Sema *s, const char *name) {
  Sym *base = intern(s->c->syms, name, strcspn(name, "["));
  Stmt *decl = map_get(&s->node_decls, base);
  Stmt *iff = decl ? map_get(&s->decided, decl) : NULL;
  if (iff)
    note_at(s->d, iff->pos,
            "'%s' is declared in this if, which compares only constants: cgc makes the nodes "
            "of the body it takes, and no others",
            base->name);
}

static void resolve_edges(Sema *s) {
  Graph *g = s->g;
  for (size_t i = 0; i < g->nodes.n && s->pending.n; i++) /* a later namesake wins */
    map_put(&s->node_index, g->nodes.v[i].name, (void *)(uintptr_t)(i + 1));
  for (size_t i = 0; i < s->pending.n; i++) {
    PendingEdge *pe = &s->pending.v[i];
    uintptr_t from = (uintptr_t)map_get(&s->node_index, pe->from);
    uintptr_t to = (uintptr_t)map_get(&s->node_index, pe->to);
    if (!from) {
      error_at(s->d, pe->from_pos, "no node named '%s' in graph '%s'", pe->from, g->name->name);
      note_undecided(s, pe->from);
    }
    if (!to) {
      error_at(s->d, pe->to_pos, "no node named '%s' in graph '%s'", pe->to, g->name->name);
      note_undecided(s, pe->to);
    }
    if (!from || !to)
      continue;
    if (from == to) {
      error_at(s->d, pe->arrow, "edge from node '%s' to itself", pe->from);
      continue;
    }
    const Node *na = &g->nodes.v[from - 1], *nb = &g->nodes.v[to - 1];
    if (na->scope != nb->scope || na->branch != nb->branch) {
      error_at(s->d, pe->arrow,
               "an edge stays within one body; '%s' and '%s' are not in the same one", pe->from,
               pe->to);
      continue;
    }
    if (pe->programmatic) {
      /* '=>' says the edge is programmatic; order.c makes every edge from
       * a kernel into a pdl kernel so, and no other. */
      const Node *a = &g->nodes.v[from - 1], *b = &g->nodes.v[to - 1];
      if (!node_kinds[a->kind].programmatic || !node_kinds[b->kind].programmatic) {
        const Node *other = node_kinds[a->kind].programmatic ? b : a;
        error_at(s->d, pe->arrow, "'=>' needs a kernel node on both ends; '%s' is a %s node",
                 other->name, node_kinds[other->kind].name);
        continue;
      }
      if (!b->kernel->pdl) {
        error_at(s->d, pe->arrow,
                 "'=>' leads to node '%s', whose kernel '%s' is not declared 'pdl kernel'",
                 b->name, b->kernel->name->name);
        note_at(s->d, b->kernel->pos, "'%s' is declared here", b->kernel->name->name);
        continue;
      }
    }
    Edge e = {.from = (uint32_t)from - 1, .to = (uint32_t)to - 1, .written = true,
              .pos = pe->arrow, .res = -1};
    vec_push(&g->written, e);
  }
}

/* ---- graphs: the walk ---- */



static void walk_for(Sema *s, Stmt *st) {
  int64_t lo = 0, hi = 0;
  bool ok = eval_int(s, st->lo, &lo);
  ok = eval_int(s, st->hi, &hi) && ok;
  if (!ok || !check_new_name(s, st->name, st->name_pos))
    return;
  /* Refuse a loop too long to unroll before spending time on it: each
   * iteration counts as a statement, and so does each statement of its
   * body, however deep the loops go. */
  int64_t work;
  int64_t max_statements = s->c->max_statements ? s->c->max_statements : MAX_EXPANSION;
  if (hi > lo && (__builtin_sub_overflow(hi, lo, &work) ||
                  __builtin_mul_overflow(work, (int64_t)st->nbody + 1, &work) ||
                  work > max_statements - s->expanded)) {
    statement_limit(s, st->pos);
    return;
  }
  for (int64_t i = lo; i < hi && !diag_stopped(s->d) && budget(s, st->pos); i++) {
    size_t mark = s->locals.n;
    Binding b = {.kind = B_LOOP, .name = st->name, .pos = st->name_pos, .value = i, .valid = true,
                 .stmt = st};
    push_local(s, b);
    s->loops[s->depth] = st;
    s->index[s->depth++] = i;
    walk(s, st->body, st->nbody);
    s->depth--;
    pop_locals(s, mark);
  }
}

void walk(Sema *s, Stmt **body, int n) {
  for (int i = 0; i < n && !diag_stopped(s->d) && !s->too_big; i++) {
    Stmt *st = body[i];
    if (!budget(s, st->pos))
      return;
    switch (st->kind) {
    case ST_CONST: declare_const(s, st); break;
    case ST_SCALAR:
    case ST_BUFFER:
      if (s->depth > 0 || s->blocks > 0) {
        error_at(s->d, st->pos, "%s declarations are not allowed inside %s",
                 st->kind == ST_SCALAR ? "scalar" : "buffer",
                 s->depth > 0 ? "'for'" : "the body of a while, if or switch");
        break;
      }
      if (st->kind == ST_SCALAR)
        declare_scalar(s, st);
      else
        declare_buffer(s, st);
      break;
    case ST_NODE:
      s->cur_stmt = st;
      add_node(s, st);
      s->cur_stmt = NULL;
      break;
    case ST_EDGE: add_edges(s, st); break;
    case ST_FOR: walk_for(s, st); break;
    case ST_WHILE:
    case ST_IF:
    case ST_SWITCH: walk_control(s, st); break;
    }
    if (s->c->keep_uses && s->depth == 0 && s->blocks == 0)
      note_names(s, st); /* once a statement of the graph, after its check */
  }
}

static void name_node(Sema *s, Stmt *st) {
  Stmt *old = map_get(&s->node_decls, st->name);
  if (old) {
    error_at(s->d, st->name_pos, "duplicate node '%s'", st->name->name);
    note_at(s->d, old->name_pos, "'%s' was defined here", st->name->name);
    return;
  }
  st->base = st->name;
  map_put(&s->node_decls, st->name, st);
}

/* Before unrolling: every node's base name (anonymous ones named after
 * their kernel, in order of appearance), and where each is declared. */
static void name_nodes(Sema *s, Stmt **body, int n, Stmt *parent, int depth, StmtVec *anon) {
  for (int i = 0; i < n; i++) {
    Stmt *st = body[i];
    st->parent_for = parent;
    st->loop_depth = depth;
    note_decl(s, st);
    if (depth == 0 && (st->kind == ST_CONST || st->kind == ST_SCALAR || st->kind == ST_BUFFER) &&
        !map_get(&s->later, st->name))
      map_put(&s->later, st->name, st);
    if (st->kind == ST_FOR)
      name_nodes(s, st->body, st->nbody, st, depth + 1, anon);
    if (st->kind == ST_WHILE || st->kind == ST_IF || st->kind == ST_SWITCH) {
      s->node_stmts += depth == 0;
      if (!st->name)
        vec_push(anon, st); /* named while, if, switch, ... */
      else
        name_node(s, st);
      name_nodes(s, st->body, st->nbody, parent, depth, anon);
      if (st->kind == ST_IF)
        name_nodes(s, st->else_body, st->nelse, parent, depth, anon);
      for (int k = 0; st->kind == ST_SWITCH && k < st->ncases; k++)
        name_nodes(s, st->cases[k].body, st->cases[k].nbody, parent, depth, anon);
      continue;
    }
    if (st->kind != ST_NODE)
      continue;
    s->node_stmts += depth == 0;
    if (!st->name) {
      vec_push(anon, st);
      continue;
    }
    name_node(s, st);
  }
}

static void name_anonymous(Sema *s, StmtVec *anon) {
  Map counts = {0}; /* base Sym -> next suffix */
  for (size_t i = 0; i < anon->n; i++) {
    Stmt *st = anon->v[i];
    const char *stem =
        node_kinds[st->node_kind].called ? st->kernel->name : node_kinds[st->node_kind].name;
    Sym *key = intern(s->c->syms, stem, strlen(stem));
    uintptr_t k = (uintptr_t)map_get(&counts, key);
    Sym *name;
    do {
      k++;
      if (k == 1) {
        name = key;
      } else {
        char buf[MAX_IDENT_LEN + 24];
        int len = snprintf(buf, sizeof buf, "%s_%llu", stem, (unsigned long long)k);
        name = intern(s->c->syms, buf, (size_t)len);
      }
    } while (map_get(&s->node_decls, name));
    map_put(&counts, key, (void *)k);
    st->base = name;
    map_put(&s->node_decls, name, st);
  }
  map_free(&counts);
}

/* One graph: the item's, or its variant `name` with the item's variable
 * bound to `value` (var NULL: none). */
static void check_graph(Sema *s, Item *it, Sym *name, Sym *var, int64_t value) {
  Graph *g = xrealloc(NULL, sizeof *g);
  memset(g, 0, sizeof *g);
  g->item = it;
  g->name = name;
  g->prefix = s->c->prefix ? s->c->prefix : "";
  g->is_explicit = it->is_explicit;
  s->g = g;
  s->owned_bytes = 0;
  s->scope = -1;
  s->branch = 0;
  if (var)
    push_local(s, (Binding){.kind = B_CONST, .name = var, .pos = it->variant_pos, .value = value,
                            .valid = true});
  StmtVec anon = {0};
  s->node_stmts = 0;
  name_nodes(s, it->body, it->nbody, NULL, 0, &anon);
  name_anonymous(s, &anon);
  vec_free(&anon);
  /* Room for the nodes made once: the array does not grow by copies. */
  g->nodes.v = xrealloc(NULL, (s->node_stmts ? s->node_stmts : 1) * sizeof *g->nodes.v);
  g->nodes.cap = s->node_stmts ? s->node_stmts : 1;
  walk(s, it->body, it->nbody);
  vec_fit(&g->nodes); /* all made: no room to grow is kept */
  resolve_edges(s);
  check_scalar_values(s);
  map_free(&s->names);
  map_free(&s->later);
  map_free(&s->node_decls);
  map_free(&s->decided);
  map_free(&s->node_index);
  s->node_index.by_string = true;
  vec_free(&s->locals);
  map_free(&s->local_index);
  vec_free(&s->subtree_end);
  vec_free(&s->pending);
  s->nodes_before += (int64_t)g->nodes.n;
  vec_push(&((Program *)s->c->program)->graphs, g);
}

/* `graph NAME for VAR in [V, ...]`: a graph NAME_V for each value, VAR a
 * constant V in it. */
static void check_variants(Sema *s, Item *it) {
  if (map_get(&s->globals, it->variant_var) || map_get(&s->consts, it->variant_var)) {
    error_at(s->d, it->variant_pos, "'%s' is already a global name; a variant's variable needs "
             "one of its own", it->variant_var->name);
    return;
  }
  for (int k = 0; k < it->nvariants && !diag_stopped(s->d); k++) {
    int64_t v;
    if (!eval_int(s, it->variants[k], &v))
      continue;
    if (v < 0) {
      error_at(s->d, it->variants[k]->pos,
               "a variant's value names its graph, %s_VALUE, so it cannot be negative (%lld)",
               it->name->name, (long long)v);
      continue;
    }
    char buf[MAX_IDENT_LEN + 32];
    int n = snprintf(buf, sizeof buf, "%s_%lld", it->name->name, (long long)v);
    if (n > MAX_IDENT_LEN) {
      error_at(s->d, it->variants[k]->pos, "the variant's name '%s' is longer than %d bytes", buf,
               MAX_IDENT_LEN);
      continue;
    }
    Item *copy = arena_alloc(s->c->arena, sizeof *copy);
    *copy = *it;
    copy->name = intern(s->c->syms, buf, (size_t)n);
    copy->name_pos = it->variants[k]->pos;
    /* Each variant is a global of its own name: step_1 twice, or a kernel
     * step_1, is a redefinition. */
    if (define_global(s, copy))
      check_graph(s, copy, copy->name, it->variant_var, v);
  }
}

/* ---- names in the generated C (cname.c makes and judges them) ---- */

/* A name of the program that the C spells on its own must be free there. */
static bool check_c_word(Sema *s, const char *name, Pos p, const char *what, bool file_scope) {
  const char *why = c_name_refused(name, file_scope);
  if (why)
    error_at(s->d, p, "%s '%s' cannot be a C name: it %s", what, name, why);
  return !why;
}

/* Each generated identifier must be unique across the file's graphs and
 * not already a name of C, its library or CUDA. */
static void claim(Sema *s, Map *names, Pos p, const char *what, const char *owner,
                  const char *id) {
  Pos *old = map_get(names, id);
  if (old) {
    error_at(s->d, p, "the generated C name '%s' is used twice", id);
    note_at(s->d, *old, "it is also generated for this");
    return;
  }
  const char *why = strcmp(id, owner) ? c_name_taken(id) : NULL;
  if (why)
    error_at(s->d, p, "%s '%s' gives the C name '%s', which %s", what, owner, id, why);
  Pos *at = arena_alloc(s->c->arena, sizeof *at);
  *at = p;
  map_put(names, arena_strdup(s->c->arena, id), at);
}

static void check_c_names(Sema *s, Program *p) {
  Map names = {.by_string = true};
  char id[CNAME_SIZE];
  for (size_t i = 0; i < s->c->items.n; i++) {
    Item *it = s->c->items.v[i];
    if (it->kind != IT_KERNEL)
      continue;
    const char *what = it->capture ? "capture function" : "kernel";
    bool free_name = check_c_word(s, kernel_c_name(it), it->name_pos, what, true);
    for (int j = 0; j < it->nparams; j++)
      check_c_word(s, param_c_name(&it->params[j]), it->params[j].pos, "parameter", false);
    if (free_name)
      claim(s, &names, it->name_pos, what, it->name->name, kernel_c_name(it));
  }
  static const GraphName fixed[] = {GN_TYPE,    GN_EXTERN, GN_CREATE,
                                    GN_LAUNCH,  GN_DESTROY, GN_USER, GN_POOL_BYTES};
  for (size_t i = 0; i < p->graphs.n; i++) {
    Graph *g = p->graphs.v[i];
    const char *gn = g->name->name;
    Pos at = g->item->name_pos;
    if (!check_c_word(s, graph_c_name(id, GN_TYPE, g, NULL), at, "graph", true))
      continue;
    for (size_t j = 0; j < sizeof fixed / sizeof *fixed; j++)
      claim(s, &names, at, "graph", gn, graph_c_name(id, fixed[j], g, NULL));
    for (size_t r = 0; r < g->res.n; r++) {
      Resource *res = &g->res.v[r];
      const char *what = res->kind == RES_SCALAR ? "scalar" : "buffer";
      GraphName made[2];
      int nmade = resource_c_names(res, made);
      if (made[0] == GN_BIND) {
        what = "extern buffer";
        check_c_word(s, member_c_name(res), res->pos, what, false);
      }
      for (int j = 0; j < nmade; j++)
        claim(s, &names, res->pos, what, res->name->name, graph_c_name(id, made[j], g, res));
    }
  }
  map_free(&names);
}

Program *check_program(Compiler *c) {
  Program *p = xrealloc(NULL, sizeof *p);
  memset(p, 0, sizeof *p);
  c->program = p;
  Sema s = {.c = c, .d = c->diag, .node_index = {.by_string = true},
            .undefined_at = {.by_string = true}};
  for (size_t i = 0; i < c->items.n; i++)
    if (c->items.v[i]->kind == IT_CONST && !map_get(&s.consts, c->items.v[i]->name))
      map_put(&s.consts, c->items.v[i]->name, c->items.v[i]);
  for (size_t i = 0; i < c->items.n; i++)
    note_item_decls(&s, c->items.v[i]);
  for (size_t i = 0; i < c->items.n && !diag_stopped(c->diag); i++) {
    Item *it = c->items.v[i];
    if (it->kind == IT_CONST || it->kind == IT_KERNEL) {
      if (define_global(&s, it) && it->kind == IT_KERNEL)
        check_kernel(&s, it);
    }
  }
  for (size_t i = 0; i < c->items.n && !diag_stopped(c->diag); i++) {
    Item *it = c->items.v[i];
    if (it->kind != IT_GRAPH)
      continue;
    s.item = it;
    if (!it->variant_var) {
      if (define_global(&s, it))
        check_graph(&s, it, it->name, NULL, 0);
      continue;
    }
    check_variants(&s, it);
  }
  if (!diag_errors(c->diag))
    check_c_names(&s, p);
  map_free(&s.globals);
  map_free(&s.consts);
  map_free(&s.use_sites);
  map_free(&s.undefined_at);
  free(s.launches.slots);
  return p;
}

/* The front end after parsing, as every driver runs it (cgc, cgc lsp, the
 * fuzzer, the limits harness): the checks, then -D's constants that the
 * program does not have, then each graph's ordering while no error stops
 * it.  Warnings come after (warn_program), once the caller's own checks
 * have passed. */
Program *analyze_program(Compiler *c) {
  Program *p = check_program(c);
  for (int i = 0; i < c->ndefines && !diag_errors(c->diag); i++)
    if (!c->defines[i].used)
      warn_at(c->diag, W_UNUSED_DEFINE, NO_POS, "-D %s: the program has no top-level constant '%s'",
              c->defines[i].name, c->defines[i].name);
  for (size_t i = 0; i < p->graphs.n && !diag_errors(c->diag); i++)
    order_graph(c, p->graphs.v[i]);
  return p;
}

void program_free(Program *p) {
  if (!p)
    return;
  for (size_t i = 0; i < p->graphs.n; i++) {
    Graph *g = p->graphs.v[i];
    vec_free(&g->res);
    vec_free(&g->nodes);
    vec_free(&g->written);
    vec_free(&g->edges);
    vec_free(&g->loads);
    free(g);
  }
  vec_free(&p->graphs);
  vec_free(&p->uses);
  free(p);
}
