#include <cstdint>

#include <torch/library.h>

#include "registration.h"

int64_t driver_version();
int64_t encode_tensor_map_status();

TORCH_LIBRARY_EXPAND(TORCH_EXTENSION_NAME, ops) {
  // Driver version (e.g. 13000), or minus the CUresult when the driver refuses (34: a stub).
  ops.def("driver_version() -> int", &driver_version);
  // cuTensorMapEncodeTiled's CUresult for a descriptor over a null address.
  ops.def("encode_tensor_map_status() -> int", &encode_tensor_map_status);
}

REGISTER_EXTENSION(TORCH_EXTENSION_NAME)
