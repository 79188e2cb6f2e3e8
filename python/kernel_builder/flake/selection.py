"""Which variants a build runs: pure functions over the kernel flake's variant table.

``select_variants`` picks from the table ``kernel-builder build`` gets from Nix (explicit
names, or every bundle variant of the chosen backends that has a toolchain, with a note for
each that has none); ``default_jobs`` shares the CPUs between them. ``select_local_variants``
is ``build --local``'s choice from the toolchain torch instead. No I/O here: the callers
probe the machine, print the notes and report the errors.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from kernel_builder.config.model import Backend, Build
from kernel_builder.errors import BuildError, ConfigError
from kernel_builder.variants.host import Platform
from kernel_builder.variants.names import BackendInfo, Variant

if TYPE_CHECKING:  # only a type: the probe itself is I/O and stays in driver
    from kernel_builder.pyenv import Toolchain

__all__ = ["default_jobs", "select_variants", "select_local_variants"]


def default_jobs(n_variants: int, cpus: int | None = None) -> tuple[int, int]:
    """``(max-jobs, cores)``: one variant per core up to the variant count, cores shared."""
    cpus = cpus or os.cpu_count() or 1
    jobs = max(1, min(n_variants, cpus))
    return jobs, max(1, cpus // jobs)


def select_variants(
    table: Sequence[dict[str, Any]], variants: Sequence[str], backends: Sequence[str]
) -> tuple[list[str], list[str]]:
    """Pick variants from the flake's variant table: ``(selected, skip notes)``.

    Explicit ``variants`` must exist and be buildable here (else ``ConfigError`` naming the
    reason); otherwise every bundle variant of the chosen ``backends`` that has a
    toolchain, with a note for each one that has none.
    """
    by_name = {row["name"]: row for row in table}
    for name in variants:
        if name not in by_name:
            raise ConfigError(
                f"unknown variant {name!r} for this kernel on this system",
                hint="choose one of: " + ", ".join(by_name),
            )
        if not by_name[name]["buildable"]:
            raise ConfigError(f"variant {name} cannot be built here: {by_name[name]['reason']}")
    known_backends = {row["backend"] for row in table}
    for backend in backends:
        if backend not in known_backends:
            raise ConfigError(
                f"no variant of this kernel has backend {backend!r}",
                hint="backends of this kernel: " + ", ".join(sorted(known_backends)),
            )
    if variants:
        return [row["name"] for row in table if row["name"] in variants], []
    selected, notes = [], []
    for row in table:
        if backends and row["backend"] not in backends:
            continue
        if not row["bundle"]:
            continue
        if row["buildable"]:
            selected.append(row["name"])
        else:
            notes.append(f"{row['name']}: {row['reason']}")
    return selected, notes


def select_local_variants(
    build: Build,
    toolchain: Toolchain,
    backends: Iterable[str] | None,
    *,
    host: Platform,
    system: str,
    listed_noarch: Collection[Backend],
) -> tuple[list[str], list[str]]:
    """``build --local``'s variants for ``toolchain``: ``(names to build, skip notes)``.

    Arch variants follow the toolchain torch on ``host`` (CPU always, CUDA for a CUDA
    torch); noarch variants are those with a build set on ``system`` (``listed_noarch``,
    what ``list-variants`` lists). A backend asked for by name is built anyway, or fails
    with ``BuildError`` when the toolchain cannot build it.
    """
    wanted = None if backends is None else {Backend.parse(b) for b in backends}
    names: list[str] = []
    skipped: list[str] = []
    for backend in build.general.backends:
        if wanted is not None and backend not in wanted:
            continue
        if not build.is_arch_for(backend):
            if wanted is None and backend not in listed_noarch:
                skipped.append(f"torch-{backend.value}: no build set for {system} (pass --backend {backend.value} to build it anyway)")
                continue
            names.append(f"torch-{backend.value}")
            continue
        runnable = backend is Backend.CPU or (backend is Backend.CUDA and toolchain.cuda is not None)
        if not runnable and wanted is None:
            skipped.append(f"{backend.value}: the toolchain torch {toolchain.torch_version} cannot build it")
            continue
        if backend is Backend.CUDA and toolchain.cuda is None:
            raise BuildError(
                f"toolchain for cuda is not available: torch {toolchain.torch_version} at {toolchain.python} has no CUDA",
                hint="pass --toolchain-python with a CUDA build of torch",
            )
        names.append(_local_arch_variant(build, backend, toolchain, host).name)
    if wanted is not None:
        unknown = wanted - set(build.general.backends)
        if unknown:
            raise BuildError(
                f"--backend {', '.join(sorted(b.value for b in unknown))} is not in [general] backends "
                f"{[b.value for b in build.general.backends]}"
            )
    return names, skipped


def _local_arch_variant(build: Build, backend: Backend, toolchain: Toolchain, host: Platform) -> Variant:
    if backend is Backend.CUDA:
        compute = BackendInfo("cuda", toolchain.cuda_major_minor)
    elif backend is Backend.CPU:
        compute = BackendInfo("cpu")
    elif backend is Backend.METAL:
        compute = BackendInfo("metal")
    elif backend is Backend.ROCM:
        compute = BackendInfo("rocm", tuple(int(p) for p in (toolchain.hip or "0.0").split(".")[:2]))
    else:
        compute = BackendInfo("xpu", tuple(int(p) for p in (toolchain.xpu or "0.0").split(".")[:2]))
    stable = build.stable_abi_for(backend)
    if stable is not None:
        return Variant.stable_abi(stable.major_minor(), compute, host.cpu, host.os)
    return Variant.torch(toolchain.torch_major_minor, compute, host.cpu, host.os, cxx11=host.os == "linux" or None)
