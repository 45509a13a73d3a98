/* test_replay: 1,000 launches queued behind a kernel that holds the
 * stream until the host lets it go, each after set_pos(i), see exactly
 * 0..999, through a pointer and by value; so do 4,000 launches in a row,
 * a third of them with nothing set through a pointer.
 * A scalar a kernel updates keeps its device value between launches
 * unless the host sets it.  A third round does it again with a graph whose
 * scalar upload takes only one value (cgrt_test_upload_room), so that
 * launches after two sets take the slow way and the others the fast one,
 * mixed.  Everything runs in one non-blocking stream, the clearing of the
 * logs included. */
#include "cgrt_testing.h"
#include "gpu_test.h"
#include "replay_graph.h"

enum { MOST = 4000 };

/* kernels/replay.cu: holds `stream` until *gate is set or limit_ns pass. */
cudaError_t hold_stream(const volatile uint32_t *gate, uint64_t limit_ns, cudaStream_t stream);

int main(void) {
  test_start("test_replay");
  uint32_t *dlog, *dvlog, *log = malloc((MOST + 1) * sizeof *log);
  uint32_t *expect_pos = malloc(MOST * sizeof *expect_pos);
  CUDA(cudaMalloc((void **)&dlog, (MOST + 1) * sizeof *dlog));
  CUDA(cudaMalloc((void **)&dvlog, (MOST + 1) * sizeof *dvlog));
  replay_extern ext = {dlog, dvlog};
  replay *g;
  cudaStream_t stream;
  volatile uint32_t *gate, *dgate;
  CUDA(cudaHostAlloc((void **)&gate, sizeof *gate, cudaHostAllocMapped));
  CUDA(cudaHostGetDevicePointer((void **)&dgate, (void *)gate, 0));
  CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  CGRT(replay_create(&g, &ext, NULL));

  for (int round = 0; round < 3; round++) {
    if (round == 2) { /* the same graph, its upload one value wide */
      replay_destroy(g);
      cgrt_test_upload_room(1);
      CGRT(replay_create(&g, &ext, NULL));
      cgrt_test_upload_room(0);
    }
    /* First 1,000 launches queued behind the held stream; then 4,000.
     * The logs are cleared in the graph's stream: a clear in the legacy
     * default stream is not ordered with a non-blocking stream's work. */
    const uint32_t LAUNCHES = round == 0 ? 1000 : MOST;
    uint32_t offset = (uint32_t)(rand64() % 1000000);
    CUDA(cudaMemsetAsync(dlog, 0, (MOST + 1) * sizeof *dlog, stream));
    CUDA(cudaMemsetAsync(dvlog, 0, (MOST + 1) * sizeof *dvlog, stream));
    if (round == 0) {
      *gate = 0;
      /* 2 s at most: far longer than issuing takes, and a bound on the
       * wait should issuing ever block on a full launch queue. */
      CUDA(hold_stream(dgate, UINT64_C(2000000000), stream));
    }
    CGRT(replay_set_count(g, offset));
    uint32_t count_set = offset, since = 0; /* count's last value set, launches since */
    uint32_t pos_set = offset;
    for (uint32_t i = 0; i < LAUNCHES; i++) {
      /* Rounds 1 and 2 leave pos alone in every third launch, so that
       * launches with nothing to upload come between the others, and set
       * count now and then (in round 2 with pos: two values, more than its
       * upload takes). */
      if (round > 0 && i % 7 == 3) {
        CGRT(replay_set_count(g, count_set = offset + 10 * i));
        since = 0;
      }
      if (round == 0 || i % 3 != 2)
        CGRT(replay_set_pos(g, pos_set = offset + i));
      expect_pos[i] = pos_set;
      CGRT(replay_set_vpos(g, offset + i));
      CGRT(replay_launch(g, stream));
      since++;
    }
    /* Still queued behind the held stream: nothing above has run yet. */
    if (round == 0) {
      EXPECT(cudaStreamQuery(stream) == cudaErrorNotReady, "the launches were not queued");
      __atomic_store_n(gate, 1, __ATOMIC_SEQ_CST);
    }
    CUDA(cudaStreamSynchronize(stream));
    for (int which = 0; which < 2; which++) {
      CUDA(cudaMemcpy(log, which ? dvlog : dlog, (MOST + 1) * sizeof *log,
                      cudaMemcpyDeviceToHost));
      int bad = 0;
      for (uint32_t i = 0; i < LAUNCHES; i++)
        bad += log[1 + i] != (which ? offset + i : expect_pos[i]);
      EXPECT(log[0] == LAUNCHES, "%s: %u launches recorded", which ? "by value" : "by pointer",
             log[0]);
      EXPECT(!bad, "%s: %d of %d launches saw the wrong value", which ? "by value" : "by pointer",
             bad, LAUNCHES);
    }
    uint32_t count;
    CGRT(replay_get_count(g, &count));
    /* Set, then bumped by each launch: only the launch after a set loads it. */
    EXPECT(count == count_set + since, "count is %u, expected %u", count, count_set + since);
    uint32_t pos;
    CGRT(replay_get_pos(g, &pos));
    EXPECT(pos == pos_set, "get_pos gives %u, expected %u", pos, pos_set);
  }
  replay_destroy(g);
  replay_destroy(NULL); /* NULL is fine */
  CUDA(cudaStreamDestroy(stream));
  CUDA(cudaFreeHost((void *)gate));
  CUDA(cudaFree(dlog));
  CUDA(cudaFree(dvlog));
  free(log);
  free(expect_pos);
  return test_end("test_replay");
}
