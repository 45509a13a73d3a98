/* lsp_internal.h: what the files of `cgc lsp` share, private to them.
 *
 * lsp.c        the server: initialize, dispatch, the message loop
 * lsp_rpc.c    JSON-RPC transport (Content-Length framing) and LSP positions
 * lsp_doc.c    documents: their text, URIs and paths, analysis, diagnostics
 * lsp_query.c  queries on an analysis: hover, definition, completion,
 *              symbols, formatting and code actions */
#ifndef CGC_LSP_INTERNAL_H
#define CGC_LSP_INTERNAL_H

#include "cgc.h"

#include <cjson/cJSON.h>

/* JSON-RPC's and LSP's error codes. */
enum {
  RPC_PARSE_ERROR = -32700,
  RPC_INVALID_REQUEST = -32600,
  RPC_METHOD_NOT_FOUND = -32601,
  RPC_INVALID_PARAMS = -32602,
  RPC_SERVER_NOT_INITIALIZED = -32002,
  RPC_REQUEST_FAILED = -32803,
};

/* The largest message read: a document at the compiler's limit, escaped. */
#define MAX_MESSAGE ((size_t)MAX_FILE_SIZE * 2 + (1 << 20))

/* One run of the front end over a document. */
typedef struct Analysis {
  Compiler c;
  Program *p;
  int file;    /* the document's source */
} Analysis;

typedef struct Doc {
  char *uri;
  char *path; /* the file the URI names (the URI itself when it is no file:) */
  char *real; /* its real path, or NULL when there is no such file */
  char *text;
  size_t len;
  int64_t version;
  Analysis *an;
} Doc;

/* The line starts of the text positions were last asked of, made in one
 * pass, so that a request's many positions cost a search each, not a scan
 * of the text from its start; forgotten at each message and after each
 * change didChange applies, since a freed text's address may come back
 * (with its length). */
typedef struct Lines {
  const char *t;
  size_t n;
  VEC(size_t) start;
} Lines;

typedef struct Server {
  Lines *lines; /* a pointer: positions are asked through a const Server */
  VEC(Doc *) docs;
  VEC(char *) incs; /* initializationOptions.includePaths */
  bool initialized, shutdown;
  bool utf8; /* positions count bytes (the client offered utf-8), else UTF-16 units */
} Server;
typedef struct Request {
  Server *s;
  const cJSON *id;
  const cJSON *params;
  Doc *doc;
  size_t off; /* the position's byte offset in doc */
} Request;

/* lsp_rpc.c */
void reply(const cJSON *id, cJSON *result);
void reply_error(const cJSON *id, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void notify(const char *method, cJSON *params);
int read_message(char **body, size_t *len);
size_t line_offset(const Server *s, const char *t, size_t n, int64_t line);
size_t line_end(const char *t, size_t n, size_t i);
size_t byte_at(const Server *s, const char *t, size_t ls, size_t le, int64_t ch);
cJSON *lsp_pos(const Server *s, const char *t, size_t n, int64_t line, int64_t col);
cJSON *lsp_pos_at(const Server *s, const char *t, size_t n, size_t off);
cJSON *lsp_range(cJSON *start, cJSON *end);
bool ident_char(char c);
size_t extent_end(const char *t, size_t n, size_t off);

/* lsp_doc.c */
void path_uri(CharVec *out, const char *path);
Doc *find_doc(Server *s, const char *uri);
Doc *find_doc_real(Server *s, const char *real);
void file_uri(Server *s, Doc *d, Analysis *a, int k, CharVec *out);
/* The index in c.files of source `file` (a source table index) of an
 * analysis, or -1. */
int file_index(const Analysis *a, int file);
const char *json_str(const cJSON *o, const char *key);
void doc_free(Doc *d);
void on_did_open(Server *s, const cJSON *params);
void on_did_change(Server *s, const cJSON *params);
void on_did_close(Server *s, const cJSON *params);

/* lsp_query.c */
bool get_int(const cJSON *o, const char *key, int64_t *v);
void on_hover(Request *r);
void on_definition(Request *r);
void on_completion(Request *r);
void on_symbols(Request *r);
void on_formatting(Request *r);
void on_code_action(Request *r);

#endif
