"""Issue 24, finding 9: a temporary file could be published.

A build killed at the metadata rename left `.metadata.json.XXXX.tmp` in the variant;
`check` refused it, but after `kernel-builder hash` the digest covered it and `upload`
published it. Now digests and uploads never include write_atomic's temporary files, `hash`
removes the ones whose writer is gone, and `check`/`upload` refuse a tree holding one with
the command that removes it, as for a stale staging directory.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from hub_trees import make_kernel
from kernel_builder import _files
from kernel_builder.tree.digest import compute_digest, scan_variant

REPO = "org/hub-relu"


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kernel_builder", *args], capture_output=True, text=True,
                          env={**os.environ, "HF_TOKEN": "hf_tmpfile_test"}, timeout=120)


def _dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def _leftovers(variant: Path) -> list[Path]:
    """What a build killed mid-write leaves: the new-style name and the one before owners were named."""
    meta = (variant / "metadata.json").read_text()
    made = [variant / f".metadata.json.pid{_dead_pid()}.0123456789ab.tmp", variant / ".metadata.json.ba9876543210.tmp"]
    for path in made:
        path.write_text(meta.replace('"version": 1', '"version": 99'))
    return made


def test_hash_removes_them_and_upload_never_publishes_one(hub_server, tmp_path: Path) -> None:
    root = make_kernel(tmp_path / "relu")
    variant = root / "build" / "torch-cpu"
    leftovers = _leftovers(variant)
    checked = _cli("check", str(root))
    assert checked.returncode == 8
    assert "torch-cpu/ holds 2 temporary file(s) left by an interrupted write" in checked.stderr, checked.stderr
    assert "`kernel-builder hash` or a rebuild also removes them" in checked.stderr
    hashed = _cli("hash", str(root))
    assert hashed.returncode == 0, hashed.stderr
    assert not any(p.exists() for p in leftovers)
    digest = json.loads((variant / "metadata.json").read_text())["digest"]["files"]
    assert not any(".tmp" in rel for rel in digest)
    uploaded = _cli("upload", str(root), "--repo-id", REPO)
    assert uploaded.returncode == 0, uploaded.stderr
    assert not any(".tmp" in rel for rel in hub_server.files(REPO, "v1"))


def test_upload_refuses_a_tree_with_one_before_any_request(hub_server, tmp_path: Path) -> None:
    root = make_kernel(tmp_path / "relu")
    _leftovers(root / "build" / "torch-cuda")
    done = _cli("upload", str(root), "--repo-id", REPO)
    assert done.returncode == 8 and "left by an interrupted write" in done.stderr, done.stderr
    assert hub_server.requests == []


def test_a_live_writers_temporary_file_is_never_content(tmp_path: Path) -> None:
    """While another process writes metadata.json, hashing or scanning the variant skips its
    temporary file (and leaves it alone)."""
    variant = make_kernel(tmp_path / "relu") / "build" / "torch-cpu"
    live = variant / f".metadata.json.pid{os.getpid()}.aaaaaaaaaaaa.tmp"
    live.write_text("{}")
    assert _files.is_temporary(live.name) and _files.temporary_owner(live.name) == os.getpid()
    assert live.name not in compute_digest(variant).files
    assert all(f.relpath != live.name for f in scan_variant(variant).files)
    assert _cli("hash", str(variant.parent.parent)).returncode == 0 and live.exists()
    assert not _files.is_temporary("metadata.json") and not _files.is_temporary(".hidden.tmp")
