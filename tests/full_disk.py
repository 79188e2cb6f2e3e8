"""A directory whose file system is full after a few KiB, for the "disk full" tests.

As root it is a real tmpfs of that size mounted over the directory: every writer (Python,
shutil, nix) gets ``ENOSPC`` from the kernel. Otherwise the fault is injected at Python's
write layer in the subprocess under test: a ``sitecustomize`` on ``PYTHONPATH`` makes
``open`` for writing under the directory fail with ``ENOSPC`` once the budget is spent.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

__all__ = ["full_disk"]

_HOOK = '''
import builtins, errno, io, os

_ROOT = os.environ["KB_TEST_FULL_DIR"]
_LEFT = [int(os.environ["KB_TEST_FULL_BYTES"])]
_open = io.open


class _Full:
    def __init__(self, f):
        self._f = f

    def write(self, data):
        if len(data) > _LEFT[0]:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        _LEFT[0] -= len(data)
        return self._f.write(data)

    def fileno(self):  # no descriptor: shutil would copy with sendfile, past write()
        raise io.UnsupportedOperation("fileno")

    def __getattr__(self, name):
        return getattr(self._f, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._f.close()


def _guarded(file, mode="r", *args, **kwargs):
    f = _open(file, mode, *args, **kwargs)
    if isinstance(file, (str, bytes, os.PathLike)) and any(m in mode for m in "wax+"):
        if os.path.abspath(os.fsdecode(file)).startswith(_ROOT + os.sep):
            return _Full(f)
    return f


builtins.open = io.open = _guarded
'''


@contextlib.contextmanager
def full_disk(directory: Path, size_kib: int = 256) -> Iterator[dict[str, str]]:
    """Make ``directory`` (created empty) a place with ``size_kib`` KiB of room; yields the
    environment additions a subprocess needs (none as root)."""
    directory.mkdir(parents=True, exist_ok=True)
    if os.geteuid() == 0:
        subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size_kib}k", "tmpfs", str(directory)], check=True)
        try:
            yield {}
        finally:
            subprocess.run(["umount", "-l", str(directory)], check=True)
        return
    hook = directory.parent / f".{directory.name}.hook"
    hook.mkdir(exist_ok=True)
    (hook / "sitecustomize.py").write_text(_HOOK)
    path = os.pathsep.join(p for p in (str(hook), os.environ.get("PYTHONPATH", "")) if p)
    yield {"PYTHONPATH": path, "KB_TEST_FULL_DIR": str(directory.resolve()), "KB_TEST_FULL_BYTES": str(size_kib * 1024)}
