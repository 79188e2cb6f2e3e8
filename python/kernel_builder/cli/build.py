"""``kernel-builder build``: build variants with Nix (or ``--local``) into DIR/build.

The command reads build.toml once, into a ``flake.kernel.Kernel`` that every step after it
gets (validated before Nix runs), selects the variants to build
(``flake.selection``), hands them to ``flake.flake_build`` and shows what happens: live
progress on stderr, a final table, the log tail of each failed variant. Results go to
stdout only with ``--json``.
"""

from __future__ import annotations

import shlex
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs
import click

from kernel_builder.cli import output
from kernel_builder.errors import BuildError, ConfigError
from kernel_builder.flake.selection import default_jobs, select_variants

__all__ = ["build"]


@click.command("build")
@click.argument("directory", default=".", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--variant", "variants", multiple=True, metavar="NAME", help="Build only this variant (repeatable).")
@click.option("--backend", "backends", multiple=True, metavar="NAME", help="Build only variants of this backend (repeatable).")
@click.option("--system", "systems", multiple=True, metavar="SYSTEM", help="Build only the arch variants of this Nix system (repeatable); aarch64-linux ones are cross-built on x86_64-linux and import-checked under qemu-aarch64.")
@click.option("-j", "--max-jobs", "max_jobs", type=click.IntRange(min=0), help="Derivations built at once on this machine (default: one per CPU; with --toolchain host, whose variants are one derivation each, at most the number of variants; 0 = only on --builders). With the pinned toolchains every translation unit is its own derivation, so one variant uses them all. --local builds one variant at a time.")
@click.option("--cores", type=click.IntRange(min=1), help="Cores each derivation may use (NIX_BUILD_CORES; a variant compiled as one derivation runs this many compile jobs; default: CPUs / jobs; with --local: all CPUs).")
@click.option("-L", "--print-build-logs", "print_build_logs", is_flag=True, help="Stream every variant's build log to stderr.")
@click.option("--local", is_flag=True, help="Skip Nix: build with the torch of this Python (or --toolchain-python).")
@click.option("--toolchain-python", metavar="PATH", help="With --local: the Python whose torch to build against.")
@click.option(
    "--clean",
    is_flag=True,
    help="With --local: start each variant from an empty build directory (by default --local keeps one per "
    "variant and recompiles only what changed).",
)
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
@click.option(
    "--cuda-capabilities",
    "cuda_capabilities",
    metavar="LIST",
    help="Build the CUDA variants only for these of their archs (comma-separated, e.g. 9.0): a faster local "
    "iteration. The variant's metadata records the archs built and the narrowing; `upload` refuses such a tree "
    "unless --force.",
)
@click.option(
    "--layout",
    "build_layout",
    type=click.Choice(["files", "zip"]),
    help="How each variant ships its Python package: files (the variant directory is the package) or zip "
    "(the package is <id>.zip in the variant directory, beside metadata.json and the compiled module; PyPI "
    "kernels >= 0.19 loads it). Default: build.toml's [general] build-layout (edition 6), else files. See docs/build.md.",
)
@click.option(
    "--timings",
    is_flag=True,
    help="Also write DIRECTORY/build/timings.html (one self-contained page) and build/timings.png: every "
    "derivation this build ran (plan, objects, link, variant, checks, tests) as a bar on a time axis, grouped "
    "by variant, derivations several variants share (shared objects) marked, the slowest named. The times are "
    "Nix's own, from its log. The PNG needs Pillow (pip install 'kernel-builder[timings]'). Not with --local. "
    "See docs/build.md.",
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
    cuda_capabilities: str | None = None,
    clean: bool = False,
    systems: tuple[str, ...] = (),
    build_layout: str | None = None,
    timings: bool = False,
) -> list[str] | None:
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
      kernel-builder build examples/relu --system aarch64-linux
      kernel-builder build . --builders 'ssh://builder x86_64-linux - 8'
      NIX_SSHOPTS='-p 2222 -i ~/.ssh/id_builder' kernel-builder build . -j 0 \
          --builders 'ssh://root@builder x86_64-linux /root/.ssh/id_builder 4'
      kernel-builder build . --cache file:///srv/kernel-cache --trusted-key keys/team-cache-1.pub
      kernel-builder build . --local            (incremental: recompiles what changed)
      kernel-builder build . --local --clean    (from an empty build directory)
      kernel-builder build . --layout zip       (each variant's package as <id>.zip)
      kernel-builder build . --timings          (where the time went: build/timings.html)
      nix run .#build-variants -j 2 $(kernel-builder build --print-nix-args)
    """
    from kernel_builder.flake.kernel import Kernel  # lazy: the config reader (tomlkit, cattrs) is not needed for --help

    if clean and not local:
        raise click.UsageError("--clean applies to --local builds only (a Nix build always starts from an empty directory)")
    if timings and local:
        raise click.UsageError("--timings charts the derivations of a Nix build; --local builds without Nix")
    kernel_dir = directory.resolve()
    kernel = Kernel.read(kernel_dir, check_sources=True)  # the one read: every build.toml error, before Nix runs
    build = kernel.build
    _note_stand_ins(build, backends)
    narrow = _capabilities(cuda_capabilities)
    if narrow:
        output.note(f"note: --cuda-capabilities {','.join(narrow)}: the CUDA variants build only these archs; "
                    "`upload` refuses this tree unless --force")
    if local and systems:
        raise ConfigError("--system selects variants of the Nix build; --local builds for this machine only",
                          hint="drop --local to cross-build another system's variants")
    if local:
        if max_jobs is not None and max_jobs > 1:
            output.note(f"note: --local builds one variant at a time; -j {max_jobs} has no effect (--cores sets the compile jobs)")
        _build_local(kernel, variants, backends, toolchain_python, cores, print_build_logs, as_json, narrow, clean,
                     build_layout)
        return
    if print_nix_args:
        from kernel_builder.flake.kernel_flake import prepare_kernel_flake  # lazy: as Kernel

        output.result(shlex.join(prepare_kernel_flake(kernel, list(extra_pythons), toolchain=toolchain, cuda_capabilities=narrow,
                                                      build_layout=build_layout).flake_args))
        return
    if not (kernel_dir / "flake.nix").is_file():
        raise ConfigError(
            f"{kernel_dir / 'flake.nix'} does not exist",
            hint="a kernel flake calls kernel-builder.lib.genKernelFlakeOutputs (`kernel-builder init` writes one), or build with --local",
        )
    from kernel_builder.flake import flake_build  # lazy: nix, the toolchain modules and rich are build-only
    from kernel_builder.flake.cache import cache_settings  # lazy: as flake_build
    from kernel_builder.flake.kernel_flake import check_output_writable  # lazy: as flake_build

    check_output_writable(kernel_dir)

    cache = cache_settings(caches, trusted_keys)
    flake_build.nix.check_builders(builders, 1 if max_jobs is None else max_jobs, caches=bool(caches))
    flake = flake_build.open_kernel_flake(kernel, extra_pythons, toolchain, cuda_capabilities=narrow,
                                          build_layout=build_layout)
    if not flake.table and not _has_variants_here(build):
        # the kernel's build sets are all for other systems (e.g. Metal): not a flake problem
        raise _nothing_buildable(build, [])
    selected, notes = select_variants(flake.table, variants, backends, systems)
    for note in notes:
        output.note(f"skip {note}")
    if not selected:
        raise _nothing_buildable(build, [e for e in flake.table if not backends or e.backend in backends])
    per_object = flake.provider is flake_build.Provider.PINNED  # gen-flake-outputs.nix: isPinned
    jobs = default_jobs(len(selected), per_object=per_object)[0] if max_jobs is None else max_jobs
    options = flake_build.nix_options(jobs, cores, builders, flake.provider, cache)
    recorder = _timings_recorder() if timings else None
    with _Progress(selected, print_build_logs) as progress:
        rows = flake_build.build_variants(
            flake, selected, options, progress, fetch_progress=output.progress_bar("fetch"),
            on_event=recorder.on_event if recorder is not None else None,
        )
    _report(rows, kernel_dir / "build", print_build_logs=print_build_logs)
    if recorder is not None:
        _write_timings(kernel_dir / "build", build.name, recorder, rows)
    if as_json:
        output.result_json([
            {"variant": r.name, "status": r.status.value, "where": r.where, "seconds": r.seconds, "size": r.size,
             "drv": r.drv, "path": str(kernel_dir / "build" / r.name) if r.status in flake_build.DONE else None}
            for r in rows
        ])
    failed = [r.name for r in rows if r.status is flake_build.RowStatus.FAILED]
    if failed:
        raise BuildError(f"{len(failed)} of {len(rows)} variant(s) failed: {', '.join(failed)}")
    return [r.name for r in rows if r.status in flake_build.DONE]  # for build-and-upload: what this run built


def _timings_recorder() -> Any:
    from kernel_builder.flake.timings import Recorder  # lazy: only with --timings

    return Recorder()


def _write_timings(build_dir: Path, kernel: str, recorder: Any, rows: Sequence[Any]) -> None:
    """``build --timings``: the page and the picture of what Nix built (see docs/build.md)."""
    from kernel_builder.flake import timings_page  # lazy: only with --timings

    layout = timings_page.record_layout(kernel, recorder, [(r.name, r.status.value) for r in rows])
    written = timings_page.write(build_dir, layout)
    output.note(f"timings of {len(layout.bars)} derivation(s): " + ", ".join(str(p) for p in written))
    if len(written) == 1:
        output.note("note: no timings.png: Pillow is not installed (pip install 'kernel-builder[timings]')")


def _capabilities(text: str | None) -> tuple[str, ...] | None:
    """``--cuda-capabilities 9.0,10.0`` → ``("9.0", "10.0")``, each checked; ``None`` when not
    given (an empty value is an error: ``checked_capabilities``)."""
    if text is None:
        return None
    from kernel_builder.backends.cuda_archs import checked_capabilities  # lazy: only with --cuda-capabilities

    try:
        return checked_capabilities(text)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--cuda-capabilities") from None


def _note_stand_ins(build: Any, backends: Sequence[str]) -> None:
    """Say once which C++ dependency releases stand in for the ones upstream uses."""
    from kernel_builder.config.cpp_deps import stand_in_notes  # lazy: as Kernel

    chosen = [b for b in build.general.backends if not backends or b.value in backends]
    for text in dict.fromkeys(n for b in chosen for n in stand_in_notes(build, b)):
        output.note(f"note: {text}")


class _Progress:
    """Live table on a terminal, one line per state change otherwise (stderr only).

    The live table starts with the first change, so the transient bar of a toolchain fetch
    (which runs before nix does) never overlaps it: rich allows one live display at a time.
    """

    def __init__(self, selected: Sequence[str], stream_logs: bool) -> None:
        self.selected = selected
        self.rows: dict[str, Any] = {}  # name -> the row, once it changed
        self.stream_logs = stream_logs
        self.live = None
        if output.console().is_terminal and not stream_logs:
            from rich.live import Live  # lazy: rich is loaded on first output only

            self.live = Live(get_renderable=self._render, console=output.console(), refresh_per_second=4, transient=True)

    def _render(self) -> Any:
        from rich.table import Table  # lazy: as Live

        table = Table(box=None, show_header=False, pad_edge=False)
        now = time.monotonic()
        for name in self.selected:
            row = self.rows.get(name)
            if row is None:
                table.add_row(name, "queued", "", "")
                continue
            elapsed = f"{now - row.started:5.0f}s" if row.status.value == "building" and row.started else ""
            table.add_row(row.name, row.state(), row.where or "", elapsed)  # state(): "compiling 3/16" while objects build
        return table

    def __enter__(self) -> _Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.live is not None and self.live.is_started:
            self.live.stop()

    def changed(self, row: Any, line: str) -> None:
        self.rows[row.name] = row
        if self.live is None:
            output.note(line)
        elif not self.live.is_started:
            self.live.start(refresh=True)
        else:
            self.live.refresh()

    def log(self, row: Any, text: str) -> None:
        if self.stream_logs:
            output.note(f"{row.name}> {text}")


def _has_variants_here(build: Any) -> bool:
    """Whether build.toml alone gives the kernel a variant on this system: the flake's
    variant table lists this system's variants only, so an empty table means either that
    flake.nix's torchVersions kept nothing (a flake problem) or that every build set of the
    kernel is for another system (nothing to build here)."""
    from kernel_builder.variants.buildsets import current_system, load_build_sets  # lazy: as flake_build
    from kernel_builder.variants.matrix import matrix  # lazy: as flake_build

    return bool(matrix(build, load_build_sets(), current_system()).variants)


def _nothing_buildable(build: Any, table: Sequence[Any]) -> BuildError:
    """The error when no variant can be built here: why not, and which build sets, on which
    systems, would build the kernel."""
    from kernel_builder.flake.failure import nothing_buildable  # lazy: as flake_build
    from kernel_builder.variants.buildsets import current_system, load_build_sets  # lazy: as flake_build
    from kernel_builder.variants.matrix import matrix  # lazy: as flake_build

    system = current_system()
    elsewhere = [v for v in matrix(build, load_build_sets(), "all").variants if v.bundle and v.system not in (None, system)]
    return nothing_buildable(build.name, system, table, elsewhere)


def _report(rows: Sequence[Any], build_dir: Path, *, print_build_logs: bool) -> None:
    """The final table; for each failed variant its first real error (the warnings counted)
    and where its whole log is; then a last line that says what ``build_dir`` now holds."""
    from rich.table import Table  # lazy: as Live

    from kernel_builder.flake.failure import explain  # lazy: as flake_build

    table = Table(title="kernel-builder build")
    for column in ("variant", "status", "where", "time", "size"):
        table.add_column(column, justify="right" if column in ("time", "size") else "left")
    for row in rows:
        seconds = f"{row.seconds:.1f}s" if row.seconds is not None else "-"
        size = f"{row.size / 1e6:.2f} MB" if row.size is not None else "-"
        style = {"failed": "red", "built": "green", "fetched": "cyan"}.get(row.status.value)
        table.add_row(row.name, row.status.value, row.where or "-", seconds, size, style=style)
    output.console().print(table)
    for row in rows:
        if row.status.value != "failed":
            continue
        if not row.log:
            output.error(f"{row.name} failed without a build log (a dependency of it failed, or Nix did not build it)")
            continue
        failure = explain(row.log)
        counts = ", ".join(f"{n} {what}(s)" for n, what in ((failure.errors, "error"), (failure.warnings, "warning")) if n)
        output.error(f"{row.name}: {failure.kind}" + (f" ({counts} in its log)" if counts else ""))
        output.note("\n".join(f"  {line}" for line in failure.lines))
        if failure.hint:
            output.note(f"  hint: {failure.hint}")
        if row.log_file is not None:
            output.note(f"  whole log ({len(row.log)} lines): {row.log_file}")
        if row.drv:
            output.note(f"  or: nix --extra-experimental-features nix-command log {row.drv}")
        if failure.warnings and not print_build_logs:
            output.note("  (warnings are counted, not shown; -L streams every log line)")
    output.note(_summary_line(rows, build_dir))


def _summary_line(rows: Sequence[Any], build_dir: Path) -> str:
    """What this run did, and where the results are only when there are some."""
    counts: dict[str, int] = {}
    for row in rows:
        counts[row.status.value] = counts.get(row.status.value, 0) + 1
    done = counts.get("built", 0) + counts.get("fetched", 0) + counts.get("cached", 0)
    parts = [f"{counts[s]} {label}" for s, label in
             (("built", "built"), ("fetched", "fetched from a cache"), ("cached", "already in the store"), ("failed", "failed"))
             if counts.get(s)]
    where = f"; results in {build_dir}" if done and build_dir.is_dir() else "; nothing was installed into " + str(build_dir)
    return f"{len(rows)} variant(s): " + ", ".join(parts) + where


def _build_local(
    kernel: Any, variants: Sequence[str], backends: Sequence[str], toolchain_python: str | None,
    cores: int | None, verbose: bool, as_json: bool, narrow: tuple[str, ...] | None = None, clean: bool = False,
    build_layout: str | None = None,
) -> None:
    from kernel_builder.flake.local import build_local  # lazy: as Kernel

    results = build_local(
        kernel, variants=list(variants) or None, backends=list(backends) or None,
        toolchain=toolchain_python, cores=cores, verbose=verbose, cuda_capabilities=narrow, clean=clean,
        build_layout=build_layout,
    )
    if as_json:
        output.result_json([_local_result(r) for r in results])


def _local_result(result: Any) -> dict[str, Any]:
    if attrs.has(type(result)):
        return {k: str(v) if isinstance(v, Path) else v for k, v in attrs.asdict(result, recurse=False).items()}
    return {"result": str(result)}
