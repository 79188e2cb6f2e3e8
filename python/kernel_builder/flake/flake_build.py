"""Build a kernel flake's variants with Nix and install them into ``DIR/build``.

``open_kernel_flake`` writes the flake input and asks the flake which variants exist
(cached: a no-op rebuild runs nix once). ``build_variants`` runs one ``nix build`` over the
selected ``redistributable.<variant>`` outputs, follows nix's events to keep one
``VariantRow`` per variant up to date, copies every variant that built (also when others
failed) into ``build/<variant>`` and rehashes them, and keeps the whole log of each failed
variant in the state directory. The command line only chooses and shows: it passes an
observer for live progress and reads the rows.

A row's states follow what Nix does, not what it announces: ``queued`` until its builder
prints its first line (Nix may announce a build that still waits for a slot), ``building``
from then on, ``built`` only once its output exists (the checks run inside the derivation,
so that is after they passed), ``failed`` when Nix says so. Its time is the build's own,
from that first line to the end.

A variant built object by object (a plan, one derivation per translation unit, a link;
``nix.steps.step_of`` knows their names) is ``building`` from its first object on,
and its row's ``phase`` says how far: ``compiling k/n`` (n: the objects this run builds,
asked of the store when the first one starts), ``linking``, then none while the variant
itself is assembled and checked. A failed object fails its variant, with that object's log.
"""

from __future__ import annotations

import enum
import hashlib
import json
import logging
import os
import re
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Protocol

import attrs

from kernel_builder._files import write_atomic
from kernel_builder import nix
from kernel_builder.flake.cache import query_caches, refusal
from kernel_builder.errors import BuildError, KernelBuilderError
from kernel_builder.tree.layout import hash_variants, install_variant, tree_size
from kernel_builder.flake.kernel import Kernel, as_kernel
from kernel_builder.flake.kernel_flake import PreparedFlake, prepare_kernel_flake
from kernel_builder.flake.object_progress import ObjectCounts
from kernel_builder.nix.steps import Step, Unit, step_of
from kernel_builder.flake.variant_table import Provider, VariantEntry, parse_table
from kernel_builder.toolchain.pinned.availability import why_not_pinned
from kernel_builder.toolchain.pinned.store import ensure_fetched, record_pythons
from kernel_builder.state import state_dir
from kernel_builder.variants.buildsets import current_system

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
    log_file: Path | None = None  # the whole log of a failed variant, kept in the state directory
    out: str | None = None  # the derivation's output path, once Nix started it
    last_log: float | None = None  # when its builder last printed a line
    phase: str | None = None  # while its objects build: "planning", "compiling k/n", "linking"

    def state(self) -> str:
        """What its row in the live table says: the phase while its objects build, else the status."""
        return self.phase if self.phase and self.status is RowStatus.BUILDING else self.status.value


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
    kernel: Kernel | Path,
    extra_pythons: Sequence[str] = (),
    provider: Provider | str = Provider.PINNED,
    cuda_capabilities: Sequence[str] | None = None,
    *,
    test_select: str | None = None,
    test_limits: dict[str, int] | None = None,
    build_layout: str | None = None,
) -> KernelFlake:
    """Record the toolchain (host only), write the flake input, and ask the flake for its variants.

    The variant table depends only on the flake input (builder, build sets, toolchain) and
    build.toml, so it is cached under that key. ``kernel``: the command's ``Kernel``
    (build.toml read once); a bare path is read as ``Kernel.lenient``.
    """
    kernel = as_kernel(kernel)
    kernel_dir = kernel.directory
    provider = Provider(provider)
    prepared = prepare_kernel_flake(
        kernel, list(extra_pythons), toolchain=provider.value, cuda_capabilities=cuda_capabilities,
        test_select=test_select, test_limits=test_limits, build_layout=build_layout,
    )
    if provider is Provider.HOST:
        log.info("note: " + HERMETIC_NOTE.format(path=prepared.toolchains))
    key = hashlib.sha256(
        "\0".join([*prepared.flake_args, prepared.ref]).encode() + kernel.file.read_bytes()
    ).hexdigest()[:24]
    cache = state_dir() / "variant-tables" / f"{key}.json"
    if cache.is_file():
        return KernelFlake(kernel_dir, prepared, provider, _explained(parse_table(json.loads(cache.read_text())), provider))
    records = nix.eval_json(prepared.installable("variantTable"), flake_args=prepared.flake_args)
    table = parse_table(records if isinstance(records, list) else [records])
    cache.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(cache, json.dumps(records))
    return KernelFlake(kernel_dir, prepared, provider, _explained(table, provider))


def _explained(table: tuple[VariantEntry, ...], provider: Provider) -> tuple[VariantEntry, ...]:
    """With pinned toolchains, each unbuildable variant says what ``list-variants`` says
    (which torch build is missing, where it is published, how to pin it): the Nix
    provider's reason only names the build set."""
    if provider is not Provider.PINNED:
        return table
    system = current_system()
    return tuple(
        entry if entry.buildable or entry.torch is None
        else attrs.evolve(entry, reason=why_not_pinned(entry.torch, entry.backend, entry.backend_version, system))
        for entry in table
    )


def nix_options(
    jobs: int, cores: int | None, builders: str | None, provider: Provider | str,
    cache: tuple[tuple[str, ...], tuple[str, ...]],
) -> nix.NixOptions:
    """Explicit nix flags: ``cores`` defaults to the CPUs shared among ``jobs``; only the host
    toolchain's variants build outside the sandbox (``nix.build`` still evaluates them in it)."""
    return nix.NixOptions(
        max_jobs=jobs, cores=cores or max(1, (os.cpu_count() or 1) // max(jobs, 1)), builders=builders,
        sandbox=Provider(provider) is not Provider.HOST, substituters=cache[0], trusted_keys=cache[1],
    )


def build_variants(
    flake: KernelFlake, selected: Sequence[str], options: nix.NixOptions, observer: Observer, *,
    fetch_progress: Callable[[str, int, int], None] | None = None,
    on_event: Callable[[nix.BuildEvent], None] | None = None,
) -> list[VariantRow]:
    """Build ``selected`` and install each variant that built into ``flake.directory/build``.

    Raises ``BuildError`` only when nothing could be tried (nix failed before building, or
    no remote builder could take the work); failed variants are rows with status ``failed``.
    ``on_event`` sees each of nix's events before the rows do (``build --timings`` records them).
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
    tracker = _Tracker(rows, observer, options.max_jobs)

    def listen(event: nix.BuildEvent) -> None:
        if on_event is not None:
            on_event(event)
        tracker.on_event(event)

    report = nix.build(
        targets, options, flake_args=flake.prepared.flake_args, out_link=str(_gcroot(flake.directory)),
        on_event=listen,
    )
    for name in report.failed:
        if rows[name].status is not RowStatus.FAILED:
            rows[name].status = RowStatus.FAILED
            _finish_failed(rows[name])
    failed_objects = any(row.status is RowStatus.FAILED for row in rows.values())
    if report.returncode != 0 and not report.failed and not failed_objects:  # nix failed before building anything
        if report.builder_errors and not report.built:
            raise _builder_failure(report, options.max_jobs)
        raise BuildError("nix build failed:\n" + "\n".join(report.errors[-20:]), hint="rerun it to see nix's whole output: " + nix.shell_command(_plain(report.argv), options.env()))
    _install(flake.directory / "build", rows, report.outputs)
    _keep_logs(rows)
    return list(rows.values())


def _plain(argv: Sequence[str]) -> list[str]:
    """A ``nix build`` command line without the JSON a person does not read."""
    plain, skip = [], False
    for arg in argv:
        if skip:
            skip = False
        elif arg == "--log-format":
            skip = True
        elif arg != "--json":
            plain.append(arg)
    return plain


def _finish_failed(row: VariantRow) -> None:
    """A failed build's time ends with its last log line (Nix reports the failure at the end)."""
    if row.started is not None:
        row.seconds = (row.last_log or time.monotonic()) - row.started


def _keep_logs(rows: Mapping[str, VariantRow]) -> None:
    """Write the whole log of each failed variant to ``<state>/logs/<drv name>.log``."""
    for row in rows.values():
        if row.status is not RowStatus.FAILED or not row.log:
            continue
        name = Path(row.drv).name.removesuffix(".drv") if row.drv else row.name
        row.log_file = state_dir() / "logs" / f"{name}.log"
        row.log_file.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(row.log_file, "".join(f"{line}\n" for line in row.log))


def _output_of(drv: str) -> str | None:
    """The ``out`` path a .drv file names (its ATerm text starts with the outputs)."""
    try:
        text = Path(drv).read_text(errors="replace")
    except OSError:
        return None
    found = _DRV_OUT.match(text)
    return found.group(1) if found else None


_DRV_OUT = re.compile(r'Derive\(\[\("out","([^"]+)"')


def _ask_caches(installables: Sequence[str], flake: KernelFlake, options: nix.NixOptions) -> tuple[Mapping[str, str], bool]:
    """Which selected variants the caches serve, and whether they serve the toolchain of the
    others; refuses untrusted variants before anything builds."""
    check, toolchain_cached = query_caches(installables, flake.prepared.flake_args, options.substituters, options.trusted_keys)
    if check.refused:
        raise refusal(check, options.trusted_keys)
    if check.fetchable:
        log.info(f"{len(check.fetchable)} of {len(installables)} variant(s) are in the cache: " + ", ".join(sorted(check.fetchable)))
    return check.fetchable, toolchain_cached


def gcroot_dir_name(kernel_dir: Path) -> str:
    """The name of the roots directory of the kernel in ``kernel_dir``: its last component and
    a hash of its resolved path, so no two kernel directories share one (``/tmp/r4/relu`` and
    ``/tmp/r4_relu`` did, as ``tmp_r4_relu``) and none is the toolchain's (``toolchain``)."""
    resolved = Path(kernel_dir).resolve()
    return f"{resolved.name or 'root'}-{hashlib.sha256(str(resolved).encode()).hexdigest()[:16]}"


def _gcroot(kernel_dir: Path) -> Path:
    """Where this run's outputs are kept alive (only the latest run's).

    Each root directory records the kernel directory it keeps (``kernel-dir``); the roots of
    kernel directories that no longer exist are dropped here, so builds in directories
    deleted since (scratch copies, test runs) do not keep their outputs in the store forever,
    and so are this kernel's roots under an older directory name.
    """
    roots = state_dir() / "gcroots"
    gcroot = roots / gcroot_dir_name(kernel_dir) / "result"
    _drop_roots_of_deleted_kernels(roots, current=(kernel_dir.resolve(), gcroot.parent))
    gcroot.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(gcroot.parent / "kernel-dir", str(kernel_dir.resolve()))
    for old in gcroot.parent.glob("result*"):
        old.unlink()
    return gcroot


def _drop_roots_of_deleted_kernels(roots: Path, current: tuple[Path, Path] | None = None) -> None:
    """Remove build roots whose recorded kernel directory is gone (toolchain roots have none);
    ``current``: (kernel directory, its roots directory), whose other roots directories go too."""
    for recorded in roots.glob("*/kernel-dir"):
        try:
            kept = Path(recorded.read_text())
            if kept.is_dir() and (current is None or kept != current[0] or recorded.parent == current[1]):
                continue
        except OSError:
            continue
        for link in recorded.parent.glob("result*"):
            link.unlink(missing_ok=True)
        recorded.unlink(missing_ok=True)
        try:
            recorded.parent.rmdir()
        except OSError:
            pass


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
        if row.status is RowStatus.QUEUED and row.drv is None:
            row.status, row.where = RowStatus.CACHED, "store"
        elif row.status in (RowStatus.QUEUED, RowStatus.BUILDING):  # built; its stop event came late
            row.status = RowStatus.BUILT
            if row.started is not None:
                row.seconds = row.seconds or time.monotonic() - row.started
        elif row.status is RowStatus.FETCHING:
            row.status = RowStatus.FETCHED
            row.seconds = time.monotonic() - (row.started or time.monotonic())
        row.size = tree_size(install_variant(Path(outputs[name]), build_dir, name))
    hash_variants([build_dir / r.name for r in rows.values() if r.status in DONE])
    if created and not any(build_dir.iterdir()):
        build_dir.rmdir()


class _Tracker:
    """Turns nix's events into row states, one progress line each.

    Nix 2.8 stops a build's activity only when it exits, so the end of a build is read from
    its count of finished and failed builds: when one finished, the rows whose output is now
    valid are built; when one failed, the row whose builder ended with the driver's
    ``error:`` line (or the only one building) failed. Whatever this cannot tell apart is
    settled by nix's final report.
    """

    def __init__(
        self, rows: dict[str, VariantRow], observer: Observer, jobs: int,
        objects_to_build: Callable[[str, Sequence[str]], list[str]] | None = None,
    ) -> None:
        self.rows, self.observer, self.jobs = rows, observer, jobs
        self.warned: set[str] = set()
        self.done = self.failed = 0
        self.objects: dict[str, ObjectCounts] = {}  # variant -> its objects in this run
        self.units: dict[str, tuple[Unit, str | None]] = {}  # drv of a plan/object/link -> (its unit, its out path)
        self.unit_logs: dict[str, list[str]] = {}
        self.objects_to_build = objects_to_build or _objects_to_build

    def on_event(self, event: nix.BuildEvent) -> None:
        if event.kind in ("builder-error", "untrusted"):
            self._warn_once(event)
            return
        if event.kind == "progress":
            self._progress(event.text)
            return
        unit = step_of(event.drv, list(self.rows))  # by the derivation's name, whatever target nix.build gave it
        if unit is not None:
            self._unit_event(self.rows[unit.variant], unit, event)
            return
        row = self.rows.get(event.target or "")
        if row is None:
            return
        if event.kind == "substitute":
            row.status, row.where, row.started = RowStatus.FETCHING, event.machine, time.monotonic()
            self.observer.changed(row, f"fetching {row.name} from {event.machine}")
            return
        now = time.monotonic()
        if event.kind == "start":  # Nix took the build; its builder may still wait for a slot
            row.drv, row.where, row.out = event.drv, event.machine or "local", _output_of(event.drv or "")
            row.phase = None  # its objects are linked: the variant is assembled and checked now
        elif event.kind == "log":
            row.log.append(event.text)
            row.last_log = now
            if row.status is RowStatus.QUEUED:
                if row.drv is None:  # a per-object part logs first: the variant starts where it builds
                    row.where = event.machine or "local"
                row.status, row.started = RowStatus.BUILDING, now
                self.observer.changed(row, f"building {row.name}" + (f" on {row.where}" if row.where != "local" else ""))
            self.observer.log(row, event.text)
        elif event.kind == "stop" and row.status is RowStatus.BUILDING:
            self._built([row])
        elif event.kind == "error" and row.status is not RowStatus.FAILED:
            row.drv = row.drv or event.drv
            self._failed(row)

    def _unit_event(self, row: VariantRow, unit: Unit, event: nix.BuildEvent) -> None:
        """A plan, object or link derivation of ``row``'s variant started, logged, ended or failed."""
        drv = event.drv or ""
        counts = self.objects.setdefault(row.name, ObjectCounts())
        now = time.monotonic()
        if event.kind == "start":
            if unit.step is Step.OBJECT and counts.total == 0:
                counts.plan(self.objects_to_build(drv, list(self.rows)))
            self.units[drv] = (unit, _output_of(drv))
            counts.start(unit, drv)
            self._announce(row, event.machine, now)
            self._show_phase(row, counts)
        elif event.kind == "log":
            self._announce(row, event.machine, now)  # a part may log before its start is seen
            self.unit_logs.setdefault(drv, []).append(event.text)
            row.last_log = now
            self.observer.log(row, event.text)
        elif event.kind == "stop":  # its builder ended; a failure is reported (and the row failed) as well
            self.units.pop(drv, None)
            if counts.finish(unit, drv) or unit.step is Step.PLAN:
                self._show_phase(row, counts)
        elif event.kind == "error" and row.status is not RowStatus.FAILED:
            what = f"the {unit.step.value} derivation" + (f" of {unit.source}" if unit.source else "")
            row.log = [f"{what} ({drv}) failed:", *self.unit_logs.get(drv, [])]
            row.drv = drv
            self._failed(row)

    def _announce(self, row: VariantRow, machine: str | None, now: float) -> None:
        """A queued variant starts with its first part, on the machine that part builds on."""
        if row.status is RowStatus.QUEUED:
            row.status, row.started, row.where = RowStatus.BUILDING, now, machine or "local"
            self.observer.changed(row, f"building {row.name}" + (f" on {row.where}" if row.where != "local" else ""))

    def _show_phase(self, row: VariantRow, counts: ObjectCounts) -> None:
        phase = counts.phase()
        if phase is not None and phase != row.phase and row.status is RowStatus.BUILDING:
            row.phase = phase
            self.observer.changed(row, f"{row.name}: {phase}")

    def _units_built(self, drvs: Sequence[str]) -> None:
        """Count as done those of the plan/object/link ``drvs`` whose output is now valid
        (when nix's count of finished builds grew but their stop has not come)."""
        known = [(drv, *self.units[drv]) for drv in drvs if drv in self.units]
        outs = [out for _, _, out in known if out]
        try:
            invalid = set(nix.invalid_paths(outs))
        except KernelBuilderError:
            return
        for drv, unit, out in known:
            if out and out not in invalid:
                del self.units[drv]
                counts = self.objects[unit.variant]
                if counts.finish(unit, drv) or unit.step is Step.PLAN:
                    self._show_phase(self.rows[unit.variant], counts)

    def _progress(self, text: str) -> None:
        try:
            done, _, failed = (int(part) for part in text.split())
        except ValueError:
            return
        if done > self.done and self.units:
            self._units_built(list(self.units))
        running = [row for row in self.rows.values() if row.status is RowStatus.BUILDING and row.out]
        if done > self.done:
            self._built(running)
        if failed > self.failed:
            ended = [row for row in running if row.status is RowStatus.BUILDING]
            by_driver = [row for row in ended if row.log and row.log[-1].startswith("error: ")]
            # A row busy with its per-object parts (logging, its own derivation not started)
            # may be the one that failed: then the lone running one is not known to be it.
            in_parts = [row for row in self.rows.values() if row.status is RowStatus.BUILDING and not row.out]
            for row in by_driver or (ended if len(ended) == 1 and not in_parts else []):
                self._failed(row)
        self.done, self.failed = done, failed

    def _built(self, rows: Sequence[VariantRow]) -> None:
        """Mark built those of ``rows`` whose output is now valid (the store's word, not a directory's)."""
        outs = [row.out for row in rows if row.out]
        if not outs:
            return
        try:
            invalid = set(nix.invalid_paths(outs))
        except KernelBuilderError:
            return  # the final report settles it
        now = time.monotonic()
        for row in rows:
            if row.out and row.out not in invalid and row.status is RowStatus.BUILDING:
                row.seconds = now - (row.started or now)
                row.status = RowStatus.BUILT
                where = f" on {row.where}" if row.where != "local" else ""
                self.observer.changed(row, f"built {row.name}{where} in {row.seconds:.1f}s")

    def _failed(self, row: VariantRow) -> None:
        row.status = RowStatus.FAILED
        _finish_failed(row)
        self.observer.changed(row, f"FAILED {row.name}" + (f" after {row.seconds:.1f}s" if row.seconds is not None else ""))

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


def _objects_to_build(object_drv: str, variants: Sequence[str]) -> list[str]:
    """The object derivations of ``object_drv``'s variant that this run builds: the objects
    its link derivation takes whose outputs are not in the store yet (asked of the store
    when the first object starts; empty when the store cannot say, and the count then
    grows as objects start). Links of earlier runs share unchanged objects; the link this
    run builds is one whose output is missing (when several are, their objects are all
    counted). An object whose .drv names no output path (a content-addressed one) counts
    as to be built."""
    unit = step_of(object_drv, variants)
    if unit is None:
        return []
    try:
        referrers = nix.run_nix(["--query", "--referrers", object_drv], program="nix-store").stdout.split()
        links = [path for path in referrers if step_of(path, variants) == Unit(unit.variant, Step.LINK)]
        if len(links) > 1:
            link_outs = {link: _output_of(link) for link in links}
            missing = set(nix.invalid_paths([out for out in link_outs.values() if out]))
            links = [link for link in links if link_outs[link] in missing] or links
        objects = {
            ref for link in links
            for ref in nix.run_nix(["--query", "--references", link], program="nix-store").stdout.split()
            if (found := step_of(ref, variants)) is not None and found.variant == unit.variant and found.step is Step.OBJECT
        }
        outs = {drv: _output_of(drv) for drv in objects}
        missing = set(nix.invalid_paths([out for out in outs.values() if out]))
    except KernelBuilderError:
        return []
    return sorted(drv for drv, out in outs.items() if out is None or out in missing)


def _builder_failure(report: nix.BuildReport, jobs: int) -> BuildError:
    """Nix's "unable to start any build" names no machine; say which builder failed and why."""
    lines = "\n".join(f"  {machine}: {why}" for machine, why in dict(report.builder_errors).items())
    return BuildError(
        f"no remote builder could take the build{' (and -j 0 allows no local build)' if jobs == 0 else ''}:\n{lines}",
        hint="check that `ssh $NIX_SSHOPTS USER@HOST nix-store --version` works (port and identity go in "
        "NIX_SSHOPTS; Nix 2.8 builder URIs have no port), that the machine's system matches the variant's, "
        "or allow local builds with -j N",
    )
