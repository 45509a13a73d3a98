/* safetensors.c: maps a safetensors file and checks its header with a
 * strict JSON parser of the little that the header uses: objects, strings
 * (with every escape, and nothing but valid UTF-8), arrays of integers. */
#include "safetensors.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* The spec's limit on the header (100 MB), well above the 5,000 tensors of
 * the real checkpoint. */
#define ST_MAX_HEADER (100u * 1000 * 1000)

static const struct {
  const char *name;
  StDtype dtype;
  size_t size;
} dtypes[] = {
    {"BF16", ST_BF16, 2},  {"F16", ST_F16, 2},       {"F32", ST_F32, 4},       {"F64", ST_OTHER, 8},
    {"I64", ST_OTHER, 8},  {"U64", ST_OTHER, 8},     {"I32", ST_OTHER, 4},     {"U32", ST_OTHER, 4},
    {"I16", ST_OTHER, 2},  {"U16", ST_OTHER, 2},     {"I8", ST_OTHER, 1},      {"U8", ST_OTHER, 1},
    {"BOOL", ST_OTHER, 1}, {"F8_E4M3", ST_OTHER, 1}, {"F8_E5M2", ST_OTHER, 1},
};

size_t st_dtype_size(StDtype d) {
  for (size_t i = 0; i < sizeof dtypes / sizeof *dtypes; i++)
    if (dtypes[i].dtype == d && d != ST_OTHER)
      return dtypes[i].size;
  return 0;
}

/* The parser's state: the header's bytes and where the first error went. */
typedef struct Parser {
  const char *path;
  const unsigned char *begin, *p, *end;
  char *err;
  size_t errlen;
} Parser;

static int fail(Parser *ps, const char *fmt, ...) {
  int n =
      snprintf(ps->err, ps->errlen, "%s: header byte %zu: ", ps->path, (size_t)(ps->p - ps->begin));
  if (n >= 0 && (size_t)n < ps->errlen) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ps->err + n, ps->errlen - (size_t)n, fmt, ap);
    va_end(ap);
  }
  return 1;
}

/* A byte for a message: 'c' when it is printable ASCII, else its value, so
 * that a NUL, a control character or a stray UTF-8 byte neither cuts the
 * message short nor reaches a terminal raw. */
static const char *shown(unsigned c, char out[12]) {
  if (c > 0x20 && c < 0x7f)
    snprintf(out, 12, "'%c'", (char)c);
  else
    snprintf(out, 12, "byte 0x%02x", c & 0xff);
  return out;
}

static void skip_space(Parser *ps) {
  while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
    ps->p++;
}

static int expect(Parser *ps, char c) {
  skip_space(ps);
  if (ps->p >= ps->end)
    return fail(ps, "expected '%c', found the end of the header", c);
  if (*ps->p != c)
    return fail(ps, "expected '%c', found %s", c, shown(*ps->p, (char[12]){0}));
  ps->p++;
  return 0;
}

/* Appends code point cp as UTF-8. */
static size_t put_utf8(unsigned char *out, uint32_t cp) {
  if (cp < 0x80) {
    out[0] = (unsigned char)cp;
    return 1;
  }
  if (cp < 0x800) {
    out[0] = (unsigned char)(0xc0 | cp >> 6);
    out[1] = (unsigned char)(0x80 | (cp & 0x3f));
    return 2;
  }
  if (cp < 0x10000) {
    out[0] = (unsigned char)(0xe0 | cp >> 12);
    out[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
    out[2] = (unsigned char)(0x80 | (cp & 0x3f));
    return 3;
  }
  out[0] = (unsigned char)(0xf0 | cp >> 18);
  out[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3f));
  out[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
  out[3] = (unsigned char)(0x80 | (cp & 0x3f));
  return 4;
}

static int hex4(Parser *ps, uint32_t *v) {
  *v = 0;
  for (int i = 0; i < 4; i++, ps->p++) {
    if (ps->p >= ps->end)
      return fail(ps, "unterminated \\u escape");
    unsigned c = *ps->p;
    unsigned d = c >= '0' && c <= '9'   ? c - '0'
                 : c >= 'a' && c <= 'f' ? c - 'a' + 10
                 : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                        : 16;
    if (d == 16)
      return fail(ps, "%s is not a hexadecimal digit in a \\u escape", shown(c, (char[12]){0}));
    *v = *v << 4 | d;
  }
  return 0;
}

/* The length of the UTF-8 sequence at p (before end), or 0 when it is not
 * one: a stray continuation byte, a sequence cut short, an overlong form, a
 * surrogate or a code point past U+10FFFF. */
static size_t utf8_length(const unsigned char *p, const unsigned char *end) {
  size_t n = p[0] >= 0xc2 && p[0] <= 0xdf   ? 2
             : p[0] >= 0xe0 && p[0] <= 0xef ? 3
             : p[0] >= 0xf0 && p[0] <= 0xf4 ? 4
                                            : 0;
  if (!n || (size_t)(end - p) < n)
    return 0;
  for (size_t i = 1; i < n; i++)
    if ((p[i] & 0xc0) != 0x80)
      return 0;
  if ((p[0] == 0xe0 && p[1] < 0xa0) || (p[0] == 0xed && p[1] > 0x9f) ||
      (p[0] == 0xf0 && p[1] < 0x90) || (p[0] == 0xf4 && p[1] > 0x8f))
    return 0;
  return n;
}

/* A JSON string, decoded into a new NUL-terminated string (the escapes'
 * UTF-8 is never longer than the escape). */
static int parse_string(Parser *ps, char **out) {
  *out = NULL;
  skip_space(ps);
  if (ps->p >= ps->end || *ps->p != '"')
    return fail(ps, ps->p >= ps->end ? "expected a string, found the end of the header"
                                     : "expected a string");
  ps->p++;
  const unsigned char *start = ps->p;
  while (ps->p < ps->end && *ps->p != '"')
    ps->p += *ps->p == '\\' ? 2 : 1;
  if (ps->p >= ps->end) {
    ps->p = start - 1;
    return fail(ps, "unterminated string");
  }
  const unsigned char *stop = ps->p;
  unsigned char *s = malloc((size_t)(stop - start) + 1), *o = s;
  if (!s)
    return fail(ps, "out of memory");
  for (ps->p = start; ps->p < stop;) {
    unsigned char c = *ps->p;
    if (c < 0x20) {
      free(s);
      return fail(ps, "control character 0x%02x in a string", c);
    }
    if (c >= 0x80) {
      size_t n = utf8_length(ps->p, stop);
      if (!n) {
        free(s);
        return fail(ps, "byte 0x%02x is not valid UTF-8 in a string", c);
      }
      memcpy(o, ps->p, n);
      o += n;
      ps->p += n;
      continue;
    }
    if (c != '\\') {
      *o++ = c;
      ps->p++;
      continue;
    }
    ps->p++;
    c = *ps->p++;
    const char *simple = strchr("\"\"\\\\//b\bf\fn\nr\rt\t", c);
    if (c && simple && (simple - "\"\"\\\\//b\bf\fn\nr\rt\t") % 2 == 0) {
      *o++ = (unsigned char)simple[1];
      continue;
    }
    if (c != 'u') {
      ps->p--;
      free(s);
      return fail(ps,
                  c > 0x20 && c < 0x7f ? "unknown escape '\\%c'"
                                       : "unknown escape: a backslash, then byte 0x%02x",
                  c);
    }
    uint32_t cp;
    if (hex4(ps, &cp))
      return free(s), 1;
    if (cp >= 0xdc00 && cp <= 0xdfff) {
      free(s);
      return fail(ps, "a low surrogate \\u%04x without a high one", (unsigned)cp);
    }
    if (cp >= 0xd800 && cp <= 0xdbff) {
      uint32_t lo;
      if (ps->p + 2 > stop || ps->p[0] != '\\' || ps->p[1] != 'u') {
        free(s);
        return fail(ps, "a high surrogate \\u%04x without a low one", (unsigned)cp);
      }
      ps->p += 2;
      if (hex4(ps, &lo))
        return free(s), 1;
      if (lo < 0xdc00 || lo > 0xdfff) {
        free(s);
        return fail(ps, "a high surrogate \\u%04x without a low one", (unsigned)cp);
      }
      cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
    }
    if (cp == 0) {
      free(s);
      return fail(ps, "\\u0000 in a string");
    }
    o += put_utf8(o, cp);
  }
  *o = 0;
  ps->p = stop + 1;
  *out = (char *)s;
  return 0;
}

/* A non-negative JSON integer (no sign, fraction or exponent). */
static int parse_uint(Parser *ps, uint64_t *v) {
  skip_space(ps);
  if (ps->p >= ps->end)
    return fail(ps, "expected an integer, found the end of the header");
  if (*ps->p == '-')
    return fail(ps, "expected a non-negative integer");
  if (*ps->p < '0' || *ps->p > '9')
    return fail(ps, "expected an integer");
  if (*ps->p == '0' && ps->p + 1 < ps->end && ps->p[1] >= '0' && ps->p[1] <= '9')
    return fail(ps, "an integer with a leading zero");
  *v = 0;
  const unsigned char *start = ps->p;
  while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9') {
    unsigned d = *ps->p - '0';
    if (*v > (UINT64_MAX - d) / 10) {
      ps->p = start;
      return fail(ps, "integer too large");
    }
    *v = *v * 10 + d;
    ps->p++;
  }
  if (ps->p < ps->end && (*ps->p == '.' || *ps->p == 'e' || *ps->p == 'E'))
    return fail(ps, "expected an integer, found a fraction or exponent");
  return 0;
}

/* '[' integers ']' into v[0..max); *n is how many. */
static int parse_uint_array(Parser *ps, uint64_t *v, int max, int *n, const char *what) {
  *n = 0;
  if (expect(ps, '['))
    return 1;
  skip_space(ps);
  if (ps->p < ps->end && *ps->p == ']') {
    ps->p++;
    return 0;
  }
  for (;;) {
    if (*n == max)
      return fail(ps, "%s has more than %d entries", what, max);
    if (parse_uint(ps, &v[(*n)++]))
      return 1;
    skip_space(ps);
    if (ps->p < ps->end && *ps->p == ',') {
      ps->p++;
      continue;
    }
    return expect(ps, ']');
  }
}

/* The separator after a member: 1 in *more for ',', 0 for the closing '}'. */
static int next_member(Parser *ps, int *more) {
  skip_space(ps);
  if (ps->p < ps->end && *ps->p == ',') {
    ps->p++;
    *more = 1;
    return 0;
  }
  *more = 0;
  if (ps->p < ps->end && *ps->p == '}') {
    ps->p++;
    return 0;
  }
  return fail(ps, ps->p >= ps->end ? "expected ',' or '}', found the end of the header"
                                   : "expected ',' or '}'");
}

/* A key of __metadata__ and where it starts, for finding one given twice. */
typedef struct MetaKey {
  char *key;
  const unsigned char *at;
} MetaKey;

static int by_key_then_place(const void *a, const void *b) {
  const MetaKey *x = a, *y = b;
  int c = strcmp(x->key, y->key);
  return c ? c : x->at < y->at ? -1 : x->at > y->at;
}

/* "__metadata__": an object of strings, which nothing here reads, each key
 * once. */
static int parse_metadata(Parser *ps) {
  if (expect(ps, '{'))
    return 1;
  skip_space(ps);
  if (ps->p < ps->end && *ps->p == '}') {
    ps->p++;
    return 0;
  }
  MetaKey *keys = NULL;
  size_t n = 0, cap = 0;
  int rc = 1;
  for (int more = 1; more;) {
    char *key, *value;
    skip_space(ps);
    const unsigned char *at = ps->p;
    if (parse_string(ps, &key))
      goto done;
    if (n == cap) {
      size_t grown = cap ? 2 * cap : 16;
      MetaKey *k = realloc(keys, grown * sizeof *k);
      if (!k) {
        free(key);
        fail(ps, "out of memory");
        goto done;
      }
      keys = k;
      cap = grown;
    }
    keys[n++] = (MetaKey){key, at};
    if (expect(ps, ':'))
      goto done;
    skip_space(ps);
    if (ps->p < ps->end && *ps->p != '"') {
      fail(ps, "__metadata__'s values must be strings");
      goto done;
    }
    if (parse_string(ps, &value))
      goto done;
    free(value);
    if (next_member(ps, &more))
      goto done;
  }
  qsort(keys, n, sizeof *keys, by_key_then_place);
  rc = 0;
  for (size_t i = 1; i < n && !rc; i++)
    if (!strcmp(keys[i - 1].key, keys[i].key)) {
      ps->p = keys[i].at;
      rc = fail(ps, "__metadata__: \"%s\" given twice", keys[i].key);
    }
done:
  for (size_t i = 0; i < n; i++)
    free(keys[i].key);
  free(keys);
  return rc;
}

/* One tensor's object: dtype, shape and data_offsets, each once. */
static int parse_tensor(Parser *ps, StTensor *t) {
  int seen_dtype = 0, seen_shape = 0, seen_offsets = 0;
  const unsigned char *open = ps->p;
  if (expect(ps, '{'))
    return 1;
  skip_space(ps);
  if (ps->p < ps->end && *ps->p == '}')
    return fail(ps, "tensor \"%s\" has no dtype", t->name);
  for (int more = 1; more;) {
    char *key;
    skip_space(ps);
    const unsigned char *at = ps->p;
    if (parse_string(ps, &key))
      return 1;
    if (expect(ps, ':'))
      return free(key), 1;
    int *seen = !strcmp(key, "dtype")          ? &seen_dtype
                : !strcmp(key, "shape")        ? &seen_shape
                : !strcmp(key, "data_offsets") ? &seen_offsets
                                               : NULL;
    if (!seen || *seen) {
      ps->p = at;
      fail(ps, seen ? "tensor \"%s\": \"%s\" given twice" : "tensor \"%s\": unknown key \"%s\"",
           t->name, key);
      return free(key), 1;
    }
    *seen = 1;
    if (!strcmp(key, "dtype")) {
      char *d;
      free(key);
      skip_space(ps);
      at = ps->p;
      if (parse_string(ps, &d))
        return 1;
      size_t i = 0;
      while (i < sizeof dtypes / sizeof *dtypes && strcmp(dtypes[i].name, d))
        i++;
      if (i == sizeof dtypes / sizeof *dtypes) {
        ps->p = at;
        fail(ps, "tensor \"%s\": unknown dtype \"%s\"", t->name, d);
        return free(d), 1;
      }
      free(d);
      t->dtype = dtypes[i].dtype;
      snprintf(t->dtype_name, sizeof t->dtype_name, "%s", dtypes[i].name);
    } else if (!strcmp(key, "shape")) {
      uint64_t dims[ST_MAX_DIMS];
      free(key);
      if (parse_uint_array(ps, dims, ST_MAX_DIMS, &t->ndim, "a shape"))
        return 1;
      for (int i = 0; i < t->ndim; i++) {
        if (dims[i] > INT64_MAX)
          return fail(ps, "tensor \"%s\": dimension too large", t->name);
        t->shape[i] = (int64_t)dims[i];
      }
    } else {
      uint64_t off[3];
      int n;
      free(key);
      if (parse_uint_array(ps, off, 3, &n, "data_offsets"))
        return 1;
      if (n != 2)
        return fail(ps, "tensor \"%s\": data_offsets has %d entries, not 2", t->name, n);
      if (off[0] > off[1])
        return fail(ps, "tensor \"%s\": data_offsets [%llu, %llu] end before they begin", t->name,
                    (unsigned long long)off[0], (unsigned long long)off[1]);
      t->begin = off[0];
      t->end = off[1];
    }
    if (next_member(ps, &more))
      return 1;
  }
  if (!seen_dtype || !seen_shape || !seen_offsets) {
    ps->p = open;
    return fail(ps, "tensor \"%s\" has no %s", t->name,
                !seen_dtype   ? "dtype"
                : !seen_shape ? "shape"
                              : "data_offsets");
  }
  return 0;
}

static int by_name(const void *a, const void *b) {
  return strcmp(((const StTensor *)a)->name, ((const StTensor *)b)->name);
}

static int by_begin(const void *a, const void *b) {
  const StTensor *x = a, *y = b;
  return x->begin < y->begin   ? -1
         : x->begin > y->begin ? 1
         : x->end < y->end     ? -1
                               : x->end > y->end;
}

/* The whole header: an object of tensors and at most one __metadata__,
 * then nothing but spaces (writers pad the header to a multiple of 8). */
static int parse_header(Parser *ps, StFile *f) {
  size_t cap = 0;
  int seen_metadata = 0;
  if (expect(ps, '{'))
    return 1;
  skip_space(ps);
  int more = !(ps->p < ps->end && *ps->p == '}');
  if (!more)
    ps->p++;
  while (more) {
    char *key;
    skip_space(ps);
    const unsigned char *at = ps->p;
    if (parse_string(ps, &key))
      return 1;
    if (expect(ps, ':'))
      return free(key), 1;
    if (!strcmp(key, "__metadata__")) {
      free(key);
      if (seen_metadata) {
        ps->p = at;
        return fail(ps, "\"__metadata__\" given twice");
      }
      seen_metadata = 1;
      if (parse_metadata(ps))
        return 1;
    } else {
      if (f->ntensors == cap) {
        size_t n = cap ? 2 * cap : 64;
        StTensor *t = realloc(f->tensors, n * sizeof *t);
        if (!t)
          return free(key), fail(ps, "out of memory");
        f->tensors = t;
        cap = n;
      }
      StTensor *t = &f->tensors[f->ntensors++];
      memset(t, 0, sizeof *t);
      t->name = key;
      if (parse_tensor(ps, t))
        return 1;
    }
    if (next_member(ps, &more))
      return 1;
  }
  skip_space(ps);
  if (ps->p < ps->end)
    return fail(ps, "text after the header's object");
  return 0;
}

/* What the parser cannot see: repeated names, sizes against dtype and
 * shape, offsets inside the data, overlaps, and bytes of the data that no
 * tensor holds (the format has none: "the byte buffer needs to be entirely
 * indexed, and cannot contain holes", which keeps a file from being two). */
static int check_tensors(StFile *f, char *err, size_t errlen) {
  if (f->ntensors == 0) {
    if (!f->data_size)
      return 0;
    snprintf(err, errlen,
             "%s: the header has no tensor, and %zu bytes of data follow it: a safetensors "
             "file's data holds its tensors and nothing else",
             f->path, f->data_size);
    return 1;
  }
  qsort(f->tensors, f->ntensors, sizeof *f->tensors, by_name);
  for (size_t i = 1; i < f->ntensors; i++)
    if (!strcmp(f->tensors[i - 1].name, f->tensors[i].name)) {
      snprintf(err, errlen, "%s: tensor %s is in the header twice", f->path, f->tensors[i].name);
      return 1;
    }
  for (size_t i = 0; i < f->ntensors; i++) {
    const StTensor *t = &f->tensors[i];
    size_t esize = 0;
    for (size_t d = 0; d < sizeof dtypes / sizeof *dtypes; d++)
      if (!strcmp(dtypes[d].name, t->dtype_name))
        esize = dtypes[d].size;
    uint64_t bytes = esize;
    int overflow = 0;
    for (int d = 0; d < t->ndim; d++) {
      if (t->shape[d] && bytes > UINT64_MAX / (uint64_t)t->shape[d])
        overflow = 1;
      bytes *= (uint64_t)t->shape[d];
    }
    if (overflow || bytes != t->end - t->begin) {
      /* Past 2^64 - 1 the product has wrapped: say only that it is more. */
      snprintf(err, errlen,
               "%s: tensor %s: data_offsets [%llu, %llu] hold %llu bytes, and its dtype and "
               "shape need %s%llu",
               f->path, t->name, (unsigned long long)t->begin, (unsigned long long)t->end,
               (unsigned long long)(t->end - t->begin), overflow ? "more than " : "",
               overflow ? (unsigned long long)UINT64_MAX : (unsigned long long)bytes);
      return 1;
    }
    if (t->end > f->data_size) {
      snprintf(err, errlen,
               "%s: tensor %s: data_offsets [%llu, %llu] go past the end of the data (%zu "
               "bytes): the file is truncated",
               f->path, t->name, (unsigned long long)t->begin, (unsigned long long)t->end,
               f->data_size);
      return 1;
    }
  }
  StTensor *sorted = malloc(f->ntensors * sizeof *sorted);
  if (!sorted) {
    snprintf(err, errlen, "%s: out of memory", f->path);
    return 1;
  }
  memcpy(sorted, f->tensors, f->ntensors * sizeof *sorted);
  qsort(sorted, f->ntensors, sizeof *sorted, by_begin);
  int bad = 0;
  uint64_t at = 0; /* where the data's next tensor must begin */
  for (size_t i = 0; i < f->ntensors && !bad; i++) {
    const StTensor *t = &sorted[i], *prev = i ? &sorted[i - 1] : NULL;
    if (prev && t->begin < prev->end) {
      snprintf(err, errlen, "%s: tensors %s [%llu, %llu] and %s [%llu, %llu] overlap", f->path,
               prev->name, (unsigned long long)prev->begin, (unsigned long long)prev->end, t->name,
               (unsigned long long)t->begin, (unsigned long long)t->end);
      bad = 1;
    } else if (t->begin > at) {
      snprintf(err, errlen,
               "%s: bytes [%llu, %llu] of the data, before tensor %s, belong to no tensor: a "
               "safetensors file's data has no holes",
               f->path, (unsigned long long)at, (unsigned long long)t->begin, t->name);
      bad = 1;
    }
    at = t->end;
  }
  if (!bad && at < f->data_size) {
    snprintf(err, errlen,
             "%s: bytes [%llu, %zu] of the data, after the last tensor, %s, belong to no "
             "tensor: a safetensors file's data has no holes",
             f->path, (unsigned long long)at, f->data_size, sorted[f->ntensors - 1].name);
    bad = 1;
  }
  free(sorted);
  return bad;
}

static int open_file(StFile *f, const char *path, char *err, size_t errlen);

int st_open(StFile *f, const char *path, char *err, size_t errlen) {
  if (!open_file(f, path, err, errlen))
    return 0;
  st_message_text(err, errlen);
  return 1;
}

static int open_file(StFile *f, const char *path, char *err, size_t errlen) {
  memset(f, 0, sizeof *f);
  f->path = path;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
    return 1;
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    snprintf(err, errlen, "%s: cannot stat: %s", path, strerror(errno));
    close(fd);
    return 1;
  }
  if (!S_ISREG(st.st_mode)) {
    snprintf(err, errlen, "%s: not a regular file", path);
    close(fd);
    return 1;
  }
  if (st.st_size < 8) {
    snprintf(err, errlen,
             "%s: truncated: %lld bytes, and a safetensors file starts with an 8-byte header "
             "length",
             path, (long long)st.st_size);
    close(fd);
    return 1;
  }
  size_t size = (size_t)st.st_size;
  void *map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
  int mmap_errno = errno;
  close(fd);
  if (map == MAP_FAILED) {
    snprintf(err, errlen, "%s: cannot map: %s", path, strerror(mmap_errno));
    return 1;
  }
  if (st_parse(f, path, map, size, err, errlen)) {
    munmap(map, size);
    return 1;
  }
  f->mapped = 1;
  return 0;
}

void st_message_text(char *err, size_t errlen) {
  if (!errlen)
    return;
  size_t n = strnlen(err, errlen - 1);
  char *copy = malloc(n + 1);
  if (!copy) { /* no room to spell them: each a '?' */
    for (size_t i = 0; i < n; i++)
      if ((unsigned char)err[i] < 0x20 || err[i] == 0x7f)
        err[i] = '?';
    return;
  }
  memcpy(copy, err, n);
  size_t o = 0;
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)copy[i];
    int w = c < 0x20 || c == 0x7f ? 6 : 1;
    if (o + (size_t)w > errlen - 1)
      break;
    if (w == 1)
      err[o++] = (char)c;
    else
      o += (size_t)snprintf(err + o, 7, "\\u%04x", c);
  }
  err[o] = 0;
  free(copy);
}

/* st_parse's checks; st_parse cleans its message. */
static int parse_file(StFile *f, const char *path, const unsigned char *bytes, size_t size,
                      char *err, size_t errlen);

int st_parse(StFile *f, const char *path, const unsigned char *bytes, size_t size, char *err,
             size_t errlen) {
  if (!parse_file(f, path, bytes, size, err, errlen))
    return 0;
  st_message_text(err, errlen);
  return 1;
}

static int parse_file(StFile *f, const char *path, const unsigned char *bytes, size_t size,
                      char *err, size_t errlen) {
  memset(f, 0, sizeof *f);
  f->path = path;
  if (size < 8) {
    snprintf(err, errlen,
             "%s: truncated: %zu bytes, and a safetensors file starts with an 8-byte header "
             "length",
             path, size);
    return 1;
  }
  f->map = bytes;
  f->size = size;
  uint64_t n = 0;
  for (int i = 7; i >= 0; i--)
    n = n << 8 | f->map[i];
  if (n > f->size - 8) {
    snprintf(err, errlen, "%s: truncated: the header length is %llu bytes, and only %zu follow it",
             path, (unsigned long long)n, f->size - 8);
    st_close(f);
    return 1;
  }
  if (n > ST_MAX_HEADER) {
    snprintf(err, errlen, "%s: bad header: %llu bytes long, more than safetensors' %u", path,
             (unsigned long long)n, ST_MAX_HEADER);
    st_close(f);
    return 1;
  }
  f->data = f->map + 8 + n;
  f->data_size = f->size - 8 - (size_t)n;
  Parser ps = {path, f->map + 8, f->map + 8, f->map + 8 + n, err, errlen};
  if (parse_header(&ps, f) || check_tensors(f, err, errlen)) {
    st_close(f);
    return 1;
  }
  return 0;
}

void st_close(StFile *f) {
  for (size_t i = 0; i < f->ntensors; i++)
    free(f->tensors[i].name);
  free(f->tensors);
  if (f->map && f->mapped)
    munmap((void *)f->map, f->size);
  memset(f, 0, sizeof *f);
}
