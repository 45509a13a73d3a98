/* sema.c: names, types, sizes and launch limits; unrolls `for` and builds
 * each graph's nodes with their accesses.
 *
 * Top-level constants and kernels are checked in order first, so graphs
 * see all of them; inside a graph, names are used after their declaration,
 * as in C.  `for` bodies are checked once per iteration (source.c prints
 * each distinct message once). */
#include "cgc.h"

#include <assert.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct Value {
  bool is_float;
  int64_t i;
  double f;
} Value;

typedef struct Global {
  Item *item;
  int64_t value; /* IT_CONST */
  bool valid;    /* its value could be computed */
  bool defining; /* its initialiser is being evaluated */
} Global;

typedef enum BindKind { B_CONST, B_LOOP, B_RES } BindKind;

typedef struct Binding {
  BindKind kind;
  Sym *name;
  Pos pos;
  int64_t value; /* B_CONST, B_LOOP */
  bool valid;
  int res;       /* B_RES */
  uintptr_t shadowed; /* locals: index + 1 of the binding it hides, or 0 */
} Binding;

typedef struct PendingEdge {
  const char *from, *to;
  Pos from_pos, to_pos, arrow;
  bool programmatic; /* written with '=>' */
} PendingEdge;

typedef struct Sema {
  Compiler *c;
  Diag *d;
  Map globals; /* Sym -> Global */
  Map consts;  /* Sym -> Item, every top-level const, defined or not yet */
  Sym *defining; /* the graph's or loop's constant being evaluated */
  /* The graph being checked: */
  Graph *g;
  Map names;         /* Sym -> Binding, graph level */
  Map later;         /* Sym -> Stmt, every graph-level declaration */
  Map node_decls;    /* Sym (base name) -> Stmt */
  Map node_index;    /* node name -> index + 1 */
  VEC(Binding) locals; /* loop variables and loop-body constants */
  Map local_index;     /* Sym -> index + 1 of its innermost local */
  VEC(uint32_t) subtree_end; /* per node: a control node's end of its bodies' nodes */
  Stmt *loops[MAX_NESTING];
  int64_t index[MAX_NESTING];
  int depth;
  VEC(PendingEdge) pending;
  /* The whole program's budgets (cgc.h): */
  int64_t expanded;     /* statements run by unrolling */
  int64_t nodes_before; /* nodes of the graphs already checked */
  int64_t accesses;     /* node arguments, and accesses copied into control nodes */
  bool too_big;         /* a limit was reported: checking stops */
  int64_t owned_bytes;
  int32_t scope, branch; /* the body nodes go into: a control node, or -1 */
  int blocks;            /* control-flow bodies open */
  bool at_bound;         /* a buffer's size: a bounded scalar is its bound */
  Stmt *cur_stmt;        /* the node statement being checked */
} Sema;

static const char *plural(int64_t n) { return n == 1 ? "" : "s"; }

/* ---- names ---- */

static Binding *lookup_local(Sema *s, Sym *name) {
  uintptr_t i = (uintptr_t)map_get(&s->local_index, name);
  return i ? &s->locals.v[i - 1] : NULL;
}

static void push_local(Sema *s, Binding b) {
  b.shadowed = (uintptr_t)map_get(&s->local_index, b.name);
  vec_push(&s->locals, b);
  map_put(&s->local_index, b.name, (void *)(uintptr_t)s->locals.n);
}

/* Ends the scopes opened since the locals numbered `mark`. */
static void pop_locals(Sema *s, size_t mark) {
  while (s->locals.n > mark) {
    const Binding *b = &s->locals.v[--s->locals.n];
    map_put(&s->local_index, b->name, (void *)b->shadowed);
  }
}

static Binding *lookup(Sema *s, Sym *name) {
  Binding *b = lookup_local(s, name);
  return b ? b : map_get(&s->names, name);
}

/* Every key of a map keyed by Sym, as a candidate. */
static void suggest_keys(Suggest *sg, const Map *m) {
  for (size_t i = 0; i < m->cap; i++)
    if (m->slots[i].key)
      suggest_try(sg, ((const Sym *)m->slots[i].key)->name);
}

typedef enum Undefined { UNDEFINED_NAME, UNDEFINED_KERNEL, UNDEFINED_NODE } Undefined;

/* "undefined name 'x'", with "did you mean" and its fix when a name is
 * close to it. */
static void report_undefined(Sema *s, Pos p, Undefined what, const Sym *name, const char *meant) {
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

static void undefined(Sema *s, Pos p, Sym *name) {
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
  } else if (!s->c->include_failed) { /* else it may be the missing file's */
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
static bool dropped(Sema *s, Pos p) {
  if (diag_errors(s->d) == 0) {
    assert(!"a value was dropped without a diagnostic");
    error_at(s->d, p, "internal error: this has no value, and no error said why");
  }
  return false;
}

/* ---- constant expressions ---- */

static const char *describe_res(Sema *s, int res) {
  return s->g->res.v[res].kind == RES_SCALAR ? "scalar" : "buffer";
}

static bool eval(Sema *s, Expr *e, Value *out);

/* An integer scalar without `max` where a bound is needed (`what`): the
 * fix-it puts ` max N` after its type. */
static void no_bound(Sema *s, Expr *e, const Resource *r, const char *what) {
  if (r->bound_written)
    return; /* a bound that was refused where it is written */
  if (r->from_comm != CGRT_FROM_VALUE) {
    error_span(s->d, expr_span(e),
               "scalar '%s' takes the communicator's %s, which has no bound; %s can follow a "
               "scalar only up to a bound",
               r->name->name, r->from_comm == CGRT_RANK ? "rank" : "ranks", what);
    return;
  }
  error_span(s->d, expr_span(e),
             "scalar '%s' has no bound; %s can follow a scalar only up to a bound: declare it "
             "'scalar %s: %s max N'",
             r->name->name, what, r->name->name, type_name(r->type));
  Pos at = r->bound_at;
  note_at(s->d, at, "'%s' takes its bound here", r->name->name);
  diag_fix(s->d, (Span){.at = at, .lo_line = at.line, .lo_col = at.col, .hi_line = at.line,
                        .hi_col = at.col},
           " max N");
}

static bool eval_int(Sema *s, Expr *e, int64_t *out) {
  Value v;
  if (!eval(s, e, &v))
    return false;
  if (v.is_float) {
    error_span(s->d, expr_span(e), "expected an integer, not a floating-point value");
    return false;
  }
  *out = v.i;
  return true;
}

static bool eval_name(Sema *s, Expr *e, Value *out) {
  Binding *b = lookup(s, e->name);
  if (b) {
    if (b->kind == B_RES) {
      Resource *r = &s->g->res.v[b->res];
      if (r->kind == RES_SCALAR && r->bounded && s->at_bound) {
        *out = (Value){.i = r->bound};
        return true;
      }
      if (r->kind == RES_SCALAR && r->bounded)
        error_span(s->d, expr_span(e),
                   "scalar '%s' is not a constant; its bound stands for it only in grid(...) and "
                   "in buffer sizes",
                   e->name->name);
      else if (r->kind == RES_SCALAR && s->at_bound && !type_is_float(r->type))
        no_bound(s, e, r, "a buffer's size");
      else
        error_span(s->d, expr_span(e), "%s '%s' is not a constant", describe_res(s, b->res),
                   e->name->name);
      return false;
    }
    *out = (Value){.i = b->value};
    return b->valid || dropped(s, e->pos);
  }
  Global *gl = map_get(&s->globals, e->name);
  if (gl && gl->item->kind == IT_CONST) {
    if (gl->defining) {
      error_span(s->d, expr_span(e), "'%s' is used in its own definition", e->name->name);
      return false;
    }
    *out = (Value){.i = gl->value};
    return gl->valid || dropped(s, e->pos);
  }
  if (gl) {
    error_span(s->d, expr_span(e), "'%s' is a %s, not a constant", e->name->name,
               gl->item->kind == IT_KERNEL ? "kernel" : "graph");
    return false;
  }
  undefined(s, e->pos, e->name);
  return false;
}

static bool eval_call(Sema *s, Expr *e, Value *out) {
  const char *fn = e->fn->name;
  if (strcmp(fn, "cdiv") && strcmp(fn, "min") && strcmp(fn, "max")) {
    error_span(s->d, expr_span(e), "unknown function '%s' (the functions are cdiv, min and max)",
               fn);
    return false;
  }
  if (e->nargs != 2) {
    error_span(s->d, expr_span(e), "%s takes 2 arguments, %d given", fn, e->nargs);
    return false;
  }
  int64_t a, b;
  if (!eval_int(s, e->args[0], &a) || !eval_int(s, e->args[1], &b))
    return false;
  if (fn[0] == 'm') {
    *out = (Value){.i = (fn[1] == 'i') == (a < b) ? a : b};
    return true;
  }
  if (b == 0) {
    error_span(s->d, expr_span(e), "division by zero");
    return false;
  }
  if (a == INT64_MIN && b == -1) {
    error_span(s->d, expr_span(e), "integer overflow in constant expression");
    return false;
  }
  int64_t q = a / b;
  if (a % b != 0 && (a < 0) == (b < 0))
    q++;
  *out = (Value){.i = q};
  return true;
}

static bool eval_bin(Sema *s, Expr *e, Value *out) {
  Value a, b;
  if (!eval(s, e->a, &a) || !eval(s, e->b, &b))
    return false;
  if (a.is_float || b.is_float) {
    double x = a.is_float ? a.f : (double)a.i, y = b.is_float ? b.f : (double)b.i;
    double r;
    switch (e->op) {
    case '+': r = x + y; break;
    case '-': r = x - y; break;
    case '*': r = x * y; break;
    case '/': r = x / y; break;
    default: error_span(s->d, expr_span(e), "'%%' needs integer operands"); return false;
    }
    if (!isfinite(r)) {
      error_span(s->d, expr_span(e), "floating-point constant expression is not finite");
      return false;
    }
    if (r == 0 && x != 0 && (e->op == '/' || (e->op == '*' && y != 0))) {
      error_span(s->d, expr_span(e), "floating-point constant expression underflows to zero");
      return false;
    }
    *out = (Value){.is_float = true, .f = r};
    return true;
  }
  int64_t r = 0;
  bool overflow = false;
  switch (e->op) {
  case '+': overflow = __builtin_add_overflow(a.i, b.i, &r); break;
  case '-': overflow = __builtin_sub_overflow(a.i, b.i, &r); break;
  case '*': overflow = __builtin_mul_overflow(a.i, b.i, &r); break;
  case '/':
  case '%':
    if (b.i == 0) {
      error_span(s->d, expr_span(e), "division by zero");
      return false;
    }
    overflow = a.i == INT64_MIN && b.i == -1;
    if (!overflow)
      r = e->op == '/' ? a.i / b.i : a.i % b.i;
    break;
  }
  if (overflow) {
    error_span(s->d, expr_span(e), "integer overflow in constant expression");
    return false;
  }
  *out = (Value){.i = r};
  return true;
}

static bool eval(Sema *s, Expr *e, Value *out) {
  switch (e->kind) {
  case EX_INT:
    *out = (Value){.i = e->ival};
    return true;
  case EX_FLOAT:
    *out = (Value){.is_float = true, .f = e->fval};
    return true;
  case EX_NAME:
    return eval_name(s, e, out);
  case EX_CALL:
    return eval_call(s, e, out);
  case EX_NEG:
    if (!eval(s, e->a, out))
      return false;
    if (out->is_float) {
      out->f = -out->f;
    } else if (out->i == INT64_MIN) {
      error_span(s->d, expr_span(e), "integer overflow in constant expression");
      return false;
    } else {
      out->i = -out->i;
    }
    return true;
  case EX_BIN:
    return eval_bin(s, e, out);
  case EX_INDEX:
  case EX_SLICE: {
    Expr *root = e;
    while (root->kind == EX_INDEX || root->kind == EX_SLICE)
      root = root->a;
    if (root->kind == EX_NAME) {
      Binding *b = lookup(s, root->name);
      if (b && b->kind == B_RES) {
        error_at(s->d, root->pos, "%s '%s' is not a constant",
                 describe_res(s, b->res), root->name->name);
        return false;
      }
    }
    error_span(s->d, expr_span(e), "only buffers can be indexed");
    return false;
  }
  }
  return false;
}

/* ---- types and values ---- */

static int mantissa_bits(Type t) {
  switch (t) {
  case TY_F16: return 11;
  case TY_BF16: return 8;
  case TY_F32: return 24;
  default: return 53;
  }
}

static double float_max(Type t) {
  switch (t) {
  case TY_F16: return 65504.0;
  case TY_BF16: return 3.3895313892515355e38;
  case TY_F32: return FLT_MAX;
  default: return DBL_MAX;
  }
}

static bool int_fits(Type t, int64_t v) {
  switch (t) {
  case TY_I8: return v >= INT8_MIN && v <= INT8_MAX;
  case TY_I16: return v >= INT16_MIN && v <= INT16_MAX;
  case TY_I32: return v >= INT32_MIN && v <= INT32_MAX;
  case TY_I64: return true;
  case TY_U8: return v >= 0 && v <= UINT8_MAX;
  case TY_U16: return v >= 0 && v <= UINT16_MAX;
  case TY_U32: return v >= 0 && v <= UINT32_MAX;
  case TY_U64: return v >= 0;
  default: {
    /* Exactly representable: the significant bits fit the mantissa. */
    uint64_t m = v < 0 ? -(uint64_t)v : (uint64_t)v;
    while (m && !(m & 1))
      m >>= 1;
    int bits = 0;
    for (; m; m >>= 1)
      bits++;
    return bits <= mantissa_bits(t) && fabs((double)v) <= float_max(t);
  }
  }
}

/* The shortest text that reads back as exactly v, so that a message
 * shows the value as it is, not rounded as %g would. */
static const char *float_text(Sema *s, double v) {
  char buf[40];
  int digits = 1;
  for (; digits < 17; digits++) {
    snprintf(buf, sizeof buf, "%.*g", digits, v);
    if (strtod(buf, NULL) == v)
      break;
  }
  /* Whole numbers below 10^17 in full: 70000, not 7e+04. */
  int exp10 = v != 0 ? (int)floor(log10(fabs(v))) : 0;
  if (exp10 >= digits && exp10 < 17)
    digits = exp10 + 1;
  snprintf(buf, sizeof buf, "%.*g", digits, v);
  return arena_strdup(s->c->arena, buf);
}

/* The bits of infinity in a floating-point type. */
static uint64_t float_inf_bits(Type t) {
  switch (t) {
  case TY_F16: return 0x7c00;
  case TY_BF16: return 0x7f80;
  case TY_F32: return 0x7f800000;
  default: return 0x7ff0000000000000;
  }
}

/* Checks that a constant fits an element type; `what` names the use.  A
 * floating-point value is rounded to the type to nearest even, as the
 * generated code stores it: it must neither overflow to infinity nor,
 * unless it is zero, underflow to zero. */
static bool check_fits(Sema *s, Span p, Value v, Type t, const char *what) {
  if (v.is_float) {
    if (!type_is_float(t)) {
      error_span(s->d, p, "%s is %s; a floating-point value does not fit", what, type_name(t));
      return false;
    }
    uint64_t sign = (uint64_t)1 << (8 * type_size(t) - 1);
    uint64_t bits = value_bits(t, true, 0, v.f) & ~sign;
    if (bits == float_inf_bits(t)) {
      error_span(s->d, p, "%s does not fit %s, which is %s: the largest %s is %s",
                 float_text(s, v.f), what, type_name(t), type_name(t), float_text(s, float_max(t)));
      return false;
    }
    if (bits == 0 && v.f != 0) {
      /* The smallest subnormal: 2^(1 - bias - stored mantissa bits). */
      int least = t == TY_F16 ? -24 : t == TY_BF16 ? -133 : t == TY_F32 ? -149 : -1074;
      error_span(s->d, p, "%s rounds to zero in %s, which is %s: the smallest nonzero %s is %s",
                 float_text(s, v.f), what, type_name(t), type_name(t),
                 float_text(s, ldexp(1.0, least)));
      return false;
    }
    return true;
  }
  if (!int_fits(t, v.i)) {
    error_span(s->d, p,
               type_is_float(t) ? "%lld is not exactly representable in %s, which is %s"
                                : "%lld does not fit %s, which is %s",
               (long long)v.i, what, type_name(t));
    return false;
  }
  return true;
}

/* "f16[2, 1024]" */
static const char *shape_text(Sema *s, Type t, const int64_t *dims, int ndims) {
  char buf[256];
  int n = snprintf(buf, sizeof buf, "%s", type_name(t));
  if (ndims > 0) {
    n += snprintf(buf + n, sizeof buf - (size_t)n, "[");
    for (int i = 0; i < ndims && n < 200; i++)
      n += snprintf(buf + n, sizeof buf - (size_t)n, "%s%lld", i ? ", " : "", (long long)dims[i]);
    snprintf(buf + n, sizeof buf - (size_t)n, "]");
  }
  return arena_strdup(s->c->arena, buf);
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
      error_span(s->d, expr_span(it->value), "constant '%s' must be an integer", it->name->name);
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
  r.written_at.file = -1;
  r.grid_at.file = -1;
  vec_push(&s->g->res, r);
  Binding *b = arena_alloc(s->c->arena, sizeof *b);
  *b = (Binding){.kind = B_RES, .name = st->name, .pos = st->name_pos,
                 .res = (int)s->g->res.n - 1};
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
  r->bound_at = st->type_pos;
  r->bound_at.col += (int32_t)strlen(type_name(st->type));
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
    Binding *bd = lookup(s, e->name);
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
    error_span(s->d, expr_span(st->value), "constant '%s' must be an integer", st->name->name);
    valid = false;
  }
  if (!check_new_name(s, st->name, st->name_pos))
    return;
  Binding b = {.kind = B_CONST, .name = st->name, .pos = st->name_pos,
               .value = valid ? v.i : 0, .valid = valid};
  if (s->depth > 0 || s->blocks > 0) {
    push_local(s, b);
  } else {
    Binding *p = arena_alloc(s->c->arena, sizeof *p);
    *p = b;
    map_put(&s->names, st->name, p);
  }
}

/* ---- graphs: nodes ---- */

/* Resolves a buffer or scalar reference with views into an argument. */
static bool resolve_view(Sema *s, Expr *e, Arg *arg, bool *is_ref) {
  Expr *chain[MAX_EXPR_DEPTH + 1];
  int n = 0;
  Expr *root = e;
  while (root->kind == EX_INDEX || root->kind == EX_SLICE) {
    chain[n++] = root;
    root = root->a;
  }
  *is_ref = false;
  if (root->kind != EX_NAME)
    return true;
  Binding *b = lookup(s, root->name);
  if (!b && !map_get(&s->globals, root->name)) {
    undefined(s, root->pos, root->name);
    return false;
  }
  if (!b || b->kind != B_RES)
    return true;
  *is_ref = true;
  Resource *r = &s->g->res.v[b->res];
  arg->pos = root->pos;
  arg->res = b->res;
  if (r->kind == RES_SCALAR) {
    if (n > 0) {
      error_span(s->d, expr_span(chain[n - 1]), "scalar '%s' cannot be indexed", r->name->name);
      return false;
    }
    arg->kind = ARG_SCALAR_PTR;
    arg->bytes = r->bytes;
    arg->count = 1;
    return true;
  }
  arg->kind = ARG_VIEW;
  if (r->count == 0)
    return dropped(s, root->pos); /* the declaration was in error */
  int64_t offset = 0, lead = r->ndims > 0 ? r->dims[0] : 1;
  int dim = 0;                    /* the buffer dimension now leading */
  int64_t slice = r->count / lead; /* elements in one slice of it */
  for (int i = n - 1; i >= 0; i--) {
    Expr *v = chain[i];
    if (dim >= r->ndims) {
      error_span(s->d, expr_span(v), "'%s' has %d dimension%s; this index is one too many",
                 r->name->name, r->ndims, plural(r->ndims));
      return false;
    }
    int64_t lo, hi;
    if (!eval_int(s, v->b, &lo))
      return false;
    if (v->kind == EX_INDEX) {
      if (lo < 0 || lo >= lead) {
        error_span(s->d, expr_span(v->b),
                   "index %lld is out of range for dimension %d of '%s' (size %lld)", (long long)lo,
                   dim, r->name->name, (long long)lead);
        return false;
      }
      offset += lo * slice;
      dim++;
      lead = dim < r->ndims ? r->dims[dim] : 1;
      slice = dim < r->ndims ? slice / lead : 1;
    } else {
      if (!eval_int(s, v->c, &hi))
        return false;
      if (lo < 0 || hi > lead || lo >= hi) {
        error_span(s->d, expr_span(v->b),
                   "slice %lld:%lld is out of range for dimension %d of '%s' (size %lld)",
                   (long long)lo, (long long)hi, dim, r->name->name, (long long)lead);
        return false;
      }
      offset += lo * slice;
      lead = hi - lo;
    }
  }
  arg->count = lead * slice;
  if (dim >= r->ndims)
    arg->count = 1;
  arg->offset = offset * type_size(r->type);
  arg->bytes = arg->count * type_size(r->type);
  return true;
}

/* An argument's whole text, the caret at its buffer or scalar. */
static Span arg_span(const Expr *e, Pos at) {
  Span sp = expr_span(e);
  sp.at = at;
  return sp;
}

/* "wq[0] (f16[1024, 1024], 1048576 elements)" */
static const char *arg_text(Sema *s, Expr *e, const Arg *a) {
  const Resource *r = &s->g->res.v[a->res];
  const char *name = r->name->name;
  if (e->kind == EX_NAME)
    return arena_printf(s->c->arena, "%s '%s' (%s)", r->kind == RES_SCALAR ? "scalar" : "buffer",
                        name, shape_text(s, r->type, r->dims, r->ndims));
  return arena_printf(s->c->arena, "view of '%s' (%s, %lld element%s)", name,
                      type_name(r->type), (long long)a->count, plural(a->count));
}

static void add_access(Sema *s, Node *n, const Arg *a, AccessMode mode) {
  Access *acc = &n->acc[n->nacc++];
  acc->res = a->res;
  acc->lo = a->kind == ARG_VIEW ? a->offset : 0;
  acc->hi = acc->lo + a->bytes;
  acc->mode = mode;
  (void)s;
}

static const char *node_name(Sema *s, Pos p, Sym *base, int depth);

/* The declaration of the while node that a bare name in an argument
 * names, when no buffer, scalar or constant has that name. */
static Stmt *while_named(Sema *s, const Expr *e) {
  if (e->kind != EX_NAME || lookup(s, e->name) || map_get(&s->globals, e->name))
    return NULL;
  Stmt *decl = map_get(&s->node_decls, e->name);
  return decl && decl->kind == ST_WHILE ? decl : NULL;
}

/* "an if node", "a kernel node": what a node's declaration makes. */
static const char *node_decl_text(const Stmt *decl) {
  switch (decl->kind) {
  case ST_IF: return "an if node";
  case ST_SWITCH: return "a switch node";
  case ST_WHILE: return "a while node";
  default: break;
  }
  switch (decl->node_kind) {
  case NK_COPY: return "a copy node";
  case NK_FILL: return "a fill node";
  default: return "a kernel node";
  }
}

/* A loop whose body's kernel sets its handle holds no control flow and is
 * in none, so that ordering it apart from the other control nodes of its
 * graph (order.c, WHY_APART) needs to look at one level only.  `kind` is
 * the control node found in its body. */
static void report_control_in_handle_body(Sema *s, const Node *w, Pos at, NodeKind kind) {
  error_at(s->d, at,
           "while '%s' has %s %s node in its body, and its body's kernel sets its handle; such "
           "a loop holds no control flow",
           w->name, kind == NK_IF ? "an" : "a", node_kinds[kind].name);
  note_at(s->d, w->handle_at, "the handle is passed here");
}

/* An argument of a handle parameter: the name of a while node whose body
 * holds this call directly (a for's copies are in the body itself).  The
 * while's body then ends with no condition kernel: this node sets the
 * condition, and only one node of the body may take the handle. */
static bool check_handle_arg(Sema *s, Node *n, Param *p, Expr *e, Arg *arg) {
  const char *kname = n->kernel->name->name;
  Stmt *decl = e->kind == EX_NAME ? map_get(&s->node_decls, e->name) : NULL;
  if (!decl) {
    bool named = e->kind == EX_NAME && !lookup(s, e->name) && !map_get(&s->globals, e->name);
    if (named && !s->c->include_failed) {
      Suggest sg;
      suggest_init(&sg, e->name->name);
      for (size_t i = 0; i < s->node_decls.cap; i++) {
        const Stmt *d = s->node_decls.slots[i].value;
        if (s->node_decls.slots[i].key && d->kind == ST_WHILE)
          suggest_try(&sg, d->base->name);
      }
      report_undefined(s, e->pos, UNDEFINED_NODE, e->name, suggest_best(&sg));
      return false;
    }
    if (named)
      return false; /* it may be the missing include's */
    error_span(s->d, expr_span(e),
               "parameter '%s' of '%s' is a handle; pass the name of a while node whose body "
               "holds this call (node NAME = while ...)",
               p->name->name, kname);
    note_at(s->d, p->pos, "'%s' is declared here", p->name->name);
    return false;
  }
  if (decl->kind != ST_WHILE) {
    error_at(s->d, e->pos,
             "'%s' is %s; only a while's handle can be passed, by a kernel in its body",
             e->name->name, node_decl_text(decl));
    return false;
  }
  /* This iteration's while, when the call is inside the loops that
   * declare it; then it must enclose the call. */
  int32_t w = -1;
  Stmt *a = decl->parent_for, *b = s->cur_stmt ? s->cur_stmt->parent_for : NULL;
  int depth = s->cur_stmt ? s->cur_stmt->loop_depth : 0;
  for (; depth > decl->loop_depth; depth--)
    b = b->parent_for;
  const char *name = depth == decl->loop_depth && a == b
                         ? node_name(s, e->pos, decl->base, decl->loop_depth)
                         : NULL;
  for (int32_t x = s->scope; name && x >= 0; x = s->g->nodes.v[x].scope)
    if (s->g->nodes.v[x].kind == NK_WHILE && !strcmp(s->g->nodes.v[x].name, name)) {
      w = x;
      break;
    }
  if (w < 0) {
    error_at(s->d, e->pos,
             "'%s' is a while node, but this call is not in its body; a while's handle is passed "
             "only by a kernel in its body",
             e->name->name);
    note_at(s->d, decl->name_pos, "'%s' is declared here", e->name->name);
    return false;
  }
  Node *wn = &s->g->nodes.v[w];
  if (s->scope != w) {
    /* Measured on the H200: a kernel of an inner loop's body that set the
     * outer loop's handle made launches fail now and then (unspecified
     * launch failure) while another conditional node ran beside it. */
    Node *in = &s->g->nodes.v[s->scope];
    error_at(s->d, e->pos,
             "the handle of while '%s' is passed from inside %s '%s' in its body; a loop's "
             "condition is set by a kernel directly in its body (or in a 'for' there)",
             wn->name, node_kinds[in->kind].name, in->name);
    note_at(s->d, decl->name_pos, "'%s' is declared here", e->name->name);
    return false;
  }
  if (wn->handle_at.file >= 0) {
    if (!wn->handle_reported) {
      bool copy = wn->handle_at.file == e->pos.file && wn->handle_at.line == e->pos.line &&
                  wn->handle_at.col == e->pos.col;
      error_at(s->d, e->pos,
               "the handle of while '%s' is passed a second time%s; one node of a loop's body "
               "sets its condition",
               wn->name, copy ? " (a 'for' repeats this call)" : "");
      note_at(s->d, wn->handle_at, "it is first passed here");
      wn->handle_reported = true;
    }
    return false;
  }
  wn->handle_at = e->pos;
  if (wn->scope >= 0) {
    const Node *out = &s->g->nodes.v[wn->scope];
    error_at(s->d, e->pos,
             "while '%s' is inside %s '%s'; only a loop outside control flow may have its "
             "condition set by its body's kernel",
             wn->name, node_kinds[out->kind].name, out->name);
    note_at(s->d, decl->name_pos, "'%s' is declared here", e->name->name);
    return false;
  }
  /* The call is in w's body, so every node made since w is of that body
   * (a control node comes before its bodies' nodes): only those are looked
   * at, which keeps a program of many such loops linear. */
  for (size_t i = (size_t)w + 1; i < s->g->nodes.n; i++) {
    const Node *c = &s->g->nodes.v[i];
    if (c->scope == w && node_kinds[c->kind].bodies) {
      report_control_in_handle_body(s, wn, c->pos, c->kind);
      return false;
    }
  }
  if (decl->max_iter) {
    error_at(s->d, e->pos,
             "while '%s' has a bound (max), which the runtime's condition kernel counts; a loop "
             "whose body sets its handle has no such kernel, so it cannot have one",
             wn->name);
    note_at(s->d, decl->max_iter->pos, "the bound is given here");
    return false;
  }
  arg->kind = ARG_HANDLE;
  arg->pos = e->pos;
  arg->res = w;
  arg->bytes = 8;
  return true;
}

static bool check_kernel_arg(Sema *s, Node *n, Param *p, Expr *e, Arg *arg) {
  if (p->type == TY_HANDLE)
    return check_handle_arg(s, n, p, e, arg);
  const char *kname = n->kernel->name->name;
  if (while_named(s, e)) {
    error_at(s->d, e->pos,
             "parameter '%s' of '%s' is %s%s, but '%s' is a while node; only a handle parameter "
             "takes a while's name",
             p->name->name, kname, type_name(p->type), p->pointer ? "*" : "", e->name->name);
    note_at(s->d, p->pos, "'%s' is declared here", p->name->name);
    return false;
  }
  bool is_ref;
  if (!resolve_view(s, e, arg, &is_ref))
    return false;
  if (p->pointer) {
    if (!is_ref) {
      error_span(s->d, expr_span(e),
                 "parameter '%s' of '%s' is a pointer (%s*); pass a buffer or a scalar",
                 p->name->name, kname, type_name(p->type));
      return false;
    }
    Resource *r = &s->g->res.v[arg->res];
    if (r->kind == RES_BUFFER && (r->buffer_kind == BUF_HOST || r->buffer_kind == BUF_EXTERN_HOST)) {
      error_span(s->d, arg_span(e, arg->pos), "'%s' is a host buffer; %s take device memory",
                 r->name->name, n->kind == NK_CAPTURE ? "capture functions" : "kernels");
      return false;
    }
    if (r->type != p->type) {
      error_span(s->d, arg_span(e, arg->pos),
                 "parameter '%s' of '%s' is %s*, but the argument is %s", p->name->name, kname,
                 type_name(p->type), arg_text(s, e, arg));
      note_at(s->d, p->pos, "'%s' is declared here", p->name->name);
      return false;
    }
    if (r->kind == RES_SCALAR && (p->mode & MODE_OUT) && r->written_at.file < 0)
      r->written_at = arg->pos;
    if (r->kind == RES_SCALAR)
      r->memory = true;
    add_access(s, n, arg, (AccessMode)p->mode);
    return true;
  }
  if (is_ref) {
    Resource *r = &s->g->res.v[arg->res];
    if (r->kind == RES_BUFFER) {
      error_span(s->d, arg_span(e, arg->pos),
                 "parameter '%s' of '%s' is a value (%s), but the argument is %s", p->name->name,
                 kname, type_name(p->type), arg_text(s, e, arg));
      return false;
    }
    if (r->type != p->type) {
      error_span(s->d, arg_span(e, arg->pos), "parameter '%s' of '%s' is %s, but scalar '%s' is %s",
                 p->name->name, kname, type_name(p->type), r->name->name, type_name(r->type));
      return false;
    }
    if (n->kind == NK_CAPTURE) {
      /* The function runs once, at create: its captured work would keep
       * the value the scalar had then. */
      error_span(s->d, arg_span(e, arg->pos),
                 "scalar '%s' cannot reach capture function '%s' by value: capture would freeze "
                 "it; declare parameter '%s' as a pointer (%s*) and pass the scalar's slot",
                 r->name->name, kname, p->name->name, type_name(p->type));
      note_at(s->d, p->pos, "'%s' is declared here", p->name->name);
      return false;
    }
    arg->kind = ARG_SCALAR_VALUE;
    add_access(s, n, arg, ACC_READ);
    return true;
  }
  Value v;
  if (!eval(s, e, &v))
    return false;
  char what[300];
  snprintf(what, sizeof what, "parameter '%s' of '%s'", p->name->name, kname);
  if (!check_fits(s, expr_span(e), v, p->type, what))
    return false;
  arg->pos = e->pos;
  arg->bits = value_bits(p->type, v.is_float, v.i, v.f);
  if (v.is_float) {
    arg->kind = ARG_FLOAT;
    arg->fval = v.f;
  } else if (type_is_float(p->type)) {
    arg->kind = ARG_FLOAT;
    arg->fval = (double)v.i;
  } else {
    arg->kind = ARG_INT;
    arg->ival = v.i;
  }
  return true;
}

static bool check_copy_fill_ref(Sema *s, Expr *e, Arg *arg, const char *what) {
  bool is_ref;
  if (!resolve_view(s, e, arg, &is_ref))
    return false;
  if (!is_ref) {
    error_span(s->d, expr_span(e), "the %s must be a buffer, a view or a scalar", what);
    return false;
  }
  if (arg->kind == ARG_SCALAR_PTR)
    s->g->res.v[arg->res].memory = true;
  return true;
}

static void check_copy(Sema *s, Node *n, Stmt *st) {
  if (st->nargs != 2) {
    error_at(s->d, st->callee_pos, "copy takes 2 arguments (destination, source), %d given",
             st->nargs);
    return;
  }
  n->args = arena_alloc(s->c->arena, 2 * sizeof *n->args);
  n->nargs = 2;
  Arg *dst = &n->args[0], *src = &n->args[1];
  if (!check_copy_fill_ref(s, st->args[0], dst, "destination of a copy") ||
      !check_copy_fill_ref(s, st->args[1], src, "source of a copy"))
    return;
  const Resource *rd = &s->g->res.v[dst->res], *rs = &s->g->res.v[src->res];
  if (rd->type != rs->type) {
    error_at(s->d, st->callee_pos, "copy between different element types: the destination is %s, the source %s",
             arg_text(s, st->args[0], dst), arg_text(s, st->args[1], src));
    return;
  }
  if (dst->count != src->count) {
    error_at(s->d, st->callee_pos, "copy sizes differ: the destination is %s, the source %s",
             arg_text(s, st->args[0], dst), arg_text(s, st->args[1], src));
    return;
  }
  int64_t dlo = dst->kind == ARG_VIEW ? dst->offset : 0;
  int64_t slo = src->kind == ARG_VIEW ? src->offset : 0;
  if (dst->res == src->res && dlo < slo + src->bytes && slo < dlo + dst->bytes) {
    error_at(s->d, st->callee_pos, "the source and destination of this copy overlap in '%s'",
             rd->name->name);
    return;
  }
  if (rd->kind == RES_SCALAR && rd->written_at.file < 0)
    s->g->res.v[dst->res].written_at = dst->pos;
  add_access(s, n, dst, ACC_WRITE);
  add_access(s, n, src, ACC_READ);
}

static void check_fill(Sema *s, Node *n, Stmt *st) {
  if (st->nargs != 2) {
    error_at(s->d, st->callee_pos, "fill takes 2 arguments (destination, value), %d given",
             st->nargs);
    return;
  }
  n->args = arena_alloc(s->c->arena, 2 * sizeof *n->args);
  n->nargs = 2;
  Arg *dst = &n->args[0];
  if (!check_copy_fill_ref(s, st->args[0], dst, "destination of a fill"))
    return;
  Resource *r = &s->g->res.v[dst->res];
  if (r->kind == RES_BUFFER && (r->buffer_kind == BUF_HOST || r->buffer_kind == BUF_EXTERN_HOST)) {
    error_span(s->d, arg_span(st->args[0], dst->pos),
               "'%s' is a host buffer; fill needs device memory", r->name->name);
    return;
  }
  Value v;
  if (!eval(s, st->args[1], &v))
    return;
  char what[300];
  snprintf(what, sizeof what, "'%s'", r->name->name);
  if (!check_fits(s, expr_span(st->args[1]), v, r->type, what))
    return;
  Arg *val = &n->args[1];
  val->pos = st->args[1]->pos;
  val->kind = v.is_float || type_is_float(r->type) ? ARG_FLOAT : ARG_INT;
  if (val->kind == ARG_FLOAT)
    val->fval = v.is_float ? v.f : (double)v.i;
  else
    val->ival = v.i;
  val->bits = value_bits(r->type, v.is_float, v.i, v.f);
  if (r->kind == RES_SCALAR && r->written_at.file < 0)
    r->written_at = dst->pos;
  add_access(s, n, dst, ACC_WRITE);
}

/* ---- collectives ---- */

/* Each collective's arguments (collective_kinds names it). */
static const struct {
  int min_args, max_args;
  const char *usage;
} collectives[NCOLLECTIVES] = {
    [CGRT_ALL_REDUCE] = {2, 3, "all_reduce(buffer, op) or all_reduce(dst, src, op)"},
    [CGRT_ALL_GATHER] = {2, 2, "all_gather(dst, src)"},
    [CGRT_REDUCE_SCATTER] = {3, 3, "reduce_scatter(dst, src, op)"},
    [CGRT_BROADCAST] = {2, 3, "broadcast(buffer, root) or broadcast(dst, src, root)"},
};

/* The collective a call names, or -1: the name, unless a kernel has it. */
static int collective_index(const Sym *name) {
  for (int i = 0; i < NCOLLECTIVES; i++)
    if (!strcmp(name->name, collective_kinds[i].name))
      return i;
  return -1;
}

/* A collective's buffer or view: device memory of a type NCCL has. */
static bool check_collective_ref(Sema *s, Expr *e, Arg *arg, const char *what,
                                 const char *name) {
  char buf[80];
  snprintf(buf, sizeof buf, "%s of %s", what, name);
  if (!check_copy_fill_ref(s, e, arg, buf))
    return false;
  const Resource *r = &s->g->res.v[arg->res];
  if (r->kind == RES_BUFFER && (r->buffer_kind == BUF_HOST || r->buffer_kind == BUF_EXTERN_HOST)) {
    error_at(s->d, arg->pos, "'%s' is a host buffer; %s needs device memory", r->name->name,
             name);
    return false;
  }
  if (r->type == TY_I16 || r->type == TY_U16) {
    error_at(s->d, arg->pos, "NCCL has no 16-bit integer type, and '%s' is %s", r->name->name,
             type_name(r->type));
    return false;
  }
  return true;
}

static bool check_reduce_op(Sema *s, Node *n, Expr *e, Type type, const char *name) {
  if (e->kind == EX_NAME)
    for (int i = 0; i < NREDUCTIONS; i++)
      if (!strcmp(e->name->name, reductions[i].name)) {
        if (i == CGRT_AVG && !type_is_float(type)) {
          error_at(s->d, e->pos, "avg needs floating-point elements, and these are %s",
                   type_name(type));
          return false;
        }
        n->reduce_op = i;
        return true;
      }
  error_at(s->d, e->pos, "the reduction of %s is one of sum, prod, max, min and avg", name);
  return false;
}

/* all_reduce, all_gather, reduce_scatter and broadcast. */
static void check_collective(Sema *s, Node *n, Stmt *st, int c) {
  const char *name = collective_kinds[c].name;
  n->kind = NK_COLLECTIVE;
  n->collective = c;
  if (st->nargs < collectives[c].min_args || st->nargs > collectives[c].max_args) {
    error_at(s->d, st->callee_pos, "%s takes %d argument%s, %d given: %s", name,
             collectives[c].min_args, plural(collectives[c].min_args), st->nargs,
             collectives[c].usage);
    return;
  }
  if (s->scope >= 0) {
    error_at(s->d, st->callee_pos,
             "%s cannot be in the body of a while, if or switch: NCCL's captured work may hold "
             "host nodes, which a conditional body cannot",
             name);
    return;
  }
  if (st->nlaunch) {
    error_at(s->d, st->launch[0].pos, "%s takes no launch configuration", name);
    return;
  }
  /* The in-place forms: all_reduce(buf, op), broadcast(buf, root). */
  bool in_place = (c == CGRT_ALL_REDUCE || c == CGRT_BROADCAST) && st->nargs == 2;
  n->args = arena_alloc(s->c->arena, 2 * sizeof *n->args);
  n->acc = arena_alloc(s->c->arena, 2 * sizeof *n->acc);
  n->nargs = 2;
  Arg *dst = &n->args[0], *src = &n->args[1];
  if (!check_collective_ref(s, st->args[0], dst, in_place ? "the buffer" : "the destination",
                            name))
    return;
  if (in_place)
    *src = *dst;
  else if (!check_collective_ref(s, st->args[1], src, "the source", name))
    return;
  const Resource *rd = &s->g->res.v[dst->res], *rs = &s->g->res.v[src->res];
  if (rd->type != rs->type) {
    error_at(s->d, st->callee_pos,
             "%s between different element types: the destination is %s, the source %s", name,
             arg_text(s, st->args[0], dst), arg_text(s, st->args[1], src));
    return;
  }
  int64_t dlo = dst->kind == ARG_VIEW ? dst->offset : 0;
  int64_t slo = src->kind == ARG_VIEW ? src->offset : 0;
  if (!in_place && dst->res == src->res && dlo < slo + src->bytes && slo < dlo + dst->bytes) {
    error_at(s->d, st->callee_pos,
             "the source and destination of %s overlap in '%s'; for the in-place form name one "
             "buffer",
             name, rd->name->name);
    return;
  }
  n->send_count = src->count;
  n->recv_count = dst->count;
  switch (c) {
  case CGRT_ALL_REDUCE:
  case CGRT_BROADCAST:
    if (dst->count != src->count) {
      error_at(s->d, st->callee_pos, "%s sizes differ: the destination is %s, the source %s",
               name, arg_text(s, st->args[0], dst), arg_text(s, st->args[1], src));
      return;
    }
    break;
  case CGRT_ALL_GATHER:
    if (dst->count % src->count) {
      error_at(s->d, st->callee_pos,
               "all_gather's destination holds the source of every rank, a multiple of its "
               "size: the destination is %s, the source %s",
               arg_text(s, st->args[0], dst), arg_text(s, st->args[1], src));
      return;
    }
    break;
  case CGRT_REDUCE_SCATTER:
    if (src->count % dst->count) {
      error_at(s->d, st->callee_pos,
               "reduce_scatter's source holds a destination's worth for every rank, a multiple "
               "of its size: the destination is %s, the source %s",
               arg_text(s, st->args[0], dst), arg_text(s, st->args[1], src));
      return;
    }
    break;
  }
  Expr *last = st->args[st->nargs - 1];
  if (c == CGRT_BROADCAST) {
    int64_t root;
    if (!eval_int(s, last, &root))
      return;
    if (root < 0 || root > INT32_MAX) {
      error_at(s->d, last->pos, "broadcast's root is a rank, from 0 to %d; %lld is not",
               INT32_MAX, (long long)root);
      return;
    }
    n->root = root;
  } else if (c != CGRT_ALL_GATHER && !check_reduce_op(s, n, last, rd->type, name)) {
    return;
  }
  if (in_place) {
    if (rd->kind == RES_SCALAR && rd->written_at.file < 0)
      s->g->res.v[dst->res].written_at = dst->pos;
    add_access(s, n, dst, ACC_RW);
    return;
  }
  if (rd->kind == RES_SCALAR && rd->written_at.file < 0)
    s->g->res.v[dst->res].written_at = dst->pos;
  add_access(s, n, dst, ACC_WRITE);
  add_access(s, n, src, ACC_READ);
}

static const char *const launch_names[] = {"grid", "block", "smem", "cluster", "priority"};

static bool launch_extents(Sema *s, LaunchItem *l, int64_t out[3]) {
  if (l->nargs < 1 || l->nargs > 3) {
    error_at(s->d, l->pos, "%s takes 1 to 3 extents, %d given", launch_names[l->key], l->nargs);
    return false;
  }
  out[0] = out[1] = out[2] = 1;
  for (int i = 0; i < l->nargs; i++) {
    if (!eval_int(s, l->args[i], &out[i]))
      return false;
    if (out[i] < 1) {
      error_span(s->d, expr_span(l->args[i]), "%s extent %lld must be at least 1",
                 launch_names[l->key], (long long)out[i]);
      return false;
    }
  }
  return true;
}

/* ---- grids that follow scalars ---- */

typedef VEC(int64_t) GridCode;

/* Whether e names a scalar: then it is a grid's program, not a constant. */
static bool names_scalar(Sema *s, const Expr *e) {
  switch (e->kind) {
  case EX_NAME: {
    Binding *b = lookup(s, e->name);
    return b && b->kind == B_RES && s->g->res.v[b->res].kind == RES_SCALAR;
  }
  case EX_CALL:
    for (int i = 0; i < e->nargs; i++)
      if (names_scalar(s, e->args[i]))
        return true;
    return false;
  case EX_NEG: return names_scalar(s, e->a);
  case EX_BIN: return names_scalar(s, e->a) || names_scalar(s, e->b);
  case EX_INT:
  case EX_FLOAT:
  case EX_INDEX:
  case EX_SLICE: break;
  }
  return false;
}

/* Appends the program of grid expression e to code (postfix, scalars by
 * their Graph.res index); *depth: the operands it holds at once.  False
 * after an error. */
static bool grid_program(Sema *s, Expr *e, GridCode *code, int *depth) {
  if (!names_scalar(s, e)) {
    int64_t v;
    if (!eval_int(s, e, &v))
      return false;
    vec_push(code, CGRT_GRID_CONST);
    vec_push(code, v);
    *depth = 1;
    return true;
  }
  Expr *a = NULL, *b = NULL;
  int64_t op = 0;
  switch (e->kind) {
  case EX_NAME: {
    Binding *bind = lookup(s, e->name);
    Resource *r = &s->g->res.v[bind->res];
    if (type_is_float(r->type)) {
      error_span(s->d, expr_span(e), "scalar '%s' is %s; a grid follows integer scalars only",
                 r->name->name, type_name(r->type));
      return false;
    }
    if (!r->bounded) {
      no_bound(s, e, r, "a grid");
      return false;
    }
    if (r->grid_at.file < 0)
      r->grid_at = e->pos;
    vec_push(code, CGRT_GRID_SCALAR);
    vec_push(code, bind->res);
    *depth = 1;
    return true;
  }
  case EX_NEG:
    if (!grid_program(s, e->a, code, depth))
      return false;
    vec_push(code, CGRT_GRID_NEG);
    return true;
  case EX_CALL: {
    Value v;
    const char *fn = e->fn->name;
    if ((strcmp(fn, "cdiv") && strcmp(fn, "min") && strcmp(fn, "max")) || e->nargs != 2)
      return eval(s, e, &v); /* reports it */
    a = e->args[0];
    b = e->args[1];
    op = fn[0] == 'c' ? CGRT_GRID_CDIV : fn[1] == 'i' ? CGRT_GRID_MIN : CGRT_GRID_MAX;
    break;
  }
  case EX_BIN:
    a = e->a;
    b = e->b;
    op = e->op == '+'   ? CGRT_GRID_ADD
         : e->op == '-' ? CGRT_GRID_SUB
         : e->op == '*' ? CGRT_GRID_MUL
         : e->op == '/' ? CGRT_GRID_DIV
                        : CGRT_GRID_MOD;
    break;
  case EX_INT:
  case EX_FLOAT:
  case EX_INDEX:
  case EX_SLICE: {
    Value v;
    return eval(s, e, &v); /* reports it */
  }
  }
  int da = 0, db = 0;
  bool ok = grid_program(s, a, code, &da);
  ok = grid_program(s, b, code, &db) && ok;
  if (!ok)
    return false;
  vec_push(code, op);
  *depth = da > db + 1 ? da : db + 1;
  return true;
}

/* "n = 4096, m = 8": the bounds of the scalars a program follows, or
 * their initial values. */
static const char *bounds_text(Sema *s, const int64_t *code, size_t lo, size_t hi, bool initial) {
  CharVec text = {0};
  bool *seen = xrealloc(NULL, s->g->res.n + 1);
  memset(seen, 0, s->g->res.n + 1);
  for (size_t i = lo; i < hi; i++) {
    if (code[i] != CGRT_GRID_CONST && code[i] != CGRT_GRID_SCALAR)
      continue;
    if (code[i++] == CGRT_GRID_CONST || seen[code[i]])
      continue;
    seen[code[i]] = true;
    const Resource *r = &s->g->res.v[code[i]];
    char buf[320];
    int len = snprintf(buf, sizeof buf, "%s%s = %lld", text.n ? ", " : "", r->name->name,
                       (long long)(initial ? r->init_i : r->bound));
    for (int k = 0; k < len && k < (int)sizeof buf - 1; k++)
      vec_push(&text, buf[k]);
  }
  vec_push(&text, '\0');
  const char *out = arena_strdup(s->c->arena, text.v);
  vec_free(&text);
  free(seen);
  return out;
}

/* grid(...): constant extents into n->grid, or, when an extent follows
 * bounded scalars, every extent's program into n->grid_code and the grid
 * at the bounds into n->grid, checked there against CUDA's limits. */
static bool grid_extents(Sema *s, Node *n, LaunchItem *l) {
  bool dynamic = false;
  for (int i = 0; i < l->nargs; i++)
    dynamic |= names_scalar(s, l->args[i]);
  if (!dynamic || l->nargs < 1 || l->nargs > 3)
    return launch_extents(s, l, n->grid);
  GridCode code = {0};
  size_t start[4] = {0};
  bool ok = true;
  for (int i = 0; i < 3; i++) {
    start[i] = code.n;
    int depth = 1;
    if (i >= l->nargs) {
      vec_push(&code, CGRT_GRID_CONST);
      vec_push(&code, 1);
    } else if (!grid_program(s, l->args[i], &code, &depth)) {
      ok = false;
    } else if (depth > CGRT_GRID_STACK) {
      error_span(s->d, expr_span(l->args[i]),
                 "grid extent %c holds %d values at once; the runtime evaluates at most %d", "xyz"[i],
                 depth, CGRT_GRID_STACK);
      ok = false;
    }
    vec_push(&code, CGRT_GRID_END);
  }
  start[3] = code.n;
  if (ok) {
    /* The grid at the bounds, by the runtime's own evaluator. */
    size_t nres = s->g->res.n;
    cgrt_scalar_desc *descs = xrealloc(NULL, (nres + 1) * sizeof *descs);
    uint64_t *values = xrealloc(NULL, (nres + 1) * sizeof *values);
    for (size_t r = 0; r < nres; r++) {
      const Resource *res = &s->g->res.v[r];
      descs[r] = (cgrt_scalar_desc){.type = (uint8_t)(res->type == TY_NONE ? CGRT_I64 : abi_type(res->type))};
      values[r] = (uint64_t)res->bound;
    }
    static const int64_t limit[3] = {INT32_MAX, 65535, 65535};
    uint32_t at = 0;
    for (int i = 0; i < 3 && ok; i++) {
      int64_t v = 0;
      int err = cgrt_grid_eval(code.v, (uint32_t)code.n, &at, descs, (uint32_t)nres, values, &v);
      Span sp = i < l->nargs ? expr_span(l->args[i]) : span_at(l->pos);
      const char *when = bounds_text(s, code.v, start[i], start[i + 1], false);
      if (err == CGRT_GRID_DIVZERO)
        error_span(s->d, sp, "grid extent %c divides by zero when %s", "xyz"[i], when);
      else if (err != CGRT_GRID_OK)
        error_span(s->d, sp, "grid extent %c overflows 64 bits when %s", "xyz"[i], when);
      else if (v < 1)
        error_span(s->d, sp, "grid extent %c is %lld when %s; at the bounds it must be at least 1",
                   "xyz"[i], (long long)v, when);
      else if (v > limit[i])
        error_span(s->d, sp, "grid extent %c is %lld when %s; CUDA allows at most %lld", "xyz"[i],
                   (long long)v, when, (long long)limit[i]);
      else
        n->grid[i] = v;
      ok = err == CGRT_GRID_OK && v >= 1 && v <= limit[i];
    }
    /* And at the scalars' initial values, which create sets the grid to:
     * there an extent may be 0 (the node is off until a set), no less. */
    for (size_t r = 0; r < nres; r++)
      values[r] = s->g->res.v[r].init_bits;
    at = 0;
    for (int i = 0; i < 3 && ok; i++) {
      int64_t v = 0;
      int err = cgrt_grid_eval(code.v, (uint32_t)code.n, &at, descs, (uint32_t)nres, values, &v);
      if (err == CGRT_GRID_OK && v >= 0 && v <= limit[i])
        continue;
      Span sp = i < l->nargs ? expr_span(l->args[i]) : span_at(l->pos);
      const char *when = bounds_text(s, code.v, start[i], start[i + 1], true);
      if (err == CGRT_GRID_DIVZERO)
        error_span(s->d, sp,
                   "grid extent %c divides by zero when %s, the initial values, which create "
                   "sets it with",
                   "xyz"[i], when);
      else if (err != CGRT_GRID_OK)
        error_span(s->d, sp,
                   "grid extent %c overflows 64 bits when %s, the initial values, which create "
                   "sets it with",
                   "xyz"[i], when);
      else
        error_span(s->d, sp,
                   "grid extent %c is %lld when %s, the initial values, which create sets it "
                   "with; there it must be 0 (the node is off) to %lld",
                   "xyz"[i], (long long)v, when, (long long)limit[i]);
      ok = false;
    }
    free(descs);
    free(values);
  }
  if (ok) {
    n->grid_code = arena_alloc(s->c->arena, code.n * sizeof *code.v);
    memcpy(n->grid_code, code.v, code.n * sizeof *code.v);
    n->ngrid_code = (int)code.n;
  }
  vec_free(&code);
  return ok;
}

static void check_launch(Sema *s, Node *n, Stmt *st) {
  LaunchItem *seen[LK_COUNT] = {0};
  for (int i = 0; i < st->nlaunch; i++) {
    LaunchItem *l = &st->launch[i];
    if (!node_kinds[n->kind].launch) {
      error_at(s->d, l->pos, "%s nodes take no %s(...); only kernel nodes have a launch configuration",
               node_kinds[n->kind].name, launch_names[l->key]);
      return;
    }
    if (seen[l->key]) {
      error_at(s->d, l->pos, "%s is given twice", launch_names[l->key]);
      note_at(s->d, seen[l->key]->pos, "first given here");
      continue;
    }
    seen[l->key] = l;
  }
  if (!node_kinds[n->kind].launch)
    return;
  LaunchItem *grid = seen[LK_GRID], *block = seen[LK_BLOCK];
  if (block)
    n->block_pos = block->pos;
  if (!grid || !block) {
    error_at(s->d, st->callee_pos, "kernel node '%s' needs %s", n->name,
             !grid && !block ? "grid(...) and block(...)" : !grid ? "grid(...)" : "block(...)");
  }
  bool grid_ok = grid && grid_extents(s, n, grid);
  if (grid_ok && !n->grid_code) {
    static const int64_t limit[3] = {INT32_MAX, 65535, 65535};
    for (int i = 0; i < 3; i++)
      if (n->grid[i] > limit[i]) {
        error_span(s->d, expr_span(grid->args[i]),
                   "grid extent %c is %lld; CUDA allows at most %lld", "xyz"[i],
                   (long long)n -> grid[i], (long long)limit[i]);
        grid_ok = false;
      }
  }
  if (block && launch_extents(s, block, n->block)) {
    static const int64_t limit[3] = {1024, 1024, 64};
    bool ok = true;
    for (int i = 0; i < 3; i++)
      if (n->block[i] > limit[i]) {
        error_span(s->d, expr_span(block->args[i]),
                   "block extent %c is %lld; CUDA allows at most %lld", "xyz"[i],
                   (long long)n -> block[i], (long long)limit[i]);
        ok = false;
      }
    int64_t threads = ok ? n->block[0] * n->block[1] * n->block[2] : 0;
    if (threads > 1024)
      error_at(s->d, block->pos, "a block of %lld threads is more than the 1024 CUDA allows",
               (long long)threads);
  }
  if (seen[LK_SMEM]) {
    LaunchItem *l = seen[LK_SMEM];
    if (l->nargs != 1)
      error_at(s->d, l->pos, "smem takes 1 value (bytes), %d given", l->nargs);
    else if (eval_int(s, l->args[0], &n->smem) && (n->smem < 0 || n->smem > 227 * 1024))
      error_span(s->d, expr_span(l->args[0]),
                 "smem(%lld) is out of range: a block can have 0 to 227K (232448) bytes",
                 (long long)n->smem);
  }
  if (seen[LK_CLUSTER]) {
    LaunchItem *l = seen[LK_CLUSTER];
    if (launch_extents(s, l, n->cluster)) {
      n->has_cluster = true;
      int64_t blocks;
      if (__builtin_mul_overflow(n->cluster[0], n->cluster[1], &blocks) ||
          __builtin_mul_overflow(blocks, n->cluster[2], &blocks))
        error_at(s->d, l->pos, "a cluster of %lld x %lld x %lld blocks is more than the portable 8",
                 (long long)n->cluster[0], (long long)n->cluster[1], (long long)n->cluster[2]);
      else if (blocks > 8)
        error_at(s->d, l->pos, "a cluster of %lld blocks is more than the portable 8",
                 (long long)blocks);
      else if (grid_ok)
        for (int i = 0; i < 3; i++)
          if (n->grid[i] % n->cluster[i]) {
            error_span(s->d, expr_span(l->args[i < l->nargs ? i : 0]),
                       "grid extent %c (%lld) is not a multiple of the cluster's (%lld)", "xyz"[i],
                       (long long)n -> grid[i], (long long)n -> cluster[i]);
            break;
          }
    }
  }
  if (seen[LK_PRIORITY]) {
    LaunchItem *l = seen[LK_PRIORITY];
    if (l->nargs != 1)
      error_at(s->d, l->pos, "priority takes 1 value, %d given", l->nargs);
    else if (eval_int(s, l->args[0], &n->priority)) {
      if (n->priority < INT32_MIN || n->priority > INT32_MAX)
        error_span(s->d, expr_span(l->args[0]), "priority %lld does not fit an int",
                   (long long)n->priority);
      else
        n->has_priority = true;
    }
  }
}

/* Room for any name: a base and an index per loop, "[-9223372036854775808]"
 * at most, so that distinct nodes never share a clipped name. */
enum { NAME_BUF = MAX_IDENT_LEN + MAX_NESTING * 22 + 1 };

/* A node's name is never clipped: one longer than MAX_NODE_NAME is an
 * error at `p`, and NULL. */
static const char *checked_name(Sema *s, Pos p, const char *buf, int len, const char *has) {
  if (len <= MAX_NODE_NAME)
    return arena_strdup(s->c->arena, buf);
  error_at(s->d, p, "node '%.40s...' %s a name of %d bytes; a node's name with its indices has at "
           "most %d", buf, has, len, MAX_NODE_NAME);
  return NULL;
}

/* "norm[0][1]": the node of base name `base` in this iteration. */
static const char *node_name(Sema *s, Pos p, Sym *base, int depth) {
  if (depth == 0)
    return base->name;
  char buf[NAME_BUF];
  int n = snprintf(buf, sizeof buf, "%s", base->name);
  for (int i = 0; i < depth; i++)
    n += snprintf(buf + n, sizeof buf - (size_t)n, "[%lld]", (long long)s->index[i]);
  assert(n < (int)sizeof buf);
  return checked_name(s, p, buf, n, "has");
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
static bool access_budget(Sema *s, Pos p, int64_t accesses) {
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
static bool node_budget(Sema *s, Pos p, int64_t accesses) {
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

/* An unnamed copy, fill, while, if or switch is named after its keyword,
 * which an edge cannot spell; its later namesakes (copy_2) it can. */
static bool keyword_named(const Stmt *st) { return !st->name && !strchr(st->base->name, '_'); }

/* A kernel node's kernel and arguments; false after an error. */
static bool check_kernel_node(Sema *s, Node *n, Stmt *st) {
  Global *gl = map_get(&s->globals, st->kernel);
  /* A collective's name is the collective unless a kernel or capture
   * function has it: a constant or graph of the name does not hide it. */
  int which = gl && gl->item->kind == IT_KERNEL ? -1 : collective_index(st->kernel);
  if (which >= 0) {
    int errors = diag_errors(s->d);
    check_collective(s, n, st, which);
    return diag_errors(s->d) == errors;
  }
  if (!gl || gl->item->kind != IT_KERNEL) {
    if (gl) {
      error_at(s->d, st->callee_pos, "'%s' is not a kernel", st->kernel->name);
    } else if (!s->c->include_failed) { /* else it may be the missing file's */
      Suggest sg;
      suggest_init(&sg, st->kernel->name);
      for (size_t i = 0; i < s->globals.cap; i++) {
        const Global *k = s->globals.slots[i].value;
        if (s->globals.slots[i].key && k->item->kind == IT_KERNEL)
          suggest_try(&sg, k->item->name->name);
      }
      report_undefined(s, st->callee_pos, UNDEFINED_KERNEL, st->kernel, suggest_best(&sg));
    }
    return false;
  }
  Item *k = gl->item;
  n->kernel = k;
  if (k->capture)
    n->kind = NK_CAPTURE;
  if (st->nargs != k->nparams) {
    error_at(s->d, st->callee_pos, "%s '%s' takes %d argument%s, %d given",
             k->capture ? "capture function" : "kernel", k->name->name, k->nparams,
             plural(k->nparams), st->nargs);
    note_at(s->d, k->name_pos, "'%s' is declared here", k->name->name);
    return false;
  }
  n->nargs = k->nparams;
  n->args = arena_alloc(s->c->arena, (size_t)n->nargs * sizeof *n->args + 1);
  n->acc = arena_alloc(s->c->arena, (size_t)n->nargs * sizeof *n->acc + 1);
  bool ok = true;
  for (int i = 0; i < n->nargs; i++)
    ok &= check_kernel_arg(s, n, &k->params[i], st->args[i], &n->args[i]);
  check_launch(s, n, st);
  return ok;
}

static void add_node(Sema *s, Stmt *st) {
  if (!st->base)
    return; /* a duplicate name, reported */
  if (!node_budget(s, st->pos, st->node_kind == NK_KERNEL ? st->nargs : 2))
    return;
  Node n = {.name = node_name(s, st->pos, st->base, st->loop_depth), .pos = st->pos,
            .kind = st->node_kind, .scope = s->scope, .branch = s->branch,
            .keyword_name = st->node_kind != NK_KERNEL && keyword_named(st)};
  if (!n.name)
    return;
  switch (n.kind) {
  case NK_KERNEL:
  case NK_CAPTURE: /* which of the two, the declaration says */
  case NK_COLLECTIVE: /* or a collective's name, when no kernel has it */
    if (!check_kernel_node(s, &n, st))
      return;
    break;
  case NK_COPY:
  case NK_FILL:
    n.acc = arena_alloc(s->c->arena, 2 * sizeof *n.acc);
    check_launch(s, &n, st);
    if (n.kind == NK_COPY)
      check_copy(s, &n, st);
    else
      check_fill(s, &n, st);
    break;
  case NK_WHILE:
  case NK_IF:
  case NK_SWITCH: return; /* control statements make their nodes in walk_control */
  }
  vec_push(&s->g->nodes, n);
  vec_push(&s->subtree_end, 0);
  map_put(&s->node_index, n.name, (void *)(uintptr_t)s->g->nodes.n);
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
    Binding *b = lookup(s, root->name);
    if (b || map_get(&s->globals, root->name)) {
      error_at(s->d, root->pos, "'%s' is not a node", root->name->name);
    } else {
      Suggest sg;
      suggest_init(&sg, root->name->name);
      suggest_keys(&sg, &s->node_decls);
      report_undefined(s, root->pos, UNDEFINED_NODE, root->name, suggest_best(&sg));
    }
    return NULL;
  }
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

static void resolve_edges(Sema *s) {
  Graph *g = s->g;
  for (size_t i = 0; i < s->pending.n; i++) {
    PendingEdge *pe = &s->pending.v[i];
    uintptr_t from = (uintptr_t)map_get(&s->node_index, pe->from);
    uintptr_t to = (uintptr_t)map_get(&s->node_index, pe->to);
    if (!from)
      error_at(s->d, pe->from_pos, "no node named '%s' in graph '%s'", pe->from, g->name->name);
    if (!to)
      error_at(s->d, pe->to_pos, "no node named '%s' in graph '%s'", pe->to, g->name->name);
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

static void walk(Sema *s, Stmt **body, int n);
static void walk_control(Sema *s, Stmt *st);

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
    Binding b = {.kind = B_LOOP, .name = st->name, .pos = st->name_pos, .value = i, .valid = true};
    push_local(s, b);
    s->loops[s->depth] = st;
    s->index[s->depth++] = i;
    walk(s, st->body, st->nbody);
    s->depth--;
    pop_locals(s, mark);
  }
}

static void walk(Sema *s, Stmt **body, int n) {
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
  }
}

/* ---- graphs: control flow (language v2) ---- */

typedef VEC(Access) AccessVec;

/* One side of a comparison: a scalar, one element of a buffer, or a
 * constant.  What it reads goes into `reads`. */
static bool cond_operand(Sema *s, Expr *e, Arg *out, Type *type, bool *is_ref, Value *v,
                         AccessVec *reads) {
  if (!resolve_view(s, e, out, is_ref))
    return false;
  if (!*is_ref) {
    out->pos = e->pos;
    return eval(s, e, v);
  }
  Resource *r = &s->g->res.v[out->res];
  if (r->kind == RES_BUFFER) {
    if (r->buffer_kind == BUF_HOST || r->buffer_kind == BUF_EXTERN_HOST) {
      error_span(s->d, arg_span(e, out->pos),
                 "'%s' is a host buffer; conditions are evaluated on the device", r->name->name);
      return false;
    }
    if (out->count != 1) {
      error_span(s->d, arg_span(e, out->pos),
                 "a condition compares single values, and this is %lld elements of '%s'; "
                 "index it, as in %s[0]",
                 (long long)out->count, r->name->name, r->name->name);
      return false;
    }
  } else {
    r->memory = true; /* the condition kernel reads its slot */
  }
  *type = r->type;
  Access a = {.lo = out->kind == ARG_VIEW ? out->offset : 0, .res = out->res, .mode = ACC_READ};
  a.hi = a.lo + out->bytes;
  vec_push(reads, a);
  return true;
}

static void cond_constant(Arg *a, Type t, Value v) {
  a->kind = v.is_float ? ARG_FLOAT : ARG_INT;
  if (v.is_float)
    a->fval = v.f;
  else
    a->ival = v.i;
  a->bits = value_bits(t, v.is_float, v.i, v.f);
}

static CheckedCond *check_cond(Sema *s, Cond *c, AccessVec *reads) {
  CheckedCond *r = arena_alloc(s->c->arena, sizeof *r);
  r->kind = c->kind;
  r->cmp = c->cmp;
  if (c->kind != COND_CMP) {
    r->a = check_cond(s, c->a, reads);
    r->b = c->b ? check_cond(s, c->b, reads) : NULL;
    return r->a && (!c->b || r->b) ? r : NULL;
  }
  Type lt = TY_NONE, rt = TY_NONE;
  bool lref, rref;
  Value lv = {0}, rv = {0};
  bool ok = cond_operand(s, c->lhs, &r->lhs, &lt, &lref, &lv, reads);
  ok = cond_operand(s, c->rhs, &r->rhs, &rt, &rref, &rv, reads) && ok;
  if (!ok)
    return NULL;
  if (lref && rref) {
    if (lt != rt) {
      error_at(s->d, c->pos, "the condition compares %s with %s; both sides must have one type",
               type_name(lt), type_name(rt));
      return NULL;
    }
    r->type = lt;
  } else if (lref || rref) {
    r->type = lref ? lt : rt;
    if (!check_fits(s, expr_span(lref ? c->rhs : c->lhs), lref ? rv : lv, r->type,
                    "the other side of the comparison"))
      return NULL;
    cond_constant(lref ? &r->rhs : &r->lhs, r->type, lref ? rv : lv);
  } else {
    error_at(s->d, c->pos, "the condition compares two constants");
    return NULL;
  }
  return r;
}

/* Where a condition's text starts: its first comparison's left side. */
static Pos cond_start(const Cond *c) {
  while (c->kind != COND_CMP)
    c = c->a;
  return c->lhs->pos;
}

static int count_comparisons(const Cond *c) {
  if (c->kind == COND_CMP)
    return 1;
  return count_comparisons(c->a) + (c->b ? count_comparisons(c->b) : 0);
}

/* A switch's selector: an integer scalar. */
static int check_selector(Sema *s, Expr *e, AccessVec *reads) {
  Arg a = {0};
  bool is_ref;
  if (!resolve_view(s, e, &a, &is_ref))
    return -1;
  Resource *r = is_ref ? &s->g->res.v[a.res] : NULL;
  if (!r || r->kind != RES_SCALAR || type_is_float(r->type)) {
    error_span(s->d, expr_span(e), "switch takes an integer scalar");
    return -1;
  }
  r->memory = true;
  Access acc = {.lo = 0, .hi = r->bytes, .res = a.res, .mode = ACC_READ};
  vec_push(reads, acc);
  return a.res;
}

typedef struct CaseKey {
  int64_t value;
  int k; /* the case's index */
} CaseKey;
typedef VEC(CaseKey) CaseKeys;

static int cmp_case_key(const void *pa, const void *pb) {
  const CaseKey *a = pa, *b = pb;
  if (a->value != b->value)
    return a->value < b->value ? -1 : 1;
  return (a->k > b->k) - (a->k < b->k);
}

/* Each case value once: sorted, so that many cases cost n log n. */
static void check_case_values(Sema *s, Stmt *st, CaseKeys *keys, const int64_t *values) {
  if (!keys->n)
    return;
  qsort(keys->v, keys->n, sizeof *keys->v, cmp_case_key);
  int *first = xrealloc(NULL, (size_t)st->ncases * sizeof *first);
  for (int k = 0; k < st->ncases; k++)
    first[k] = -1;
  for (size_t i = 1; i < keys->n; i++)
    if (keys->v[i].value == keys->v[i - 1].value)
      first[keys->v[i].k] = first[keys->v[i - 1].k] >= 0 ? first[keys->v[i - 1].k]
                                                            : keys->v[i - 1].k;
  for (int k = 0; k < st->ncases; k++)
    if (first[k] >= 0) {
      error_at(s->d, st->cases[k].pos, "case %lld is given twice", (long long)values[k]);
      note_at(s->d, st->cases[first[k]].pos, "first given here");
    }
  free(first);
}

static int cmp_access(const void *pa, const void *pb) {
  const Access *a = pa, *b = pb;
  if (a->res != b->res)
    return a->res < b->res ? -1 : 1;
  if (a->mode != b->mode)
    return a->mode < b->mode ? -1 : 1;
  return (a->lo > b->lo) - (a->lo < b->lo);
}

/* A control node stands for all its bodies' accesses: per resource and
 * mode, the union of their byte ranges is what orders it, so overlapping
 * and adjacent ranges are merged, and nesting does not multiply them. */
static void merge_accesses(AccessVec *acc) {
  if (acc->n < 2)
    return;
  qsort(acc->v, acc->n, sizeof *acc->v, cmp_access);
  size_t k = 0;
  for (size_t i = 1; i < acc->n; i++) {
    Access *last = &acc->v[k], *a = &acc->v[i];
    if (a->res == last->res && a->mode == last->mode && a->lo <= last->hi) {
      if (a->hi > last->hi)
        last->hi = a->hi;
    } else {
      acc->v[++k] = *a;
    }
  }
  acc->n = k + 1;
}

/* while, if and switch are nodes in their own body, holding bodies of
 * nodes; their accesses are their bodies' and their condition's. */
static void walk_control(Sema *s, Stmt *st) {
  if (!st->base)
    return; /* a duplicate name, already reported */
  if (!node_budget(s, st->pos, 0))
    return;
  Graph *g = s->g;
  Node n = {.name = node_name(s, st->pos, st->base, st->loop_depth), .pos = st->pos,
            .scope = s->scope, .branch = s->branch, .default_body = -1, .selector = -1,
            .keyword_name = keyword_named(st), .handle_at = {.file = -1}};
  if (!n.name)
    return;
  n.kind = st->node_kind;
  if (s->scope >= 0 && g->nodes.v[s->scope].handle_at.file >= 0)
    report_control_in_handle_body(s, &g->nodes.v[s->scope], st->pos, st->node_kind);
  AccessVec acc = {0};
  Stmt ***bodies = NULL;
  int *nbody = NULL;
  if (st->kind != ST_SWITCH) {
    n.cond = check_cond(s, st->cond, &acc);
    int ncmp = count_comparisons(st->cond);
    if (ncmp > MAX_COND_CMP)
      error_at(s->d, cond_start(st->cond),
               "this condition makes %d comparisons; one condition makes at most %d", ncmp,
               MAX_COND_CMP);
    n.nbodies = st->kind == ST_IF && st->has_else ? 2 : 1;
  } else {
    n.selector = check_selector(s, st->selector, &acc);
    if (st->ncases == 0)
      error_at(s->d, st->pos,
               "this switch has no case and no default; a switch node needs at least one body");
    n.nbodies = st->ncases;
    n.case_values = arena_alloc(s->c->arena, (size_t)st->ncases * sizeof *n.case_values + 1);
  }
  if (st->kind == ST_WHILE && st->max_iter) {
    int64_t m;
    if (eval_int(s, st->max_iter, &m)) {
      if (m < 1)
        error_span(s->d, expr_span(st->max_iter), "max %lld: a loop's bound must be at least 1",
                   (long long)m);
      else
        n.max_iter = m;
    }
  }
  bodies = xrealloc(NULL, ((size_t)n.nbodies + 1) * sizeof *bodies);
  nbody = xrealloc(NULL, ((size_t)n.nbodies + 1) * sizeof *nbody);
  if (st->kind != ST_SWITCH) {
    bodies[0] = st->body, nbody[0] = st->nbody;
    if (n.nbodies == 2)
      bodies[1] = st->else_body, nbody[1] = st->nelse;
  } else {
    Resource *sel = n.selector >= 0 ? &g->res.v[n.selector] : NULL;
    CaseKeys keys = {0};
    for (int k = 0; k < st->ncases; k++) {
      CaseItem *c = &st->cases[k];
      bodies[k] = c->body, nbody[k] = c->nbody;
      if (!c->value) {
        if (n.default_body >= 0) {
          error_at(s->d, c->pos, "default is given twice");
          note_at(s->d, st->cases[n.default_body].pos, "first given here");
        }
        n.default_body = k;
        continue;
      }
      int64_t v;
      if (!eval_int(s, c->value, &v))
        continue;
      char what[300];
      if (sel) {
        snprintf(what, sizeof what, "scalar '%s'", sel->name->name);
        if (!check_fits(s, expr_span(c->value), (Value){.i = v}, sel->type, what))
          continue;
      }
      n.case_values[k] = v;
      CaseKey key = {v, k};
      vec_push(&keys, key);
    }
    check_case_values(s, st, &keys, n.case_values);
    vec_free(&keys);
  }
  vec_push(&g->nodes, n);
  vec_push(&s->subtree_end, 0);
  int32_t self = (int32_t)g->nodes.n - 1;
  map_put(&s->node_index, g->nodes.v[self].name, (void *)(uintptr_t)g->nodes.n);
  int32_t scope = s->scope, branch = s->branch;
  s->scope = self;
  s->blocks++;
  for (int b = 0; b < g->nodes.v[self].nbodies && !diag_stopped(s->d); b++) {
    size_t mark = s->locals.n;
    s->branch = b;
    walk(s, bodies[b], nbody[b]);
    pop_locals(s, mark);
  }
  s->blocks--;
  s->scope = scope;
  s->branch = branch;
  /* The bodies' nodes follow this one; a nested control node already
   * holds the accesses of its own bodies, which are skipped. */
  s->subtree_end.v[self] = (uint32_t)g->nodes.n;
  for (size_t i = (size_t)self + 1; i < g->nodes.n;) {
    const Node *m = &g->nodes.v[i];
    for (int k = 0; k < m->nacc; k++)
      vec_push(&acc, m->acc[k]);
    i = node_kinds[m->kind].bodies ? s->subtree_end.v[i] : i + 1;
  }
  merge_accesses(&acc);
  if (!access_budget(s, st->pos, (int64_t)acc.n))
    acc.n = 0; /* reported; checking stops */
  Node *np = &g->nodes.v[self];
  np->nacc = (int)acc.n;
  np->acc = arena_alloc(s->c->arena, acc.n * sizeof *np->acc + 1);
  if (acc.n)
    memcpy(np->acc, acc.v, acc.n * sizeof *np->acc);
  vec_free(&acc);
  free(bodies);
  free(nbody);
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
    if (depth == 0 && (st->kind == ST_CONST || st->kind == ST_SCALAR || st->kind == ST_BUFFER) &&
        !map_get(&s->later, st->name))
      map_put(&s->later, st->name, st);
    if (st->kind == ST_FOR)
      name_nodes(s, st->body, st->nbody, st, depth + 1, anon);
    if (st->kind == ST_WHILE || st->kind == ST_IF || st->kind == ST_SWITCH) {
      if (!st->name)
        vec_push(anon, st); /* named while, if, switch, ... */
      else
        name_node(s, st);
      name_nodes(s, st->body, st->nbody, parent, depth, anon);
      name_nodes(s, st->else_body, st->nelse, parent, depth, anon);
      for (int k = 0; k < st->ncases; k++)
        name_nodes(s, st->cases[k].body, st->cases[k].nbody, parent, depth, anon);
      continue;
    }
    if (st->kind != ST_NODE)
      continue;
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
        st->node_kind == NK_KERNEL ? st->kernel->name : node_kinds[st->node_kind].name;
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

/* A scalar a kernel writes cannot also be a by-value argument. */
static void check_scalar_values(Sema *s) {
  Graph *g = s->g;
  for (size_t i = 0; i < g->nodes.n; i++) {
    Node *n = &g->nodes.v[i];
    for (int j = 0; j < n->nargs; j++) {
      Arg *a = &n->args[j];
      if (a->kind != ARG_SCALAR_VALUE)
        continue;
      Resource *r = &g->res.v[a->res];
      if (r->written_at.file < 0)
        continue;
      error_at(s->d, a->pos,
               "scalar '%s' is written on the device, so it cannot be passed by value; "
               "pass it to a pointer parameter",
               r->name->name);
      note_at(s->d, r->written_at, "'%s' is written here", r->name->name);
    }
  }
  for (size_t r = 0; r < g->res.n; r++) {
    Resource *res = &g->res.v[r];
    if (res->kind != RES_SCALAR || res->grid_at.file < 0 || res->written_at.file < 0)
      continue;
    error_at(s->d, res->grid_at,
             "scalar '%s' is written on the device, so a grid cannot follow it: the host sets a "
             "grid before the launch",
             res->name->name);
    note_at(s->d, res->written_at, "'%s' is written here", res->name->name);
  }
}

/* ---- warnings ---- */

/* The byte ranges of one buffer written so far, sorted and disjoint; past
 * MAX_WRITTEN of them the buffer is no longer followed (no warning), which
 * keeps the pass linear in the program. */
enum { MAX_WRITTEN = 64 };
typedef struct Written {
  int64_t lo[MAX_WRITTEN], hi[MAX_WRITTEN];
  int n;
  bool given_up, warned;
} Written;

static bool covered(const Written *w, int64_t lo, int64_t hi) {
  for (int i = 0; i < w->n; i++)
    if (w->lo[i] <= lo && hi <= w->hi[i])
      return true;
  return lo >= hi;
}

static void add_written(Written *w, int64_t lo, int64_t hi) {
  int64_t l = lo, h = hi;
  int k = 0;
  for (int i = 0; i < w->n; i++) {
    if (w->hi[i] < l || w->lo[i] > h) { /* apart: kept */
      w->lo[k] = w->lo[i], w->hi[k] = w->hi[i], k++;
      continue;
    }
    l = w->lo[i] < l ? w->lo[i] : l; /* touching or overlapping: merged */
    h = w->hi[i] > h ? w->hi[i] : h;
  }
  if (k == MAX_WRITTEN) {
    w->given_up = true;
    return;
  }
  int at = k;
  while (at > 0 && w->lo[at - 1] > l)
    at--;
  memmove(&w->lo[at + 1], &w->lo[at], (size_t)(k - at) * sizeof *w->lo);
  memmove(&w->hi[at + 1], &w->hi[at], (size_t)(k - at) * sizeof *w->hi);
  w->lo[at] = l, w->hi[at] = h;
  w->n = k + 1;
}

/* The buffer an argument views, when it is an owned device buffer not
 * zeroed at create, and still followed. */
static Written *followed(const Graph *g, Written *written, const Arg *a) {
  if (a->kind != ARG_VIEW)
    return NULL;
  const Resource *r = &g->res.v[a->res];
  Written *w = &written[a->res];
  return r->buffer_kind == BUF_DEVICE && !r->zero && !w->given_up && !w->warned ? w : NULL;
}

static void read_before_write(Diag *d, const Graph *g, Written *written, const Node *n,
                              const Arg *a) {
  Written *w = followed(g, written, a);
  if (!w || covered(w, a->offset, a->offset + a->bytes))
    return;
  const Resource *r = &g->res.v[a->res];
  w->warned = true;
  warn_at(d, W_UNINITIALIZED, a->pos,
          "node '%s' reads %s '%s' before anything writes %s: it holds what the memory held "
          "before; zero it at create with '= 0', or write it first",
          n->name, w->n ? "bytes of buffer" : "buffer", r->name->name, w->n ? "them" : "it");
  note_at(d, r->pos, "'%s' is declared here", r->name->name);
}

static void write_before_read(const Graph *g, Written *written, const Arg *a) {
  Written *w = followed(g, written, a);
  if (w)
    add_written(w, a->offset, a->offset + a->bytes);
}

/* The operands of a condition that are elements of buffers. */
static void cond_reads(Diag *d, const Graph *g, Written *written, const Node *n,
                       const CheckedCond *c) {
  if (!c)
    return;
  if (c->kind != COND_CMP) {
    cond_reads(d, g, written, n, c->a);
    cond_reads(d, g, written, n, c->b);
    return;
  }
  read_before_write(d, g, written, n, &c->lhs);
  read_before_write(d, g, written, n, &c->rhs);
}

/* The nodes in an order they can run in: as written in a plain graph; in
 * an explicit graph, a topological order of its written edges, a control
 * node before its bodies' nodes, ties in written order (a cycle, which
 * order.c reports, leaves the nodes on it out). */
static uint32_t *run_order(const Graph *g) {
  size_t n = g->nodes.n, k = 0;
  uint32_t *order = xrealloc(NULL, (n + 1) * sizeof *order);
  if (!g->is_explicit) {
    for (size_t v = 0; v < n; v++)
      order[v] = (uint32_t)v;
    return order;
  }
  uint32_t *indeg = xrealloc(NULL, (n + 1) * sizeof *indeg);
  uint32_t *start = xrealloc(NULL, (n + 2) * sizeof *start);
  uint32_t *succ = xrealloc(NULL, (g->written.n + n + 1) * sizeof *succ);
  memset(indeg, 0, (n + 1) * sizeof *indeg);
  memset(start, 0, (n + 2) * sizeof *start);
  for (size_t e = 0; e < g->written.n; e++)
    start[g->written.v[e].from + 1]++, indeg[g->written.v[e].to]++;
  for (size_t v = 0; v < n; v++)
    if (g->nodes.v[v].scope >= 0)
      start[g->nodes.v[v].scope + 1]++, indeg[v]++;
  for (size_t v = 0; v < n; v++)
    start[v + 1] += start[v];
  uint32_t *fill = xrealloc(NULL, (n + 1) * sizeof *fill);
  memcpy(fill, start, (n + 1) * sizeof *fill);
  for (size_t e = 0; e < g->written.n; e++)
    succ[fill[g->written.v[e].from]++] = g->written.v[e].to;
  for (size_t v = 0; v < n; v++)
    if (g->nodes.v[v].scope >= 0)
      succ[fill[g->nodes.v[v].scope]++] = (uint32_t)v;
  for (size_t v = 0; v < n; v++)
    if (!indeg[v])
      order[k++] = (uint32_t)v;
  for (size_t i = 0; i < k; i++)
    for (uint32_t j = start[order[i]]; j < start[order[i] + 1]; j++)
      if (!--indeg[succ[j]])
        order[k++] = succ[j];
  for (size_t v = 0; v < n; v++) /* on a cycle: last, in written order */
    if (indeg[v])
      order[k++] = (uint32_t)v;
  free(fill);
  free(succ);
  free(start);
  free(indeg);
  return order;
}

/* Each node's reads of an owned device buffer (through `in` parameters,
 * copies and conditions), in an order the nodes run in, against the bytes
 * that nodes before it wrote.  A node reads before it writes. */
static void warn_uninitialized(Diag *d, const Graph *g) {
  Written *written = xrealloc(NULL, (g->res.n + 1) * sizeof *written);
  memset(written, 0, (g->res.n + 1) * sizeof *written);
  uint32_t *order = run_order(g);
  for (size_t i = 0; i < g->nodes.n; i++) {
    const Node *n = &g->nodes.v[order[i]];
    for (int pass = 0; pass < 2; pass++) {
      bool reads = pass == 0;
      switch (n->kind) {
      case NK_KERNEL:
      case NK_CAPTURE:
        /* An inout parameter may be written before it is read (a
         * workspace), as C compilers take a pointer that is not const:
         * only `in` reads. */
        for (int j = 0; j < n->nargs; j++) {
          Mode m = n->kernel->params[j].mode;
          if (reads && m == MODE_IN)
            read_before_write(d, g, written, n, &n->args[j]);
          if (!reads && (m & MODE_OUT))
            write_before_read(g, written, &n->args[j]);
        }
        break;
      case NK_COPY:
      case NK_COLLECTIVE: /* in place, args[1] is args[0]: read, then written */
        if (reads)
          read_before_write(d, g, written, n, &n->args[1]);
        else
          write_before_read(g, written, &n->args[0]);
        break;
      case NK_FILL:
        if (!reads)
          write_before_read(g, written, &n->args[0]);
        break;
      case NK_WHILE:
      case NK_IF:
        if (reads)
          cond_reads(d, g, written, n, n->cond);
        break;
      case NK_SWITCH: break; /* its selector is a scalar */
      }
    }
  }
  free(order);
  free(written);
}

/* A kernel node whose block is not a whole number of warps. */
static void warn_block_size(Diag *d, const Graph *g) {
  for (size_t v = 0; v < g->nodes.n; v++) {
    const Node *n = &g->nodes.v[v];
    int64_t threads = n->block[0] * n->block[1] * n->block[2];
    if (n->kind == NK_KERNEL && threads % 32)
      warn_at(d, W_BLOCK_SIZE, n->block_pos,
              "a block of %lld thread%s is not a multiple of the warp size, 32: its last warp "
              "runs %lld of its 32 lanes",
              (long long)threads, plural(threads), (long long)(threads % 32));
  }
}

/* A buffer or scalar no node, condition or switch reaches. */
static void warn_unused(Diag *d, const Graph *g) {
  bool *used = xrealloc(NULL, g->res.n + 1);
  memset(used, 0, g->res.n + 1);
  for (size_t v = 0; v < g->nodes.n; v++)
    for (int k = 0; k < g->nodes.v[v].nacc; k++)
      used[g->nodes.v[v].acc[k].res] = true;
  for (size_t r = 0; r < g->res.n; r++)
    used[r] |= g->res.v[r].kind == RES_SCALAR && g->res.v[r].grid_at.file >= 0;
  for (size_t r = 0; r < g->res.n; r++)
    if (!used[r])
      warn_at(d, W_UNUSED, g->res.v[r].pos, "%s '%s' is never used",
              g->res.v[r].kind == RES_SCALAR ? "scalar" : "buffer", g->res.v[r].name->name);
  free(used);
}

void warn_program(Compiler *c, const Program *p) {
  for (size_t i = 0; i < p->graphs.n; i++) {
    warn_unused(c->diag, p->graphs.v[i]);
    warn_uninitialized(c->diag, p->graphs.v[i]);
    warn_block_size(c->diag, p->graphs.v[i]);
  }
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
  name_nodes(s, it->body, it->nbody, NULL, 0, &anon);
  name_anonymous(s, &anon);
  vec_free(&anon);
  walk(s, it->body, it->nbody);
  resolve_edges(s);
  check_scalar_values(s);
  map_free(&s->names);
  map_free(&s->later);
  map_free(&s->node_decls);
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
  Sema s = {.c = c, .d = c->diag, .node_index = {.by_string = true}};
  for (size_t i = 0; i < c->items.n; i++)
    if (c->items.v[i]->kind == IT_CONST && !map_get(&s.consts, c->items.v[i]->name))
      map_put(&s.consts, c->items.v[i]->name, c->items.v[i]);
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
  free(p);
}
