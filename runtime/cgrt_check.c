/* cgrt_check.c: the generated tables checked once, at create, before any
 * CUDA call: what building relies on and cgc guarantees. */
#include "cgrt_internal.h"

/* Whether a table's byte names a kind, one with its row in
 * cgrt_node_kinds. */
static int is_node_kind(uint8_t kind) {
  switch ((NodeKind)kind) {
  case CGRT_KERNEL_NODE:
  case CGRT_COPY_NODE:
  case CGRT_FILL_NODE:
  case CGRT_WHILE_NODE:
  case CGRT_IF_NODE:
  case CGRT_SWITCH_NODE:
  case CGRT_CAPTURE_NODE:
  case CGRT_COLLECTIVE_NODE: return kind < NODE_KINDS && cgrt_node_kinds[kind].name;
  }
  return 0;
}

static int is_buffer_kind(uint8_t kind) {
  switch ((BufferKind)kind) {
  case CGRT_DEVICE:
  case CGRT_EXTERN:
  case CGRT_HOST:
  case CGRT_EXTERN_HOST: return 1;
  }
  return 0;
}

static int is_kernel_kind(uint8_t kind) {
  switch ((KernelKind)kind) {
  case CGRT_KERNEL_LINKED:
  case CGRT_KERNEL_TEMPLATE:
  case CGRT_KERNEL_MODULE: return 1;
  }
  return 0;
}

static int is_module_format(uint8_t format) {
  switch ((ModuleFormat)format) {
  case CGRT_MODULE_PTX:
  case CGRT_MODULE_CUBIN:
  case CGRT_MODULE_FATBIN: return 1;
  }
  return 0;
}

static int is_arg_kind(uint8_t kind) {
  switch ((ArgKind)kind) {
  case CGRT_ARG_BUFFER:
  case CGRT_ARG_SCALAR_PTR:
  case CGRT_ARG_SCALAR_VALUE:
  case CGRT_ARG_CONST:
  case CGRT_ARG_HANDLE: return 1;
  }
  return 0;
}

/* Why a generated table cannot be built: "node x: its description is
 * malformed: why", or without a node "its description is malformed: why". */
static cgrt_status malformed(const cgrt_graph_desc *d, const cgrt_node_desc *nd, const char *fmt,
                             ...) {
  char at[512];
  snprintf(at, sizeof at, "%s%s%sits description is malformed: ", nd ? "node " : "",
           nd ? nd->name : "", nd ? ": " : "");
  va_list ap;
  va_start(ap, fmt);
  cgrt_status st = vinvalid(d, at, fmt, ap);
  va_end(ap);
  return st;
}

/* A kernel node's grid program, well formed: in the table, its operands
 * there, integer scalars, and one value left by each extent's. */
static cgrt_status check_grid_code(const cgrt_graph_desc *d, const cgrt_node_desc *nd) {
  uint32_t at = nd->grid_expr - 1;
  if (nd->grid_expr > d->ngrid_code || !d->grid_code)
    return malformed(d, nd, "grid program %u of %u words", nd->grid_expr, d->ngrid_code);
  for (int i = 0; i < 3; i++) {
    int depth = 0;
    for (;;) {
      if (at >= d->ngrid_code)
        return malformed(d, nd, "its grid program ends past the table");
      int64_t op = d->grid_code[at++];
      if (op == CGRT_GRID_END)
        break;
      if (op == CGRT_GRID_CONST || op == CGRT_GRID_SCALAR) {
        if (at >= d->ngrid_code || depth == CGRT_GRID_STACK)
          return malformed(d, nd, "its grid program ends early or holds too many values");
        int64_t w = d->grid_code[at++];
        if (op == CGRT_GRID_SCALAR && (w < 0 || (uint64_t)w >= d->nscalars ||
                                       d->scalars[w].type > CGRT_U64))
          return malformed(d, nd, "its grid follows scalar %lld, not an integer one of %u",
                           (long long)w, d->nscalars);
        depth++;
      } else if (op == CGRT_GRID_NEG) {
        if (depth < 1)
          return malformed(d, nd, "its grid program negates nothing");
      } else if (op < CGRT_GRID_ADD || op >= CGRT_GRID_NOPS || depth-- < 2) {
        return malformed(d, nd, "its grid program has instruction %lld", (long long)op);
      }
    }
    if (depth != 1)
      return malformed(d, nd, "its grid program leaves %d values", depth);
  }
  return CGRT_OK;
}

/* A while's or if's condition: postfix code that leaves one value, of
 * comparisons the kernels know, reading no operand past the node's (the
 * kernels index by it). */
static cgrt_status check_condition(const cgrt_graph_desc *d, const cgrt_node_desc *nd) {
  if (nd->nbodies == 0 || nd->ncode > CGRT_COND_CODE || nd->nargs > CGRT_COND_OPERANDS ||
      nd->code > d->ncode || nd->ncode > d->ncode - nd->code)
    return malformed(d, nd, "a condition of %u instructions from %u, %u operands, %u bodies",
                     nd->ncode, nd->code, nd->nargs, nd->nbodies);
  uint32_t depth = 0, operands = 0;
  for (uint32_t i = 0; i < nd->ncode; i++) {
    unsigned c = d->code[nd->code + i];
    if (c == CGRT_COND_AND || c == CGRT_COND_OR) {
      if (depth < 2)
        return malformed(d, nd, "instruction %u of the condition joins two values, with %u on "
                                "the stack", i, depth);
      depth--;
    } else if (c > CGRT_COND_COMPARE(CGRT_F64, CGRT_NCMP - 1, 1)) {
      return malformed(d, nd, "instruction %u of the condition (%u) is no comparison", i, c);
    } else {
      depth++;
      operands += 2;
    }
  }
  if (depth != 1)
    return malformed(d, nd, "a condition that leaves %u values on the stack, not 1", depth);
  if (operands > nd->nargs)
    return malformed(d, nd, "a condition that reads %u operands of %u", operands, nd->nargs);
  return CGRT_OK;
}

/* Node v's fields that its kind gives meaning to; *least_args: the
 * arguments it must have. */
static cgrt_status check_kind_fields(const cgrt_graph_desc *d, uint32_t v, uint32_t *least_args) {
  const cgrt_node_desc *nd = &d->nodes[v];
  *least_args = 0;
  switch (node_kind(nd)) {
  case CGRT_KERNEL_NODE:
    if (nd->kernel >= d->nkernels)
      return malformed(d, nd, "kernel %u of %u", nd->kernel, d->nkernels);
    return nd->grid_expr ? check_grid_code(d, nd) : CGRT_OK;
  case CGRT_CAPTURE_NODE:
    if (nd->kernel >= d->ncaptures || !d->captures || !d->capture_names)
      return malformed(d, nd, "capture function %u of %u", nd->kernel, d->ncaptures);
    for (uint32_t i = nd->arg; i < nd->arg + nd->nargs; i++)
      if (d->args[i].kind == CGRT_ARG_SCALAR_VALUE)
        return malformed(d, nd, "a scalar by value to a capture function");
    return CGRT_OK;
  case CGRT_COLLECTIVE_NODE:
    if (!d->collectives)
      return malformed(d, nd, "a collective without the collectives' library");
    if (nd->nargs != 2 || nd->collective > CGRT_BROADCAST || nd->reduce_op > CGRT_AVG ||
        nd->elem_type > CGRT_F64)
      return malformed(d, nd, "a collective's fields");
    for (uint32_t i = nd->arg; i < nd->arg + nd->nargs; i++)
      if (d->args[i].kind != CGRT_ARG_BUFFER && d->args[i].kind != CGRT_ARG_SCALAR_PTR)
        return malformed(d, nd, "a collective's argument %u", i - nd->arg);
    return CGRT_OK;
  case CGRT_COPY_NODE: *least_args = 2; return CGRT_OK;
  case CGRT_FILL_NODE:
    if (nd->elem_size != 1 && nd->elem_size != 2 && nd->elem_size != 4 && nd->elem_size != 8)
      return malformed(d, nd, "elements of %u bytes", nd->elem_size);
    *least_args = 1;
    return CGRT_OK;
  case CGRT_WHILE_NODE:
  case CGRT_IF_NODE: return check_condition(d, nd);
  case CGRT_SWITCH_NODE:
    if (nd->nbodies == 0 || nd->first_case > d->ncases ||
        nd->nbodies > d->ncases - nd->first_case || nd->default_body >= (int32_t)nd->nbodies ||
        nd->default_body < -1)
      return malformed(d, nd, "%u bodies, cases from %u, default %d", nd->nbodies,
                       nd->first_case, nd->default_body);
    *least_args = 1;
    return CGRT_OK;
  }
  return CGRT_OK; /* is_node_kind refused other kinds */
}

/* Node v's arguments: kinds and indices in range; a while's handle only
 * to a kernel of that while's body. */
static cgrt_status check_args(const cgrt_graph_desc *d, uint32_t v) {
  const cgrt_node_desc *nd = &d->nodes[v];
  for (uint32_t i = nd->arg; i < nd->arg + nd->nargs; i++) {
    const cgrt_arg_desc *a = &d->args[i];
    if (!is_arg_kind(a->kind))
      return malformed(d, nd, "argument %u: kind %u is no kind of argument", i - nd->arg, a->kind);
    switch (arg_kind(a)) {
    case CGRT_ARG_BUFFER:
      if (a->index >= d->nbuffers)
        return malformed(d, nd, "argument %u: buffer %u of %u", i - nd->arg, a->index, d->nbuffers);
      break;
    case CGRT_ARG_SCALAR_PTR:
    case CGRT_ARG_SCALAR_VALUE:
      if (a->index >= d->nscalars)
        return malformed(d, nd, "argument %u: scalar %u of %u", i - nd->arg, a->index, d->nscalars);
      break;
    case CGRT_ARG_CONST: break;
    case CGRT_ARG_HANDLE: {
      /* An earlier while that says its body sets its handle, with no
       * bound, whose body holds this kernel node directly (not in nested
       * control flow: see sema.c's check_handle_arg). */
      const cgrt_node_desc *w = a->index < v ? &d->nodes[a->index] : NULL;
      if (!kind_of(nd)->runs_kernel || !w || !kind_of(w)->repeats ||
          !w->body_sets_handle || w->max_iter || w->scope != CGRT_TOP || nd->scope != a->index ||
          a->size != 8)
        return malformed(d, nd, "argument %u: the handle of node %u, which is no while without a "
                         "bound whose body holds this kernel and sets its handle", i - nd->arg,
                         a->index);
      break;
    }
    }
  }
  return CGRT_OK;
}

/* A node's own fields and arguments; the nodes before it and the buffers
 * are checked. */
static cgrt_status check_node(const cgrt_graph_desc *d, uint32_t v) {
  const cgrt_node_desc *nd = &d->nodes[v];
  if (!is_node_kind(nd->kind))
    return malformed(d, nd, "kind %u is no kind of node", nd->kind);
  if (nd->scope != CGRT_TOP && (nd->scope >= v || !is_control(&d->nodes[nd->scope]) ||
                                nd->branch >= d->nodes[nd->scope].nbodies))
    return malformed(d, nd, "its body is not one of an earlier control node");
  uint32_t least_args;
  cgrt_status s = check_kind_fields(d, v, &least_args);
  if (s != CGRT_OK)
    return s;
  if (nd->grid_expr && !kind_of(nd)->runs_kernel)
    return malformed(d, nd, "a grid program on a node that is no kernel node");
  if (nd->nargs < least_args)
    return malformed(d, nd, "%u arguments", nd->nargs);
  if ((s = check_args(d, v)) != CGRT_OK)
    return s;
  if (!kind_of(nd)->repeats && nd->body_sets_handle)
    return malformed(d, nd, "a node that is no while sets its handle");
  if (is_control(nd) && nd->scope != CGRT_TOP && nd->scope < v &&
      d->nodes[nd->scope].body_sets_handle)
    return malformed(d, nd, "control flow in the body of a while whose body sets its handle");
  return CGRT_OK;
}

/* The kernel and module tables: each kernel found where its kind says,
 * each module with its bytes and a format. */
static cgrt_status check_kernels(const cgrt_graph_desc *d) {
  if (d->nkernels && (!d->kernels || !d->kernel_names))
    return malformed(d, NULL, "%u kernels, but no kernel table", d->nkernels);
  if (d->nmodules && !d->modules)
    return malformed(d, NULL, "%u modules, but no module table", d->nmodules);
  for (uint32_t m = 0; m < d->nmodules; m++) {
    const cgrt_module_desc *md = &d->modules[m];
    if (!md->path || !md->image || !md->bytes || !is_module_format(md->format))
      return malformed(d, NULL, "module %u: no path, no bytes or format %u", m, md->format);
    if (md->format == CGRT_MODULE_PTX && md->image[md->bytes - 1])
      return malformed(d, NULL, "module %s: its PTX does not end with a NUL", md->path);
  }
  for (uint32_t k = 0; k < d->nkernels; k++) {
    const cgrt_kernel_from *kf = d->kernel_from ? &d->kernel_from[k] : NULL;
    if (kf && !is_kernel_kind(kf->kind))
      return malformed(d, NULL, "kernel %s: kind %u is no kind of kernel", d->kernel_names[k],
                       kf->kind);
    switch (kernel_kind(d, k)) {
    case CGRT_KERNEL_LINKED:
      if (!d->kernels[k])
        return malformed(d, NULL, "kernel %s: linked in, but no address", d->kernel_names[k]);
      break;
    case CGRT_KERNEL_TEMPLATE:
      if (!kf->address)
        return malformed(d, NULL, "kernel %s: a template, but no accessor", d->kernel_names[k]);
      break;
    case CGRT_KERNEL_MODULE:
      if (kf->module >= d->nmodules || !kf->symbol)
        return malformed(d, NULL, "kernel %s: module %u of %u, symbol %s", d->kernel_names[k],
                         kf->module, d->nmodules, kf->symbol ? kf->symbol : "(none)");
      break;
    }
  }
  return CGRT_OK;
}

/* A while whose body sets its handle has exactly one argument that takes
 * it (check_node checked each such argument): with none, nothing would
 * end the loop; with two, they would race. */
static cgrt_status check_handles(const cgrt_graph_desc *d) {
  uint32_t v = 0;
  while (v < d->nnodes && !d->nodes[v].body_sets_handle)
    v++;
  if (v == d->nnodes)
    return CGRT_OK;
  uint8_t *takers = xcalloc(d->nnodes, 1);
  if (!takers)
    return no_memory(d);
  for (uint32_t n = 0; n < d->nnodes; n++)
    for (uint32_t i = d->nodes[n].arg; i < d->nodes[n].arg + d->nodes[n].nargs; i++)
      if (arg_kind(&d->args[i]) == CGRT_ARG_HANDLE && takers[d->args[i].index] < 2)
        takers[d->args[i].index]++;
  cgrt_status s = CGRT_OK;
  for (v = 0; v < d->nnodes && s == CGRT_OK; v++)
    if (d->nodes[v].body_sets_handle && takers[v] != 1)
      s = malformed(d, &d->nodes[v], "its body sets its handle, but %s takes it",
                    takers[v] ? "more than one argument" : "no argument");
  xfree(takers);
  return s;
}

/* No two edges join the same pair of nodes (whatever their programmatic
 * flags): CUDA refuses a dependency given twice (a node's dependencies may
 * hold no duplicate, and cudaGraphAddDependencies refuses an existing
 * one: cudaErrorInvalidValue, which would name neither node), and cgc
 * writes each pair once (order.c's dedupe).  The edges' ends are checked.
 * Linear in nodes and edges, for tables of 100,000 edges and more: the
 * edges are bucketed by the node they end at, in table order, and within
 * a bucket each edge's start remembers it (seen: 1 + that edge's index),
 * so a start met again at the same end is the pair given twice. */
static cgrt_status check_duplicate_edges(const cgrt_graph_desc *d) {
  if (d->nedges < 2)
    return CGRT_OK;
  uint32_t *start = xcalloc((size_t)d->nnodes + 1, sizeof *start);
  uint32_t *by_end = xcalloc(d->nedges, sizeof *by_end);
  uint32_t *seen = xcalloc(d->nnodes, sizeof *seen); /* first the buckets' fill */
  cgrt_status s = CGRT_OK;
  if (!start || !by_end || !seen) {
    s = no_memory(d);
    goto done;
  }
  for (uint32_t i = 0; i < d->nedges; i++)
    start[d->edges[3 * i + 1] + 1]++;
  for (uint32_t v = 0; v < d->nnodes; v++)
    start[v + 1] += start[v];
  for (uint32_t i = 0; i < d->nedges; i++) {
    uint32_t b = d->edges[3 * i + 1];
    by_end[start[b] + seen[b]++] = i;
  }
  memset(seen, 0, d->nnodes * sizeof *seen);
  for (uint32_t b = 0; b < d->nnodes && s == CGRT_OK; b++)
    for (uint32_t j = start[b]; j < start[b + 1]; j++) {
      uint32_t i = by_end[j], a = d->edges[3 * i], first = seen[a] - 1;
      if (seen[a] && d->edges[3 * first + 1] == b) {
        int prog = d->edges[3 * first + 2] != 0, prog2 = d->edges[3 * i + 2] != 0;
        s = malformed(d, NULL, "edge %s %s %s is in the table twice (edges %u and %u%s)",
                      d->nodes[a].name, prog && prog2 ? "=>" : "->", d->nodes[b].name, first, i,
                      prog != prog2 ? ", one of them programmatic" : "");
        break;
      }
      seen[a] = i + 1;
    }
done:
  xfree(start);
  xfree(by_end);
  xfree(seen);
  return s;
}

/* No node listed twice as following the scalar upload: it would be given
 * the upload as a dependency twice, which CUDA refuses as it refuses an
 * edge given twice (cgc writes the list sorted, each node once).  The
 * entries are known to be nodes. */
static cgrt_status check_duplicate_loads(const cgrt_graph_desc *d) {
  if (d->nloads < 2)
    return CGRT_OK;
  uint32_t *seen = xcalloc(d->nnodes, sizeof *seen); /* 1 + the entry that named the node */
  if (!seen)
    return no_memory(d);
  cgrt_status s = CGRT_OK;
  for (uint32_t i = 0; i < d->nloads; i++) {
    uint32_t v = d->loads[i];
    if (seen[v]) {
      s = malformed(d, NULL, "the scalar upload precedes %s twice (entries %u and %u of its list)",
                    d->nodes[v].name, seen[v] - 1, i);
      break;
    }
    seen[v] = i + 1;
  }
  xfree(seen);
  return s;
}

/* Checks once, at create, what building relies on and cgc guarantees:
 * kinds and indices in range, a node's body belonging to an earlier
 * control node, edges between two nodes of one body (programmatic ones
 * between kernels), no pair of nodes joined by two edges, the scalar
 * upload feeding nodes of the top graph, and at most UINT32_MAX - 1
 * bodies.  Edges may go backward in the table (a written edge against the
 * written order); a cycle, which cgc refuses, fails instantiation. */
cgrt_status cgrt_check_desc(const cgrt_graph_desc *d) {
  cgrt_status ks = check_kernels(d);
  if (ks != CGRT_OK)
    return ks;
  for (uint32_t i = 0; i < d->nbuffers; i++)
    if (!is_buffer_kind(d->buffers[i].kind))
      return malformed(d, NULL, "buffer %s: kind %u is no kind of buffer", d->buffers[i].name,
                       d->buffers[i].kind);
  for (uint32_t i = 0; i < d->nscalars; i++)
    if (d->scalars[i].bounded && d->scalars[i].type > CGRT_U64)
      return malformed(d, NULL, "scalar %s: a bound on a type that is no integer", d->scalars[i].name);
  uint64_t bodies = 0;
  for (uint32_t v = 0; v < d->nnodes; v++) {
    cgrt_status s = check_node(d, v);
    if (s != CGRT_OK)
      return s;
    if (is_control(&d->nodes[v]))
      bodies += d->nodes[v].nbodies;
  }
  if (bodies >= UINT32_MAX)
    return malformed(d, NULL, "%llu bodies", (unsigned long long)bodies);
  for (uint32_t i = 0; i < d->nedges; i++) {
    uint32_t a = d->edges[3 * i], b = d->edges[3 * i + 1];
    if (a >= d->nnodes || b >= d->nnodes || a == b)
      return malformed(d, NULL, "edge %u joins node %u to node %u of %u", i, a, b, d->nnodes);
    const cgrt_node_desc *x = &d->nodes[a], *y = &d->nodes[b];
    if (x->scope != y->scope || (x->scope != CGRT_TOP && x->branch != y->branch))
      return malformed(d, NULL, "edge %s -> %s joins two bodies", x->name, y->name);
    if (d->edges[3 * i + 2] && (!kind_of(x)->runs_kernel || !kind_of(y)->runs_kernel))
      return malformed(d, NULL, "programmatic edge %s => %s is not between kernels", x->name,
                       y->name);
  }
  cgrt_status es = check_duplicate_edges(d);
  if (es != CGRT_OK)
    return es;
  for (uint32_t i = 0; i < d->nloads; i++)
    if (d->loads[i] >= d->nnodes || d->nodes[d->loads[i]].scope != CGRT_TOP)
      return malformed(d, NULL, "the scalar upload precedes node %u of %u, not one at the top",
                       d->loads[i], d->nnodes);
  if ((es = check_duplicate_loads(d)) != CGRT_OK)
    return es;
  return check_handles(d);
}
