"""Issue 45, finding 24: a state directory or HOME holding `#`, `?` or a space broke every
build with a raw flake-URL error (Nix 2.8 cannot escape those in a `path:` URL, so
kernel-builder reaches such a directory through a link of its own). The full state
directory of the same finding is in test_reliability_full_disk.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from kernel_builder.nix import flake_path
from nix_support import REPO, copy_kernel, snapshot_builder

CPU213 = "torch213-cxx11-cpu-x86_64-linux"


def _cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k not in ("KERNEL_BUILDER_STATE_DIR", "XDG_STATE_HOME")}
    return subprocess.run([sys.executable, "-m", "kernel_builder", *args], capture_output=True, text=True,
                          env={**base, "PYTHONPATH": str(REPO / "python"), **env}, timeout=900)


@pytest.mark.parametrize("name", ["st #1", "st?x", "st a b"])
def test_flake_path_reaches_the_same_directory_without_url_characters(tmp_path: Path, name: str) -> None:
    target = tmp_path / name / "flake-inputs" / "0123abcd"
    target.mkdir(parents=True)
    alias = flake_path(target)
    assert not set(str(alias)) & set("#? %")
    assert alias.resolve() == target.resolve() and alias.name == "0123abcd"  # the last component is real
    assert flake_path(target) == alias  # stable: one link per directory
    assert flake_path(tmp_path / "plain") == tmp_path / "plain"


@pytest.mark.slow
@pytest.mark.timeout(900)
@pytest.mark.parametrize("where", ["state", "home"])
def test_a_state_directory_or_home_with_url_characters_builds(tmp_path: Path, where: str) -> None:
    kernel = copy_kernel("relu", tmp_path / "k", git=False)
    odd = tmp_path / "a #1?b c"
    env = {"KERNEL_BUILDER_ROOT": str(snapshot_builder(tmp_path / "builder"))}
    if where == "state":
        env["KERNEL_BUILDER_STATE_DIR"] = str(odd / "state")
    else:
        odd.mkdir()
        env["HOME"] = str(odd)
    done = _cli("build", str(kernel), "--variant", CPU213, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert (kernel / "build" / CPU213 / "metadata.json").is_file()
    state = odd / "state" if where == "state" else odd / ".local" / "state" / "kernel-builder"
    assert (state / "kernel-sources").is_dir()  # the odd directory was really the state directory
