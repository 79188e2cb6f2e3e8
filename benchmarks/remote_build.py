"""Building a variant on a remote Nix machine vs on this one.

The remote is a loopback sshd whose sessions see an empty Nix store (tests/
remote_support.py): a machine with nothing but Nix. examples/relu's torch 2.13 CPU variant
is built with `kernel-builder build`, alternating, two rounds each, sources salted before
every build so Nix compiles:
- local: `--variant V` (the toolchain is already in this store);
- remote: `--variant V -j 0 --builders ...` against a fresh remote each round, so the
  copy of the toolchain closure (about 1.5 GB) to it is included, and the output is copied back.
A warm-up local build realises the toolchain first. Also printed: a remote build whose
store already holds the closure. The ratio is best remote (closure copy included) / best
local wall time; on loopback the goal is <= 1.5.

    .venv/bin/python benchmarks/remote_build.py
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
from nix_support import FLAKE, commit_all, salt_sources, snapshot_builder  # noqa: E402
from remote_support import LoopbackRemote, start_remote  # noqa: E402

VARIANT = "torch213-cxx11-cpu-x86_64-linux"
ROUNDS = 2
CLI = str(Path(sys.executable).parent / "kernel-builder")


def build(kernel: Path, env: dict[str, str], remote: LoopbackRemote | None) -> float:
    salt_sources(kernel)
    extra = ["-j", "0", "--builders", remote.builders()] if remote else []
    start = time.perf_counter()
    done = subprocess.run([CLI, "build", str(kernel), "--variant", VARIANT, "--json", *extra],
                          capture_output=True, text=True, env=remote.env(env) if remote else env, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"build failed:\n{done.stderr[-4000:]}")
    row = json.loads(done.stdout)[0]
    where = remote.uri if remote else "local"
    if row["status"] != "built" or row["where"] != where:
        sys.exit(f"expected a build on {where}, got {row}")
    return elapsed


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="kb-remote-bench-") as tmp:
        root = Path(tmp)
        kernel = root / "relu"
        shutil.copytree(REPO / "examples" / "relu", kernel, ignore=shutil.ignore_patterns("build", "__pycache__"))
        (kernel / "flake.nix").write_text(FLAKE)
        commit_all(kernel, init=True)
        env = {**os.environ, "KERNEL_BUILDER_ROOT": str(snapshot_builder(root / "builder"))}
        env.pop("PYTHONPATH", None)
        build(kernel, env, None)  # warm-up: the toolchain is realised here
        times: dict[str, list[float]] = {"local": [], "remote": []}
        warm = 0.0
        for i in range(ROUNDS):
            times["local"].append(build(kernel, env, None))
            remote = start_remote(root / f"remote{i}")
            try:
                times["remote"].append(build(kernel, env, remote))
                if i == 0:
                    warm = build(kernel, env, remote)
            finally:
                remote.stop()
        for kind, values in times.items():
            print(f"{kind}: " + ", ".join(f"{v:.2f}s" for v in values))
        print(f"remote, closure already there: {warm:.2f}s")
        print(f"ratio: {min(times['remote']) / min(times['local']):.2f}")


if __name__ == "__main__":
    main()
