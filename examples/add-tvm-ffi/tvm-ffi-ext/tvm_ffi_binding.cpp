// The functions this kernel exports through tvm-ffi. TVM_FFI_DLL_EXPORT_TYPED_FUNC makes
// `add_cpu` (`add_cuda`) callable as ops.add_cpu(out, a, b) once tvm_ffi.load_module opened
// the library; each variant compiles the functions of its backend.
#include <tvm/ffi/tvm_ffi.h>

#ifdef CPU_KERNEL
void add_cpu(tvm::ffi::TensorView out, tvm::ffi::TensorView a, tvm::ffi::TensorView b);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(add_cpu, add_cpu);
#endif

#ifdef CUDA_KERNEL
void add_cuda(tvm::ffi::TensorView out, tvm::ffi::TensorView a, tvm::ffi::TensorView b);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(add_cuda, add_cuda);
#endif
