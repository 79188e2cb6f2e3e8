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
from contextvars import ContextVar
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


class _ActiveCopies:
    """While a model decorated with ``use_kernelized_func`` runs its forward: id(function
    module) -> (that model's copy, the copy's forward function). A ContextVar when eager;
    under torch.compile, which cannot trace a ContextVar, a plain attribute (once used, kept:
    a compiled graph runs where it was traced)."""

    def __init__(self) -> None:
        self._var: ContextVar[dict[int, tuple[Any, Any]] | None] = ContextVar("kernel_builder_active_funcs", default=None)
        self._plain: dict[int, tuple[Any, Any]] | None = None
        self._plain_used = False

    def _use_plain(self) -> bool:
        import torch  # lazy: torch loads on first use, never with import kernel_builder or the CLI

        return self._plain_used or bool(torch.compiler.is_compiling())

    def get(self) -> dict[int, tuple[Any, Any]] | None:
        return self._plain if self._use_plain() else self._var.get()

    def set(self, value: dict[int, tuple[Any, Any]]) -> Any:
        if self._use_plain():
            previous, self._plain, self._plain_used = self._plain, value, True
            return ("plain", previous)
        return ("var", self._var.set(value))

    def reset(self, token: Any) -> None:
        kind, value = token
        if kind == "plain":
            self._plain = value
        else:
            self._var.reset(value)


_ACTIVE = _ActiveCopies()


def func_module(func: Callable[..., Any]) -> type[nn.Module]:
    """An ``nn.Module`` class whose forward calls ``func`` (signature: self + func's params).

    Called inside a model that ``use_kernelized_func`` decorated, the (global) function
    module hands the call to that model's own copy, so kernelizing one model never changes
    another (as in PyPI ``kernels`` 0.19).
    """
    from torch import nn  # lazy: torch loads on first use, never with import kernel_builder or the CLI

    class Func(nn.Module):
        can_torch_compile = getattr(func, "can_torch_compile", False)
        has_backward = getattr(func, "has_backward", True)

        def forward(self, *args: Any, **kwargs: Any) -> Any:
            active = _ACTIVE.get()
            chosen = active.get(id(self)) if active else None
            if chosen is not None:
                copy, forward = chosen
                if not _ACTIVE._use_plain():
                    return copy(*args, **kwargs)
                if forward is not Func.forward:  # compiled: call the kernel's forward, no copy in the graph
                    return forward(self, *args, **kwargs)
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

    def key(fn: Any) -> str:
        return getattr(fn, "__name__", None) or fn.kernel_layer_name

    def decorate(cls: type) -> type:
        original_init = cls.__init__
        original_forward = cls.forward

        @functools.wraps(original_init)
        def init_and_attach(self: Any, *args: Any, **kwargs: Any) -> None:
            original_init(self, *args, **kwargs)
            # Each instance gets its own copy of each function module (kernelize binds the
            # copy), in __dict__ directly, so it is not registered as a submodule.
            table = self.__dict__.setdefault("_kernel_funcs", {})
            for fn in funcs:
                table[key(fn)] = type(fn)()

        @functools.wraps(original_forward)
        def forward_with_copies(self: Any, *args: Any, **kwargs: Any) -> Any:
            active = dict(_ACTIVE.get() or {})
            for fn in funcs:
                copy = self.__dict__["_kernel_funcs"][key(fn)]
                active[id(fn)] = (copy, copy.forward.__func__)
            token = _ACTIVE.set(active)
            try:
                return original_forward(self, *args, **kwargs)
            finally:
                _ACTIVE.reset(token)

        cls.__init__ = init_and_attach  # type: ignore[misc]
        cls.forward = forward_with_copies  # type: ignore[attr-defined]
        return cls

    return decorate
