/* lsp_rpc.c: the JSON-RPC transport of `cgc lsp` (messages framed by
 * Content-Length on standard input and output) and LSP's positions (lines
 * and UTF-16 code units, or bytes) against byte offsets. */
#include "lsp_internal.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- messages ---- */

/* JSON holds Unicode, and LSP sends it as UTF-8, but cJSON copies a
 * string's bytes as they are: a byte that is not part of valid UTF-8 (a
 * string of the document, \xff, or a file name can hold any) becomes
 * \ufffd, as in cgc's own JSON diagnostics.  Outside strings cJSON writes
 * only ASCII. */
static char *valid_utf8(char *text) {
  size_t bad = 0;
  for (const char *s = text; *s; s += utf8_len(s) ? utf8_len(s) : 1)
    bad += !utf8_len(s);
  if (!bad)
    return text;
  char *out = xrealloc(NULL, strlen(text) + 5 * bad + 1), *o = out;
  for (const char *s = text; *s;) {
    int n = utf8_len(s);
    if (n) {
      memcpy(o, s, (size_t)n);
      o += n, s += n;
    } else {
      memcpy(o, "\\ufffd", 6);
      o += 6, s++;
    }
  }
  *o = 0;
  free(text);
  return out;
}

static void send_msg(cJSON *msg) {
  char *text = cJSON_PrintUnformatted(msg);
  cJSON_Delete(msg);
  if (!text) {
    fputs("cgc lsp: out of memory\n", stderr);
    exit(2);
  }
  text = valid_utf8(text);
  size_t n = strlen(text);
  printf("Content-Length: %zu\r\n\r\n", n);
  fwrite(text, 1, n, stdout);
  fflush(stdout);
  free(text);
}

static cJSON *new_msg(void) {
  cJSON *m = cJSON_CreateObject();
  cJSON_AddStringToObject(m, "jsonrpc", "2.0");
  return m;
}

void reply(const cJSON *id, cJSON *result) {
  cJSON *m = new_msg();
  cJSON_AddItemToObject(m, "id", id ? cJSON_Duplicate(id, true) : cJSON_CreateNull());
  cJSON_AddItemToObject(m, "result", result ? result : cJSON_CreateNull());
  send_msg(m);
}

void reply_error(const cJSON *id, int code, const char *fmt, ...) {
  char text[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  cJSON *m = new_msg(), *e = cJSON_CreateObject();
  cJSON_AddItemToObject(m, "id", id ? cJSON_Duplicate(id, true) : cJSON_CreateNull());
  cJSON_AddNumberToObject(e, "code", code);
  cJSON_AddStringToObject(e, "message", text);
  cJSON_AddItemToObject(m, "error", e);
  send_msg(m);
}

void notify(const char *method, cJSON *params) {
  cJSON *m = new_msg();
  cJSON_AddStringToObject(m, "method", method);
  cJSON_AddItemToObject(m, "params", params);
  send_msg(m);
}

/* Reads one message's body (heap, NUL-terminated) into *body: 1, or 0 at
 * the end of input, or -1 for a header without a usable Content-Length
 * (the body, if any, cannot be found: what follows is read as headers). */
int read_message(char **body, size_t *len) {
  char line[1024];
  long long length = -1;
  bool any = false, too_long = false;
  for (;;) {
    /* A byte at a time, counted: a NUL is a byte of the line like any
     * other, and only what is left of this line is skipped. */
    size_t n = 0;
    int ch;
    while ((ch = getchar()) != EOF && ch != '\n')
      if (n < sizeof line - 1)
        line[n++] = (char)ch; /* past that, a header line this long is none of LSP's */
    if (ch == EOF && !n)
      return any ? -1 : 0;
    line[n] = 0;
    while (n && line[n - 1] == '\r')
      line[--n] = 0;
    if (!n) {
      if (!any)
        continue; /* blank lines between messages */
      break;
    }
    any = true;
    if (!strncasecmp(line, "Content-Length:", 15)) {
      char *end;
      errno = 0;
      long long v = strtoll(line + 15, &end, 10);
      while (*end == ' ' || *end == '\t')
        end++;
      length = errno || end != line + n || v < 0 || end == line + 15 ? -1 : v;
      too_long = length >= 0 && (unsigned long long)length > MAX_MESSAGE;
    }
  }
  if (length < 0)
    return -1;
  if (too_long) {
    for (long long i = 0; i < length && getchar() != EOF; i++)
      ;
    *body = NULL;
    *len = 0;
    return 1;
  }
  char *b = xrealloc(NULL, (size_t)length + 1);
  size_t got = fread(b, 1, (size_t)length, stdin);
  b[got] = 0;
  if (got < (size_t)length) {
    free(b);
    return 0;
  }
  *body = b;
  *len = got;
  return 1;
}

/* ---- positions ----
 *
 * The compiler counts lines from 1 and columns in bytes from 1; LSP counts
 * both from 0, and columns in UTF-16 code units unless the client takes
 * utf-8.  Lines end at LF, CR LF or a lone CR for both. */

static const Lines *lines_of(const Server *s, const char *t, size_t n) {
  Lines *l = s->lines;
  if (l->t == t && l->n == n && l->start.n)
    return l;
  l->t = t, l->n = n, l->start.n = 0;
  vec_push(&l->start, 0);
  for (size_t i = 0; i < n; i++)
    if (t[i] == '\n' || (t[i] == '\r' && !(i + 1 < n && t[i + 1] == '\n')))
      vec_push(&l->start, i + 1);
  return l;
}

/* The byte offset of 0-based line `line` (n past the last). */
size_t line_offset(const Server *s, const char *t, size_t n, int64_t line) {
  const Lines *l = lines_of(s, t, n);
  return line >= 0 && (uint64_t)line < l->start.n ? l->start.v[line] : n;
}

size_t line_end(const char *t, size_t n, size_t i) {
  while (i < n && t[i] != '\n' && t[i] != '\r')
    i++;
  return i;
}

/* Code units of t[from, to). */
static int64_t units(const Server *s, const char *t, size_t from, size_t to) {
  if (s->utf8)
    return (int64_t)(to - from);
  int64_t u = 0;
  for (size_t i = from; i < to;) {
    int k = utf8_len(t + i);
    if (k == 0 || i + (size_t)k > to)
      k = 1;
    u += k == 4 ? 2 : 1;
    i += (size_t)k;
  }
  return u;
}

/* The byte offset of character `ch` (code units) of the line [ls, le). */
size_t byte_at(const Server *s, const char *t, size_t ls, size_t le, int64_t ch) {
  size_t i = ls;
  for (int64_t u = 0; i < le && u < ch;) {
    int k = s->utf8 ? 1 : utf8_len(t + i);
    if (k == 0 || i + (size_t)k > le)
      k = 1;
    u += k == 4 ? 2 : 1;
    i += (size_t)k;
  }
  return i;
}

cJSON *lsp_pos(const Server *s, const char *t, size_t n, int64_t line, int64_t col) {
  cJSON *p = cJSON_CreateObject();
  if (line < 1)
    line = 1;
  size_t ls = line_offset(s, t, n, line - 1), le = line_end(t, n, ls);
  size_t at = col < 1 ? ls : ls + (size_t)(col - 1);
  if (at > le)
    at = le;
  cJSON_AddNumberToObject(p, "line", (double)(line - 1));
  cJSON_AddNumberToObject(p, "character", (double)units(s, t, ls, at));
  return p;
}

/* The LSP position of byte offset `off`. */
cJSON *lsp_pos_at(const Server *s, const char *t, size_t n, size_t off) {
  const Lines *l = lines_of(s, t, n);
  if (off > n)
    off = n;
  size_t lo = 0, hi = l->start.n; /* the last line that starts at or before off */
  while (hi - lo > 1) {
    size_t mid = lo + (hi - lo) / 2;
    if (l->start.v[mid] <= off)
      lo = mid;
    else
      hi = mid;
  }
  return lsp_pos(s, t, n, (int64_t)lo + 1, (int64_t)(off - l->start.v[lo]) + 1);
}

cJSON *lsp_range(cJSON *start, cJSON *end) {
  cJSON *r = cJSON_CreateObject();
  cJSON_AddItemToObject(r, "start", start);
  cJSON_AddItemToObject(r, "end", end);
  return r;
}

bool ident_char(char c) { return isalnum((unsigned char)c) || c == '_'; }

/* Just past the comment that starts at i (n if it is not closed), or i
 * where none starts there. */
static size_t past_comment(const char *t, size_t n, size_t i) {
  if (t[i] != '/' || i + 1 >= n)
    return i;
  if (t[i + 1] == '/')
    return line_end(t, n, i);
  if (t[i + 1] != '*')
    return i;
  for (size_t k = i + 2; k + 1 < n; k++)
    if (t[k] == '*' && t[k + 1] == '/')
      return k + 2;
  return n;
}

/* Where the text after `off` has other than white space and comments. */
static size_t skip_blank(const char *t, size_t n, size_t off) {
  while (off < n) {
    size_t e = isspace((unsigned char)t[off]) ? off + 1 : past_comment(t, n, off);
    if (e == off)
      break;
    off = e;
  }
  return off;
}

/* Where the statement or item that starts at `off` ends: just past its ';'
 * or the '}' that closes its first block (an if's: its last else's),
 * brackets, comments and strings skipped. */
size_t extent_end(const char *t, size_t n, size_t off) {
  int depth = 0;
  for (size_t i = off; i < n; i++) {
    char c = t[i];
    size_t past = past_comment(t, n, i);
    if (past != i) {
      i = past - 1; /* the loop steps past it */
    } else if (c == '"') {
      for (i++; i < n && t[i] != '"' && t[i] != '\n' && t[i] != '\r'; i++)
        if (t[i] == '\\')
          i++;
    } else if (c == '(' || c == '[' || c == '{') {
      depth++;
    } else if (c == ')' || c == ']' || c == '}') {
      if (--depth <= 0 && c == '}') {
        size_t e = skip_blank(t, n, i + 1);
        if (depth == 0 && e + 4 <= n && !memcmp(t + e, "else", 4) &&
            (e + 4 == n || !ident_char(t[e + 4]))) {
          i = e + 3; /* on through the else, or the else if */
          continue;
        }
        return i + 1;
      }
      if (depth < 0)
        return i;
    } else if (c == ';' && depth <= 0) {
      return i + 1;
    }
  }
  return n;
}
