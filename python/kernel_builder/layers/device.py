"""Devices a mapping can target, with optional CUDA/ROCm capability ranges.

Capabilities are encoded as ``major * 10 + minor`` (compute capability 8.6 is ``86``).
"""

from __future__ import annotations

from typing import Any

import attrs

from kernel_builder.layers.errors import LayerError

__all__ = ["CUDAProperties", "ROCMProperties", "Device", "DeviceType", "DEVICE_TYPES"]

#: Device types a mapping may name (``mps`` is Apple Metal).
DEVICE_TYPES = frozenset({"cpu", "cuda", "rocm", "mps", "xpu", "npu", "neuron", "tpu"})


def _strict_int(instance: Any, attribute: attrs.Attribute, value: Any) -> None:
    if not isinstance(value, int) or isinstance(value, bool):
        raise LayerError(
            f"{type(instance).__name__}.{attribute.name} must be an int, got {value!r}",
            hint="encode capability 8.6 as 86",
        )


def _check_range(instance: Any) -> None:
    if instance.min_capability > instance.max_capability:
        raise LayerError(
            f"{type(instance).__name__}: min_capability ({instance.min_capability}) "
            f"must be <= max_capability ({instance.max_capability})",
            hint="swap the two bounds",
        )


@attrs.frozen
class CUDAProperties:
    """Inclusive CUDA compute-capability range a kernel supports."""

    min_capability: int = attrs.field(validator=_strict_int)
    max_capability: int = attrs.field(validator=_strict_int)

    def __attrs_post_init__(self) -> None:
        _check_range(self)


@attrs.frozen
class ROCMProperties:
    """Inclusive ROCm capability range a kernel supports."""

    min_capability: int = attrs.field(validator=_strict_int)
    max_capability: int = attrs.field(validator=_strict_int)

    def __attrs_post_init__(self) -> None:
        _check_range(self)


_PROPERTY_DEVICE = {CUDAProperties: "cuda", ROCMProperties: "rocm"}


def _check_type(instance: Any, attribute: attrs.Attribute, value: Any) -> None:
    if not isinstance(value, str):
        raise LayerError(f"Device.type must be a str, got {value!r}", hint='for example Device("cuda")')


def _check_properties(instance: Device, attribute: attrs.Attribute, value: Any) -> None:
    if value is None:
        return
    wanted = _PROPERTY_DEVICE.get(type(value))
    if wanted is None:
        raise LayerError(
            f"Device.properties must be CUDAProperties, ROCMProperties or None, got {value!r}",
            hint="leave properties out to match every capability",
        )
    if instance.type != wanted:
        raise LayerError(
            f"{type(value).__name__} is only supported for '{wanted}' devices, not '{instance.type}'.",
            hint=f'use Device("{wanted}", properties=...)',
        )


@attrs.frozen
class Device:
    """A device type, optionally narrowed to a capability range."""

    type: str = attrs.field(validator=_check_type)
    properties: CUDAProperties | ROCMProperties | None = attrs.field(
        default=None, validator=_check_properties
    )


@attrs.frozen
class DeviceType:
    """What a selector gets as ``device_type`` when ``torch.device`` cannot name the type.

    ``rocm`` (torch calls a ROCm GPU ``cuda``) and types whose torch plug-in is not
    loaded (``npu`` without torch_npu, ``tpu``, ``neuron``). Like ``torch.device`` it has
    ``.type`` and ``.index``, so selectors can test ``device_type.type`` either way.
    """

    type: str
    index: int | None = None

    def __str__(self) -> str:
        return self.type
