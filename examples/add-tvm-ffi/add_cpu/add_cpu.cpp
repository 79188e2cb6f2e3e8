// out[i] = a[i] + b[i] for contiguous float32 tensors on the CPU.
#include <cstdint>

#include <tvm/ffi/tvm_ffi.h>

namespace {

constexpr DLDataType kFloat32{kDLFloat, 32, 1};

void require_cpu_float32(const tvm::ffi::TensorView& t, const char* name) {
  TVM_FFI_CHECK(t.device().device_type == kDLCPU, ValueError) << name << " must be a CPU array";
  TVM_FFI_CHECK(t.dtype() == kFloat32, TypeError) << name << " must be float32, got " << t.dtype();
  TVM_FFI_CHECK(t.IsContiguous(), ValueError) << name << " must be contiguous";
}

}  // namespace

void add_cpu(tvm::ffi::TensorView out, tvm::ffi::TensorView a, tvm::ffi::TensorView b) {
  require_cpu_float32(out, "out");
  require_cpu_float32(a, "a");
  require_cpu_float32(b, "b");
  TVM_FFI_CHECK(a.numel() == out.numel() && b.numel() == out.numel(), ValueError)
      << "a, b and out must have the same number of elements";
  const float* x = static_cast<const float*>(a.data_ptr());
  const float* y = static_cast<const float*>(b.data_ptr());
  float* z = static_cast<float*>(out.data_ptr());
  for (int64_t i = 0; i < out.numel(); ++i) {
    z[i] = x[i] + y[i];
  }
}
