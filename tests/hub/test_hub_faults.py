"""Fault injection for ``kernel-builder upload``: broken trees and dropped connections.

Every case runs the real CLI in a subprocess against the Hub test server. A broken tree
must be refused before any request; a dropped connection must end with exit 1, a
``connection lost`` error with a retry hint, no traceback, a branch that either has the
new commit or is unchanged, and a rerun that completes the upload with at most the
missing commits.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hub_trees import make_kernel, rehash, write_variant

REPO = "org/hub-relu"
UPLOAD_TITLE = "Uploaded using `kernel-builder`."


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kernel_builder", "upload", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "HF_TOKEN": "hf_fault_test"},
        timeout=120,
    )


def local_files(build_dir: Path) -> dict[str, bytes]:
    return {
        f"build/{p.relative_to(build_dir).as_posix()}": p.read_bytes()
        for p in sorted(build_dir.rglob("*"))
        if p.is_file()
    }


def build_files(hub_server, branch: str) -> dict[str, bytes]:
    return {k: v for k, v in hub_server.files(REPO, branch).items() if k.startswith("build/")}


# ---------------------------------------------------------------- broken trees (item 4)


def _no_metadata(root: Path) -> str:
    (root / "build" / "torch-xpu").mkdir()
    (root / "build" / "torch-xpu" / "__init__.py").write_text("")
    return "torch-xpu/ has no metadata.json, so it is not a built variant"


def _bad_json(root: Path) -> str:
    (root / "build" / "torch-cuda" / "metadata.json").write_text("{not json")
    return "torch-cuda/metadata.json is not valid JSON"


def _uncovered_symlinked_dir(root: Path) -> str:
    inside = root / "build" / "torch-cpu" / "sub"  # a link out of the variant: tests/hub/test_reliability_tree_links.py
    inside.mkdir()
    (inside / "payload.py").write_text("EVIL = 1\n")
    (root / "build" / "torch-cpu" / "extra").symlink_to("sub")
    rehash(root / "build" / "torch-cpu")  # the digest skips the linked directory
    return "torch-cpu: digest: extra/payload.py would be uploaded but the digest does not cover it"


def _stale_staging(root: Path) -> str:
    staged = root / "build" / ".torch-cpu.pid999999999.abc123.tmp"
    write_variant(root / "build", "cpu").rename(staged)
    write_variant(root / "build", "cpu")
    return f"remove with `rm -rf {staged}`"


@pytest.mark.parametrize("breakage", [_no_metadata, _bad_json, _uncovered_symlinked_dir, _stale_staging])
def test_a_broken_tree_is_refused_before_any_request(hub_server, tmp_path: Path, breakage) -> None:
    root = make_kernel(tmp_path / "relu")
    fragment = breakage(root)
    done = run_cli(str(root))
    assert done.returncode == 8, done.stderr
    assert "Traceback" not in done.stderr and fragment in done.stderr, done.stderr
    assert hub_server.requests == []  # not one request, so nothing was published


# ---------------------------------------------------------------- dropped connections (item 5)


def _prepare(hub_server, root: Path, branch_exists: bool) -> dict[str, str]:
    """Publish v1 first when the branch should exist, then change the build; returns the heads."""
    if branch_exists:
        assert run_cli(str(root)).returncode == 0
        write_variant(root / "build", "cpu", factor=5.0)
    else:
        hub_server.create_repo(REPO)
    hub_server.clear_log()
    return hub_server.branches(REPO)


@pytest.mark.parametrize("branch_exists", [True, False], ids=["existing-branch", "new-branch"])
@pytest.mark.parametrize("after_apply", [False, True], ids=["drop-before-apply", "drop-after-apply"])
def test_a_dropped_commit_leaves_a_whole_state_and_a_rerun_finishes(hub_server, tmp_path: Path, branch_exists: bool, after_apply: bool) -> None:
    root = make_kernel(tmp_path / "relu")
    before = _prepare(hub_server, root, branch_exists)
    hub_server.drop_next("commit", after_apply=after_apply)

    failed = run_cli(str(root))
    assert failed.returncode == 6, failed.stderr
    assert "Traceback" not in failed.stderr, failed.stderr
    assert f"committing to {REPO}@v1" in failed.stderr and "connection lost" in failed.stderr, failed.stderr
    assert "RemoteProtocolError" in failed.stderr and "rerun" in failed.stderr
    heads = hub_server.branches(REPO)
    if after_apply:
        assert "after the commit was applied" in failed.stderr and f"v1 has the new commit {heads['v1'][:12]}" in failed.stderr
        assert build_files(hub_server, "v1") == local_files(root / "build")
    elif branch_exists:
        assert "before the commit was applied; v1 is unchanged" in failed.stderr
        assert heads["v1"] == before["v1"]
    else:
        assert "before the commit was applied; v1 was not created" in failed.stderr
        assert "v1" not in heads  # no copy of main without build/
    assert set(heads) <= {"main", "v1"}  # no staging branch is left either
    assert heads["main"] == before["main"]  # the card commit comes after the version branch

    hub_server.clear_log()
    rerun = run_cli(str(root), "--output-json", "-")
    assert rerun.returncode == 0, rerun.stderr
    assert build_files(hub_server, "v1") == local_files(root / "build")
    assert "README.md" in hub_server.files(REPO, "main")
    commits = [r for r in hub_server.requests if r.endpoint == "commit"]
    # The rerun sends only the missing commits: v1's when it was dropped before apply, and
    # main's card when the first upload never got to it (a new branch: main has no card yet).
    assert len(commits) == (0 if after_apply else 1) + (0 if branch_exists else 1)
    history = hub_server.history(REPO, "v1")
    assert history.count(UPLOAD_TITLE) == (2 if branch_exists else 1)  # never a duplicate commit


@pytest.mark.parametrize("after_apply", [False, True], ids=["drop-before-apply", "drop-after-apply"])
def test_a_dropped_branch_creation_leaves_no_empty_branch(hub_server, tmp_path: Path, after_apply: bool) -> None:
    root = make_kernel(tmp_path / "relu")
    _prepare(hub_server, root, branch_exists=False)
    hub_server.drop_next("create_branch", after_apply=after_apply)
    failed = run_cli(str(root))
    assert failed.returncode == 6 and "Traceback" not in failed.stderr, failed.stderr
    assert "creating the branch v1" in failed.stderr and "connection lost" in failed.stderr
    assert set(hub_server.branches(REPO)) == {"main"}
    assert run_cli(str(root)).returncode == 0
    assert build_files(hub_server, "v1") == local_files(root / "build")


@pytest.mark.parametrize("endpoint", ["preupload", "tree"])
def test_dropped_reads_are_retried(hub_server, tmp_path: Path, endpoint: str) -> None:
    """huggingface_hub retries these idempotent requests itself; the upload goes through."""
    root = make_kernel(tmp_path / "relu")
    hub_server.drop_next(endpoint, after_apply=False)
    done = run_cli(str(root))
    assert done.returncode == 0, done.stderr
    assert "Retry 1/5" in done.stderr
    assert [r.status for r in hub_server.requests if r.endpoint == endpoint][0] == 0  # the drop happened
    assert build_files(hub_server, "v1") == local_files(root / "build")


@pytest.mark.parametrize(("endpoint", "after_apply"), [("create_repo", True), ("create_repo", False), ("refs", False)])
def test_other_dropped_requests_are_clear_errors(hub_server, tmp_path: Path, endpoint: str, after_apply: bool) -> None:
    root = make_kernel(tmp_path / "relu")
    hub_server.drop_next(endpoint, after_apply=after_apply)
    failed = run_cli(str(root))
    assert failed.returncode == 6, failed.stderr
    assert "Traceback" not in failed.stderr and "connection lost" in failed.stderr, failed.stderr
    assert "rerun" in failed.stderr
    rerun = run_cli(str(root))
    assert rerun.returncode == 0, rerun.stderr
    assert build_files(hub_server, "v1") == local_files(root / "build")


def test_dry_run_on_a_missing_repo_calls_every_branch_new(hub_server, tmp_path: Path) -> None:
    root = make_kernel(tmp_path / "relu")
    done = run_cli(str(root), "--dry-run")
    assert done.returncode == 0, done.stderr
    assert "branch main (new branch)" in done.stdout and "branch v1 (new branch)" in done.stdout, done.stdout
    assert "existing branch" not in done.stdout
    assert hub_server.write_requests() == []


def test_a_rerun_after_an_applied_drop_is_a_no_op(hub_server, tmp_path: Path) -> None:
    root = make_kernel(tmp_path / "relu")
    _prepare(hub_server, root, branch_exists=True)
    hub_server.drop_next("commit", after_apply=True)
    assert run_cli(str(root)).returncode == 6
    rerun = run_cli(str(root), "--output-json", "-")
    assert json.loads(rerun.stdout[rerun.stdout.index("{") :])["status"] == "no_changes"  # nothing was missing


@pytest.mark.parametrize("branch", ["../../x", "a..b", "-x", "x/", "a b"])
def test_a_branch_that_is_a_path_is_refused_before_any_request(hub_server, tmp_path: Path, branch: str) -> None:
    root = make_kernel(tmp_path / "relu")
    done = run_cli(str(root), "--branch", branch)
    assert done.returncode == 3 and "Traceback" not in done.stderr, done.stderr
    assert f"invalid branch name {branch!r}" in done.stderr
    assert hub_server.requests == []
