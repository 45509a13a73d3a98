// Binds the dense block's kernels for Python (bench/dense_block.py): each
// launches on PyTorch's current stream, so torch.cuda.CUDAGraph captures it.
#include <ATen/cuda/CUDAContext.h>
#include <torch/extension.h>

void launch_attention(const void *qa, const void *kvb, const void *x, void *kc, void *vc,
                      const unsigned *scal, float *part, unsigned *count, void *o, unsigned heads,
                      unsigned splits, unsigned maxpos, unsigned d, cudaStream_t stream);
void launch_swiglu(const void *gu, const void *x, void *act, unsigned n, unsigned d,
                   cudaStream_t stream);

static void check(const torch::Tensor &t, torch::ScalarType type, const char *name) {
  TORCH_CHECK(t.is_cuda() && t.scalar_type() == type && t.is_contiguous(), name,
              " must be a contiguous CUDA tensor of ", type);
}

// qa and kvb from the folded weights, x the residual qa's GEMM read;
// kc: [heads, maxpos, 192], vc: [heads, maxpos, 128]; scal: int32 pos, nkeys;
// part: f32 [heads, splits, 130]; count: int32 [heads], zero.
static void attention(torch::Tensor qa, torch::Tensor kvb, torch::Tensor x, torch::Tensor kc,
                      torch::Tensor vc, torch::Tensor scal, torch::Tensor part,
                      torch::Tensor count, torch::Tensor o) {
  check(qa, torch::kBFloat16, "qa");
  check(kvb, torch::kBFloat16, "kvb");
  check(x, torch::kBFloat16, "x");
  check(kc, torch::kBFloat16, "kc");
  check(vc, torch::kBFloat16, "vc");
  check(scal, torch::kInt32, "scal");
  check(part, torch::kFloat32, "part");
  check(count, torch::kInt32, "count");
  check(o, torch::kBFloat16, "o");
  TORCH_CHECK(kc.dim() == 3 && vc.dim() == 3 && part.dim() == 3 && kc.size(0) == part.size(0) &&
                  count.numel() == kc.size(0),
              "attention: shapes");
  TORCH_CHECK(x.numel() % 8 == 0, "attention: x's size");
  launch_attention(qa.data_ptr(), kvb.data_ptr(), x.data_ptr(), kc.data_ptr(), vc.data_ptr(),
                   (const unsigned *)scal.data_ptr(), part.data_ptr<float>(),
                   (unsigned *)count.data_ptr(), o.data_ptr(), (unsigned)kc.size(0),
                   (unsigned)part.size(1), (unsigned)kc.size(1), (unsigned)x.numel(),
                   at::cuda::getCurrentCUDAStream());
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

// act = silu(r gu[:n]) * r gu[n:], r = 1 / rms(x)
static void swiglu(torch::Tensor gu, torch::Tensor x, torch::Tensor act) {
  check(gu, torch::kBFloat16, "gu");
  check(x, torch::kBFloat16, "x");
  check(act, torch::kBFloat16, "act");
  TORCH_CHECK(gu.numel() == 2 * act.numel() && act.numel() % 8 == 0 && x.numel() % 8 == 0,
              "swiglu: sizes");
  launch_swiglu(gu.data_ptr(), x.data_ptr(), act.data_ptr(), (unsigned)act.numel(),
                (unsigned)x.numel(), at::cuda::getCurrentCUDAStream());
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("attention", &attention);
  m.def("swiglu", &swiglu);
}
