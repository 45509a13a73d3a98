/* lsp.c: `cgc lsp`, a language server (LSP 3.17, JSON-RPC over standard
 * input and output).
 *
 * It shares the compiler's front end: each open document is scanned,
 * parsed, checked and ordered by the same code as `cgc FILE --check`, on
 * its text in memory, in a Compiler of its own that lives until the next
 * change (so hover, definition, completion and symbols read that run's
 * tree and graphs).  Includes are found as the compiler finds them, and an
 * open document's unsaved text is read in place of its file.  Diagnostics
 * are the compiler's JSON diagnostics (codes, notes, fixes), turned into
 * LSP's.  Formatting is fmt_source, as `cgc fmt`.  JSON is cJSON's. */
#include "cgc.h"

#ifndef CGC_HAVE_CJSON

int cgc_lsp(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fputs("cgc: error: this cgc was built without the language server: it needs cJSON "
        "(Debian's libcjson-dev) when CMake configures it\n",
        stderr);
  return 2;
}

#else

#include "lsp_internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- initialize ---- */

static void on_initialize(Request *r) {
  Server *s = r->s;
  const cJSON *caps = cJSON_GetObjectItemCaseSensitive(r->params, "capabilities");
  const cJSON *general = cJSON_GetObjectItemCaseSensitive(caps, "general");
  const cJSON *enc, *encs = cJSON_GetObjectItemCaseSensitive(general, "positionEncodings");
  cJSON_ArrayForEach(enc, encs) if (cJSON_IsString(enc) && !strcmp(enc->valuestring, "utf-8"))
      s->utf8 = true;
  const cJSON *opts = cJSON_GetObjectItemCaseSensitive(r->params, "initializationOptions");
  const cJSON *dir, *dirs = cJSON_GetObjectItemCaseSensitive(opts, "includePaths");
  cJSON_ArrayForEach(dir, dirs) if (cJSON_IsString(dir)) {
    char *copy = strcpy(xrealloc(NULL, strlen(dir->valuestring) + 1), dir->valuestring);
    vec_push(&s->incs, copy);
  }
  s->initialized = true;

  cJSON *res = cJSON_CreateObject(), *cap = cJSON_CreateObject();
  cJSON_AddStringToObject(cap, "positionEncoding", s->utf8 ? "utf-8" : "utf-16");
  cJSON *sync = cJSON_CreateObject();
  cJSON_AddBoolToObject(sync, "openClose", true);
  cJSON_AddNumberToObject(sync, "change", 2); /* incremental */
  cJSON_AddItemToObject(cap, "textDocumentSync", sync);
  cJSON_AddBoolToObject(cap, "hoverProvider", true);
  cJSON_AddBoolToObject(cap, "definitionProvider", true);
  cJSON *comp = cJSON_CreateObject();
  cJSON_AddItemToObject(cap, "completionProvider", comp);
  cJSON_AddBoolToObject(cap, "documentFormattingProvider", true);
  cJSON_AddBoolToObject(cap, "documentSymbolProvider", true);
  cJSON *ca = cJSON_CreateObject(), *kinds = cJSON_CreateArray();
  cJSON_AddItemToArray(kinds, cJSON_CreateString("quickfix"));
  cJSON_AddItemToObject(ca, "codeActionKinds", kinds);
  cJSON_AddItemToObject(cap, "codeActionProvider", ca);
  cJSON_AddItemToObject(res, "capabilities", cap);
  cJSON *info = cJSON_CreateObject();
  cJSON_AddStringToObject(info, "name", "cgc");
  cJSON_AddStringToObject(info, "version", CGC_VERSION);
  cJSON_AddItemToObject(res, "serverInfo", info);
  reply(r->id, res);
}

/* ---- dispatch ---- */

typedef struct Method {
  const char *name;
  void (*fn)(Request *r);
} Method;

static const Method requests[] = {
    {"textDocument/hover", on_hover},           {"textDocument/definition", on_definition},
    {"textDocument/completion", on_completion}, {"textDocument/documentSymbol", on_symbols},
    {"textDocument/formatting", on_formatting}, {"textDocument/codeAction", on_code_action},
};

/* Handles one message; returns the exit status once `exit` came, else -1. */
static int handle(Server *s, const cJSON *msg) {
  if (!cJSON_IsObject(msg)) {
    reply_error(NULL, RPC_INVALID_REQUEST, "a message must be a JSON object");
    return -1;
  }
  const cJSON *id = cJSON_GetObjectItemCaseSensitive(msg, "id");
  const cJSON *method = cJSON_GetObjectItemCaseSensitive(msg, "method");
  const cJSON *params = cJSON_GetObjectItemCaseSensitive(msg, "params");
  if (cJSON_IsNull(params))
    params = NULL; /* "params": null, as clients send with shutdown and exit, is none */
  const char *version = json_str(msg, "jsonrpc");
  if (id && !cJSON_IsNumber(id) && !cJSON_IsString(id)) {
    reply_error(NULL, RPC_INVALID_REQUEST, "id must be a number or a string");
    return -1;
  }
  if (!method && id &&
      (cJSON_GetObjectItemCaseSensitive(msg, "result") ||
       cJSON_GetObjectItemCaseSensitive(msg, "error")))
    return -1; /* a response: the server sends no requests */
  if (!version || strcmp(version, "2.0") || !cJSON_IsString(method)) {
    if (id)
      reply_error(id, RPC_INVALID_REQUEST,
                  "a request needs \"jsonrpc\": \"2.0\" and a method, a string");
    return -1;
  }
  if (params && !cJSON_IsObject(params) && !cJSON_IsArray(params)) {
    if (id)
      reply_error(id, RPC_INVALID_PARAMS, "params must be an object or an array");
    return -1;
  }
  const char *m = method->valuestring;
  if (!id) { /* a notification: never answered */
    if (!strcmp(m, "exit"))
      return s->shutdown ? 0 : 1;
    if (!s->initialized || s->shutdown || !cJSON_IsObject(params))
      return -1;
    if (!strcmp(m, "textDocument/didOpen"))
      on_did_open(s, params);
    else if (!strcmp(m, "textDocument/didChange"))
      on_did_change(s, params);
    else if (!strcmp(m, "textDocument/didClose"))
      on_did_close(s, params);
    return -1; /* initialized, didSave, $/cancelRequest and the rest */
  }
  Request r = {.s = s, .id = id, .params = params};
  if (!strcmp(m, "initialize")) {
    if (s->initialized)
      reply_error(id, RPC_INVALID_REQUEST, "initialize was sent already");
    else if (params && !cJSON_IsObject(params))
      reply_error(id, RPC_INVALID_PARAMS, "initialize takes an object");
    else
      on_initialize(&r);
    return -1;
  }
  if (!s->initialized) {
    reply_error(id, RPC_SERVER_NOT_INITIALIZED, "the server is not initialized yet");
    return -1;
  }
  if (s->shutdown) {
    reply_error(id, RPC_INVALID_REQUEST, "the server is shut down: only exit remains");
    return -1;
  }
  if (!strcmp(m, "shutdown")) {
    s->shutdown = true;
    reply(id, NULL);
    return -1;
  }
  for (size_t i = 0; i < sizeof requests / sizeof *requests; i++)
    if (!strcmp(m, requests[i].name)) {
      if (!cJSON_IsObject(params))
        reply_error(id, RPC_INVALID_PARAMS, "%s takes an object", m);
      else
        requests[i].fn(&r);
      return -1;
    }
  reply_error(id, RPC_METHOD_NOT_FOUND, "unknown method '%.200s'", m);
  return -1;
}

int cgc_lsp(int argc, char **argv) {
  for (int i = 0; i < argc; i++) {
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      fputs("usage: cgc lsp [--stdio]\n"
            "  a language server (LSP 3.17) on standard input and output, for editors:\n"
            "  diagnostics, hover, go to definition, completion, formatting, symbols\n",
            stdout);
      return 0;
    }
    if (strcmp(argv[i], "--stdio")) {
      fprintf(stderr, "cgc: error: unknown lsp option '%s' (cgc lsp --help)\n", argv[i]);
      return 2;
    }
  }
  Lines lines = {0};
  Server s = {.lines = &lines};
  int status = -1;
  while (status < 0) {
    lines.t = NULL; /* texts may change with any message */
    char *body = NULL;
    size_t len = 0;
    int got = read_message(&body, &len);
    if (got == 0) {
      status = 1; /* the client went away without exit */
      break;
    }
    if (got < 0) {
      reply_error(NULL, RPC_PARSE_ERROR, "a message needs a Content-Length header");
      continue;
    }
    if (!body) {
      reply_error(NULL, RPC_INVALID_REQUEST, "the message is larger than cgc lsp reads");
      continue;
    }
    cJSON *msg = cJSON_ParseWithLength(body, len);
    free(body);
    if (!msg) {
      reply_error(NULL, RPC_PARSE_ERROR, "the message is not JSON");
      continue;
    }
    status = handle(&s, msg);
    cJSON_Delete(msg);
  }
  for (size_t i = 0; i < s.docs.n; i++)
    doc_free(s.docs.v[i]);
  vec_free(&s.docs);
  for (size_t i = 0; i < s.incs.n; i++)
    free(s.incs.v[i]);
  vec_free(&s.incs);
  vec_free(&lines.start);
  return status;
}

#endif
