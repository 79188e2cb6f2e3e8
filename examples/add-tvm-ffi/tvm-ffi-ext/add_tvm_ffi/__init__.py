"""add-tvm-ffi: ``add(a, b, out)`` writes ``a + b`` into ``out`` (float32, contiguous).

The arrays may come from any framework that speaks DLPack (torch, NumPy, JAX): tvm-ffi
passes them to the compiled function without copying."""

import tvm_ffi

from ._ops import ops


def add(a, b, out):
    """``out = a + b``; gives back ``out``."""
    device = tvm_ffi.from_dlpack(out).device
    if device.type != "cpu":
        raise NotImplementedError(f"add-tvm-ffi has no {device.type} implementation")
    ops.add_cpu(tvm_ffi.from_dlpack(out), tvm_ffi.from_dlpack(a), tvm_ffi.from_dlpack(b))
    return out


__all__ = ["add"]
