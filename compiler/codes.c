/* codes.c: the stable code of every error, by the format of its message.
 *
 * JSON diagnostics carry these codes, so that editors and CI can tell one
 * kind of error from another whatever its words.  The table only grows: a
 * code is never reused or renumbered.  A message that changes its words
 * keeps its code (change its format here too); a new message gets the next
 * code; one format may stand under several spellings of one error ("did
 * you mean" or not).  The diagnostics tests check that every error printed
 * has a code.  Warnings' names and codes are the rows of warnings.def. */
#include "cgc.h"

#include <string.h>

static const struct {
  const char *code, *format;
} errors[] = {
    {"E0001", "cannot read '%s': %s"},
    {"E0002", "'%s' is larger than %lld MiB"},
    {"E0003", "cannot write '%s': %s"},
    {"E0004", "undefined name '%s'"},
    {"E0004", "undefined name '%s'; did you mean '%s'?"},
    {"E0005", "undefined kernel '%s'"},
    {"E0005", "undefined kernel '%s'; did you mean '%s'?"},
    {"E0006", "undefined node '%s'"},
    {"E0006", "undefined node '%s'; did you mean '%s'?"},
    {"E0007", "'%s' is used in its own definition"},
    {"E0008", "'%s' is used before its declaration; a top-level constant sees those above it"},
    {"E0009", "'%s' is used before its declaration"},
    {"E0010", "'%s' is a node; only edges name nodes"},
    {"E0011", "redefinition of '%s'"},
    {"E0012", "'%s' redefines a top-level constant"},
    {"E0013", "internal error: this has no value, and no error said why"},
    {"E0014", "expected an integer, not a floating-point value"},
    {"E0015", "%s '%s' is not a constant"},
    {"E0016", "'%s' is a %s, not a constant"},
    {"E0017", "unknown function '%s' (the functions are cdiv, min and max)"},
    {"E0018", "%s takes 2 arguments, %d given"},
    {"E0019", "division by zero"},
    {"E0020", "integer overflow in constant expression"},
    {"E0021", "'%%' needs integer operands"},
    {"E0022", "floating-point constant expression is not finite"},
    {"E0023", "floating-point constant expression underflows to zero"},
    {"E0024", "only buffers can be indexed"},
    {"E0025", "%s is %s; a floating-point value does not fit"},
    {"E0026", "%s does not fit %s, which is %s: the largest %s is %s"},
    {"E0027", "%s rounds to zero in %s, which is %s: the smallest nonzero %s is %s"},
    {"E0028", "%lld is not exactly representable in %s, which is %s"},
    {"E0029", "%lld does not fit %s, which is %s"},
    {"E0030", "duplicate parameter '%s'"},
    {"E0031", "value parameter '%s' takes no access mode; only pointers are in, out or inout"},
    {"E0032", "the parameters of kernel '%s' take %lld bytes; CUDA allows at most %d (CUDA 12.1 "
              "and later, compute capability 7.0 and later)"},
    {"E0033", "constant '%s' must be an integer; for a float, pass the number as the argument "
              "itself, or declare a scalar ('scalar %s: f32 = ...;' in the graph)"},
    {"E0034", "a buffer has at most 8 dimensions"},
    {"E0035", "dimension %d of '%s' is %lld; it must be at least 1"},
    {"E0036", "the size of '%s' overflows 64 bits"},
    {"E0037", "the buffers of graph '%s' total more than 2^63 bytes"},
    {"E0038", "a buffer's initialiser can only be '= 0'"},
    {"E0039", "'= 0' is only for buffers the graph owns; '%s' is extern"},
    {"E0040", "scalar '%s' cannot be indexed"},
    {"E0041", "'%s' has %d dimension%s; this index is one too many"},
    {"E0042", "index %lld is out of range for dimension %d of '%s' (size %lld)"},
    {"E0043", "slice %lld:%lld is out of range for dimension %d of '%s' (size %lld)"},
    {"E0044", "parameter '%s' of '%s' is a pointer (%s*); pass a buffer or a scalar"},
    {"E0045", "'%s' is a host buffer; %s take device memory"},
    {"E0046", "parameter '%s' of '%s' is %s*, but the argument is %s"},
    {"E0047", "parameter '%s' of '%s' is a value (%s), but the argument is %s"},
    {"E0048", "parameter '%s' of '%s' is %s, but scalar '%s' is %s"},
    {"E0049", "scalar '%s' cannot reach capture function '%s' by value: capture would freeze it; "
              "declare parameter '%s' as a pointer (%s*) and pass the scalar's slot"},
    {"E0050", "the %s must be a buffer, a view or a scalar"},
    {"E0051", "copy takes 2 arguments (destination, source), %d given"},
    {"E0052", "copy between different element types: the destination is %s, the source %s"},
    {"E0053", "copy sizes differ: the destination is %s, the source %s"},
    {"E0054", "the source and destination of this copy overlap in '%s'"},
    {"E0055", "fill takes 2 arguments (destination, value), %d given"},
    {"E0056", "'%s' is a host buffer; fill needs device memory"},
    {"E0057", "%s takes 1 to 3 extents, %d given"},
    {"E0058", "%s extent %lld must be at least 1"},
    {"E0059", "%s nodes take no %s(...); only kernel nodes have a launch configuration"},
    {"E0060", "%s is given twice"},
    {"E0061", "kernel node '%s' needs %s"},
    {"E0062", "grid extent %c is %lld; CUDA allows at most %lld"},
    {"E0063", "block extent %c is %lld; CUDA allows at most %lld"},
    {"E0064", "a block of %lld threads is more than the 1024 CUDA allows"},
    {"E0065", "smem takes 1 value (bytes), %d given"},
    {"E0066", "smem(%lld) is out of range: a block can have 0 to 227K (232448) bytes"},
    {"E0067", "a cluster of %lld x %lld x %lld blocks is more than the portable 8"},
    {"E0068", "a cluster of %lld blocks is more than the portable 8"},
    {"E0069", "grid extent %c (%lld) is not a multiple of the cluster's (%lld)"},
    {"E0070", "priority takes 1 value, %d given"},
    {"E0071", "priority %lld does not fit an int"},
    {"E0072",
     "node '%.40s...' %s a name of %d bytes; a node's name with its indices has at most %d"},
    {"E0073", "the program has more than %lld %s"},
    {"E0074", "'%s' is not a kernel"},
    {"E0075", "%s '%s' takes %d argument%s, %d given"},
    {"E0076", "'%s' is not a node"},
    {"E0077", "node '%s' is declared in a 'for' loop; name an iteration, as in %s[0]"},
    {"E0078", "node '%s' is not declared in a 'for' loop and takes no index"},
    {"E0079", "node '%s' takes %d ind%s, one for each enclosing 'for'"},
    {"E0080", "no node named '%s' in graph '%s'"},
    {"E0081", "edge from node '%s' to itself"},
    {"E0082", "an edge stays within one body; '%s' and '%s' are not in the same one"},
    {"E0083", "'=>' needs a kernel node on both ends; '%s' is a %s node"},
    {"E0084", "'=>' leads to node '%s', whose kernel '%s' is not declared 'pdl kernel'"},
    {"E0085", "%s declarations are not allowed inside %s"},
    {"E0086", "'%s' is a host buffer; conditions are evaluated on the device"},
    {"E0087", "a condition compares single values, and this is %lld elements of '%s'; index it, as "
              "in %s[0]"},
    {"E0088", "the condition compares %s with %s; both sides must have one type"},
    {"E0089", "the condition compares two constants"},
    {"E0090", "switch takes an integer scalar"},
    {"E0091", "case %lld is given twice"},
    {"E0092", "this condition makes %d comparisons; one condition makes at most %d"},
    {"E0093", "this switch has no case and no default; a switch node needs at least one body"},
    {"E0094", "max %lld: a loop's bound must be at least 1"},
    {"E0095", "default is given twice"},
    {"E0096", "duplicate node '%s'"},
    {"E0097", "scalar '%s' is written on the device, so it cannot be passed by value; pass it to a "
              "pointer parameter"},
    {"E0098", "%s '%s' cannot be a C name: it %s"},
    {"E0099", "the generated C name '%s' is used twice"},
    {"E0100", "%s '%s' gives the C name '%s', which %s"},
    {"E0101", "cannot format a file with a NUL byte"},
    {"E0102", "a depfile cannot name '%s': Make has no way to write a line break in a file name"},
    {"E0103", "%s '%s' is '%s', a file the program reads"},
    {"E0104", "cannot write standard output: %s"},
    {"E0105", "the program has more than %lld edges, all graphs together (written ones once its "
              "loops are unrolled, and those inferred from data flow)"},
    {"E0106", "edges of graph '%s' form a cycle: %s"},
    {"E0107",
     "hazard on '%s': node '%s' %s it and node '%s' %s it, with no path of edges between them"},
    {"E0108", "ordering graph '%s' spent the program's %lld steps of search, and could not tell "
              "whether its written edges order every access"},
    {"E0109", "unknown type '%s'; the types are i8, i16, i32, i64, u8, u16, u32, u64, f16, bf16, "
              "f32 and f64"},
    {"E0109", "unknown type '%s'; did you mean '%s'?"},
    {"E0110", "condition nested more than %d deep"},
    {"E0111", "expression nested more than %d deep"},
    {"E0112", "empty include path"},
    {"E0113", "cannot find include file '%s'"},
    {"E0114", "include cycle: '%s' includes itself"},
    {"E0115", "includes nested more than %d deep"},
    {"E0116", "a lone carriage return (CR) ends this line; cgc takes LF or CR LF line endings"},
    {"E0117", "unterminated comment"},
    {"E0118", "invalid number '%s'"},
    {"E0119", "unterminated string"},
    {"E0120", "NUL byte in input"},
    {"E0121", "unexpected character U+%04X"},
    {"E0122", "invalid UTF-8 byte 0x%02X"},
    {"E0123", "integer literal '%s' is out of range"},
    {"E0124", "floating-point literal '%s' is out of range"},
    {"E0125", "floating-point literal '%s' is too small: it rounds to zero"},
    {"E0126", "\\x with no hex digits"},
    {"E0127", "NUL character in string"},
    {"E0128", "unknown escape sequence '\\%c'"},
    {"E0129", "identifier is longer than %d bytes"},
    {"E0130", "brackets nested more than %d deep"},
    {"E0131", "unexpected character '%c'"},
    {"E0132", "unexpected control character 0x%02X"},
    {"E0133", "input nested too deeply"},
    {"E0134", "%s"},
    {"E0135", "expected ';' at the end of the statement"},
    {"E0136", "'%s' is not a keyword; did you mean '%s'?"},
    {"E0137", "unexpected %s"},
    {"E0138", "expected %s before %s"},
    {"E0139", "too many errors; stopping"},
    {"E0140", "scalar '%s' takes the communicator's %s, which needs an integer type of 32 or "
              "64 bits, not %s"},
    {"E0141", "'%s' is a host buffer; %s needs device memory"},
    {"E0142", "NCCL has no 16-bit integer type, and '%s' is %s"},
    {"E0143", "avg needs floating-point elements, and these are %s"},
    {"E0144", "the reduction of %s is one of sum, prod, max, min and avg"},
    {"E0145", "%s takes %d argument%s, %d given: %s"},
    {"E0146", "%s cannot be in the body of a while, if or switch: NCCL's captured work may "
              "hold host nodes, which a conditional body cannot"},
    {"E0147", "%s takes no launch configuration"},
    {"E0148", "%s between different element types: the destination is %s, the source %s"},
    {"E0149", "the source and destination of %s overlap in '%s'; for the in-place form name "
              "one buffer"},
    {"E0150", "%s sizes differ: the destination is %s, the source %s"},
    {"E0151", "all_gather's destination holds the source of every rank, a multiple of its "
              "size: the destination is %s, the source %s"},
    {"E0152", "reduce_scatter's source holds a destination's worth for every rank, a multiple "
              "of its size: the destination is %s, the source %s"},
    {"E0153", "broadcast's root is a rank, from 0 to %d; %lld is not"},
    {"E0154", "'%s' is already a global name; a variant's variable needs one of its own"},
    {"E0155", "a variant's value names its graph, %s_VALUE, so it cannot be negative (%lld)"},
    {"E0156", "the variant's name '%s' is longer than %d bytes"},
    {"E0157", "cannot read module '%s': %s"},
    {"E0158", "module '%s' is not a regular file"},
    {"E0159", "module '%s' would take the program's modules past %lld bytes together (the "
              "most cgc embeds in the generated C)"},
    {"E0160", "module '%s' is empty"},
    {"E0161", "module '%s' %s"},
    {"E0162", "cannot find %s '%s'"},
    {"E0163", "%s module '%s' has no kernel '%s' (its kernels: %s)"},
    {"E0164", "%s module '%s' has no kernel '%s' (it has no kernels)"},
    {"E0165", "header '%s' cannot be named in #include \"...\" (it has %s)"},
    {"E0166", "header '%s' is not a regular file"},
    {"E0167", "standard input is larger than %lld MiB"},
    {"E0168", "cannot read standard input: %s"},
    {"E0169", "%s '%s' and %s '%s' are the same file"},
    {"E0170", "collectives '%s' and '%s' have no path of edges between them: every rank must "
              "run a communicator's collectives in one order"},
    {"E0171", "capture function '%s' takes no '%s': it is a host function of the program's own"},
    {"E0172", "'%s' is given twice for kernel '%s'"},
    {"E0173", "template kernel '%s' needs from \"HEADER\", the header that defines '%s'"},
    {"E0174", "template kernel '%s' takes no 'symbol': the template and its arguments name "
              "the kernel"},
    {"E0175", "'symbol' names kernel '%s' in a module: it needs from \"MODULE\""},
    {"E0176", "'from' names no file: the path is empty"},
    {"E0177", "the symbol of kernel '%s' is empty"},
    {"E0178", "unterminated template arguments: the '<' is never closed"},
    {"E0179", "template arguments are longer than %d bytes"},
    {"E0180", "template arguments cannot hold a comment"},
    {"E0181", "')' in template arguments closes no '('"},
    {"E0182", "'%c' in template arguments: the '<' at %d:%d is never closed"},
    {"E0183", "template arguments cannot hold '%c'"},
    {"E0184", "template arguments cannot hold the byte 0x%02X"},
    {"E0185", "scalar '%s' is %s; only integer scalars take a bound ('max')"},
    {"E0186", "scalar '%s' takes the communicator's %s, so it takes no bound ('max')"},
    {"E0187", "the bound of scalar '%s' is %lld; it must be at least 0"},
    {"E0188", "the initial value %lld of scalar '%s' is above its bound %lld"},
    {"E0189", "scalar '%s' is not a constant; its bound stands for it only in grid(...) and in "
              "buffer sizes"},
    {"E0190", "scalar '%s' has no bound; %s can follow a scalar only up to a bound: declare it "
              "'scalar %s: %s max N'"},
    {"E0191", "scalar '%s' is %s; a grid follows integer scalars only"},
    {"E0192", "grid extent %c holds %d values at once; the runtime evaluates at most %d"},
    {"E0193", "grid extent %c divides by zero when %s"},
    {"E0194", "grid extent %c overflows 64 bits when %s"},
    {"E0195", "grid extent %c is %lld when %s; at the bounds it must be at least 1"},
    {"E0196", "grid extent %c is %lld when %s; CUDA allows at most %lld"},
    {"E0197", "scalar '%s' is written on the device, so a grid cannot follow it: the host sets a "
              "grid before the launch"},
    {"E0198", "a %s cannot be of type 'handle'; a handle is the type of a kernel parameter, which "
              "takes the name of a while node whose body calls the kernel"},
    {"E0199",
     "parameter '%s' is a pointer to a handle; a handle is passed by value ('%s: handle')"},
    {"E0200", "capture function '%s' cannot take a handle (parameter '%s'); only a kernel in a "
              "while's body sets the loop's condition"},
    {"E0201", "parameter '%s' of '%s' is a handle; pass the name of a while node whose body "
              "holds this call (node NAME = while ...)"},
    {"E0202", "'%s' is %s; only a while's handle can be passed, by a kernel in its body"},
    {"E0203", "'%s' is a while node, but this call is not in its body; a while's handle is passed "
              "only by a kernel in its body"},
    {"E0204", "the handle of while '%s' is passed a second time%s; one node of a loop's body "
              "sets its condition"},
    {"E0205", "while '%s' has a bound (max), which the runtime's condition kernel counts; a loop "
              "whose body sets its handle has no such kernel, so it cannot have one"},
    {"E0206", "parameter '%s' of '%s' is %s%s, but '%s' is a while node; only a handle parameter "
              "takes a while's name"},
    {"E0207", "the handle of while '%s' is passed from inside %s '%s' in its body; a loop's "
              "condition is set by a kernel directly in its body (or in a 'for' there)"},
    {"E0208", "while '%s' has %s %s node in its body, and its body's kernel sets its handle; such "
              "a loop holds no control flow"},
    {"E0209", "while '%s' is inside %s '%s'; only a loop outside control flow may have its "
              "condition set by its body's kernel"},
    {"E0210", "control nodes '%s' and '%s' have no path of edges between them: a loop whose "
              "body sets its handle runs apart from the other control nodes"},
    {"E0211", "'%s' is not a regular file (the language server reads no FIFO or device)"},
    {"E0212", "%s '%s' is a directory, not a regular file"},
    {"E0213", "a buffer's size takes a bounded scalar at its bound, the largest value only of a "
              "size that grows with the scalar; this %s"},
    {"E0214", "grid extent %c divides by zero when %s, the initial values, which create sets it "
              "with"},
    {"E0215", "grid extent %c overflows 64 bits when %s, the initial values, which create sets "
              "it with"},
    {"E0216", "grid extent %c is %lld when %s, the initial values, which create sets it with; "
              "there it must be 0 (the node is off) to %lld"},
    {"E0237", "scalar '%s' takes the communicator's %s, which has no bound; %s can follow a "
              "scalar only up to a bound"},
    /* usage errors (main.c), JSON only after --diagnostics-format=json */
    {"E0217", "%s needs a value"},
    {"E0218", "unknown diagnostics format '%s' (use text or json)"},
    {"E0219", "unknown diagnostics output '%s' (use stderr or stdout)"},
    {"E0220", "unknown warning '%s' (the warnings are uninitialized, unused, "
              "block-size, unused-define and search-budget)"},
    {"E0220", "unknown warning '%s' (the warnings are uninitialized, unused, block-size, "
              "unused-define, search-budget and writes-nothing)"},
    {"E0220", "unknown warning '%s' (the warnings are %s)"},
    {"E0221", "unknown output kind '%s' (use --emit=c or --emit=dot)"},
    {"E0222", "--prefix takes the start of a C name, at most %d bytes of letters, "
              "digits and '_' (not '%s')"},
    {"E0223", "-D takes NAME=VALUE, not '%s'"},
    {"E0224", "-D %s: the value does not fit in 64 bits"},
    {"E0225", "-D %s: the value must be an integer"},
    {"E0226", "unknown option '%s'"},
    {"E0227", "more than one input file ('%s')"},
    {"E0228", "no input file"},
    {"E0229", "C output needs -o OUT.c (the header goes beside it)"},
    {"E0230", "-H applies to --emit=c only"},
    {"E0231", "--templates applies to --emit=c only"},
    {"E0232", "--emit=dot without -o writes the DOT to standard output; diagnostics "
              "cannot go there too"},
    {"E0233", "--depfile needs -o to name the target"},
    {"E0234", "%s needs a file name"},
    {"E0235", "the header '%s' cannot be named in #include \"...\" (it has %s)"},
    {"E0236", "the header '%s' would include itself in place of the runtime's "
              "cgrt.h; name it otherwise (-o or -H)"},
    {"E0239", "a 'for' loop runs over 'START .. END', not range(...): write "
              "'for %s in 0 .. END'"},
    {"E0239", "a 'for' loop runs over 'START .. END' ('for %s in 0 .. N')"},
    {"E0240", "a node is declared with 'node': 'node %s = ...'"},
    {"E0241", "a condition cannot compute with '%s': each side of a comparison is a scalar, "
              "one buffer element or a constant expression; move the arithmetic to the "
              "constant side, or have a kernel compute the value into a scalar or element"},
    {"E0242", "a parameter is written 'MODE NAME: TYPE', as in 'in x: f16*' or 'n: u32' (MODE "
              "in, out or inout for a pointer), not as in C"},
    {"E0243", "a kernel is declared as 'kernel NAME(in x: f16*, n: u32);', not as a CUDA "
              "prototype: cgc writes the extern \"C\" declaration from it"},
    {"E0238", "-o '%s': C output goes into a .c, .cc, .cpp, .cxx or .cu file, not a '%s' file "
              "(its header is written beside it; -H names another)"},
    {"E0244", "no diagnostic has the code '%s' (the codes are listed in doc/language.md, "
              "section 19.1)"},
};

/* Unknown formats get E0000, which the diagnostics tests refuse.  At most
 * MAX_ERRORS errors are printed: a search through the table is enough. */
const char *error_code(const char *fmt) {
  for (size_t i = 0; i < sizeof errors / sizeof *errors; i++)
    if (!strcmp(errors[i].format, fmt))
      return errors[i].code;
  return "E0000";
}

/* The i-th format of `code` (from 0), or NULL past the last. */
const char *error_format(const char *code, int i) {
  for (size_t k = 0; k < sizeof errors / sizeof *errors; k++)
    if (!strcmp(errors[k].code, code) && i-- == 0)
      return errors[k].format;
  return NULL;
}

static const struct {
  const char *name, *code, *help;
} warnings[W_COUNT] = {
#define WARNING(e, name, code, help) [W_##e] = {name, code, help},
#include "warnings.def"
};

const char *warning_code(Warning w) { return warnings[w].code; }
const char *warning_name(Warning w) { return warnings[w].name; }
const char *warning_help(Warning w) { return warnings[w].help; }

bool warning_named(const char *name, Warning *w) {
  for (int i = 0; i < W_COUNT; i++)
    if (!strcmp(name, warnings[i].name)) {
      *w = (Warning)i;
      return true;
    }
  return false;
}
