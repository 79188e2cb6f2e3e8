"""Which variants a build runs: pure functions over the kernel flake's variant table.

``select_variants`` picks from the table ``kernel-builder build`` gets from Nix (explicit
names, or every bundle variant of the chosen backends that has a toolchain, with a note for
each that has none); ``default_jobs`` shares the CPUs between them. ``select_local_variants``
is ``build --local``'s choice: what ``list-variants`` lists, where the toolchain torch fits.
A ``--backend`` the kernel has no variant of is ``unknown_backend``'s ``ConfigError``
(exit 3) on both paths, as an unknown ``--variant`` is.
No I/O here: the callers probe the machine, print the notes and report the errors.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence

from kernel_builder.config.model import Backend, Build
from kernel_builder.errors import ConfigError
from kernel_builder.flake.variant_table import VariantEntry
from kernel_builder.variants.compat import Fit, buildable, compilable_here
from kernel_builder.variants.matrix import MatrixResult
from kernel_builder.variants.system import System

__all__ = ["default_jobs", "select_variants", "select_local_variants", "unknown_backend"]


def unknown_backend(message: str, backends: Iterable[str], *, hint: str | None = None) -> ConfigError:
    """The error for a ``--backend`` that selects nothing of the kernel (``backends``: those it
    has), the same on every path (the Nix build's variant table, ``build --local``'s
    [general] backends and matrix): a ``ConfigError``, exit 3, like an unknown ``--variant``:
    the command line asked for something build.toml does not have."""
    return ConfigError(message, hint=hint or "backends of this kernel: " + ", ".join(sorted(backends)))


def default_jobs(n_variants: int, cpus: int | None = None, *, per_object: bool = False) -> tuple[int, int]:
    """``(max-jobs, cores)``. A per-object build (pinned toolchains) makes every translation
    unit its own derivation, so one job per CPU keeps them all busy even for one variant; a
    monolithic variant derivation compiles with its cores, so there it is one variant per
    CPU up to the variant count, the CPUs shared among them."""
    cpus = cpus or os.cpu_count() or 1
    if per_object:
        return cpus, 1
    jobs = max(1, min(n_variants, cpus))
    return jobs, max(1, cpus // jobs)


def select_variants(
    table: Sequence[VariantEntry], variants: Sequence[str], backends: Sequence[str], systems: Sequence[str] = ()
) -> tuple[list[str], list[str]]:
    """Pick variants from the flake's variant table: ``(selected, skip notes)``.

    An empty table (the flake's ``torchVersions`` kept nothing) is a ``ConfigError`` saying
    so, before any other reason could be guessed. Explicit ``variants`` must exist and be
    buildable here (else ``ConfigError`` naming the reason); otherwise every bundle variant of the chosen ``backends`` (and, given
    ``systems``, only the arch variants of those Nix systems: ``aarch64-linux`` ones are
    cross-built on x86_64) that has a toolchain, with a note for each one that has none.
    """
    if not table:
        raise ConfigError(
            "the kernel flake lists no variant at all: its flake.nix's genKernelFlakeOutputs arguments "
            "(torchVersions) keep no build set, or build.toml's torch bounds exclude every one",
            hint="check torchVersions in flake.nix (it gets every default build set and returns those to build); "
            "`kernel-builder list-variants --explain --system all` shows what build.toml alone allows",
        )
    known_systems = {entry.system for entry in table if entry.system is not None}
    for system in systems:
        if system not in known_systems:
            raise ConfigError(
                f"no variant of this kernel is for system {system!r}",
                hint="systems of this kernel's arch variants: " + ", ".join(sorted(known_systems)),
            )
    if systems:
        table = [entry for entry in table if entry.system in systems]
    by_name = {entry.name: entry for entry in table}
    for name in variants:
        if name not in by_name:
            raise ConfigError(
                f"unknown variant {name!r} for this kernel on this system",
                hint="choose one of: " + ", ".join(by_name),
            )
        if not by_name[name].buildable:
            raise ConfigError(f"variant {name} cannot be built here: {by_name[name].reason}")
    known_backends = {entry.backend for entry in table}
    for backend in backends:
        if backend not in known_backends:
            raise unknown_backend(f"no variant of this kernel has backend {backend!r}", known_backends)
    if variants:
        return [entry.name for entry in table if entry.name in variants], []
    selected, notes = [], []
    for entry in table:
        if (backends and entry.backend not in backends) or not entry.bundle:
            continue
        if entry.buildable:
            selected.append(entry.name)
        else:
            notes.append(f"{entry.name}: {entry.reason}")
    return selected, notes


def select_local_variants(
    build: Build, listed: MatrixResult, toolchain: System, backends: Iterable[str] | None = None
) -> tuple[list[str], list[str]]:
    """``build --local``'s variants: ``(names to build, skip notes)``.

    ``listed`` is what ``list-variants`` lists for this machine (the matrix, so build.toml's
    bounds and build-sets.json's ``defaultBounds`` hold); a variant is built when the
    toolchain torch ``toolchain`` can build it (``variants.compat.buildable``) and a
    toolchain for its backend exists here. ``backends`` narrows the choice; a backend
    that is not in ``[general] backends`` (or no backend at all), or that the matrix lists
    nothing of, is ``unknown_backend``'s ``ConfigError``.
    """
    declared = [b.value for b in build.general.backends]
    if backends is not None:
        unknown = sorted({b.lower() for b in backends} - set(declared))
        if unknown:
            raise unknown_backend(f"--backend {', '.join(unknown)} is not in [general] backends {declared}", declared)
    wanted = None if backends is None else {Backend.parse(b) for b in backends}
    names: list[str] = []
    skipped: list[str] = []
    for item in listed.variants:
        if wanted is not None and item.backend not in wanted:
            continue
        fit = buildable(item.variant, toolchain)
        if fit and not compilable_here(item.variant):
            fit = Fit(f"no toolchain for {item.backend.value} on {item.variant.system} exists on these machines")
        if fit:
            names.append(item.name)
        else:
            skipped.append(f"{item.name}: {fit.reason}")
    # Why the toolchain torch's own build sets are not listed (e.g. outside [torch] maxver).
    for decision in listed.decisions:
        build_set = decision.build_set
        if (
            decision.included
            or build_set.torch_v.major_minor() != toolchain.torch_version
            or build_set.backend not in build.general.backends
        ):
            continue
        if wanted is None or build_set.backend in wanted:
            skipped.append(f"{build_set.label}: {decision.reason}")
    if wanted is not None:
        listed_backends = {item.backend for item in listed.variants}
        missing = sorted(b.value for b in wanted - listed_backends)
        if missing and not names:
            raise unknown_backend(
                f"no variant of backend {', '.join(missing)} is listed for this machine", declared,
                hint="see `kernel-builder list-variants --system all`; name a variant with --variant to build it anyway",
            )
        skipped += [f"backend {b}: no variant is listed for this machine (--variant names one anyway)" for b in missing]
    return names, skipped
