#include <torch/library.h>

#include "registration.h"
#include "torch_binding.h"

TORCH_LIBRARY_EXPAND(TORCH_EXTENSION_NAME, ops) {
  ops.def("relu(Tensor! out, Tensor input) -> ()");
#if defined(CPU_KERNEL)
  ops.impl("relu", c10::kCPU, &relu);
#elif defined(CUDA_KERNEL)
  ops.impl("relu", c10::kCUDA, &relu);
#endif
}

REGISTER_EXTENSION(TORCH_EXTENSION_NAME)
