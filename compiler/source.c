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

/* The column just past the token that starts at p: a word or number, a
 * string, a two-character operator, or one character. */
static int token_end(Diag *d, Pos p) {
  const Source *s = &d->sources.v[p.file];
  const char *line = s->text, *end = s->text + s->len;
  for (int n = 1; n < p.line && line < end; n++) {
    const char *nl = memchr(line, '\n', (size_t)(end - line));
    line = nl ? nl + 1 : end;
  }
  const char *c = line + p.col - 1;
  if (c >= end || *c == '\n')
    return p.col;
  const char *q = c + 1;
  if (isalnum((unsigned char)*c) || *c == '_') {
    while (q < end && (isalnum((unsigned char)*q) || *q == '_' || (*q == '.' && q + 1 < end &&
                                                                   isdigit((unsigned char)q[1]))))
      q++;
  } else if (*c == '"') {
    while (q < end && *q != '"' && *q != '\n')
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
  const char *line = s->text, *end = s->text + s->len;
  for (int n = 1; n < p.line && line < end; n++) {
    const char *nl = memchr(line, '\n', (size_t)(end - line));
    line = nl ? nl + 1 : end;
  }
  const char *eol = memchr(line, '\n', (size_t)(end - line));
  if (!eol)
    eol = end;
  if (eol > line && eol[-1] == '\r')
    eol--;
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
  /* A line break or escape sequence in a file name or message must not
   * split the FILE:LINE:COL line or reach the terminal. */
  fputs(col(d, C_BOLD), d->out);
  if (p.file >= 0) {
    fput_escaped(d->out, d->sources.v[p.file].path);
    fprintf(d->out, ":%d:%d:%s ", p.line, p.col, col(d, C_RESET));
  } else {
    fprintf(d->out, "cgc:%s ", col(d, C_RESET));
  }
  fprintf(d->out, "%s%s:%s ", col(d, severity), names[severity], col(d, C_RESET));
  fput_escaped(d->out, msg);
  fputc('\n', d->out);
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

