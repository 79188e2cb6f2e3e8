"""``kernel-builder build``: build variants with Nix (or ``--local``) into DIR/build.

The command validates build.toml before Nix runs, asks the kernel flake which variants
exist and which this machine can build, runs one ``nix build --json`` over the selected
``redistributable.<variant>`` outputs with explicit jobs, shows live progress on stderr,
copies each result into ``DIR/build/<variant>`` (replacing only that directory), hashes
the tree and ends with a table. Results go to stdout only with ``--json``.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs
import click

from kernel_builder.errors import BuildError, ConfigError
from kernel_builder.variants.selection import default_jobs, select_variants  # moved; kept importable here

__all__ = ["build", "VariantRow", "select_variants", "default_jobs"]

HERMETIC_NOTE = (
    "host toolchain (not hermetic): variants are built with this machine's compiler, nvcc and "
    "Python environments as recorded in {path}; a change to any of them rebuilds, but the "
    "results are only as reproducible as this machine"
)


@attrs.define
class VariantRow:
    """One selected variant and what happened to it."""

    name: str
    status: str = "queued"  # queued | building | built | fetching | fetched | cached | failed
    where: str | None = None  # "local", the remote builder's URI, or the cache URL it was fetched from
    started: float | None = None
    seconds: float | None = None
    size: int | None = None
    drv: str | None = None
    log: list[str] = attrs.field(factory=list)


def _hash_variants(variant_dirs: Sequence[Path]) -> None:
    """`kernel-builder hash` for the variants this run copied (others under build/ are left alone)."""
    from kernel_builder.digest import compute_digest
    from kernel_builder.metadata import write_digest

    for variant in variant_dirs:
        write_digest(variant / "metadata.json", compute_digest(variant))


def _tree_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def _copy_variant(store_out: Path, name: str, build_dir: Path) -> Path:
    """Replace ``build_dir/name`` by the store tree; leave every other entry alone."""
    source = store_out / name
    if not (source / "metadata.json").is_file():
        source = store_out
    target = build_dir / name
    from kernel_builder.layout import clean_stale_staging, staging_prefix

    clean_stale_staging(build_dir)  # left by a killed run
    tmp = build_dir / f"{staging_prefix(name)}tmp"
    if tmp.exists():
        shutil.rmtree(tmp)
    shutil.copytree(source, tmp, symlinks=True)
    for path in [tmp, *tmp.rglob("*")]:
        if not path.is_symlink():
            path.chmod(path.stat().st_mode | 0o200)
    if target.exists():
        shutil.rmtree(target)
    os.rename(tmp, target)
    return target


class _Progress:
    """Live table on a terminal, one line per state change otherwise (stderr only)."""

    def __init__(self, rows: dict[str, VariantRow], stream_logs: bool) -> None:
        from rich.console import Console

        self.rows = rows
        self.stream_logs = stream_logs
        self.console = Console(stderr=True, soft_wrap=True)
        self.live = None
        if self.console.is_terminal and not stream_logs:
            from rich.live import Live

            self.live = Live(get_renderable=self._render, console=self.console, refresh_per_second=4, transient=True)

    def _render(self) -> Any:
        from rich.table import Table

        table = Table(box=None, show_header=False, pad_edge=False)
        now = time.monotonic()
        for row in self.rows.values():
            elapsed = f"{now - row.started:5.0f}s" if row.status == "building" and row.started else ""
            table.add_row(row.name, row.status, row.where or "", elapsed)
        return table

    def __enter__(self) -> _Progress:
        if self.live is not None:
            self.live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.live is not None:
            self.live.__exit__(None, None, None)

    def changed(self, row: VariantRow, line: str | None = None) -> None:
        if self.live is not None:
            self.live.refresh()
        elif line is not None:
            self.console.print(line, highlight=False, markup=False)

    def log(self, row: VariantRow, text: str) -> None:
        if self.stream_logs:
            self.console.print(f"{row.name}> {text}", highlight=False, markup=False)


def _summary_table(rows: Sequence[VariantRow]) -> Any:
    from rich.table import Table

    table = Table(title="kernel-builder build")
    for column in ("variant", "status", "where", "time", "size"):
        table.add_column(column, justify="right" if column in ("time", "size") else "left")
    for row in rows:
        seconds = f"{row.seconds:.1f}s" if row.seconds is not None else "-"
        size = f"{row.size / 1e6:.2f} MB" if row.size is not None else "-"
        style = {"failed": "red", "built": "green", "fetched": "cyan"}.get(row.status)
        table.add_row(row.name, row.status, row.where or "-", seconds, size, style=style)
    return table


def _prepare(
    kernel_dir: Path, extra_pythons: Sequence[str], console: Any, toolchain: str = "pinned"
) -> tuple[Any, list[dict[str, Any]]]:
    """Record the toolchain (host only), write the flake input, and ask the flake for its variants.

    The variant table depends only on the flake input (builder, build sets, toolchain) and
    build.toml, so it is cached under that key: a no-op rebuild then runs nix once.
    """
    import hashlib

    from kernel_builder import nix
    from kernel_builder.toolchain import state_dir
    from kernel_builder.toolchain.flake_input import prepare_kernel_flake

    prepared = prepare_kernel_flake(kernel_dir, list(extra_pythons), toolchain=toolchain)
    if toolchain == "host":
        console.print(f"note: {HERMETIC_NOTE.format(path=prepared.toolchains)}", style="yellow", highlight=False)
    key = hashlib.sha256(
        "\0".join([*prepared.flake_args, prepared.ref]).encode() + (kernel_dir / "build.toml").read_bytes()
    ).hexdigest()[:24]
    cache = state_dir() / "variant-tables" / f"{key}.json"
    if cache.is_file():
        return prepared, json.loads(cache.read_text())
    table = nix.eval_json(prepared.installable("variantTable"), flake_args=prepared.flake_args)
    assert isinstance(table, list)
    cache.parent.mkdir(parents=True, exist_ok=True)
    tmp = cache.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(table))
    os.replace(tmp, cache)
    return prepared, table


@click.command("build")
@click.argument("directory", default=".", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--variant", "variants", multiple=True, metavar="NAME", help="Build only this variant (repeatable).")
@click.option("--backend", "backends", multiple=True, metavar="NAME", help="Build only variants of this backend (repeatable).")
@click.option("-j", "--max-jobs", "max_jobs", type=click.IntRange(min=0), help="Variants built at once on this machine (default: one per CPU, at most the number of variants; 0 = only on --builders).")
@click.option("--cores", type=click.IntRange(min=1), help="Cores each variant build may use (default: CPUs / jobs).")
@click.option("-L", "--print-build-logs", "print_build_logs", is_flag=True, help="Stream every variant's build log to stderr.")
@click.option("--local", is_flag=True, help="Skip Nix: build with the torch of this Python (or --toolchain-python).")
@click.option("--toolchain-python", metavar="PATH", help="With --local: the Python whose torch to build against.")
@click.option(
    "--toolchain",
    type=click.Choice(["pinned", "host"]),
    default="pinned",
    show_default=True,
    help="pinned: hermetic toolchains from nix/toolchain-lock.json, built in the Nix sandbox (their "
    "artifacts are fetched into the store first when missing). host: this machine's compilers and "
    "Python environments as recorded by `toolchain discover`, sandbox off (for build sets that are not pinned).",
)
@click.option("--python", "extra_pythons", multiple=True, metavar="PATH", help="With --toolchain host: also use this toolchain Python (rediscovers toolchains).")
@click.option(
    "--builders",
    metavar="SPEC",
    help="Nix remote builders, passed to nix as --builders: 'URI SYSTEM SSH-KEY MAX-JOBS ...' per machine, "
    "';'-separated, or '@FILE' in /etc/nix/machines syntax. SSH options (port, identity) come from "
    "NIX_SSHOPTS. With -j 0 every variant is built remotely; otherwise Nix falls back to this machine "
    "when no builder can take it. See docs/scale-out.md.",
)
@click.option(
    "--cache",
    "caches",
    multiple=True,
    metavar="URL",
    help="A binary cache to substitute variants (and toolchains) from, as a Nix store URL: file:///DIR "
    "(or a directory), https://HOST, s3://BUCKET?region=R (repeatable). Needs --trusted-key.",
)
@click.option(
    "--trusted-key",
    "trusted_keys",
    multiple=True,
    metavar="KEY",
    help="A public key (NAME.pub file, or NAME:base64) whose signatures are trusted on --cache paths "
    "(repeatable). A cached variant without such a signature is refused.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the results as JSON on stdout.")
@click.option("--print-nix-args", is_flag=True, help="Record the toolchain, print the nix arguments that select this builder and toolchain (for plain `nix run/build/develop`), and exit.")
def build(
    directory: Path,
    variants: tuple[str, ...],
    backends: tuple[str, ...],
    max_jobs: int | None,
    cores: int | None,
    print_build_logs: bool,
    local: bool,
    toolchain_python: str | None,
    extra_pythons: tuple[str, ...],
    builders: str | None,
    as_json: bool,
    print_nix_args: bool,
    toolchain: str,
    caches: tuple[str, ...],
    trusted_keys: tuple[str, ...],
) -> None:
    """Build the variants of the kernel in DIRECTORY (default: .) into DIRECTORY/build.

    \b
    Each variant is one Nix derivation (see docs/nix.md), built in the Nix sandbox with the
    pinned toolchains by default; every bundle variant with a toolchain is built, the others
    are listed with the reason.
    Examples:
      kernel-builder build examples/relu
      kernel-builder build examples/relu --toolchain host
      kernel-builder build examples/relu --backend cpu -j 2
      kernel-builder build examples/relu --variant torch213-cxx11-cpu-x86_64-linux -L
      kernel-builder build . --builders 'ssh://builder x86_64-linux - 8'
      NIX_SSHOPTS='-p 2222 -i ~/.ssh/id_builder' kernel-builder build . -j 0 \
          --builders 'ssh://root@builder x86_64-linux /root/.ssh/id_builder 4'
      kernel-builder build . --cache file:///srv/kernel-cache --trusted-key keys/team-cache-1.pub
      kernel-builder build . --local
      nix run .#build-variants -j 2 $(kernel-builder build --print-nix-args)
    """
    from kernel_builder.config import load

    kernel_dir = directory.resolve()
    config = load(kernel_dir, check_sources=True)  # every build.toml error, before Nix runs
    if local:
        _build_local(kernel_dir, variants, backends, toolchain_python, max_jobs, print_build_logs, as_json)
        return
    if print_nix_args:
        import shlex

        from kernel_builder.toolchain.flake_input import prepare_kernel_flake

        click.echo(shlex.join(prepare_kernel_flake(kernel_dir, list(extra_pythons), toolchain=toolchain).flake_args))
        return
    if not (kernel_dir / "flake.nix").is_file():
        raise ConfigError(
            f"{kernel_dir / 'flake.nix'} does not exist",
            hint="a kernel flake calls kernel-builder.lib.genKernelFlakeOutputs (`kernel-builder init` writes one), or build with --local",
        )
    cache = _cache_settings(caches, trusted_keys)
    rows = _build_with_nix(
        kernel_dir, config.general.name, list(variants), list(backends),
        max_jobs=max_jobs, cores=cores, print_build_logs=print_build_logs, builders=builders,
        extra_pythons=extra_pythons, toolchain=toolchain, cache=cache,
    )
    if as_json:
        click.echo(json.dumps([
            {"variant": r.name, "status": r.status, "where": r.where, "seconds": r.seconds, "size": r.size,
             "drv": r.drv, "path": str(kernel_dir / "build" / r.name) if r.status in DONE else None}
            for r in rows
        ], indent=2))
    failed = [r.name for r in rows if r.status == "failed"]
    if failed:
        raise BuildError(f"{len(failed)} of {len(rows)} variant(s) failed: {', '.join(failed)}")


DONE = ("built", "fetched", "cached")


def _cache_settings(caches: Sequence[str], trusted_keys: Sequence[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``(cache URLs, public keys)`` from the options; a cache without a key is an error, since
    Nix would refuse every path in it."""
    from kernel_builder.cache import cache_url, read_public_key

    if caches and not trusted_keys:
        raise ConfigError(
            "--cache needs --trusted-key: Nix only substitutes paths signed by a trusted key",
            hint="pass the cache's public key, e.g. --trusted-key keys/team-cache-1.pub (from `kernel-builder cache key`)",
        )
    return tuple(cache_url(c) for c in caches), tuple(read_public_key(k) for k in trusted_keys)


def _check_caches(
    installables: Sequence[str], flake_args: Sequence[str], cache: tuple[tuple[str, ...], tuple[str, ...]], console: Any
) -> tuple[dict[str, str], bool]:
    """Which selected variants the caches serve, and whether they serve the toolchain of the
    others; refuses untrusted variants before anything builds."""
    from kernel_builder.cache import query_caches, refusal

    check, toolchain_cached = query_caches(installables, flake_args, *cache)
    if check.refused:
        raise refusal(check, cache[1])
    if check.fetchable:
        console.print(f"{len(check.fetchable)} of {len(installables)} variant(s) are in the cache: "
                      + ", ".join(sorted(check.fetchable)), highlight=False, markup=False)
    return check.fetchable, toolchain_cached


def _builder_failure(report: Any, jobs: int) -> BuildError:
    """Nix's "unable to start any build" names no machine; say which builder failed and why."""
    lines = "\n".join(f"  {machine}: {why}" for machine, why in dict(report.builder_errors).items())
    return BuildError(
        f"no remote builder could take the build{' (and -j 0 allows no local build)' if jobs == 0 else ''}:\n{lines}",
        hint="check that `ssh $NIX_SSHOPTS USER@HOST nix-store --version` works (port and identity go in "
        "NIX_SSHOPTS; Nix 2.8 builder URIs have no port), that the machine's system matches the variant's, "
        "or allow local builds with -j N",
    )


def _build_local(
    kernel_dir: Path, variants: Sequence[str], backends: Sequence[str], toolchain_python: str | None,
    jobs: int | None, verbose: bool, as_json: bool,
) -> None:
    from kernel_builder.variant_build.local import build_local

    results = build_local(
        kernel_dir, variants=list(variants) or None, backends=list(backends) or None,
        toolchain=toolchain_python, jobs=jobs, verbose=verbose,
    )
    if as_json:
        click.echo(json.dumps([_local_result(r) for r in results], indent=2))


def _local_result(result: Any) -> dict[str, Any]:
    if attrs.has(type(result)):
        return {k: str(v) if isinstance(v, Path) else v for k, v in attrs.asdict(result, recurse=False).items()}
    return {"result": str(result)}


def _build_with_nix(
    kernel_dir: Path, kernel_name: str, variants: list[str], backends: list[str], *, max_jobs: int | None,
    cores: int | None, print_build_logs: bool, builders: str | None, extra_pythons: Sequence[str],
    toolchain: str = "pinned", cache: tuple[tuple[str, ...], tuple[str, ...]] = ((), ()),
) -> list[VariantRow]:
    from rich.console import Console

    from kernel_builder import nix
    from kernel_builder.toolchain import state_dir

    console = Console(stderr=True, soft_wrap=True)
    prepared, table = _prepare(kernel_dir, extra_pythons, console, toolchain)
    ref, flake_args = prepared.ref, prepared.flake_args
    selected, notes = select_variants(table, variants, backends)
    for note in notes:
        console.print(f"skip {note}", highlight=False, markup=False)
    if not selected:
        raise BuildError(
            "no variant of this kernel can be built on this machine",
            hint="the pinned toolchains cover the build sets in nix/toolchain-lock.json; for others use "
            "--toolchain host after `kernel-builder toolchain setup` (or `toolchain discover --python PATH`)",
        )
    auto_jobs, _ = default_jobs(len(selected))
    jobs = auto_jobs if max_jobs is None else max_jobs
    options = nix.NixOptions(
        max_jobs=jobs, cores=cores or max(1, (os.cpu_count() or 1) // max(jobs, 1)), builders=builders,
        sandbox=toolchain == "pinned", substituters=cache[0], trusted_keys=cache[1],
    )
    installables = [f"{ref}#redistributable.{name}" for name in selected]
    fetchable, toolchain_cached = _check_caches(installables, flake_args, cache, console) if cache[0] else ({}, False)
    if toolchain == "pinned":
        from kernel_builder.toolchain.pinned import ensure_fetched, record_pythons

        chosen = [row for row in table if row["name"] in selected]
        if not toolchain_cached:  # else Nix substitutes the toolchain: no artifact is needed here
            ensure_fetched([row["buildSet"] for row in chosen if row["name"] not in fetchable], console)
        record_pythons(chosen)
    console.print(
        f"{len(selected)} variant(s) selected (unique id {prepared.identity.unique_id}), "
        f"nix -j {options.max_jobs} --cores {options.cores}"
        + (f" --builders {builders!r}" if builders else "") + f": {', '.join(selected)}",
        highlight=False, markup=False,
    )
    rows = {name: VariantRow(name) for name in selected}
    suffix = {f"-{kernel_name}-{name}": name for name in selected}

    def row_of(path: str | None) -> VariantRow | None:
        """The row of a variant's .drv or output path."""
        stem = path[: -len(".drv")] if path and path.endswith(".drv") else path
        for end, name in suffix.items():
            if stem and stem.endswith(end):
                return rows[name]
        return None

    gcroot = state_dir() / "gcroots" / kernel_dir.as_posix().strip("/").replace("/", "_") / "result"
    gcroot.parent.mkdir(parents=True, exist_ok=True)
    for old in gcroot.parent.glob("result*"):  # keep only this run's outputs alive
        old.unlink()
    warned: set[str] = set()
    with _Progress(rows, print_build_logs) as progress:

        def on_event(event: Any) -> None:
            if event.kind in ("builder-error", "untrusted"):
                _warn_once(event, warned, console, jobs)
                return
            if event.kind == "substitute":
                row = row_of(event.path)
                if row is not None:
                    row.status, row.where, row.started = "fetching", event.machine, time.monotonic()
                    progress.changed(row, f"fetching {row.name} from {event.machine}")
                return
            row = row_of(event.drv)
            if row is None:
                return
            row.drv = event.drv
            if event.kind == "start":
                row.status, row.started, row.where = "building", time.monotonic(), event.machine or "local"
                progress.changed(row, f"building {row.name}" + (f" on {event.machine}" if event.machine else ""))
            elif event.kind == "log":
                row.log.append(event.text)
                progress.log(row, event.text)
            elif event.kind == "stop" and row.status == "building":
                row.seconds = time.monotonic() - (row.started or time.monotonic())
                row.status = "built"
                where = f" on {row.where}" if row.where != "local" else ""
                progress.changed(row, f"built {row.name}{where} in {row.seconds:.1f}s")
            elif event.kind == "error":
                row.status = "failed"
                progress.changed(row, f"FAILED {row.name}")

        report = nix.build(installables, options, flake_args=flake_args, out_link=str(gcroot), on_event=on_event)
    for drv in report.failed:
        row = row_of(drv)
        if row is not None:
            row.status, row.drv = "failed", drv
    outputs = report.outputs
    if report.returncode != 0:
        survivors = [name for name in selected if rows[name].status != "failed"]
        if len(survivors) == len(selected) and report.builder_errors and not report.built:
            raise _builder_failure(report, jobs)
        if len(survivors) == len(selected):  # nix failed before building anything
            raise BuildError(
                "nix build failed:\n" + "\n".join(report.errors[-20:]),
                hint="command: " + " ".join(report.argv),
            )
        if survivors:
            again = nix.build([f"{ref}#redistributable.{n}" for n in survivors], attrs.evolve(options, keep_going=False),
                              flake_args=flake_args, out_link=str(gcroot))
            outputs = again.outputs
    build_dir = kernel_dir / "build"
    created = not build_dir.exists()
    build_dir.mkdir(exist_ok=True)
    by_drv_name = {Path(drv).name: out for drv, out in outputs.items()}
    for name, row in rows.items():
        if row.status == "failed":
            continue
        out = next((o for d, o in by_drv_name.items() if d.endswith(f"-{kernel_name}-{name}.drv")), None)
        if out is None:
            row.status = "failed"
            continue
        if row.status == "queued":
            row.status, row.where = "cached", "store"
        elif row.status == "fetching":
            row.status = "fetched"
            row.seconds = time.monotonic() - (row.started or time.monotonic())
        target = _copy_variant(Path(out), name, build_dir)
        row.size = _tree_size(target)
    _hash_variants([build_dir / r.name for r in rows.values() if r.status in DONE])
    if created and not any(build_dir.iterdir()):  # every variant failed: leave no empty build/
        build_dir.rmdir()
    console.print(_summary_table(list(rows.values())))
    for row in rows.values():
        if row.status == "failed":
            tail = "\n".join(row.log[-25:]) or "(no log lines captured)"
            console.print(f"[red]{row.name} failed[/red]; last log lines:", highlight=False)
            console.print(tail, highlight=False, markup=False)
            if row.drv:
                console.print(f"full log: nix log {row.drv}", highlight=False, markup=False)
    built = [r.name for r in rows.values() if r.status == "built"]
    fetched = [r.name for r in rows.values() if r.status == "fetched"]
    console.print(f"nix built {len(built)} derivation(s)" + (f", fetched {len(fetched)} from the cache" if fetched else "")
                  + f"; results in {build_dir}", highlight=False, markup=False)
    return list(rows.values())


def _warn_once(event: Any, warned: set[str], console: Any, jobs: int) -> None:
    """One line per unusable builder or cache, not one per derivation."""
    if event.kind == "builder-error":
        if event.machine in warned:
            return
        warned.add(event.machine)
        fallback = "; building on this machine instead" if jobs > 0 else ""
        console.print(f"warning: cannot build on {event.machine}: {event.text}{fallback}",
                      style="yellow", highlight=False, markup=False)
    elif event.machine not in warned:
        warned.add(event.machine)
        console.print(f"warning: {event.machine} has paths not signed by a trusted key; Nix ignores them "
                      "and builds those here", style="yellow", highlight=False, markup=False)
