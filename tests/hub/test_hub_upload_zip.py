"""``kernel-builder upload`` of a ZIP-layout tree (``build --layout zip``, a real local build of
examples/silu-and-mul) to the local Hub server; PyPI ``kernels`` 0.19.1 and our loader then
download, verify and run it from there."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = "org/silu-zip"
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "silu-and-mul"

pytestmark = pytest.mark.timeout(600)


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kernel_builder", *args], capture_output=True, text=True,
                          timeout=300, env={**os.environ, "HF_TOKEN": "hf_zip_upload_test"}, check=False)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    kernel = tmp_path_factory.mktemp("silu") / "silu-and-mul"
    shutil.copytree(EXAMPLE, kernel, ignore=shutil.ignore_patterns("build", "__pycache__", "tests"))
    done = cli("build", str(kernel), "--local", "--layout", "zip", "--variant", "torch-cpu", "--variant", "torch-cuda")
    assert done.returncode == 0, done.stderr
    return kernel


LOAD = textwrap.dedent(
    """
    import sys, torch
    if sys.argv[1] == "kernels":
        import kernels
        assert kernels.__version__ == "0.19.1", kernels.__version__
        from kernels import get_kernel
    else:
        from kernel_builder import get_kernel
    kernel = get_kernel(sys.argv[2], version=1, trust_remote_code=True)
    x = torch.randn(3, 8)
    reference = torch.nn.functional.silu(x[..., :4]) * x[..., 4:]
    assert torch.allclose(kernel.silu_and_mul(x), reference), "silu_and_mul differs from torch"
    print(kernel.__file__)
    """
)


def test_upload_zip_tree_then_load_it_from_the_hub(hub_server, built: Path, tmp_path: Path) -> None:
    done = cli("upload", str(built), "--repo-id", REPO)
    assert done.returncode == 0, done.stderr
    files = hub_server.files(REPO, "v1")
    variant = built / "build" / "torch-cpu"
    metadata = json.loads((variant / "metadata.json").read_text())
    archive = f"{metadata['id']}.zip"
    assert sorted(p for p in files if p.startswith("build/torch-cpu/")) == sorted(
        f"build/torch-cpu/{name}" for name in (archive, "metadata.json", "symbols.json")
    )
    assert files[f"build/torch-cpu/{archive}"] == (variant / archive).read_bytes()
    readme = hub_server.files(REPO, "main")["README.md"].decode()
    assert "- `silu_and_mul`" in readme  # the card read the kernel's source
    for loader in ("kernels", "ours"):
        env = {**os.environ, "HF_HOME": str(tmp_path / f"hf-{loader}")}
        env.pop("PYTHONPATH", None)
        run = subprocess.run([sys.executable, "-c", LOAD, loader, REPO], capture_output=True, text=True, timeout=300,
                             env=env, check=False)
        assert run.returncode == 0, f"{loader}:\n{run.stderr}"
        assert run.stdout.strip().endswith(f"/build/torch-cpu/{archive}/__init__.py")


def test_upload_bare_zip_tree_card_reads_the_archive(hub_server, built: Path, tmp_path: Path) -> None:
    bare = tmp_path / "bundle"
    shutil.copytree(built / "build", bare)
    done = cli("upload", str(bare), "--repo-id", "org/bare-zip")
    assert done.returncode == 0, done.stderr
    readme = hub_server.files("org/bare-zip", "main")["README.md"].decode()
    assert "- `silu_and_mul`" in readme  # from __all__ of __init__.py in the first variant's archive


def test_upload_refuses_a_broken_zip_tree(hub_server, built: Path, tmp_path: Path) -> None:
    kernel = tmp_path / "silu-and-mul"
    shutil.copytree(built, kernel)
    variant = kernel / "build" / "torch-cpu"
    (variant / "stray.py").write_text("x = 1\n")
    done = cli("upload", str(kernel), "--repo-id", "org/broken-zip")
    assert done.returncode != 0
    assert "stray.py" in done.stderr and "belong in the archive" in done.stderr
    assert not hub_server.has_repo("org/broken-zip")
