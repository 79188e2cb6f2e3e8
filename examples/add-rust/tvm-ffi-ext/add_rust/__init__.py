"""add-rust: ``add(a, b, out)`` and ``gelu(x, out)`` for float32 CPU arrays, computed in Rust.

The arrays may come from any framework that speaks DLPack (torch, NumPy, JAX): tvm-ffi
passes them to the compiled functions without copying."""

import tvm_ffi

from ._ops import ops


def add(a, b, out):
    """``out = a + b``; gives back ``out``."""
    ops.add(*(tvm_ffi.from_dlpack(t) for t in (out, a, b)))
    return out


def gelu(x, out):
    """``out = GELU(x)`` (the erf form); gives back ``out``."""
    ops.gelu(tvm_ffi.from_dlpack(out), tvm_ffi.from_dlpack(x))
    return out


__all__ = ["add", "gelu"]
