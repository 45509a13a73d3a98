/* lsp_query.c: `cgc lsp`'s answers from a document's analysis: what a
 * name at a place is (sema's record of it, Program.uses), hover,
 * definition, completion, document symbols, formatting and code actions. */
#include "lsp_internal.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- what a name at a place is ---- */

/* The top-level item of at's file that `at` lies in, or NULL. */
static Item *item_at(Analysis *a, Pos at) {
  Item *best = NULL;
  int file = pos_file(a->c.diag, at);
  for (size_t i = 0; i < a->c.items.n; i++) {
    Item *it = a->c.items.v[i];
    if (pos_file(a->c.diag, it->pos) == file && it->pos.off <= at.off &&
        (!best || best->pos.off <= it->pos.off))
      best = it;
  }
  return best;
}

typedef void (*StmtFn)(Stmt *st, void *ctx);

static void each_stmt(Stmt **body, int n, StmtFn fn, void *ctx) {
  for (int i = 0; i < n; i++) {
    Stmt *st = body[i];
    if (!st)
      continue;
    fn(st, ctx);
    switch (st->kind) {
    case ST_FOR:
    case ST_WHILE: each_stmt(st->body, st->nbody, fn, ctx); break;
    case ST_IF:
      each_stmt(st->body, st->nbody, fn, ctx);
      each_stmt(st->else_body, st->nelse, fn, ctx);
      break;
    case ST_SWITCH:
      for (int k = 0; k < st->ncases; k++)
        each_stmt(st->cases[k].body, st->cases[k].nbody, fn, ctx);
      break;
    case ST_CONST:
    case ST_SCALAR:
    case ST_BUFFER:
    case ST_NODE:
    case ST_EDGE: break;
    }
  }
}

static bool pos_before(Pos a, Pos b) { return a.off < b.off; }

/* The first statement of body[0 .. n), or NULL. */
static Stmt *first_stmt(Stmt **body, int n) {
  for (int i = 0; i < n; i++)
    if (body[i])
      return body[i];
  return NULL;
}

static void each_visible(Stmt **body, int n, Pos at, StmtFn fn, void *ctx);

/* The declarations inside compound statement st, which holds `at`, that
 * are visible there: st's own for variable, then those of the body (of an
 * if's two, a switch's cases) that holds it. */
static void visible_inside(Stmt *st, Pos at, StmtFn fn, void *ctx) {
  Stmt **body = st->body;
  int n = st->nbody;
  if (st->kind == ST_FOR)
    fn(st, ctx);
  if (st->kind == ST_IF && first_stmt(st->else_body, st->nelse) &&
      !pos_before(at, first_stmt(st->else_body, st->nelse)->pos))
    body = st->else_body, n = st->nelse;
  if (st->kind == ST_SWITCH) {
    body = NULL, n = 0;
    for (int k = 0; k < st->ncases; k++) {
      Stmt *f = first_stmt(st->cases[k].body, st->cases[k].nbody);
      if (f && !pos_before(at, f->pos))
        body = st->cases[k].body, n = st->cases[k].nbody;
    }
  }
  each_visible(body, n, at, fn, ctx);
}

/* Calls fn on each declaration (buffer, scalar, const, for variable) that
 * a name typed at `at` in body[0 .. n) could use, outer blocks first and
 * each block's in order (completion offers them).  A statement holds the
 * text from its start to the next one's. */
static void each_visible(Stmt **body, int n, Pos at, StmtFn fn, void *ctx) {
  for (int i = 0; i < n; i++) {
    Stmt *st = body[i];
    if (!st)
      continue;
    if (pos_before(at, st->pos))
      break;
    if (st->kind == ST_CONST || st->kind == ST_SCALAR || st->kind == ST_BUFFER)
      fn(st, ctx);
    Stmt *next = first_stmt(body + i + 1, n - i - 1);
    bool compound = st->kind == ST_FOR || st->kind == ST_WHILE || st->kind == ST_IF ||
                    st->kind == ST_SWITCH;
    if (compound && (!next || pos_before(at, next->pos)))
      visible_inside(st, at, fn, ctx);
  }
}

/* What the name at `at` stands for, as sema resolved it (Program.uses:
 * the use there, or the declaration there), or NULL: sema met no name
 * there. */
static const Use *use_at(Analysis *a, Pos at) {
  for (size_t i = 0; a->p && i < a->p->uses.n; i++)
    if (a->p->uses.v[i].at.off == at.off)
      return &a->p->uses.v[i];
  return NULL;
}

/* Where the declaration u stands for has its name. */
static Pos decl_pos(const Use *u) {
  switch (u->kind) {
  case DECL_ITEM: return u->item->name_pos;
  case DECL_STMT: return u->stmt->name_pos;
  case DECL_PARAM: return u->param->pos;
  case DECL_VARIANT: return u->item->variant_pos;
  case DECL_NONE: break;
  }
  return NO_POS;
}

/* The identifier at byte `off` of the document: [*lo, *hi), false if none. */
static bool word_at(const char *t, size_t n, size_t off, size_t *lo, size_t *hi) {
  size_t i = off, j = off;
  while (i > 0 && ident_char(t[i - 1]))
    i--;
  while (j < n && ident_char(t[j]))
    j++;
  if (i == j || isdigit((unsigned char)t[i]) || j - i > MAX_IDENT_LEN)
    return false;
  *lo = i, *hi = j;
  return true;
}

/* The position of byte `off` of the document an analysis read. */
static Pos doc_pos(Analysis *a, size_t off) {
  size_t n = source_get(a->c.diag, a->file)->len;
  return source_pos(a->c.diag, a->file, off < n ? off : n);
}

/* Whether sema made graph g of item it: it itself, or one of its variants
 * (copies of it, which share its list of values). */
static bool graph_is_of(const Graph *g, const Item *it) {
  return g->item == it || (it->variants && g->item->variants == it->variants);
}

/* The Graph sema made of item it (its first variant), or NULL. */
static Graph *graph_of(Analysis *a, const Item *it) {
  for (size_t i = 0; a->p && i < a->p->graphs.n; i++)
    if (graph_is_of(a->p->graphs.v[i], it))
      return a->p->graphs.v[i];
  return NULL;
}

/* The source text of an expression. */
static void put_expr(CharVec *out, Analysis *a, const Expr *e) {
  if (!e || !pos_set(e->pos))
    return;
  const Source *src = source_get(a->c.diag, pos_file(a->c.diag, e->pos));
  Span sp = expr_span(e);
  size_t i = pos_offset(a->c.diag, sp.lo);
  size_t j = pos_offset(a->c.diag, sp.hi);
  if (j <= i)
    j = i, (void)word_at(src->text, src->len, i, &i, &j);
  for (size_t k = i; k < j; k++)
    vec_push(out, src->text[k] == '\n' || src->text[k] == '\r' ? ' ' : src->text[k]);
}

static void put(CharVec *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(CharVec *out, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n <= 0)
    return;
  size_t at = out->n;
  for (int i = 0; i <= n; i++)
    vec_push(out, 0);
  va_start(ap, fmt);
  vsnprintf(out->v + at, (size_t)n + 1, fmt, ap);
  va_end(ap);
  out->n = at + (size_t)n;
}

static const char *const mode_names[] = {"", "in ", "out ", "inout "};

static void put_params(CharVec *out, const Item *k) {
  put(out, "(");
  for (int i = 0; i < k->nparams; i++) {
    const Param *p = &k->params[i];
    put(out, "%s%s%s: %s%s", i ? ", " : "", mode_names[p->mode & 3], p->name ? p->name->name : "?",
        type_name(p->type), p->pointer ? "*" : "");
  }
  put(out, ")");
}

/* A kernel's or capture function's declaration, as written. */
static void put_kernel(CharVec *out, const Item *k) {
  put(out, "%s%s %s", k->pdl ? "pdl " : "", k->capture ? "capture" : "kernel", k->name->name);
  if (k->template_name)
    put(out, " = %s<%s>", k->template_name->name, k->template_args ? k->template_args : "");
  put_params(out, k);
  if (k->from)
    put(out, " from \"%s\"", k->from);
  if (k->symbol)
    put(out, " symbol \"%s\"", k->symbol);
}

static void put_extents(CharVec *out, const char *what, const int64_t v[3]) {
  int n = v[2] != 1 ? 3 : v[1] != 1 ? 2 : 1;
  put(out, " %s(", what);
  for (int i = 0; i < n; i++)
    put(out, "%s%lld", i ? ", " : "", (long long)v[i]);
  put(out, ")");
}

static const char *const buffer_words[] = {[BUF_DEVICE] = "buffer",
                                           [BUF_EXTERN] = "extern buffer",
                                           [BUF_HOST] = "host buffer",
                                           [BUF_EXTERN_HOST] = "extern host buffer"};

static void put_resource(CharVec *out, Analysis *a, const Graph *g, Stmt *st) {
  const Resource *r = NULL;
  for (size_t i = 0; g && i < g->res.n; i++)
    if (g->res.v[i].name == st->name)
      r = &g->res.v[i];
  if (st->kind == ST_BUFFER) {
    put(out, "```cgraph\n%s %s: %s[", buffer_words[st->buffer_kind & 3], st->name->name,
        type_name(st->type));
    if (r) {
      for (int i = 0; i < r->ndims; i++)
        put(out, "%s%lld", i ? ", " : "", (long long)r->dims[i]);
    } else {
      for (int i = 0; i < st->ndims; i++) {
        put(out, "%s", i ? ", " : "");
        put_expr(out, a, st->dims[i]);
      }
    }
    put(out, "]%s\n```\n", st->value ? " = 0" : "");
    if (r)
      put(out, "%lld elements of %d bytes: %lld bytes%s", (long long)r->count, type_size(r->type),
          (long long)r->bytes,
          r->buffer_kind == BUF_EXTERN || r->buffer_kind == BUF_EXTERN_HOST
              ? ", the caller's memory"
              : ", owned by the graph");
  } else {
    put(out, "```cgraph\nscalar %s: %s", st->name->name, type_name(st->type));
    if (st->value) {
      put(out, " = ");
      put_expr(out, a, st->value);
    }
    put(out, "\n```\n");
    if (r)
      put(out, "%d bytes, %s", type_size(r->type),
          r->memory ? "in a device slot (a pointer argument, copy or fill reaches it)"
                    : "passed by value");
  }
}

static void put_edge_reason(CharVec *out, const Graph *g, const Edge *e) {
  if (e->written)
    put(out, "written");
  else if (e->res < 0)
    put(out, "%s", edge_reason(e));
  else
    put(out, "%s: %s", g->res.v[e->res].name->name, edge_reason(e));
}

/* A node statement: its launch, and the nodes it makes with their edges. */
static void put_node(CharVec *out, Analysis *a, const Item *in, Stmt *st) {
  const char *w = (st->name ? st->name : st->base)->name; /* an unnamed one: sema's name */
  size_t wl = strlen(w);
  put(out, "```cgraph\nnode %s = ", w);
  if (st->kind == ST_NODE && node_kinds[st->node_kind].called && st->kernel)
    put(out, "%s(...)", st->kernel->name);
  else
    put(out, "%s", node_kinds[st->node_kind].name);
  put(out, "\n```\n");
  if (!graph_of(a, in)) {
    put(out, "(the program has errors: no graph was made)");
    return;
  }
  int shown = 0, count = 0;
  /* Each graph made of the item: a graph with variants has one a value. */
  for (size_t gi = 0; gi < a->p->graphs.n; gi++) {
    const Graph *g = a->p->graphs.v[gi];
    if (!graph_is_of(g, in))
      continue;
    for (size_t i = 0; i < g->nodes.n; i++) {
      const Node *n = &g->nodes.v[i];
      if (strncmp(n->name, w, wl) || (n->name[wl] && n->name[wl] != '['))
        continue;
      if (count++ >= 4)
        continue;
      shown++;
      put(out, "%s**%s**", shown > 1 ? "\n\n" : "", n->name);
      if (in->variants)
        put(out, " in `%s`", g->name->name);
      put(out, ": %s", node_kinds[n->kind].name);
      if (n->kernel)
        put(out, " `%s`", n->kernel->name->name);
      if (node_kinds[n->kind].launch) {
        const Launch *l = n->launch;
        put_extents(out, "grid", l->grid);
        put_extents(out, "block", l->block);
        if (l->smem)
          put(out, " smem(%lld)", (long long)l->smem);
        if (l->has_cluster)
          put_extents(out, "cluster", l->cluster);
        if (l->has_priority)
          put(out, " priority(%lld)", (long long)l->priority);
      }
      bool ordered = diag_errors(a->c.diag) == 0;
      if (!ordered) {
        put(out, "\n\n(edges are inferred once the program has no errors)");
        continue;
      }
      for (int dir = 0; dir < 2; dir++) {
        int listed = 0;
        for (size_t e = 0; e < g->edges.n; e++) {
          const Edge *ed = &g->edges.v[e];
          if ((dir ? ed->from : ed->to) != i)
            continue;
          if (!listed++)
            put(out, "\n\n%s:", dir ? "before" : "after");
          if (listed > 8)
            continue;
          put(out, "\n- %s (", g->nodes.v[dir ? ed->to : ed->from].name);
          put_edge_reason(out, g, ed);
          put(out, ")");
        }
        if (listed > 8)
          put(out, "\n- and %d more", listed - 8);
      }
    }
  }
  if (count > shown)
    put(out, "\n\n%d nodes in all", count);
  if (!count && !diag_errors(a->c.diag))
    put(out, "no node is made of it: a `for` loop around it runs no time, or an `if` of "
             "constants around it takes its other body");
}

static void put_const(CharVec *out, Analysis *a, const char *name, const Expr *value) {
  put(out, "```cgraph\nconst %s = ", name);
  put_expr(out, a, value);
  put(out, "\n```");
}

/* A type's name. */
static void put_type_word(CharVec *out, const char *word) {
  for (Type t = TY_I8; t <= TY_F64; t++)
    if (!strcmp(type_name(t), word))
      put(out, "```cgraph\n%s\n```\n%s, %d %s", word,
          type_is_float(t)    ? "floating point"
          : type_is_signed(t) ? "signed integer"
                              : "unsigned integer",
          type_size(t), type_size(t) == 1 ? "byte" : "bytes");
  if (!strcmp(word, type_name(TY_HANDLE)))
    put(out, "```cgraph\nhandle\n```\na kernel parameter's type: a while's conditional handle "
             "(cudaGraphConditionalHandle, 8 bytes), which a kernel of the loop's body passes "
             "to cudaGraphSetConditional");
}

/* A top-level constant, kernel or graph. */
static void put_item(CharVec *out, Analysis *a, Item *it) {
  if (it->kind == IT_KERNEL) {
    put(out, "```cgraph\n");
    put_kernel(out, it);
    put(out, "\n```");
  } else if (it->kind == IT_CONST) {
    put_const(out, a, it->name->name, it->value);
  } else if (it->kind == IT_GRAPH) {
    put(out, "```cgraph\n%sgraph %s\n```", it->is_explicit ? "explicit " : "", it->name->name);
    const Graph *g = graph_of(a, it);
    if (g)
      put(out, "\n%zu nodes, %zu buffers and scalars", g->nodes.n, g->res.n);
    if (g && !diag_errors(a->c.diag))
      put(out, ", %zu edges", g->edges.n);
  }
}

/* A graph's declaration. */
static void put_stmt(CharVec *out, Analysis *a, Item *in, Stmt *st) {
  const Graph *g = graph_of(a, in);
  switch (st->kind) {
  case ST_BUFFER:
  case ST_SCALAR: put_resource(out, a, g, st); break;
  case ST_CONST: put_const(out, a, st->name->name, st->value); break;
  case ST_FOR:
    put(out, "```cgraph\nfor %s in ", st->name->name);
    put_expr(out, a, st->lo);
    put(out, " .. ");
    put_expr(out, a, st->hi);
    put(out, "\n```");
    break;
  case ST_NODE:
  case ST_WHILE:
  case ST_IF:
  case ST_SWITCH: put_node(out, a, in, st); break;
  case ST_EDGE: break;
  }
}

/* What the word stands for (u; NULL: it names no declaration). */
static cJSON *hover_text(Analysis *a, const Use *u, const char *word) {
  CharVec out = {0};
  switch (u ? u->kind : DECL_NONE) {
  case DECL_NONE: put_type_word(&out, word); break;
  case DECL_ITEM: put_item(&out, a, u->item); break;
  case DECL_PARAM:
    put(&out, "```cgraph\n%s%s: %s%s\n```\nparameter of ", mode_names[u->param->mode & 3],
        u->param->name->name, type_name(u->param->type), u->param->pointer ? "*" : "");
    put(&out, "`");
    put_kernel(&out, u->item);
    put(&out, "`");
    break;
  case DECL_VARIANT:
    put(&out, "```cgraph\ngraph %s for %s in [...]\n```\nthe variant's value", u->item->name->name,
        word);
    break;
  case DECL_STMT: put_stmt(&out, a, u->item, u->stmt); break;
  }
  if (!out.n) {
    vec_free(&out);
    return NULL;
  }
  vec_push(&out, 0);
  cJSON *h = cJSON_CreateObject(), *c = cJSON_CreateObject();
  cJSON_AddStringToObject(c, "kind", "markdown");
  cJSON_AddStringToObject(c, "value", out.v);
  cJSON_AddItemToObject(h, "contents", c);
  vec_free(&out);
  return h;
}

/* params.textDocument.uri, an open document; false after replying. */
static bool get_doc(Request *r) {
  const cJSON *td = cJSON_GetObjectItemCaseSensitive(r->params, "textDocument");
  const char *uri = json_str(td, "uri");
  if (!uri) {
    reply_error(r->id, RPC_INVALID_PARAMS, "params.textDocument.uri must be a string");
    return false;
  }
  r->doc = find_doc(r->s, uri);
  if (!r->doc) {
    reply_error(r->id, RPC_REQUEST_FAILED, "'%s' is not open", uri);
    return false;
  }
  return true;
}

bool get_int(const cJSON *o, const char *key, int64_t *v) {
  const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, key);
  if (!cJSON_IsNumber(j) || j->valuedouble < 0 || j->valuedouble > 2147483647.0 ||
      j->valuedouble != (double)(int64_t)j->valuedouble)
    return false;
  *v = (int64_t)j->valuedouble;
  return true;
}

/* params.position as a byte offset; false after replying. */
static bool get_position(Request *r) {
  if (!get_doc(r))
    return false;
  const cJSON *p = cJSON_GetObjectItemCaseSensitive(r->params, "position");
  int64_t line, ch;
  if (!get_int(p, "line", &line) || !get_int(p, "character", &ch)) {
    reply_error(r->id, RPC_INVALID_PARAMS,
                "params.position must have line and character, non-negative integers");
    return false;
  }
  const char *t = r->doc->text;
  size_t n = r->doc->len, ls = line_offset(r->s, t, n, line);
  r->off = byte_at(r->s, t, ls, line_end(t, n, ls), ch);
  return true;
}

static cJSON *location(const char *uri, cJSON *range) {
  cJSON *l = cJSON_CreateObject();
  cJSON_AddStringToObject(l, "uri", uri);
  cJSON_AddItemToObject(l, "range", range);
  return l;
}

/* The name under the request's position, [*lo, *hi) of the document, and
 * what sema recorded it stands for (NULL: nothing); false, after replying
 * null, where there is no analysis or no name there. */
static bool name_at(Request *r, size_t *lo, size_t *hi, const Use **u) {
  Doc *d = r->doc;
  if (!d->an || !word_at(d->text, d->len, r->off, lo, hi)) {
    reply(r->id, NULL);
    return false;
  }
  *u = use_at(d->an, doc_pos(d->an, *lo));
  return true;
}

void on_hover(Request *r) {
  size_t lo, hi;
  const Use *u;
  if (!get_position(r) || !name_at(r, &lo, &hi, &u))
    return;
  Doc *d = r->doc;
  char word[MAX_IDENT_LEN + 1];
  memcpy(word, d->text + lo, hi - lo);
  word[hi - lo] = 0;
  cJSON *h = hover_text(d->an, u, word);
  if (h)
    cJSON_AddItemToObject(
        h, "range",
        lsp_range(lsp_pos_at(r->s, d->text, d->len, lo), lsp_pos_at(r->s, d->text, d->len, hi)));
  reply(r->id, h);
}

/* The location of a name declared at p, `len` bytes long. */
static cJSON *decl_location(Server *s, Doc *d, Pos p, size_t len) {
  Analysis *a = d->an;
  int file = pos_file(a->c.diag, p), k = file_index(a, file);
  if (k < 0)
    return NULL;
  const Source *src = source_get(a->c.diag, file);
  size_t lo = pos_offset(a->c.diag, p);
  CharVec uri = {0};
  file_uri(s, d, a, k, &uri);
  cJSON *l = location(uri.v, lsp_range(lsp_pos_at(s, src->text, src->len, lo),
                                       lsp_pos_at(s, src->text, src->len, lo + len)));
  vec_free(&uri);
  return l;
}

/* On the path of `include "PATH"`: the file it reads. */
static cJSON *include_target(Server *s, Doc *d, size_t off) {
  size_t ls = off, le = line_end(d->text, d->len, off);
  while (ls > 0 && d->text[ls - 1] != '\n' && d->text[ls - 1] != '\r')
    ls--;
  const char *t = d->text + ls;
  size_t n = le - ls, i = 0;
  while (i < n && (t[i] == ' ' || t[i] == '\t'))
    i++;
  if (n - i < 8 || strncmp(t + i, "include", 7))
    return NULL;
  i += 7;
  while (i < n && (t[i] == ' ' || t[i] == '\t'))
    i++;
  if (i >= n || t[i] != '"')
    return NULL;
  size_t q = i + 1, e = q;
  while (e < n && t[e] != '"')
    e++;
  if (e >= n || off < ls + i || off > ls + e)
    return NULL;
  char *name = arena_strndup(d->an->c.arena, t + q, e - q);
  char *path = find_file(&d->an->c, d->path, name);
  char *real = path ? realpath(path, NULL) : NULL;
  if (!real)
    return NULL;
  CharVec uri = {0};
  Doc *open = find_doc_real(s, real);
  path_uri(&uri, real);
  cJSON *zero = cJSON_CreateObject();
  cJSON_AddNumberToObject(zero, "line", 0);
  cJSON_AddNumberToObject(zero, "character", 0);
  cJSON *l = location(open ? open->uri : uri.v, lsp_range(zero, cJSON_Duplicate(zero, true)));
  vec_free(&uri);
  free(real);
  return l;
}

void on_definition(Request *r) {
  if (!get_position(r))
    return;
  Doc *d = r->doc;
  cJSON *inc = d->an ? include_target(r->s, d, r->off) : NULL;
  if (inc) {
    reply(r->id, inc);
    return;
  }
  size_t lo, hi;
  const Use *u;
  if (!name_at(r, &lo, &hi, &u))
    return;
  reply(r->id, u ? decl_location(r->s, d, decl_pos(u), hi - lo) : NULL);
}

/* ---- completion ---- */

enum {
  CK_FUNCTION = 3,
  CK_VARIABLE = 6,
  CK_CLASS = 7,
  CK_MODULE = 9,
  CK_KEYWORD = 14,
  CK_CONSTANT = 21,
  CK_EVENT = 23,
  CK_TYPE = 25,
};

/* Where the cursor is, for what to offer there: anywhere (everything);
 * inside grid(, block(, smem(, cluster(, priority(, cdiv(, min( or an
 * index [...]: integers (constants, integer scalars, loop variables);
 * inside a call's argument list: what the parameter takes (param, or
 * NULL for copy and fill: any buffer, scalar or constant). */
typedef enum Where { WH_ANY, WH_INTEGER, WH_ARGUMENT } Where;

typedef struct Completion {
  cJSON *list;
  Map seen;
  const char *prefix;
  size_t nprefix;
  Analysis *a;
  Where where;
  const Param *param;
} Completion;

static bool integer_type(Type t) { return t >= TY_I8 && t <= TY_U64; }

/* Whether what the context asks for takes a value (a constant, a loop
 * variable): integers, and value parameters. */
static bool wants_values(const Completion *c) {
  return c->where != WH_ARGUMENT || !c->param || !c->param->pointer;
}

/* Whether a scalar of type t fits: an integer where integers go, the
 * parameter's type in an argument (a pointer parameter takes a scalar
 * too, by its address). */
static bool scalar_fits(const Completion *c, Type t) {
  if (c->where == WH_INTEGER)
    return integer_type(t);
  return c->where == WH_ANY || !c->param || c->param->type == t;
}

static bool buffer_fits(const Completion *c, Type t) {
  return c->where == WH_ANY ||
         (c->where == WH_ARGUMENT && (!c->param || (c->param->pointer && c->param->type == t)));
}

static const char *const integer_calls[] = {"grid",     "block", "smem", "cluster",
                                            "priority", "cdiv",  "min"};

/* The call or index the offset `lo` is inside of, looking back through
 * the statement: sets c->where and c->param. */
static void find_where(Completion *c, const char *t, size_t lo) {
  int depth = 0;
  size_t commas = 0, i = lo;
  for (size_t seen = 0; i > 0 && seen < 4096; i--, seen++) {
    char ch = t[i - 1];
    if (ch == ')' || ch == ']') {
      depth++;
    } else if (ch == '(' || ch == '[') {
      if (depth == 0)
        break;
      depth--;
    } else if (ch == ',' && depth == 0) {
      commas++;
    } else if (ch == ';' || ch == '{' || ch == '}') {
      return;
    }
  }
  if (i == 0 || (t[i - 1] != '(' && t[i - 1] != '['))
    return;
  if (t[i - 1] == '[') {
    c->where = WH_INTEGER;
    return;
  }
  size_t end = i - 1;
  while (end > 0 && (t[end - 1] == ' ' || t[end - 1] == '\t'))
    end--;
  size_t start = end;
  while (start > 0 && ident_char(t[start - 1]))
    start--;
  size_t n = end - start;
  if (!n)
    return;
  for (size_t k = 0; k < sizeof integer_calls / sizeof *integer_calls; k++)
    if (strlen(integer_calls[k]) == n && !strncmp(t + start, integer_calls[k], n)) {
      c->where = WH_INTEGER;
      return;
    }
  if ((n == 4 && !strncmp(t + start, "copy", 4)) || (n == 4 && !strncmp(t + start, "fill", 4))) {
    c->where = WH_ARGUMENT;
    return;
  }
  for (size_t k = 0; c->a && k < c->a->c.items.n; k++) {
    const Item *it = c->a->c.items.v[k];
    if (it->kind == IT_KERNEL && it->name && strlen(it->name->name) == n &&
        !strncmp(t + start, it->name->name, n)) {
      c->where = WH_ARGUMENT;
      c->param = commas < (size_t)it->nparams ? &it->params[commas] : NULL;
      return;
    }
  }
}

static void complete(Completion *c, const char *label, int kind, const char *detail) {
  if (strncmp(label, c->prefix, c->nprefix) || map_get(&c->seen, label))
    return;
  map_put(&c->seen, label, (void *)label);
  cJSON *item = cJSON_CreateObject();
  cJSON_AddStringToObject(item, "label", label);
  cJSON_AddNumberToObject(item, "kind", kind);
  if (detail)
    cJSON_AddStringToObject(item, "detail", detail);
  cJSON_AddItemToArray(c->list, item);
}

static void complete_stmt(Stmt *st, void *ctx) {
  Completion *c = ctx;
  CharVec detail = {0};
  if (!st->name)
    return;
  switch (st->kind) {
  case ST_CONST:
    if (wants_values(c))
      complete(c, st->name->name, CK_CONSTANT, "const");
    break;
  case ST_SCALAR:
    if (!scalar_fits(c, st->type))
      break;
    put(&detail, "scalar: %s", type_name(st->type));
    vec_push(&detail, 0);
    complete(c, st->name->name, CK_VARIABLE, detail.v);
    break;
  case ST_BUFFER:
    if (!buffer_fits(c, st->type))
      break;
    put(&detail, "%s: %s[...]", buffer_words[st->buffer_kind & 3], type_name(st->type));
    vec_push(&detail, 0);
    complete(c, st->name->name, CK_VARIABLE, detail.v);
    break;
  case ST_FOR:
    if (wants_values(c))
      complete(c, st->name->name, CK_VARIABLE, "for variable");
    break;
  case ST_NODE:
  case ST_WHILE:
  case ST_IF:
  case ST_SWITCH:
  case ST_EDGE: break;
  }
  vec_free(&detail);
}

/* A node's name: every node of the graph, wherever the cursor is (edges
 * name nodes declared anywhere in it). */
static void complete_node(Stmt *st, void *ctx) {
  if (st->name && (st->kind == ST_NODE || st->kind == ST_WHILE || st->kind == ST_IF ||
                   st->kind == ST_SWITCH))
    complete(ctx, st->name->name, CK_EVENT, "node");
}

static const char *const keywords[] = {
#define KEYWORD(TOKEN, SPELLING) SPELLING,
#define TYPE_NAME(TY, SPELLING)
#include "keywords.def"
};

void on_completion(Request *r) {
  if (!get_position(r))
    return;
  Doc *d = r->doc;
  Analysis *a = d->an;
  size_t lo = r->off;
  while (lo > 0 && ident_char(d->text[lo - 1]))
    lo--;
  char prefix[MAX_IDENT_LEN + 1] = "";
  if (r->off - lo <= MAX_IDENT_LEN) {
    memcpy(prefix, d->text + lo, r->off - lo);
    prefix[r->off - lo] = 0;
  }
  Completion c = {.list = cJSON_CreateArray(),
                  .seen = {.by_string = true},
                  .prefix = prefix,
                  .nprefix = strlen(prefix),
                  .a = a};
  CharVec detail = {0};
  Item *in = a ? item_at(a, doc_pos(a, lo)) : NULL;
  if (in && in->kind == IT_GRAPH) {
    Pos at = doc_pos(a, lo);
    find_where(&c, d->text, lo);
    each_visible(in->body, in->nbody, at, complete_stmt, &c);
    if (c.where == WH_ANY)
      each_stmt(in->body, in->nbody, complete_node, &c);
    if (in->variant_var && wants_values(&c))
      complete(&c, in->variant_var->name, CK_CONSTANT, "variant");
  }
  if (in && in->kind == IT_KERNEL)
    for (int i = 0; i < in->nparams; i++)
      if (in->params[i].name)
        complete(&c, in->params[i].name->name, CK_VARIABLE, "parameter");
  for (size_t i = 0; a && i < a->c.items.n; i++) {
    Item *it = a->c.items.v[i];
    if (!it->name || (c.where != WH_ANY && (it->kind != IT_CONST || !wants_values(&c))))
      continue;
    detail.n = 0;
    if (it->kind == IT_KERNEL)
      put_kernel(&detail, it);
    else
      put(&detail, "%s", it->kind == IT_CONST ? "const" : "graph");
    vec_push(&detail, 0);
    complete(&c, it->name->name,
             it->kind == IT_KERNEL  ? CK_FUNCTION
             : it->kind == IT_CONST ? CK_CONSTANT
                                    : CK_MODULE,
             detail.v);
  }
  if (wants_values(&c)) {
    complete(&c, "cdiv", CK_FUNCTION, "cdiv(a, b): a / b rounded up");
    complete(&c, "min", CK_FUNCTION, "min(a, b)");
  }
  for (size_t i = 0; c.where == WH_ANY && i < sizeof keywords / sizeof *keywords; i++)
    complete(&c, keywords[i], CK_KEYWORD, NULL);
  for (Type t = TY_I8; c.where == WH_ANY && t <= TY_HANDLE; t++)
    complete(&c, type_name(t), CK_TYPE, NULL);
  cJSON *res = cJSON_CreateObject();
  cJSON_AddBoolToObject(res, "isIncomplete", false);
  cJSON_AddItemToObject(res, "items", c.list);
  map_free(&c.seen);
  vec_free(&detail);
  reply(r->id, res);
}

/* ---- document symbols ---- */

enum {
  SK_MODULE = 2,
  SK_NAMESPACE = 3,
  SK_CLASS = 5,
  SK_FUNCTION = 12,
  SK_VARIABLE = 13,
  SK_CONSTANT = 14,
  SK_ARRAY = 18,
  SK_EVENT = 24,
};

typedef struct Symbols {
  Server *s;
  Doc *d;
  cJSON *children;
} Symbols;

static cJSON *symbol(Symbols *sy, const char *name, int kind, const char *detail, Pos start,
                     Pos name_pos) {
  Doc *d = sy->d;
  size_t lo = pos_offset(d->an->c.diag, start), n = pos_offset(d->an->c.diag, name_pos);
  if (n < lo)
    lo = n;
  size_t hi = extent_end(d->text, d->len, lo), nhi = n + strlen(name);
  if (nhi > d->len)
    nhi = d->len;
  if (hi < nhi)
    hi = nhi;
  cJSON *s = cJSON_CreateObject();
  cJSON_AddStringToObject(s, "name", name);
  if (detail)
    cJSON_AddStringToObject(s, "detail", detail);
  cJSON_AddNumberToObject(s, "kind", kind);
  cJSON_AddItemToObject(
      s, "range",
      lsp_range(lsp_pos_at(sy->s, d->text, d->len, lo), lsp_pos_at(sy->s, d->text, d->len, hi)));
  cJSON_AddItemToObject(
      s, "selectionRange",
      lsp_range(lsp_pos_at(sy->s, d->text, d->len, n), lsp_pos_at(sy->s, d->text, d->len, nhi)));
  return s;
}

static void symbol_stmt(Stmt *st, void *ctx) {
  Symbols *sy = ctx;
  CharVec detail = {0};
  int kind = SK_VARIABLE;
  if (!st->name || !pos_set(st->name_pos))
    return;
  switch (st->kind) {
  case ST_CONST: kind = SK_CONSTANT; break;
  case ST_SCALAR:
    kind = SK_VARIABLE;
    put(&detail, "scalar: %s", type_name(st->type));
    break;
  case ST_BUFFER:
    kind = SK_ARRAY;
    put(&detail, "%s: %s", buffer_words[st->buffer_kind & 3], type_name(st->type));
    break;
  case ST_NODE:
    kind = SK_EVENT;
    put(&detail, "node: %s",
        node_kinds[st->node_kind].called && st->kernel ? st->kernel->name
                                                       : node_kinds[st->node_kind].name);
    break;
  case ST_WHILE:
  case ST_IF:
  case ST_SWITCH:
    kind = SK_EVENT;
    put(&detail, "node: %s", node_kinds[st->node_kind].name);
    break;
  case ST_FOR:
  case ST_EDGE: return;
  }
  vec_push(&detail, 0);
  cJSON_AddItemToArray(sy->children,
                       symbol(sy, st->name->name, kind, detail.v, st->pos, st->name_pos));
  vec_free(&detail);
}

void on_symbols(Request *r) {
  if (!get_doc(r))
    return;
  Doc *d = r->doc;
  Analysis *a = d->an;
  cJSON *list = cJSON_CreateArray();
  Symbols sy = {.s = r->s, .d = d};
  CharVec detail = {0};
  for (size_t i = 0; a && i < a->c.items.n; i++) {
    Item *it = a->c.items.v[i];
    if (pos_file(a->c.diag, it->pos) != a->file || !it->name ||
        pos_file(a->c.diag, it->name_pos) != a->file)
      continue;
    detail.n = 0;
    int kind = SK_CONSTANT;
    if (it->kind == IT_KERNEL) {
      kind = SK_FUNCTION;
      put_kernel(&detail, it);
    } else if (it->kind == IT_GRAPH) {
      kind = SK_NAMESPACE;
      put(&detail, "%sgraph", it->is_explicit ? "explicit " : "");
    } else {
      put(&detail, "const");
    }
    vec_push(&detail, 0);
    cJSON *s = symbol(&sy, it->name->name, kind, detail.v, it->pos, it->name_pos);
    if (it->kind == IT_GRAPH) {
      sy.children = cJSON_CreateArray();
      each_stmt(it->body, it->nbody, symbol_stmt, &sy);
      cJSON_AddItemToObject(s, "children", sy.children);
    }
    cJSON_AddItemToArray(list, s);
  }
  vec_free(&detail);
  reply(r->id, list);
}

/* ---- formatting and fixes ---- */

void on_formatting(Request *r) {
  if (!get_doc(r))
    return;
  Doc *d = r->doc;
  Compiler c = {0};
  compiler_init(&c);
  FILE *sink = fopen("/dev/null", "w");
  diag_set_output(c.diag, sink ? sink : stderr);
  int file = source_add(c.diag, d->path, d->text, d->len);
  char *out = fmt_source(&c, file);
  compiler_free(&c);
  if (sink)
    fclose(sink);
  if (!out) {
    reply_error(r->id, RPC_REQUEST_FAILED,
                "cgc fmt formats only a document that parses: this one has errors");
    return;
  }
  cJSON *edits = cJSON_CreateArray();
  if (strlen(out) != d->len || memcmp(out, d->text, d->len)) {
    cJSON *e = cJSON_CreateObject();
    cJSON_AddItemToObject(
        e, "range",
        lsp_range(lsp_pos_at(r->s, d->text, d->len, 0), lsp_pos_at(r->s, d->text, d->len, d->len)));
    cJSON_AddStringToObject(e, "newText", out);
    cJSON_AddItemToArray(edits, e);
  }
  free(out);
  reply(r->id, edits);
}

/* Quick fixes: the compiler's fixes that the diagnostics carry as data. */
void on_code_action(Request *r) {
  if (!get_doc(r))
    return;
  const cJSON *ctx = cJSON_GetObjectItemCaseSensitive(r->params, "context");
  const cJSON *diags = cJSON_GetObjectItemCaseSensitive(ctx, "diagnostics");
  if (!cJSON_IsArray(diags)) {
    reply_error(r->id, RPC_INVALID_PARAMS, "params.context.diagnostics must be an array");
    return;
  }
  cJSON *actions = cJSON_CreateArray();
  const cJSON *diag, *fix;
  cJSON_ArrayForEach(diag, diags) {
    const cJSON *data = cJSON_GetObjectItemCaseSensitive(diag, "data");
    cJSON_ArrayForEach(fix, cJSON_GetObjectItemCaseSensitive(data, "fixes")) {
      const char *uri = json_str(fix, "uri"), *text = json_str(fix, "newText");
      const cJSON *range = cJSON_GetObjectItemCaseSensitive(fix, "range");
      if (!uri || !text || !cJSON_IsObject(range))
        continue;
      char title[300];
      const cJSON *st = cJSON_GetObjectItemCaseSensitive(range, "start");
      const cJSON *en = cJSON_GetObjectItemCaseSensitive(range, "end");
      bool empty = cJSON_Compare(st, en, true);
      if (!*text)
        snprintf(title, sizeof title, "Remove it");
      else if (strchr(text, '\n') || strlen(text) > 60)
        snprintf(title, sizeof title, "%s", empty ? "Insert the fix" : "Replace with the fix");
      else
        snprintf(title, sizeof title, "%s '%s'", empty ? "Insert" : "Replace with", text);
      cJSON *act = cJSON_CreateObject(), *edit = cJSON_CreateObject();
      cJSON *changes = cJSON_CreateObject(), *edits = cJSON_CreateArray();
      cJSON *te = cJSON_CreateObject();
      cJSON_AddStringToObject(act, "title", title);
      cJSON_AddStringToObject(act, "kind", "quickfix");
      cJSON *dl = cJSON_CreateArray();
      cJSON_AddItemToArray(dl, cJSON_Duplicate(diag, true));
      cJSON_AddItemToObject(act, "diagnostics", dl);
      cJSON_AddItemToObject(te, "range", cJSON_Duplicate(range, true));
      cJSON_AddStringToObject(te, "newText", text);
      cJSON_AddItemToArray(edits, te);
      cJSON_AddItemToObject(changes, uri, edits);
      cJSON_AddItemToObject(edit, "changes", changes);
      cJSON_AddItemToObject(act, "edit", edit);
      cJSON_AddItemToArray(actions, act);
    }
  }
  reply(r->id, actions);
}
