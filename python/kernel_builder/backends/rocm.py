"""The ROCm backend: ``.cu``/``.hip`` sources compiled as HIP for the offload targets of
each component's ``rocm-archs`` that the toolkit supports (``ARCHS``)."""

from __future__ import annotations

from typing import Any

import attrs

from kernel_builder.backends.base import ArchChoice, ArchContext, BackendModule
from kernel_builder.errors import BuildError

__all__ = ["ARCHS", "BACKEND", "RocmBackend"]

ARCHS = ("gfx906", "gfx908", "gfx90a", "gfx942", "gfx950", "gfx1030", "gfx1100", "gfx1101", "gfx1200", "gfx1201")


@attrs.frozen
class RocmBackend(BackendModule):
    def component_archs(self, kernel_name: str, kernel: Any, context: ArchContext) -> ArchChoice:
        wanted = set(kernel.rocm_archs or ARCHS)
        chosen = wanted & set(ARCHS)
        if not chosen:
            raise BuildError(
                f"[kernel.{kernel_name}]: empty set of architectures after intersection: rocm-archs "
                f"{sorted(wanted)} and supported {' '.join(ARCHS)}",
                hint="list architectures the ROCm toolkit supports in rocm-archs",
            )
        return ArchChoice(frozenset(chosen))

    def metadata_archs(self, archs: set[Any]) -> tuple[str, ...]:
        return tuple(sorted(archs))


BACKEND = RocmBackend("rocm", cmake_switches=frozenset({"hip"}))
