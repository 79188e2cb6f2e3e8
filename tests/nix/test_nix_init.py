"""`kernel-builder init`: the scaffold builds (--local), its own tests pass, and Nix
evaluates the same variants as the Python matrix."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from kernel_builder.flake import nix
from kernel_builder.cli.init import scaffold_files
from kernel_builder.config import load, loads
from kernel_builder.errors import ConfigError
from kernel_builder.flake.kernel_flake import prepare_kernel_flake
from kernel_builder.variants.buildsets import load_build_sets
from kernel_builder.variants.matrix import matrix
from nix_support import PYTHON, kernel_builder


def test_scaffold_files_are_a_valid_edition_5_kernel() -> None:
    files = scaffold_files("my-org/Fancy_Op", ["cpu", "cuda"], "MIT", "path:/x")
    build = loads(files["build.toml"], path=Path("build.toml"))
    assert build.general.name == "fancy-op" and build.general.license == "MIT"
    assert build.general.hub.repo_id == "my-org/Fancy_Op"
    assert sorted(files) == sorted([
        "build.toml", "flake.nix", ".gitignore", "CARD.md", "torch-ext/torch_binding.h", "torch-ext/torch_binding.cpp",
        "torch-ext/fancy_op/__init__.py", "tests/test_fancy_op.py", "fancy_op_cpu/fancy_op_cpu.cpp",
        "fancy_op_cuda/fancy_op_cuda.cu",
    ])
    assert '__all__ = ["fancy_op"]' in files["torch-ext/fancy_op/__init__.py"]
    assert 'inputs.kernel-builder.url = "path:/x";' in files["flake.nix"]
    assert "genKernelFlakeOutputs" in files["flake.nix"]


@pytest.mark.parametrize(
    ("repo_id", "backends", "message"),
    [("no-slash", ["cpu"], "--name must look like ORG/NAME"), ("o/r", ["metal"], "cannot scaffold backend"), ("o/r", [], "cannot scaffold")],
)
def test_scaffold_rejects_bad_arguments(repo_id: str, backends: list[str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        scaffold_files(repo_id, backends, "Apache-2.0", "path:/x")


def test_init_refuses_to_overwrite(tmp_path: Path) -> None:
    env = dict(os.environ)
    kernel_builder("init", str(tmp_path / "k"), "--name", "o/k", "--backends", "cpu", "--no-git", env=env)
    done = kernel_builder("init", str(tmp_path / "k"), "--name", "o/k", "--backends", "cpu", env=env, check=False)
    assert done.returncode == 3 and "already has: " in done.stderr and "--overwrite" in done.stderr


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_scaffold_builds_and_its_tests_pass(tmp_path: Path) -> None:
    env = {**os.environ, "KERNEL_BUILDER_STATE_DIR": str(tmp_path / "state")}
    kernel = tmp_path / "my-kernel"
    done = kernel_builder("init", str(kernel), "--name", "test-org/my-kernel", "--backends", "cpu,cuda", env=env)
    assert "git repository initialised" in done.stderr
    staged = subprocess.run(["git", "-C", str(kernel), "ls-files"], capture_output=True, text=True).stdout.split()
    assert "build.toml" in staged and "flake.nix" in staged
    kernel_builder("build", str(kernel), "--local", env=env)
    tests = subprocess.run([PYTHON, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"], cwd=kernel, capture_output=True, text=True, env=env)
    assert tests.returncode == 0, tests.stdout + tests.stderr
    assert "4 passed" in tests.stdout
    # and Nix sees the same variants as the Python matrix
    os.environ["KERNEL_BUILDER_STATE_DIR"] = env["KERNEL_BUILDER_STATE_DIR"]
    try:
        prepared = prepare_kernel_flake(kernel)
        variants = nix.eval_json(prepared.installable("variants"), flake_args=prepared.flake_args)
    finally:
        os.environ.pop("KERNEL_BUILDER_STATE_DIR", None)
    assert variants == [v.name for v in matrix(load(kernel), load_build_sets(), "x86_64-linux").variants]
    assert "torch214-cxx11-cu130-x86_64-linux" in variants
