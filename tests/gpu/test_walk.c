/* test_walk: the order in which a launch without the graph
 * (CGRT_SAFE_STREAM, runtime/cgrt_walk.c) runs each graph's nodes: every
 * edge kept (backward ones too), ready nodes in table order, each body's
 * nodes apart; and its refusals (a kernel that sets its loop's handle, a
 * cycle).  Plans only: no GPU. */
#include <stdio.h>
#include <string.h>

#include "cgrt_internal.h"
#include "cgrt_testing.h"

static int failures, checks;

static void check(int ok, const char *what) {
  checks++;
  if (!ok) {
    failures++;
    printf("FAIL: %s\n", what);
  }
}

/* k0 -> w -> k1 -> s at the top, k2 -> k0 written against the table's
 * order, k3 on its own; w's body b0, b1 with b1 -> b0; s's bodies c0 and
 * c1. */
enum { K0, W, B0, B1, K1, K2, S, C0, C1, K3, NODES };
static cgrt_node_desc nodes[NODES];
static uint32_t edges[3 * 6] = {K0, W, 0, W, K1, 0, B1, B0, 0, K2, K0, 0, K1, S, 0};
static cgrt_graph_desc desc;

static void table_init(void) {
  static const char *const names[NODES] = {"k0", "w", "b0", "b1", "k1",
                                           "k2", "s", "c0", "c1", "k3"};
  memset(nodes, 0, sizeof nodes);
  for (int v = 0; v < NODES; v++) {
    nodes[v].name = names[v];
    nodes[v].line = 10 + (uint32_t)v;
    nodes[v].col = 5;
    nodes[v].kind = CGRT_KERNEL_NODE;
    nodes[v].scope = CGRT_TOP;
  }
  nodes[W].kind = CGRT_WHILE_NODE;
  nodes[W].nbodies = 1;
  nodes[B0].scope = nodes[B1].scope = W;
  nodes[S].kind = CGRT_SWITCH_NODE;
  nodes[S].nbodies = 2;
  nodes[C0].scope = nodes[C1].scope = S;
  nodes[C1].branch = 1;
  memset(&desc, 0, sizeof desc);
  desc.name = "g";
  desc.source = "walk.cgraph";
  desc.nodes = nodes;
  desc.nnodes = NODES;
  desc.edges = edges;
  desc.nedges = 5;
}

/* Plans the walk of the table; the graph is destroyed by the caller. */
static cgrt_status plan(cgrt_graph **out) {
  cgrt_graph *g = xcalloc(1, sizeof *g);
  *out = g;
  if (!g)
    return CGRT_ERROR_NO_MEMORY;
  g->d = &desc;
  g->safe = CGRT_SAFE_STREAM;
  g->body_base = xcalloc(desc.nnodes, sizeof *g->body_base);
  cgrt_status s = g->body_base ? cgrt_number_graphs(g) : CGRT_ERROR_NO_MEMORY;
  return s == CGRT_OK ? cgrt_plan_walk(g) : s;
}

int main(void) {
  long live0 = cgrt_test_live();
  cgrt_graph *g;
  table_init();
  cgrt_status s = plan(&g);
  check(s == CGRT_OK, "a table with bodies and backward edges is planned");
  if (s == CGRT_OK) {
    /* The top, w's body, then s's two bodies. */
    static const uint32_t want[] = {K2, K3, K0, W, K1, S, B1, B0, C0, C1};
    static const uint32_t want_start[] = {0, 6, 8, 9, 10};
    check(g->ngraphs == 4, "four graphs");
    check(!memcmp(g->walk_start, want_start, sizeof want_start), "each graph's share");
    check(!memcmp(g->walk_order, want, sizeof want),
          "the order keeps every edge, ready nodes in table order");
  }
  cgrt_destroy(g);

  table_init();
  nodes[W].body_sets_handle = 1;
  s = plan(&g);
  check(s == CGRT_ERROR_INVALID &&
            !strcmp(cgrt_last_error(),
                    "walk.cgraph: graph g: node w (walk.cgraph:11:5): a kernel of its body sets "
                    "its handle, which needs the conditional node that CGRT_SAFE_STREAM "
                    "(CGRT_SANITIZER_SAFE=stream) leaves out"),
        "a body that sets its loop's handle is refused");
  cgrt_destroy(g);

  table_init();
  edges[15] = K1, edges[16] = K2; /* k2 -> k0 -> w -> k1 -> k2 */
  desc.nedges = 6;
  s = plan(&g);
  check(s == CGRT_ERROR_INVALID &&
            !strcmp(cgrt_last_error(), "walk.cgraph: graph g: node k0: its description is "
                                       "malformed: its edges make a cycle"),
        "a cycle is refused");
  cgrt_destroy(g);

  check(cgrt_test_live() == live0, "everything planned is released");
  printf("test_walk: %d checks, %d failed\n", checks, failures);
  return failures ? 1 : 0;
}
