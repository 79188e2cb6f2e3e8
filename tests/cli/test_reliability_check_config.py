"""Issue 45, finding 23: `check-config` refuses `-march=native` as `build` does.

A host-specific flag made `build` (pinned toolchain) fail while `check-config` exited 0, so a
CI gate on check-config passed a kernel that does not build. Both now report the same
located problem; `check-config --toolchain host` accepts it, as `build --toolchain host` does.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _cli(*args: str, state: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "KERNEL_BUILDER_STATE_DIR": str(state)}
    return subprocess.run([sys.executable, "-m", "kernel_builder", *args], capture_output=True, text=True, timeout=300, env=env)


@pytest.mark.parametrize("flag", ["-march=native", "-mtune=native"])
def test_check_config_and_build_refuse_the_same_host_specific_flag(tmp_path: Path, flag: str) -> None:
    kernel = tmp_path / "relu"
    shutil.copytree(EXAMPLES / "relu", kernel, ignore=shutil.ignore_patterns("build", "__pycache__", "result*"))
    toml = kernel / "build.toml"
    toml.write_text(toml.read_text().replace('src = ["relu_cpu/relu_cpu.cpp"]', f'src = ["relu_cpu/relu_cpu.cpp"]\ncxx-flags = ["-O2", "{flag}"]'))
    line = next(i for i, text in enumerate(toml.read_text().splitlines(), 1) if "cxx-flags" in text)
    located = f'{toml}:{line}:'
    problem = f'kernel.relu_cpu.cxx-flags[1]: "{flag}" builds for this machine\'s CPU'

    checked = _cli("check-config", str(kernel), state=tmp_path / "state")
    assert checked.returncode == 3, checked.stderr
    assert located in checked.stderr and problem in checked.stderr and "Traceback" not in checked.stderr, checked.stderr
    built = _cli("build", str(kernel), state=tmp_path / "state")
    assert built.returncode == 3, built.stderr
    assert located in built.stderr and problem in built.stderr, built.stderr
    host = _cli("check-config", "--toolchain", "host", str(kernel), state=tmp_path / "state")
    assert host.returncode == 0, host.stderr
