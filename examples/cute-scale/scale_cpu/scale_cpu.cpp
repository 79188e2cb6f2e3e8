#include <ATen/core/Tensor.h>
#include <c10/util/Exception.h>

#include <cstdint>

void scale(at::Tensor &out, at::Tensor const &input, double alpha) {
  TORCH_CHECK(input.device().is_cpu(), "scale: input must be a CPU tensor");
  TORCH_CHECK(input.scalar_type() == at::ScalarType::Float && out.scalar_type() == at::ScalarType::Float,
              "scale: tensors must be float32");
  TORCH_CHECK(out.sizes() == input.sizes(), "scale: out and input must have the same shape");
  TORCH_CHECK(input.is_contiguous() && out.is_contiguous(), "scale: tensors must be contiguous");
  float const *in = input.data_ptr<float>();
  float *o = out.data_ptr<float>();
  auto a = static_cast<float>(alpha);
  for (int64_t i = 0; i < input.numel(); ++i) {
    o[i] = a * in[i];
  }
}
