#include <ATen/core/Tensor.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/util/Exception.h>

#include <cute/tensor.hpp>

#include <cstdint>

// Each thread scales one element; the global arrays are viewed as 1-D CuTe tensors.
__global__ void scale_kernel(float *__restrict__ out, float const *__restrict__ in, float alpha, int n) {
  using namespace cute;
  Tensor src = make_tensor(make_gmem_ptr(in), make_layout(make_shape(n)));
  Tensor dst = make_tensor(make_gmem_ptr(out), make_layout(make_shape(n)));
  int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < size(src)) {
    dst(i) = alpha * src(i);
  }
}

void scale(at::Tensor &out, at::Tensor const &input, double alpha) {
  TORCH_CHECK(input.device().is_cuda(), "scale: input must be a CUDA tensor");
  TORCH_CHECK(input.scalar_type() == at::ScalarType::Float && out.scalar_type() == at::ScalarType::Float,
              "scale: tensors must be float32");
  TORCH_CHECK(out.sizes() == input.sizes(), "scale: out and input must have the same shape");
  TORCH_CHECK(input.is_contiguous() && out.is_contiguous(), "scale: tensors must be contiguous");
  TORCH_CHECK(input.numel() <= INT32_MAX, "scale: at most 2^31-1 elements");
  c10::cuda::CUDAGuard guard(input.device());
  int n = static_cast<int>(input.numel());
  if (n == 0) {
    return;
  }
  constexpr int threads = 256;
  unsigned int blocks = (n + threads - 1) / threads;
  scale_kernel<<<blocks, threads, 0, c10::cuda::getCurrentCUDAStream()>>>(
      out.data_ptr<float>(), input.data_ptr<float>(), static_cast<float>(alpha), n);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}
