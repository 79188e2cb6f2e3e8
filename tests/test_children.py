"""Issue 24, finding 7: no child outlives kernel-builder.

`kill PID` (SIGTERM) or SIGINT to the kernel-builder process alone left `nix build` running
with parent 1. Children now run in their own process group; SIGINT/SIGTERM are forwarded to
that group and waited for; a SIGKILLed parent takes its child along (parent-death signal).
These tests use a real parent process and real children (sh, sleep).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

PARENT = """
import sys
from kernel_builder import _children
try:
    _children.run(["sh", "-c", sys.argv[1]])
except _children.Interrupted as exc:
    print(exc, flush=True)
    sys.exit(exc.exit_code)
"""


# The parent signals itself the moment its child exists, inside the spawn: the window in which
# kernel-builder once had no handler yet, so a SIGINT became a KeyboardInterrupt (exit 1, a
# traceback) and the child was never stopped and waited for.
PARENT_SIGNALLED_IN_THE_SPAWN = """
import os, signal, subprocess, sys
from kernel_builder import _children

class SignalledAtSpawn(subprocess.Popen):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        with open(sys.argv[2]) as fifo:  # the child's trap is set once it wrote its pid
            fifo.read()
        os.kill(os.getpid(), int(sys.argv[3]))

_children.subprocess.Popen = SignalledAtSpawn
try:
    _children.run(["sh", "-c", sys.argv[1]])
except _children.Interrupted as exc:
    print(exc, flush=True)
    sys.exit(exc.exit_code)
"""


def _wait_for(path: Path, timeout: float = 20) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().strip():
            return path.read_text().strip()
        time.sleep(0.05)
    raise AssertionError(f"{path} never appeared")


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


def _start(tmp_path: Path, script: str) -> tuple[subprocess.Popen[str], int]:
    parent = subprocess.Popen([sys.executable, "-c", PARENT, script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    child = int(_wait_for(tmp_path / "pid"))
    return parent, child


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_to_the_parent_alone_stops_the_child_and_is_waited_for(tmp_path: Path, sig: signal.Signals) -> None:
    # The child takes a moment to clean up on SIGTERM/SIGINT: the parent must wait for it.
    # The pid is written once the trap is set: a signal before it killed sh outright and left
    # its `sleep 60` (which ignores SIGINT) behind, a 30 s hang seen once in CI.
    script = (f"trap 'sleep 1; echo done > {tmp_path}/cleaned; exit 1' TERM INT; echo $$ > {tmp_path}/pid; "
              "sleep 60 & wait")
    parent, child = _start(tmp_path, script)
    assert os.getpgid(child) == child != os.getpgid(parent.pid)  # its own process group
    os.kill(parent.pid, sig)  # the parent only, as `kill PID` does
    out, err = parent.communicate(timeout=30)
    assert parent.returncode == 128 + sig, err
    assert f"interrupted by {sig.name}" in out
    assert (tmp_path / "cleaned").read_text().strip() == "done"  # the parent waited for the child's cleanup
    assert not _alive(child)
    # Nothing of the child's group survives (the `sleep 60` it started included).
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and any(_pgid(p) == child for p in _pids()):
        time.sleep(0.05)
    assert not any(_pgid(p) == child for p in _pids())


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_in_the_middle_of_the_spawn_is_forwarded_too(tmp_path: Path, sig: signal.Signals) -> None:
    pid_file = tmp_path / "pid"
    os.mkfifo(pid_file)  # the parent's open blocks until the child has set its trap and writes
    script = (f"trap 'sleep 1; echo done > {tmp_path}/cleaned; exit 1' TERM INT; echo $$ > {pid_file}; "
              "sleep 60 & wait")
    parent = subprocess.run([sys.executable, "-c", PARENT_SIGNALLED_IN_THE_SPAWN, script, str(pid_file), str(int(sig))],
                            capture_output=True, text=True, timeout=30, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert parent.returncode == 128 + sig, parent.stderr
    assert f"interrupted by {sig.name}" in parent.stdout
    assert (tmp_path / "cleaned").read_text().strip() == "done"  # stopped, and waited for


def test_a_sigkilled_parent_takes_its_child_along(tmp_path: Path) -> None:
    parent, child = _start(tmp_path, f"echo $$ > {tmp_path}/pid; exec sleep 60")
    os.kill(parent.pid, signal.SIGKILL)
    parent.communicate(timeout=10)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and _alive(child):
        time.sleep(0.05)
    assert not _alive(child)


def _pids() -> list[int]:
    return [int(p) for p in os.listdir("/proc") if p.isdigit()]


def _pgid(pid: int) -> int | None:
    try:
        return os.getpgid(pid) if _alive(pid) else None
    except ProcessLookupError:
        return None
