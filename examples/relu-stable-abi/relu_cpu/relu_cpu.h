#pragma once

#include <torch/csrc/stable/tensor.h>

// out = max(input, 0) for contiguous float32 CPU tensors, through the stable ABI only.
void relu(torch::stable::Tensor out, torch::stable::Tensor input);
