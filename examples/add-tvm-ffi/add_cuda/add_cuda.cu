// out[i] = a[i] + b[i] for contiguous float32 tensors on one CUDA device.
#include <cstdint>

#include <cuda_runtime.h>
#include <tvm/ffi/tvm_ffi.h>

namespace {

constexpr DLDataType kFloat32{kDLFloat, 32, 1};

__global__ void add_kernel(float* out, const float* a, const float* b, int64_t n) {
  int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) {
    out[i] = a[i] + b[i];
  }
}

void require_cuda_float32(const tvm::ffi::TensorView& t, const tvm::ffi::TensorView& out, const char* name) {
  TVM_FFI_CHECK(t.device().device_type == kDLCUDA, ValueError) << name << " must be a CUDA array";
  TVM_FFI_CHECK(t.device().device_id == out.device().device_id, ValueError) << name << " must be on out's device";
  TVM_FFI_CHECK(t.dtype() == kFloat32, TypeError) << name << " must be float32, got " << t.dtype();
  TVM_FFI_CHECK(t.IsContiguous(), ValueError) << name << " must be contiguous";
}

}  // namespace

void add_cuda(tvm::ffi::TensorView out, tvm::ffi::TensorView a, tvm::ffi::TensorView b) {
  require_cuda_float32(out, out, "out");
  require_cuda_float32(a, out, "a");
  require_cuda_float32(b, out, "b");
  TVM_FFI_CHECK(a.numel() == out.numel() && b.numel() == out.numel(), ValueError)
      << "a, b and out must have the same number of elements";
  const int64_t n = out.numel();
  if (n == 0) {
    return;
  }
  cudaSetDevice(out.device().device_id);
  constexpr int threads = 256;
  const int64_t blocks = (n + threads - 1) / threads;
  add_kernel<<<static_cast<unsigned>(blocks), threads>>>(
      static_cast<float*>(out.data_ptr()), static_cast<const float*>(a.data_ptr()),
      static_cast<const float*>(b.data_ptr()), n);
  const cudaError_t status = cudaGetLastError();
  TVM_FFI_CHECK(status == cudaSuccess, RuntimeError) << "add_cuda: " << cudaGetErrorString(status);
}
