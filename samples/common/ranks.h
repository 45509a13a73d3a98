/* ranks.h: one process per GPU of this host, the way the collectives'
 * sample, GPU test and benchmark run their ranks: count the GPUs without
 * starting CUDA in this process (a forked child must not inherit it), fork
 * a process per rank, hand rank 0's NCCL unique id to the others through
 * pipes, and wait for them all.  A launcher such as torchrun or mpirun
 * does the same across hosts; nothing here is needed by cgc itself. */
#ifndef CGC_SAMPLES_RANKS_H
#define CGC_SAMPLES_RANKS_H

#include <stdio.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "cgrt_nccl.h"

enum { RANKS_MOST = 64, RANKS_ID_BYTES = 128 /* an ncclUniqueId */ };

typedef struct Ranks {
  int n;
  int id[RANKS_MOST][2]; /* a pipe from rank 0 to each rank */
  pid_t pid[RANKS_MOST];
} Ranks;

/* The GPUs of this host, counted by a child process so that CUDA does not
 * start in this one before it forks. */
static inline int ranks_gpus(void) {
  pid_t probe = fork();
  if (probe == 0) {
    int n = 0;
    _exit(cudaGetDeviceCount(&n) == cudaSuccess ? (n > 100 ? 100 : n) : 0);
  }
  int status = 0;
  if (probe < 0 || waitpid(probe, &status, 0) < 0)
    return 0;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 0;
}

/* All n bytes, or -1. */
static inline int ranks_write(int fd, const void *p, size_t n) {
  for (size_t done = 0; done < n;) {
    ssize_t k = write(fd, (const char *)p + done, n - done);
    if (k <= 0)
      return -1;
    done += (size_t)k;
  }
  return 0;
}

static inline int ranks_read(int fd, void *p, size_t n) {
  for (size_t done = 0; done < n;) {
    ssize_t k = read(fd, (char *)p + done, n - done);
    if (k <= 0)
      return -1;
    done += (size_t)k;
  }
  return 0;
}

/* Forks n processes; process r runs rank(r, ctx), flushes stdout and exits
 * with what it returned.  -1 if a pipe or a fork failed (the processes
 * already forked are waited for). */
static inline int ranks_start(Ranks *k, int n, int (*rank)(int r, void *ctx), void *ctx) {
  if (n < 1 || n > RANKS_MOST)
    return -1;
  k->n = 0;
  for (int r = 0; r < n; r++)
    if (pipe(k->id[r]))
      return -1;
  for (int r = 0; r < n; r++) {
    pid_t p = fork();
    if (p < 0) {
      for (int q = 0; q < r; q++)
        waitpid(k->pid[q], NULL, 0);
      return -1;
    }
    if (p == 0) {
      k->n = n;
      int rc = rank(r, ctx);
      fflush(stdout); /* _exit does not */
      _exit(rc);
    }
    k->pid[r] = p;
  }
  k->n = n;
  return 0;
}

/* In rank r's process: rank 0 makes the unique id and sends it to every
 * other rank, which reads it.  0, or -1 with a message. */
static inline int ranks_share_id(const Ranks *k, int r, unsigned char id[RANKS_ID_BYTES]) {
  if (r == 0) {
    if (cgrt_nccl_unique_id(id) != CGRT_OK) {
      fprintf(stderr, "rank 0: %s\n", cgrt_last_error());
      return -1;
    }
    for (int q = 1; q < k->n; q++)
      if (ranks_write(k->id[q][1], id, RANKS_ID_BYTES)) {
        fprintf(stderr, "rank 0: could not send the unique id to rank %d\n", q);
        return -1;
      }
    return 0;
  }
  if (ranks_read(k->id[r][0], id, RANKS_ID_BYTES)) {
    fprintf(stderr, "rank %d: no unique id from rank 0\n", r);
    return -1;
  }
  return 0;
}

/* Waits for every rank; names each that failed; 1 if any did. */
static inline int ranks_wait(const Ranks *k, const char *who) {
  int failed = 0;
  for (int r = 0; r < k->n; r++) {
    int status = 0;
    waitpid(k->pid[r], &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      fprintf(stderr, "%s: rank %d failed (status %d)\n", who, r, status);
      failed = 1;
    }
  }
  return failed;
}

#endif
