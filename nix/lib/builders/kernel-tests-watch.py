"""pytest plugin of a kernel-test run (copied in as ``kernel_tests_watch``; see
kernel-tests-runner.py, which reads what it writes).

It writes one JSON line per test start and end to ``$KERNEL_TESTS_PROGRESS``, flushed at
once, so that the runner can show progress and name the test that was running when the
process crashed, exited or hung. It gives every test a time limit
(``$KERNEL_TESTS_TEST_TIMEOUT`` seconds, or the test's ``@pytest.mark.timeout(N)``): a
test still running then fails with a timeout, and the run goes on. A test stuck where
Python cannot interrupt it (native code) is killed by the runner instead.
"""

from __future__ import annotations

import json
import os
import signal
import threading
from typing import IO, Any

import pytest

_out: IO[str] | None = None
_outcomes: dict[str, str] = {}


def _say(event: str, test: str, **extra: Any) -> None:
    global _out
    path = os.environ.get("KERNEL_TESTS_PROGRESS")
    if not path:
        return
    if _out is None:
        _out = open(path, "a", buffering=1, encoding="utf-8")  # noqa: SIM115 - kept open for the session
    _out.write(json.dumps({"event": event, "test": test, **extra}) + "\n")
    _out.flush()


def _limit(item: pytest.Item) -> float:
    marker = item.get_closest_marker("timeout")
    if marker is not None and marker.args:
        return float(marker.args[0])
    return float(os.environ.get("KERNEL_TESTS_TEST_TIMEOUT") or 0)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "timeout(seconds): this test's time limit in `kernel-builder test`")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Any:
    limit = _limit(item)
    _say("start", item.nodeid, limit=limit)
    armed = limit > 0 and threading.current_thread() is threading.main_thread()
    previous = None
    if armed:
        def expired(signum: int, frame: Any) -> None:
            pytest.fail(f"Timeout: {item.nodeid} ran longer than its limit of {limit:g} s", pytrace=False)

        previous = signal.signal(signal.SIGALRM, expired)
        signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        yield
    finally:
        if armed:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
        _say("end", item.nodeid, outcome=_outcomes.pop(item.nodeid, "passed"))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.failed:
        _outcomes[report.nodeid] = "failed" if report.when == "call" else "error"
    elif report.skipped and report.nodeid not in _outcomes:
        _outcomes[report.nodeid] = "skipped"


def pytest_collection_finish(session: pytest.Session) -> None:
    _say("collected", "", count=len(session.items))
