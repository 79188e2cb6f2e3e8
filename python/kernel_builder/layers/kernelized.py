"""What ``kernelize`` did to a model: which layers and functions run a kernel, from where.

``kernelize`` leaves the repository a module's kernel came from in the module's
``__dict__`` (``_kernel_repo``, as PyPI ``kernels`` 0.19 does) and removes it when the
module gets its own forward back; ``get_kernelized_layers`` collects those.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

if TYPE_CHECKING:
    from torch import nn

__all__ = ["KernelizedLayer", "KernelizedFunc", "KernelizedLayers", "get_kernelized_layers"]


@attrs.frozen
class KernelizedLayer:
    """A layer that runs a kernel, and the repository the kernel came from."""

    module: nn.Module
    repo: Any


@attrs.frozen
class KernelizedFunc:
    """A function module (attached with ``use_kernelized_func``) that runs a kernel, and its repository."""

    module: nn.Module
    repo: Any


@attrs.frozen
class KernelizedLayers:
    """``layers``: by ``named_modules`` name; ``funcs``: by (name of the module the function
    is attached to, the function's name)."""

    layers: dict[str, KernelizedLayer] = attrs.field(factory=dict)
    funcs: dict[tuple[str, str], KernelizedFunc] = attrs.field(factory=dict)


def get_kernelized_layers(model: nn.Module) -> KernelizedLayers:
    """The layers and functions of ``model`` that ``kernelize`` bound to a kernel.

    Example::

        kernelize(model, mode=Mode.INFERENCE)
        for name, layer in get_kernelized_layers(model).layers.items():
            print(name, layer.repo)
    """
    found = KernelizedLayers()
    for name, module in model.named_modules():
        repo = module.__dict__.get("_kernel_repo")
        if repo is not None:
            found.layers[name] = KernelizedLayer(module, repo)
        # Functions are plain attributes (not submodules): named_modules does not list them.
        for func_name, func in (module.__dict__.get("_kernel_funcs") or {}).items():
            repo = func.__dict__.get("_kernel_repo")
            if repo is not None:
                found.funcs[(name, func_name)] = KernelizedFunc(func, repo)
    return found
