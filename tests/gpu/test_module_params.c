/* test_module_params: the runtime reads how many parameters a module's
 * kernel takes from the module itself (cgrt_module_params), for PTX, a
 * cubin and a fatbin as nvcc writes them, so that create never asks CUDA
 * for a parameter past the last.  Reads files only: no GPU. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgrt_internal.h"

static int failures, checks;

static void check(int ok, const char *what, const char *file) {
  checks++;
  if (!ok) {
    failures++;
    printf("FAIL: %s: %s\n", file, what);
  }
}

static unsigned char *read_file(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  unsigned char *buf = NULL;
  long size;
  if (!f || fseek(f, 0, SEEK_END) || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) ||
      !(buf = malloc((size_t)size + 1)) || fread(buf, 1, (size_t)size, f) != (size_t)size) {
    printf("FAIL: cannot read %s\n", path);
    exit(1);
  }
  fclose(f);
  *n = (size_t)size;
  return buf;
}

/* module_kernels.cu's kernels and their parameters. */
static const struct {
  const char *symbol;
  uint32_t params;
} kernels[] = {{"mod_transform", 5}, {"mod_bump", 4},       {"through_smem", 4},
               {"pdl_transform", 4}, {"cluster_blocks", 1}, {"_Z7mangledPjj", 2}};

static void check_module(const char *dir, const char *name, cgrt_module_format format) {
  char path[4096];
  size_t n;
  snprintf(path, sizeof path, "%s/%s", dir, name);
  unsigned char *image = read_file(path, &n);
  if (format == CGRT_MODULE_PTX)
    image[n++] = 0; /* the generated table's PTX ends with a NUL */
  cgrt_module_desc md = {name, (uint8_t)format, n, image};
  char what[256];
  for (size_t k = 0; k < sizeof kernels / sizeof kernels[0]; k++) {
    uint32_t count = 99;
    int known = cgrt_module_params(&md, kernels[k].symbol, &count);
    snprintf(what, sizeof what, "%s takes %u parameters (read: %d, %u)", kernels[k].symbol,
             kernels[k].params, known, count);
    check(known && count == kernels[k].params, what, name);
  }
  uint32_t count = 99;
  check(!cgrt_module_params(&md, "mod_trans", &count) && count == 99,
        "a prefix of a kernel's name is no kernel", name);
  check(!cgrt_module_params(&md, "no_such_kernel", &count), "an absent kernel is unknown", name);
  /* Every prefix of the file, and the file with a byte changed, either
   * says nothing or the right count: never reads past the bytes it has. */
  for (size_t len = 0; len < n; len += 1 + len / 64) {
    cgrt_module_desc cut = {name, (uint8_t)format, len, image};
    count = 0;
    if (cgrt_module_params(&cut, "mod_transform", &count) && count != 5)
      check(0, "a truncated module gives a wrong count", name);
  }
  for (size_t at = 0; at < n && at < 4096; at += 7) {
    unsigned char was = image[at];
    image[at] ^= 0xff;
    cgrt_module_params(&md, "mod_bump", &count);
    image[at] = was;
  }
  free(image);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: test_module_params MODULES_DIR\n");
    return 2;
  }
  check_module(argv[1], "module_kernels.ptx", CGRT_MODULE_PTX);
  check_module(argv[1], "module_kernels.cubin", CGRT_MODULE_CUBIN);
  check_module(argv[1], "module_kernels.fatbin", CGRT_MODULE_FATBIN);
  check_module(argv[1], "module_kernels_sm75.cubin", CGRT_MODULE_CUBIN);
  check_module(argv[1], "module_kernels_sm80.cubin", CGRT_MODULE_CUBIN);
  /* PTX written by hand: a kernel without parameters, one whose list
   * holds an array parameter, and a name that only starts another's. */
  static const char ptx[] = ".version 8.0\n.target sm_75\n.address_size 64\n"
                            ".visible .entry nothing()\n{\n\tret;\n}\n"
                            ".visible .entry arrays(\n\t.param .align 8 .b8 arrays_param_0[40],\n"
                            "\t.param .u32 arrays_param_1\n)\n{\n\tret;\n}\n"
                            ".entry nothing_more(.param .u64 p)\n{\n\tret;\n}\n";
  cgrt_module_desc md = {"hand.ptx", CGRT_MODULE_PTX, sizeof ptx, (const unsigned char *)ptx};
  uint32_t count = 99;
  check(cgrt_module_params(&md, "nothing", &count) && count == 0, "nothing takes 0", "hand.ptx");
  check(cgrt_module_params(&md, "arrays", &count) && count == 2, "arrays takes 2", "hand.ptx");
  check(cgrt_module_params(&md, "nothing_more", &count) && count == 1, "nothing_more takes 1",
        "hand.ptx");
  printf("test_module_params: %d checks, %d failed\n", checks, failures);
  return failures != 0;
}
