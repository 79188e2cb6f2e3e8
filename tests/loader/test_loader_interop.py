"""Interop: a tree published with ``kernel-builder upload`` loads to the same variant with our
``get_kernel`` and with PyPI ``kernels.get_kernel`` (both talking to the local Hub)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from loader_trees import write_variant

from kernel_builder.variants.system import detect_system

SCRIPT = """
import sys
from pathlib import Path
which, repos = sys.argv[1], sys.argv[2:]
if which == "ours":
    from kernel_builder import get_kernel
else:
    from kernels import get_kernel
for repo in repos:
    m = get_kernel(repo, version=1, trust_remote_code=True)
    print("VARIANT", repo, Path(m.__file__).parent.name, m.VARIANT)
"""


def _load(which: str, repos: list[str]) -> dict[str, str]:
    """Load every repo in one process with ``which`` loader; repo -> variant directory name."""
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, which, *repos], capture_output=True, text=True, timeout=180, env=dict(os.environ)
    )
    assert out.returncode == 0, out.stderr
    chosen = {}
    for line in out.stdout.splitlines():
        if line.startswith("VARIANT"):
            _, repo, directory, reported = line.split()
            assert directory == reported
            chosen[repo] = directory
    return chosen


def _upload(kernel_dir: Path, repo: str) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "kernel_builder", "upload", str(kernel_dir), "--repo-id", repo, "--force"],
        capture_output=True, text=True, timeout=180, env=dict(os.environ),
    )
    assert out.returncode == 0, out.stderr


@pytest.mark.timeout(400)
def test_same_variant_as_reference(hub_server, tmp_path: Path) -> None:
    system = detect_system()
    # torch is a test dependency: the probe under test must find it (not a reason to skip).
    assert system.torch_version is not None, "detect_system() found no torch in the test venv"
    major, minor = system.torch_version
    py_major, py_minor = system.python_version
    plat = f"{system.cpu}-{system.os}"
    cases = {
        # stable ABI <= torch wins over everything
        "acme/interop-stable": [
            f"torch-stable-abi{major}{minor - 2}-cpu-{plat}",
            f"torch{major}{minor}-cxx11-cpu-{plat}",
            f"torch{major}{minor}-cpu-{plat}",
            "torch-cpu",
            "torch-universal",
        ],
        # tagless beats tagged; other torch versions and backends rejected
        "acme/interop-torch": [
            f"torch{major}{minor}-cxx11-cpu-{plat}",
            f"torch{major}{minor}-cpu-{plat}",
            f"torch{major}{minor - 1}-cpu-{plat}",
            f"torch{major}{minor}-cu130-{plat}",
            "torch-cuda",
        ],
        # only noarch: backend-specific beats universal
        "acme/interop-noarch": ["torch-universal", "torch-cpu", "torch-rocm"],
        # new-style names (kernels 0.19.1): the newest Python this one runs wins; abi3 before abi3t
        "acme/interop-new": [
            f"torch-{major}.{minor}-cxx11-cpu-cpython-3.9-abi3-{plat}",
            f"torch-{major}.{minor}-cxx11-cpu-cpython-{py_major}.{py_minor}-abi3-{plat}",
            f"torch-{major}.{minor}-cxx11-cpu-cpython-{py_major}.{py_minor + 1}-abi3-{plat}",
            f"torch{major}{minor}-cxx11-cpu-{plat}",
            "torch-cpu",
        ],
    }
    for repo, variants in cases.items():
        kernel = tmp_path / repo.split("/")[1]
        for variant in variants:
            write_variant(kernel / "build", variant, name=repo.split("/")[1])
        _upload(kernel, repo)
    ours, theirs = _load("ours", list(cases)), _load("kernels", list(cases))
    assert ours == theirs
    assert ours == {
        "acme/interop-stable": cases["acme/interop-stable"][0],
        "acme/interop-torch": cases["acme/interop-torch"][1],
        "acme/interop-noarch": "torch-cpu",
        "acme/interop-new": cases["acme/interop-new"][1],
    }
