// Binds launch_ticks for Python: chain(x, count) launches `count` tick
// kernels on x, one after another, on the current stream.
#include <ATen/cuda/CUDAContext.h>
#include <torch/extension.h>

void launch_ticks(float *x, unsigned n, long count, cudaStream_t stream);

static void chain(torch::Tensor x, int64_t count) {
  TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32 && x.is_contiguous(),
              "x must be a contiguous float32 CUDA tensor");
  launch_ticks(x.data_ptr<float>(), (unsigned)x.numel(), (long)count,
               at::cuda::getCurrentCUDAStream());
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("chain", &chain); }
