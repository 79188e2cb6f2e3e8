"""kernel-builder describe-api, run as a real subprocess, beside PyPI ``kernels`` 0.19.1's
``kernels describe-api`` on the same trees (local and on the local Hub test server)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hub_fixture import publish
from kernel_builder.tree import symbols
from kernel_builder.tree.digest import compute_digest
from kernel_builder.tree.metadata import Metadata, MetadataBackend

REPO = "acme/relu-api"
DOCUMENT = {
    "schema_version": 1,
    "functions": [{"name": "relu", "signature": "(x: torch.Tensor) -> torch.Tensor", "doc": "max(x, 0)."}],
    "layers": [
        {
            "name": "ReLU",
            "signature": "(self, x: torch.Tensor) -> torch.Tensor",
            "doc": None,
            "attributes": {"has_backward": None, "can_torch_compile": True},
        }
    ],
}


def _variant(build: Path, name: str, document: dict | None = DOCUMENT) -> Path:
    vdir = build / name
    vdir.mkdir(parents=True)
    (vdir / "__init__.py").write_text("def relu(x):\n    return x\n")
    (vdir / "_ops.py").write_text("ops = None\n")
    if document is not None:
        (vdir / symbols.FILE_NAME).write_text(symbols.dumps(document))
    meta = Metadata(name="relu-api", id="_relu_api_cpu_abc", version=1, license="MIT", backend=MetadataBackend("cpu"))
    meta.with_digest(compute_digest(vdir)).write(vdir / "metadata.json")
    return vdir


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "relu"
    _variant(root / "build", "torch-cpu")
    return root


def kb(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kernel_builder", *args], capture_output=True, text=True, timeout=120)


def reference(*args: str) -> subprocess.CompletedProcess[str]:
    """PyPI kernels 0.19.1's `kernels describe-api` (the venv's console script)."""
    return subprocess.run(
        [str(Path(sys.executable).parent / "kernels"), "describe-api", *args],
        capture_output=True, text=True, timeout=120, env={**os.environ},
    )


def _without_signatures(text: str) -> str:
    """Our text with each function's signature taken off: what 0.19.1 prints."""
    return "\n".join(line.split("(", 1)[0] if line.startswith("  ") and "(" in line else line for line in text.splitlines())


def test_local_text_and_json_match_kernels_0_19_1(tree: Path) -> None:
    ours = kb("describe-api", str(tree))
    theirs = reference(str(tree))
    assert ours.returncode == 0 and theirs.returncode == 0, (ours.stderr, theirs.stderr)
    assert ours.stdout.splitlines() == [
        f"Path: {tree}",
        "Variant: torch-cpu",
        "",
        "Functions:",
        "  relu(x: torch.Tensor) -> torch.Tensor",
        "",
        "Layers:",
        "  ReLU  has_backward=unknown  can_torch_compile=True",
    ]
    assert _without_signatures(ours.stdout) == theirs.stdout.rstrip("\n")
    data = json.loads(kb("describe-api", str(tree), "--json").stdout)
    assert data == json.loads(reference(str(tree), "--json").stdout)
    assert data == {**DOCUMENT, "path": str(tree), "variant": "torch-cpu"}


def test_a_variant_directory_is_described_too(tree: Path) -> None:
    variant = tree / "build" / "torch-cpu"
    data = json.loads(kb("describe-api", str(variant), "--json").stdout)
    assert data["variant"] == "torch-cpu" and data["functions"][0]["name"] == "relu"


def test_no_symbols_json_and_a_broken_one_are_errors(tmp_path: Path) -> None:
    old = tmp_path / "old"
    _variant(old / "build", "torch-cpu", document=None)
    out = kb("describe-api", str(old))
    assert out.returncode == 7
    assert f"No symbols.json found in {old} (variant: torch-cpu)" in out.stderr
    assert "import check writes symbols.json" in out.stderr
    assert reference(str(old)).returncode == 1  # the reference refuses it too
    broken = tmp_path / "broken"
    _variant(broken / "build", "torch-cpu", document={"schema_version": 1, "functions": [], "layers": [{"name": "L"}]})
    out = kb("describe-api", str(broken))
    assert out.returncode == 8 and "layers[0].attributes: expected an object" in out.stderr


def test_local_path_with_a_version_is_refused(tree: Path) -> None:
    out = kb("describe-api", str(tree), "--version", "1")
    assert out.returncode == 7 and "cannot be used with a local path" in out.stderr
    out = kb("describe-api", "./no-such-dir")
    assert out.returncode == 7 and "Not a local kernel directory: ./no-such-dir" in out.stderr


def test_hub_latest_version_and_revision_match_kernels_0_19_1(hub_server, tree: Path, tmp_path: Path) -> None:
    publish(hub_server, REPO, tree / "build", version=1)
    newer = tmp_path / "v2"
    document = {**DOCUMENT, "functions": [*DOCUMENT["functions"], {"name": "relu6", "signature": "(x)", "doc": None}]}
    _variant(newer / "build", "torch-cpu", document=document)
    publish(hub_server, REPO, newer / "build", version=2)

    data = json.loads(kb("describe-api", REPO, "--json").stdout)
    assert data == json.loads(reference(REPO, "--json").stdout)
    assert data["revision"] == "v2" and [f["name"] for f in data["functions"]] == ["relu", "relu6"]
    out = kb("describe-api", REPO, "--version", "1")
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[:3] == [f"Repository: {REPO}", "Revision: v1", "Variant: torch-cpu"]
    assert _without_signatures(out.stdout) == reference(REPO, "--version", "1").stdout.rstrip("\n")
    data = json.loads(kb("describe-api", REPO, "--revision", "main", "--json").stdout)
    assert data == json.loads(reference(REPO, "--revision", "main", "--json").stdout)
    out = kb("describe-api", REPO, "--version", "1", "--revision", "main")
    assert out.returncode == 7 and "Only one of --revision or --version" in out.stderr


def test_hub_variant_without_symbols_json(hub_server, tmp_path: Path) -> None:
    old = tmp_path / "old"
    _variant(old / "build", "torch-cpu", document=None)
    publish(hub_server, "acme/old-api", old / "build", version=1)
    out = kb("describe-api", "acme/old-api")
    assert out.returncode == 7
    assert "No symbols.json found in acme/old-api (version: 1, revision: v1) (variant: torch-cpu)" in out.stderr


def test_hub_kernel_of_an_untrusted_publisher_needs_trust_remote_code(hub_server, tree: Path) -> None:
    publish(hub_server, "evil/relu-api", tree / "build", version=1, trusted=False)
    out = kb("describe-api", "evil/relu-api")
    assert out.returncode == 7 and "Kernel repository 'evil/relu-api' is not from a trusted publisher." in out.stderr
    assert reference("evil/relu-api").returncode == 1  # the reference refuses it too
    data = json.loads(kb("describe-api", "evil/relu-api", "--trust-remote-code", "--json").stdout)
    assert data == json.loads(reference("evil/relu-api", "--trust-remote-code", "--json").stdout)
