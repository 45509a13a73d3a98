// llm_config.cuh: the tile shapes the library's kernels are built with,
// chosen by bench/kernels.cu's sweep (doc/kernels.md has the measurements).
// llm.cgraph's launch rules follow from them: LLM_GEMV_ROWS = WARPS * GEMV_R.
#ifndef LLM_CONFIG_CUH
#define LLM_CONFIG_CUH

#include "llm_device.cuh"

namespace llm {
constexpr int GEMV_R = 2; // output units a warp (bench/llm_kernels.py: the library's kernels with 1 were slower at every shape but k = 10944)
constexpr int GEMV_U = 4; // 16-byte chunks of each row a lane has in flight
constexpr int GEMV_ROWS = WARPS * GEMV_R;
// SwiGLU reads two rows a unit (gate and up), and the experts' kernels are
// built on it: a warp takes one unit, so that the registers allow two
// blocks a multiprocessor (llm.cgraph's LLM_SWIGLU_ROWS = WARPS * SWIGLU_R).
constexpr int SWIGLU_R = 1;
constexpr int SWIGLU_ROWS = WARPS * SWIGLU_R;
// SwiGLU GEMVs (the dense FFN's and the experts' gate/up): 2 chunks in
// flight a lane, registers for 3 blocks a multiprocessor, so that the next
// call's blocks fit beside the last ones and prefetch (bench/llm_kernels.cu's
// moe_sweep, one H200, the experts' gate/up: 26.8 us against 29.3 with 4
// chunks and 2 blocks; the down kernel and the plain GEMVs gained nothing
// so).  With 4 blocks (64 registers) the dense kernels spill.
constexpr int SWIGLU_U = 2;
constexpr int SWIGLU_BLOCKS = 3;
// The experts' gate/up fits 4 blocks without spilling, its shared blocks
// taking one chunk in flight past 2 tokens (Moe::shared_gate_up): 72.1 us
// a MoE layer against 73.7 with 3 blocks (BENCHMARKS.md, run D).
constexpr int MOE_GATE_UP_BLOCKS = 4;
// llm_moe_down keeps 2 * GEMV_U chunks a lane in flight (102 registers, two
// blocks a multiprocessor); llm_moe_down_lean 2 * DOWN_LEAN_U (67, three),
// which pays where the grid runs in waves (doc/kernels.md, MoE; run AR).
constexpr int DOWN_LEAN_U = 2;
constexpr int DOWN_LEAN_BLOCKS = 3;
} // namespace llm

#endif
