// Host functions that call the CUDA driver API directly, as kernels that build Hopper TMA
// descriptors do: the module references cuDriverGetVersion and cuTensorMapEncodeTiled.
#include <cstdint>

#include <cuda.h>

int64_t driver_version() {
  int version = 0;
  CUresult status = cuDriverGetVersion(&version);
  return status == CUDA_SUCCESS ? version : -static_cast<int64_t>(status);
}

int64_t encode_tensor_map_status() {
  // A 2-D float tensor map over a null address: the driver refuses it; the status is the answer.
  CUtensorMap map;
  cuuint64_t dims[2] = {64, 64};
  cuuint64_t strides[1] = {64 * sizeof(float)};
  cuuint32_t box[2] = {16, 16};
  cuuint32_t element_strides[2] = {1, 1};
  CUresult status = cuTensorMapEncodeTiled(
      &map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, nullptr, dims, strides, box, element_strides,
      CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE,
      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  return static_cast<int64_t>(status);
}
