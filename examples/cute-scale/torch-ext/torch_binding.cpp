#include <torch/library.h>

#include "registration.h"
#include "torch_binding.h"

TORCH_LIBRARY_EXPAND(TORCH_EXTENSION_NAME, ops) {
  ops.def("scale(Tensor! out, Tensor input, float alpha) -> ()");
#if defined(CPU_KERNEL)
  ops.impl("scale", c10::kCPU, &scale);
#elif defined(CUDA_KERNEL)
  ops.impl("scale", c10::kCUDA, &scale);
#endif
}

REGISTER_EXTENSION(TORCH_EXTENSION_NAME)
