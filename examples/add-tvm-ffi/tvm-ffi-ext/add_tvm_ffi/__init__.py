"""add-tvm-ffi: ``add(a, b, out)`` writes ``a + b`` into ``out`` (float32, contiguous).

The arrays may come from any framework that speaks DLPack (torch, NumPy, JAX): tvm-ffi
passes them to the compiled function without copying."""

import tvm_ffi

from ._ops import ops


def add(a, b, out):
    """``out = a + b``; gives back ``out``."""
    out_t, a_t, b_t = (tvm_ffi.from_dlpack(x) for x in (out, a, b))
    function = getattr(ops, f"add_{out_t.device.type}", None)  # this variant's backend only
    if function is None:
        raise NotImplementedError(f"this build of add-tvm-ffi has no {out_t.device.type} implementation")
    function(out_t, a_t, b_t)
    return out


__all__ = ["add"]
