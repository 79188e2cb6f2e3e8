"""Where the built variants of a kernel are.

Every command that works on a built tree (hash, check, upload) looks in the same places,
in order: ``DIR/result`` (a ``nix build`` link), ``DIR/build`` (a copied or local build),
then ``DIR`` itself. The first of those holding sub-directories with a ``metadata.json``
wins; those sub-directories, sorted by name, are the variants.
"""

from __future__ import annotations

import os
from pathlib import Path

from kernel_builder.errors import CheckError

__all__ = ["discover_variants", "variant_dirs"]


def variant_dirs(build_dir: str | os.PathLike[str]) -> list[Path]:
    """The sub-directories of ``build_dir`` that hold a ``metadata.json``, sorted by name."""
    root = Path(build_dir)
    if not root.is_dir():
        return []
    return sorted((p for p in root.iterdir() if p.is_dir() and (p / "metadata.json").is_file()), key=lambda p: p.name)


def discover_variants(directory: str | os.PathLike[str]) -> tuple[Path, list[Path]]:
    """``(build_dir, variant dirs)`` for a kernel directory or a build tree."""
    base = Path(directory)
    candidates = [base / "result", base / "build", base]
    for candidate in candidates:
        found = variant_dirs(candidate)
        if found:
            return candidate, found
    looked = ", ".join(str(c) for c in candidates)
    raise CheckError(
        f"no built variants found (looked in {looked} for sub-directories with a metadata.json)",
        hint="build the kernel first (`kernel-builder build`) or pass the directory that holds build/",
    )
