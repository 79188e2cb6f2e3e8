#include <ATen/core/Tensor.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <cstdint>

template <typename T>
static void relu_loop(T *out, T const *in, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    out[i] = std::max(in[i], T(0));
  }
}

void relu(at::Tensor &out, at::Tensor const &input) {
  TORCH_CHECK(input.device().is_cpu(), "relu: input must be a CPU tensor");
  TORCH_CHECK(out.sizes() == input.sizes(), "relu: out and input must have the same shape");
  TORCH_CHECK(out.scalar_type() == input.scalar_type(), "relu: out and input must have the same dtype");
  TORCH_CHECK(input.is_contiguous() && out.is_contiguous(), "relu: tensors must be contiguous");
  int64_t n = input.numel();
  switch (input.scalar_type()) {
    case at::ScalarType::Float:
      relu_loop(out.data_ptr<float>(), input.data_ptr<float>(), n);
      break;
    case at::ScalarType::Double:
      relu_loop(out.data_ptr<double>(), input.data_ptr<double>(), n);
      break;
    default:
      TORCH_CHECK(false, "relu: unsupported dtype ", input.scalar_type());
  }
}
