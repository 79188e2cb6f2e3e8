#include <torch/library.h>

#include "registration.h"
#include "torch_binding.h"

// The schema in TORCH_LIBRARY_EXPAND, the implementation for the backend in
// TORCH_LIBRARY_IMPL_EXPAND (both expand TORCH_EXTENSION_NAME to the ops identifier).
TORCH_LIBRARY_EXPAND(TORCH_EXTENSION_NAME, ops) {
  ops.def("relu(Tensor! out, Tensor input) -> ()");
}

#if defined(CPU_KERNEL)
TORCH_LIBRARY_IMPL_EXPAND(TORCH_EXTENSION_NAME, CPU, ops) {
  ops.impl("relu", &relu);
}
#endif

REGISTER_EXTENSION(TORCH_EXTENSION_NAME)
