"""Running long child processes (nix, pip, apt) so that none outlives kernel-builder.

A supervisor that stops ``kernel-builder build`` with ``kill PID`` (SIGTERM) or a Ctrl-C
reaches only our process: Python's default SIGTERM ends it at once and its ``nix build``,
reparented to init, goes on compiling, holds the store lock and writes its gcroot later.
So every child runs in its own process group; while one runs, SIGINT and SIGTERM are
forwarded to that whole group (nix and the builders it started) and we wait for it to stop
before reporting ``Interrupted``. A child also gets SIGTERM when kernel-builder dies without
a chance to forward (SIGKILL): Linux's parent-death signal.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator, Sequence
from typing import Any

from kernel_builder.errors import KernelBuilderError

__all__ = ["Interrupted", "forwarding", "popen", "run"]

_FORWARDED = (signal.SIGINT, signal.SIGTERM)
_PR_SET_PDEATHSIG = 1


class Interrupted(KernelBuilderError):
    """kernel-builder got SIGINT or SIGTERM while a child ran; the child was stopped first."""

    def __init__(self, signum: int, argv: Sequence[str]) -> None:
        name = signal.Signals(signum).name
        super().__init__(f"interrupted by {name}: stopped `{' '.join(argv[:3])} ...` and waited for it to exit")
        self.exit_code = 128 + signum


def _die_with_parent() -> None:  # runs in the child between fork and exec
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def popen(argv: Sequence[str], **kwargs: Any) -> subprocess.Popen[Any]:
    """``subprocess.Popen`` in a new process group that dies with us (Linux)."""
    extra: dict[str, Any] = {"start_new_session": True}
    if sys.platform.startswith("linux"):
        extra["preexec_fn"] = _die_with_parent
    return subprocess.Popen(list(argv), **extra, **kwargs)


def _reap_group(pid: int) -> None:
    """Once the child has exited (seen without reaping it), kill what is left of its group:
    a grandchild that ignores the signal would otherwise hold our pipes open and live on."""
    with contextlib.suppress(ChildProcessError, OSError):
        os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


@contextlib.contextmanager
def forwarding(proc: subprocess.Popen[Any]) -> Iterator[list[int]]:
    """While the block runs, SIGINT/SIGTERM go to ``proc``'s process group; the list holds the
    signals received. On exit the previous handlers come back. Off the main thread (where
    Python cannot set handlers) it only yields."""
    received: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield received
        return

    def forward(signum: int, _frame: object) -> None:
        received.append(signum)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signum)
        if len(received) == 1:
            threading.Thread(target=_reap_group, args=(proc.pid,), daemon=True).start()

    previous = {sig: signal.signal(sig, forward) for sig in _FORWARDED}
    try:
        yield received
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def run(argv: Sequence[str], *, cwd: Any = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``subprocess.run(argv, capture_output=True, text=True)`` with the child in its own
    process group; SIGINT/SIGTERM are forwarded, waited for, then raised as ``Interrupted``."""
    proc = popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    with forwarding(proc) as received:
        stdout, stderr = proc.communicate()
    if received:
        raise Interrupted(received[0], list(argv))
    return subprocess.CompletedProcess(list(argv), proc.returncode, stdout, stderr)
