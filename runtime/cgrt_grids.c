/* cgrt_grids.c: grids that follow bounded scalars: evaluated, checked,
 * and a node disabled while an extent is 0. */
#include "cgrt_internal.h"

/* Node v's grid from the scalars' current values into ext: CGRT_GRID_OK,
 * or the evaluator's error with the extent (0, 1, 2) in *which. */
int cgrt_eval_grid(const cgrt_graph *g, uint32_t v, int64_t ext[3], int *which) {
  const cgrt_graph_desc *d = g->d;
  uint32_t at = d->nodes[v].grid_expr - 1;
  for (int i = 0; i < 3; i++) {
    int err = cgrt_grid_eval(d->grid_code, d->ngrid_code, &at, d->scalars, d->nscalars,
                             g->values, &ext[i]);
    if (err != CGRT_GRID_OK) {
      *which = i;
      return err;
    }
  }
  return CGRT_GRID_OK;
}

/* "n = 5000, m = 3": the scalars node v's grid follows, with their values. */
static void grid_scalars(const cgrt_graph *g, uint32_t v, char *buf, size_t size) {
  const cgrt_graph_desc *d = g->d;
  size_t len = 0;
  buf[0] = 0;
  for (uint32_t i = d->nodes[v].grid_expr - 1, ends = 0; i < d->ngrid_code && ends < 3; i++) {
    int64_t op = d->grid_code[i];
    ends += op == CGRT_GRID_END;
    if (op != CGRT_GRID_CONST && op != CGRT_GRID_SCALAR)
      continue;
    int64_t w = d->grid_code[++i], x = 0;
    if (op == CGRT_GRID_CONST || len >= size - 1 ||
        cgrt_used_by(d, &d->nodes[v], d->nbuffers + (uint32_t)w, i, 0)) /* each named once */
      continue;
    if (cgrt_grid_value(d->scalars[w].type, g->values[w], &x) != CGRT_GRID_OK)
      len += (size_t)snprintf(buf + len, size - len, "%s%s = %llu", len ? ", " : "",
                              d->scalars[w].name, (unsigned long long)g->values[w]);
    else
      len += (size_t)snprintf(buf + len, size - len, "%s%s = %lld", len ? ", " : "",
                              d->scalars[w].name, (long long)x);
  }
}

/* Node v's grid for the scalars' current values, checked: each extent 0
 * (the node then does nothing) or within CUDA's limits and a multiple of
 * its cluster's. */
cgrt_status cgrt_check_grid(const cgrt_graph *g, uint32_t v, unsigned grid[3]) {
  const cgrt_graph_desc *d = g->d;
  const cgrt_node_desc *nd = &d->nodes[v];
  static const int64_t limit[3] = {INT32_MAX, 65535, 65535};
  int64_t ext[3];
  int which = 0, err = cgrt_eval_grid(g, v, ext, &which);
  char values[256];
  if (err == CGRT_GRID_OK)
    for (which = 0; which < 3; which++)
      if (ext[which] < 0 || ext[which] > limit[which] ||
          (nd->has_cluster && nd->cluster[which] && ext[which] % nd->cluster[which]))
        break;
  if (err == CGRT_GRID_OK && which == 3) {
    for (int i = 0; i < 3; i++)
      grid[i] = (unsigned)ext[i];
    return CGRT_OK;
  }
  grid_scalars(g, v, values, sizeof values);
  char c = "xyz"[which];
  if (err == CGRT_GRID_DIVZERO)
    return invalid(d, "node %s: grid extent %c divides by zero when %s", nd->name, c, values);
  if (err != CGRT_GRID_OK)
    return invalid(d, "node %s: grid extent %c overflows 64 bits when %s", nd->name, c, values);
  if (ext[which] < 0 || ext[which] > limit[which])
    return invalid(d, "node %s: grid extent %c is %lld when %s; it must be 0 to %lld", nd->name, c,
                   (long long)ext[which], values, (long long)limit[which]);
  return invalid(d, "node %s: grid extent %c is %lld when %s, not a multiple of its cluster's (%u)",
                 nd->name, c, (long long)ext[which], values, nd->cluster[which]);
}

/* Disables node v in the executable graph while its grid has an extent 0,
 * and enables it again once none is. */
cgrt_status cgrt_enable_grid(cgrt_graph *g, uint32_t v, const unsigned grid[3]) {
  uint8_t off = !grid[0] || !grid[1] || !grid[2];
  if (off == g->grid_off[v])
    return CGRT_OK;
  cudaError_t err = CU(cudaGraphNodeSetEnabled(g->exec, g->nodes[v], !off));
  if (err != cudaSuccess)
    return fail_node(g->d, &g->d->nodes[v], "cudaGraphNodeSetEnabled", err);
  g->grid_off[v] = off;
  return CGRT_OK;
}

/* After instantiation: every grid that follows scalars checked, and the
 * nodes whose grid has an extent 0 disabled. */
cgrt_status cgrt_apply_grids(cgrt_graph *g) {
  for (uint32_t v = 0; v < g->d->nnodes; v++) {
    unsigned grid[3];
    cgrt_status s;
    if (!g->d->nodes[v].grid_expr)
      continue;
    g->grid_off[v] = 0; /* a new executable graph has every node enabled */
    if ((s = cgrt_check_grid(g, v, grid)) != CGRT_OK ||
        (s = cgrt_enable_grid(g, v, grid)) != CGRT_OK)
      return s;
  }
  return CGRT_OK;
}

/* The grids of the dev_grid nodes that follow the scalars set since the
 * last launch, checked (a refused grid fails the launch, as on the host
 * path), and the pairs of those whose node must change: grid_queue and
 * grid_value.  Nothing is committed until the launch is issued
 * (commit_grids). */
cgrt_status cgrt_queue_grids(cgrt_graph *g) {
  const cgrt_graph_desc *d = g->d;
  g->nqueue = 0;
  cgrt_next_pass(g);
  for (uint32_t i = 0; i < d->nscalars; i++) {
    if (!g->grid_dirty[i])
      continue;
    uint32_t r = d->nbuffers + d->nscalars + i;
    for (uint32_t u = g->use_start[r]; u < g->use_start[r + 1]; u++) {
      uint32_t n = g->use[u];
      if (g->stamp[n] == g->epoch)
        continue;
      g->stamp[n] = g->epoch;
      unsigned grid[3];
      cgrt_status s = cgrt_check_grid(g, n, grid);
      if (s != CGRT_OK)
        return s;
      const uint32_t *has = &g->grid_dims[3 * n];
      uint64_t value;
      if (!grid[0] || !grid[1] || !grid[2]) {
        if (g->grid_off[n])
          continue; /* off already */
        value = CGRT_GRID_OFF;
      } else {
        if (!g->grid_off[n] && grid[0] == has[0] && grid[1] == has[1] && grid[2] == has[2])
          continue; /* the grid it has */
        value = CGRT_GRID_PAIR_VALUE(grid[0], grid[1], grid[2], g->grid_off[n]);
      }
      g->grid_queue[g->nqueue] = n;
      g->grid_value[g->nqueue++] = value;
    }
  }
  return CGRT_OK;
}

/* The queued grids are what the nodes have once the launch that carries
 * them is issued (or the host set them: the slow path). */
void cgrt_commit_grids(cgrt_graph *g) {
  for (uint32_t q = 0; q < g->nqueue; q++) {
    uint32_t n = g->grid_queue[q];
    uint64_t v = g->grid_value[q];
    if (v == CGRT_GRID_OFF) {
      g->grid_off[n] = 1;
    } else {
      g->grid_dims[3 * n] = CGRT_GRID_PAIR_X(v);
      g->grid_dims[3 * n + 1] = CGRT_GRID_PAIR_Y(v);
      g->grid_dims[3 * n + 2] = CGRT_GRID_PAIR_Z(v);
      g->grid_off[n] = 0;
    }
  }
  g->nqueue = 0;
  memset(g->grid_dirty, 0, g->d->nscalars);
  g->any_grid_dirty = 0;
}
