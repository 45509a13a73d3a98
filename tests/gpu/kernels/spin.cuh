// Busy-waits about ns nanoseconds on the GPU's global timer.
#pragma once
#include <cstdint>

__device__ inline uint64_t global_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__device__ inline void spin_ns(uint64_t ns) {
  uint64_t start = global_ns();
  while (global_ns() - start < ns) {
  }
}
