"""Uploading a chosen set of variants: ``upload --variant`` and ``build-and-upload``, which
publishes only what its build built, never variants build/ holds from older source."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hub_trees import make_kernel, write_variant

REPO = "org/hub-relu"
CPU213 = "torch213-cxx11-cpu-x86_64-linux"


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kernel_builder", *args], capture_output=True, text=True,
        env={**os.environ, "HF_TOKEN": "hf_select_test", **(env or {})}, timeout=900,
    )


def _published_variants(hub_server, repo: str) -> set[str]:
    return {p.split("/")[1] for p in hub_server.files(repo, "v1") if p.startswith("build/")}


def test_upload_variant_uploads_and_checks_only_that_variant(hub_server, tmp_path: Path) -> None:
    root = make_kernel(tmp_path / "relu")
    # the other variant is broken: only the named one is checked, so this does not stop the upload
    (root / "build" / "torch-cuda" / "__init__.py").write_text("# edited after hashing\n")
    done = run_cli("upload", str(root), "--variant", "torch-cpu")
    assert done.returncode == 0, done.stderr
    assert _published_variants(hub_server, REPO) == {"torch-cpu"}


def test_upload_of_a_variant_the_tree_lacks_is_refused_before_any_request(hub_server, tmp_path: Path) -> None:
    root = make_kernel(tmp_path / "relu")
    done = run_cli("upload", str(root), "--variant", "torch-rocm")
    assert done.returncode == 8 and "Traceback" not in done.stderr, done.stderr
    assert "has no built variant torch-rocm" in done.stderr and "it holds: torch-cpu, torch-cuda" in done.stderr
    assert hub_server.requests == []


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_build_and_upload_publishes_only_what_it_built(hub_server, tmp_path: Path) -> None:
    from nix_support import REPO as SOURCE, copy_kernel, snapshot_builder

    kernel = copy_kernel("relu", tmp_path / "relu")
    # a variant left in build/ by an earlier build of older source
    stale = write_variant(kernel / "build", "cpu", factor=7.0, name="relu")
    env = {"KERNEL_BUILDER_STATE_DIR": str(tmp_path / "state"), "KERNEL_BUILDER_ROOT": str(snapshot_builder(tmp_path / "builder")),
           "PYTHONPATH": str(SOURCE / "python")}
    done = run_cli("build-and-upload", str(kernel), "--variant", CPU213, "--repo-id", "org/relu-select", env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"not uploading {stale.name}: {kernel / 'build'} holds them from an earlier build" in done.stderr, done.stderr[-3000:]
    assert _published_variants(hub_server, "org/relu-select") == {CPU213}
    assert stale.is_dir()  # left where it was; `upload` publishes it when asked
    shutil.rmtree(stale)
