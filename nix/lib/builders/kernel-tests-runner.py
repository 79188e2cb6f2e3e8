"""Run pytest for one kernel-test run and record its outcome (kernel-tests-builder.sh calls
this with the variant's toolchain Python; standard library only).

    python kernel-tests-runner.py OUT -- PYTEST-ARGUMENTS...

pytest runs in its own process group with the ``kernel_tests_watch`` plugin, which says
which test runs. Every policy of a run is here, once:

- time: each test has ``$KERNEL_TESTS_TEST_TIMEOUT`` seconds (the plugin fails it then);
  one that does not stop within ``GRACE`` more seconds, or a run past
  ``$KERNEL_TESTS_RUN_TIMEOUT``, is killed with its process group and the test named;
- progress: a ``kernel-tests:`` line on stdout when tests start (at most one a second)
  and while one test runs long, which ``kernel-builder test`` shows;
- output: pytest's output goes to ``OUT/log``, at most ``LOG_HEAD`` bytes from its start
  and ``LOG_TAIL`` from its end, with a line saying how much was left out between;
- judgement: the run passed only if pytest wrote its JUnit record and the record has no
  failure or error; an exit without the record (``os._exit``, a crash) names the test
  that was running.

Writes ``OUT/log``, ``OUT/junit.xml`` (pytest's), ``OUT/exit-code`` (pytest's, or -N
for signal N), ``OUT/outcome.json`` (``status``: passed, failed, crashed, timed-out,
usage-error or error; ``test``; ``message``) and ``OUT/status`` (the status word).
"""

from __future__ import annotations

import collections
import json
import os
import signal
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ET
from pathlib import Path

GRACE = 30.0  # seconds a test may overrun its limit before it is killed (native code ignores the plugin's signal)
LOG_HEAD = 1 << 20
LOG_TAIL = 3 << 20
JUNIT_LIMIT = 64 << 20  # a bigger record is not read (a test's huge exception message)
PROGRESS_EVERY = 1.0
STILL_RUNNING_EVERY = 30.0


class CappedLog:
    """The first ``LOG_HEAD`` bytes written through, the last ``LOG_TAIL`` kept in memory."""

    def __init__(self, path: Path) -> None:
        self.file = path.open("wb")
        self.head = 0
        self.tail: collections.deque[bytes] = collections.deque()
        self.tail_size = 0
        self.dropped = 0

    def write(self, data: bytes) -> None:
        if self.head < LOG_HEAD:
            part = data[: LOG_HEAD - self.head]
            self.file.write(part)
            self.head += len(part)
            data = data[len(part):]
        if data:
            self.tail.append(data)
            self.tail_size += len(data)
            while self.tail_size - len(self.tail[0]) >= LOG_TAIL:
                gone = self.tail.popleft()
                self.tail_size -= len(gone)
                self.dropped += len(gone)

    def close(self) -> None:
        if self.dropped:
            self.file.write(f"\n[kernel-builder: {self.dropped} bytes of test output left out here; "
                            f"the log keeps the first {LOG_HEAD} and the last {LOG_TAIL} bytes]\n".encode())
        for chunk in self.tail:
            self.file.write(chunk)
        self.file.close()


class Progress:
    """What the plugin said so far: the test running now and the counts."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0
        self.partial = b""
        self.running: str | None = None
        self.since = time.monotonic()
        self.limit = 0.0
        self.collected: int | None = None
        self.counts: collections.Counter[str] = collections.Counter()
        self.last_said = 0.0
        self.last_still = 0.0

    def read(self) -> None:
        try:
            with self.path.open("rb") as f:
                f.seek(self.offset)
                data = f.read()
        except FileNotFoundError:
            return
        self.offset += len(data)
        lines = (self.partial + data).split(b"\n")
        self.partial = lines.pop()
        for line in lines:
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if event.get("event") == "collected":
                self.collected = int(event.get("count", 0))
            elif event.get("event") == "start":
                self.running, self.since, self.limit = event["test"], time.monotonic(), float(event.get("limit") or 0)
                self.last_still = self.since
                self._say_start()
            elif event.get("event") == "end":
                self.counts[event.get("outcome", "passed")] += 1
                self.running = None

    def _say_start(self) -> None:
        now = time.monotonic()
        if now - self.last_said >= PROGRESS_EVERY:
            self.last_said = now
            say(f"{self.done_text()}; running {self.running}")

    def done_text(self) -> str:
        done = sum(self.counts.values())
        total = f"/{self.collected}" if self.collected is not None else ""
        parts = ", ".join(f"{n} {k}" for k, n in sorted(self.counts.items()))
        return f"{done}{total} done" + (f" ({parts})" if parts else "")

    def still_running(self) -> None:
        now = time.monotonic()
        if self.running is not None and now - self.last_still >= STILL_RUNNING_EVERY:
            self.last_still = now
            say(f"still running {self.running} after {now - self.since:.0f} s")


def say(text: str) -> None:
    print(f"kernel-tests: {text}", flush=True)


def junit_counts(path: Path) -> dict[str, int] | None:
    """tests/failures/errors/skipped of pytest's JUnit record, or ``None`` when there is none
    that can be read."""
    try:
        if path.stat().st_size > JUNIT_LIMIT:
            return None
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError):
        return None
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    counts = dict.fromkeys(("tests", "failures", "errors", "skipped"), 0)
    for suite in suites:
        for key in counts:
            counts[key] += int(suite.get(key, "0") or 0)
    return counts


def usage_error(log: str) -> str:
    """pytest's reason for refusing its arguments: its ``ERROR:`` line, or argparse's
    ``error:`` line after a usage line, with the ini file that added the options."""
    lines = log.splitlines()
    errors = [line.removeprefix("ERROR:").strip() for line in lines if line.startswith("ERROR:") and not line.startswith("ERROR: usage:")]
    errors += [line.split(": error: ", 1)[1] for line in lines if ": error: " in line]
    ini = next((line.strip() for line in lines if line.strip().startswith("inifile:")), "")
    return "; ".join(errors[:1] + ([ini] if ini and "None" not in ini else [])) or "pytest refused its arguments"


def judge(code: int, killed: str | None, progress: Progress, junit: Path, log_head: bytes) -> dict[str, object]:
    """The outcome record of a finished run (see the module docstring)."""
    running = progress.running
    where = f"during {running}" if running else "outside any test (collection, or between tests)"
    if killed is not None:
        return {"status": "timed-out", "test": running, "message": killed}
    if code < 0:
        name = signal.Signals(-code).name if -code in signal.Signals._value2member_map_ else f"signal {-code}"
        return {"status": "crashed", "test": running, "message": f"the test process was killed by {name} {where}"}
    if code == 4:
        return {"status": "usage-error", "test": None, "message": usage_error(log_head.decode(errors="replace"))}
    counts = junit_counts(junit)
    if counts is None:
        return {"status": "crashed", "test": running,
                "message": f"pytest exited {code} without writing its JUnit record, {where}: "
                           "the test process ended early (os._exit, a crash), so the tests after it did not run"}
    if code in (2, 3):
        return {"status": "error", "test": running, "message": "pytest was interrupted" if code == 2 else "pytest had an internal error"}
    if counts["failures"] or counts["errors"] or code not in (0, 5):
        return {"status": "failed", "test": None, "message": f"{counts['failures']} failed, {counts['errors']} errors"}
    return {"status": "passed", "test": None, "message": "no tests collected" if code == 5 else f"{counts['tests']} tests"}


def main(argv: list[str]) -> int:
    out = Path(argv[1])
    assert argv[2] == "--", argv
    pytest_args = argv[3:]
    test_limit = float(os.environ.get("KERNEL_TESTS_TEST_TIMEOUT") or 0)
    run_limit = float(os.environ.get("KERNEL_TESTS_RUN_TIMEOUT") or 0)
    progress_file = Path(os.environ.get("NIX_BUILD_TOP", str(out))) / "kernel-tests-progress.jsonl"
    progress = Progress(progress_file)
    log = CappedLog(out / "log")
    env = {**os.environ, "KERNEL_TESTS_PROGRESS": str(progress_file)}
    proc = subprocess.Popen([sys.executable, "-m", "pytest", *pytest_args], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, env=env, start_new_session=True)
    assert proc.stdout is not None

    def pump() -> None:
        for chunk in iter(lambda: proc.stdout.read1(1 << 16), b""):
            log.write(chunk)

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    started = time.monotonic()
    killed: str | None = None
    while proc.poll() is None:
        time.sleep(0.2)
        progress.read()
        progress.still_running()
        now = time.monotonic()
        limit = progress.limit or test_limit
        if progress.running and limit and now - progress.since > limit + GRACE:
            killed = (f"{progress.running} did not stop at its time limit of {limit:g} s (stuck where Python "
                      f"cannot interrupt it, e.g. native code); killed after {now - progress.since:.0f} s")
        elif run_limit and now - started > run_limit:
            killed = f"the run exceeded its time limit of {run_limit:g} s" + (f" while {progress.running} ran" if progress.running else "")
        if killed:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()
            break
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # anything the tests left running
    except (ProcessLookupError, PermissionError):
        pass
    reader.join(10)
    progress.read()
    code = proc.returncode
    log.close()
    head = (out / "log").read_bytes()[:LOG_HEAD]
    outcome = {**judge(code, killed, progress, out / "junit.xml", head), "pytest_exit": code}
    if outcome["status"] in ("crashed", "timed-out") and (out / "junit.xml").exists():
        (out / "junit.xml").unlink()  # a partial record must not be read as the run's
    (out / "exit-code").write_text(f"{code}\n")
    (out / "status").write_text(f"{outcome['status']}\n")
    (out / "outcome.json").write_text(json.dumps(outcome) + "\n")
    say(f"{outcome['status']}: {progress.done_text()}" + (f"; {outcome['message']}" if outcome["status"] != "passed" else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
