"""Checks that a kernel layer can stand in for a model's layer, and for a mode.

A replacement layer is stateless (no own ``__init__``, no extra members besides the
``has_backward``/``can_torch_compile`` flags) and its forward takes the same number and
kinds of parameters, because only its ``forward`` is bound onto the existing module.
"""

from __future__ import annotations

import inspect
from typing import Any

from kernel_builder.layers.errors import LayerError, LayerValidationError
from kernel_builder.layers.mode import Mode

__all__ = ["validate_layer", "supports_mode", "ALLOWED_EXTRA_MEMBERS"]

ALLOWED_EXTRA_MEMBERS = frozenset({"can_torch_compile", "has_backward"})


def _module_members() -> frozenset[str]:
    """``nn.Module``'s members, read at each validation: torch.compile adds some to
    ``nn.Module`` itself, which every layer then inherits."""
    from torch import nn  # lazy: torch loads on first use, never with import kernel_builder or the CLI

    return frozenset(name for name, _ in inspect.getmembers(nn.Module))


def validate_layer(*, layer: Any, replaces: type, repo: object) -> None:
    """Raise ``LayerValidationError`` naming the repository if ``layer`` cannot replace ``replaces``."""
    from torch import nn  # lazy: torch loads on first use, never with import kernel_builder or the CLI

    if not (inspect.isclass(layer) and issubclass(layer, nn.Module)):
        raise LayerValidationError(
            f"Layer `{getattr(layer, '__name__', layer)}` is not a Torch layer.",
            hint=f"{repo} must export an nn.Module subclass",
        )
    if layer.__init__ is not nn.Module.__init__:
        raise LayerValidationError(
            f"{repo} must not override nn.Module constructor.",
            hint="kernel layers are stateless: only forward is used, on the model's own module",
        )
    extra = {name for name, _ in inspect.getmembers(layer)} - _module_members()
    if not extra <= ALLOWED_EXTRA_MEMBERS:
        names = ", ".join(sorted(extra - ALLOWED_EXTRA_MEMBERS))
        raise LayerValidationError(
            f"{repo} must not contain additional members compared to `{replaces.__name__}` ({names}).",
            hint="only forward, has_backward and can_torch_compile may be defined",
        )
    params = list(inspect.signature(layer.forward).parameters.values())
    ref_params = list(inspect.signature(replaces.forward).parameters.values())
    if len(params) != len(ref_params):
        raise LayerValidationError(
            f"Forward signature of {repo} does not match `{replaces.__name__}`: "
            f"different number of arguments ({len(params)} vs {len(ref_params)}).",
            hint="the kernel forward must take the same parameters as the layer it replaces",
        )
    for param, ref in zip(params, ref_params, strict=True):
        if param.kind != ref.kind:
            raise LayerValidationError(
                f"Forward signature of {repo} does not match `{replaces.__name__}`: "
                f"different kind of arguments (kernel has `{param}`, {param.kind.description}; "
                f"`{replaces.__name__}` has `{ref}`, {ref.kind.description}).",
                hint="match positional / keyword-only / *args / **kwargs parameter kinds",
            )


def supports_mode(layer: type, mode: Mode) -> bool:
    """Whether ``layer`` can serve a kernelize request for ``mode``."""
    if Mode.TORCH_COMPILE in mode and not getattr(layer, "can_torch_compile", False):
        return False
    if Mode.TRAINING in mode and not getattr(layer, "has_backward", True):
        return False
    return True
