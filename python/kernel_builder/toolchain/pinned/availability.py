"""Why a build set has no pinned toolchain here, in one line a user can act on.

``list-variants`` (its text output and ``--json``'s ``why_not_here``) and ``build`` (each
skipped variant, and ``--variant`` of one that cannot be built) print the same sentence:
which artifact is missing, where it is published, and the step that pins it. Only hints
that can work are given: a torch build that is not in the toolchain lock cannot be built by
the pinned provider at all (no remote builder or host toolchain changes that here), so the
one remedy is to pin it with ``kernel-builder toolchain lock`` where its index is reachable.

``unpinned_reason`` is pure; ``why_not_pinned`` reads the lock's requests (cheaply, as
``list-variants`` does) and calls it. ``unpinned_python_depends`` says the same of a
``python-depends`` name the import check has no pin for, in the words
nix/lib/builders/python-deps.nix uses when it makes those variants unbuildable.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from pathlib import Path

from kernel_builder import backends
from kernel_builder.toolchain.pinned.lockrequests import cross_build_sets, lock_facts

__all__ = ["PYTORCH_INDEX", "torch_index", "unpinned_python_depends", "unpinned_reason", "why_not_pinned"]

PYTORCH_INDEX = "https://download.pytorch.org/whl"
_HOW = "pin it with `kernel-builder toolchain lock`{where} (docs/nix.md, Adding a build set)"


def torch_index(backend: str, backend_version: str | None) -> str | None:
    """The PyTorch package index that publishes torch for this backend, or None when
    PyTorch publishes no such build (the backend table's ``torchIndex``)."""
    return backends.torch_index(backend, backend_version, PYTORCH_INDEX)


def unpinned_reason(
    torch: str,
    backend: str,
    backend_version: str | None,
    system: str,
    *,
    lock_system: str,
    pypi_cuda: Mapping[str, str],
    cross: Mapping[str, Sequence[str]] | None = None,
    known_torch: Collection[str] | None = None,
) -> str:
    """Why the build set (``torch``, ``backend``, ``backend_version``) on ``system`` has no
    pinned toolchain: ``pypi_cuda`` maps each pinned torch (``2.13``) to the CUDA version of
    its PyPI build (what the lock's ``cuda`` map says), which tells when a CUDA build is on
    PyPI under another CUDA version. ``known_torch`` holds the torch versions of
    build-sets.json: only of those is anything said about where they are published (a
    kernel flake's ``torchVersions`` may name any version, such as one that does not exist)."""
    if not lock_system:
        return "no pinned toolchain: the toolchain lock (nix/toolchain-lock.json or $KERNEL_BUILDER_TOOLCHAIN_LOCK) cannot be read"
    if known_torch is not None and torch not in known_torch:
        return (
            f"torch {torch} is not a torch version kernel-builder knows (build-sets.json has "
            f"{', '.join(sorted(known_torch, key=_version_key))}; a torchVersions record in the kernel's flake.nix "
            f"may have named it): no pinned toolchain builds it"
        )
    targets = cross or {}
    if system != lock_system and system in targets:
        return (
            f"no pinned toolchain for this build set on {system}: the toolchain lock cross-builds {system} variants "
            f"of {', '.join(sorted(targets[system])) or 'no build set'} only; add an environment with the {system} "
            f"torch to requests.targets.{system} (docs/nix.md, aarch64-linux variants) and run `kernel-builder toolchain lock`"
        )
    if system != lock_system:
        return (
            f"no pinned toolchain for {system}: the toolchain lock (nix/toolchain-lock.json) pins {lock_system} "
            f"toolchains only, so {system} variants are not built from this lock"
        )
    label = backends.spec(backend).label
    what = f"torch {torch}" + (f" + {label} {backend_version}" if label else f" ({backend})")
    index = torch_index(backend, backend_version)
    if index is None:
        return f"{what}: the pinned toolchains provide no {backend} backend"
    if backends.spec(backend).pypi == "also":
        return f"{what} is not in the toolchain lock; torch {torch} is published on PyPI (CPU-only on {index}): {_HOW.format(where='')}"
    where = f"the PyTorch index ({index})"
    if backends.spec(backend).pypi == "default" and torch in pypi_cuda:
        where += f", not on PyPI (whose torch {torch} is the CUDA {pypi_cuda[torch]} build)"
    return f"{what} is published on {where}, and is not in the toolchain lock: {_HOW.format(where=' on a machine whose pip reaches that index')}"


def why_not_pinned(
    torch: str, backend: str, backend_version: str | None, system: str, *, lock: Path | None = None
) -> str:
    """``unpinned_reason`` with the facts of the toolchain lock at ``lock`` (default: the
    one ``$KERNEL_BUILDER_TOOLCHAIN_LOCK`` or kernel-builder names)."""
    from kernel_builder.variants.buildsets import load_build_sets  # lazy: read only to explain a refusal

    lock_system, pypi_cuda = lock_facts(lock)
    return unpinned_reason(torch, backend, backend_version, system, lock_system=lock_system, pypi_cuda=pypi_cuda,
                           cross=cross_build_sets(lock), known_torch={b.torch for b in load_build_sets()})


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) if part.isdigit() else 0 for part in version.split("."))


def unpinned_python_depends(names: Sequence[str], pinned: Collection[str]) -> str | None:
    """Why variants declaring ``names`` (``python-depends``, general then per backend) are
    not built here: the ones the lock's import-check sets (``pinned``) lack; None if none."""
    missing = [n for n in dict.fromkeys(names) if n not in pinned]
    if not missing:
        return None
    return (
        f"build.toml python-depends {', '.join(missing)}: not pinned for the import check "
        f"(requests.python.importCheck of the toolchain lock pins: {', '.join(sorted(pinned))})"
    )
