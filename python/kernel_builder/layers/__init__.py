"""Layers: swap a model's layer forwards for Hub (or local) kernels with ``kernelize``.

Mark layers with ``use_kernel_forward_from_hub`` (optionally with a per-instance
``condition``), map layer names to repositories (or to a selector function) with
``register_kernel_mapping`` / ``use_kernel_mapping``, then call ``kernelize``.
Importing this package does not import torch.
"""

from __future__ import annotations

from kernel_builder.layers.decorators import (
    replace_kernel_forward_from_hub,
    use_kernel_forward_from_hub,
    use_kernel_func_from_hub,
    use_kernelized_func,
)
from kernel_builder.layers.device import CUDAProperties, Device, DeviceType, ROCMProperties
from kernel_builder.layers.errors import (
    LayerError,
    LayerValidationError,
    MarkingError,
    ModeError,
    SelectorError,
)
from kernel_builder.layers.kernelize import kernelize
from kernel_builder.layers.kernelized import KernelizedFunc, KernelizedLayer, KernelizedLayers, get_kernelized_layers
from kernel_builder.layers.mapping import register_kernel_mapping, use_kernel_mapping
from kernel_builder.layers.mode import KernelizeFallback, Mode
from kernel_builder.layers.repos import (
    FuncRepository,
    LayerRepository,
    LocalFuncRepository,
    LocalLayerRepository,
    LockedFuncRepository,
    LockedLayerRepository,
)

__all__ = [
    "use_kernel_forward_from_hub",
    "replace_kernel_forward_from_hub",
    "use_kernel_func_from_hub",
    "use_kernelized_func",
    "register_kernel_mapping",
    "use_kernel_mapping",
    "LayerRepository",
    "LocalLayerRepository",
    "LockedLayerRepository",
    "FuncRepository",
    "LocalFuncRepository",
    "LockedFuncRepository",
    "Device",
    "DeviceType",
    "CUDAProperties",
    "ROCMProperties",
    "Mode",
    "KernelizeFallback",
    "kernelize",
    "get_kernelized_layers",
    "KernelizedLayer",
    "KernelizedLayers",
    "KernelizedFunc",
    "LayerError",
    "LayerValidationError",
    "ModeError",
    "SelectorError",
    "MarkingError",
]
