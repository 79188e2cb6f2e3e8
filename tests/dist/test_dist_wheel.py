"""A wheel built from python/ works without a checkout (issue: non-editable installs).

Builds the wheel with ``pip wheel ./python``, installs it (not editable) into a fresh venv
without system site-packages, and from a directory outside the checkout validates, lists,
builds with ``--local`` and builds through Nix (pinned toolchain) a copy of examples/relu;
after each build the installed package loads the variant it built and runs its op.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CPU213 = "torch213-cxx11-cpu-x86_64-linux"

pytestmark = pytest.mark.slow


def run(argv: list[str], *, cwd: Path, env: dict[str, str] | None = None, timeout: int = 1200) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=False, timeout=timeout)
    if done.returncode != 0:
        raise AssertionError(f"{' '.join(map(str, argv))} failed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-6000:]}")
    return done


LOAD = """
import sys
import torch
from kernel_builder import get_local_kernel

relu = get_local_kernel(sys.argv[1])
x = torch.randn(1024)
assert torch.equal(relu.relu(x), torch.relu(x)), "the built op does not compute relu"
print(relu.__file__)
"""


def _loads_and_runs(installed: Path, variant: Path, *, cwd: Path, env: dict[str, str]) -> None:
    """The installed wheel's loader imports the variant just built, checking its digest, and
    its op computes relu."""
    done = run([str(installed / "python"), "-c", LOAD, str(variant)], cwd=cwd, env=env)
    assert Path(done.stdout.strip().splitlines()[-1]).parent == variant, done.stdout


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out), str(REPO / "python")], cwd=REPO)
    (built,) = out.glob("kernel_builder-*.whl")
    return built


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """bin/ of a fresh venv holding the wheel, its dependencies, cmake and ninja."""
    venv = tmp_path_factory.mktemp("venv") / "v"
    run([sys.executable, "-m", "venv", "--without-pip", str(venv)], cwd=venv.parent)
    # pip from this venv, pointed at the new one: no bootstrap download.
    run(
        [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "-q",
         "--find-links", str(wheel.parent), "kernel-builder", "torch==2.13.0", "cmake>=3.26", "ninja"],
        cwd=venv.parent,
    )
    return venv / "bin"


def test_the_wheel_carries_the_build_sets_lock_and_nix_library(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    for rel in ("flake.nix", "nix/build-sets.json", "nix/toolchain-lock.json", "nix/lib/default.nix", "nix/toolchains/pinned.nix"):
        assert f"kernel_builder/_flake/{rel}" in names
    assert "kernel_builder/driver/templates/CMakeLists.txt.j2" in names


def test_validate_list_and_build_outside_the_checkout(installed: Path, tmp_path: Path) -> None:
    work = tmp_path / "outside"
    kernel = work / "relu"
    shutil.copytree(REPO / "examples" / "relu", kernel, ignore=shutil.ignore_patterns("build", "__pycache__", "result*"))
    # A flake naming no local checkout: `build` overrides the input with the installed package.
    (kernel / "flake.nix").write_text(
        '{\n  inputs.kernel-builder.url = "git+https://github.com/huggingface/kernel-builder";\n'
        "  outputs = { self, kernel-builder }:\n"
        "    kernel-builder.lib.genKernelFlakeOutputs { inherit self; path = ./.; };\n}\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KERNEL_BUILDER_", "PYTHON")) and k != "VIRTUAL_ENV"}
    env["KERNEL_BUILDER_STATE_DIR"] = str(tmp_path / "state")
    env["PATH"] = f"{installed}:{env.get('PATH', '')}"
    cli = str(installed / "kernel-builder")

    site = run([str(installed / "python"), "-c", "import kernel_builder, sys; print(kernel_builder.__file__); print(sys.prefix)"], cwd=work, env=env)
    assert not site.stdout.startswith(str(REPO)), site.stdout

    run([cli, "check-config", "relu"], cwd=work, env=env)
    listed = json.loads(run([cli, "list-variants", "--system", "x86_64-linux", "--json", "relu"], cwd=work, env=env).stdout)
    assert CPU213 in [row["name"] for row in listed]

    run([cli, "build", "--local", "--variant", CPU213, "relu"], cwd=work, env=env)
    local_meta = json.loads((kernel / "build" / CPU213 / "metadata.json").read_text())
    _loads_and_runs(installed, kernel / "build" / CPU213, cwd=work, env=env)
    shutil.rmtree(kernel / "build")

    run([cli, "build", "--variant", CPU213, "relu"], cwd=work, env=env)
    nix_meta = json.loads((kernel / "build" / CPU213 / "metadata.json").read_text())
    _loads_and_runs(installed, kernel / "build" / CPU213, cwd=work, env=env)
    for meta in (local_meta, nix_meta):
        assert (meta["name"], meta["backend"]) == ("relu", {"type": "cpu"})
        files = sorted(meta["digest"]["files"])
        assert files[:2] == ["__init__.py", "_ops.py"] and files[2].endswith(".abi3.so")
