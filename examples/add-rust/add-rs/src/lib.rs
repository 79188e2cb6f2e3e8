//! The kernel's arithmetic, in Rust: plain `extern "C"` functions over float32 buffers.
//! tvm-ffi-ext/tvm_ffi_binding.cpp checks the arrays (device, dtype, shape) and calls them.

use std::f32::consts::FRAC_1_SQRT_2;

/// Borrow `n` floats at `ptr` (null or empty: an empty slice).
unsafe fn input<'a>(ptr: *const f32, n: i64) -> &'a [f32] {
    if ptr.is_null() || n <= 0 {
        &[]
    } else {
        std::slice::from_raw_parts(ptr, n as usize)
    }
}

unsafe fn output<'a>(ptr: *mut f32, n: i64) -> &'a mut [f32] {
    if ptr.is_null() || n <= 0 {
        &mut []
    } else {
        std::slice::from_raw_parts_mut(ptr, n as usize)
    }
}

/// out[i] = a[i] + b[i]
///
/// # Safety
/// `out`, `a` and `b` point at `n` contiguous floats each.
#[no_mangle]
pub unsafe extern "C" fn add_rs_add(out: *mut f32, a: *const f32, b: *const f32, n: i64) {
    let (out, a, b) = (output(out, n), input(a, n), input(b, n));
    for ((z, x), y) in out.iter_mut().zip(a).zip(b) {
        *z = x + y;
    }
}

/// out[i] = GELU(x[i]) = x/2 (1 + erf(x / sqrt 2)), with erf from the vendored libm crate
/// (Rust's standard library has no erf).
///
/// # Safety
/// `out` and `x` point at `n` contiguous floats each.
#[no_mangle]
pub unsafe extern "C" fn add_rs_gelu(out: *mut f32, x: *const f32, n: i64) {
    let (out, x) = (output(out, n), input(x, n));
    for (z, &v) in out.iter_mut().zip(x) {
        *z = 0.5 * v * (1.0 + libm::erff(v * FRAC_1_SQRT_2));
    }
}
