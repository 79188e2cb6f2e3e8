"""``Mode``: what a model is kernelized for, and the order repositories are tried in."""

from __future__ import annotations

from enum import Flag, auto

from kernel_builder.layers.errors import ModeError

__all__ = ["Mode", "KernelizeFallback", "fallback_order", "check_kernelize_mode"]


class Mode(Flag):
    """Kernelize mode; members combine with ``|`` (invalid unions raise ``ModeError``).

    ``FALLBACK`` is only a mapping key: the repository used when no other mode matches.
    """

    _NONE = 0
    FALLBACK = auto()
    TRAINING = auto()
    INFERENCE = auto()
    TORCH_COMPILE = auto()

    def __or__(self, other: Mode) -> Mode:  # type: ignore[override]
        union = super().__or__(other)
        if Mode.INFERENCE in union and Mode.TRAINING in union:
            raise ModeError(
                "Mode.INFERENCE and Mode.TRAINING are mutually exclusive.",
                hint="kernelize for either inference or training",
            )
        if Mode.FALLBACK in union and union != Mode.FALLBACK:
            raise ModeError(
                "Mode.FALLBACK cannot be combined with other modes.",
                hint="register the fallback repository under Mode.FALLBACK alone",
            )
        return union


class KernelizeFallback(Flag):
    """When ``kernelize`` may keep a layer's own forward instead of raising.

    ``True`` means ``DEFAULT`` (missing mapping, device, properties or mode), ``False``
    means ``NONE``; ``ALL`` also covers a kernel that cannot be loaded (FileNotFoundError).
    """

    NONE = 0
    NO_LAYER = auto()
    NO_DEVICE = auto()
    NO_COMPATIBLE_PROPERTIES = auto()
    NO_COMPATIBLE_MODE = auto()
    CANNOT_LOAD = auto()

    DEFAULT = NO_LAYER | NO_DEVICE | NO_COMPATIBLE_PROPERTIES | NO_COMPATIBLE_MODE
    ALL = DEFAULT | CANNOT_LOAD


_I, _T, _C = Mode.INFERENCE, Mode.TRAINING, Mode.TORCH_COMPILE
_IC = Mode(_I.value | _C.value)
_TC = Mode(_T.value | _C.value)

# Registered modes tried, best first, for each mode kernelize accepts. Inference may use
# training kernels (they also run forward-only), never the reverse; torch.compile
# requests only take kernels registered for torch.compile.
_FALLBACK_ORDER: dict[Mode, tuple[Mode, ...]] = {
    _I: (_I, _IC, _T, _TC, Mode.FALLBACK),
    _T: (_T, _TC, Mode.FALLBACK),
    _IC: (_IC, _TC, Mode.FALLBACK),
    _TC: (_TC, Mode.FALLBACK),
}


def fallback_order(mode: Mode) -> tuple[Mode, ...]:
    """Registered modes to try for a kernelize ``mode``, most preferred first."""
    order = _FALLBACK_ORDER.get(mode)
    if order is None:
        raise ModeError(
            f"Unsupported mode: {mode}",
            hint="use Mode.INFERENCE or Mode.TRAINING, optionally | Mode.TORCH_COMPILE",
        )
    return order


def check_kernelize_mode(mode: Mode) -> None:
    """Reject modes that can only be mapping keys."""
    if mode == Mode.FALLBACK:
        raise ModeError(
            "Mode.FALLBACK can only be used to register kernel mappings.",
            hint="kernelize with Mode.INFERENCE or Mode.TRAINING",
        )
    if Mode.INFERENCE not in mode and Mode.TRAINING not in mode:
        raise ModeError(
            "kernelize mode must contain Mode.INFERENCE or Mode.TRAINING.",
            hint="for example mode=Mode.INFERENCE | Mode.TORCH_COMPILE",
        )


def as_fallback(use_fallback: bool | KernelizeFallback) -> KernelizeFallback:
    """Normalise kernelize's ``use_fallback`` argument."""
    if isinstance(use_fallback, KernelizeFallback):
        return use_fallback
    return KernelizeFallback.DEFAULT if use_fallback else KernelizeFallback.NONE
