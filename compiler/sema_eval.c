/* sema_eval.c: constant expressions (the values of constants, sizes,
 * shapes and launch extents) and whether a value fits its type. */
#include "sema_internal.h"

#include <assert.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* An integer scalar without `max` where a bound is needed (`what`): the
 * fix-it puts ` max N` after its type. */
void no_bound(Sema *s, Expr *e, const Resource *r, const char *what) {
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
  diag_fix(s->d, (Span){.at = at, .lo = at, .hi = at}, " max N");
}

bool eval_int(Sema *s, Expr *e, int64_t *out) {
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
  Binding *b = lookup_use(s, e);
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

bool eval(Sema *s, Expr *e, Value *out) {
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
      Binding *b = lookup_use(s, root);
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
  int digits = shortest_float(buf, sizeof buf, v);
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

bool value_fits(Value v, Type t) {
  if (!v.is_float)
    return int_fits(t, v.i);
  if (!type_is_float(t))
    return false;
  uint64_t sign = (uint64_t)1 << (8 * type_size(t) - 1);
  uint64_t bits = value_bits(t, true, 0, v.f) & ~sign;
  return bits != float_inf_bits(t) && (bits != 0 || v.f == 0);
}

/* Checks that a constant fits an element type; `what` names the use.  A
 * floating-point value is rounded to the type to nearest even, as the
 * generated code stores it: it must neither overflow to infinity nor,
 * unless it is zero, underflow to zero. */
bool check_fits(Sema *s, Span p, Value v, Type t, const char *what) {
  if (value_fits(v, t))
    return true;
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
const char *shape_text(Sema *s, Type t, const int64_t *dims, int ndims) {
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
