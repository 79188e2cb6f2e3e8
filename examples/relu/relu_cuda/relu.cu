#include <ATen/core/Tensor.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/util/Exception.h>

#include <cstdint>

template <typename T>
__global__ void relu_kernel(T *__restrict__ out, T const *__restrict__ in, int64_t n) {
  int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) {
    T x = in[i];
    out[i] = x > T(0) ? x : T(0);
  }
}

void relu(at::Tensor &out, at::Tensor const &input) {
  TORCH_CHECK(input.device().is_cuda(), "relu: input must be a CUDA tensor");
  TORCH_CHECK(out.sizes() == input.sizes(), "relu: out and input must have the same shape");
  TORCH_CHECK(out.scalar_type() == input.scalar_type(), "relu: out and input must have the same dtype");
  TORCH_CHECK(input.is_contiguous() && out.is_contiguous(), "relu: tensors must be contiguous");
  c10::cuda::CUDAGuard guard(input.device());
  int64_t n = input.numel();
  if (n == 0) {
    return;
  }
  constexpr int threads = 256;
  auto blocks = static_cast<unsigned int>((n + threads - 1) / threads);
  cudaStream_t stream = c10::cuda::getCurrentCUDAStream();
  switch (input.scalar_type()) {
    case at::ScalarType::Float:
      relu_kernel<<<blocks, threads, 0, stream>>>(out.data_ptr<float>(), input.data_ptr<float>(), n);
      break;
    case at::ScalarType::Double:
      relu_kernel<<<blocks, threads, 0, stream>>>(out.data_ptr<double>(), input.data_ptr<double>(), n);
      break;
    default:
      TORCH_CHECK(false, "relu: unsupported dtype ", input.scalar_type());
  }
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}
