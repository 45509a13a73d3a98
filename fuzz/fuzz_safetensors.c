/* fuzz_safetensors.c: libFuzzer over the DeepSeek-V2-Lite sample's
 * safetensors reader (samples/deepseek_v2_lite/safetensors.c).  Each input is
 * checked twice: as the whole file it is, and with its 8-byte header length
 * rewritten to end at its last '}', so that a mutated header still reaches
 * the JSON parser and the tensor checks.  An accepted file has every
 * tensor's bytes read, so that an offset past the data shows as a sanitizer
 * report, and its tensors must hold the whole data; a refused one must say
 * why.
 *   clang -fsanitize=fuzzer,address,undefined (fuzz/CMakeLists.txt) */
#include "safetensors.h"

#include <stdlib.h>
#include <string.h>

static void check(const unsigned char *bytes, size_t size) {
  StFile f;
  char err[512] = "";
  if (st_parse(&f, "fuzz.safetensors", bytes, size, err, sizeof err)) {
    if (!err[0] || strncmp(err, "fuzz.safetensors: ", 18))
      abort(); /* refused without a message that names the file */
    return;
  }
  volatile unsigned sum = 0;
  uint64_t held = 0;
  for (size_t i = 0; i < f.ntensors; i++) {
    const StTensor *t = &f.tensors[i];
    if (t->begin > t->end || t->end > f.data_size || !t->name)
      abort();
    for (uint64_t j = t->begin; j < t->end; j++)
      sum += f.data[j];
    held += t->end - t->begin;
  }
  if (held != f.data_size)
    abort(); /* the tensors, which do not overlap, hold the whole data */
  st_close(&f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  check(data, size);
  if (size < 9)
    return 0;
  const uint8_t *close = NULL;
  for (const uint8_t *p = data + 8; p < data + size; p++)
    if (*p == '}')
      close = p;
  if (!close)
    return 0;
  uint64_t n = (uint64_t)(close - (data + 8)) + 1;
  unsigned char *copy = malloc(size);
  if (!copy)
    return 0;
  memcpy(copy, data, size);
  for (int i = 0; i < 8; i++)
    copy[i] = (unsigned char)(n >> (8 * i));
  check(copy, size);
  free(copy);
  return 0;
}
