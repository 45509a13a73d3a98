/* module.c: kernels that are not linked in.  A module kernel comes from a
 * PTX, cubin or fatbin file (`from "PATH"`), which cgc reads once, checks
 * and embeds in the generated C; a template kernel is a C++ template's
 * instantiation (`= TEMPLATE<ARGS>` and `from "HEADER"`), whose header cgc
 * finds and the companion CUDA file includes.  Both paths are found like
 * an include's. */
#include "cgc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

const char *module_format_name(ModuleFormat f) {
  switch (f) {
  case MOD_PTX: return "PTX";
  case MOD_CUBIN: return "cubin";
  case MOD_FATBIN: return "fatbin";
  }
  return "";
}

const char *module_symbol(const Item *k) { return k->symbol ? k->symbol : k->name->name; }

/* ---- what a module is ---- */

static uint16_t le16(const unsigned char *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t le32(const unsigned char *p) { return (uint32_t)le16(p) | (uint32_t)le16(p + 2) << 16; }
static uint64_t le64(const unsigned char *p) { return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32; }

enum {
  ELF_HEADER = 64,     /* bytes of an ELF64 header */
  EM_CUDA = 190,       /* e_machine of a cubin */
  SHT_SYMTAB = 2,
  SHT_STRTAB = 3,
  STT_FUNC = 2,
  STO_CUDA_ENTRY = 0x10, /* st_other of a kernel (a __global__ function) */
  FATBIN_HEADER = 16   /* magic, version, header size, fat size */
};

/* A PTX directive at the start of a line (after white space). */
static bool has_directive(const unsigned char *b, size_t n, const char *dir) {
  size_t len = strlen(dir);
  bool line_start = true;
  for (size_t i = 0; i < n; i++) {
    if (b[i] == '\n') {
      line_start = true;
    } else if (b[i] == ' ' || b[i] == '\t' || b[i] == '\r') {
      /* still at the line's start */
    } else {
      if (line_start && n - i > len && !memcmp(b + i, dir, len) &&
          (b[i + len] == ' ' || b[i + len] == '\t'))
        return true;
      line_start = false;
    }
  }
  return false;
}

int module_format(const unsigned char *b, size_t n, const char **why) {
  static const unsigned char elf[4] = {0x7f, 'E', 'L', 'F'}, fatbin[4] = {0x50, 0xed, 0x55, 0xba};
  if (n >= 4 && !memcmp(b, elf, 4)) {
    if (n < ELF_HEADER || b[4] != 2 || b[5] != 1) {
      *why = "is an ELF file but not a 64-bit little-endian one, as cubins are";
      return -1;
    }
    if (le16(b + 18) != EM_CUDA) {
      *why = "is an ELF file but not a cubin (its machine is not CUDA)";
      return -1;
    }
    return MOD_CUBIN;
  }
  if (n >= 4 && !memcmp(b, fatbin, 4)) {
    if (n < FATBIN_HEADER) {
      *why = "is a truncated fatbin (shorter than a fatbin's 16-byte header)";
      return -1;
    }
    uint64_t header = le16(b + 6), fat = le64(b + 8);
    if (header < FATBIN_HEADER || header > n || fat > n - header) {
      *why = "is a truncated fatbin (its header promises more bytes than the file holds)";
      return -1;
    }
    return MOD_FATBIN;
  }
  if (!memchr(b, 0, n) && has_directive(b, n, ".version") && has_directive(b, n, ".target"))
    return MOD_PTX;
  *why = "is not a CUDA module: not a cubin (ELF), a fatbin, or PTX (text with .version and "
         ".target directives)";
  return -1;
}

/* ---- the kernels a module defines ---- */

static void add_kernel_name(Module *m, const char *name) {
  if (map_get(&m->kernels, name))
    return;
  map_put(&m->kernels, name, (void *)name);
  vec_push(&m->names, name);
}

static bool ptx_word(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '$' || c == '%';
}

/* Every `.entry NAME` of a PTX module, outside comments and strings. */
static void scan_ptx(Module *m, Arena *a) {
  const unsigned char *b = m->bytes;
  size_t n = m->len, i = 0;
  while (i < n) {
    if (b[i] == '/' && i + 1 < n && b[i + 1] == '/') {
      while (i < n && b[i] != '\n')
        i++;
    } else if (b[i] == '/' && i + 1 < n && b[i + 1] == '*') {
      i += 2;
      while (i + 1 < n && !(b[i] == '*' && b[i + 1] == '/'))
        i++;
      i += 2;
    } else if (b[i] == '"') {
      i++;
      while (i < n && b[i] != '"' && b[i] != '\n')
        i++;
      i++;
    } else if (b[i] == '.' && n - i > 6 && !memcmp(b + i, ".entry", 6) &&
               (i == 0 || !ptx_word(b[i - 1])) && !ptx_word(b[i + 6])) {
      i += 6;
      while (i < n && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n'))
        i++;
      size_t start = i;
      while (i < n && ptx_word(b[i]))
        i++;
      if (i > start)
        add_kernel_name(m, arena_strndup(a, (const char *)b + start, i - start));
    } else {
      i++;
    }
  }
}

/* Whether [off, off + size) lies within n bytes. */
static bool within(uint64_t off, uint64_t size, uint64_t n) { return off <= n && size <= n - off; }

/* Every kernel in a cubin's symbol tables: a function symbol marked as an
 * entry.  Every offset is checked against the file. */
static bool scan_cubin(Module *m, Arena *a, const char **why) {
  const unsigned char *b = m->bytes;
  uint64_t n = m->len, shoff = le64(b + 0x28), shentsize = le16(b + 0x3a), shnum = le16(b + 0x3c);
  if (shentsize < 64 || shnum > n / shentsize || !within(shoff, shnum * shentsize, n)) {
    *why = "is not a valid cubin: its section table lies outside the file";
    return false;
  }
  for (uint64_t s = 0; s < shnum; s++) {
    const unsigned char *sh = b + shoff + s * shentsize;
    if (le32(sh + 4) != SHT_SYMTAB)
      continue;
    uint64_t off = le64(sh + 0x18), size = le64(sh + 0x20), link = le32(sh + 0x28),
             entsize = le64(sh + 0x38);
    if (entsize < 24 || !within(off, size, n) || link >= shnum) {
      *why = "is not a valid cubin: a symbol table lies outside the file";
      return false;
    }
    const unsigned char *strh = b + shoff + link * shentsize;
    uint64_t stroff = le64(strh + 0x18), strsize = le64(strh + 0x20);
    if (le32(strh + 4) != SHT_STRTAB || !within(stroff, strsize, n)) {
      *why = "is not a valid cubin: a symbol table's names lie outside the file";
      return false;
    }
    for (uint64_t e = 0; e + entsize <= size; e += entsize) {
      const unsigned char *sym = b + off + e;
      uint32_t name = le32(sym);
      if ((sym[4] & 0xf) != STT_FUNC || !(sym[5] & STO_CUDA_ENTRY) || name >= strsize)
        continue;
      const char *s0 = (const char *)b + stroff + name;
      const char *end = memchr(s0, 0, strsize - name);
      if (!end) {
        *why = "is not a valid cubin: a symbol's name runs past its table";
        return false;
      }
      add_kernel_name(m, arena_strndup(a, s0, (size_t)(end - s0)));
    }
  }
  return true;
}

bool module_scan(Module *m, Arena *a, const char **why) {
  m->scanned = true;
  m->kernels.by_string = true;
  switch (m->format) {
  case MOD_PTX: scan_ptx(m, a); return true;
  case MOD_CUBIN: return !(m->broken = !scan_cubin(m, a, why));
  case MOD_FATBIN: return true; /* the runtime finds its kernels */
  }
  return true;
}

/* ---- reading ---- */

/* Reads a module file, which must be a regular file (not a device or a
 * FIFO, which could be endless) within the program's budget of module
 * bytes; NULL after an error at `at`. */
static Module *read_module(Compiler *c, Pos at, const char *written, const char *path) {
  struct stat st;
  FILE *f = open_read(path, true, &st);
  if (!f) {
    error_at(c->diag, at, "cannot read module '%s': %s", written, strerror(errno));
    return NULL;
  }
  if (!S_ISREG(st.st_mode)) {
    fclose(f);
    error_at(c->diag, at, "module '%s' is not a regular file", written);
    return NULL;
  }
  int64_t budget = (c->max_module_bytes ? c->max_module_bytes : MAX_MODULE_BYTES) - c->module_bytes;
  /* Read to the end rather than trusting st_size, within the budget. */
  size_t cap = st.st_size > 0 && st.st_size <= budget ? (size_t)st.st_size + 1 : 4096, len = 0;
  unsigned char *bytes = st.st_size > budget ? NULL : arena_alloc(c->arena, cap);
  bool too_big = st.st_size > budget, failed = false;
  while (!too_big) {
    if (len == cap) {
      if ((int64_t)len >= budget) {
        too_big = true;
        break;
      }
      unsigned char *bigger = arena_alloc(c->arena, cap * 2);
      memcpy(bigger, bytes, len);
      bytes = bigger;
      cap *= 2;
    }
    size_t want = cap - len;
    if ((int64_t)(len + want) > budget + 1)
      want = (size_t)(budget + 1) - len;
    size_t got = fread(bytes + len, 1, want, f);
    len += got;
    if ((int64_t)len > budget)
      too_big = true;
    if (got == 0) {
      failed = ferror(f);
      break;
    }
  }
  fclose(f);
  if (too_big) {
    error_at(c->diag, at,
             "module '%s' would take the program's modules past %lld bytes together (the most "
             "cgc embeds in the generated C)",
             written, (long long)(c->max_module_bytes ? c->max_module_bytes : MAX_MODULE_BYTES));
    return NULL;
  }
  if (failed) {
    error_at(c->diag, at, "cannot read module '%s': %s", written, strerror(EIO));
    return NULL;
  }
  if (len == 0) {
    error_at(c->diag, at, "module '%s' is empty", written);
    return NULL;
  }
  const char *why = NULL;
  int format = module_format(bytes, len, &why);
  if (format < 0) {
    error_at(c->diag, at, "module '%s' %s", written, why);
    return NULL;
  }
  c->module_bytes += (int64_t)len;
  Module *m = arena_alloc(c->arena, sizeof *m);
  m->path = written;
  m->bytes = bytes;
  m->len = len;
  m->format = (ModuleFormat)format;
  return m;
}

/* A file once in the depfile's list. */
static void add_dep(Compiler *c, const char *real) {
  for (size_t i = 0; i < c->deps.n; i++)
    if (!strcmp(c->deps.v[i], real))
      return;
  vec_push(&c->deps, arena_strdup(c->arena, real));
}

/* Finds the file a `from` names, beside the file that declares k; its
 * real path (heap) in *real; NULL after an error. */
static char *find_from(Compiler *c, Item *k, const char *what, char **real) {
  const Source *src = source_get(c->diag, pos_file(c->diag, k->from_pos));
  char *path = find_file(c, src->path, k->from);
  *real = path ? realpath(path, NULL) : NULL;
  if (!path && found_directory(c, src->path, k->from)) {
    error_at(c->diag, k->from_pos, "%s '%s' is a directory, not a regular file", what, k->from);
    return NULL;
  }
  if (!*real) {
    error_at(c->diag, k->from_pos, "cannot find %s '%s'", what, k->from);
    return NULL;
  }
  return path;
}

bool module_kernel(Compiler *c, Item *k) {
  if (k->symbol && !k->symbol[0])
    return false; /* a malformed symbol, reported */
  char *real;
  char *path = find_from(c, k, "module", &real);
  if (!path)
    return false;
  Module *m = NULL;
  for (size_t i = 0; i < c->modules.n && !m; i++)
    if (!strcmp(c->modules.v[i]->realpath, real))
      m = c->modules.v[i];
  if (!m) {
    m = read_module(c, k->from_pos, k->from, path);
    if (!m) {
      free(real);
      return false;
    }
    m->realpath = arena_strdup(c->arena, real);
    m->index = (int)c->modules.n;
    vec_push(&c->modules, m);
    add_dep(c, real);
  }
  free(real);
  k->module = m;
  if (m->format == MOD_FATBIN)
    return true; /* its kernels are compressed or for several GPUs: the runtime checks */
  const char *why = NULL;
  if (!m->scanned && !module_scan(m, c->arena, &why)) {
    error_at(c->diag, k->from_pos, "module '%s' %s", m->path, why);
    return false;
  }
  if (m->broken) /* reported at the first kernel from it */
    return false;
  const char *sym = module_symbol(k);
  if (map_get(&m->kernels, sym))
    return true;
  /* The kernels it has, as many as fit in a line. */
  char list[200] = "";
  size_t len = 0, i;
  for (i = 0; i < m->names.n && len + strlen(m->names.v[i]) + 8 < sizeof list - 8; i++)
    len += (size_t)snprintf(list + len, sizeof list - len, "%s'%s'", i ? ", " : "", m->names.v[i]);
  if (i < m->names.n)
    snprintf(list + len, sizeof list - len, "%s...", i ? ", " : "");
  if (m->names.n)
    error_at(c->diag, k->symbol ? k->symbol_pos : k->name_pos,
             "%s module '%s' has no kernel '%s' (its kernels: %s)", module_format_name(m->format),
             m->path, sym, list);
  else
    error_at(c->diag, k->symbol ? k->symbol_pos : k->name_pos,
             "%s module '%s' has no kernel '%s' (it has no kernels)", module_format_name(m->format),
             m->path, sym);
  return false;
}

/* The path of `to` (absolute, canonical) from directory `dir` (the same):
 * lib/scale.cuh, or ../inc/scale.cuh. */
static char *relative_path(Arena *a, const char *dir, const char *to) {
  size_t common = 0; /* bytes of the components both begin with, '/' included */
  for (size_t i = 0;; i++) {
    bool dir_end = !dir[i] || dir[i] == '/';
    if (dir_end && (to[i] == '/' || !to[i]))
      common = i;
    if (!dir[i] || dir[i] != to[i])
      break;
  }
  size_t ups = 0;
  for (const char *p = dir + common; *p; p++)
    ups += *p == '/' && p[1];
  const char *rest = to + common + (to[common] == '/');
  char *out = arena_alloc(a, 3 * ups + strlen(rest) + 1), *p = out;
  for (size_t i = 0; i < ups; i++, p += 3)
    memcpy(p, "../", 3);
  strcpy(p, rest);
  return out;
}

/* The directory of the main file, canonical (heap), or NULL. */
static char *main_directory(Compiler *c) {
  const Source *main = c->files.n ? source_get(c->diag, c->files.v[0]) : NULL;
  if (!main || !main->realpath)
    return realpath(".", NULL);
  char *dir = strcpy(xrealloc(NULL, strlen(main->realpath) + 1), main->realpath);
  char *slash = strrchr(dir, '/');
  if (slash)
    slash[slash == dir] = 0; /* "/" stays */
  return dir;
}

bool template_header(Compiler *c, Item *k) {
  const char *flaw = include_name_flaw(k->from);
  if (flaw) {
    error_at(c->diag, k->from_pos, "header '%s' cannot be named in #include \"...\" (it has %s)",
             k->from, flaw);
    return false;
  }
  char *real;
  char *path = find_from(c, k, "header", &real);
  if (!path)
    return false;
  struct stat st;
  bool regular = stat(path, &st) == 0 && S_ISREG(st.st_mode);
  if (regular)
    add_dep(c, real);
  if (!regular) {
    free(real);
    error_at(c->diag, k->from_pos, "header '%s' is not a regular file", k->from);
    return false;
  }
  /* The companion names the header cgc found, from the main file's
   * directory, which is on its include path: as written, the name would
   * be looked up there, where another header of that name may stand. */
  char *dir = main_directory(c);
  k->header = dir ? relative_path(c->arena, dir, real) : arena_strdup(c->arena, real);
  free(dir);
  free(real);
  flaw = include_name_flaw(k->header);
  if (flaw) {
    error_at(c->diag, k->from_pos, "header '%s' cannot be named in #include \"...\" (it has %s)",
             k->header, flaw);
    return false;
  }
  return true;
}

/* ---- template arguments ---- */

static bool word_char(char ch) {
  return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
         ch == '_';
}

static bool operator_char(char ch) { return ch && strchr("+-*/%<>=&|^!~:.?", ch); }

void template_text_put(CharVec *out, bool *space, char ch) {
  if (ch == ' ') {
    *space = true;
    return;
  }
  char last = out->n ? out->v[out->n - 1] : 0;
  if (last == ',' || (*space && ((word_char(last) && word_char(ch)) ||
                                 (operator_char(last) && operator_char(ch)))))
    vec_push(out, ' ');
  *space = false;
  vec_push(out, ch);
}
