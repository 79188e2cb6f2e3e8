"""The CUDA backend: ``.cu`` sources compiled by nvcc for each component's
``cuda-capabilities`` (``cuda_archs``), one seed per source for reproducible symbol names,
the toolkit's headers from the toolchain's nvidia wheels, and a stand-in libcuda.so.1."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from kernel_builder.backends import cuda_archs
from kernel_builder.backends.base import ArchChoice, ArchContext, BackendModule

__all__ = ["BACKEND", "CudaBackend", "random_seed"]


def random_seed(rel: str) -> str:
    """nvcc names internal symbols with random numbers unless seeded; one seed per file."""
    return f"-frandom-seed=0x{hashlib.sha256(rel.encode()).hexdigest()[:8]}"


@attrs.frozen
class CudaBackend(BackendModule):
    def component_archs(self, kernel_name: str, kernel: Any, context: ArchContext) -> ArchChoice:
        cuda_version = context.cuda_version
        assert cuda_version is not None
        chosen = cuda_archs.select_archs(
            kernel.cuda_capabilities, cuda_version=cuda_version, supported=context.cuda_supported, kernel=kernel_name
        )
        lost = cuda_archs.dropped(kernel.cuda_capabilities, chosen)
        if context.narrow_cuda is not None:
            chosen = cuda_archs.narrow(chosen, context.narrow_cuda, kernel=kernel_name)
        warnings: tuple[str, ...] = ()
        if lost:
            warnings = (
                f"[kernel.{kernel_name}]: CUDA {cuda_version[0]}.{cuda_version[1]} cannot build cuda-capabilities "
                f"{', '.join(lost)}; building {', '.join(str(a) for a in chosen)}",
            )
        return ArchChoice(frozenset(chosen), warnings)

    def device_source_flags(self, rel: str) -> tuple[str, ...]:
        return (random_seed(rel),)

    def source_options(
        self, sources: Iterable[str], source_archs: Mapping[str, set[Any]], all_archs: set[Any]
    ) -> dict[str, tuple[str, ...]]:
        # A .cu file of [torch] src belongs to no component: it gets every component's archs.
        archs = dict(source_archs)
        for path in sources:
            if path.endswith(".cu") and path not in archs:
                archs[path] = set(all_archs)
        return {path: tuple(cuda_archs.gencode_flags(of_source)) for path, of_source in archs.items()}

    def device_compiler_flags(self, prefix_maps: tuple[str, ...]) -> tuple[str, ...]:
        # the -gencode flags are per source (source_options)
        return ("-Xcompiler=-fno-gnu-unique", *(f"-Xcompiler={flag}" for flag in prefix_maps))

    def metadata_archs(self, archs: set[Any]) -> tuple[str, ...]:
        return tuple(cuda_archs.metadata_archs(archs))

    def arch_list(self, archs: set[Any]) -> tuple[str, ...]:
        return tuple(sorted({str(a.base) for a in archs}))

    def toolchain_includes(self, toolchain: Any) -> tuple[str, ...]:
        return tuple(toolchain.nvidia_includes)

    def configure_args(self, toolchain: Any, *, cross: bool = False) -> list[str]:
        from kernel_builder.pyenv import probe_cuda  # lazy: only a CUDA compile probes the toolkit

        cuda = probe_cuda()
        args = [f"-DCMAKE_CUDA_COMPILER={cuda.nvcc}", f"-DCUDAToolkit_ROOT={cuda.home}", f"-DCUDA_TOOLKIT_ROOT_DIR={cuda.home}"]
        # Cross-building, the build Python's NVRTC is of the wrong machine: the cross
        # toolchain's CMake file names the target's.
        if toolchain.nvrtc and not cross:
            args.append(f"-DCUDA_nvrtc_LIBRARY={toolchain.nvrtc[0]}")
        return args


BACKEND = CudaBackend(
    "cuda", cmake_switches=frozenset({"cuda"}), links_driver_stub=True, narrows_capabilities=True, tracks_source_archs=True
)
