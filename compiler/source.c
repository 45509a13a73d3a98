/* source.c: source files in memory and the diagnostics that point into them.
 *
 * Positions are line and byte column; the line text is found only when a
 * diagnostic is printed.  The same message at the same place is printed
 * once, so an error inside a `for` body does not repeat per iteration. */
#include "cgc.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct Diag {
  Arena *arena;
  VEC(Source) sources;
  Map seen; /* "file:line:col:severity:message" -> itself */
  int errors;
  FILE *out; /* where diagnostics go: stderr unless told */
  bool color;
  bool json;
  VEC(char) pending; /* json: the diagnostic whose notes may still come */
  bool stopped;
  bool dropping; /* the last error was not printed: drop its notes too */
};

Diag *diag_new(void) {
  Diag *d = xrealloc(NULL, sizeof *d);
  memset(d, 0, sizeof *d);
  d->arena = arena_new();
  d->seen.by_string = true;
  d->out = stderr;
  return d;
}

void diag_free(Diag *d) {
  if (!d)
    return;
  for (size_t i = 0; i < d->sources.n; i++)
    free(d->sources.v[i].realpath);
  diag_flush(d);
  vec_free(&d->sources);
  vec_free(&d->pending);
  map_free(&d->seen);
  arena_free(d->arena);
  free(d);
}

void diag_set_color(Diag *d, bool on) { d->color = on; }
void diag_set_json(Diag *d, bool on) { d->json = on; }
void diag_set_output(Diag *d, FILE *out) { d->out = out; }

static void put(Diag *d, const char *s, size_t n) {
  for (size_t i = 0; i < n; i++)
    vec_push(&d->pending, s[i]);
}

static void put_str(Diag *d, const char *s) { put(d, s, strlen(s)); }

static void put_json_string(Diag *d, const char *s) {
  put_str(d, "\"");
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    char buf[8];
    if (c == '"' || c == '\\') {
      buf[0] = '\\', buf[1] = (char)c;
      put(d, buf, 2);
    } else if (c < 0x20) {
      snprintf(buf, sizeof buf, "\\u%04x", c);
      put_str(d, buf);
    } else {
      put(d, (const char *)&c, 1);
    }
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

/* The start of 1-based line `n` of a source. */
static const char *line_start(const Source *s, int n) {
  const char *line = s->text, *end = s->text + s->len;
  for (int i = 1; i < n && line < end; i++) {
    line = line_end(line, end);
    if (line < end && *line == '\r' && line + 1 < end && line[1] == '\n')
      line++;
    if (line < end)
      line++;
  }
  return line;
}

/* The column just past the token that starts at p: a word or number, a
 * string, a two-character operator, or one character. */
static int token_end(Diag *d, Pos p) {
  const Source *s = &d->sources.v[p.file];
  const char *line = line_start(s, p.line), *end = s->text + s->len;
  const char *c = line + p.col - 1;
  if (c >= end || *c == '\n' || *c == '\r')
    return p.col;
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
  return p.col + (int)(q - c);
}

static void put_position(Diag *d, Pos p) {
  char buf[160];
  if (p.file < 0) {
    put_str(d, "\"file\":null,\"line\":0,\"column\":0,\"end\":null");
    return;
  }
  put_str(d, "\"file\":");
  put_json_string(d, d->sources.v[p.file].path);
  snprintf(buf, sizeof buf, ",\"line\":%d,\"column\":%d,\"end\":{\"line\":%d,\"column\":%d}",
           p.line, p.col, p.line, token_end(d, p));
  put_str(d, buf);
}

void diag_flush(Diag *d) {
  if (!d->pending.n)
    return;
  put_str(d, "]}\n");
  fwrite(d->pending.v, 1, d->pending.n, d->out);
  d->pending.n = 0;
}

static void report_json(Diag *d, Pos p, const char *severity, const char *msg) {
  if (strcmp(severity, "note")) {
    diag_flush(d);
    put_str(d, "{");
    put_position(d, p);
    put_str(d, ",\"severity\":\"");
    put_str(d, severity);
    put_str(d, "\",\"message\":");
    put_json_string(d, msg);
    put_str(d, ",\"notes\":[");
    return;
  }
  if (!d->pending.n)
    return;
  if (d->pending.v[d->pending.n - 1] != '[')
    put_str(d, ",");
  put_str(d, "{");
  put_position(d, p);
  put_str(d, ",\"message\":");
  put_json_string(d, msg);
  put_str(d, "}");
}
int diag_errors(const Diag *d) { return d->errors; }
bool diag_stopped(const Diag *d) { return d->stopped; }
const Source *source_get(Diag *d, int file) { return &d->sources.v[file]; }

int source_add(Diag *d, const char *path, const char *text, size_t len) {
  char *copy = arena_alloc(d->arena, len + 1);
  memcpy(copy, text, len);
  Source s = {.path = arena_strdup(d->arena, path), .text = copy, .len = len};
  vec_push(&d->sources, s);
  return (int)d->sources.n - 1;
}

int source_load(Diag *d, const char *path, Pos at) {
  FILE *f = fopen(path, "rb");
  struct stat st;
  if (!f || fstat(fileno(f), &st) != 0 || S_ISDIR(st.st_mode)) {
    int err = f ? (S_ISDIR(st.st_mode) ? EISDIR : errno) : errno;
    if (f)
      fclose(f);
    error_at(d, at, "cannot read '%s': %s", path, strerror(err));
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
  s.realpath = realpath(path, NULL);
  vec_push(&d->sources, s);
  return (int)d->sources.n - 1;
}

enum { C_RESET, C_BOLD, C_ERROR, C_WARNING, C_NOTE, C_CARET };
static const char *const colors[] = {"\033[0m", "\033[1m", "\033[1;31m",
                                     "\033[1;35m", "\033[1;36m", "\033[1;32m"};

static const char *col(const Diag *d, int which) {
  return d->color ? colors[which] : "";
}

static void print_line(Diag *d, Pos p) {
  const Source *s = &d->sources.v[p.file];
  const char *line = line_start(s, p.line);
  const char *eol = line_end(line, s->text + s->len);
  fputs("    ", d->out);
  for (const char *c = line; c < eol; c++)
    fputc(*c ? *c : ' ', d->out);
  fputs("\n    ", d->out);
  /* Keep tabs so the caret lines up under the same columns. */
  for (int i = 1; i < p.col && line + i - 1 < eol; i++)
    fputc(line[i - 1] == '\t' ? '\t' : ' ', d->out);
  fprintf(d->out, "%s^%s\n", col(d, C_CARET), col(d, C_RESET));
}

static void report(Diag *d, Pos p, int severity, const char *fmt, va_list ap) {
  static const char *const names[] = {[C_ERROR] = "error",
                                      [C_WARNING] = "warning",
                                      [C_NOTE] = "note"};
  char msg[2048];
  vsnprintf(msg, sizeof msg, fmt, ap);

  if (severity == C_NOTE && d->dropping)
    return;
  if (severity == C_ERROR) {
    d->dropping = true;
    if (d->stopped)
      return;
    char *key = arena_printf(d->arena, "%d:%d:%d:%s", p.file, p.line, p.col,
                             msg);
    if (map_get(&d->seen, key))
      return;
    map_put(&d->seen, key, key);
    d->dropping = false;
    if (d->errors == MAX_ERRORS) {
      d->stopped = true;
      d->dropping = true;
      if (d->json)
        report_json(d, (Pos){.file = -1}, "error", "too many errors; stopping");
      else
        fprintf(d->out, "cgc: %serror:%s too many errors; stopping\n", col(d, C_ERROR),
                col(d, C_RESET));
      return;
    }
    d->errors++;
  }
  if (severity == C_WARNING)
    d->dropping = false;
  if (d->json) {
    report_json(d, p, names[severity], msg);
    return;
  }
  if (p.file >= 0)
    fprintf(d->out, "%s%s:%d:%d:%s ", col(d, C_BOLD),
            d->sources.v[p.file].path, p.line, p.col, col(d, C_RESET));
  else
    fprintf(d->out, "%scgc:%s ", col(d, C_BOLD), col(d, C_RESET));
  fprintf(d->out, "%s%s:%s %s\n", col(d, severity), names[severity],
          col(d, C_RESET), msg);
  if (p.file >= 0)
    print_line(d, p);
}

#define REPORT(sev)                                                            \
  va_list ap;                                                                  \
  va_start(ap, fmt);                                                           \
  report(d, p, sev, fmt, ap);                                                  \
  va_end(ap)

void error_at(Diag *d, Pos p, const char *fmt, ...) { REPORT(C_ERROR); }
void warning_at(Diag *d, Pos p, const char *fmt, ...) { REPORT(C_WARNING); }
void note_at(Diag *d, Pos p, const char *fmt, ...) { REPORT(C_NOTE); }

/* Writes through a temporary file beside `path`, renamed into place only
 * when complete, so a failure never leaves a truncated output. */
bool output_open(Output *o, const char *path) {
  o->path = path;
  size_t n = strlen(path);
  o->tmp = xrealloc(NULL, n + 16);
  snprintf(o->tmp, n + 16, "%s.tmp.XXXXXX", path);
  int fd = mkstemp(o->tmp);
  if (fd < 0 || !(o->f = fdopen(fd, "w"))) {
    fprintf(stderr, "cgc: error: cannot write '%s': %s\n", path, strerror(errno));
    if (fd >= 0) {
      close(fd);
      unlink(o->tmp);
    }
    free(o->tmp);
    o->tmp = NULL;
    return false;
  }
  return true;
}

bool output_commit(Output *o) {
  bool ok = !ferror(o->f);
  ok = fclose(o->f) == 0 && ok;
  if (ok && rename(o->tmp, o->path) != 0)
    ok = false;
  if (!ok) {
    fprintf(stderr, "cgc: error: cannot write '%s': %s\n", o->path, strerror(errno));
    unlink(o->tmp);
  }
  free(o->tmp);
  return ok;
}

void output_abort(Output *o) {
  fclose(o->f);
  unlink(o->tmp);
  free(o->tmp);
}

