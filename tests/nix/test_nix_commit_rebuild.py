"""A commit rebuilds what it changed (issue 46): the 16-source CPU kernel of many_kernel.py
in its own git repository, as authors and CI have it.

The ops identifier carries the kernel's commit (``_many_cpu_<rev>``) and reaches every unit's
command as ``TORCH_EXTENSION_NAME``; the deps step measures which units' output depends on
it (the binding registers under it; the other sixteen never read it), and the plan is made
once for every commit (with a placeholder for the identifier, which the binding's object
and the link fill in). So a committed one-source edit rebuilds that object, the binding's,
the link and the variant, and measures that one unit again (its deps step, and their
merge): no plan, no other object.
"""

from __future__ import annotations

import re
import subprocess
import time
from pathlib import Path

import pytest

from kernel_builder import nix
from many_kernel import CPU_VARIANT, UNITS, source_name, write_many
from nix_support import snapshot_builder

pytestmark = pytest.mark.slow

_BUILDING = re.compile(r"building '/nix/store/[a-z0-9]{32}-([^']+)\.drv'")
_FLAKE = """{
  inputs.kernel-builder.url = "path:%s";
  outputs = { self, kernel-builder }:
    kernel-builder.lib.genKernelFlakeOutputs { inherit self; path = ./.; };
}
"""


def git(kernel: Path, *args: str) -> str:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.invalid", "PATH": "/usr/bin:/bin", "HOME": str(kernel)}
    return subprocess.run(["git", *args], cwd=kernel, env=env, check=True, capture_output=True, text=True).stdout


def commit(kernel: Path, message: str) -> None:
    git(kernel, "add", "-A")
    git(kernel, "commit", "-q", "-m", message)


def build(kernel: Path) -> list[str]:
    attr = f".#legacyPackages.x86_64-linux.redistributable.{CPU_VARIANT}"
    done = nix.run_nix(["build", "-L", "--no-link", "-j", "1", "--cores", "1", attr], cwd=kernel)
    return _BUILDING.findall(done.stderr)


@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    builder = snapshot_builder(tmp_path_factory.mktemp("builder"))
    root = write_many(tmp_path_factory.mktemp("many-git") / "many", flake=_FLAKE % builder)
    salt = f"salt {time.time_ns()}"  # nothing of it is in the store yet
    for path in [root / "build.toml", root / "many" / "common.h", root / "torch-ext" / "torch_binding.cpp",
                 *(root / source_name(k) for k in range(UNITS))]:
        path.write_text(path.read_text() + ("# " if path.suffix == ".toml" else "// ") + salt + "\n")
    git(root, "init", "-q")
    commit(root, "many")
    return root


@pytest.mark.timeout(2400)
def test_a_committed_one_source_edit_rebuilds_that_object_the_binding_the_link_and_the_variant(kernel: Path) -> None:
    cold = build(kernel)
    assert len([n for n in cold if n.startswith("0-obj-")]) == UNITS + 1
    edited = kernel / source_name(7)
    edited.write_text(edited.read_text() + "// an edit\n")
    commit(kernel, "edit one source")
    built = build(kernel)
    objects = sorted(n.removeprefix(f"0-obj-many-{CPU_VARIANT}-") for n in built if n.startswith("0-obj-"))
    assert objects == [source_name(7).replace("/", "-"), "torch-ext-torch_binding.cpp"], built
    others = sorted(n.removeprefix(f"many-{CPU_VARIANT}") or "<variant>" for n in built if n.startswith(f"many-{CPU_VARIANT}"))
    assert others == ["-deps", f"-deps-{source_name(7).replace('/', '-')}", "-link", "<variant>"], built
    # a commit that changes no source: only the binding's object (the new identifier) is compiled
    (kernel / "README.md").write_text("notes\n")
    commit(kernel, "notes")
    built = build(kernel)
    assert sorted(n for n in built if n.startswith(("0-obj-", "many-"))) == [
        f"0-obj-many-{CPU_VARIANT}-torch-ext-torch_binding.cpp", f"many-{CPU_VARIANT}", f"many-{CPU_VARIANT}-link"], built
