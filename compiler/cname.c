/* cname.c: the names the generated C declares, and the names it cannot use.
 *
 * Every identifier that the generated C and header spell is made here, so
 * that sema.c, which refuses a program whose names cannot be C, and
 * emit_c.c, which prints them, cannot disagree. */
#include "cgc.h"

#include <ctype.h>
#include <string.h>

/* ---- what the generated C declares ---- */

static bool is_extern(const Resource *r) {
  return r->kind == RES_BUFFER &&
         (r->buffer_kind == BUF_EXTERN || r->buffer_kind == BUF_EXTERN_HOST);
}

const char *graph_c_name(char *buf, GraphName which, const Graph *g, const Resource *r) {
  static const char *const forms[] = {
      [GN_TYPE] = "%s",
      [GN_EXTERN] = "%s_extern",
      [GN_CREATE] = "%s_create",
      [GN_LAUNCH] = "%s_launch",
      [GN_DESTROY] = "%s_destroy",
      [GN_USER] = "%s_user",
      [GN_SET] = "%s_set_%s",
      [GN_GET] = "%s_get_%s",
      [GN_BIND] = "%s_bind_%s",
      [GN_BUFFER] = "%s_buffer_%s",
  };
  snprintf(buf, CNAME_SIZE, forms[which], g->name->name, r ? r->name->name : "");
  return buf;
}

int resource_c_names(const Resource *r, GraphName out[2]) {
  if (r->kind == RES_SCALAR) {
    out[0] = GN_SET;
    out[1] = GN_GET;
    return 2;
  }
  out[0] = is_extern(r) ? GN_BIND : GN_BUFFER;
  return 1;
}

/* The tables have fixed names without '_' after the graph's, and nothing of
 * the program can begin with cgc_, so no two meet. */
const char *graph_table_c_name(char *buf, const Graph *g, const char *table) {
  snprintf(buf, CNAME_SIZE, "cgc_%s_%s", g->name->name, table);
  return buf;
}

const char *kernel_c_name(const Item *kernel) { return kernel->name->name; }

const char *param_c_name(const Param *param) { return param->name->name; }

const char *member_c_name(const Resource *r) { return r->name->name; }

/* ---- names the generated C cannot use ---- */

static bool c_keyword(const char *s) {
  static const char *const words[] = {
      /* C11 */
      "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else",
      "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long", "register",
      "restrict", "return", "short", "signed", "sizeof", "static", "struct", "switch",
      "typedef", "union", "unsigned", "void", "volatile", "while", "_Alignas", "_Alignof",
      "_Atomic", "_Bool", "_Complex", "_Generic", "_Imaginary", "_Noreturn", "_Static_assert",
      "_Thread_local",
      /* C++, for the kernel declarations that .cu files include */
      "alignas", "alignof", "and", "and_eq", "asm", "bitand", "bitor", "bool", "catch",
      "char16_t", "char32_t", "char8_t", "class", "compl", "concept", "consteval", "constexpr",
      "constinit", "const_cast", "co_await", "co_return", "co_yield", "decltype", "delete",
      "dynamic_cast", "explicit", "export", "false", "friend", "mutable", "namespace", "new",
      "noexcept", "not", "not_eq", "nullptr", "operator", "or", "or_eq", "private",
      "protected", "public", "reinterpret_cast", "requires", "static_assert", "static_cast",
      "template", "this", "thread_local", "throw", "true", "try", "typeid", "typename", "using",
      "virtual", "wchar_t", "xor", "xor_eq"};
  for (size_t i = 0; i < sizeof words / sizeof *words; i++)
    if (!strcmp(words[i], s))
      return true;
  return false;
}

const char *c_name_refused(const char *name) {
  if (!strncmp(name, "cgc_", 4) || !strncmp(name, "cgrt_", 5))
    return "starts with a prefix the generated code reserves (cgc_, cgrt_)";
  if (c_keyword(name))
    return "is a C or C++ keyword, which the generated code cannot use";
  return NULL;
}

/* ---- the header ---- */

static const char *base_name(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

const char *header_guard(char *buf, const char *header) {
  size_t n = 0;
  for (const char *s = base_name(header); *s && n < 248; s++)
    buf[n++] = isalnum((unsigned char)*s) ? (char)toupper((unsigned char)*s) : '_';
  memcpy(buf + n, "_", 2);
  if (isdigit((unsigned char)buf[0]))
    buf[0] = '_';
  return buf;
}
