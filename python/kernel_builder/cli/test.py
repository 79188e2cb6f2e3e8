"""``kernel-builder test``: run the kernel's tests/ against its built variants in the sandbox.

Thin: selects variants from the flake's table like ``build`` does, has
``flake.kernel_tests`` build the kernel-test runs (showing their progress lines), then
prints each run's summary and, for a variant whose tests failed, crashed or timed out, the
failing (or stopped) tests and pytest's report of them.
"""

from __future__ import annotations

import os
from pathlib import Path

import click

from kernel_builder.cli import output
from kernel_builder.errors import BuildError, CheckError, ConfigError

__all__ = ["test"]

DEFAULT_TEST_TIMEOUT = 600  # the defaults of nix/lib/builders/kernel-tests.nix
DEFAULT_RUN_TIMEOUT = 3600
PROGRESS = "kernel-tests: "  # the prefix of the runner's progress lines in a run's log


@click.command("test")
@click.argument("directory", default=".", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--variant", "variants", multiple=True, metavar="NAME", help="Test only this variant (repeatable).")
@click.option("--backend", "backends", multiple=True, metavar="NAME", help="Test only variants of this backend (repeatable).")
@click.option("-k", "select", metavar="EXPR", help="Run only the tests pytest's -k EXPR selects.")
@click.option("--test-timeout", type=click.IntRange(min=1), metavar="SECONDS",
              help=f"Time limit of each test (default: {DEFAULT_TEST_TIMEOUT}); a test may set its own with @pytest.mark.timeout(N).")
@click.option("--run-timeout", type=click.IntRange(min=1), metavar="SECONDS",
              help=f"Time limit of each variant's whole run (default: {DEFAULT_RUN_TIMEOUT}).")
@click.option("-j", "--max-jobs", "max_jobs", type=click.IntRange(min=1), help="Derivations built at once (default: one per CPU: each translation unit and each test run is its own derivation).")
@click.option("--cores", type=click.IntRange(min=1), help="Cores each derivation may use (NIX_BUILD_CORES; default: 1).")
@click.option("-L", "--print-build-logs", "print_build_logs", is_flag=True, help="Stream build and test logs to stderr.")
@click.option("--json", "as_json", is_flag=True, help="Print the outcome of each variant as JSON on stdout.")
def test(
    directory: Path, variants: tuple[str, ...], backends: tuple[str, ...], select: str | None,
    max_jobs: int | None, cores: int | None, print_build_logs: bool, as_json: bool,
    test_timeout: int | None = None, run_timeout: int | None = None,
) -> None:
    """Run the kernel's tests/ with pytest against each selected variant, in the Nix sandbox.

    \b
    Every bundle variant with a pinned toolchain is tested (like `build`); each run uses the
    variant's torch environment plus pytest, numpy, kernels and the flake's
    pythonCheckInputs (see docs/testing.md). Tests that need a GPU are reported skipped
    where there is none. A failing test fails the command (exit 8) and shows its output;
    so does a run that crashed, exited early or hit a time limit, naming the test it was
    in (a run passes only with pytest's complete JUnit record). A bad -k is a usage error
    (exit 2).
    Examples:
      kernel-builder test examples/relu
      kernel-builder test . --variant torch214-cxx11-cpu-x86_64-linux -k dtype
    """
    from kernel_builder.flake.kernel import Kernel  # lazy: config reader and nix are not needed for --help
    from kernel_builder import nix
    from kernel_builder.flake import flake_build, kernel_tests  # lazy: as Kernel
    from kernel_builder.flake.selection import default_jobs, select_variants  # lazy: as Kernel
    from kernel_builder.variants.buildsets import current_system  # lazy: as Kernel

    kernel_dir = directory.resolve()
    kernel = Kernel.read(kernel_dir, check_sources=True)  # the one read of build.toml
    if not (kernel_dir / "tests").is_dir():
        raise ConfigError(f"{kernel_dir} has no tests/ directory", hint="kernel tests are pytest files under tests/ (`kernel-builder init` writes one)")
    if not _test_files(kernel_dir / "tests"):
        raise ConfigError(f"{kernel_dir / 'tests'} holds no test files (test_*.py or *_test.py), so there is nothing to run",
                          hint="add a pytest file such as tests/test_ops.py (`kernel-builder init` writes one)")
    if not (kernel_dir / "flake.nix").is_file():
        raise ConfigError(f"{kernel_dir / 'flake.nix'} does not exist", hint="`kernel-builder init` writes one")
    limits = {key: value for key, value in (("testTimeout", test_timeout), ("runTimeout", run_timeout)) if value is not None}
    flake = flake_build.open_kernel_flake(kernel, test_select=select, test_limits=limits or None)
    selected, notes = select_variants(flake.table, variants, backends)
    system = current_system()
    system_of = {entry.name: entry.system for entry in flake.table}
    elsewhere = [name for name in selected if system_of[name] not in (None, system)]
    if elsewhere and variants:
        raise ConfigError(f"cross-built for another system, so tested only there: {', '.join(elsewhere)}",
                          hint=f"test this system's variants ({system}), or run `kernel-builder test` on that machine")
    selected = [name for name in selected if name not in elsewhere]
    notes += [f"{name}: built for another system; its tests run there" for name in elsewhere]
    for note in notes:
        output.note(f"skip {note}")
    if not selected:
        raise BuildError("no variant of this kernel can be built (and tested) on this machine")
    jobs = max_jobs or default_jobs(len(selected), per_object=True)[0]  # tests run pinned builds only
    options = nix.NixOptions(max_jobs=jobs, cores=cores or 1, print_build_logs=print_build_logs, sandbox=True, keep_going=True)
    output.note(f"testing {len(selected)} variant(s): {', '.join(selected)}")

    def on_event(event: nix.BuildEvent) -> None:
        if event.kind != "log" or not event.text:
            return
        if print_build_logs:
            output.note(f"{event.target or ''}> {event.text}")
        elif event.text.startswith(PROGRESS) and event.target:
            output.note(f"{event.target.removesuffix('-tests')}: {event.text.removeprefix(PROGRESS)}")

    outcomes = kernel_tests.run_kernel_tests(flake, selected, options, on_event=on_event, fetch_progress=output.progress_bar("fetch"))
    refused = [o for o in outcomes if o.status == "usage-error"]
    if refused and select and "-k" in refused[0].message:
        raise click.UsageError(f"pytest refused -k {select!r}: {refused[0].message}")
    if refused:  # not this command line: the kernel's own pytest configuration
        raise ConfigError(f"pytest refused to run the tests of {refused[0].variant}: {refused[0].message}",
                          hint=f"check the pytest options in the kernel's tests/ (conftest.py, pytest.ini); full output: {refused[0].log}")
    for outcome in outcomes:
        mark = "ok" if outcome.ok else outcome.status.upper() if outcome.status != "failed" else "FAILED"
        output.note(f"{outcome.variant}: {outcome.summary or f'pytest exit {outcome.exit_code}'} [{mark}]")
        for skip in outcome.skipped:
            output.note(f"  skipped {skip.test}: {skip.message}")
        if not outcome.ok:
            for failure in outcome.failures:
                output.note(f"  {outcome.status if failure.test == outcome.stopped_in else 'failed'} {failure.test}: {failure.message}")
            output.note(outcome.failure_output())
    if as_json:
        output.result_json([
            {"variant": o.variant, "status": o.status, "exit_code": o.exit_code, "ok": o.ok, "summary": o.summary,
             "passed": o.passed, "stopped_in": o.stopped_in,
             "counts": o.counts, "failed": [f.test for f in o.failures], "skipped": {s.test: s.message for s in o.skipped},
             "log": str(o.log)}
            for o in outcomes
        ])
    failed = [o for o in outcomes if not o.ok]
    if failed:
        names = "; ".join(f"{o.variant}: {', '.join(f.test for f in o.failures) or o.summary or f'pytest exit {o.exit_code}'}" for o in failed)
        raise CheckError(f"kernel tests failed for {len(failed)} of {len(outcomes)} variant(s): {names}")


def _test_files(tests: Path) -> list[str]:
    """The files pytest collects by default under ``tests`` (links are not followed)."""
    return [name for _, _, names in os.walk(tests) for name in names
            if name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))]
