"""Build a kernel flake's variants with Nix and install them into ``DIR/build``.

``open_kernel_flake`` writes the flake input and asks the flake which variants exist
(cached: a no-op rebuild runs nix once). ``build_variants`` runs one ``nix build`` over the
selected ``redistributable.<variant>`` outputs, follows nix's events to keep one
``VariantRow`` per variant up to date, copies every variant that built (also when others
failed) into ``build/<variant>`` and rehashes them. The command line only chooses and
shows: it passes an observer for live progress and reads the rows.
"""

from __future__ import annotations

import enum
import hashlib
import json
import logging
import os
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Protocol

import attrs

from kernel_builder._files import write_atomic
from kernel_builder.flake import nix
from kernel_builder.flake.cache import query_caches, refusal
from kernel_builder.errors import BuildError
from kernel_builder.tree.layout import hash_variants, install_variant, tree_size
from kernel_builder.flake.kernel_flake import PreparedFlake, prepare_kernel_flake
from kernel_builder.flake.variant_table import Provider, VariantEntry, parse_table
from kernel_builder.toolchain.pinned.store import ensure_fetched, record_pythons
from kernel_builder.toolchain.state import state_dir

__all__ = [
    "DONE", "HERMETIC_NOTE", "KernelFlake", "Observer", "RowStatus", "VariantRow", "build_variants", "nix_options",
    "open_kernel_flake",
]

log = logging.getLogger(__name__)

HERMETIC_NOTE = (
    "host toolchain (not hermetic): variants are built with this machine's compiler, nvcc and "
    "Python environments as recorded in {path}; a change to any of them rebuilds, but the "
    "results are only as reproducible as this machine"
)


class RowStatus(str, enum.Enum):
    """What happened to a selected variant (``--json``'s ``status``)."""

    QUEUED = "queued"
    BUILDING = "building"
    BUILT = "built"
    FETCHING = "fetching"  # substituting from a binary cache
    FETCHED = "fetched"
    CACHED = "cached"  # already in the store: nothing to do
    FAILED = "failed"

    def __str__(self) -> str:
        return self.value


DONE = (RowStatus.BUILT, RowStatus.FETCHED, RowStatus.CACHED)  # the states whose variant is in build/


@attrs.define
class VariantRow:
    """One selected variant and what happened to it."""

    name: str
    status: RowStatus = attrs.field(default=RowStatus.QUEUED, converter=RowStatus)
    where: str | None = None  # "local", the remote builder's URI, or the cache URL it was fetched from
    started: float | None = None
    seconds: float | None = None
    size: int | None = None
    drv: str | None = None
    log: list[str] = attrs.field(factory=list)


class Observer(Protocol):
    """Live progress: a row changed state (``line`` says how), or its build logged ``text``."""

    def changed(self, row: VariantRow, line: str) -> None: ...

    def log(self, row: VariantRow, text: str) -> None: ...


@attrs.frozen
class KernelFlake:
    """A kernel directory ready for nix: its flake reference and its variant table."""

    directory: Path
    prepared: PreparedFlake
    provider: Provider
    table: tuple[VariantEntry, ...]  # one row per variant of the matrix, in matrix order

    def installables(self, names: Sequence[str], output: str = "redistributable") -> dict[str, str]:
        return {name: self.prepared.installable(f"{output}.{name}") for name in names}


def open_kernel_flake(
    kernel_dir: Path,
    extra_pythons: Sequence[str] = (),
    provider: Provider | str = Provider.PINNED,
    cuda_capabilities: Sequence[str] | None = None,
) -> KernelFlake:
    """Record the toolchain (host only), write the flake input, and ask the flake for its variants.

    The variant table depends only on the flake input (builder, build sets, toolchain) and
    build.toml, so it is cached under that key.
    """
    provider = Provider(provider)
    prepared = prepare_kernel_flake(
        kernel_dir, list(extra_pythons), toolchain=provider.value, cuda_capabilities=cuda_capabilities
    )
    if provider is Provider.HOST:
        log.info("note: " + HERMETIC_NOTE.format(path=prepared.toolchains))
    key = hashlib.sha256(
        "\0".join([*prepared.flake_args, prepared.ref]).encode() + (kernel_dir / "build.toml").read_bytes()
    ).hexdigest()[:24]
    cache = state_dir() / "variant-tables" / f"{key}.json"
    if cache.is_file():
        return KernelFlake(kernel_dir, prepared, provider, parse_table(json.loads(cache.read_text())))
    records = nix.eval_json(prepared.installable("variantTable"), flake_args=prepared.flake_args)
    table = parse_table(records if isinstance(records, list) else [records])
    cache.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(cache, json.dumps(records))
    return KernelFlake(kernel_dir, prepared, provider, table)


def nix_options(
    jobs: int, cores: int | None, builders: str | None, provider: Provider | str,
    cache: tuple[tuple[str, ...], tuple[str, ...]],
) -> nix.NixOptions:
    """Explicit nix flags: ``cores`` defaults to the CPUs shared among ``jobs``; pinned toolchains build sandboxed."""
    return nix.NixOptions(
        max_jobs=jobs, cores=cores or max(1, (os.cpu_count() or 1) // max(jobs, 1)), builders=builders,
        sandbox=Provider(provider) is Provider.PINNED, substituters=cache[0], trusted_keys=cache[1],
    )


def build_variants(
    flake: KernelFlake, selected: Sequence[str], options: nix.NixOptions, observer: Observer, *,
    fetch_progress: Callable[[str, int, int], None] | None = None,
) -> list[VariantRow]:
    """Build ``selected`` and install each variant that built into ``flake.directory/build``.

    Raises ``BuildError`` only when nothing could be tried (nix failed before building, or
    no remote builder could take the work); failed variants are rows with status ``failed``.
    """
    targets = flake.installables(selected)
    fetchable, toolchain_cached = _ask_caches(list(targets.values()), flake, options) if options.substituters else ({}, False)
    if flake.provider is Provider.PINNED:
        chosen = [entry for entry in flake.table if entry.name in selected]
        if not toolchain_cached:  # else Nix substitutes the toolchain: no artifact is needed here
            ensure_fetched([entry.build_set for entry in chosen if entry.name not in fetchable], fetch_progress)
        record_pythons({e.build_set: e.python for e in chosen if e.provider is Provider.PINNED and e.python})
    log.info(
        f"{len(selected)} variant(s) selected (unique id {flake.prepared.identity.unique_id}), "
        f"nix -j {options.max_jobs} --cores {options.cores}"
        + (f" --builders {options.builders!r}" if options.builders else "") + f": {', '.join(selected)}"
    )
    rows = {name: VariantRow(name) for name in selected}
    report = nix.build(
        targets, options, flake_args=flake.prepared.flake_args, out_link=str(_gcroot(flake.directory)),
        on_event=_Tracker(rows, observer, options.max_jobs).on_event,
    )
    for name in report.failed:
        rows[name].status = RowStatus.FAILED
    if report.returncode != 0 and not report.failed:  # nix failed before building anything
        if report.builder_errors and not report.built:
            raise _builder_failure(report, options.max_jobs)
        raise BuildError("nix build failed:\n" + "\n".join(report.errors[-20:]), hint="command: " + " ".join(report.argv))
    _install(flake.directory / "build", rows, report.outputs)
    return list(rows.values())


def _ask_caches(installables: Sequence[str], flake: KernelFlake, options: nix.NixOptions) -> tuple[Mapping[str, str], bool]:
    """Which selected variants the caches serve, and whether they serve the toolchain of the
    others; refuses untrusted variants before anything builds."""
    check, toolchain_cached = query_caches(installables, flake.prepared.flake_args, options.substituters, options.trusted_keys)
    if check.refused:
        raise refusal(check, options.trusted_keys)
    if check.fetchable:
        log.info(f"{len(check.fetchable)} of {len(installables)} variant(s) are in the cache: " + ", ".join(sorted(check.fetchable)))
    return check.fetchable, toolchain_cached


def _gcroot(kernel_dir: Path) -> Path:
    """Where this run's outputs are kept alive (only the latest run's)."""
    gcroot = state_dir() / "gcroots" / kernel_dir.as_posix().strip("/").replace("/", "_") / "result"
    gcroot.parent.mkdir(parents=True, exist_ok=True)
    for old in gcroot.parent.glob("result*"):
        old.unlink()
    return gcroot


def _install(build_dir: Path, rows: dict[str, VariantRow], outputs: Mapping[str, str]) -> None:
    """Copy every variant with an output into ``build_dir`` and hash it; no empty build/ is left."""
    created = not build_dir.exists()
    build_dir.mkdir(exist_ok=True)
    for name, row in rows.items():
        if row.status is RowStatus.FAILED:
            continue
        if name not in outputs:
            row.status = RowStatus.FAILED
            continue
        if row.status is RowStatus.QUEUED:
            row.status, row.where = RowStatus.CACHED, "store"
        elif row.status is RowStatus.FETCHING:
            row.status = RowStatus.FETCHED
            row.seconds = time.monotonic() - (row.started or time.monotonic())
        row.size = tree_size(install_variant(Path(outputs[name]), build_dir, name))
    hash_variants([build_dir / r.name for r in rows.values() if r.status in DONE])
    if created and not any(build_dir.iterdir()):
        build_dir.rmdir()


class _Tracker:
    """Turns nix's events into row states, one progress line each."""

    def __init__(self, rows: dict[str, VariantRow], observer: Observer, jobs: int) -> None:
        self.rows, self.observer, self.jobs = rows, observer, jobs
        self.warned: set[str] = set()

    def on_event(self, event: nix.BuildEvent) -> None:
        if event.kind in ("builder-error", "untrusted"):
            self._warn_once(event)
            return
        row = self.rows.get(event.target or "")
        if row is None:
            return
        if event.kind == "substitute":
            row.status, row.where, row.started = RowStatus.FETCHING, event.machine, time.monotonic()
            self.observer.changed(row, f"fetching {row.name} from {event.machine}")
            return
        row.drv = event.drv
        if event.kind == "start":
            row.status, row.started, row.where = RowStatus.BUILDING, time.monotonic(), event.machine or "local"
            self.observer.changed(row, f"building {row.name}" + (f" on {event.machine}" if event.machine else ""))
        elif event.kind == "log":
            row.log.append(event.text)
            self.observer.log(row, event.text)
        elif event.kind == "stop" and row.status is RowStatus.BUILDING:
            row.seconds = time.monotonic() - (row.started or time.monotonic())
            row.status = RowStatus.BUILT
            where = f" on {row.where}" if row.where != "local" else ""
            self.observer.changed(row, f"built {row.name}{where} in {row.seconds:.1f}s")
        elif event.kind == "error":
            row.status = RowStatus.FAILED
            self.observer.changed(row, f"FAILED {row.name}")

    def _warn_once(self, event: nix.BuildEvent) -> None:
        """One line per unusable builder or cache, not one per derivation."""
        if event.machine in self.warned:
            return
        self.warned.add(event.machine)
        if event.kind == "builder-error":
            fallback = "; building on this machine instead" if self.jobs > 0 else ""
            log.warning(f"cannot build on {event.machine}: {event.text}{fallback}")
        else:
            log.warning(f"{event.machine} has paths not signed by a trusted key; Nix ignores them and builds those here")


def _builder_failure(report: nix.BuildReport, jobs: int) -> BuildError:
    """Nix's "unable to start any build" names no machine; say which builder failed and why."""
    lines = "\n".join(f"  {machine}: {why}" for machine, why in dict(report.builder_errors).items())
    return BuildError(
        f"no remote builder could take the build{' (and -j 0 allows no local build)' if jobs == 0 else ''}:\n{lines}",
        hint="check that `ssh $NIX_SSHOPTS USER@HOST nix-store --version` works (port and identity go in "
        "NIX_SSHOPTS; Nix 2.8 builder URIs have no port), that the machine's system matches the variant's, "
        "or allow local builds with -j N",
    )
