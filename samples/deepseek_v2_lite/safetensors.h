/* safetensors.h: a safetensors file, memory-mapped and its header checked.
 *
 * The format: an 8-byte little-endian header length n, n bytes of JSON (an
 * object: each tensor's name to {"dtype", "shape", "data_offsets"}, and an
 * optional "__metadata__" object of strings), then the tensors' bytes, the
 * offsets counting from the end of the header. */
#ifndef DSV2_SAFETENSORS_H
#define DSV2_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

typedef enum StDtype { ST_BF16, ST_F16, ST_F32, ST_OTHER } StDtype;

#define ST_MAX_DIMS 8

typedef struct StTensor {
  char *name;
  StDtype dtype;
  char dtype_name[16]; /* as the header spells it */
  int ndim;
  int64_t shape[ST_MAX_DIMS];
  uint64_t begin, end; /* into the data, which follows the header */
} StTensor;

typedef struct StFile {
  const char *path;
  const unsigned char *map; /* the whole file */
  size_t size;
  const unsigned char *data; /* the tensors' bytes */
  size_t data_size;
  StTensor *tensors;
  size_t ntensors;
  int mapped; /* st_open mapped `map`: st_close unmaps it */
} StFile;

/* Maps `path` and checks its header: valid JSON of the shape above, known
 * shapes, offsets inside the file, each tensor's size that of its dtype and
 * shape, no two tensors overlapping, and no byte of the data outside every
 * tensor.  Returns 0, or 1 with a message that
 * starts with the path (and the header's byte offset for bad JSON). */
int st_open(StFile *f, const char *path, char *err, size_t errlen);
/* The same checks of a file's `size` bytes already in memory (which must
 * outlive f), named `path` in messages: the fuzzer's way in. */
int st_parse(StFile *f, const char *path, const unsigned char *bytes, size_t size, char *err,
             size_t errlen);
void st_close(StFile *f);

/* Rewrites a message in place (within errlen bytes) so that control
 * characters from a file's names (JSON lets "\u001b" or "\n" into one) are
 * spelt as the header would spell them, \u001b, instead of breaking the
 * message's line or reaching a terminal.  st_open's and st_parse's
 * messages are already so. */
void st_message_text(char *err, size_t errlen);

/* The dtype's size in bytes; 0 for ST_OTHER. */
size_t st_dtype_size(StDtype d);

#endif
