"""Kernel mappings: layer name -> device type -> (capability range) -> {Mode: repository},
or layer name -> a selector function.

The current mapping lives in a ``ContextVar``: ``register_kernel_mapping`` merges into
it, ``use_kernel_mapping`` stacks a copy for the duration of a ``with`` block.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from contextvars import ContextVar, Token
from typing import Any

import attrs

from kernel_builder.layers import capability
from kernel_builder.layers.device import DEVICE_TYPES, CUDAProperties, Device, ROCMProperties
from kernel_builder.layers.errors import LayerError
from kernel_builder.layers.interval_tree import IntervalTree
from kernel_builder.layers.mode import Mode

__all__ = [
    "register_kernel_mapping",
    "use_kernel_mapping",
    "current_mapping",
    "is_repository",
    "mapping_disabled",
    "FlatRepos",
    "CapabilityRepos",
    "LayerSelector",
    "Selector",
]

#: ``select(module, *, device_type, mode) -> (repository, Mode) | None``
Selector = Callable[..., Any]
ModeRepos = dict[Mode, Any]

_MAX = sys.maxsize


def mapping_disabled() -> bool:
    """``DISABLE_KERNEL_MAPPING=1`` makes every kernelize restore the original forwards."""
    return _DISABLED


_DISABLED = bool(int(os.environ.get("DISABLE_KERNEL_MAPPING", "0") or "0"))


class FlatRepos:
    """Mode table for a device type without capability ranges (registering replaces it)."""

    __slots__ = ("options",)

    def __init__(self) -> None:
        self.options: ModeRepos = {}

    def insert(self, device: Device, options: ModeRepos) -> None:
        self.options = options

    def lookup(self) -> ModeRepos | None:
        return self.options

    def copy(self) -> FlatRepos:
        other = FlatRepos()
        other.options = self.options
        return other


class CapabilityRepos:
    """Mode tables by capability range (CUDA, ROCm); the narrowest range containing the
    current device's capability wins."""

    __slots__ = ("tree",)

    def __init__(self) -> None:
        self.tree: IntervalTree[ModeRepos] = IntervalTree()

    def insert(self, device: Device, options: ModeRepos) -> None:
        props = device.properties
        if props is None:
            self.tree.insert(0, _MAX, options)
        else:
            self.tree.insert(props.min_capability, props.max_capability, options)

    def lookup(self) -> ModeRepos | None:
        return self.tree.find_smallest_interval(capability.current_capability())

    def copy(self) -> CapabilityRepos:
        other = CapabilityRepos()
        other.tree = self.tree.copy()
        return other


DeviceRepos = FlatRepos | CapabilityRepos


@attrs.frozen
class LayerSelector:
    """A user function that picks ``(repository, Mode)`` per module instance."""

    select: Selector

    @property
    def name(self) -> str:
        fn = self.select
        return getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)


LayerEntry = dict[str, DeviceRepos] | LayerSelector
State = dict[str, LayerEntry]

_GLOBAL: State = {}
_MAPPING: ContextVar[State] = ContextVar("kernel_builder_layer_mapping", default=_GLOBAL)


def current_mapping() -> State:
    """The mapping ``kernelize`` uses in this context."""
    return _MAPPING.get()


def _as_device(layer_name: str, key: Any) -> Device:
    device = Device(type=key) if isinstance(key, str) else key
    if not isinstance(device, Device):
        raise LayerError(
            f"Mapping for layer `{layer_name}`: device key {key!r} is not a str or Device",
            hint='use "cuda" or Device("cuda", properties=CUDAProperties(...))',
        )
    if device.type not in DEVICE_TYPES:
        raise LayerError(
            f"Unknown device type: {device.type}",
            hint=f"mapping for layer `{layer_name}`; known types: {', '.join(sorted(DEVICE_TYPES))}",
        )
    return device


def is_repository(value: Any) -> bool:
    return callable(getattr(value, "load", None))


def _as_options(layer_name: str, device: Device, value: Any) -> ModeRepos:
    options = dict(value) if isinstance(value, Mapping) else {Mode.FALLBACK: value}
    for mode, repo in options.items():
        if not isinstance(mode, Mode):
            raise LayerError(
                f"Mapping for layer `{layer_name}` on `{device.type}`: key {mode!r} is not a Mode",
                hint="use {Mode.INFERENCE: repo, ...} or a bare repository",
            )
        if not is_repository(repo):
            raise LayerError(
                f"Mapping for layer `{layer_name}` on `{device.type}` ({mode}): "
                f"{repo!r} is not a repository (it has no load() method)",
                hint="use LayerRepository, LocalLayerRepository or LockedLayerRepository",
            )
    return options


def _new_repos(device: Device) -> DeviceRepos:
    return CapabilityRepos() if device.type in ("cuda", "rocm") else FlatRepos()


def _check_properties(layer_name: str, device: Device) -> None:
    wanted = {"cuda": CUDAProperties, "rocm": ROCMProperties}.get(device.type)
    if device.properties is not None and not isinstance(device.properties, wanted or ()):
        raise LayerError(
            f"Mapping for layer `{layer_name}`: {device} cannot carry properties",
            hint="capability ranges exist only for cuda and rocm",
        )


def _merge(state: State, mapping: Mapping[str, Any]) -> None:
    for layer_name, value in mapping.items():
        if isinstance(value, Mapping):
            entry = state.get(layer_name)
            table = entry if isinstance(entry, dict) else {}
            for key, repos in value.items():
                device = _as_device(layer_name, key)
                _check_properties(layer_name, device)
                options = _as_options(layer_name, device, repos)
                container = table.get(device.type)
                if container is None:
                    container = table[device.type] = _new_repos(device)
                container.insert(device, options)
            state[layer_name] = table
        elif callable(value) and not is_repository(value):
            state[layer_name] = LayerSelector(value)
        else:
            raise LayerError(
                f"Mapping for layer `{layer_name}` must be a dict of device -> repository "
                f"or a selector function, got {value!r}",
                hint='e.g. {"cuda": LayerRepository(...)} or a function '
                "select(module, *, device_type, mode) returning (repository, Mode) or None",
            )


def _copy(state: State) -> State:
    return {
        name: entry if isinstance(entry, LayerSelector) else {t: r.copy() for t, r in entry.items()}
        for name, entry in state.items()
    }


def register_kernel_mapping(mapping: Mapping[str, Any], inherit_mapping: bool = True) -> None:
    """Merge ``mapping`` into the current mapping (``inherit_mapping=False``: replace it).

    Values per layer name: ``{device: repository | {Mode: repository}}`` (a bare
    repository means ``Mode.FALLBACK``), or a selector function.
    """
    if not inherit_mapping:
        _MAPPING.set({})
    _merge(_MAPPING.get(), mapping)


class use_kernel_mapping:  # noqa: N801  (used like a function: `with use_kernel_mapping(...)`)
    """Context manager: ``mapping`` on top of (or, without inheriting, instead of) the
    current mapping; the previous mapping comes back on exit. Contexts nest."""

    def __init__(self, mapping: Mapping[str, Any], *, inherit_mapping: bool = True) -> None:
        self._mapping = mapping
        self._inherit = inherit_mapping
        self._tokens: list[Token[State]] = []

    def __enter__(self) -> None:
        state = _copy(_MAPPING.get()) if self._inherit else {}
        self._tokens.append(_MAPPING.set(state))
        try:
            _merge(state, self._mapping)
        except BaseException:
            _MAPPING.reset(self._tokens.pop())
            raise

    def __exit__(self, *exc: object) -> None:
        _MAPPING.reset(self._tokens.pop())
