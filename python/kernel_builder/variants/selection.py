"""Which variants a build runs: pure functions over the kernel flake's variant table.

``select_variants`` picks from the table ``kernel-builder build`` gets from Nix (explicit
names, or every bundle variant of the chosen backends that has a toolchain, with a note for
each that has none); ``default_jobs`` shares the CPUs between them. No I/O here: the CLI
prints the notes and raises the errors.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from kernel_builder.errors import ConfigError

__all__ = ["default_jobs", "select_variants"]


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
