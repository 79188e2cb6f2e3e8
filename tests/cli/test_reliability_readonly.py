"""Issue 24, finding 5: read-only places give a located error, no traceback.

A read-only kernel directory failed after a successful Nix build (`OSError: [Errno 30]` in
the staging directory); a read-only `KERNEL_BUILDER_STATE_DIR` gave a `FileNotFoundError`
traceback in `build` and an `OSError` traceback in `toolchain fetch`. Read-only here means a
read-only bind mount when running as root (root writes through mode 555), else mode 555.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from nix_support import copy_kernel


@contextlib.contextmanager
def read_only(directory: Path) -> Iterator[Path]:
    """``directory`` made read-only for this process, restored afterwards."""
    if os.geteuid() == 0:
        subprocess.run(["mount", "--bind", "-o", "ro", str(directory), str(directory)], check=True)
        try:
            yield directory
        finally:
            subprocess.run(["umount", str(directory)], check=True)
    else:
        directory.chmod(0o555)
        try:
            yield directory
        finally:
            directory.chmod(0o755)


def _cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kernel_builder", *args], capture_output=True, text=True, env={**os.environ, **env}, timeout=300)


def test_a_read_only_kernel_directory_is_refused_before_nix_builds(tmp_path: Path) -> None:
    kernel = copy_kernel("relu", tmp_path / "k", git=False)
    with read_only(kernel):
        done = _cli("build", str(kernel), env={"KERNEL_BUILDER_STATE_DIR": str(tmp_path / "state")})
    assert done.returncode == 4, done.stderr
    assert f"cannot write the built variants into {kernel / 'build'}: {kernel} is not writable" in done.stderr
    assert "hint:" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "state" / "kernel-sources").exists()  # refused before anything was prepared


def test_a_read_only_build_directory_is_refused(tmp_path: Path) -> None:
    kernel = copy_kernel("relu", tmp_path / "k", git=False)
    (kernel / "build").mkdir()
    with read_only(kernel / "build"):
        done = _cli("build", str(kernel), env={"KERNEL_BUILDER_STATE_DIR": str(tmp_path / "state")})
    assert done.returncode == 4 and f"{kernel / 'build'} is not writable" in done.stderr, done.stderr


def test_a_read_only_state_directory_is_named_with_the_fix(tmp_path: Path) -> None:
    kernel = copy_kernel("relu", tmp_path / "k", git=False)
    state = tmp_path / "state"
    state.mkdir()
    with read_only(state):
        for args in (["build", str(kernel)], ["toolchain", "fetch", "--build-set", "torch2.13-cpu"]):
            done = _cli(*args, env={"KERNEL_BUILDER_STATE_DIR": str(state)})
            assert done.returncode == 3, done.stderr
            assert f"the state directory {state} is not writable" in done.stderr and "KERNEL_BUILDER_STATE_DIR" in done.stderr
            assert "Traceback" not in done.stderr
    # A state directory below a read-only one cannot be made either.
    with read_only(state):
        done = _cli("build", str(kernel), env={"KERNEL_BUILDER_STATE_DIR": str(state / "sub")})
    assert done.returncode == 3 and f"{state / 'sub'} is not writable" in done.stderr, done.stderr


def test_an_unchecked_read_only_place_is_still_a_message(tmp_path: Path) -> None:
    """The safety net in main(): an EROFS/EACCES that no command checked first."""
    out = tmp_path / "out"
    out.mkdir()
    with read_only(out):
        done = _cli("cache", "key", "t-1", "--out", str(out / "keys"), env={})
    assert done.returncode == 1, done.stderr
    assert f"cannot write {out / 'keys'}:" in done.stderr and "hint: " in done.stderr and "Traceback" not in done.stderr
