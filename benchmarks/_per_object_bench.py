"""Shared by incremental_rebuild.py and cold_overhead.py: salted kernel copies with a flake
on a builder snapshot, and a timed `nix build` of one variant that reports what it built."""

from __future__ import annotations

import re
import shutil
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO / "tests"), str(REPO / "python")]
from many_kernel import CPU_VARIANT, write_many  # noqa: E402
from nix_support import snapshot_builder  # noqa: E402

from kernel_builder import nix  # noqa: E402

SYSTEM = "x86_64-linux"
_BUILDING = re.compile(r"building '/nix/store/[a-z0-9]{32}-([^']+)\.drv'")
_FLAKE = """{
  inputs.kernel-builder.url = "path:%s";
  outputs = { self, kernel-builder }:
    kernel-builder.lib.genKernelFlakeOutputs { inherit self; path = ./.; };
}
"""


def builder(tmp: Path) -> Path:
    return snapshot_builder(tmp / "builder")


def salt(root: Path) -> None:
    """A unique comment in every source and in build.toml: nothing of it is in the store yet
    (not the plan either, which sees build.toml)."""
    mark = f"salt {time.time_ns()}"
    for path in root.rglob("*"):
        if path.suffix in (".cpp", ".cu", ".h", ".cuh"):
            path.write_text(path.read_text() + f"\n// {mark}\n")
        elif path.name == "build.toml":
            path.write_text(path.read_text() + f"\n# {mark}\n")


def many(tmp: Path, builder_dir: Path, name: str = "many") -> Path:
    root = write_many(tmp / name, flake=_FLAKE % builder_dir)
    salt(root)
    return root


def relu(tmp: Path, builder_dir: Path, name: str = "relu") -> Path:
    root = tmp / name
    shutil.copytree(REPO / "examples" / "relu", root, ignore=shutil.ignore_patterns("build", "__pycache__", "result*"))
    (root / "flake.nix").write_text(_FLAKE % builder_dir)
    salt(root)
    return root


def timed_build(kernel: Path, what: str, *, jobs: int = 2) -> tuple[float, list[str]]:
    """Seconds of `nix build -j JOBS` of ``legacyPackages.<sys>.<what>.<cpu variant>``, and the
    names of the derivations it built."""
    attr = f".#legacyPackages.{SYSTEM}.{what}.{CPU_VARIANT}"
    nix.run_nix(["eval", "--raw", attr + ".drvPath"], cwd=kernel)  # lock and evaluate outside the timing
    start = time.perf_counter()
    done = nix.run_nix(["build", "-L", "--no-link", "-j", str(jobs), "--cores", "1", attr], cwd=kernel)
    return time.perf_counter() - start, _BUILDING.findall(done.stderr)
