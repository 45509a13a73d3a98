/* cgrt_module_params.c: how many parameters a module's kernel takes, read
 * from the module's own metadata, so that create compares the count with
 * the declaration without asking CUDA for a parameter past the last (CUDA
 * 13.0 has no call that gives the count, and that question fails: an API
 * error that compute-sanitizer reports in a user's clean program).
 *
 * PTX declares an entry's parameters in its `.entry NAME (...)` list.  A
 * cubin (ELF) holds a section `.nv.info.NAME` of attribute records, each a
 * format byte, an attribute byte and a value: formats 1 to 3 a record of
 * 4 bytes, format 4 a 16-bit length and that many bytes; a kernel has one
 * KPARAM_INFO record (attribute 0x17) a parameter and, when it has any,
 * their bytes in CBANK_PARAM_SIZE (0x19).  A fatbin holds PTX and cubins
 * as entries; a compressed one cannot be read here.  The bytes are the
 * user's file, so every read is bounded. */
#include "cgrt_internal.h"

enum {
  ELF_HEADER = 64,
  ELF_SECTION = 64,
  ATTR_KPARAM_INFO = 0x17,
  ATTR_CBANK_PARAM_SIZE = 0x19,
  ATTR_FORMAT_SIZED = 4,
  FATBIN_HEADER = 16,
  FATBIN_ENTRY = 16, /* the least of an entry's header that is read */
  FATBIN_PTX = 1,
  FATBIN_ELF = 2
};

#define FATBIN_MAGIC 0xba55ed50u

/* n bytes at p, little-endian. */
static uint64_t le(const unsigned char *p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; i--)
    v = v << 8 | p[i];
  return v;
}

static int is_name_char(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '$' || c == '.';
}

static int is_space(unsigned char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/* PTX: the `.param`s of `.entry symbol (...)`. */
static int ptx_params(const unsigned char *t, uint64_t n, const char *symbol, uint32_t *count) {
  static const char entry[] = ".entry";
  size_t len = strlen(symbol), elen = sizeof entry - 1;
  for (uint64_t i = 0; i + elen < n; i++) {
    if (memcmp(t + i, entry, elen) || !is_space(t[i + elen]) || (i && is_name_char(t[i - 1])))
      continue;
    uint64_t j = i + elen;
    while (j < n && is_space(t[j]))
      j++;
    if (n - j < len || memcmp(t + j, symbol, len) || (j + len < n && is_name_char(t[j + len])))
      continue;
    for (j += len; j < n && is_space(t[j]); j++)
      ;
    *count = 0;
    if (j == n || t[j] != '(')
      return 1; /* no parameter list */
    for (j++; j < n && t[j] != ')'; j++)
      if (t[j] == '.' && n - j > 6 && !memcmp(t + j, ".param", 6) && !is_name_char(t[j + 6]))
        ++*count;
    return j < n;
  }
  return 0;
}

/* A cubin: the KPARAM_INFO records of section .nv.info.symbol. */
static int elf_params(const unsigned char *e, uint64_t n, const char *symbol, uint32_t *count) {
  if (n < ELF_HEADER || memcmp(e, "\177ELF", 4) || e[4] != 2 || e[5] != 1)
    return 0; /* not a 64-bit little-endian ELF file */
  uint64_t shoff = le(e + 0x28, 8), shsize = le(e + 0x3a, 2), shnum = le(e + 0x3c, 2);
  uint64_t strndx = le(e + 0x3e, 2);
  if (shsize < ELF_SECTION || shoff > n || shnum > (n - shoff) / shsize || strndx >= shnum)
    return 0;
  const unsigned char *strsec = e + shoff + strndx * shsize;
  uint64_t stroff = le(strsec + 0x18, 8), strsize = le(strsec + 0x20, 8);
  if (stroff > n || strsize > n - stroff)
    return 0;
  static const char prefix[] = ".nv.info.";
  size_t plen = sizeof prefix - 1, len = strlen(symbol);
  for (uint64_t s = 0; s < shnum; s++) {
    const unsigned char *sh = e + shoff + s * shsize;
    uint64_t name = le(sh, 4), off = le(sh + 0x18, 8), size = le(sh + 0x20, 8);
    if (name >= strsize || strsize - name < plen + len + 1)
      continue;
    const unsigned char *nm = e + stroff + name;
    if (memcmp(nm, prefix, plen) || memcmp(nm + plen, symbol, len) || nm[plen + len])
      continue;
    if (off > n || size > n - off)
      return 0;
    uint32_t params = 0;
    uint64_t param_bytes = 0;
    for (uint64_t at = 0; at + 4 <= size;) {
      const unsigned char *r = e + off + at;
      uint64_t rlen = r[0] == ATTR_FORMAT_SIZED ? 4 + le(r + 2, 2) : 4;
      if (r[0] < 1 || r[0] > ATTR_FORMAT_SIZED || rlen > size - at)
        return 0; /* a record of a format this does not know */
      params += r[0] == ATTR_FORMAT_SIZED && r[1] == ATTR_KPARAM_INFO;
      if (r[1] == ATTR_CBANK_PARAM_SIZE && r[0] != ATTR_FORMAT_SIZED)
        param_bytes = le(r + 2, 2);
      at += rlen;
    }
    if (!params && param_bytes)
      return 0; /* parameter bytes without their records: not the layout this knows */
    *count = params;
    return 1;
  }
  return 0;
}

/* A fatbin: the first of its uncompressed cubins and PTX that has the
 * kernel. */
static int fatbin_params(const unsigned char *f, uint64_t n, const char *symbol, uint32_t *count) {
  if (n < FATBIN_HEADER || le(f, 4) != FATBIN_MAGIC)
    return 0;
  uint64_t at = le(f + 6, 2), end = le(f + 8, 8);
  if (at < FATBIN_HEADER || at > n || end > n - at)
    return 0;
  end += at;
  while (end - at >= FATBIN_ENTRY) {
    const unsigned char *h = f + at;
    uint64_t kind = le(h, 2), head = le(h + 4, 4), size = le(h + 8, 8);
    if (head < FATBIN_ENTRY || head > end - at || size > end - at - head)
      return 0;
    const unsigned char *p = h + head;
    if ((kind == FATBIN_ELF && elf_params(p, size, symbol, count)) ||
        (kind == FATBIN_PTX && ptx_params(p, size, symbol, count)))
      return 1;
    at += head + size;
  }
  return 0;
}

int cgrt_module_params(const cgrt_module_desc *md, const char *symbol, uint32_t *count) {
  switch ((ModuleFormat)md->format) {
  case CGRT_MODULE_PTX: return ptx_params(md->image, md->bytes, symbol, count);
  case CGRT_MODULE_CUBIN: return elf_params(md->image, md->bytes, symbol, count);
  case CGRT_MODULE_FATBIN: return fatbin_params(md->image, md->bytes, symbol, count);
  }
  return 0;
}
