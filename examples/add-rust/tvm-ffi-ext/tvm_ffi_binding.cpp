// The functions this kernel exports through tvm-ffi: `add` and `gelu` check their arrays and
// call the Rust functions of add-rs (linked into the same module).
#include <cstdint>

#include <tvm/ffi/tvm_ffi.h>

extern "C" {
void add_rs_add(float* out, const float* a, const float* b, int64_t n);
void add_rs_gelu(float* out, const float* x, int64_t n);
}

namespace {

constexpr DLDataType kFloat32{kDLFloat, 32, 1};

void require(const tvm::ffi::TensorView& t, const char* name, int64_t numel) {
  TVM_FFI_CHECK(t.device().device_type == kDLCPU, ValueError) << name << " must be a CPU array";
  TVM_FFI_CHECK(t.dtype() == kFloat32, TypeError) << name << " must be float32, got " << t.dtype();
  TVM_FFI_CHECK(t.IsContiguous(), ValueError) << name << " must be contiguous";
  TVM_FFI_CHECK(t.numel() == numel, ValueError) << name << " has " << t.numel() << " elements, expected " << numel;
}

void add(tvm::ffi::TensorView out, tvm::ffi::TensorView a, tvm::ffi::TensorView b) {
  require(out, "out", out.numel());
  require(a, "a", out.numel());
  require(b, "b", out.numel());
  add_rs_add(static_cast<float*>(out.data_ptr()), static_cast<const float*>(a.data_ptr()),
             static_cast<const float*>(b.data_ptr()), out.numel());
}

void gelu(tvm::ffi::TensorView out, tvm::ffi::TensorView x) {
  require(out, "out", out.numel());
  require(x, "x", out.numel());
  add_rs_gelu(static_cast<float*>(out.data_ptr()), static_cast<const float*>(x.data_ptr()), out.numel());
}

}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(add, add);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(gelu, gelu);
