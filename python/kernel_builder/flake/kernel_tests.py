"""Run a kernel's own tests (its ``tests/``) against built variants, in the Nix sandbox.

Each buildable variant has a kernel-test run in the flake (``testRuns.<variant>``, see
nix/lib/builders/kernel-tests.nix): a derivation that builds the variant if needed, runs
pytest against it with the pinned kernel-test packages and records the run
(nix/lib/builders/kernel-tests-runner.py: its status judged by the JUnit record, the test a
crash or a time limit stopped, pytest's capped output). ``run_kernel_tests`` builds the
selected runs in one ``nix build`` and reads those records into ``TestOutcome`` values;
``flake check`` fails on the same records through ``checks.<variant>-tests``.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Sequence
from pathlib import Path

import attrs

from kernel_builder.errors import BuildError, ConfigError
from kernel_builder import nix
from kernel_builder.flake.failure import explain
from kernel_builder.flake.flake_build import KernelFlake
from kernel_builder.flake.variant_table import Provider
from kernel_builder.toolchain.pinned.store import ensure_fetched

__all__ = ["TestOutcome", "parse_outcome", "run_kernel_tests", "OK_EXIT_CODES", "STATUSES"]

# pytest: 0 all passed, 5 no test collected (accepted, as upstream's runner accepts it)
OK_EXIT_CODES = (0, 5)
STATUSES = ("passed", "failed", "crashed", "timed-out", "usage-error", "error")  # the runner's
# pytest's last line, "1 failed, 6 passed, 2 skipped in 3.42s" (not a section title: a run
# that crashed ends with its "test session starts" line)
_SUMMARY = re.compile(r"^=+ (.+ in [0-9.]+s(?: \([0-9:]+\))?) =+$")
_LOG_READ_LIMIT = 8 << 20  # the runner caps the log at 4 MiB; never read more than this
_JUNIT_READ_LIMIT = 64 << 20


@attrs.frozen
class Failure:
    """One failed or erroring test: its JUnit id and the first line of what went wrong."""

    test: str
    message: str


@attrs.frozen
class TestOutcome:
    """What pytest said about one variant."""

    __test__ = False  # not a pytest test class

    variant: str
    exit_code: int
    summary: str  # pytest's last line: "5 passed, 1 skipped in 3.42s", or what stopped the run
    counts: dict[str, int]  # tests, failures, errors, skipped (from the JUnit report)
    failures: tuple[Failure, ...]
    skipped: tuple[Failure, ...]  # skipped tests with their reason
    log: Path
    out: Path
    status: str = "passed"  # one of STATUSES, judged by the runner from the JUnit record
    stopped_in: str | None = None  # the test a crash or a time limit stopped the run in
    message: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "passed"

    @property
    def passed(self) -> int:
        c = self.counts
        return c.get("tests", 0) - c.get("failures", 0) - c.get("errors", 0) - c.get("skipped", 0)

    def failure_output(self, max_lines: int = 200) -> str:
        """pytest's report of the failures (from its FAILURES/ERRORS section on), bounded."""
        lines = _read_bounded(self.log).splitlines()
        start = next((i for i, line in enumerate(lines) if re.match(r"^=+ (FAILURES|ERRORS) =+$", line)), 0)
        part = lines[start:]
        if len(part) > max_lines:
            part = [f"... ({len(part) - max_lines} lines above; full log: {self.log})", *part[-max_lines:]]
        return nix.printable("\n".join(part))


def _read_bounded(path: Path) -> str:
    """A log's text, at most its last ``_LOG_READ_LIMIT`` bytes."""
    with path.open("rb") as f:
        size = f.seek(0, 2)
        f.seek(max(0, size - _LOG_READ_LIMIT))
        return nix.printable(f.read().decode(errors="replace"))  # a test's escape sequences never reach the terminal


def parse_outcome(variant: str, out: Path) -> TestOutcome:
    """A recorded run (``$out/{outcome.json,exit-code,log,junit.xml}``) as a ``TestOutcome``."""
    try:
        exit_code = int((out / "exit-code").read_text().strip())
        record = json.loads((out / "outcome.json").read_text())
        status = str(record["status"])
        log_text = _read_bounded(out / "log")
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise BuildError(f"the kernel-test run of {variant} at {out} has no readable record: {exc}") from None
    if status not in STATUSES:
        raise BuildError(f"the kernel-test run of {variant} at {out} has an unknown status {status!r}")
    stopped_in = nix.printable(str(record["test"])) if status in ("crashed", "timed-out") and record.get("test") else None
    message = nix.printable(str(record.get("message") or ""))
    summary = next((m.group(1) for m in map(_SUMMARY.match, reversed(log_text.splitlines())) if m), "")
    if status in ("crashed", "timed-out", "usage-error", "error"):
        summary = f"{status}: {message}"
    counts: dict[str, int] = {}
    failures: list[Failure] = []
    skipped: list[Failure] = []
    junit = out / "junit.xml"
    if junit.is_file() and junit.stat().st_size <= _JUNIT_READ_LIMIT:
        root = ET.parse(junit).getroot()
        suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
        for suite in suites:
            for key in ("tests", "failures", "errors", "skipped"):
                counts[key] = counts.get(key, 0) + int(suite.get(key, "0"))
            for case in suite.iter("testcase"):
                name = nix.printable(f"{case.get('classname', '')}::{case.get('name', '')}".strip(":"))
                for child in case:
                    first = nix.printable(child.get("message") or child.text or "").strip().splitlines()
                    entry = Failure(name, first[0] if first else "")
                    if child.tag in ("failure", "error"):
                        failures.append(entry)
                    elif child.tag == "skipped":
                        skipped.append(entry)
    if stopped_in is not None:
        failures.append(Failure(stopped_in, message))
    return TestOutcome(variant, exit_code, summary, counts, tuple(failures), tuple(skipped), out / "log", out,
                       status, stopped_in, message)


def run_kernel_tests(
    flake: KernelFlake,
    selected: Sequence[str],
    options: nix.NixOptions,
    *,
    on_event: Callable[[nix.BuildEvent], None] | None = None,
    fetch_progress: Callable[[str, int, int], None] | None = None,
) -> list[TestOutcome]:
    """Build the kernel-test runs of ``selected`` (building their variants as needed) and
    read their records. A variant that fails to build is a ``BuildError`` naming it."""
    if flake.provider is Provider.PINNED:
        ensure_fetched([e.build_set for e in flake.table if e.name in selected], fetch_progress)
    targets = {f"{name}-tests": flake.prepared.installable(f"testRuns.{name}") for name in selected}
    report = nix.build(targets, options, flake_args=flake.prepared.flake_args, on_event=on_event)
    if report.returncode != 0:
        failed = [key.removesuffix("-tests") for key in report.failed] or list(selected)
        if _missing_check_input(report.errors):
            raise ConfigError(
                f"the kernel tests of {', '.join(failed)} could not run:\n" + "\n".join(report.errors[-20:]),
                hint=_hint(report.errors),
            )
        raise _build_failure(failed, report)
    return [parse_outcome(name, Path(report.outputs[f"{name}-tests"])) for name in selected]


def _build_failure(failed: Sequence[str], report: nix.BuildReport) -> BuildError:
    """The variant did not build: its first compile error, as ``build`` shows it, rather
    than Nix's "builder failed" lines."""
    broken = [drv for drv in report.failed_drvs if not drv.endswith("-tests.drv") and report.logs.get(drv)]
    if not broken:
        return BuildError(
            f"the kernel tests of {', '.join(failed)} could not run:\n" + "\n".join(report.errors[-20:]),
            hint=_hint(report.errors),
        )
    failure = explain(report.logs[broken[0]])
    counts = ", ".join(f"{n} {what}(s)" for n, what in ((failure.errors, "error"), (failure.warnings, "warning")) if n)
    lines = "\n".join(f"  {line}" for line in failure.lines)
    return BuildError(
        f"the kernel tests of {', '.join(failed)} could not run: the variant does not build: {failure.kind}"
        + (f" ({counts} in its log)" if counts else "") + f"\n{lines}",
        hint=failure.hint or "`kernel-builder build --variant NAME -L` shows the variant's whole build log",
    )


def _hint(errors: Sequence[str]) -> str:
    """What to do about a failed test run: a check input the pinned set lacks (Nix says
    ``undefined variable 'x'`` for ``with pkgs; [ x ]``) is fixed in the lock."""
    missing = _missing_check_input(errors)
    if missing:
        return (
            f"{missing} is not in the pinned kernel-test package set: add it to requests.python.test in "
            "nix/toolchain-lock.json, then run `kernel-builder toolchain lock` and `kernel-builder toolchain fetch` (docs/testing.md)"
        )
    return "`kernel-builder build --variant NAME -L` shows the variant's build log"


def _missing_check_input(errors: Sequence[str]) -> str | None:
    text = "\n".join(errors)
    missing = re.search(r"undefined variable '([^']+)'", text)
    return missing.group(1) if missing and "CheckInputs" in text else None
