"""Issue 45, findings 18 and 24: a full disk under build/ or the state directory.

`build` into a full file system ended in a `shutil.Error` traceback and left a read-only
staging directory in build/; a full state directory said "No space left on device" with no
path and a hint about `nix-store --gc`, which frees another disk. Both places are real
small tmpfs mounts as root (`full_disk`).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from full_disk import full_disk
from nix_support import REPO, copy_kernel, snapshot_builder

CPU213 = "torch213-cxx11-cpu-x86_64-linux"


def _cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k not in ("KERNEL_BUILDER_STATE_DIR", "XDG_STATE_HOME")}
    return subprocess.run([sys.executable, "-m", "kernel_builder", *args], capture_output=True, text=True,
                          env={**base, "PYTHONPATH": str(REPO / "python"), **env}, timeout=900)


def test_a_full_state_directory_is_named_with_what_frees_it(tmp_path: Path) -> None:
    kernel = copy_kernel("relu", tmp_path / "k", git=False)
    full = tmp_path / "full"
    with full_disk(full, size_kib=256) as extra:
        state = full / "state"
        done = _cli("build", str(kernel), "--variant", CPU213, env={"KERNEL_BUILDER_STATE_DIR": str(state), **extra})
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert f"the state directory {state}: No space left on device" in done.stderr, done.stderr
    assert f"hint: free space on the file system holding {state}" in done.stderr
    assert "set KERNEL_BUILDER_STATE_DIR to a directory on another file system" in done.stderr
    assert "nix-store --gc" not in done.stderr  # the store is on another file system: gc would not help


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_a_build_into_a_full_file_system_is_a_located_error_and_leaves_no_staging(tmp_path: Path) -> None:
    kernel = copy_kernel("relu", tmp_path / "k", git=False)
    env = {"KERNEL_BUILDER_STATE_DIR": str(tmp_path / "state"), "KERNEL_BUILDER_ROOT": str(snapshot_builder(tmp_path / "builder"))}
    build_dir = kernel / "build"
    with full_disk(build_dir, size_kib=32) as extra:  # a relu CPU variant is about 70 KiB
        done = _cli("build", str(kernel), "--variant", CPU213, env={**env, **extra})
        left = sorted(p.name for p in build_dir.iterdir())
    assert done.returncode == 4 and "Traceback" not in done.stderr, done.stderr[-3000:]
    assert f"cannot install {CPU213} into {build_dir}: No space left on device (writing {build_dir}/.{CPU213}.pid" in done.stderr, done.stderr[-3000:]
    assert f"hint: free space on the file system holding {build_dir}" in done.stderr
    assert "the variant stays built in the Nix store" in done.stderr
    assert left == []  # no staging directory, read-only or not, and no half variant
