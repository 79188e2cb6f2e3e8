#pragma once

#include <ATen/core/Tensor.h>

// out = alpha * input, element-wise; out and input are contiguous float tensors of one shape.
void scale(at::Tensor &out, at::Tensor const &input, double alpha);
