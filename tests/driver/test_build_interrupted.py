"""Interrupted and failed builds: staging directories and empty build/ trees.

A build killed with SIGKILL cannot clean up, so it leaves ``build/.<variant>.pid<N>.*.tmp``;
``check`` and ``upload`` refuse such a tree, naming the directory and the command that
removes it, and the next build removes it. SIGTERM unwinds the build, which removes its
own staging directory. A build that fails leaves no empty ``build/``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from buildtest_helpers import copy_example

pytestmark = pytest.mark.timeout(300)


def kb(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kernel_builder", *args], capture_output=True, text=True, timeout=240, cwd=cwd)


def staging(build: Path) -> list[Path]:
    return sorted(p for p in build.iterdir() if p.name.startswith(".")) if build.is_dir() else []


def start_build(kernel: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "kernel_builder", "build", "--local", "--backend", "cpu", str(kernel)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )


def wait_for_staging(process: subprocess.Popen[str], build: Path) -> Path:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        found = staging(build)
        if found:
            return found[0]
        assert process.poll() is None, process.communicate()
        time.sleep(0.01)
    raise AssertionError("the build never staged a variant")


@pytest.fixture
def kernel(tmp_path: Path) -> Path:
    return copy_example("silu-and-mul", tmp_path)


def test_sigkill_leaves_staging_that_check_names_and_a_rebuild_removes(kernel: Path) -> None:
    build = kernel / "build"
    process = start_build(kernel)
    staged = wait_for_staging(process, build)
    process.kill()
    process.communicate()
    assert staged.exists() and f".torch-cpu.pid{process.pid}." in staged.name

    checked = kb("check", str(kernel))
    assert checked.returncode == 8 and "Traceback" not in checked.stderr, checked.stderr
    assert "left by an interrupted build" in checked.stderr and f"rm -rf {staged}" in checked.stderr, checked.stderr

    rebuilt = kb("build", "--local", "--backend", "cpu", str(kernel))
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert staging(build) == [] and (build / "torch-cpu" / "metadata.json").is_file()


def test_sigterm_removes_its_own_staging(kernel: Path) -> None:
    build = kernel / "build"
    process = start_build(kernel)
    wait_for_staging(process, build)
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 128 + signal.SIGTERM, err
    assert "Traceback" not in err
    assert staging(build) == []


def test_a_live_builds_staging_is_left_alone(kernel: Path) -> None:
    build = kernel / "build"
    build.mkdir()
    live = build / f".torch-cuda.pid{os.getpid()}.abcdef.tmp"  # this test process is alive
    dead = build / ".torch-cpu.q1w2e3.tmp"  # an older build's name, without a pid: stale
    live.mkdir()
    dead.mkdir()
    done = kb("build", "--local", "--backend", "cpu", str(kernel))
    assert done.returncode == 0, done.stderr
    assert staging(build) == [live]


def test_a_failed_build_leaves_no_empty_build_dir(tmp_path: Path) -> None:
    kernel = copy_example("silu-and-mul-bad-registration", tmp_path)
    done = kb("build", "--local", "--backend", "cpu", str(kernel))
    assert done.returncode == 8 and "Traceback" not in done.stderr, done.stderr
    assert "add_op_namespace_prefix" in done.stderr
    assert not (kernel / "build").exists()
