"""Can this process run a variant? Its declared GPU archs, and the loader API it needs.

Two checks read ``metadata.json`` before a variant is imported, as PyPI ``kernels`` does:

- ``backend.archs`` against the current GPU. A CUDA arch ``X.Y`` runs on capability
  ``X.Z`` with ``Z >= Y`` (same generation); ``X.Ya`` only on ``X.Y``; ``X.Yf`` like
  ``X.Y``; ``X.Y+PTX`` on any capability ``>= X.Y`` (the PTX is compiled for the device).
  A ROCm variant needs the device's gfx arch (``gfx90a:sramecc+:xnack-`` is ``gfx90a``) in
  its list. Nothing is checked without a GPU, without archs, or when no arch string is in
  a format we know (a newer builder may write ones we cannot read).
- ``kernels-minver`` against ``KERNELS_VERSION``, the ``kernels`` release whose loader API
  this one implements: a kernel that needs a newer API is refused rather than imported
  into a loader that lacks it.
"""

from __future__ import annotations

import re

import attrs

from kernel_builder import __version__
from kernel_builder.errors import LoadError
from kernel_builder.tree.metadata import Metadata

__all__ = [
    "KERNELS_VERSION",
    "DeviceArch",
    "IncompatibleDevice",
    "LoaderTooOld",
    "cuda_arch_supports",
    "current_device_arch",
    "arch_problem",
    "check_arch",
    "check_minver",
]

#: The PyPI ``kernels`` version whose loader and layer API this package implements.
KERNELS_VERSION = "0.19.1"

_CUDA_ARCH = re.compile(r"(?P<major>\d+)\.(?P<minor>\d+)(?P<suffix>[af]?)(?P<ptx>\+PTX)?")


class IncompatibleDevice(LoadError, RuntimeError):
    """The variant's declared GPU archs do not include the current device."""


class LoaderTooOld(LoadError, RuntimeError):
    """The variant needs a newer ``kernels`` API (``kernels-minver``) than this loader has."""


@attrs.frozen
class DeviceArch:
    """The current GPU: ``backend`` is ``cuda`` (``capability`` set) or ``rocm`` (``gfx`` set)."""

    backend: str
    capability: tuple[int, int] | None = None
    gfx: str | None = None

    def describe(self) -> str:
        if self.backend == "cuda":
            assert self.capability is not None
            return "CUDA capability %d.%d" % self.capability
        return f"ROCm arch {self.gfx}"


def cuda_arch_supports(arch: str, capability: tuple[int, int]) -> bool | None:
    """Whether a build for ``arch`` runs on ``capability``; ``None`` for an unknown format."""
    match = _CUDA_ARCH.fullmatch(arch)
    if match is None:
        return None
    built = (int(match["major"]), int(match["minor"]))
    if match["suffix"] == "a":
        return capability == built
    if match["ptx"] and not match["suffix"]:
        return capability >= built
    return capability[0] == built[0] and capability[1] >= built[1]


def current_device_arch(backend: str) -> DeviceArch | None:
    """The current device for a ``backend`` variant (``None``: no such GPU, nothing to check).

    Asks torch at every call (cheap), so tests can patch ``torch.cuda`` and ``torch.version``.
    """
    if backend not in ("cuda", "rocm"):
        return None
    try:
        import torch  # lazy: torch loads on first use, never with import kernel_builder or the CLI
    except ImportError:
        return None
    if backend == "cuda":
        if torch.version.cuda is None or not torch.cuda.is_available():
            return None
        major, minor = torch.cuda.get_device_capability()
        return DeviceArch("cuda", capability=(int(major), int(minor)))
    if getattr(torch.version, "hip", None) is None or not torch.cuda.is_available():
        return None
    name = torch.cuda.get_device_properties(torch.cuda.current_device()).gcnArchName
    return DeviceArch("rocm", gfx=str(name).split(":", 1)[0])


def arch_problem(archs: tuple[str, ...] | list[str] | None, device: DeviceArch | None) -> str | None:
    """Why a build for ``archs`` cannot run on ``device``, or ``None`` when it can (or is unknown)."""
    if not archs or device is None:
        return None
    if device.backend == "cuda":
        assert device.capability is not None
        answers = [cuda_arch_supports(a, device.capability) for a in archs]
        if all(a is None for a in answers) or any(answers):
            return None
    elif device.gfx in archs:
        return None
    return f"{device.describe()} of the current device is not supported by the architectures of the build: {', '.join(archs)}"


def check_arch(metadata: Metadata, variant: str) -> None:
    """Raise ``IncompatibleDevice`` when ``metadata.backend.archs`` excludes the current GPU."""
    backend = metadata.backend.type.value
    problem = arch_problem(metadata.backend.archs, current_device_arch(backend))
    if problem is not None:
        raise IncompatibleDevice(
            f"Kernel '{metadata.name}' variant '{variant}' does not support the current device: {problem}.",
            hint="if the kernel supports more than it declares (e.g. a Triton fallback), pass check_arch=False; "
            "it may then fail or crash at run time",
        )


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split("."))


def check_minver(metadata: Metadata, variant: str) -> None:
    """Raise ``LoaderTooOld`` when the variant's ``kernels-minver`` is newer than ``KERNELS_VERSION``."""
    needed = metadata.kernels_minver
    if needed is None or _version(needed) <= _version(KERNELS_VERSION):
        return

    raise LoaderTooOld(
        f"Kernel '{metadata.name}' variant '{variant}' requires kernels>={needed}, but this loader "
        f"(kernel-builder {__version__}) implements kernels {KERNELS_VERSION}.",
        hint="upgrade kernel-builder, or load an older version of the kernel",
    )
