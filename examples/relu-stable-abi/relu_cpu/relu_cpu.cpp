#include "relu_cpu.h"

#include <torch/headeronly/util/Exception.h>

#include <algorithm>
#include <cstdint>

void relu(torch::stable::Tensor out, torch::stable::Tensor input) {
  STD_TORCH_CHECK(input.is_cpu() && out.is_cpu(), "relu: tensors must be on the CPU");
  STD_TORCH_CHECK(input.is_contiguous() && out.is_contiguous(), "relu: tensors must be contiguous");
  STD_TORCH_CHECK(input.numel() == out.numel(), "relu: out and input must have the same size");
  STD_TORCH_CHECK(input.scalar_type() == torch::headeronly::ScalarType::Float, "relu: only float32 is supported");
  const float *in = input.const_data_ptr<float>();
  float *result = out.mutable_data_ptr<float>();
  int64_t n = input.numel();
  for (int64_t i = 0; i < n; ++i) {
    result[i] = std::max(in[i], 0.0f);
  }
}
