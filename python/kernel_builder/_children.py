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

__all__ = ["Interrupted", "popen", "run", "supervised"]

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


class _Forwarder:
    """The SIGINT/SIGTERM handler: records each signal and sends it on to the child's group.
    A signal that comes before the child exists (in the middle of the spawn) is sent as soon
    as it does; each one is sent once."""

    def __init__(self) -> None:
        self.received: list[int] = []
        self.proc: subprocess.Popen[Any] | None = None
        self._sent = 0

    def __call__(self, signum: int, _frame: object) -> None:
        self.received.append(signum)
        self.send_pending()

    def attach(self, proc: subprocess.Popen[Any]) -> None:
        self.proc = proc
        self.send_pending()

    def send_pending(self) -> None:
        if self.proc is None:
            return
        while self._sent < len(self.received):
            signum = self.received[self._sent]
            self._sent += 1  # before the kill: a handler that runs in between sends only what is left
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signum)
            if self._sent == 1:
                threading.Thread(target=_reap_group, args=(self.proc.pid,), daemon=True).start()


@contextlib.contextmanager
def supervised(argv: Sequence[str], **kwargs: Any) -> Iterator[subprocess.Popen[Any]]:
    """Start ``argv`` as ``popen`` does and yield it; from before the spawn until the block
    ends, SIGINT/SIGTERM go to the child's process group (the handlers are in place first, so
    no signal falls between the spawn and the forwarding). The block should wait for the
    child; then, if a signal came, ``Interrupted`` is raised. The previous handlers come back
    on exit. Off the main thread (where Python cannot set handlers) it only starts the child."""
    if threading.current_thread() is not threading.main_thread():
        yield popen(argv, **kwargs)
        return
    forwarder = _Forwarder()
    previous = {sig: signal.signal(sig, forwarder) for sig in _FORWARDED}
    try:
        proc = popen(argv, **kwargs)
        forwarder.attach(proc)
        yield proc
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if forwarder.received:
        raise Interrupted(forwarder.received[0], list(argv))


def run(argv: Sequence[str], *, cwd: Any = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``subprocess.run(argv, capture_output=True, text=True)`` with the child in its own
    process group; SIGINT/SIGTERM are forwarded, waited for, then raised as ``Interrupted``."""
    with supervised(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                    text=True) as proc:
        stdout, stderr = proc.communicate()
    return subprocess.CompletedProcess(list(argv), proc.returncode, stdout, stderr)
