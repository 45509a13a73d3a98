/* cname.c: the names the generated C declares, and the names it cannot use.
 *
 * Every identifier that the generated C and header spell is made here, so
 * that sema.c, which refuses a program whose names cannot be C, and
 * the emit files, which print them, cannot disagree.
 *
 * A name of the program that the generated code spells on its own (a
 * graph's, a kernel's, a kernel parameter's, an extern buffer's) shares
 * C's name spaces with the headers the C includes, the compiler's built-in
 * functions and macros, and, in a .cu file, everything nvcc includes.
 * Each rule below refuses one kind of name those may already hold.  The
 * names cgc makes from them (G_create, G_set_x) are unique among
 * themselves and must not be a name of the tables below. */
#include "cgc.h"

#include <ctype.h>
#include <stdlib.h>
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
      [GN_POOL_BYTES] = "%s_pool_bytes",
      [GN_SET] = "%s_set_%s",
      [GN_GET] = "%s_get_%s",
      [GN_BIND] = "%s_bind_%s",
      [GN_BUFFER] = "%s_buffer_%s",
  };
  size_t n = strlen(g->prefix ? g->prefix : "");
  memcpy(buf, g->prefix ? g->prefix : "", n);
  snprintf(buf + n, CNAME_SIZE - n, forms[which], g->name->name, r ? r->name->name : "");
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

/* The names cgc makes from a name of the program begin with cgc_ and a tag
 * of their kind, then '_': a graph's tables (cgc_nodes_G, cgc_grid_code_G
 * ...), a capture function's caller (cgc_call_F), a template's accessor
 * (cgc_template_K_HASH) and a module's bytes (cgc_module_N).  No tag and
 * '_' begins another tag and '_', nor a fixed name of the generated C
 * (cgc_kernels, cgc_capture_names ...), and nothing of the program can
 * begin with cgc_, so no two meet, whatever '_' the program's names hold
 * (g's grid table and the code of g_grid; a variant s_1). */
const char *graph_table_c_name(char *buf, const Graph *g, const char *table) {
  snprintf(buf, CNAME_SIZE, "cgc_%s_%s", table, g->name->name);
  return buf;
}

const char *capture_caller_c_name(char *buf, const Item *capture) {
  snprintf(buf, CNAME_SIZE, "cgc_call_%s", capture->name->name);
  return buf;
}

const char *kernel_c_name(const Item *kernel) { return kernel->name->name; }

const char *param_c_name(const Param *param) { return param->name->name; }

/* cgc_template_NAME_HASH: the hash, of everything that makes the
 * instantiation (the template, its arguments, its header as the companion
 * includes it and the declared parameters), keeps two programs' different
 * instantiations of one kernel name apart when they are linked together,
 * while the same declaration included by two programs beside each other
 * gives one symbol (defined weak). */
const char *template_c_name(char *buf, const Item *k) {
  uint64_t h = 14695981039346656037u;
  const char *parts[] = {k->name->name, k->template_name->name,
                         k->template_args ? k->template_args : "", k->header ? k->header : ""};
  for (size_t i = 0; i < sizeof parts / sizeof *parts; i++)
    for (const char *p = parts[i];; p++) {
      h = (h ^ (unsigned char)*p) * 1099511628211u;
      if (!*p)
        break;
    }
  for (int i = 0; i < k->nparams; i++) {
    const Param *pa = &k->params[i];
    unsigned bits = (unsigned)pa->type << 3 | (unsigned)pa->pointer << 2 | (unsigned)pa->mode;
    h = (h ^ bits) * 1099511628211u;
  }
  snprintf(buf, CNAME_SIZE, "cgc_template_%s_%016llx", k->name->name, (unsigned long long)h);
  return buf;
}

const char *member_c_name(const Resource *r) { return r->name->name; }

/* ---- names the generated C cannot use ---- */

/* Sorted by strcmp, for bsearch. */
// clang-format off
static const char *const keywords[] = {
    /* C11, C23, GNU C (asm, typeof) and C++20 */
    "_Alignas", "_Alignof", "_Atomic", "_Bool", "_Complex", "_Generic", "_Imaginary", "_Noreturn",
    "_Static_assert", "_Thread_local", "alignas", "alignof", "and", "and_eq", "asm", "auto",
    "bitand", "bitor", "bool", "break", "case", "catch", "char", "char16_t", "char32_t", "char8_t",
    "class", "co_await", "co_return", "co_yield", "compl", "concept", "const", "const_cast",
    "consteval", "constexpr", "constinit", "continue", "decltype", "default", "delete", "do",
    "double", "dynamic_cast", "else", "enum", "explicit", "export", "extern", "false", "float",
    "for", "friend", "goto", "if", "inline", "int", "long", "mutable", "namespace", "new",
    "noexcept", "not", "not_eq", "nullptr", "operator", "or", "or_eq", "private", "protected",
    "public", "register", "reinterpret_cast", "requires", "restrict", "return", "short", "signed",
    "sizeof", "static", "static_assert", "static_cast", "struct", "switch", "template", "this",
    "thread_local", "throw", "true", "try", "typedef", "typeid", "typename", "typeof",
    "typeof_unqual", "union", "unsigned", "using", "virtual", "void", "volatile", "wchar_t",
    "while", "xor", "xor_eq"
};

/* The C standard library (C17: every header's names, as glibc declares them
 * under -std=c17; the names the rules below cover are left out).  The
 * header goes beside these in C files, and nvcc includes most of them in
 * every .cu file.  Its object-like macros take a name anywhere; its
 * functions, types and objects only at file scope. */
static const char *const c_macros[] = {
    "ATOMIC_BOOL_LOCK_FREE", "ATOMIC_CHAR16_T_LOCK_FREE", "ATOMIC_CHAR32_T_LOCK_FREE",
    "ATOMIC_CHAR_LOCK_FREE", "ATOMIC_FLAG_INIT", "ATOMIC_INT_LOCK_FREE", "ATOMIC_LLONG_LOCK_FREE",
    "ATOMIC_LONG_LOCK_FREE", "ATOMIC_POINTER_LOCK_FREE", "ATOMIC_SHORT_LOCK_FREE",
    "ATOMIC_WCHAR_T_LOCK_FREE", "BUFSIZ", "CHAR_BIT", "CLOCKS_PER_SEC", "DBL_DECIMAL_DIG",
    "DBL_DIG", "DBL_EPSILON", "DBL_HAS_SUBNORM", "DBL_MANT_DIG", "DBL_MAX_10_EXP", "DBL_MAX_EXP",
    "DBL_MIN_10_EXP", "DBL_MIN_EXP", "DECIMAL_DIG", "EDOM", "EILSEQ", "EOF", "ERANGE",
    "EXIT_FAILURE", "EXIT_SUCCESS", "FE_ALL_EXCEPT", "FE_DFL_ENV", "FE_DIVBYZERO", "FE_DOWNWARD",
    "FE_INEXACT", "FE_INVALID", "FE_OVERFLOW", "FE_TONEAREST", "FE_TOWARDZERO", "FE_UNDERFLOW",
    "FE_UPWARD", "FLT_DECIMAL_DIG", "FLT_DIG", "FLT_EPSILON", "FLT_EVAL_METHOD", "FLT_HAS_SUBNORM",
    "FLT_MANT_DIG", "FLT_MAX_10_EXP", "FLT_MAX_EXP", "FLT_MIN_10_EXP", "FLT_MIN_EXP", "FLT_RADIX",
    "FLT_ROUNDS", "FP_ILOGB0", "FP_ILOGBNAN", "FP_INFINITE", "FP_NAN", "FP_NORMAL", "FP_SUBNORMAL",
    "FP_ZERO", "HUGE_VAL", "HUGE_VALF", "HUGE_VALL", "I", "INFINITY", "LC_ALL", "LC_COLLATE",
    "LC_CTYPE", "LC_MONETARY", "LC_NUMERIC", "LC_TIME", "LDBL_DECIMAL_DIG", "LDBL_DIG",
    "LDBL_EPSILON", "LDBL_HAS_SUBNORM", "LDBL_MANT_DIG", "LDBL_MAX_10_EXP", "LDBL_MAX_EXP",
    "LDBL_MIN_10_EXP", "LDBL_MIN_EXP", "L_tmpnam", "MATH_ERREXCEPT", "MATH_ERRNO", "NAN", "NULL",
    "ONCE_FLAG_INIT", "SEEK_CUR", "SEEK_END", "SEEK_SET", "SIGABRT", "SIGFPE", "SIGILL", "SIGINT",
    "SIGSEGV", "SIGTERM", "SIG_DFL", "SIG_ERR", "SIG_IGN", "TIME_UTC", "TSS_DTOR_ITERATIONS",
    "WEOF", "complex", "errno", "math_errhandling", "noreturn", "stderr", "stdin", "stdout"
};
static const char *const c_library[] = {
    "ATOMIC_VAR_INIT", "CMPLX", "CMPLXF", "CMPLXL", "FILE", "abort", "abs", "acos", "acosh",
    "aligned_alloc", "asctime", "asin", "asinh", "assert", "at_quick_exit", "atan", "atan2",
    "atanh", "atexit", "atof", "atoi", "atol", "atomic_bool", "atomic_char",
    "atomic_compare_exchange_strong", "atomic_compare_exchange_strong_explicit",
    "atomic_compare_exchange_weak", "atomic_compare_exchange_weak_explicit", "atomic_exchange",
    "atomic_exchange_explicit", "atomic_fetch_add", "atomic_fetch_add_explicit",
    "atomic_fetch_and", "atomic_fetch_and_explicit", "atomic_fetch_or", "atomic_fetch_or_explicit",
    "atomic_fetch_sub", "atomic_fetch_sub_explicit", "atomic_fetch_xor",
    "atomic_fetch_xor_explicit", "atomic_flag", "atomic_flag_clear", "atomic_flag_clear_explicit",
    "atomic_flag_test_and_set", "atomic_flag_test_and_set_explicit", "atomic_init", "atomic_int",
    "atomic_is_lock_free", "atomic_llong", "atomic_load", "atomic_load_explicit", "atomic_long",
    "atomic_schar", "atomic_short", "atomic_signal_fence", "atomic_store", "atomic_store_explicit",
    "atomic_thread_fence", "atomic_uchar", "atomic_uint", "atomic_ullong", "atomic_ulong",
    "atomic_ushort", "bsearch", "btowc", "c16rtomb", "c32rtomb", "cabs", "cacos", "cacosh",
    "call_once", "calloc", "carg", "casin", "casinh", "catan", "catanh", "cbrt", "ccos", "ccosh",
    "ceil", "cexp", "cimag", "clearerr", "clock", "clog", "cnd_broadcast", "cnd_destroy",
    "cnd_init", "cnd_signal", "cnd_timedwait", "cnd_wait", "conj", "copysign", "cos", "cosh",
    "cpow", "cproj", "creal", "csin", "csinh", "csqrt", "ctan", "ctanh", "ctime", "difftime",
    "div", "erf", "erfc", "exit", "exp", "exp2", "expm1", "fabs", "fclose", "fdim",
    "feclearexcept", "fegetenv", "fegetexceptflag", "fegetround", "feholdexcept", "feof",
    "feraiseexcept", "ferror", "fesetenv", "fesetexceptflag", "fesetround", "fetestexcept",
    "feupdateenv", "fflush", "fgetc", "fgetpos", "fgets", "fgetwc", "fgetws", "floor", "fma",
    "fmax", "fmin", "fmod", "fopen", "fpclassify", "fprintf", "fputc", "fputs", "fputwc", "fputws",
    "fread", "free", "freopen", "frexp", "fscanf", "fseek", "fsetpos", "ftell", "fwide",
    "fwprintf", "fwrite", "fwscanf", "getc", "getchar", "getenv", "getwc", "getwchar", "gmtime",
    "hypot", "ilogb", "imaxabs", "imaxdiv", "isalnum", "isalpha", "isblank", "iscntrl", "isdigit",
    "isfinite", "isgraph", "isgreater", "isgreaterequal", "isinf", "isless", "islessequal",
    "islessgreater", "islower", "isnan", "isnormal", "isprint", "ispunct", "isspace",
    "isunordered", "isupper", "iswalnum", "iswalpha", "iswblank", "iswcntrl", "iswctype",
    "iswdigit", "iswgraph", "iswlower", "iswprint", "iswpunct", "iswspace", "iswupper",
    "iswxdigit", "isxdigit", "jmp_buf", "kill_dependency", "labs", "lconv", "ldexp", "ldiv",
    "lgamma", "llabs", "lldiv", "llrint", "llround", "localeconv", "localtime", "log", "log10",
    "log1p", "log2", "logb", "longjmp", "lrint", "lround", "malloc", "mblen", "mbrlen", "mbrtoc16",
    "mbrtoc32", "mbrtowc", "mbsinit", "mbsrtowcs", "mbstowcs", "mbtowc", "memchr", "memcmp",
    "memcpy", "memmove", "memory_order", "memset", "mktime", "modf", "mtx_destroy", "mtx_init",
    "mtx_lock", "mtx_timedlock", "mtx_trylock", "mtx_unlock", "nan", "nearbyint", "nextafter",
    "nexttoward", "offsetof", "once_flag", "perror", "pow", "printf", "putc", "putchar", "puts",
    "putwc", "putwchar", "qsort", "quick_exit", "raise", "rand", "realloc", "remainder", "remove",
    "remquo", "rename", "rewind", "rint", "round", "scalbln", "scalbn", "scanf", "setbuf",
    "setjmp", "setlocale", "setvbuf", "signal", "signbit", "sin", "sinh", "snprintf", "sprintf",
    "sqrt", "srand", "sscanf", "strcat", "strchr", "strcmp", "strcoll", "strcpy", "strcspn",
    "strerror", "strftime", "strlen", "strncat", "strncmp", "strncpy", "strpbrk", "strrchr",
    "strspn", "strstr", "strtod", "strtof", "strtoimax", "strtok", "strtol", "strtold", "strtoul",
    "strtoumax", "strxfrm", "swprintf", "swscanf", "system", "tan", "tanh", "tgamma",
    "thrd_create", "thrd_current", "thrd_detach", "thrd_equal", "thrd_exit", "thrd_join",
    "thrd_sleep", "thrd_yield", "time", "timespec", "timespec_get", "tm", "tmpfile", "tmpnam",
    "tolower", "toupper", "towctrans", "towlower", "towupper", "trunc", "tss_create", "tss_delete",
    "tss_get", "tss_set", "ungetc", "ungetwc", "va_arg", "va_copy", "va_end", "va_list",
    "va_start", "vfprintf", "vfscanf", "vfwprintf", "vfwscanf", "vprintf", "vscanf", "vsnprintf",
    "vsprintf", "vsscanf", "vswprintf", "vswscanf", "vwprintf", "vwscanf", "wcrtomb", "wcscat",
    "wcschr", "wcscmp", "wcscoll", "wcscpy", "wcscspn", "wcsftime", "wcslen", "wcsncat", "wcsncmp",
    "wcsncpy", "wcspbrk", "wcsrchr", "wcsrtombs", "wcsspn", "wcsstr", "wcstod", "wcstof",
    "wcstoimax", "wcstok", "wcstol", "wcstold", "wcstombs", "wcstoul", "wcstoumax", "wcsxfrm",
    "wctob", "wctomb", "wctrans", "wctype", "wmemchr", "wmemcmp", "wmemcpy", "wmemmove", "wmemset",
    "wprintf", "wscanf"
};

/* The macros of the GNU dialects (-std=gnu11, and g++ and nvcc always),
 * the defaults of gcc and CMake: GCC's system names and glibc's limits. */
static const char *const gnu_macros[] = {
    "LONG_BIT", "MAX_CANON", "MAX_INPUT", "NL_ARGMAX", "NL_LANGMAX", "NL_MSGMAX", "NL_NMAX",
    "NL_SETMAX", "NL_TEXTMAX", "NZERO", "PIPE_BUF", "PTHREAD_DESTRUCTOR_ITERATIONS", "WORD_BIT",
    "i386", "linux", "unix"
};
/* GCC's and Clang's built-in functions outside ISO C, which a kernel's
 * host stub may not redeclare in the GNU dialects. */
static const char *const gnu_builtins[] = {
    "alloca", "bcmp", "bcopy", "bzero", "dcgettext", "dgettext", "drem", "exp10", "ffs", "ffsll",
    "finite", "fprintf_unlocked", "fputc_unlocked", "fputs_unlocked", "fwrite_unlocked", "gamma",
    "gamma_r", "gammaf_r", "gammal_r", "gettext", "index", "isascii", "j0", "j1", "jn", "lgamma_r",
    "lgammaf_r", "lgammal_r", "memccpy", "mempcpy", "posix_memalign", "pow10", "printf_unlocked",
    "putc_unlocked", "putchar_unlocked", "rindex", "roundeven", "scalb", "signbitd128",
    "signbitd32", "signbitd64", "significand", "sincos", "stpcpy", "stpncpy", "strcasecmp",
    "strdup", "strfmon", "strncasecmp", "strndup", "strnlen", "toascii", "y0", "y1", "yn"
};

/* What CUDA (13) declares in every .cu file outside the prefixes below:
 * macros; device functions, vector and half types. */
static const char *const cuda_macros[] = {
    "EXCLUDE_FROM_RTC", "STD", "THROWBADALLOC", "warpSize"
};
static const char *const cuda_names[] = {
    "IF_DEVICE_OR_CUDACC", "all", "any", "ballot", "clock64", "cospi", "cyl_bessel_i0",
    "cyl_bessel_i1", "dadd", "dim3", "dmul", "double2int", "double2ll", "double2uint",
    "double2ull", "dsub", "erfcinv", "erfcx", "erfinv", "fdivide", "float2double", "h2ceil",
    "h2cos", "h2exp", "h2exp10", "h2exp2", "h2floor", "h2log", "h2log10", "h2log2", "h2rcp",
    "h2rint", "h2rsqrt", "h2sin", "h2sqrt", "h2tanh", "h2tanh_approx", "h2trunc", "half", "half2",
    "hceil", "hcos", "hexp", "hexp10", "hexp2", "hfloor", "hlog", "hlog10", "hlog2", "hrcp",
    "hrint", "hrsqrt", "hsin", "hsqrt", "htanh", "htanh_approx", "htrunc", "int2double",
    "libraryPropertyType", "ll2double", "llmax", "llmin", "make_bfloat162", "make_cudaExtent",
    "make_cudaPitchedPtr", "make_cudaPos", "make_half2", "max", "min", "norm", "norm3d", "norm4d",
    "normcdf", "normcdfinv", "nv", "nv_bfloat16", "nv_bfloat162", "nv_half", "nv_half2", "rcbrt",
    "rhypot", "rnorm", "rnorm3d", "rnorm4d", "rsqrt", "sincospi", "sinpi", "surf1DLayeredread",
    "surf1DLayeredwrite", "surf1Dread", "surf1Dwrite", "surf2DLayeredread", "surf2DLayeredwrite",
    "surf2Dread", "surf2Dwrite", "surf3Dread", "surf3Dwrite", "surfCubemapLayeredread",
    "surfCubemapLayeredwrite", "surfCubemapread", "surfCubemapwrite", "syncthreads_and",
    "syncthreads_count", "syncthreads_or", "tex1D", "tex1DGrad", "tex1DLayered",
    "tex1DLayeredGrad", "tex1DLayeredLod", "tex1DLod", "tex1Dfetch", "tex2D", "tex2DGrad",
    "tex2DLayered", "tex2DLayeredGrad", "tex2DLayeredLod", "tex2DLod", "tex2Dgather", "tex3D",
    "tex3DGrad", "tex3DLod", "texCubemap", "texCubemapGrad", "texCubemapLayered",
    "texCubemapLayeredGrad", "texCubemapLayeredLod", "texCubemapLod", "uint2double", "ull2double",
    "ullmax", "ullmin", "umax", "umin"
};
// clang-format on

typedef struct NameTable {
  const char *const *v;
  size_t n;
  bool anywhere; /* macros and keywords; the others clash at file scope only */
  const char *why;
} NameTable;

#define COUNT(v) (sizeof v / sizeof *v)
static const NameTable tables[] = {
    {keywords, COUNT(keywords), true, "is a C or C++ keyword"},
    {c_macros, COUNT(c_macros), true, "is a macro of the C standard library"},
    {c_library, COUNT(c_library), false, "is a name of the C standard library"},
    {gnu_macros, COUNT(gnu_macros), true, "is a macro of the GNU dialects (gnu11, g++, nvcc)"},
    {gnu_builtins, COUNT(gnu_builtins), false,
     "is a function GCC or Clang builds in (outside ISO C)"},
    {cuda_macros, COUNT(cuda_macros), true, "is a macro CUDA defines in every .cu file"},
    {cuda_names, COUNT(cuda_names), false, "is a name CUDA declares in every .cu file"},
};
#undef COUNT

static int compare_name(const void *key, const void *elem) {
  return strcmp(key, *(const char *const *)elem);
}

/* The table that holds `name`, of those whose names clash where it is. */
static const NameTable *table_of(const char *name, bool file_scope) {
  for (size_t i = 0; i < sizeof tables / sizeof *tables; i++)
    if ((file_scope || tables[i].anywhere) &&
        bsearch(name, tables[i].v, tables[i].n, sizeof *tables[i].v, compare_name))
      return &tables[i];
  return NULL;
}

static bool starts(const char *s, const char *prefix) {
  return !strncmp(s, prefix, strlen(prefix));
}

static bool ends(const char *s, const char *suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n >= m && !strcmp(s + n - m, suffix);
}

static bool upper(char c) { return c >= 'A' && c <= 'Z'; }
static bool lower(char c) { return c >= 'a' && c <= 'z'; }

/* CUDA's vector types: char1 ... double4, uchar1 ... ulonglong4 (and CUDA
 * 13's long4_16a, double4_32a ...). */
static bool vector_type(const char *s) {
  static const char *const scalars[] = {"char",     "short", "int",   "long",
                                        "longlong", "float", "double"};
  bool is_unsigned = s[0] == 'u';
  s += is_unsigned;
  for (size_t i = 0; i < sizeof scalars / sizeof *scalars - 2 * is_unsigned; i++) {
    size_t n = strlen(scalars[i]);
    if (strncmp(s, scalars[i], n) || s[n] < '1' || s[n] > '4')
      continue;
    return !s[n + 1] || !strcmp(s + n + 1, "_16a") || !strcmp(s + n + 1, "_32a");
  }
  return false;
}

/* A library function's name with a type suffix (expf, expl, expf32,
 * expf64x): C and GCC reserve these for the variants of each function. */
static const char *suffixed(const char *name) {
  static const char *const suffixes[] = {"f", "l", "f32", "f64", "f128", "f32x", "f64x", "f128x"};
  char stem[MAX_IDENT_LEN + 1];
  size_t n = strlen(name);
  for (size_t i = 0; i < sizeof suffixes / sizeof *suffixes; i++) {
    size_t m = strlen(suffixes[i]);
    if (n <= m || n - m > MAX_IDENT_LEN || !ends(name, suffixes[i]))
      continue;
    memcpy(stem, name, n - m);
    stem[n - m] = 0;
    const NameTable *t = table_of(stem, true);
    if (t && t != &tables[0]) /* not a keyword: intl is free */
      return "is a library function's name with a type suffix (f, l, f32, f64, f128, f32x, "
             "f64x, f128x), which C reserves for the function's variants";
  }
  return NULL;
}

const char *c_name_taken(const char *name) {
  const NameTable *t = table_of(name, true);
  return t ? t->why : suffixed(name);
}

const char *c_name_refused(const char *name, bool file_scope) {
  const NameTable *t = table_of(name, file_scope);
  if (t)
    return t->why;
  if (file_scope && suffixed(name))
    return suffixed(name);
  if (name[0] == '_' && (name[1] == '_' || upper(name[1])))
    return "begins with '__' or with '_' and an uppercase letter, which C and C++ reserve";
  if (name[0] == '_' && file_scope)
    return "begins with '_', which C reserves for names at file scope";
  if (!strcmp(name, "cgc") || !strcmp(name, "cgrt") || starts(name, "cgc_") ||
      starts(name, "CGC_") || starts(name, "cgrt_") || starts(name, "CGRT_"))
    return "is reserved for the generated code and its runtime (cgc, cgrt, cgc_*, CGC_*, "
           "cgrt_*, CGRT_*)";
  if (starts(name, "cuda") || starts(name, "CUDA") || starts(name, "NV_") ||
      (starts(name, "cu") && upper(name[2])) ||
      (starts(name, "CU") && (lower(name[2]) || name[2] == '_')))
    return "is reserved for CUDA (cuda*, CUDA*, NV_*, cu and an uppercase letter, CU and a "
           "lowercase letter or '_')";
  if (file_scope && !strcmp(name, "main"))
    return "is the name of a C program's entry point";
  if (file_scope && !strcmp(name, "std"))
    return "is the C++ standard library's namespace";
  if (ends(name, "_t"))
    return "ends in '_t', which POSIX reserves for type names";
  if (!strpbrk(name, "abcdefghijklmnopqrstuvwxyz") &&
      (ends(name, "_MAX") || ends(name, "_MIN") || ends(name, "_WIDTH") ||
       ((starts(name, "INT") || starts(name, "UINT")) && ends(name, "_C"))))
    return "is reserved for the limits of <limits.h> and <stdint.h> (uppercase names ending "
           "in _MAX, _MIN, _WIDTH, or INT*_C)";
  if ((starts(name, "PRI") || starts(name, "SCN")) && name[3] && strchr("diouxX", name[3]))
    return "is reserved for the format macros of <inttypes.h> (PRI*, SCN*)";
  if (file_scope && (vector_type(name) || (starts(name, "make_") && vector_type(name + 5))))
    return "is one of CUDA's vector types (char1 ... double4) or their make_ functions";
  if (file_scope && starts(name, "atomic") && upper(name[6]))
    return "is reserved for CUDA's atomic functions (atomic and an uppercase letter)";
  return NULL;
}

/* ---- the header ---- */

static const char *base_name(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

/* Whether the program gives a name that the C spells on its own, where a
 * macro of that name would take it away. */
static bool program_spells(const Compiler *c, const Program *p, const char *id) {
  for (size_t i = 0; i < c->items.n; i++) {
    const Item *it = c->items.v[i];
    if (it->kind != IT_KERNEL)
      continue;
    if (!strcmp(kernel_c_name(it), id))
      return true;
    for (int j = 0; j < it->nparams; j++)
      if (!strcmp(param_c_name(&it->params[j]), id))
        return true;
  }
  char buf[CNAME_SIZE];
  for (size_t i = 0; i < p->graphs.n; i++) {
    const Graph *g = p->graphs.v[i];
    if (!strcmp(graph_c_name(buf, GN_TYPE, g, NULL), id))
      return true;
    for (size_t r = 0; r < g->res.n; r++)
      if (is_extern(&g->res.v[r]) && !strcmp(member_c_name(&g->res.v[r]), id))
        return true;
  }
  return false;
}

const char *header_guard(char *buf, const char *header, const Compiler *c, const Program *p) {
  char *guard = buf + 4; /* room for CGC_ */
  size_t n = 0;
  for (const char *s = base_name(header); *s && n < 248; s++)
    guard[n++] = isalnum((unsigned char)*s) ? (char)toupper((unsigned char)*s) : '_';
  memcpy(guard + n, "_", 2);
  /* A guard that would begin with '_' (the implementation's, as _STDDEF_H_
   * for _stddef.h) or a digit, or that the program spells, takes CGC, a
   * prefix the program cannot give, and '_' unless it has one. */
  if (guard[0] == '_') {
    memcpy(guard - 3, "CGC", 3);
    return guard - 3;
  }
  if (!isdigit((unsigned char)guard[0]) && !program_spells(c, p, guard))
    return guard;
  memcpy(buf, "CGC_", 4);
  return buf;
}

const char *include_name_flaw(const char *name) {
  static const char trigraphs[] = "=/'()!<>-";
  static const char *const said[] = {"'?\?='", "'?\?/'", "'?\?''", "'?\?('", "'?\?)'",
                                     "'?\?!'", "'?\?<'", "'?\?>'", "'?\?-'"};
  for (const char *p = name; *p; p++) {
    if (*p == '"')
      return "'\"'";
    if (*p == '\'')
      return "'''";
    if (*p == '\\')
      return "'\\'";
    if ((unsigned char)*p < 0x20 || *p == 0x7f)
      return "a control character";
    if (p[0] == '?' && p[1] == '?' && p[2] && strchr(trigraphs, p[2]))
      return said[strchr(trigraphs, p[2]) - trigraphs];
  }
  return NULL;
}

bool header_hides_runtime(const char *header) {
  /* Case-blind, as the file systems of macOS and Windows are. */
  return !strcasecmp(base_name(header), CGRT_HEADER);
}
