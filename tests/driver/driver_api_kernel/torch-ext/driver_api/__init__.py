"""A test kernel whose module calls the CUDA driver API (cuDriverGetVersion, cuTensorMapEncodeTiled)."""

from ._ops import ops


def driver_version() -> int:
    """The CUDA driver's version, or minus its CUresult when it refuses (-34: a stub library)."""
    return ops.driver_version()


def encode_tensor_map_status() -> int:
    """cuTensorMapEncodeTiled's CUresult for a descriptor over a null address (never 0)."""
    return ops.encode_tensor_map_status()


__all__ = ["driver_version", "encode_tensor_map_status"]
