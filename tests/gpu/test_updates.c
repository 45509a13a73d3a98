/* test_updates: a by-value scalar that many nodes take is written into
 * their parameters by the scalar upload, on the device.  Each launch of
 * `wide` logs, in eight nodes, what it saw: six take vpos alone, one takes
 * vpos and vtwo (few nodes take vtwo, so by default that node is updated
 * from the host), one reads pos through a pointer.  Launches queued behind
 * a held stream, with some scalars set and others not before each, must
 * each see their own values, in four configurations: the default (vpos on
 * the device), never on the device, always (vtwo too), and always with an
 * upload one value wide (launches after two or more sets go the slow way,
 * which updates the device-updatable nodes from the host).  Kernel nodes
 * and the upload are updated through the driver (CUDA 12.5 and later).
 * Then every CUDA call of create fails in turn, and nothing is left held.
 *
 * `grids` has six nodes whose grids follow n (and m): by default the
 * upload sets them on the device (and disables the node whose extent is
 * 0).  2,000 launches queued behind a held stream, n and m set in some
 * and not in others, must each run their own grids, in three
 * configurations: the default, never on the device (the host updates
 * them), and an upload one value wide (the slow way, from the host).  A
 * grid out of range still fails its launch, naming it.  `many` has fifty
 * such nodes, more than the device takes: the host updates them. */
#include <limits.h>
#include <string.h>

#include "cgrt_testing.h"
#include "fault_sweep.h"
#include "gpu_test.h"
#include "updates_graph.h"

enum { LAUNCHES = 2000, ROW = 2001 };

cudaError_t hold_stream(const volatile uint32_t *gate, uint64_t limit_ns, cudaStream_t stream);

static uint32_t cdiv(uint32_t a, uint32_t b) { return (a + b - 1) / b; }

/* The grids graph, as the header says; logs: 6 x ROW words of the host's. */
static void test_grids(cudaStream_t stream, volatile uint32_t *gate, volatile uint32_t *dgate,
                       uint32_t *logs) {
  static const struct {
    const char *name;
    unsigned least, room, grids; /* the hooks, and the nodes whose grid is set on the device */
    unsigned safe;               /* cgrt_options.safe */
  } configs[] = {
      {"grids, default", 0, 0, 6, 0},
      {"grids, never on the device", UINT_MAX, 0, 0, 0},
      {"grids, an upload one value wide", 0, 1, 6, 0},
      {"grids, sanitizer-safe (no device updates)", 0, 0, 0, CGRT_SAFE_DEVICE_UPDATES},
  };
  uint32_t *ns = malloc(LAUNCHES * sizeof *ns), *ms = malloc(LAUNCHES * sizeof *ms);
  for (size_t c = 0; c < sizeof configs / sizeof configs[0]; c++) {
    grids *g = NULL;
    cgrt_options opt = CGRT_OPTIONS_INIT;
    opt.safe = configs[c].safe;
    cgrt_test_device_updates(configs[c].least);
    cgrt_test_upload_room(configs[c].room);
    CGRT(grids_create(&g, &opt));
    cgrt_test_device_updates(0);
    cgrt_test_upload_room(0);
    unsigned on_device = cgrt_test_device_grids((const struct cgrt_graph *)g);
    EXPECT(on_device == configs[c].grids, "%s: %u grids set on the device, expected %u",
           configs[c].name, on_device, configs[c].grids);
    unsigned long long updates0 = cgrt_test_node_updates((const struct cgrt_graph *)g);
    uint32_t *dlogs = grids_buffer_logs(g);
    CUDA(cudaMemsetAsync(dlogs, 0, 6 * (ROW - 1) * sizeof *dlogs, stream));
    *gate = 0;
    CUDA(hold_stream(dgate, UINT64_C(2000000000), stream));
    uint32_t n = 64, m = 1; /* the initial values */
    for (uint32_t i = 0; i < LAUNCHES; i++) {
      /* n is set in three launches of four (1 now and then: the last node
       * disabled), m in every third. */
      if (i % 4 != 3) {
        uint64_t r = rand64();
        n = r % 8 == 0 ? 1 : 1 + (uint32_t)(r / 8 % 4096);
        CGRT(grids_set_n(g, n));
      }
      if (i % 3 == 0)
        CGRT(grids_set_m(g, m = 1 + (uint32_t)(rand64() % 4)));
      CGRT(grids_set_seq(g, i));
      ns[i] = n;
      ms[i] = m;
      CGRT(grids_launch(g, stream));
    }
    if (!configs[c].room)
      EXPECT(cudaStreamQuery(stream) == cudaErrorNotReady, "%s: the launches were not queued",
             configs[c].name);
    __atomic_store_n(gate, 1, __ATOMIC_SEQ_CST);
    CUDA(cudaStreamSynchronize(stream));
    CUDA(cudaMemcpy(logs, dlogs, 6 * (ROW - 1) * sizeof *logs, cudaMemcpyDeviceToHost));
    for (int row = 0; row < 6; row++) {
      const uint32_t *log = logs + (size_t)row * (ROW - 1);
      int bad = 0, first = -1;
      uint32_t got = 0, want = 0;
      for (uint32_t i = 0; i < LAUNCHES; i++) {
        uint32_t w = row < 4 ? cdiv(ns[i], 64) : row == 4 ? cdiv(ns[i], 64) * ms[i] : ns[i] - 1;
        if (log[i] != w && bad++ == 0)
          first = (int)i, got = log[i], want = w;
      }
      EXPECT(!bad, "%s: row %d: %d of %d launches ran another grid (the first: launch %d, n %u, "
                   "m %u: %u blocks, expected %u)",
             configs[c].name, row, bad, LAUNCHES, first, first < 0 ? 0 : ns[first],
             first < 0 ? 0 : ms[first], got, want);
    }
    /* The host updated no node on the device's path (but the slow way). */
    unsigned long long host = cgrt_test_node_updates((const struct cgrt_graph *)g) - updates0;
    if (configs[c].grids && !configs[c].room)
      EXPECT(host == 0, "%s: the host updated %llu nodes", configs[c].name, host);
    else if (!configs[c].grids)
      EXPECT(host > LAUNCHES, "%s: the host updated only %llu nodes", configs[c].name, host);
    /* Out of range: refused at launch, naming the node; then fine again. */
    CGRT(grids_set_n(g, 0));
    cgrt_status s = grids_launch(g, stream);
    EXPECT(s == CGRT_ERROR_INVALID && strstr(cgrt_last_error(), "node off: grid extent x is -1 "
                                                                "when n = 0"),
           "%s: a grid of -1: status %d, %s", configs[c].name, (int)s, cgrt_last_error());
    /* on the stream: the legacy stream's work does not order a non-blocking
     * stream's launches */
    CUDA(cudaMemsetAsync(dlogs, 0, 6 * (ROW - 1) * sizeof *dlogs, stream));
    CGRT(grids_set_n(g, 130));
    CGRT(grids_set_seq(g, 0));
    CGRT(grids_launch(g, stream));
    CUDA(cudaStreamSynchronize(stream));
    uint32_t first[6];
    for (int row = 0; row < 6; row++)
      CUDA(cudaMemcpy(&first[row], dlogs + (size_t)row * (ROW - 1), sizeof *first,
                      cudaMemcpyDeviceToHost));
    EXPECT(first[0] == 3 && first[4] == 3 * m && first[5] == 129,
           "%s: after the refusal, n = 130: %u, %u, %u blocks; expected 3, %u, 129",
           configs[c].name, first[0], first[4], first[5], 3 * m);
    grids_destroy(g);
  }
  free(ns);
  free(ms);

  /* Fifty nodes with such grids: beyond what the device takes (32), the
   * host updates them, and they still run their own grids. */
  many *g = NULL;
  CGRT(many_create(&g, NULL));
  unsigned on_device = cgrt_test_device_grids((const struct cgrt_graph *)g);
  EXPECT(on_device == 0, "many: %u grids set on the device, expected none", on_device);
  uint32_t *dlogs = many_buffer_logs(g);
  CUDA(cudaMemsetAsync(dlogs, 0, 50 * 4 * sizeof *dlogs, stream));
  static const uint32_t sizes[4] = {64, 200, 1, 4096};
  for (uint32_t i = 0; i < 4; i++) {
    CGRT(many_set_n(g, sizes[i]));
    CGRT(many_set_seq(g, i));
    CGRT(many_launch(g, stream));
  }
  CUDA(cudaStreamSynchronize(stream));
  uint32_t got[50 * 4];
  CUDA(cudaMemcpy(got, dlogs, sizeof got, cudaMemcpyDeviceToHost));
  int bad = 0;
  for (int k = 0; k < 50 * 4; k++)
    bad += got[k] != cdiv(sizes[k % 4], 64);
  EXPECT(!bad, "many: %d of 200 node launches ran another grid", bad);
  many_destroy(g);
}

static wide *make(unsigned least, unsigned room, unsigned safe) {
  wide *g = NULL;
  cgrt_options opt = CGRT_OPTIONS_INIT;
  opt.safe = safe;
  cgrt_test_device_updates(least);
  cgrt_test_upload_room(room);
  CGRT(wide_create(&g, &opt));
  cgrt_test_device_updates(0);
  cgrt_test_upload_room(0);
  return g;
}

int main(void) {
  test_start("test_updates");
  cudaStream_t stream;
  volatile uint32_t *gate, *dgate;
  uint32_t *logs = malloc(8 * ROW * sizeof *logs);
  uint32_t *expect = malloc(3 * LAUNCHES * sizeof *expect);
  CUDA(cudaHostAlloc((void **)&gate, sizeof *gate, cudaHostAllocMapped));
  CUDA(cudaHostGetDevicePointer((void **)&dgate, (void *)gate, 0));
  CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  long live0 = cgrt_test_live();

  static const struct {
    const char *name;
    unsigned least, room, updated; /* the hooks, and the parameters written on the device */
    unsigned safe;                 /* cgrt_options.safe */
  } configs[] = {
      {"default", 0, 0, 6, 0},
      {"never on the device", UINT_MAX, 0, 0, 0},
      {"always on the device", 1, 0, 8, 0},
      {"always, an upload one value wide", 1, 1, 8, 0},
      {"sanitizer-safe (no device updates)", 1, 0, 0, CGRT_SAFE_DEVICE_UPDATES},
  };
  for (size_t c = 0; c < sizeof configs / sizeof configs[0]; c++) {
    wide *g = make(configs[c].least, configs[c].room, configs[c].safe);
    unsigned updated = cgrt_test_updated_params((const struct cgrt_graph *)g);
    EXPECT(updated == configs[c].updated, "%s: %u parameters written on the device, expected %u",
           configs[c].name, updated, configs[c].updated);
    unsigned by_driver = cgrt_test_driver_update((const struct cgrt_graph *)g);
    EXPECT(by_driver == (CUDART_VERSION >= 12050 ? 4u : 0u),
           "%s: %u of 3 kernels and the upload updated through the driver", configs[c].name,
           by_driver);
    uint32_t *dlogs = wide_buffer_logs(g);
    CUDA(cudaMemsetAsync(dlogs, 0, 8 * ROW * sizeof *dlogs, stream));
    *gate = 0;
    CUDA(hold_stream(dgate, UINT64_C(2000000000), stream));
    uint32_t offset = (uint32_t)(rand64() % 1000000);
    uint32_t vpos = 0, vtwo = 7, pos = 0; /* the initial values */
    for (uint32_t i = 0; i < LAUNCHES; i++) {
      /* vpos is left alone in every fifth launch, vtwo set in every third,
       * pos in every other. */
      if (i % 5 != 4)
        CGRT(wide_set_vpos(g, vpos = offset + i));
      if (i % 3 == 1)
        CGRT(wide_set_vtwo(g, vtwo = offset + 3 * i));
      if (i % 2 == 0)
        CGRT(wide_set_pos(g, pos = offset + 7 * i));
      expect[3 * i] = vpos;
      expect[3 * i + 1] = vpos + vtwo;
      expect[3 * i + 2] = pos;
      CGRT(wide_launch(g, stream));
    }
    EXPECT(cudaStreamQuery(stream) == cudaErrorNotReady, "%s: the launches were not queued",
           configs[c].name);
    __atomic_store_n(gate, 1, __ATOMIC_SEQ_CST);
    CUDA(cudaStreamSynchronize(stream));
    CUDA(cudaMemcpy(logs, dlogs, 8 * ROW * sizeof *logs, cudaMemcpyDeviceToHost));
    for (int row = 0; row < 8; row++) {
      const uint32_t *log = logs + (size_t)row * ROW;
      int which = row < 6 ? 0 : row - 5, bad = 0, first = -1;
      for (uint32_t i = 0; i < LAUNCHES; i++)
        if (log[1 + i] != expect[3 * i + which]) {
          bad++;
          if (first < 0)
            first = (int)i;
        }
      EXPECT(log[0] == LAUNCHES, "%s: row %d logged %u launches", configs[c].name, row, log[0]);
      EXPECT(!bad, "%s: row %d: %d of %d launches saw the wrong value (the first: launch %d)",
             configs[c].name, row, bad, LAUNCHES, first);
    }
    uint32_t got;
    CGRT(wide_get_vpos(g, &got));
    EXPECT(got == vpos, "%s: get_vpos gives %u, expected %u", configs[c].name, got, vpos);
    wide_destroy(g);
  }
  EXPECT(cgrt_test_live() == live0, "%ld resources held after destroy", cgrt_test_live() - live0);

  test_grids(stream, gate, dgate, logs);
  EXPECT(cgrt_test_live() == live0, "%ld resources held after the grids", cgrt_test_live() - live0);

  /* Every CUDA call of create failing in turn, with vpos and vtwo on the
   * device. */
  long k = 1;
  for (;; k++) {
    wide *g = NULL;
    cgrt_test_device_updates(1);
    long before = fault_begin(k);
    cgrt_status s = wide_create(&g, NULL);
    int failed = fault_end(k, before);
    cgrt_test_device_updates(0);
    if (!failed) {
      EXPECT(s == CGRT_OK && g, "create without a fault: %s", cgrt_last_error());
      wide_destroy(g);
      break;
    }
    EXPECT(s == CGRT_ERROR_CUDA && g == NULL, "call %ld failed: status %d (%s)", k, s,
           cgrt_last_error());
    EXPECT(cgrt_test_live() == live0, "call %ld failed: %ld resources held", k,
           cgrt_test_live() - live0);
  }
  EXPECT(k > 10, "the sweep reached %ld calls", k);
  EXPECT(cgrt_test_live() == live0, "%ld resources held at the end", cgrt_test_live() - live0);
  CUDA(cudaStreamDestroy(stream));
  CUDA(cudaFreeHost((void *)gate));
  free(logs);
  free(expect);
  return test_end("test_updates");
}
