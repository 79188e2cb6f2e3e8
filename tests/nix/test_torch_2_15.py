"""torch 2.15 (PyPI's CUDA 13.2 build), end to end: listed, built in the sandbox from the pinned
toolchains, and loaded by PyPI `kernels` (the pinned 0.19.1) running under torch 2.15.

The bundle is the three newest torch releases (docs/variants.md): 2.13-2.15; torch 2.12 is
still pinned and built when asked for.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from kernel_builder import nix
from kernel_builder.flake.kernel_flake import prepare_kernel_flake
from nix_support import EXAMPLES, PYTHON, copy_kernel, environ_set, kernel_builder, run_with_kernels, snapshot_builder

pytestmark = pytest.mark.slow

CPU215 = "torch215-cxx11-cpu-x86_64-linux"
CU132 = "torch215-cxx11-cu132-x86_64-linux"
STABLE = "torch-stable-abi211-cpu-x86_64-linux"

LOAD = """
import json, torch, kernels
from kernels import get_local_kernel
kernel = get_local_kernel(__import__("pathlib").Path({path!r}), backend="cpu")
x = torch.randn(1031, dtype=torch.float32)
assert torch.equal(kernel.relu(x), torch.relu(x)), "the kernel disagrees with torch.relu"
print(json.dumps({{"torch": torch.__version__, "kernels": kernels.__version__, "module": kernel.__name__}}))
"""


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    pinned = {
        "KERNEL_BUILDER_STATE_DIR": str(tmp_path_factory.mktemp("kb-state")),
        "KERNEL_BUILDER_ROOT": str(snapshot_builder(tmp_path_factory.mktemp("builder"))),
    }
    environ = {k: v for k, v in {**os.environ, **pinned}.items() if k != "PYTHONPATH"}
    with environ_set(pinned):  # for the in-process prepare_kernel_flake
        yield environ


def toolchain_python(kernel: Path, variant: str) -> str:
    """The pinned environment's Python (from the store) that builds and checks ``variant``."""
    prepared = prepare_kernel_flake(kernel)
    table = nix.eval_json(prepared.installable("variantTable"), flake_args=prepared.flake_args)
    return next(row["toolchainPython"] for row in table if row["name"] == variant)


def load(python: str, variant_dir: Path) -> dict[str, str]:
    return json.loads(run_with_kernels(python, LOAD.format(path=str(variant_dir))).strip().splitlines()[-1])


def test_list_variants_bundles_torch_2_13_to_2_15_and_keeps_2_12_on_request(env: dict[str, str]) -> None:
    done = kernel_builder("list-variants", str(EXAMPLES / "relu"), "--json", "--system", "all", env=env)
    rows = {row["name"]: row for row in json.loads(done.stdout)}
    for system in ("x86_64-linux", "aarch64-linux"):
        for name in (f"torch215-cxx11-cpu-{system}", f"torch215-cxx11-cu132-{system}"):
            assert (rows[name]["bundle"], rows[name]["local"], rows[name]["torch"]) == (True, True, "2.15"), name
        for name in (f"torch212-cxx11-cpu-{system}", f"torch212-cxx11-cu130-{system}"):
            assert (rows[name]["bundle"], rows[name]["local"]) == (False, True), name
    # PyPI's torch 2.15 is the CUDA 13.2 build: its other CUDA builds are elsewhere, said in one line
    why = rows["torch215-cxx11-cu130-x86_64-linux"]["why_not_here"]
    assert "https://download.pytorch.org/whl/cu130" in why and "whose torch 2.15 is the CUDA 13.2 build" in why
    assert rows["torch215-cxx11-cu130-x86_64-linux"]["bundle"] is True
    bundle_torch = {row["torch"] for row in rows.values() if row["bundle"] and row["system"] == "x86_64-linux"}
    assert bundle_torch == {"2.13", "2.14", "2.15"}


@pytest.mark.timeout(1800)
def test_relu_torch215_builds_in_the_sandbox_and_loads_with_pypi_kernels(tmp_path: Path, env: dict[str, str]) -> None:
    relu = copy_kernel("relu", tmp_path / "relu")
    done = kernel_builder("build", str(relu), "--json", "-j", "2", "--variant", CPU215, "--variant", CU132, env=env)
    assert {row["variant"]: row["status"] for row in json.loads(done.stdout)} == {CPU215: "built", CU132: "built"}
    assert "not hermetic" not in done.stderr
    cuda = json.loads((relu / "build" / CU132 / "metadata.json").read_text())
    assert cuda["backend"]["type"] == "cuda" and cuda["backend"]["archs"]
    python = toolchain_python(relu, CPU215)
    assert python.startswith("/nix/store/")
    loaded = load(python, relu / "build" / CPU215)
    assert loaded["torch"].startswith("2.15.") and loaded["kernels"] == "0.19.1"
    assert loaded["module"] == json.loads((relu / "build" / CPU215 / "metadata.json").read_text())["id"]


@pytest.mark.timeout(1800)
def test_the_stable_abi_variant_is_built_with_torch_2_15_and_loads_on_2_15_and_2_13(tmp_path: Path, env: dict[str, str]) -> None:
    kernel = copy_kernel("relu-stable-abi", tmp_path / "relu-stable-abi")
    done = kernel_builder("build", str(kernel), "--json", "--variant", STABLE, env=env)
    assert [row["status"] for row in json.loads(done.stdout)] == ["built"]
    variant = kernel / "build" / STABLE
    # Built with the newest torch of the matrix (2.15), loaded there ...
    on_215 = load(toolchain_python(kernel, STABLE), variant)
    assert on_215["torch"].startswith("2.15.")
    # ... and under an older torch of the same stable ABI: this test's own (2.13).
    on_213 = load(PYTHON, variant)
    assert on_213["torch"].startswith("2.13.") and on_213["module"] == on_215["module"]
