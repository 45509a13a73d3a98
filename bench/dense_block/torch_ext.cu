// PyTorch's side of bench/dense_block.py: the sample's kernels, unchanged,
// launched on the stream PyTorch gives.
#include <cuda_runtime.h>

#include "../../samples/dense_block/kernels/dense_kernels.cuh"

void launch_rmsnorm(const void *x, const void *w, void *y, unsigned n, cudaStream_t stream) {
  rmsnorm_bf16<<<1, 256, 0, stream>>>((const __nv_bfloat16 *)x, (const __nv_bfloat16 *)w,
                                      (__nv_bfloat16 *)y, n);
}

void launch_attention(const void *qa, const void *kvb, void *kc, void *vc, const unsigned *scal,
                      float *part, unsigned *count, void *o, unsigned heads, unsigned splits,
                      unsigned maxpos, cudaStream_t stream) {
  size_t smem = (maxpos + splits - 1) / splits * sizeof(float);
  mla_attention<<<dim3(heads, splits), dense::ATTN_THREADS, smem, stream>>>(
      (const __nv_bfloat16 *)qa, (const __nv_bfloat16 *)kvb, (__nv_bfloat16 *)kc,
      (__nv_bfloat16 *)vc, scal, scal + 1, part, count, (__nv_bfloat16 *)o, maxpos);
}

void launch_swiglu(const void *gu, void *act, unsigned n, cudaStream_t stream) {
  unsigned threads = 128, blocks = (n / 8 + threads - 1) / threads;
  swiglu_bf16<<<blocks, threads, 0, stream>>>((const __nv_bfloat16 *)gu, (__nv_bfloat16 *)act, n);
}
