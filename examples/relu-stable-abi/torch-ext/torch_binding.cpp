#include <torch/csrc/stable/library.h>

#include "registration.h"
#include "../relu_cpu/relu_cpu.h"

STABLE_TORCH_LIBRARY_EXPAND(TORCH_EXTENSION_NAME, ops) {
  ops.def("relu(Tensor! out, Tensor input) -> ()");
}

STABLE_TORCH_LIBRARY_IMPL_EXPAND(TORCH_EXTENSION_NAME, CPU, ops) {
  ops.impl("relu", TORCH_BOX(&relu));
}

REGISTER_EXTENSION(TORCH_EXTENSION_NAME)
