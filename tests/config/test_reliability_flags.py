"""Issue 24, finding 2: host-specific compiler flags in a pinned (redistributable) build.

`cxx-flags = ["-march=native"]` built fine and the module held AVX-512 code. Now the pinned
build refuses it with a located build.toml error, before Nix runs (the front end) and inside
the variant derivation (a plain `nix build`).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from kernel_builder.config.loading import read_file
from kernel_builder.config.portability import host_specific_flags
from nix_support import copy_kernel

CASES = {
    "march": ('[kernel.relu_cpu]\n', '[kernel.relu_cpu]\ncxx-flags = ["-O2", "-march=native"]\n', r"kernel\.relu_cpu\.cxx-flags\[1\]: \"-march=native\" builds for this machine's CPU"),
    "mtune": ('[kernel.relu_cpu]\n', '[kernel.relu_cpu]\ncxx-flags = ["-mtune=native"]\n', r"kernel\.relu_cpu\.cxx-flags\[0\]: \"-mtune=native\""),
    "mcpu": ("[torch]\n", '[torch]\ncxx-flags = ["-mcpu=native"]\n', r"torch\.cxx-flags\[0\]: \"-mcpu=native\""),
    "nvcc-arch": ('[kernel.relu_cuda]\n', '[kernel.relu_cuda]\ncuda-flags = ["-arch=native"]\n', r"kernel\.relu_cuda\.cuda-flags\[0\]: \"-arch=native\" builds for this machine's GPU"),
    "nvcc-arch-pair": ('[kernel.relu_cuda]\n', '[kernel.relu_cuda]\ncuda-flags = ["-arch", "native"]\n', r"kernel\.relu_cuda\.cuda-flags\[0\]: \"-arch\""),
    "xcompiler": ('[kernel.relu_cuda]\n', '[kernel.relu_cuda]\ncuda-flags = ["-Xcompiler=-O3,-march=native"]\n', r"kernel\.relu_cuda\.cuda-flags\[0\]: \"-Xcompiler=-O3,-march=native\" builds for this machine's CPU"),
}


def _kernel(tmp_path: Path, case: str) -> Path:
    kernel = copy_kernel("relu", tmp_path / "k", git=False)
    old, new, _ = CASES[case]
    toml = kernel / "build.toml"
    toml.write_text(toml.read_text().replace(old, new, 1))
    return kernel


@pytest.mark.parametrize("case", sorted(CASES))
def test_pinned_build_refuses_host_specific_flags_with_a_located_error(tmp_path: Path, case: str) -> None:
    kernel = _kernel(tmp_path, case)
    env = {**os.environ, "KERNEL_BUILDER_STATE_DIR": str(tmp_path / "state")}
    done = subprocess.run([sys.executable, "-m", "kernel_builder", "build", str(kernel)], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 3, done.stderr
    assert re.search(rf"build\.toml:\d+:\d+: {CASES[case][2]}", done.stderr), done.stderr
    assert "--toolchain host" in done.stderr and "Traceback" not in done.stderr


def test_the_variant_derivation_refuses_them_too(tmp_path: Path) -> None:
    """What a plain `nix build` runs: the driver, with the pinned provider's environment."""
    kernel = _kernel(tmp_path, "march")
    env = {**os.environ, "toolchainProvider": "pinned"}
    done = subprocess.run(
        [sys.executable, "-m", "kernel_builder.driver.run_variant", "--source", str(kernel), "--variant", "torch-cpu",
         "--out", str(tmp_path / "out"), "--toolchain-python", sys.executable],
        capture_output=True, text=True, env=env, timeout=120,
    )
    assert done.returncode == 1 and '"-march=native" builds for this machine' in done.stderr, done.stderr
    assert not (tmp_path / "out").exists()


def test_portable_flags_pass() -> None:
    """Named targets are fine; only `native` asks the build machine."""
    kernel = Path(__file__).resolve().parents[2] / "examples" / "relu"
    parsed = read_file(kernel)
    assert not host_specific_flags(parsed, "build.toml")
    doc = {"kernel": {"k": {"cxx-flags": ["-march=x86-64-v3", "-mtune=generic", "-arch=sm_90", "-DNATIVE=native"]}}}
    assert not host_specific_flags(type(parsed)(parsed.build, parsed.edition, (), doc, parsed.positions), "build.toml")
