"""Shared helpers for the build tests: toolchains, subprocess runners, interop scripts."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
import toolchains

REPO_ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = REPO_ROOT / "examples"
# The test interpreter is the CPU toolchain: it has torch 2.13 (CPU), cmake and ninja.
CPU_PYTHON = sys.executable
CPU_VARIANT = "torch213-cxx11-cpu-x86_64-linux"
CUDA_VARIANT = "torch214-cxx11-cu130-x86_64-linux"


def torch214_python() -> str:
    """The torch 2.14.1 (CUDA 13.0) toolchain Python; a missing one fails the test loudly."""
    return toolchains.torch214_python()


def run(cmd: list[str], *, env: dict[str, str] | None = None, timeout: int = 900) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout, check=False)


def run_variant(source: Path, variant: str, out: Path, python: str, *extra: str) -> subprocess.CompletedProcess:
    """``python -m kernel_builder.driver.run_variant`` with the driver (test) interpreter."""
    cmd = [
        sys.executable,
        "-m",
        "kernel_builder.driver.run_variant",
        "--source",
        str(source),
        "--variant",
        variant,
        "--out",
        str(out),
        "--toolchain-python",
        python,
        *extra,
    ]
    return run(cmd)


def run_python(script: str, *args: str, python: str = CPU_PYTHON, env: dict[str, str] | None = None) -> str:
    """Run ``script`` in a fresh interpreter; return stdout, failing the test with stderr."""
    full_env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", **(env or {}))
    done = run([python, "-c", script, *args], env=full_env)
    assert done.returncode == 0, f"subprocess failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
    return done.stdout


def kernels_path_for_other_torch(tmp: Path) -> str:
    """A PYTHONPATH entry exposing this venv's packages except torch and its CUDA wheels.

    Lets another toolchain Python (with its own torch) import PyPI ``kernels`` and its
    dependencies from the test venv, which the toolchain itself does not install.
    """
    site = Path(sysconfig.get_paths()["purelib"])
    target = tmp / "kernels-site"
    if target.exists():
        return str(target)
    target.mkdir(parents=True)
    skip = ("torch", "functorch", "torchgen", "nvidia", "triton", "numpy", "_distutils_hack", "distutils-precedence")
    for entry in site.iterdir():
        if entry.name.startswith(skip) or entry.suffix == ".pth":
            continue
        (target / entry.name).symlink_to(entry)
    return str(target)


INTEROP_RELU = r"""
import sys
from pathlib import Path
import torch
from kernels import LocalLayerRepository, Mode, get_local_kernel, kernelize, use_kernel_forward_from_hub, use_kernel_mapping

repo, device, run_op = Path(sys.argv[1]), sys.argv[2], sys.argv[3] == "1"
kernel = get_local_kernel(repo)
print("module", kernel.__name__)
if run_op:
    x = torch.randn(1000, device=device)
    assert torch.equal(kernel.relu(x), torch.relu(x)), "relu op differs from torch.relu"
    print("op ok")


@use_kernel_forward_from_hub("ReLU")
class ReLU(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x)


if device == "cuda" and not torch.cuda.is_available():
    # No GPU here: kernelize asks for the device capability to pick a layer; answer for an
    # H100 so the swap itself (which needs no GPU) can be checked.
    torch.cuda.get_device_capability = lambda device=None: (9, 0)
model = torch.nn.Sequential(ReLU())
with use_kernel_mapping({"ReLU": {device: LocalLayerRepository(repo_path=repo, layer_name="ReLU")}}):
    model = kernelize(model, mode=Mode.INFERENCE, device=device)
forward = model[0].forward
print("forward", forward.__func__.__module__, forward.__func__.__qualname__)
if run_op:
    x = torch.randn(1000, device=device)
    assert torch.equal(model(x), torch.relu(x)), "kernelized layer differs from torch.relu"
    print("layer ok")
"""


def copy_example(name: str, dest: Path) -> Path:
    """A copy of an example outside git (so its uid comes from the source hash)."""
    target = dest / name
    shutil.copytree(EXAMPLES / name, target, ignore=shutil.ignore_patterns("build", "__pycache__", "tests"))
    return target


def run_example_tests(name: str, build_dir: Path | None = None) -> str:
    """Run ``examples/<name>/tests`` in a fresh pytest against ``build_dir``; return its output."""
    example = EXAMPLES / name
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    if build_dir is not None:
        env["KERNEL_BUILD_DIR"] = str(build_dir)
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(example), str(example / "tests")]
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=example, timeout=600, check=False)
    assert done.returncode == 0, f"examples/{name}/tests failed:\n{done.stdout[-4000:]}\n{done.stderr[-2000:]}"
    return done.stdout
