/* cgrt_modules.c: what each kernel node runs: a linked kernel, a
 * template's instantiation or a module's kernel, and the driver's handles
 * for updating them. */
#include "cgrt_internal.h"

/* What failed while finding kernel k from its module, for a message that
 * names the kernel, its symbol and the module as the .cgraph wrote it. */
static cgrt_status fail_kernel(const cgrt_graph_desc *d, uint32_t k, uint32_t node,
                               const char *call, cudaError_t err) {
  const cgrt_kernel_from *kf = &d->kernel_from[k];
  char what[512];
  snprintf(what, sizeof what, "%s (kernel %s, symbol '%s' in module '%s')", call,
           d->kernel_names[k], kf->symbol, d->modules[kf->module].path);
  return fail_node(d, &d->nodes[node], what, err);
}

#if CUDART_VERSION >= 12050
/* The driver's count of a kernel's parameters, where it has that call
 * (drivers after CUDA 13.0's): asked for at the driver's own version, so
 * that a driver without it answers "not found" rather than an error.  A
 * runtime call that fails here has its error cleared (it is not sticky):
 * the program's cudaGetLastError() is not to read it as its own. */
static int driver_param_count(cudaKernel_t kernel, uint32_t *count) {
  int version = 0;
  void *fn = NULL;
  size_t n = 0;
  enum cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
  if (cudaDriverGetVersion(&version) != cudaSuccess ||
      (version > 0 &&
       cudaGetDriverEntryPointByVersion("cuKernelGetParamCount", &fn, (unsigned)version,
                                        cudaEnableDefault, &q) != cudaSuccess)) {
    (void)cudaGetLastError();
    return 0;
  }
  if (version <= 0 || q != cudaDriverEntryPointSuccess || !fn ||
      ((CUresult(*)(CUkernel, size_t *))fn)((CUkernel)kernel, &n) != CUDA_SUCCESS || n > UINT32_MAX)
    return 0;
  *count = (uint32_t)n;
  return 1;
}
#endif

/* A module kernel's parameters against the declaration: as many, each of
 * the size its argument takes (node `node`'s).  A module is compiled
 * apart from the .cgraph, so nothing else checks them (Triton adds
 * parameters of its own, for one).  The count comes from the driver or
 * the module (cgrt_module_params), never from asking for a parameter past
 * the last, which would leave an error for the program to read; a module
 * that says nothing (a compressed fatbin, on a driver without the count)
 * has its declared parameters checked, not the count, and one past the
 * last there has its error cleared. */
static cgrt_status check_params(const cgrt_graph_desc *d, uint32_t k, uint32_t node,
                                cudaKernel_t kernel) {
  const cgrt_node_desc *nd = &d->nodes[node];
  const cgrt_kernel_from *kf = &d->kernel_from[k];
  const char *module = d->modules[kf->module].path;
  uint32_t count = 0;
  int known = cgrt_module_params(&d->modules[kf->module], kf->symbol, &count);
#if CUDART_VERSION >= 12050
  known = known || driver_param_count(kernel, &count);
#endif
  if (known && count != nd->nargs)
    return invalid(d, "node %s: kernel %s (symbol '%s' in module '%s') takes %u parameters, "
                      "but its declaration has %u",
                   nd->name, d->kernel_names[k], kf->symbol, module, count, nd->nargs);
  for (uint32_t i = 0; i < nd->nargs; i++) {
    size_t offset, size;
    cudaError_t err = CU(cudaFuncGetParamInfo((const void *)kernel, i, &offset, &size));
    if (err == cudaErrorInvalidValue && !known) {
      (void)cudaGetLastError(); /* asked past the last: no error of the program's */
      return invalid(d, "node %s: kernel %s (symbol '%s' in module '%s') takes %u parameters, "
                        "but its declaration has %u",
                     nd->name, d->kernel_names[k], kf->symbol, module, i, nd->nargs);
    }
    if (err != cudaSuccess)
      return fail_kernel(d, k, node, "cudaFuncGetParamInfo", err);
    if (size != d->args[nd->arg + i].size)
      return invalid(d, "node %s: parameter %u of kernel %s (symbol '%s' in module '%s') takes "
                        "%zu bytes, but its declaration's takes %u",
                     nd->name, i + 1, d->kernel_names[k], kf->symbol, module, size,
                     d->args[nd->arg + i].size);
  }
  return CGRT_OK;
}

/* Module kernel k of node `node`: its module loaded once per graph, the
 * kernel found, loaded into this device's context now (so that a module
 * built for another GPU fails here, not at the first launch: with lazy
 * loading the library itself loads without complaint), and its parameters
 * checked. */
static cgrt_status load_module_kernel(cgrt_graph *g, uint32_t k, uint32_t node) {
  const cgrt_graph_desc *d = g->d;
  const cgrt_kernel_from *kf = &d->kernel_from[k];
  cudaError_t err;
  if (!g->libraries[kf->module]) {
    err = CU(cudaLibraryLoadData(&g->libraries[kf->module], d->modules[kf->module].image, NULL,
                                 NULL, 0, NULL, NULL, 0));
    if (err != cudaSuccess) {
      g->libraries[kf->module] = NULL;
      return fail_kernel(d, k, node, "cudaLibraryLoadData", err);
    }
    account(1, 0);
  }
  cudaKernel_t kernel = NULL;
  if ((err = CU(cudaLibraryGetKernel(&kernel, g->libraries[kf->module], kf->symbol))) !=
      cudaSuccess)
    return fail_kernel(d, k, node, "cudaLibraryGetKernel", err);
  struct cudaFuncAttributes attr;
  if ((err = CU(cudaFuncGetAttributes(&attr, (const void *)kernel))) != cudaSuccess)
    return fail_kernel(d, k, node, "cudaFuncGetAttributes", err);
  g->funcs[k] = (const void *)kernel;
  return check_params(d, k, node, kernel);
}

#if CUDART_VERSION >= 12050
/* The driver's function `name` as of CUDA 12.0, or NULL (the failure
 * cleared: it is not sticky, and the runtime's call stays). */
static void *driver_entry(const char *name) {
  void *fn = NULL;
  enum cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
  if (cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &q) != cudaSuccess ||
      q != cudaDriverEntryPointSuccess) {
    (void)cudaGetLastError();
    return NULL;
  }
  return fn;
}
#endif

/* Kernel nodes are updated in the executable graph through the driver's
 * cuGraphExecKernelNodeSetParams where it can be found (CUDA 12.5 and
 * later), with each kernel's CUfunction and the graph's context found here
 * once: the runtime's call looks the kernel up by its host stub every
 * time, which costs about 0.3 us of host time an update on an H200
 * (bench/upload.cu, "driver" against "params"), and a set and launch of a
 * pointer scalar makes one.  What cannot be found leaves the runtime's
 * call. */
static cgrt_status find_driver(cgrt_graph *g) {
  const cgrt_graph_desc *d = g->d;
  if (!(g->drv_funcs = xcalloc(d->nkernels, sizeof *g->drv_funcs)))
    return no_memory(d);
#if CUDART_VERSION >= 12050
  void *update = driver_entry("cuGraphExecKernelNodeSetParams");
  void *current = driver_entry("cuCtxGetCurrent");
  void *get = driver_entry("cuKernelGetFunction"); /* for a module's kernels */
  CUcontext ctx = NULL;
  if (!update || !current || ((CUresult(*)(CUcontext *))current)(&ctx) != CUDA_SUCCESS || !ctx)
    return CGRT_OK;
  g->drv_update = (CUresult(*)(CUgraphExec, CUgraphNode, const CUDA_KERNEL_NODE_PARAMS_v2 *))update;
  g->ctx = ctx;
  for (uint32_t k = 0; k < d->nkernels; k++) {
    CUfunction f = NULL;
    if (!g->funcs[k])
      continue;
    if (kernel_kind(d, k) == CGRT_KERNEL_MODULE) {
      if (!get || ((CUresult(*)(CUfunction *, CUkernel))get)(&f, (CUkernel)g->funcs[k]) !=
                      CUDA_SUCCESS)
        f = NULL;
    } else if (cudaGetFuncBySymbol((cudaFunction_t *)&f, g->funcs[k]) != cudaSuccess) {
      (void)cudaGetLastError();
      f = NULL;
    }
    g->drv_funcs[k] = f;
  }
#endif
  return CGRT_OK;
}

/* What each kernel node of this graph runs: a linked kernel's host stub,
 * a template's instantiation (its accessor's answer), or a module's
 * kernel. */
cgrt_status cgrt_find_kernels(cgrt_graph *g) {
  const cgrt_graph_desc *d = g->d;
  g->funcs = xcalloc(d->nkernels, sizeof *g->funcs);
  g->libraries = xcalloc(d->nmodules, sizeof *g->libraries);
  if (!g->funcs || !g->libraries)
    return no_memory(d);
  for (uint32_t v = 0; v < d->nnodes; v++) {
    const cgrt_node_desc *nd = &d->nodes[v];
    uint32_t k = nd->kernel;
    if (!kind_of(nd)->runs_kernel || g->funcs[k])
      continue;
    cgrt_status s = CGRT_OK;
    switch (kernel_kind(d, k)) {
    case CGRT_KERNEL_LINKED: g->funcs[k] = kernel_address(d->kernels[k]); break;
    case CGRT_KERNEL_TEMPLATE:
      if (!(g->funcs[k] = d->kernel_from[k].address()))
        s = invalid(d, "node %s: template kernel %s has no address", nd->name,
                    d->kernel_names[k]);
      break;
    case CGRT_KERNEL_MODULE: s = load_module_kernel(g, k, v); break;
    }
    if (s != CGRT_OK)
      return s;
  }
  return find_driver(g);
}
