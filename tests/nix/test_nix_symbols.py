"""A real Nix build of relu's torch 2.13 CPU variant carries symbols.json: written inside
the sandbox by the import check, covered by the digest, and read by PyPI ``kernels``
0.19.1's ``describe-api`` and ours."""

from __future__ import annotations

import json
import os
import subprocess
import sys
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
    kernel_builder("build", str(kernel), "--variant", CPU213, "-j", "1", env=env)
    return kernel


@pytest.mark.timeout(1200)
def test_the_variant_carries_symbols_json_under_its_digest(relu: Path, env: dict[str, str]) -> None:
    variant = relu / "build" / CPU213
    document = json.loads((variant / "symbols.json").read_text())
    assert document["schema_version"] == 1
    assert document["functions"] == [
        {
            "name": "relu",
            "signature": "(x: torch.Tensor, out: Optional[torch.Tensor] = None) -> torch.Tensor",
            "doc": "max(x, 0) computed by this kernel's CPU or CUDA implementation.",
        }
    ]
    assert [layer["name"] for layer in document["layers"]] == ["ReLU"]
    assert document["layers"][0]["signature"] == "(self, x: torch.Tensor) -> torch.Tensor"
    assert document["layers"][0]["attributes"] == {"has_backward": None, "can_torch_compile": None}
    digest = json.loads((variant / "metadata.json").read_text())["digest"]
    assert "symbols.json" in digest["files"]
    # the digest covers it: check passes, and fails once the file is edited
    kernel_builder("check", str(relu), env=env)
    saved = (variant / "symbols.json").read_bytes()
    os.chmod(variant / "symbols.json", 0o644)
    try:
        (variant / "symbols.json").write_bytes(saved.replace(b'"relu"', b'"relu2"'))
        edited = kernel_builder("check", str(relu), env=env, check=False)
        assert edited.returncode != 0 and "symbols.json" in edited.stderr + edited.stdout
    finally:
        (variant / "symbols.json").write_bytes(saved)


@pytest.mark.timeout(600)
def test_kernels_0_19_1_describe_api_prints_it(relu: Path, env: dict[str, str]) -> None:
    kernels = str(Path(sys.executable).parent / "kernels")
    text = subprocess.run([kernels, "describe-api", str(relu)], capture_output=True, text=True, timeout=300)
    assert text.returncode == 0, text.stderr
    assert text.stdout.splitlines()[:5] == [f"Path: {relu}", f"Variant: {CPU213}", "", "Functions:", "  relu"]
    assert "  ReLU  has_backward=unknown  can_torch_compile=unknown" in text.stdout
    theirs = subprocess.run([kernels, "describe-api", str(relu), "--json"], capture_output=True, text=True, timeout=300)
    ours = kernel_builder("describe-api", str(relu), "--json", env=env)
    assert json.loads(ours.stdout) == json.loads(theirs.stdout)
    assert json.loads(ours.stdout)["variant"] == CPU213


@pytest.mark.timeout(1800)
def test_a_cross_built_aarch64_variant_gets_the_same_symbols_from_its_check_under_qemu(
    relu: Path, env: dict[str, str], tmp_path: Path
) -> None:
    cross = "torch213-cxx11-cpu-aarch64-linux"
    kernel = copy_kernel("relu", tmp_path / "relu")
    done = kernel_builder("build", str(kernel), "--variant", cross, "-j", "1", "-L", env=env)
    assert f"{cross}: import check under emulation" in done.stderr
    variant = kernel / "build" / cross
    assert (variant / "symbols.json").read_text() == (relu / "build" / CPU213 / "symbols.json").read_text()
    assert "symbols.json" in json.loads((variant / "metadata.json").read_text())["digest"]["files"]
