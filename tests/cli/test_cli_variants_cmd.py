"""kernel-builder variants, run as a real subprocess, beside PyPI ``kernels`` 0.19.1's
``kernels variants`` on the same repos of the local Hub test server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hub_fixture import publish
from kernel_builder.tree.digest import compute_digest
from kernel_builder.tree.metadata import Metadata, MetadataBackend

REPO = "acme/relu-variants"
V1 = ["torch-cpu", "torch213-cxx11-cpu-x86_64-linux", "torch29-cxx11-cu126-x86_64-linux"]
V2 = [*V1, "torch213-cxx11-cpu-aarch64-linux", "torch-cuda"]


def _tree(root: Path, names: list[str]) -> Path:
    for name in names:
        vdir = root / "build" / name
        vdir.mkdir(parents=True)
        (vdir / "__init__.py").write_text("")
        backend = "cuda" if "cu1" in name or name == "torch-cuda" else "cpu"
        meta = Metadata(name="relu", id="_relu_abc", version=1, license="MIT", backend=MetadataBackend(backend))
        meta.with_digest(compute_digest(vdir)).write(vdir / "metadata.json")
    return root


def kb(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kernel_builder", "variants", *args], capture_output=True, text=True, timeout=120)


def reference(*args: str) -> subprocess.CompletedProcess[str]:
    """PyPI kernels 0.19.1's `kernels variants` (the venv's console script)."""
    return subprocess.run(
        [str(Path(sys.executable).parent / "kernels"), "variants", *args],
        capture_output=True, text=True, timeout=120, env={**os.environ},
    )


@pytest.fixture
def hub(hub_server, tmp_path: Path):
    publish(hub_server, REPO, _tree(tmp_path / "v1", V1) / "build", version=1)
    publish(hub_server, REPO, _tree(tmp_path / "v2", V2) / "build", version=2)
    return hub_server


@pytest.mark.parametrize(
    "args",
    [
        (),
        ("--all-versions",),
        ("--version", "1"),
        ("--version", "latest"),
        ("--revision", "main"),
        ("--only-compatible",),
        ("--all-versions", "--only-compatible"),
    ],
)
def test_text_and_json_match_kernels_0_19_1(hub, args: tuple[str, ...]) -> None:
    ours, theirs = kb(REPO, *args), reference(REPO, *args)
    assert ours.returncode == 0 and theirs.returncode == 0, (ours.stderr, theirs.stderr)
    assert ours.stdout == theirs.stdout  # the same lines, rejection reasons word for word
    ours_json, theirs_json = kb(REPO, *args, "--json"), reference(REPO, *args, "--json")
    assert json.loads(ours_json.stdout) == json.loads(theirs_json.stdout)


def test_what_the_decisions_say(hub) -> None:
    data = json.loads(kb(REPO, "--all-versions", "--json").stdout)
    assert data["repo_id"] == REPO
    assert [(r["version"], r["revision"]) for r in data["revisions"]] == [(1, "refs/heads/v1"), (2, "refs/heads/v2")]
    v2 = {v["variant"]: v for v in data["revisions"][1]["variants"]}
    assert set(v2) == set(V2)
    # this machine: torch 2.13 CPU, x86_64 linux
    assert v2["torch213-cxx11-cpu-x86_64-linux"]["preferred"] and v2["torch213-cxx11-cpu-x86_64-linux"]["compatible"]
    assert v2["torch-cpu"]["compatible"] and not v2["torch-cpu"]["preferred"]
    assert not v2["torch213-cxx11-cpu-aarch64-linux"]["compatible"] and "aarch64" in v2["torch213-cxx11-cpu-aarch64-linux"]["reason"]
    only = json.loads(kb(REPO, "--only-compatible", "--json").stdout)["revisions"][0]["variants"]
    assert [v["variant"] for v in only] == ["torch213-cxx11-cpu-x86_64-linux", "torch-cpu"]


def test_errors_are_those_of_kernels_0_19_1(hub, hub_server, tmp_path: Path) -> None:
    out = kb(REPO, "--version", "9")
    assert out.returncode == 7 and "Version 9 not found, available versions: 1, 2" in out.stderr
    assert "Version 9 not found, available versions: 1, 2" in reference(REPO, "--version", "9").stderr
    out = kb(REPO, "--version", "one")
    assert out.returncode == 2 and "version must be an integer or 'latest'" in out.stderr
    hub_server.create_repo("acme/unversioned")
    hub_server.commit_files("acme/unversioned", {"build/torch-cpu/__init__.py": b""})
    out = kb("acme/unversioned")
    assert out.returncode == 7 and "Repository does not support kernel versions: acme/unversioned" in out.stderr
    assert "Repository does not support kernel versions" in reference("acme/unversioned").stderr
    # --all-versions, --version and --revision exclude each other (the reference's argparse says so too)
    out = kb(REPO, "--all-versions", "--revision", "main")
    assert out.returncode == 7 and "Only one of --all-versions, --version or --revision" in out.stderr
    assert reference(REPO, "--all-versions", "--revision", "main").returncode != 0


def test_a_local_tree(tmp_path: Path) -> None:
    root = _tree(tmp_path / "relu", V2)
    out = kb(str(root))
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[:3] == [f"Path {root}:", "", "torch213-cxx11-cpu-x86_64-linux compatible, preferred ✅"]
    assert "torch-cpu compatible ✅" in lines
    data = json.loads(kb(str(root / "build"), "--json", "--only-compatible").stdout)
    assert data == {
        "path": str(root / "build"),
        "variants": [
            {"variant": "torch213-cxx11-cpu-x86_64-linux", "compatible": True, "preferred": True, "reason": None},
            {"variant": "torch-cpu", "compatible": True, "preferred": False, "reason": None},
        ],
    }
    out = kb(str(root), "--version", "1")
    assert out.returncode == 7 and "cannot be used with a local path" in out.stderr
    (tmp_path / "empty").mkdir()
    out = kb(str(tmp_path / "empty"))
    assert out.returncode == 7 and "No build variants found in:" in out.stderr
