"""The protocol a backend's module implements, with the answers of a backend that has
nothing of its own (no architectures, no device compiler): the CPU's.

``driver.generate`` asks these while it plans one variant's compile, in this order: each
component's architectures (``component_archs``), each ``.cu``/``.hip`` source's extra
flags (``device_source_flags``; ``tracks_source_archs``: remember the component's
architectures per source), the per-source options that follow from those
(``source_options``), the device compiler's flags (``device_compiler_flags``), the
architectures written to metadata.json (``metadata_archs``) and the CMake architecture
list (``arch_list``); ``render`` turns on the generated project's ``cmake_switches``. The
variant driver asks ``toolchain_includes``, ``narrows_capabilities`` and
``links_driver_stub``; the compile step ``configure_args``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import attrs

__all__ = ["ArchChoice", "ArchContext", "BackendModule", "CMAKE_SWITCHES"]

# The backend blocks of driver/templates/CMakeLists.txt.j2 a module may turn on.
CMAKE_SWITCHES = ("cuda", "hip", "xpu", "metal")


@attrs.frozen
class ArchContext:
    """What the toolchain says about architectures (CUDA: its version and what its nvcc
    supports) and what the user narrowed them to (``--cuda-capabilities``)."""

    cuda_version: tuple[int, int] | None = None
    cuda_supported: frozenset[Any] | None = None
    narrow_cuda: tuple[str, ...] | None = None


@attrs.frozen
class ArchChoice:
    """One component's architectures, and the warnings choosing them gave."""

    archs: frozenset[Any] = frozenset()
    warnings: tuple[str, ...] = ()


@attrs.frozen
class BackendModule:
    """One backend's compile-side answers; subclass it in ``backends/<name>.py`` and bind the
    instance to ``BACKEND`` (the table's ``module`` names that module)."""

    name: str
    # the CMakeLists.txt.j2 blocks this backend's project has (CMAKE_SWITCHES)
    cmake_switches: frozenset[str] = frozenset()
    # the module links a stand-in of the CUDA driver (libcuda.so.1) --as-needed
    links_driver_stub: bool = False
    # --cuda-capabilities narrows this backend's architectures
    narrows_capabilities: bool = False
    # the architectures of a .cu/.hip source are its component's (per-source options)
    tracks_source_archs: bool = False

    def component_archs(self, kernel_name: str, kernel: Any, context: ArchContext) -> ArchChoice:
        """The architectures ``[kernel.<kernel_name>]`` compiles for (``BuildError`` when none)."""
        return ArchChoice()

    def device_source_flags(self, rel: str) -> tuple[str, ...]:
        """Flags of the ``.cu``/``.hip`` source ``rel`` beside the kernel's own."""
        return ()

    def source_options(
        self, sources: Iterable[str], source_archs: Mapping[str, set[Any]], all_archs: set[Any]
    ) -> dict[str, tuple[str, ...]]:
        """Per-source options that follow from the architectures (added after the others)."""
        return {}

    def device_compiler_flags(self, prefix_maps: tuple[str, ...]) -> tuple[str, ...]:
        """The device compiler's flags for every source it compiles."""
        return ()

    def metadata_archs(self, archs: set[Any]) -> tuple[str, ...]:
        """The architectures metadata.json lists for the variant."""
        return ()

    def arch_list(self, archs: set[Any]) -> tuple[str, ...]:
        """The project's architecture list (CMake's, for CUDA)."""
        return ()

    def toolchain_includes(self, toolchain: Any) -> tuple[str, ...]:
        """System include directories the toolchain adds for this backend."""
        return ()

    def configure_args(self, toolchain: Any, *, cross: bool = False) -> list[str]:
        """CMake's configure arguments for this backend's toolkit (CUDA: nvcc, its root, NVRTC)."""
        return []
