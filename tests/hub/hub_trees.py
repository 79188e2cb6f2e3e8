"""Lay out small kernel projects with built noarch variants for the Hub tests.

The variants are pure Python (``torch-cpu``, ``torch-cuda``, ...): ``kernels`` loads the
``torch-cpu`` one on this machine without compiling anything, and its ``relu`` calls
torch, so "the op runs and matches torch" holds for real. Digests are computed here
independently of kernel_builder.tree.digest (SHA-256, base64, metadata.json excluded).
"""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path

__all__ = ["make_kernel", "write_variant", "rehash", "tree_bytes", "NAME"]

NAME = "hub-relu"

INIT_PY = '''"""A tiny noarch ReLU used by the upload tests."""
import torch

from ._ops import ops, add_op_namespace_prefix
from . import layers


def relu(x: torch.Tensor) -> torch.Tensor:
    return torch.clamp(x, min=0)


def scale(x: torch.Tensor, factor: float = {factor}) -> torch.Tensor:
    return x * factor


__all__ = ["relu", "scale", "layers"]
'''

LAYERS_PY = '''import torch
from torch import nn


class ReLU(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.clamp(x, min=0)
'''

OPS_PY = '''import torch

ops = getattr(torch.ops, "{id}")


def add_op_namespace_prefix(name: str) -> str:
    return "{id}::" + name
'''

BUILD_TOML = '''[general]
name = "{name}"
version = {version}
edition = 5
license = "Apache-2.0"
backends = ["cpu", "cuda"]
upstream = "https://github.com/example/relu"
{hub}
[torch-noarch]
'''


def _digest(variant: Path) -> dict[str, str]:
    files = {}
    for path in sorted(variant.rglob("*")):
        rel = path.relative_to(variant).as_posix()
        if path.is_file() and rel not in ("metadata.json",) and "__pycache__" not in rel:
            files[rel] = base64.b64encode(hashlib.sha256(path.read_bytes()).digest()).decode()
    return files


def rehash(variant: Path) -> None:
    """Recompute the digest in ``variant/metadata.json`` after changing files."""
    meta = json.loads((variant / "metadata.json").read_text())
    meta["digest"] = {"algorithm": "sha256", "files": _digest(variant)}
    (variant / "metadata.json").write_text(json.dumps(meta, indent=2) + "\n")


def write_variant(
    build_dir: Path,
    backend: str = "cpu",
    *,
    version: int = 1,
    factor: float = 2.0,
    extra: dict[str, bytes] | None = None,
    dirty: bool = False,
    name: str = NAME,
) -> Path:
    """Write ``build_dir/torch-<backend>/`` with a digest; returns the variant dir."""
    variant = build_dir / f"torch-{backend}"
    variant.mkdir(parents=True, exist_ok=True)
    ops_id = f"_{name.replace('-', '_')}_{backend}_0a1b2c3"
    (variant / "__init__.py").write_text(INIT_PY.format(factor=factor))
    (variant / "_ops.py").write_text(OPS_PY.format(id=ops_id))
    (variant / "layers.py").write_text(LAYERS_PY)
    for rel, data in (extra or {}).items():
        (variant / rel).parent.mkdir(parents=True, exist_ok=True)
        (variant / rel).write_bytes(data)
    meta = {
        "name": name,
        "id": ops_id,
        "version": version,
        "license": "Apache-2.0",
        "python-depends": [],
        "kernel-depends": [],
        "backend": {"type": backend},
        "provenance": {
            "kernel-builder": {"version": "0.1.0"},
            "kernel": {"commit": "ab" * 20, "dirty": dirty},
        },
    }
    (variant / "metadata.json").write_text(json.dumps(meta, indent=2) + "\n")
    rehash(variant)
    return variant


def make_kernel(
    root: Path,
    *,
    repo_id: str | None = "org/hub-relu",
    branch: str | None = None,
    version: int = 1,
    backends: tuple[str, ...] = ("cpu", "cuda"),
    card: str | None = None,
    benchmark: bool = True,
) -> Path:
    """A kernel source directory with build.toml, torch-ext/, benchmarks/ and built variants."""
    root.mkdir(parents=True, exist_ok=True)
    hub = ""
    if repo_id or branch:
        hub = "[general.hub]\n" + (f'repo-id = "{repo_id}"\n' if repo_id else "") + (
            f'branch = "{branch}"\n' if branch else ""
        )
    (root / "build.toml").write_text(BUILD_TOML.format(name=NAME, version=version, hub=hub))
    module = root / "torch-ext" / NAME.replace("-", "_")
    module.mkdir(parents=True, exist_ok=True)
    (module / "__init__.py").write_text(INIT_PY.format(factor=2.0))
    (module / "layers.py").write_text(LAYERS_PY)
    if benchmark:
        (root / "benchmarks").mkdir(exist_ok=True)
        (root / "benchmarks" / "benchmark.py").write_text("print('bench')\n")
    if card is not None:
        (root / "CARD.md").write_text(card)
    for backend in backends:
        write_variant(root / "build", backend, version=version)
    return root


def tree_bytes(build_dir: Path) -> int:
    return sum(p.stat().st_size for p in build_dir.rglob("*") if p.is_file())
