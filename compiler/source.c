/* source.c: source files in memory and the diagnostics that point into them.
 *
 * A position is a number a byte of every source (cgc.h: Pos); its line and
 * byte column are found only when asked, mostly when a diagnostic is
 * printed.  The same message at the same place is printed
 * once, so an error inside a `for` body does not repeat per iteration. */
#include "cgc.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

struct Diag {
  Arena *arena;
  VEC(Source) sources;
  Map seen; /* "position:message" -> itself */
  int errors;
  FILE *out; /* where diagnostics go: stderr unless told */
  bool color;
  bool json;
  bool quiet;                 /* print nothing: the records are all */
  VEC(DiagRecord) records;    /* every diagnostic reported */
  bool open;                  /* the last record may still get notes and fixes */
  VEC(char) line;             /* json: the line being put together */
  bool stopped;
  bool dropping; /* the last error was not printed: drop its notes too */
  bool warning_off[W_COUNT]; /* -Wno-NAME */
  bool werror;               /* -Werror */
  bool regular_only;         /* source_load reads regular files only (cgc lsp) */
  uint64_t next_base;        /* the position of the next source's first byte */
  uint64_t max_pos;          /* the last position a source may take */
};

Diag *diag_new(void) {
  Diag *d = xrealloc(NULL, sizeof *d);
  memset(d, 0, sizeof *d);
  d->arena = arena_new();
  d->seen.by_string = true;
  d->out = stderr;
  d->next_base = 1; /* 0 is no place */
  d->max_pos = UINT32_MAX;
  return d;
}

void diag_free(Diag *d) {
  if (!d)
    return;
  for (size_t i = 0; i < d->sources.n; i++)
    free(d->sources.v[i].realpath);
  diag_flush(d);
  vec_free(&d->sources);
  for (size_t i = 0; i < d->records.n; i++)
    vec_free(&d->records.v[i].parts);
  vec_free(&d->records);
  vec_free(&d->line);
  map_free(&d->seen);
  arena_free(d->arena);
  free(d);
}

void diag_set_color(Diag *d, bool on) { d->color = on; }
void diag_set_json(Diag *d, bool on) { d->json = on; }
void diag_set_output(Diag *d, FILE *out) { d->out = out; }
void diag_set_quiet(Diag *d, bool on) { d->quiet = on; }
size_t diag_count(const Diag *d) { return d->records.n; }
const DiagRecord *diag_record(const Diag *d, size_t i) { return &d->records.v[i]; }

static void put(Diag *d, const char *s, size_t n) {
  for (size_t i = 0; i < n; i++)
    vec_push(&d->line, s[i]);
}

static void put_str(Diag *d, const char *s) { put(d, s, strlen(s)); }

int utf8_len(const char *s) {
  const unsigned char *u = (const unsigned char *)s;
  int n;
  unsigned char lo = 0x80, hi = 0xbf; /* the second byte's range */
  if (u[0] < 0x80)
    return 1;
  if (u[0] >= 0xc2 && u[0] <= 0xdf)
    n = 2;
  else if (u[0] >= 0xe0 && u[0] <= 0xef)
    n = 3, lo = u[0] == 0xe0 ? 0xa0 : 0x80, hi = u[0] == 0xed ? 0x9f : 0xbf;
  else if (u[0] >= 0xf0 && u[0] <= 0xf4)
    n = 4, lo = u[0] == 0xf0 ? 0x90 : 0x80, hi = u[0] == 0xf4 ? 0x8f : 0xbf;
  else
    return 0;
  if (u[1] < lo || u[1] > hi)
    return 0;
  for (int i = 2; i < n; i++)
    if (u[i] < 0x80 || u[i] > 0xbf)
      return 0;
  return n;
}

void fput_escaped(FILE *f, const char *s) {
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '\n')
      fputs("\\n", f);
    else if (c == '\t')
      fputs("\\t", f);
    else if (c == '\r')
      fputs("\\r", f);
    else if (c < 0x20 || c == 0x7f)
      fprintf(f, "\\x%02x", c);
    else
      fputc(c, f);
  }
}

/* A JSON string holds Unicode: a byte that is not part of valid UTF-8 (a
 * file name can hold any) becomes U+FFFD, so every line stays valid JSON. */
static void put_json_string(Diag *d, const char *s) {
  put_str(d, "\"");
  while (*s) {
    unsigned char c = (unsigned char)*s;
    char buf[8];
    int n = utf8_len(s);
    if (c == '"' || c == '\\') {
      buf[0] = '\\', buf[1] = (char)c;
      put(d, buf, 2);
    } else if (c < 0x20 || c == 0x7f) {
      snprintf(buf, sizeof buf, "\\u%04x", c);
      put_str(d, buf);
    } else if (n) {
      put(d, s, (size_t)n);
      s += n - 1;
    } else {
      put_str(d, "\\ufffd");
    }
    s++;
  }
  put_str(d, "\"");
}

/* Where a line's text ends: at LF, CR LF or a lone CR, as the scanner
 * counts lines. */
static const char *line_end(const char *line, const char *end) {
  while (line < end && *line != '\n' && *line != '\r')
    line++;
  return line;
}

/* Where the line after the one that starts at `line` starts (end at the last). */
static const char *next_line(const char *line, const char *end) {
  line = line_end(line, end);
  if (line < end && *line == '\r' && line + 1 < end && line[1] == '\n')
    line++;
  return line < end ? line + 1 : line;
}

/* The index of a source's line starts, made in one pass when a position
 * in it is first asked, so that any number of diagnostics scan it once
 * (4 bytes a line). */
static void index_lines(Diag *d, Source *s) {
  if (s->line_starts)
    return;
  const char *end = s->text + s->len;
  uint32_t count = 1; /* a line starts at the start and after each break */
  for (const char *line = s->text; line_end(line, end) < end; line = next_line(line, end))
    count++;
  uint32_t *starts = arena_alloc(d->arena, count * sizeof *starts);
  count = 0;
  for (const char *line = s->text;; line = next_line(line, end)) {
    starts[count++] = (uint32_t)(line - s->text);
    if (line_end(line, end) == end)
      break;
  }
  s->line_starts = starts;
  s->nlines = count;
}

/* The start of 1-based line `n` of a source (its end past the last line). */
static const char *line_start(Diag *d, Source *s, int n) {
  index_lines(d, s);
  return n >= 1 && (uint32_t)n <= s->nlines ? s->text + s->line_starts[n - 1] : s->text + s->len;
}

int pos_file(Diag *d, Pos p) {
  if (!p.off)
    return -1;
  size_t lo = 0, hi = d->sources.n; /* the last source that starts at or before p */
  while (hi - lo > 1) {
    size_t mid = lo + (hi - lo) / 2;
    if (d->sources.v[mid].base <= p.off)
      lo = mid;
    else
      hi = mid;
  }
  return (int)lo;
}

size_t pos_offset(Diag *d, Pos p) { return p.off - d->sources.v[pos_file(d, p)].base; }

Pos source_pos(Diag *d, int file, size_t off) {
  return (Pos){d->sources.v[file].base + (uint32_t)off};
}

Loc pos_loc(Diag *d, Pos p) {
  int file = pos_file(d, p);
  if (file < 0)
    return (Loc){.file = -1};
  Source *s = &d->sources.v[file];
  uint32_t off = p.off - s->base;
  index_lines(d, s);
  uint32_t lo = 0, hi = s->nlines; /* the last line that starts at or before off */
  while (hi - lo > 1) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (s->line_starts[mid] <= off)
      lo = mid;
    else
      hi = mid;
  }
  int32_t col = (int32_t)(off - s->line_starts[lo]) + 1;
  return (Loc){.file = file, .line = (int32_t)lo + 1, .col = col};
}

/* Just past the token that starts at p: a word or number, a string, a
 * two-character operator, or one character. */
static Pos token_end(Diag *d, Pos p) {
  Source *s = &d->sources.v[pos_file(d, p)];
  const char *end = s->text + s->len;
  const char *c = s->text + (p.off - s->base);
  if (c >= end || *c == '\n' || *c == '\r')
    return p;
  const char *q = c + 1;
  if (isalnum((unsigned char)*c) || *c == '_') {
    while (q < end && (isalnum((unsigned char)*q) || *q == '_' || (*q == '.' && q + 1 < end &&
                                                                   isdigit((unsigned char)q[1]))))
      q++;
  } else if (*c == '"') {
    while (q < end && *q != '"' && *q != '\n' && *q != '\r')
      q += *q == '\\' && q + 1 < end ? 2 : 1;
    if (q < end && *q == '"')
      q++;
  } else if (q < end && ((*c == '-' && *q == '>') || (*c == '=' && *q == '>') ||
                         (*c == '.' && *q == '.'))) {
    q++;
  }
  return pos_plus(p, q - c);
}

Span span_at(Pos p) { return (Span){.at = p, .lo = p}; }

/* The columns a span underlines on its caret's line, [*lo, *hi): a span
 * of a token (hi NO_POS) is the token; one that begins or ends on another
 * line runs to that side's end of this one. */
void diag_span_columns(Diag *d, Span s, int *lo, int *hi) {
  Loc p = pos_loc(d, s.at);
  Source *src = &d->sources.v[p.file];
  const char *line = line_start(d, src, p.line);
  int len = (int)(line_end(line, src->text + src->len) - line);
  int at = p.col;
  if (!pos_set(s.hi)) {
    *lo = at, *hi = at + (int)(token_end(d, s.at).off - s.at.off);
  } else {
    Loc l = pos_loc(d, s.lo), h = pos_loc(d, s.hi);
    *lo = l.line < p.line ? 1 : l.line > p.line ? at : l.col;
    *hi = h.line > p.line ? len + 1 : h.line < p.line ? at + 1 : h.col;
    /* Trailing blanks of a line are not the expression's. */
    while (*hi > *lo + 1 && *hi - 2 < len && (line[*hi - 2] == ' ' || line[*hi - 2] == '\t'))
      (*hi)--;
  }
  if (*lo > at)
    *lo = at;
  if (*hi <= at)
    *hi = at + 1;
  if (*hi > len + 2)
    *hi = len + 2;
}

static void put_location(Diag *d, const char *key, int line, int col) {
  char buf[96];
  snprintf(buf, sizeof buf, ",\"%s\":{\"line\":%d,\"column\":%d}", key, line, col);
  put_str(d, buf);
}

/* "file", "line" and "column" (the caret), "start" and "end" (the span). */
static void put_position(Diag *d, Span s) {
  char buf[96];
  Loc p = pos_loc(d, s.at);
  if (p.file < 0) {
    put_str(d, "\"file\":null,\"line\":0,\"column\":0,\"start\":null,\"end\":null");
    return;
  }
  int lo, hi;
  diag_span_columns(d, s, &lo, &hi);
  put_str(d, "\"file\":");
  put_json_string(d, d->sources.v[p.file].path);
  snprintf(buf, sizeof buf, ",\"line\":%d,\"column\":%d", p.line, p.col);
  put_str(d, buf);
  put_location(d, "start", p.line, lo);
  put_location(d, "end", p.line, hi);
}

Pos diag_fix_end(Diag *d, Span s) { return pos_set(s.hi) ? s.hi : token_end(d, s.at); }

/* A fix's range exactly: an insertion starts where it ends. */
static void put_fix_range(Diag *d, Span s) {
  char buf[96];
  Loc lo = pos_loc(d, s.lo), hi = pos_loc(d, diag_fix_end(d, s));
  put_str(d, "\"file\":");
  put_json_string(d, d->sources.v[pos_file(d, s.at)].path);
  snprintf(buf, sizeof buf, ",\"line\":%d,\"column\":%d", lo.line, lo.col);
  put_str(d, buf);
  put_location(d, "start", lo.line, lo.col);
  put_location(d, "end", hi.line, hi.col);
}

/* The JSON printer: a record as one object on a line. */
static void print_json(Diag *d, const DiagRecord *r) {
  d->line.n = 0;
  put_str(d, "{");
  put_position(d, r->span);
  put_str(d, ",\"severity\":\"");
  put_str(d, r->severity == DIAG_WARNING ? "warning" : "error");
  put_str(d, "\",\"code\":\"");
  put_str(d, r->code);
  put_str(d, "\"");
  if (r->option) {
    put_str(d, ",\"option\":");
    put_json_string(d, r->option);
  }
  put_str(d, ",\"message\":");
  put_json_string(d, r->message);
  for (int fixes = 0; fixes <= 1; fixes++) {
    put_str(d, fixes ? "],\"fixes\":[" : ",\"notes\":[");
    bool first = true;
    for (size_t i = 0; i < r->parts.n; i++) {
      const DiagPart *p = &r->parts.v[i];
      if (p->fix != (fixes == 1))
        continue;
      put_str(d, first ? "{" : ",{");
      first = false;
      if (!p->fix) {
        put_position(d, p->span);
        put_str(d, ",\"message\":");
      } else if (p->edge_from) {
        put_str(d, "\"edge\":{\"from\":");
        put_json_string(d, p->edge_from);
        put_str(d, ",\"to\":");
        put_json_string(d, p->edge_to);
        put_str(d, "}");
        if (pos_set(p->span.at)) {
          put_str(d, ",");
          put_fix_range(d, p->span);
          put_str(d, ",\"text\":");
        }
      } else {
        put_fix_range(d, p->span);
        put_str(d, ",\"text\":");
      }
      if (p->text)
        put_json_string(d, p->text);
      put_str(d, "}");
    }
  }
  put_str(d, "]}\n");
  fwrite(d->line.v, 1, d->line.n, d->out);
}

/* The last record gets no more parts; JSON prints it now. */
void diag_flush(Diag *d) {
  if (!d->open)
    return;
  d->open = false;
  if (d->json && !d->quiet)
    print_json(d, &d->records.v[d->records.n - 1]);
}

/* A new record, open for its notes and fixes. */
static void add_record(Diag *d, Span s, DiagSeverity severity, const char *code,
                       const char *option, const char *msg) {
  diag_flush(d);
  DiagRecord r = {.severity = severity,
                  .code = code,
                  .option = option ? arena_strdup(d->arena, option) : NULL,
                  .message = arena_strdup(d->arena, msg),
                  .span = s};
  vec_push(&d->records, r);
  d->open = true;
}

/* A note or fix of the open record (none: it is dropped). */
static void add_part(Diag *d, DiagPart p) {
  if (!d->open)
    return;
  if (p.text)
    p.text = arena_strdup(d->arena, p.text);
  if (p.edge_from)
    p.edge_from = arena_strdup(d->arena, p.edge_from);
  if (p.edge_to)
    p.edge_to = arena_strdup(d->arena, p.edge_to);
  vec_push(&d->records.v[d->records.n - 1].parts, p);
}

/* Whether the text printer prints. */
static bool text_out(const Diag *d) { return !d->json && !d->quiet; }

int diag_errors(const Diag *d) { return d->errors; }
bool diag_stopped(const Diag *d) { return d->stopped; }
const Source *source_get(Diag *d, int file) { return &d->sources.v[file]; }

void diag_set_max_source_bytes(Diag *d, int64_t n) { d->max_pos = (uint64_t)n; }

/* Gives s the next positions and adds it to the table: its index, or -1
 * after an error at `at` when they would run past the last there is. */
static int add_source(Diag *d, Source s, Pos at) {
  if (d->next_base + s.len > d->max_pos) {
    error_at(d, at, DIAG_SOURCES_TOGETHER, s.path, (long long)d->max_pos);
    return -1;
  }
  s.base = (uint32_t)d->next_base;
  d->next_base += s.len + 1; /* its end is a place too */
  vec_push(&d->sources, s);
  return (int)d->sources.n - 1;
}

int source_add(Diag *d, const char *path, const char *text, size_t len) {
  char *copy = arena_alloc(d->arena, len + 1);
  memcpy(copy, text, len);
  Source s = {.path = arena_strdup(d->arena, path), .text = copy, .len = len};
  return add_source(d, s, NO_POS);
}
void source_set_realpath(Diag *d, int file, const char *realpath) {
  Source *s = &d->sources.v[file];
  free(s->realpath);
  s->realpath = realpath ? strcpy(xrealloc(NULL, strlen(realpath) + 1), realpath) : NULL;
}

void source_set_regular_only(Diag *d, bool on) { d->regular_only = on; }

FILE *open_read(const char *path, bool nonblock, struct stat *st) {
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | (nonblock ? O_NONBLOCK : 0));
  if (fd < 0)
    return NULL;
  FILE *f = fstat(fd, st) == 0 ? fdopen(fd, "rb") : NULL;
  if (!f) {
    int err = errno;
    close(fd);
    errno = err;
  }
  return f;
}

int source_load(Diag *d, const char *path, Pos at) {
  struct stat st;
  FILE *f = open_read(path, d->regular_only, &st);
  if (!f || S_ISDIR(st.st_mode) || (d->regular_only && !S_ISREG(st.st_mode))) {
    int err = !f ? errno : S_ISDIR(st.st_mode) ? EISDIR : 0;
    if (f)
      fclose(f);
    if (err)
      error_at(d, at, "cannot read '%s': %s", path, strerror(err));
    else
      error_at(d, at, "'%s' is not a regular file (the language server reads no FIFO or device)",
               path);
    return -1;
  }
  if (st.st_size > MAX_FILE_SIZE) {
    fclose(f);
    error_at(d, at, "'%s' is larger than %lld MiB", path,
             (long long)(MAX_FILE_SIZE >> 20));
    return -1;
  }
  /* Read to the end rather than trusting st_size: a pipe reports 0. */
  size_t cap = st.st_size > 0 ? (size_t)st.st_size + 1 : 4096, len = 0;
  char *text = arena_alloc(d->arena, cap + 1);
  for (;;) {
    if (len == cap) {
      if ((int64_t)cap > MAX_FILE_SIZE) {
        fclose(f);
        error_at(d, at, "'%s' is larger than %lld MiB", path,
                 (long long)(MAX_FILE_SIZE >> 20));
        return -1;
      }
      char *bigger = arena_alloc(d->arena, cap * 2 + 1);
      memcpy(bigger, text, len);
      text = bigger;
      cap *= 2;
    }
    size_t got = fread(text + len, 1, cap - len, f);
    len += got;
    if (got == 0)
      break;
  }
  bool failed = ferror(f);
  fclose(f);
  if (failed) {
    error_at(d, at, "cannot read '%s': %s", path, strerror(EIO));
    return -1;
  }
  text[len] = 0;
  Source s = {.path = arena_strdup(d->arena, path), .text = text, .len = len};
  int file = add_source(d, s, at);
  if (file >= 0)
    d->sources.v[file].realpath = realpath(path, NULL);
  return file;
}

enum { C_RESET, C_BOLD, C_ERROR, C_WARNING, C_NOTE, C_CARET };
static const char *const colors[] = {"\033[0m", "\033[1m", "\033[1;31m",
                                     "\033[1;35m", "\033[1;36m", "\033[1;32m"};

static const char *col(const Diag *d, int which) {
  return d->color ? colors[which] : "";
}

/* Spaces up to column `to` of a line, its tabs kept, so that what follows
 * lines up under the same columns. */
static void indent_to(Diag *d, const char *line, const char *eol, int to) {
  fputs("    ", d->out);
  for (int i = 1; i < to; i++)
    fputc(line + i - 1 < eol && line[i - 1] == '\t' ? '\t' : ' ', d->out);
}

/* The source line and, under it, the span: ^ at the caret, ~ elsewhere. */
static void print_line(Diag *d, Span s) {
  Loc at = pos_loc(d, s.at);
  Source *src = &d->sources.v[at.file];
  const char *line = line_start(d, src, at.line);
  const char *eol = line_end(line, src->text + src->len);
  fputs("    ", d->out);
  for (const char *c = line; c < eol; c++)
    fputc(*c ? *c : ' ', d->out);
  fputc('\n', d->out);
  int lo, hi;
  diag_span_columns(d, s, &lo, &hi);
  indent_to(d, line, eol, lo);
  fputs(col(d, C_CARET), d->out);
  for (int c = lo; c < hi; c++)
    fputc(c == at.col ? '^' : '~', d->out);
  fprintf(d->out, "%s\n", col(d, C_RESET));
}

/* The key that says two diagnostics are one: the place and the message
 * with the indices of unrolled names left out ('res[3]' as 'res'), so that
 * a mistake in a for body is reported once, not once an iteration. */
static char *same_key(Diag *d, Pos p, const char *msg) {
  size_t n = strlen(msg);
  char *m = arena_alloc(d->arena, n + 1), *o = m;
  for (size_t i = 0; i < n; i++) {
    size_t j = i + 1;
    if (msg[i] == '[' && i > 0 &&
        (isalnum((unsigned char)msg[i - 1]) || msg[i - 1] == '_' || msg[i - 1] == ']')) {
      while (j < n && isdigit((unsigned char)msg[j]))
        j++;
      if (j > i + 1 && j < n && msg[j] == ']') {
        i = j;
        continue;
      }
    }
    *o++ = msg[i];
  }
  *o = 0;
  return arena_printf(d->arena, "%" PRIu32 ":%s", p.off, m);
}

void diag_enable_warning(Diag *d, Warning w, bool on) { d->warning_off[w] = !on; }
void diag_set_werror(Diag *d, bool on) { d->werror = on; }

#define TOO_MANY "too many errors; stopping"

/* warning: a Warning, or -1 for errors and notes. */
static void report(Diag *d, Span s, int severity, int warning, const char *fmt, va_list ap) {
  static const char *const names[] = {[C_ERROR] = "error",
                                      [C_WARNING] = "warning",
                                      [C_NOTE] = "note"};
  char msg[2048], option[64] = "";
  vsnprintf(msg, sizeof msg, fmt, ap);
  Pos p = s.at;

  if (warning >= 0) {
    if (d->warning_off[warning]) {
      d->dropping = true; /* and its notes */
      return;
    }
    snprintf(option, sizeof option, "-W%s%s", d->werror ? "error=" : "", warning_name((Warning)warning));
    if (d->werror)
      severity = C_ERROR;
  }
  if (severity == C_NOTE && d->dropping)
    return;
  if (severity == C_ERROR) {
    d->dropping = true;
    if (d->stopped)
      return;
    char *key = same_key(d, p, msg);
    if (map_get(&d->seen, key))
      return;
    map_put(&d->seen, key, key);
    d->dropping = false;
    if (d->errors == MAX_ERRORS) {
      d->stopped = true;
      d->dropping = true;
      add_record(d, span_at(NO_POS), DIAG_ERROR, error_code(TOO_MANY), NULL, TOO_MANY);
      if (text_out(d))
        fprintf(d->out, "cgc: %serror[%s]:%s " TOO_MANY "\n", col(d, C_ERROR),
                error_code(TOO_MANY), col(d, C_RESET));
      return;
    }
    d->errors++;
  }
  if (severity == C_WARNING) {
    /* Once at a place, as errors are: a loop's iterations repeat it. */
    char *key = same_key(d, p, msg);
    d->dropping = map_get(&d->seen, key) != NULL;
    if (d->dropping)
      return;
    map_put(&d->seen, key, key);
  }
  const char *code = warning >= 0          ? warning_code((Warning)warning)
                     : severity == C_ERROR ? error_code(fmt)
                                           : NULL;
  if (severity == C_NOTE)
    add_part(d, (DiagPart){.span = s, .text = msg});
  else
    add_record(d, s, severity == C_WARNING ? DIAG_WARNING : DIAG_ERROR, code,
               *option ? option : NULL, msg);
  if (!text_out(d))
    return;
  /* The diagnostic is put together in memory and written at once: stderr
   * has no buffer, and a write a character costs more than the rest. */
  FILE *out = d->out;
  char *text = NULL;
  size_t len = 0;
  FILE *mem = open_memstream(&text, &len);
  if (mem)
    d->out = mem;
  /* A line break or escape sequence in a file name or message must not
   * split the FILE:LINE:COL line or reach the terminal. */
  fputs(col(d, C_BOLD), d->out);
  Loc at = pos_loc(d, p);
  if (at.file >= 0) {
    fput_escaped(d->out, d->sources.v[at.file].path);
    fprintf(d->out, ":%d:%d:%s ", at.line, at.col, col(d, C_RESET));
  } else {
    fprintf(d->out, "cgc:%s ", col(d, C_RESET));
  }
  /* error[E0004], warning[W0006]; a note has no code of its own. */
  if (code)
    fprintf(d->out, "%s%s[%s]:%s ", col(d, severity), names[severity], code, col(d, C_RESET));
  else
    fprintf(d->out, "%s%s:%s ", col(d, severity), names[severity], col(d, C_RESET));
  fput_escaped(d->out, msg);
  if (*option)
    fprintf(d->out, " [%s]", option);
  fputc('\n', d->out);
  if (at.file >= 0)
    print_line(d, s);
  if (mem) {
    d->out = out;
    if (fclose(mem) == 0)
      fwrite(text, 1, len, out);
    free(text);
  }
}

#define REPORT(sev, warning, span)                                                                 \
  va_list ap;                                                                                      \
  va_start(ap, fmt);                                                                               \
  report(d, span, sev, warning, fmt, ap);                                                          \
  va_end(ap)

void error_at(Diag *d, Pos p, const char *fmt, ...) { REPORT(C_ERROR, -1, span_at(p)); }
void error_span(Diag *d, Span s, const char *fmt, ...) { REPORT(C_ERROR, -1, s); }
void verror_at(Diag *d, Span s, const char *fmt, va_list ap) { report(d, s, C_ERROR, -1, fmt, ap); }
void note_at(Diag *d, Pos p, const char *fmt, ...) { REPORT(C_NOTE, -1, span_at(p)); }
void warn_at(Diag *d, Warning w, Pos p, const char *fmt, ...) {
  REPORT(C_WARNING, (int)w, span_at(p));
}
void warn_span(Diag *d, Warning w, Span s, const char *fmt, ...) { REPORT(C_WARNING, (int)w, s); }

void diag_fix(Diag *d, Span s, const char *text) {
  if (d->dropping || d->stopped || !pos_set(s.at))
    return;
  add_part(d, (DiagPart){.fix = true, .span = s, .text = text});
  if (!text_out(d))
    return;
  /* Under the caret line, where the text goes. */
  Loc at = pos_loc(d, s.at);
  Source *src = &d->sources.v[at.file];
  const char *line = line_start(d, src, at.line);
  int lo, hi;
  diag_span_columns(d, s, &lo, &hi);
  indent_to(d, line, line_end(line, src->text + src->len), lo);
  fputs(col(d, C_CARET), d->out);
  fput_escaped(d->out, text);
  fprintf(d->out, "%s\n", col(d, C_RESET));
}

/* Text shows no edge: the fix under the caret line says it. */
void diag_fix_edge(Diag *d, const char *from, const char *to, Span at, const char *text) {
  if (d->dropping || d->stopped)
    return;
  add_part(d, (DiagPart){.fix = true,
                         .span = at,
                         .text = pos_set(at.at) ? text : NULL,
                         .edge_from = from,
                         .edge_to = to});
}

/* ---- outputs ----
 *
 * A regular file (or a name not yet taken) is replaced as a whole: written
 * to a temporary file beside it, renamed over it once every output of the
 * run is complete.  Through a symlink, the file at the end of the chain is
 * the one replaced.  A device, FIFO or socket, and an open file named
 * through /proc (/dev/stdout, /dev/fd/N), cannot be replaced: it is written
 * in place, from memory, at commit. */

struct Output {
  const char *path; /* as named */
  char *target;     /* the file replaced: path with its symlinks followed */
  char *tmp;        /* the temporary beside target; NULL: written in place */
  int fd;           /* the device written in place, or -1 */
  bool linked;      /* fd is a regular file with other hard links: its bytes
                       are replaced from the start, and it is cut there */
  char *buf;        /* what goes to fd */
  size_t len;
  FILE *f;
};

static char *dup_str(const char *s) { return strcpy(xrealloc(NULL, strlen(s) + 1), s); }

/* The directory part of path, for a file in it: "." when there is none. */
static char *dir_of(const char *path) {
  const char *slash = strrchr(path, '/');
  if (!slash)
    return dup_str(".");
  size_t n = slash == path ? 1 : (size_t)(slash - path);
  char *d = xrealloc(NULL, n + 1);
  memcpy(d, path, n);
  d[n] = 0;
  return d;
}

static const char *base_of(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

typedef struct Resolved {
  char *target;   /* where the chain of symlinks ends (heap) */
  bool exists;    /* target exists; st describes it */
  bool in_place;  /* a device, FIFO, open file or file with other hard
                     links: written, not replaced */
  bool proc_link; /* reached through /proc: an open file, appended to */
  int own_fd;     /* through /proc/self/fd/N (/dev/stdout): N, else -1 */
  struct stat st;
} Resolved;

/* Follows path's symlinks, one at a time, to the file a write would reach.
 * Returns 0, or an errno for a path that cannot be an output.  A link in
 * /proc is not followed by name: it stands for an open file (a pipe, a
 * deleted file) that its name may not reach. */
static int resolve(const char *path, Resolved *r) {
  memset(r, 0, sizeof *r);
  r->own_fd = -1;
  char *cur = dup_str(path);
  for (int hops = 0; hops <= 40; hops++) {
    if (lstat(cur, &r->st) != 0) {
      int err = errno;
      if (err == ENOENT && *cur && cur[strlen(cur) - 1] == '/')
        err = EISDIR; /* as creat() says of a name that ends in '/' */
      if (err != ENOENT) {
        free(cur);
        return err;
      }
      r->target = cur;
      return 0;
    }
    if (S_ISLNK(r->st.st_mode)) {
      char *dir = dir_of(cur);
      struct statfs fs;
      struct stat ds, own;
      bool proc = statfs(dir, &fs) == 0 && fs.f_type == PROC_SUPER_MAGIC;
      if (proc && stat(dir, &ds) == 0 && stat("/proc/self/fd", &own) == 0 &&
          ds.st_dev == own.st_dev && ds.st_ino == own.st_ino)
        r->own_fd = atoi(base_of(cur));
      free(dir);
      if (proc) {
        if (stat(cur, &r->st) != 0) {
          int err = errno;
          free(cur);
          return err;
        }
        r->proc_link = true;
      }
    }
    if (!S_ISLNK(r->st.st_mode)) {
      if (S_ISDIR(r->st.st_mode)) {
        free(cur);
        return EISDIR;
      }
      r->target = cur;
      r->exists = true;
      /* A file with other hard links is rewritten where it is: a new file
       * renamed onto this name would leave the other names the old text. */
      r->in_place = r->proc_link || !S_ISREG(r->st.st_mode) || r->st.st_nlink > 1;
      return 0;
    }
    char to[PATH_MAX];
    ssize_t n = readlink(cur, to, sizeof to);
    if (n < 0 || n == (ssize_t)sizeof to) {
      int err = n < 0 ? errno : ENAMETOOLONG;
      free(cur);
      return err;
    }
    to[n] = 0;
    char *next;
    if (to[0] == '/') {
      next = dup_str(to);
    } else {
      char *dir = dir_of(cur);
      next = xrealloc(NULL, strlen(dir) + (size_t)n + 2);
      sprintf(next, "%s/%s", dir, to);
      free(dir);
    }
    free(cur);
    cur = next;
  }
  free(cur);
  return ELOOP;
}

bool same_file(const char *a, const char *b) {
  Resolved ra, rb;
  bool same = false;
  if (resolve(a, &ra) != 0)
    return false;
  if (resolve(b, &rb) == 0) {
    /* A device, FIFO or open file may take several outputs; a regular
     * file written in place (it has other hard links) may not. */
    if ((ra.in_place && (ra.proc_link || !S_ISREG(ra.st.st_mode))) ||
        (rb.in_place && (rb.proc_link || !S_ISREG(rb.st.st_mode)))) {
      same = false;
    } else if (ra.exists || rb.exists) {
      same = ra.exists && rb.exists && ra.st.st_dev == rb.st.st_dev && ra.st.st_ino == rb.st.st_ino;
    } else {
      /* Neither exists yet: the same name in the same directory. */
      char *da = dir_of(ra.target), *db = dir_of(rb.target);
      struct stat sa, sb;
      same = !strcmp(base_of(ra.target), base_of(rb.target)) && stat(da, &sa) == 0 &&
             stat(db, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
      free(da);
      free(db);
    }
    free(rb.target);
  }
  free(ra.target);
  return same;
}

int flush_stdout(void) {
  errno = 0;
  if (fflush(stdout) != 0)
    return errno ? errno : EIO;
  return ferror(stdout) ? EIO : 0;
}

static void output_error(Outputs *os, const char *path, int err) {
  error_at(os->diag, NO_POS, "cannot write '%s': %s", path, strerror(err));
}

/* Whether rename() could put a file over r's target: its directory's
 * sticky bit (as in /tmp) lets only the file's owner replace it. */
static int check_replace(const Resolved *r) {
  if (faccessat(AT_FDCWD, r->target, W_OK, AT_EACCESS) != 0)
    return errno;
  char *dir = dir_of(r->target);
  struct stat ds;
  int err = 0;
  if (stat(dir, &ds) == 0 && (ds.st_mode & S_ISVTX) && geteuid() != 0 &&
      geteuid() != r->st.st_uid && geteuid() != ds.st_uid)
    err = EPERM;
  free(dir);
  return err;
}

/* Root replacing another user's file gives it back to its owner, or at
 * least its group; a replacement that is not ours to give is the user's. */
static void keep_owner(int fd, const struct stat *st) {
  if ((st->st_uid != geteuid() || st->st_gid != getegid()) &&
      fchown(fd, st->st_uid, st->st_gid) != 0)
    (void)!fchown(fd, (uid_t)-1, st->st_gid);
}

/* The temporary beside r's target: NAME.tmp.XXXXXX, NAME shortened to keep
 * it within NAME_MAX.  It gets the mode the output will have: an existing
 * file's own, or what creat() would give a new one. */
static int open_temporary(Output *o, const Resolved *r) {
  char *dir = dir_of(r->target);
  const char *base = base_of(r->target);
  int keep = (int)strnlen(base, NAME_MAX - 11);
  o->tmp = xrealloc(NULL, strlen(dir) + (size_t)keep + 14);
  sprintf(o->tmp, "%s/%.*s.tmp.XXXXXX", dir, keep, base);
  free(dir);
  int fd = mkstemp(o->tmp);
  if (fd < 0) {
    int err = errno;
    free(o->tmp);
    o->tmp = NULL;
    return err;
  }
  mode_t mode;
  if (r->exists) {
    keep_owner(fd, &r->st); /* before the mode: fchown clears set-id bits */
    mode = r->st.st_mode & 07777;
  } else {
    mode_t mask = umask(0);
    umask(mask);
    mode = 0666 & ~mask;
  }
  if (fchmod(fd, mode) != 0 || !(o->f = fdopen(fd, "w"))) {
    int err = errno;
    close(fd);
    unlink(o->tmp);
    free(o->tmp);
    o->tmp = NULL;
    return err;
  }
  o->target = r->target;
  return 0;
}

FILE *output_add(Outputs *os, const char *path) {
  /* On the heap: the memory stream keeps the addresses of buf and len. */
  Output *o = xrealloc(NULL, sizeof *o);
  *o = (Output){.path = path, .fd = -1};
  Resolved r;
  int err = resolve(path, &r);
  if (!err && r.in_place) {
    /* One of cgc's own descriptors is written through itself, sharing its
     * offset as standard output would; opened again, a pipe or file the
     * shell made could refuse the user, and the offset would be lost. */
    int flags = r.own_fd >= 0 ? fcntl(r.own_fd, F_GETFL) : -1;
    o->linked = !r.proc_link && r.own_fd < 0 && S_ISREG(r.st.st_mode);
    if (r.own_fd < 0)
      o->fd = open(path, (o->linked ? O_RDWR : O_WRONLY) | O_NOCTTY | O_CLOEXEC |
                             (r.proc_link ? O_APPEND : 0));
    else if ((flags & O_ACCMODE) == O_WRONLY || (flags & O_ACCMODE) == O_RDWR)
      o->fd = fcntl(r.own_fd, F_DUPFD_CLOEXEC, 0);
    else
      errno = EBADF;
    if (o->fd < 0 || !(o->f = open_memstream(&o->buf, &o->len)))
      err = errno;
    free(r.target);
  } else if (!err) {
    if (r.exists)
      err = check_replace(&r);
    if (!err)
      err = open_temporary(o, &r);
    if (err)
      free(r.target);
  }
  if (err) {
    if (o->fd >= 0)
      close(o->fd);
    free(o);
    output_error(os, path, err);
    return NULL;
  }
  vec_push(&os->v, o);
  return o->f;
}

static void output_discard(Output *o) {
  if (o->f)
    fclose(o->f);
  if (o->fd >= 0)
    close(o->fd);
  if (o->tmp)
    unlink(o->tmp);
  free(o->tmp);
  free(o->target);
  free(o->buf);
  free(o);
}

void outputs_abort(Outputs *os) {
  for (size_t i = 0; i < os->v.n; i++)
    output_discard(os->v.v[i]);
  vec_free(&os->v);
}

/* Closes o's stream: 0, or the errno of its first failed write. */
static int output_close(Output *o) {
  errno = 0;
  int err = fflush(o->f) != 0 ? errno : ferror(o->f) ? EIO : 0;
  if (fclose(o->f) != 0 && !err)
    err = errno ? errno : EIO;
  o->f = NULL;
  return err;
}

static int write_all(int fd, const char *s, size_t n) {
  while (n) {
    ssize_t k = write(fd, s, n);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0)
      return k < 0 ? errno : EIO;
    s += k, n -= (size_t)k;
  }
  return 0;
}

/* A regular file written in place (it has other hard links): left as it
 * is when it holds the bytes already, else written from its start and cut
 * at their end. */
static int rewrite(int fd, const char *s, size_t n) {
  struct stat st;
  if (fstat(fd, &st) != 0)
    return errno;
  if ((size_t)st.st_size == n) {
    char old[4096];
    size_t at = 0;
    while (at < n) {
      ssize_t k = pread(fd, old, n - at < sizeof old ? n - at : sizeof old, (off_t)at);
      if (k <= 0 || memcmp(old, s + at, (size_t)k))
        break;
      at += (size_t)k;
    }
    if (at == n)
      return 0;
  }
  if (lseek(fd, 0, SEEK_SET) != 0)
    return errno;
  int err = write_all(fd, s, n);
  if (!err && ftruncate(fd, (off_t)n) != 0)
    err = errno;
  return err;
}

/* Whether the temporary holds exactly the bytes of the file it would
 * replace: then the file is left as it is, time stamp and all, so that a
 * build tool sees no change (an edited comment rebuilds nothing that
 * includes the header).  Anything unreadable counts as different. */
static bool same_content(const char *tmp, const char *target) {
  /* O_NONBLOCK: a target swapped for a FIFO since must not block the run. */
  int a = open(tmp, O_RDONLY | O_CLOEXEC),
      b = open(target, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  struct stat sa, sb;
  bool same = a >= 0 && b >= 0 && fstat(a, &sa) == 0 && fstat(b, &sb) == 0 && S_ISREG(sb.st_mode) &&
              sa.st_size == sb.st_size;
  static char ba[65536], bb[65536];
  while (same) {
    ssize_t na = read(a, ba, sizeof ba), nb = na > 0 ? read(b, bb, (size_t)na) : 0;
    if (na <= 0) {
      same = na == 0;
      break;
    }
    same = nb == na && !memcmp(ba, bb, (size_t)na);
  }
  if (a >= 0)
    close(a);
  if (b >= 0)
    close(b);
  return same;
}

/* All or nothing: every output is complete (all its bytes written and
 * closed) before the first is put in place.  Devices are written next,
 * then the temporaries renamed, the first added last; only a rename
 * failing there, as the directory changes under cgc, could leave some
 * outputs new and others old, and then each of the new ones is named. */
bool outputs_commit(Outputs *os) {
  Output **v = os->v.v;
  size_t n = os->v.n, i;
  int err = 0;
  for (i = 0; i < n && !err; i++)
    err = output_close(v[i]);
  if (err) {
    output_error(os, v[i - 1]->path, err);
    outputs_abort(os);
    return false;
  }
  for (i = 0; i < n && !err; i++)
    if (v[i]->fd >= 0 && v[i]->linked) {
      err = rewrite(v[i]->fd, v[i]->buf, v[i]->len);
      if (close(v[i]->fd) != 0 && !err && errno != EINTR)
        err = errno;
      v[i]->fd = -1;
    } else if (v[i]->fd >= 0) {
      err = write_all(v[i]->fd, v[i]->buf, v[i]->len);
      if (close(v[i]->fd) != 0 && !err && errno != EINTR)
        err = errno;
      v[i]->fd = -1;
    }
  if (err) {
    output_error(os, v[i - 1]->path, err);
    outputs_abort(os);
    return false;
  }
  for (i = n; i-- > 0;)
    if (v[i]->tmp) {
      if (same_content(v[i]->tmp, v[i]->target)) {
        unlink(v[i]->tmp);
      } else if (rename(v[i]->tmp, v[i]->target) != 0) {
        err = errno;
        break;
      }
      free(v[i]->tmp);
      v[i]->tmp = NULL;
    }
  if (err) {
    output_error(os, v[i]->path, err);
    for (size_t k = 0; k < n; k++)
      if (!v[k]->tmp)
        note_at(os->diag, NO_POS, "'%s' was written all the same", v[k]->path);
  }
  outputs_abort(os);
  return !err;
}
