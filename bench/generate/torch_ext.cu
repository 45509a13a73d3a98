// PyTorch's side of bench/generate.py: the generate sample's kernels,
// unchanged, launched on the stream PyTorch gives, with the sample's
// launch configurations.
#include <cuda_runtime.h>
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

#include "../../samples/generate/kernels/generate_kernels.cuh"

static const float *f(const torch::Tensor &t) { return t.data_ptr<float>(); }
static float *fw(torch::Tensor &t) { return t.data_ptr<float>(); }
static uint32_t *u(torch::Tensor &t) { return reinterpret_cast<uint32_t *>(t.data_ptr<int32_t>()); }

// One step, as the sample's `step` graph: scal holds token, pos, nkeys,
// count (int32); the weights and caches as the sample lays them out.
static void step(torch::Tensor emb, torch::Tensor wn, torch::Tensor wq, torch::Tensor wk,
                 torch::Tensor wv, torch::Tensor wo, torch::Tensor wf, torch::Tensor wout,
                 torch::Tensor kc, torch::Tensor vc, torch::Tensor tokens, torch::Tensor scal,
                 torch::Tensor x, torch::Tensor h, torch::Tensor q, torch::Tensor k,
                 torch::Tensor v, torch::Tensor a, torch::Tensor o, torch::Tensor logits) {
  const uint32_t d = (uint32_t)x.numel(), vocab = (uint32_t)logits.numel();
  const uint32_t layers = (uint32_t)wn.size(0), maxpos = (uint32_t)kc.size(1);
  cudaStream_t s = at::cuda::getCurrentCUDAStream();
  uint32_t *sc = u(scal);
  embed<<<1, 256, 0, s>>>(f(emb), sc, fw(x), d);
  for (uint32_t l = 0; l < layers; l++) {
    const size_t wl = (size_t)l * d * d, cl = (size_t)l * maxpos * d;
    rmsnorm<<<1, 256, 0, s>>>(f(x), f(wn) + l * d, fw(h), d);
    matvec<<<(d + 7) / 8, 256, 0, s>>>(f(wq) + wl, f(h), fw(q), d, d);
    matvec<<<(d + 7) / 8, 256, 0, s>>>(f(wk) + wl, f(h), fw(k), d, d);
    matvec<<<(d + 7) / 8, 256, 0, s>>>(f(wv) + wl, f(h), fw(v), d, d);
    kv_store<<<(d + 255) / 256, 256, 0, s>>>(f(k), f(v), fw(kc) + cl, fw(vc) + cl, sc + 1, d);
    attention<<<1, 256, maxpos * 4, s>>>(f(q), f(kc) + cl, f(vc) + cl, sc + 2, fw(a), d);
    matvec<<<(d + 7) / 8, 256, 0, s>>>(f(wo) + wl, f(a), fw(o), d, d);
    add<<<(d + 255) / 256, 256, 0, s>>>(fw(x), f(o), d);
  }
  rmsnorm<<<1, 256, 0, s>>>(f(x), f(wf), fw(h), d);
  matvec<<<(vocab + 7) / 8, 256, 0, s>>>(f(wout), f(h), fw(logits), vocab, d);
  next_token<<<1, 1024, 0, s>>>(f(logits), vocab, sc, sc + 1, sc + 2, sc + 3, u(tokens));
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("step", &step); }
