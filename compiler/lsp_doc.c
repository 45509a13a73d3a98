/* lsp_doc.c: `cgc lsp`'s open documents: their URIs and paths, their
 * text as changes arrive, the analysis of each change, and the diagnostics
 * published from it. */
#include "lsp_internal.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- documents ---- */

static int hex_value(char c) {
  return c >= '0' && c <= '9'                     ? c - '0'
         : (c | 0x20) >= 'a' && (c | 0x20) <= 'f' ? (c | 0x20) - 'a' + 10
                                                  : -1;
}

/* The path a file: URI names (heap), or a copy of the URI for any other. */
static char *uri_path(const char *uri) {
  const char *p = uri;
  if (!strncmp(uri, "file://", 7)) {
    p = uri + 7;
    if (!strncmp(p, "localhost/", 10))
      p += 9;
    if (*p != '/')
      p = uri;
  }
  size_t n = strlen(p);
  char *out = xrealloc(NULL, n + 1), *o = out;
  for (size_t i = 0; i < n; i++) {
    int hi, lo;
    if (p != uri && p[i] == '%' && i + 2 < n + 1 && (hi = hex_value(p[i + 1])) >= 0 &&
        (lo = hex_value(p[i + 2])) >= 0 && (hi || lo)) {
      *o++ = (char)(hi * 16 + lo);
      i += 2;
    } else {
      *o++ = p[i];
    }
  }
  *o = 0;
  return out;
}

/* A file: URI for a path (made absolute), in a buffer of the caller's. */
void path_uri(CharVec *out, const char *path) {
  static const char hex[] = "0123456789ABCDEF";
  char cwd[PATH_MAX];
  const char *s = "file://";
  out->n = 0;
  for (; *s; s++)
    vec_push(out, *s);
  if (path[0] != '/' && getcwd(cwd, sizeof cwd)) {
    for (s = cwd; *s; s++)
      vec_push(out, *s);
    vec_push(out, '/');
  }
  for (s = path; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (isalnum(c) || strchr("/-._~", c)) {
      vec_push(out, (char)c);
    } else {
      vec_push(out, '%');
      vec_push(out, hex[c >> 4]);
      vec_push(out, hex[c & 15]);
    }
  }
  vec_push(out, 0);
}

Doc *find_doc(Server *s, const char *uri) {
  for (size_t i = 0; i < s->docs.n; i++)
    if (!strcmp(s->docs.v[i]->uri, uri))
      return s->docs.v[i];
  return NULL;
}

Doc *find_doc_real(Server *s, const char *real) {
  for (size_t i = 0; i < s->docs.n; i++)
    if (s->docs.v[i]->real && !strcmp(s->docs.v[i]->real, real))
      return s->docs.v[i];
  return NULL;
}

/* The compiler reads an open document's text in place of its file. */
static const char *overlay(void *ctx, const char *real, size_t *len) {
  Doc *d = find_doc_real(ctx, real);
  if (!d)
    return NULL;
  *len = d->len;
  return d->text;
}

static void analysis_free(Analysis *a) {
  if (!a)
    return;
  if (a->p)
    program_free(a->p);
  compiler_free(&a->c);
  free(a);
}

/* The front end over the document's text, as `cgc --check` runs it. */
static Analysis *analyze(Server *s, Doc *d) {
  Analysis *a = xrealloc(NULL, sizeof *a);
  memset(a, 0, sizeof *a);
  a->c.include_dirs = (const char **)s->incs.v;
  a->c.ninclude_dirs = (int)s->incs.n;
  a->c.overlay = overlay;
  a->c.overlay_ctx = s;
  a->c.keep_uses = true; /* what each name stands for: lsp_query.c reads it */
  compiler_init(&a->c);
  diag_set_quiet(a->c.diag, true); /* publish reads the diagnostics' records */
  source_set_regular_only(a->c.diag, true);
  free(d->real);
  d->real = realpath(d->path, NULL);
  a->file = source_add(a->c.diag, d->path, d->text, d->len);
  source_set_realpath(a->c.diag, a->file, d->real);
  parse_program_source(&a->c, a->file);
  a->p = analyze_program(&a->c);
  if (!diag_errors(a->c.diag))
    warn_program(&a->c, a->p);
  diag_flush(a->c.diag);
  return a;
}

int file_index(const Analysis *a, int file) {
  for (size_t i = 0; file >= 0 && i < a->c.files.n; i++)
    if (a->c.files.v[i] == file)
      return (int)i;
  return -1;
}

/* The URI of file index k of an analysis (an index into c.files). */
void file_uri(Server *s, Doc *d, Analysis *a, int k, CharVec *out) {
  const Source *src = source_get(a->c.diag, a->c.files.v[k]);
  Doc *open = src->realpath ? find_doc_real(s, src->realpath) : NULL;
  if (k == 0)
    open = d;
  if (open) {
    out->n = 0;
    for (const char *c = open->uri; *c; c++)
      vec_push(out, *c);
    vec_push(out, 0);
  } else {
    path_uri(out, src->realpath ? src->realpath : src->path);
  }
}

/* The LSP range of a record's or note's span: the columns the printers
 * underline on its caret's line. */
static cJSON *span_range(const Server *s, Analysis *a, Span sp) {
  Loc at = pos_loc(a->c.diag, sp.at);
  const Source *src = source_get(a->c.diag, at.file);
  int lo, hi;
  diag_span_columns(a->c.diag, sp, &lo, &hi);
  return lsp_range(lsp_pos(s, src->text, src->len, at.line, lo),
                   lsp_pos(s, src->text, src->len, at.line, hi));
}

/* The LSP range a fix replaces, exactly. */
static cJSON *fix_range(const Server *s, Analysis *a, Span sp) {
  const Source *src = source_get(a->c.diag, pos_file(a->c.diag, sp.at));
  Loc lo = pos_loc(a->c.diag, sp.lo), hi = pos_loc(a->c.diag, diag_fix_end(a->c.diag, sp));
  return lsp_range(lsp_pos(s, src->text, src->len, lo.line, lo.col),
                   lsp_pos(s, src->text, src->len, hi.line, hi.col));
}

const char *json_str(const cJSON *o, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* A related-information entry: a place in file k of the analysis. */
static void add_related(Server *s, Doc *d, Analysis *a, cJSON *related, int k, cJSON *range,
                        const char *msg, CharVec *uri) {
  cJSON *r = cJSON_CreateObject(), *loc = cJSON_CreateObject();
  file_uri(s, d, a, k, uri);
  cJSON_AddStringToObject(loc, "uri", uri->v);
  cJSON_AddItemToObject(loc, "range", range);
  cJSON_AddItemToObject(r, "location", loc);
  cJSON_AddStringToObject(r, "message", msg);
  cJSON_AddItemToArray(related, r);
}

/* A compiler diagnostic (its record) as an LSP one. */
static cJSON *lsp_diagnostic(Server *s, Doc *d, Analysis *a, const DiagRecord *rec) {
  CharVec uri = {0};
  int at_file = pos_file(a->c.diag, rec->span.at);
  const char *file = at_file >= 0 ? source_get(a->c.diag, at_file)->path : NULL;
  int k = file_index(a, at_file);
  cJSON *out = cJSON_CreateObject(), *related = cJSON_CreateArray();
  if (k == 0) {
    cJSON_AddItemToObject(out, "range", span_range(s, a, rec->span));
  } else if (k > 0) {
    /* In an included file: at the include of this document that reads
     * it, with the place itself as related information. */
    Pos at = a->c.included_at.v[k];
    while (pos_set(at) && pos_file(a->c.diag, at) != a->file) {
      int i = file_index(a, pos_file(a->c.diag, at));
      at = i >= 0 ? a->c.included_at.v[i] : NO_POS;
    }
    size_t lo = pos_set(at) ? pos_offset(a->c.diag, at) : 0;
    size_t hi = pos_set(at) ? extent_end(d->text, d->len, lo) : 0;
    cJSON_AddItemToObject(
        out, "range",
        lsp_range(lsp_pos_at(s, d->text, d->len, lo), lsp_pos_at(s, d->text, d->len, hi)));
    add_related(s, d, a, related, k, span_range(s, a, rec->span), rec->message, &uri);
  } else {
    cJSON_AddItemToObject(
        out, "range",
        lsp_range(lsp_pos(s, d->text, d->len, 1, 1), lsp_pos(s, d->text, d->len, 1, 1)));
  }
  cJSON_AddNumberToObject(out, "severity", rec->severity == DIAG_WARNING ? 2 : 1);
  cJSON_AddStringToObject(out, "code", rec->code);
  cJSON_AddStringToObject(out, "source", "cgc");
  char text[2400];
  const char *option = rec->option;
  /* An included file by its path from the document's directory, where it
   * is below it. */
  const char *slash = strrchr(d->path, '/');
  size_t dir = slash ? (size_t)(slash - d->path) + 1 : 0;
  if (k > 0 && dir && !strncmp(file, d->path, dir))
    file += dir;
  if (k > 0)
    snprintf(text, sizeof text, "in '%s': %s%s%s%s", file, rec->message, option ? " [" : "",
             option ? option : "", option ? "]" : "");
  else
    snprintf(text, sizeof text, "%s%s%s%s", rec->message, option ? " [" : "",
             option ? option : "", option ? "]" : "");
  cJSON_AddStringToObject(out, "message", text);
  /* Notes as related information; fixes ride along as data, for
   * textDocument/codeAction. */
  cJSON *fixes = cJSON_CreateArray();
  for (size_t i = 0; i < rec->parts.n; i++) {
    const DiagPart *p = &rec->parts.v[i];
    int pk = file_index(a, pos_file(a->c.diag, p->span.at));
    if (pk < 0 || (p->fix && !p->text))
      continue;
    if (!p->fix) {
      add_related(s, d, a, related, pk, span_range(s, a, p->span), p->text, &uri);
      continue;
    }
    cJSON *f = cJSON_CreateObject();
    file_uri(s, d, a, pk, &uri);
    cJSON_AddStringToObject(f, "uri", uri.v);
    cJSON_AddItemToObject(f, "range", fix_range(s, a, p->span));
    cJSON_AddStringToObject(f, "newText", p->text);
    cJSON_AddItemToArray(fixes, f);
  }
  if (cJSON_GetArraySize(related))
    cJSON_AddItemToObject(out, "relatedInformation", related);
  else
    cJSON_Delete(related);
  if (cJSON_GetArraySize(fixes)) {
    cJSON *data = cJSON_CreateObject();
    cJSON_AddItemToObject(data, "fixes", fixes);
    cJSON_AddItemToObject(out, "data", data);
  } else {
    cJSON_Delete(fixes);
  }
  vec_free(&uri);
  return out;
}

static void publish(Server *s, Doc *d) {
  Analysis *a = d->an;
  cJSON *params = cJSON_CreateObject(), *list = cJSON_CreateArray();
  cJSON_AddStringToObject(params, "uri", d->uri);
  cJSON_AddNumberToObject(params, "version", (double)d->version);
  for (size_t i = 0; a && i < diag_count(a->c.diag); i++)
    cJSON_AddItemToArray(list, lsp_diagnostic(s, d, a, diag_record(a->c.diag, i)));
  cJSON_AddItemToObject(params, "diagnostics", list);
  notify("textDocument/publishDiagnostics", params);
}

/* Analyses d again, and every other open document that reads d's file. */
static void refresh(Server *s, Doc *d) {
  analysis_free(d->an);
  d->an = analyze(s, d);
  publish(s, d);
  if (!d->real)
    return;
  for (size_t i = 0; i < s->docs.n; i++) {
    Doc *o = s->docs.v[i];
    Analysis *a = o->an;
    bool reads = false;
    for (size_t k = 1; o != d && a && k < a->c.files.n && !reads; k++) {
      const Source *src = source_get(a->c.diag, a->c.files.v[k]);
      reads = src->realpath && !strcmp(src->realpath, d->real);
    }
    if (reads) {
      analysis_free(o->an);
      o->an = analyze(s, o);
      publish(s, o);
    }
  }
}

void doc_free(Doc *d) {
  analysis_free(d->an);
  free(d->uri);
  free(d->path);
  free(d->real);
  free(d->text);
  free(d);
}

/* ---- the document's life ---- */

/* A text larger than the compiler reads is kept empty. */
static bool set_text(Doc *d, const cJSON *text) {
  if (!cJSON_IsString(text))
    return false;
  const char *t = text->valuestring;
  if (strlen(t) > (size_t)MAX_FILE_SIZE) {
    fprintf(stderr, "cgc lsp: '%s' is larger than %lld MiB; read as empty\n", d->uri,
            (long long)(MAX_FILE_SIZE >> 20));
    t = "";
  }
  free(d->text);
  d->len = strlen(t);
  d->text = strcpy(xrealloc(NULL, d->len + 1), t);
  return true;
}

void on_did_open(Server *s, const cJSON *params) {
  const cJSON *td = cJSON_GetObjectItemCaseSensitive(params, "textDocument");
  const char *uri = json_str(td, "uri");
  const cJSON *text = cJSON_GetObjectItemCaseSensitive(td, "text");
  if (!uri || !cJSON_IsString(text)) {
    fputs("cgc lsp: didOpen without textDocument.uri and text; ignored\n", stderr);
    return;
  }
  Doc *d = find_doc(s, uri);
  if (!d) {
    d = xrealloc(NULL, sizeof *d);
    memset(d, 0, sizeof *d);
    d->uri = strcpy(xrealloc(NULL, strlen(uri) + 1), uri);
    d->path = uri_path(uri);
    vec_push(&s->docs, d);
  }
  int64_t v = 0;
  if (get_int(td, "version", &v))
    d->version = v;
  set_text(d, text);
  refresh(s, d);
}

/* The byte offset of an LSP position in d's text (clamped to its line and
 * to the text, as LSP says); false when it is no position. */
static bool doc_offset(const Server *s, const Doc *d, const cJSON *pos, size_t *off) {
  int64_t line, ch;
  if (!get_int(pos, "line", &line) || !get_int(pos, "character", &ch))
    return false;
  size_t ls = line_offset(s, d->text, d->len, line);
  *off = byte_at(s, d->text, ls, line_end(d->text, d->len, ls), ch);
  return true;
}

/* One content change: the whole text, or a range's replacement. */
static bool apply_change(const Server *s, Doc *d, const cJSON *ch) {
  const cJSON *text = cJSON_GetObjectItemCaseSensitive(ch, "text");
  const cJSON *range = cJSON_GetObjectItemCaseSensitive(ch, "range");
  if (!cJSON_IsString(text))
    return false;
  if (!range)
    return set_text(d, text);
  size_t lo, hi, n = strlen(text->valuestring);
  if (!doc_offset(s, d, cJSON_GetObjectItemCaseSensitive(range, "start"), &lo) ||
      !doc_offset(s, d, cJSON_GetObjectItemCaseSensitive(range, "end"), &hi) || hi < lo ||
      d->len - (hi - lo) + n > (size_t)MAX_FILE_SIZE)
    return false;
  size_t len = d->len - (hi - lo) + n;
  char *t = xrealloc(NULL, len + 1);
  memcpy(t, d->text, lo);
  memcpy(t + lo, text->valuestring, n);
  memcpy(t + lo + n, d->text + hi, d->len - hi);
  t[len] = 0;
  free(d->text);
  d->text = t;
  d->len = len;
  return true;
}

void on_did_change(Server *s, const cJSON *params) {
  const cJSON *td = cJSON_GetObjectItemCaseSensitive(params, "textDocument");
  const cJSON *changes = cJSON_GetObjectItemCaseSensitive(params, "contentChanges");
  Doc *d = json_str(td, "uri") ? find_doc(s, json_str(td, "uri")) : NULL;
  if (!d || !cJSON_IsArray(changes)) {
    fputs("cgc lsp: didChange of a document not open, or without contentChanges; ignored\n",
          stderr);
    return;
  }
  /* Incremental sync: each change in turn, a range's new text or the
   * whole text. */
  const cJSON *ch;
  int applied = 0;
  cJSON_ArrayForEach(ch, changes) {
    if (!apply_change(s, d, ch)) {
      fprintf(stderr,
              "cgc lsp: a change to '%s' without text, or with a range that is none; the "
              "changes after it are ignored\n",
              d->uri);
      break;
    }
    s->lines->t = NULL; /* the old text's line starts went with it (Lines) */
    applied++;
  }
  if (!applied)
    return;
  int64_t v;
  if (get_int(td, "version", &v))
    d->version = v;
  refresh(s, d);
}

void on_did_close(Server *s, const cJSON *params) {
  const cJSON *td = cJSON_GetObjectItemCaseSensitive(params, "textDocument");
  Doc *d = json_str(td, "uri") ? find_doc(s, json_str(td, "uri")) : NULL;
  if (!d)
    return;
  for (size_t i = 0; i < s->docs.n; i++)
    if (s->docs.v[i] == d)
      s->docs.v[i] = s->docs.v[--s->docs.n];
  cJSON *p = cJSON_CreateObject();
  cJSON_AddStringToObject(p, "uri", d->uri);
  cJSON_AddItemToObject(p, "diagnostics", cJSON_CreateArray());
  notify("textDocument/publishDiagnostics", p);
  char *real = d->real ? strcpy(xrealloc(NULL, strlen(d->real) + 1), d->real) : NULL;
  doc_free(d);
  /* The documents that include it read its file again. */
  for (size_t i = 0; real && i < s->docs.n; i++) {
    Doc *o = s->docs.v[i];
    bool reads = false;
    for (size_t k = 1; o->an && k < o->an->c.files.n && !reads; k++) {
      const Source *src = source_get(o->an->c.diag, o->an->c.files.v[k]);
      reads = src->realpath && !strcmp(src->realpath, real);
    }
    if (reads) {
      analysis_free(o->an);
      o->an = analyze(s, o);
      publish(s, o);
    }
  }
  free(real);
}
