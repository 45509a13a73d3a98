/* test_replay: 1,000 launches queued behind a busy stream without any
 * synchronisation, each after set_pos(i), see exactly 0..999, through a
 * pointer and by value; so do 4,000 launches that go round the runtime's
 * ring several times.  A scalar a kernel updates keeps its device value
 * between launches unless the host sets it. */
#include "gpu_test.h"
#include "replay_graph.h"

enum { MOST = 4000 };

int main(void) {
  test_start("test_replay");
  uint32_t *dlog, *dvlog, *log = malloc((MOST + 1) * sizeof *log);
  CUDA(cudaMalloc((void **)&dlog, (MOST + 1) * sizeof *dlog));
  CUDA(cudaMalloc((void **)&dvlog, (MOST + 1) * sizeof *dvlog));
  replay_extern ext = {dlog, dvlog};
  replay *g;
  delay *busy;
  cudaStream_t stream;
  CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  CGRT(replay_create(&g, &ext, NULL));
  CGRT(delay_create(&busy, NULL));

  for (int round = 0; round < 2; round++) {
    /* First 1,000 launches queued behind 50 ms of work; then 4,000. */
    const uint32_t LAUNCHES = round == 0 ? 1000 : MOST;
    uint32_t offset = (uint32_t)(rand64() % 1000000);
    CUDA(cudaMemset(dlog, 0, (MOST + 1) * sizeof *dlog));
    CUDA(cudaMemset(dvlog, 0, (MOST + 1) * sizeof *dvlog));
    if (round == 0) {
      CGRT(delay_set_ns(busy, 50 * 1000 * 1000)); /* 50 ms */
      CGRT(delay_launch(busy, stream));
    }
    CGRT(replay_set_count(g, offset));
    for (uint32_t i = 0; i < LAUNCHES; i++) {
      CGRT(replay_set_pos(g, offset + i));
      CGRT(replay_set_vpos(g, offset + i));
      CGRT(replay_launch(g, stream));
    }
    /* Still queued behind the delay: nothing above has run yet. */
    if (round == 0)
      EXPECT(cudaStreamQuery(stream) == cudaErrorNotReady, "the launches were not queued");
    CUDA(cudaStreamSynchronize(stream));
    for (int which = 0; which < 2; which++) {
      CUDA(cudaMemcpy(log, which ? dvlog : dlog, (MOST + 1) * sizeof *log,
                      cudaMemcpyDeviceToHost));
      int bad = 0;
      for (uint32_t i = 0; i < LAUNCHES; i++)
        bad += log[1 + i] != offset + i;
      EXPECT(log[0] == LAUNCHES, "%s: %u launches recorded", which ? "by value" : "by pointer",
             log[0]);
      EXPECT(!bad, "%s: %d of %d launches saw the wrong value", which ? "by value" : "by pointer",
             bad, LAUNCHES);
    }
    uint32_t count;
    CGRT(replay_get_count(g, &count));
    /* Set once, then bumped by each launch: only the first launch loads it. */
    EXPECT(count == offset + LAUNCHES, "count is %u, expected %u", count, offset + LAUNCHES);
    uint32_t pos;
    CGRT(replay_get_pos(g, &pos));
    EXPECT(pos == offset + LAUNCHES - 1, "get_pos gives %u", pos);
  }
  replay_destroy(g);
  delay_destroy(busy);
  replay_destroy(NULL); /* NULL is fine */
  CUDA(cudaStreamDestroy(stream));
  CUDA(cudaFree(dlog));
  CUDA(cudaFree(dvlog));
  free(log);
  return test_end("test_replay");
}
