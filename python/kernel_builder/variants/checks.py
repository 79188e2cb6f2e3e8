"""build.toml problems that only the build matrix reveals.

A file can be valid on its own and still ask for something no build set can build: a
Torch stable ABI newer than the Torch a stable-ABI variant is compiled with. The stable
ABI of Torch X needs Torch >= X, so such a variant would fail only in the middle of a
build. ``check-config`` reports it up front, at the key that asks for it.
"""

from __future__ import annotations

from collections.abc import Iterable

from kernel_builder.config.loading import Parsed
from kernel_builder.config.model import Backend, Torch, Version
from kernel_builder.config.problems import Problem, Problems
from kernel_builder.variants.buildsets import BuildSet
from kernel_builder.variants.matrix import matrix

__all__ = ["matrix_problems"]


def _stable_abi_path(parsed: Parsed, backend: Backend) -> tuple[str, ...]:
    """Where the stable ABI of ``backend`` is set: a ``[torch.stable-abi]`` entry or the one string."""
    stable = parsed.document.get("torch", {}).get("stable-abi")
    if isinstance(stable, dict):
        return ("torch", "stable-abi", backend.value)
    return ("torch", "stable-abi")


def matrix_problems(
    parsed: Parsed, build_sets: Iterable[BuildSet], *, file: str = "build.toml"
) -> tuple[list[Problem], list[Problem]]:
    """(problems, warnings) of ``parsed`` against the build matrix of every system.

    A stable ABI newer than every Torch the matrix has for a backend is a problem: no
    variant of that backend can be built anywhere. Newer than some systems' Torch only is
    a warning: those systems' variants will fail, the others build.
    """
    build = parsed.build
    problems, warnings = Problems(file, parsed.positions), Problems(file, parsed.positions)
    if not isinstance(build.framework, Torch):
        return [], []
    variants: dict[Backend, list[tuple[Version, str]]] = {}
    for variant in matrix(build, build_sets).variants:
        backend = variant.build_set.backend
        if build.stable_abi_for(backend) is not None and variant.name.startswith("torch-stable-abi"):
            variants.setdefault(backend, []).append((variant.build_set.torch_v, variant.name))
    for backend, built in variants.items():
        stable = build.stable_abi_for(backend)
        assert stable is not None
        failing = [name for torch, name in built if torch < stable]
        if not failing:
            continue
        newest = max(torch for torch, _ in built)
        shown = ", ".join(failing[:3]) + (f" and {len(failing) - 3} more" if len(failing) > 3 else "")
        if newest < stable:
            problems.add(
                _stable_abi_path(parsed, backend),
                f"stable ABI {stable} for {backend.value} needs Torch >= {stable}, but the newest Torch the "
                f"build matrix has for {backend.value} is {newest}: no {backend.value} variant can be built",
            )
        else:
            warnings.add(
                _stable_abi_path(parsed, backend),
                f"stable ABI {stable} for {backend.value} needs Torch >= {stable}; the build matrix has older "
                f"Torch on some systems, so {shown} will fail to build",
            )
    return problems.items, warnings.items
