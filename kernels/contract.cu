// contract.cu: llm.cgraph's launch constants (kernels/CMakeLists.txt
// defines each LLM_* with a literal value for this file) against the
// kernels' own, so that a launch rule and the kernel it describes cannot
// drift apart: a kernel launched by a stale rule would stop with an error
// (too little shared memory) or compute with the wrong shape.  No code.
#include "llm_config.cuh"
#include "llm_mla.cuh"

using namespace llm;

static_assert(LLM_THREADS == THREADS, "llm.cgraph's LLM_THREADS is the kernels' block");
static_assert(LLM_GEMV_ROWS == GEMV_ROWS, "llm.cgraph's LLM_GEMV_ROWS is a GEMV block's outputs");
static_assert(LLM_SWIGLU_ROWS == SWIGLU_ROWS, "llm.cgraph's LLM_SWIGLU_ROWS is a SwiGLU block's");
static_assert(LLM_MLA_THREADS == MLA_THREADS, "llm.cgraph's LLM_MLA_THREADS is llm_mla_decode's");
static_assert(LLM_MLA_SMEM == MLA_DECODE_SMEM, "llm.cgraph's LLM_MLA_SMEM is llm_mla_decode's");
static_assert(LLM_MLA_TILE_SMEM == MLA_TILE_SMEM, "llm.cgraph's LLM_MLA_TILE_SMEM is a tile's");
static_assert(LLM_MLA_PREP_SMEM == MLA_PREP_TOKEN_SMEM, "llm.cgraph's LLM_MLA_PREP_SMEM is llm_mla_prep's");
static_assert(LLM_MLA_H == MLA_H && LLM_MLA_NOPE == MLA_NOPE && LLM_MLA_ROPE == MLA_ROPE &&
                  LLM_MLA_VD == MLA_VD && LLM_MLA_KVR == MLA_KVR,
              "llm.cgraph's MLA sizes are the kernels'");
