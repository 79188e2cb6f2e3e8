"""Shared setup for load_warm.py and load_cold.py: a local Hub server and kernel trees.

The Hub test server lives in tests/hubserver.py (test-only code); benchmarks borrow it.
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from hubserver import HubServer  # noqa: E402

from kernel_builder.tree.digest import compute_digest  # noqa: E402
from kernel_builder.tree.metadata import MetadataBackend, Metadata  # noqa: E402

INIT = '''import torch

from ._ops import OPS_ID


def relu(x: torch.Tensor) -> torch.Tensor:
    return torch.clamp(x, min=0)
'''


def write_variant(build: Path, variant: str, *, payload: int, backend: str = "cpu") -> Path:
    """A variant that imports torch, with a ``payload``-byte binary standing in for the .so."""
    vdir = build / variant
    vdir.mkdir(parents=True, exist_ok=True)
    ops_id = "_bench_" + hashlib.sha1(variant.encode()).hexdigest()[:10]
    (vdir / "__init__.py").write_text(INIT)
    (vdir / "_ops.py").write_text(f"OPS_ID = {ops_id!r}\n")
    (vdir / f"{ops_id}.abi3.so").write_bytes(os.urandom(payload) if payload else b"")
    meta = Metadata(name="bench", id=ops_id, version=1, license="Apache-2.0", backend=MetadataBackend(backend))
    meta.with_digest(compute_digest(vdir)).write(vdir / "metadata.json")
    return vdir


def publish(hub: HubServer, repo_id: str, build: Path) -> str:
    hub.create_repo(repo_id)
    files = {f"build/{p.relative_to(build).as_posix()}": p.read_bytes() for p in sorted(build.rglob("*")) if p.is_file()}
    commit = hub.commit_files(repo_id, files)
    hub.create_branch(repo_id, "v1", start=commit)
    hub.trust_org(repo_id.split("/")[0])
    return commit
