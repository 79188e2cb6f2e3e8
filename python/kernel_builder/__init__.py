"""kernel-builder: build, publish and load PyTorch compute kernels.

The loader and layer API are importable from here (``from kernel_builder import
get_kernel, kernelize``); they are resolved lazily so that importing the package (and
running the CLI) does not import torch or huggingface_hub.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_LAZY: dict[str, str] = {
    # loader
    "get_kernel": "kernel_builder.loader.api",
    "get_local_kernel": "kernel_builder.loader.api",
    "get_locked_kernel": "kernel_builder.loader.api",
    "get_kernel_dep": "kernel_builder.loader.kernel_deps",
    "has_kernel": "kernel_builder.loader.api",
    "install_kernel": "kernel_builder.loader.api",
    "load_kernel": "kernel_builder.loader.api",
    "get_loaded_kernels": "kernel_builder.loader.api",
    "get_kernel_variants": "kernel_builder.loader.api",
    "LoadedKernel": "kernel_builder.loader.api",
    "RepoInfo": "kernel_builder.loader.api",
    "VariantAccepted": "kernel_builder.variants.resolve",
    "VariantRejected": "kernel_builder.variants.resolve",
    "Metadata": "kernel_builder.tree.metadata",
    "Benchmark": "kernel_builder.benchmark",
    # layers
    "use_kernel_forward_from_hub": "kernel_builder.layers",
    "replace_kernel_forward_from_hub": "kernel_builder.layers",
    "use_kernel_func_from_hub": "kernel_builder.layers",
    "register_kernel_mapping": "kernel_builder.layers",
    "use_kernel_mapping": "kernel_builder.layers",
    "LayerRepository": "kernel_builder.layers",
    "LocalLayerRepository": "kernel_builder.layers",
    "LockedLayerRepository": "kernel_builder.layers",
    "FuncRepository": "kernel_builder.layers",
    "LocalFuncRepository": "kernel_builder.layers",
    "LockedFuncRepository": "kernel_builder.layers",
    "Device": "kernel_builder.layers",
    "CUDAProperties": "kernel_builder.layers",
    "ROCMProperties": "kernel_builder.layers",
    "Mode": "kernel_builder.layers",
    "kernelize": "kernel_builder.layers",
    "KernelizeFallback": "kernel_builder.layers",
    "use_kernelized_func": "kernel_builder.layers",
    "get_kernelized_layers": "kernel_builder.layers",
    "KernelizedLayer": "kernel_builder.layers",
    "KernelizedLayers": "kernel_builder.layers",
    "KernelizedFunc": "kernel_builder.layers",
}

__all__ = ["__version__", *_LAZY]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'kernel_builder' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return list(__all__)
