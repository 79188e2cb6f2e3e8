"""An upload stopped during its commit (SIGINT, SIGKILL) never leaves a version branch
without its build/: ``get_kernel(version=N)`` sees either no vN or the whole upload.

The Hub test server holds the commit request until the test has looked at the branches and
stopped the client, so the window is hit every time, not by timing.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import hubserver
from hub_trees import make_kernel

REPO = "org/hub-relu"


def _upload(root: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "kernel_builder", "upload", str(root)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "HF_TOKEN": "hf_interrupt_test"},
    )


@pytest.fixture
def held_commit(monkeypatch: pytest.MonkeyPatch) -> tuple[threading.Event, threading.Event]:
    """(arrived, release): the first commit request waits, before it is applied, until released."""
    arrived, release = threading.Event(), threading.Event()
    route = hubserver._route

    def holding(method: str, segments: list[str]):  # noqa: ANN202 - the server's Route
        found = route(method, segments)
        if found is not None and found[0] == "commit" and not arrived.is_set():
            arrived.set()
            release.wait(120)
        return found

    monkeypatch.setattr(hubserver, "_route", holding)
    yield arrived, release
    release.set()


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGKILL], ids=["SIGINT", "SIGKILL"])
def test_a_stopped_upload_leaves_no_version_branch_without_its_build(hub_server, tmp_path: Path, held_commit, signum: int) -> None:
    arrived, release = held_commit
    root = make_kernel(tmp_path / "relu")
    hub_server.create_repo(REPO)
    proc = _upload(root)
    try:
        assert arrived.wait(120), proc.communicate(timeout=5)
        # The commit is on its way: v1 must not exist yet (it would be a copy of main).
        assert "v1" not in hub_server.branches(REPO)
        proc.send_signal(signum)
        _, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    hub_server.drop_next("commit", after_apply=False)  # the dead client's commit never lands
    release.set()
    branches = hub_server.branches(REPO)
    assert "v1" not in branches
    if signum == signal.SIGINT:
        assert proc.returncode == 130 and "Traceback" not in stderr, stderr
        assert set(branches) == {"main"}  # the interrupted run removed its staging branch
    else:
        assert proc.returncode == -signal.SIGKILL
        (staging,) = set(branches) - {"main"}
        assert staging.startswith("kernel-builder-upload-v1-")

    rerun = subprocess.run(
        [sys.executable, "-m", "kernel_builder", "upload", str(root)],
        capture_output=True, text=True, env={**os.environ, "HF_TOKEN": "hf_interrupt_test"}, timeout=120,
    )
    assert rerun.returncode == 0, rerun.stderr
    assert set(hub_server.branches(REPO)) == {"main", "v1"}  # a killed run's staging branch is gone
    published = {p for p in hub_server.files(REPO, "v1") if p.startswith("build/")}
    local = {f"build/{p.relative_to(root / 'build').as_posix()}" for p in (root / "build").rglob("*") if p.is_file()}
    assert published == local
