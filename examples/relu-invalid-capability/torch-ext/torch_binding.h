#pragma once

#include <ATen/core/Tensor.h>

// out = max(input, 0), element-wise; out and input have the same shape and dtype.
void relu(at::Tensor &out, at::Tensor const &input);
