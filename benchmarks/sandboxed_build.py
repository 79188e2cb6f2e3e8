"""Sandboxed pinned build vs host-toolchain build of the same variant.

Builds examples/relu's torch 2.13 CPU variant through `kernel-builder build`, once with the
pinned toolchains inside the Nix sandbox (the default) and once with `--toolchain host`
(this machine's compiler and Python, sandbox off). Sources are salted before every build so
Nix really compiles; a warm-up round realises the toolchain derivations first, and the
best of three rounds per toolchain is kept, alternating, so both see the same machine
load. The ratio is pinned / host; goal <= 1.2. Needs `kernel-builder toolchain fetch` and
`kernel-builder toolchain setup` (as `.ci/setup` runs them).

    .venv/bin/python benchmarks/sandboxed_build.py
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO / "tests")]
from nix_support import FLAKE, commit_all, snapshot_builder  # noqa: E402

VARIANT = "torch213-cxx11-cpu-x86_64-linux"
ROUNDS = 3


def build(kernel: Path, env: dict[str, str], toolchain: str) -> float:
    source = kernel / "relu_cpu" / "relu_cpu.cpp"
    source.write_text(source.read_text() + f"\n// salt {time.time_ns()}\n")
    start = time.perf_counter()
    done = subprocess.run(
        [str(Path(sys.executable).parent / "kernel-builder"), "build", str(kernel), "--variant", VARIANT,
         "--toolchain", toolchain, "--json"],
        capture_output=True, text=True, env=env, check=False,
    )
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"{toolchain} build failed:\n{done.stderr[-4000:]}")
    status = json.loads(done.stdout)[0]["status"]
    if status != "built":
        sys.exit(f"{toolchain} build did not build ({status})")
    return elapsed


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="kb-sandbox-") as tmp:
        kernel = Path(tmp) / "relu"
        shutil.copytree(REPO / "examples" / "relu", kernel, ignore=shutil.ignore_patterns("build", "__pycache__"))
        (kernel / "flake.nix").write_text(FLAKE)
        commit_all(kernel, init=True)
        env = {**os.environ, "KERNEL_BUILDER_ROOT": str(snapshot_builder(Path(tmp) / "builder"))}
        env.pop("PYTHONPATH", None)
        for toolchain in ("pinned", "host"):  # warm-up: toolchain derivations, torch page cache
            build(kernel, env, toolchain)
        times: dict[str, list[float]] = {"pinned": [], "host": []}
        for _ in range(ROUNDS):
            for toolchain in ("pinned", "host"):
                times[toolchain].append(build(kernel, env, toolchain))
        for toolchain, values in times.items():
            print(f"{toolchain}: " + ", ".join(f"{v:.2f}s" for v in values))
        print(f"ratio: {min(times['pinned']) / min(times['host']):.2f}")


if __name__ == "__main__":
    main()
