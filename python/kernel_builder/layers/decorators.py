"""Marking layers (and functions) as replaceable by Hub kernels.

A marked class carries ``kernel_layer_name`` and ``kernel_condition``; the same
attribute names the reference uses, so classes marked by either library are seen by both.
Nothing changes until ``kernelize`` runs.
"""

from __future__ import annotations

import functools
import inspect
import warnings
from collections.abc import Callable
from inspect import Parameter, Signature
from typing import TYPE_CHECKING, Any, TypeVar

from kernel_builder.layers.errors import LayerError, MarkingError

if TYPE_CHECKING:
    from torch import nn

__all__ = [
    "use_kernel_forward_from_hub",
    "replace_kernel_forward_from_hub",
    "use_kernel_func_from_hub",
    "use_kernelized_func",
    "func_module",
    "Condition",
]

Condition = Callable[["nn.Module"], bool]
T = TypeVar("T")


def _always(module: Any) -> bool:
    return True


def replace_kernel_forward_from_hub(
    cls: type, layer_name: str, condition: Condition | None = None
) -> None:
    """Mark a (third-party) class as kernelizable under ``layer_name``.

    ``condition(module)`` is asked per instance at kernelize time; false keeps the
    instance's own forward. Prefer the decorator for classes you own.
    """
    cls.kernel_layer_name = layer_name  # type: ignore[attr-defined]
    # staticmethod: reading it through an instance must not bind the module as `self`.
    cls.kernel_condition = staticmethod(condition if condition is not None else _always)  # type: ignore[attr-defined]


def func_module(func: Callable[..., Any]) -> type[nn.Module]:
    """An ``nn.Module`` class whose forward calls ``func`` (signature: self + func's params)."""
    from torch import nn  # lazy: torch loads on first use, never with import kernel_builder or the CLI

    class Func(nn.Module):
        can_torch_compile = getattr(func, "can_torch_compile", False)
        has_backward = getattr(func, "has_backward", True)

        def forward(self, *args: Any, **kwargs: Any) -> Any:
            return func(*args, **kwargs)

    signature = inspect.signature(func)
    Func.forward.__signature__ = Signature(  # type: ignore[attr-defined]
        [Parameter("self", Parameter.POSITIONAL_OR_KEYWORD), *signature.parameters.values()],
        return_annotation=signature.return_annotation,
    )
    Func.__name__ = Func.__qualname__ = getattr(func, "__name__", "Func")
    return Func


def use_kernel_forward_from_hub(
    layer_name: str, condition: Condition | None = None
) -> Callable[[T], T]:
    """Decorator: make a layer class (or a function) replaceable by the kernel ``layer_name``.

    ``condition`` may be given by keyword or, as in PyPI ``kernels``, positionally.

    On a function it returns an instance of a module wrapping it (callable like the
    function), visible to ``kernelize`` once attached with ``use_kernelized_func``.
    """

    def decorate(target: Any) -> Any:
        if inspect.isclass(target):
            replace_kernel_forward_from_hub(target, layer_name, condition)
            return target
        if inspect.isfunction(target):
            cls = func_module(target)
            replace_kernel_forward_from_hub(cls, layer_name, condition)
            return cls()
        raise MarkingError(
            "@use_kernel_forward_from_hub can only be applied to classes or functions, "
            f"got {type(target).__name__}",
            hint="decorate the nn.Module subclass itself, or a plain function",
        )

    return decorate


def use_kernel_func_from_hub(func_name: str) -> Callable[[T], T]:
    """Deprecated alias of ``use_kernel_forward_from_hub`` for functions."""
    warnings.warn(
        "use_kernel_func_from_hub is deprecated and will be removed in kernels 0.17; "
        "use use_kernel_forward_from_hub instead.",
        DeprecationWarning,
        stacklevel=2,
    )
    return use_kernel_forward_from_hub(func_name)


def use_kernelized_func(*args: Any) -> Callable[[type], type]:
    """Class decorator: attach decorated functions to each instance so kernelize sees them."""
    funcs = args
    for fn in funcs:
        if not hasattr(fn, "kernel_layer_name"):
            raise LayerError(
                f"Function `{getattr(fn, '__name__', fn)}` is not decorated with "
                "@use_kernel_forward_from_hub and cannot be used with @use_kernelized_func",
                hint="decorate the function with @use_kernel_forward_from_hub(<layer name>) first",
            )

    def decorate(cls: type) -> type:
        original_init = cls.__init__

        @functools.wraps(original_init)
        def init_and_attach(self: Any, *args: Any, **kwargs: Any) -> None:
            original_init(self, *args, **kwargs)
            # In __dict__ directly, so the function module is not registered as a submodule.
            table = self.__dict__.setdefault("_kernel_funcs", {})
            for fn in funcs:
                table[getattr(fn, "__name__", None) or fn.kernel_layer_name] = fn

        cls.__init__ = init_and_attach  # type: ignore[misc]
        return cls

    return decorate
