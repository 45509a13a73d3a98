// PyTorch's side of bench/dense_block.py: the sample's kernels, unchanged,
// launched on the stream PyTorch gives.
#include <cuda_runtime.h>

#include "../../samples/dense_block/kernels/dense_kernels.cuh"

void launch_attention(const void *qa, const void *kvb, const void *x, void *kc, void *vc,
                      const unsigned *scal, float *part, unsigned *count, void *o, unsigned heads,
                      unsigned splits, unsigned maxpos, unsigned d, cudaStream_t stream) {
  size_t smem = (maxpos + splits - 1) / splits * sizeof(float);
  mla_attention<<<dim3(heads, splits), dense::ATTN_THREADS, smem, stream>>>(
      (const __nv_bfloat16 *)qa, (const __nv_bfloat16 *)kvb, (const __nv_bfloat16 *)x,
      (__nv_bfloat16 *)kc, (__nv_bfloat16 *)vc, scal, scal + 1, part, count, (__nv_bfloat16 *)o,
      maxpos, d);
}

void launch_swiglu(const void *gu, const void *x, void *act, unsigned n, unsigned d,
                   cudaStream_t stream) {
  unsigned threads = 128, blocks = (n / 8 + threads - 1) / threads;
  swiglu_bf16<<<blocks, threads, 0, stream>>>((const __nv_bfloat16 *)gu, (const __nv_bfloat16 *)x,
                                              (__nv_bfloat16 *)act, n, d);
}
