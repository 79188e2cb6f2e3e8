"""A real Nix build of relu's torch 2.13 CPU variant in the ZIP build layout
(``kernel-builder build --layout zip``): assembled inside the derivation, import-checked from
the archive in the sandbox, loaded and run by PyPI ``kernels`` 0.19.1, accepted by ``check``.
The local builds (build.toml's ``build-layout``, bad archives) are
tests/driver/test_build_zip_layout.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from nix_support import copy_kernel, kernel_builder, snapshot_env

pytestmark = pytest.mark.slow

CPU213 = "torch213-cxx11-cpu-x86_64-linux"


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return snapshot_env(tmp_path_factory)


@pytest.fixture(scope="module")
def relu(tmp_path_factory: pytest.TempPathFactory, env: dict[str, str]) -> Path:
    kernel = copy_kernel("relu", tmp_path_factory.mktemp("relu") / "relu")
    kernel_builder("build", str(kernel), "--variant", CPU213, "--layout", "zip", "-j", "1", env=env)
    return kernel


@pytest.mark.timeout(1800)
def test_the_nix_variant_is_the_archive_beside_the_module(relu: Path) -> None:
    variant = relu / "build" / CPU213
    metadata = json.loads((variant / "metadata.json").read_text())
    ops_id = metadata["id"]
    assert metadata["build-layout"] == "zip"
    assert sorted(p.name for p in variant.iterdir()) == sorted(
        [f"{ops_id}.abi3.so", f"{ops_id}.zip", "metadata.json", "symbols.json"]
    )
    assert sorted(metadata["digest"]["files"]) == sorted([f"{ops_id}.abi3.so", f"{ops_id}.zip", "symbols.json"])
    with zipfile.ZipFile(variant / f"{ops_id}.zip") as z:
        infos = z.infolist()
        assert [i.filename for i in infos] == ["__init__.py", "_ops.py", "layers.py"]
        assert f"from . import {ops_id}" in z.read("_ops.py").decode()
    assert {(i.date_time, i.compress_type) for i in infos} == {((1980, 1, 1, 0, 0, 0), zipfile.ZIP_STORED)}
    # the sandbox's import check loaded the archive: symbols.json names the kernel's API
    symbols = json.loads((variant / "symbols.json").read_text())
    assert [f["name"] for f in symbols["functions"]] == ["relu"] and [l["name"] for l in symbols["layers"]] == ["ReLU"]


LOAD = r"""
import sys, torch
from pathlib import Path
import kernels
assert kernels.__version__ == "0.19.1", kernels.__version__
kernel = kernels.get_local_kernel(Path(sys.argv[1]))
x = torch.randn(1000)
assert torch.equal(kernel.relu(x), torch.relu(x)), "relu differs from torch.relu"
print(kernel.__file__)
"""


@pytest.mark.timeout(600)
def test_kernels_0_19_1_loads_and_runs_it(relu: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([sys.executable, "-c", LOAD, str(relu)], capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    (archive,) = (relu / "build" / CPU213).glob("*.zip")
    assert done.stdout.strip().splitlines()[-1] == f"{archive}/__init__.py"


@pytest.mark.timeout(600)
def test_check_accepts_it_with_the_import_check(relu: Path, env: dict[str, str]) -> None:
    done = kernel_builder("check", str(relu), env=env)
    assert f"ok {CPU213}" in done.stdout
    assert "registered ops: _relu_" in done.stderr


@pytest.mark.timeout(1800)
def test_edition_6_build_toml_chooses_zip_under_nix(tmp_path: Path, env: dict[str, str]) -> None:
    """No --layout: the variant derivation reads build.toml's `build-layout = "zip"` itself."""
    kernel = copy_kernel("relu", tmp_path / "relu")
    kernel_builder("update-build", str(kernel), env=env)
    toml = (kernel / "build.toml").read_text()
    assert "edition = 6" in toml
    (kernel / "build.toml").write_text(toml.replace("edition = 6\n", 'edition = 6\nbuild-layout = "zip"\n', 1))
    kernel_builder("build", str(kernel), "--variant", CPU213, "-j", "1", env=env)
    variant = kernel / "build" / CPU213
    metadata = json.loads((variant / "metadata.json").read_text())
    assert metadata["build-layout"] == "zip" and (variant / f"{metadata['id']}.zip").is_file()
    assert not (variant / "__init__.py").exists()


IMPORT_TEST = '''
import torch

import relu


def test_import_gives_the_zip_variant():
    assert relu.__file__.endswith(".zip/__init__.py")
    x = torch.randn(100)
    assert torch.equal(relu.relu(x), torch.relu(x))
'''


@pytest.mark.timeout(1800)
def test_kernel_tests_import_the_zip_variant(tmp_path: Path, env: dict[str, str]) -> None:
    """`kernel-builder test` on a zip-layout kernel: `import relu` in the sandboxed run gives
    the variant (nix/lib/builders/variant-package.py makes the package that runs the archive)."""
    kernel = copy_kernel("relu", tmp_path / "relu")
    kernel_builder("update-build", str(kernel), env=env)
    toml = (kernel / "build.toml").read_text()
    (kernel / "build.toml").write_text(toml.replace("edition = 6\n", 'edition = 6\nbuild-layout = "zip"\n', 1))
    for old in (kernel / "tests").glob("test_*.py"):
        old.unlink()
    (kernel / "tests" / "test_import.py").write_text(IMPORT_TEST)
    done = kernel_builder("test", str(kernel), "--variant", CPU213, "-j", "1", "--json", env=env, check=False)
    assert done.returncode == 0, done.stderr[-4000:]
    (row,) = json.loads(done.stdout)
    assert row["ok"] and row["passed"] == 1 and row["failed"] == []


@pytest.mark.timeout(1800)
def test_build_and_upload_layout_zip_publishes_the_archive(relu: Path, env: dict[str, str], hub_server) -> None:
    """`build-and-upload --layout zip` (the variant is the one `relu` built: Nix has it) uploads
    the zip tree to the local Hub, where kernels 0.19.1 loads and runs it."""
    upload_env = {**env, "HF_ENDPOINT": hub_server.endpoint, "HF_HOME": os.environ["HF_HOME"], "HF_TOKEN": "hf_zip_test"}
    kernel_builder("build-and-upload", str(relu), "--variant", CPU213, "--layout", "zip", "-j", "1",
                   "--repo-id", "acme/relu-zip", env=upload_env)
    variant = relu / "build" / CPU213
    ops_id = json.loads((variant / "metadata.json").read_text())["id"]
    files = hub_server.files("acme/relu-zip", "v1")
    assert files[f"build/{CPU213}/{ops_id}.zip"] == (variant / f"{ops_id}.zip").read_bytes()
    assert f"build/{CPU213}/__init__.py" not in files
    load = ("import torch, kernels\nk = kernels.get_kernel('acme/relu-zip', version=1, trust_remote_code=True)\n"
            "x = torch.randn(100)\nassert torch.equal(k.relu(x), torch.relu(x))\nprint(k.__file__)\n")
    done = subprocess.run([sys.executable, "-c", load], capture_output=True, text=True, timeout=300,
                          env={k: v for k, v in upload_env.items() if k != "PYTHONPATH"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith(f"{ops_id}.zip/__init__.py")
