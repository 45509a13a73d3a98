/* test_control: while, if and switch on the device.  One instantiated
 * graph of each kind is replayed hundreds of times with its scalars set
 * anew each time, and every result is checked against the host: loops
 * that run zero times, that max stops, whose condition reads what the body
 * writes, loops inside an if and inside a loop, ifs with and without else
 * both ways, switches on each case, on default and on a value no case
 * names; conditions of every type and form (NaN included), on scalars and
 * on elements of extern buffers that are rebound.  Then every CUDA call of
 * create, and of a bind that moves body nodes and condition kernels, fails
 * in turn and is handled. */
#include "fault_sweep.h"
#include "control_graph.h"
#include "gpu_test.h"

enum { REPLAYS = 300 };

static int64_t pick_i64(const int64_t *v, size_t n) { return v[rand64() % n]; }
#define PICK(arr) pick_i64(arr, sizeof arr / sizeof arr[0])

static uint32_t umin(uint32_t a, uint32_t b) { return a < b ? a : b; }

static void test_loops_and_branches(void) {
  uint32_t *dres[2], res[16];
  for (int i = 0; i < 2; i++) {
    CUDA(cudaMalloc((void **)&dres[i], sizeof res));
    CUDA(cudaMemset(dres[i], 0, sizeof res));
  }
  control_extern ext = {dres[0]};
  control *g;
  CGRT(control_create(&g, &ext, NULL));
  static const int64_t sels[] = {-2, -1, 0, 1, 2, 3, 4};
  int seen_case[4] = {0}, bound = 0;
  uint32_t flag9[2] = {0, 0};
  for (int r = 0; r < REPLAYS; r++) {
    if (r == REPLAYS / 2) { /* the body nodes and conditions follow */
      CGRT(control_bind_res(g, dres[1]));
      bound = 1;
    }
    uint32_t n = (uint32_t)(rand64() % 6);
    int32_t k = (int32_t)(rand64() % 7) - 3, sel = (int32_t)PICK(sels);
    CGRT(control_set_n(g, n));
    CGRT(control_set_k(g, k));
    CGRT(control_set_sel(g, sel));
    CGRT(control_launch(g, 0));
    CUDA(cudaStreamSynchronize(0));
    CUDA(cudaMemcpy(res, dres[bound], sizeof res, cudaMemcpyDeviceToHost));
    flag9[bound] |= sel == 1;
    uint32_t want[12] = {
        n, 5, 7, k > 0, k > 0 ? 10 : 20, k > 1 ? (uint32_t)k : 0,
        sel == 0 ? 100 : sel == 3 ? 103 : sel == -2 ? 98 : 99,
        sel == 0 ? 200 : sel == 1 ? 201 : 7, umin(n, 3), flag9[bound], 2 * umin(n, 4), 3};
    for (int i = 0; i < 12; i++)
      EXPECT(res[i] == want[i], "replay %d (n %u, k %d, sel %d): res[%d] is %u, expected %u", r,
             n, k, sel, i, res[i], want[i]);
    seen_case[sel == 0 ? 0 : sel == 3 ? 1 : sel == -2 ? 2 : 3] = 1;
  }
  EXPECT(seen_case[0] && seen_case[1] && seen_case[2] && seen_case[3], "not every case ran");
  /* A scalar the bodies wrote reads back: the first loop's counter. */
  uint32_t it;
  CGRT(control_get_it(g, &it));
  EXPECT(it == res[0], "get_it gives %u, the loop ran %u times", it, res[0]);
  control_destroy(g);
  for (int i = 0; i < 2; i++)
    CUDA(cudaFree(dres[i]));
}

static void test_conditions(void) {
  int64_t *dv[2];
  uint32_t *dflag[2], flag[12];
  for (int i = 0; i < 2; i++) {
    CUDA(cudaMalloc((void **)&dv[i], 2 * sizeof(int64_t)));
    CUDA(cudaMalloc((void **)&dflag[i], sizeof flag));
  }
  conds_extern ext = {dv[0], dflag[0]};
  conds *g;
  CGRT(conds_create(&g, &ext, NULL));
  static const int64_t as[] = {-128, -5, -4, -3, -2, 0, 5, 6, 100};
  static const int64_t bs[] = {INT64_MIN, -1, 0, 5, 6, 7, INT64_MAX};
  static const int64_t vs[] = {-1, 0, 5, 6, INT64_MIN, INT64_MAX};
  static const uint64_t cs[] = {0, 7, 4294967296u, 4294967297u, UINT64_MAX};
  static const uint16_t hs[] = {0x3800, 0x37ff, 0x3801, 0xbc00, 0x7e00, 0x0000, 0xfc00};
  static const uint16_t zs[] = {0x3f80, 0x3f81, 0x7fc0, 0x0000, 0xbf80};
  static const float fs[] = {0.5f, 1.0f, 2.0f, NAN, -INFINITY, 0.99999994f};
  static const double ds[] = {0.25, 1.5, 1.5000000000000002, NAN, -0.0, 0.2500000000000001};
  static const uint16_t ws[] = {0, 3, 1000, 1001, 65535};
  int count[12] = {0};
  int bound = 0;
  for (int r = 0; r < REPLAYS; r++) {
    if (r == REPLAYS / 2) {
      CGRT(conds_bind_v(g, dv[1]));
      CGRT(conds_bind_flag(g, dflag[1]));
      bound = 1;
    }
    int8_t a = (int8_t)PICK(as);
    int64_t b = PICK(bs), v[2] = {PICK(vs), PICK(vs)};
    uint64_t c = cs[rand64() % 5];
    uint16_t h = hs[rand64() % 7], z = zs[rand64() % 5], w = ws[rand64() % 5];
    float f = fs[rand64() % 6];
    double d = ds[rand64() % 6];
    CUDA(cudaMemcpy(dv[bound], v, sizeof v, cudaMemcpyHostToDevice));
    CUDA(cudaMemset(dflag[bound], 0xff, sizeof flag)); /* the fill must clear it */
    CGRT(conds_set_a(g, a));
    CGRT(conds_set_b(g, b));
    CGRT(conds_set_c(g, c));
    CGRT(conds_set_h(g, h));
    CGRT(conds_set_z(g, z));
    CGRT(conds_set_f(g, f));
    CGRT(conds_set_d(g, d));
    CGRT(conds_set_w(g, w));
    CGRT(conds_launch(g, 0));
    CUDA(cudaStreamSynchronize(0));
    CUDA(cudaMemcpy(flag, dflag[bound], sizeof flag, cudaMemcpyDeviceToHost));
    int want[12] = {
        a < -3,
        b >= v[0],
        c > 4294967296u,
        half_to_float(h) <= 0.5f,
        bf16_to_float(z) != 1.0f,
        !(f < 1.0f),
        f >= 1.0f,
        d == 0.25 || (a == 0 && w > 1000),
        !(b < 0 || c == 7) && w != 3,
        v[1] < b,
        a > 5 && (b < 0 || !(d > 1.5)),
        w == 0,
    };
    for (int i = 0; i < 12; i++) {
      EXPECT(flag[i] == (uint32_t)want[i],
             "replay %d: flag[%d] is %u, expected %d (a %d b %lld c %llu h 0x%x z 0x%x f %g "
             "d %g w %u v %lld %lld)",
             r, i, flag[i], want[i], a, (long long)b, (unsigned long long)c, h, z, f, d, w,
             (long long)v[0], (long long)v[1]);
      count[i] += want[i];
    }
  }
  for (int i = 0; i < 12; i++)
    EXPECT(count[i] > 0 && count[i] < REPLAYS, "condition %d was always %s", i,
           count[i] ? "true" : "false");
  conds_destroy(g);
  for (int i = 0; i < 2; i++) {
    CUDA(cudaFree(dv[i]));
    CUDA(cudaFree(dflag[i]));
  }
}

/* Every CUDA call of create fails in turn: the error names it and nothing
 * is left behind. */
static void test_create_faults(void) {
  uint32_t *dres;
  CUDA(cudaMalloc((void **)&dres, 16 * sizeof *dres));
  control_extern ext = {dres};
  control *g;
  CGRT(control_create(&g, &ext, NULL));
  control_destroy(g);
  long live0 = cgrt_test_live(), k;
  long long bytes0 = cgrt_test_bytes();
  for (k = 1; k < 100000; k++) {
    g = (control *)&k;
    long c = fault_begin(k);
    cgrt_status s = control_create(&g, &ext, NULL);
    if (!fault_end(k, c)) {
      EXPECT(s == CGRT_OK, "create past its last call: status %d: %s", s, cgrt_last_error());
      break;
    }
    if (s == CGRT_OK) {
      EXPECT(0, "call %ld failed but create succeeded", k);
      control_destroy(g);
      continue;
    }
    EXPECT(s == CGRT_ERROR_CUDA, "call %ld: status %d", k, s);
    EXPECT(g == NULL, "call %ld: *out was left set", k);
    EXPECT(cgrt_test_live() == live0, "call %ld: %ld resources still held", k,
           cgrt_test_live() - live0);
    EXPECT(cgrt_test_bytes() == bytes0, "call %ld: %lld bytes of device and pinned memory kept", k,
           cgrt_test_bytes() - bytes0);
    EXPECT(strstr(cgrt_last_error(), "control.cgraph") &&
               strstr(cgrt_last_error(), "cudaErrorMemoryAllocation"),
           "call %ld: message %s", k, cgrt_last_error());
  }
  printf("test_control: create makes %ld CUDA calls; each one failing was handled\n", k - 1);
  EXPECT(k > 40, "create made only %ld CUDA calls", k - 1);
  if (!g) {
    CUDA(cudaFree(dres));
    return; /* reported above */
  }
  CGRT(control_set_n(g, 2));
  CGRT(control_launch(g, 0));
  CUDA(cudaStreamSynchronize(0));
  uint32_t res0;
  CUDA(cudaMemcpy(&res0, dres, sizeof res0, cudaMemcpyDeviceToHost));
  EXPECT(res0 == 2, "after the sweep the loop ran %u times", res0);
  control_destroy(g);
  EXPECT(cgrt_test_live() == live0, "%ld resources held after destroy", cgrt_test_live() - live0);
  EXPECT(cgrt_test_bytes() == bytes0, "%lld bytes held after destroy", cgrt_test_bytes() - bytes0);
  CUDA(cudaFree(dres));
}

/* Every CUDA call of binding the buffer that body nodes and a condition
 * use fails in turn: the graph stays whole on the old buffer. */
static void test_bind_faults(void) {
  uint32_t *dres[2], res[16];
  for (int i = 0; i < 2; i++)
    CUDA(cudaMalloc((void **)&dres[i], sizeof res));
  control_extern ext = {dres[0]};
  control *g;
  CGRT(control_create(&g, &ext, NULL));
  long live0 = cgrt_test_live(), k;
  for (k = 1; k < 1000; k++) {
    CUDA(cudaMemset(dres[0], 0, sizeof res));
    CUDA(cudaMemset(dres[1], 0, sizeof res));
    long c = fault_begin(k);
    cgrt_status s = control_bind_res(g, dres[1]);
    if (!fault_end(k, c)) {
      EXPECT(s == CGRT_OK, "bind past its last call: status %d: %s", s, cgrt_last_error());
      break;
    }
    EXPECT(s == CGRT_ERROR_CUDA, "bind, call %ld: status %d", k, s);
    if (s == CGRT_OK)
      break; /* the graph moved: the sweep cannot go on */
    EXPECT(strstr(cgrt_last_error(), "control.cgraph:") &&
               strstr(cgrt_last_error(), "cudaErrorMemoryAllocation"),
           "bind, call %ld: message %s", k, cgrt_last_error());
    EXPECT(cgrt_test_live() == live0, "bind, call %ld: resources held", k);
    CGRT(control_set_n(g, 3));
    CGRT(control_set_k(g, 2));
    CGRT(control_set_sel(g, 3));
    CGRT(control_launch(g, 0));
    CUDA(cudaStreamSynchronize(0));
    CUDA(cudaMemcpy(res, dres[0], sizeof res, cudaMemcpyDeviceToHost));
    EXPECT(res[0] == 3 && res[5] == 2 && res[6] == 103 && res[10] == 6 && res[11] == 3,
           "after a failed bind (call %ld) the old buffer has %u %u %u %u %u", k, res[0], res[5],
           res[6], res[10], res[11]);
    uint32_t other[16], any = 0;
    CUDA(cudaMemcpy(other, dres[1], sizeof other, cudaMemcpyDeviceToHost));
    for (int i = 0; i < 16; i++)
      any |= other[i];
    EXPECT(!any, "after a failed bind (call %ld) the new buffer was written", k);
  }
  printf("test_control: bind makes %ld CUDA calls; each one failing was handled\n", k - 1);
  EXPECT(k > 10, "bind made only %ld CUDA calls", k - 1);
  control_destroy(g);
  for (int i = 0; i < 2; i++)
    CUDA(cudaFree(dres[i]));
}

int main(void) {
  test_start("test_control");
  test_loops_and_branches();
  test_conditions();
  test_create_faults();
  test_bind_faults();
  return test_end("test_control");
}
