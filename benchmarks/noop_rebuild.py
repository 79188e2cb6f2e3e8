"""No-op rebuild cost: `kernel-builder build` with nothing changed vs the first build.

Copies examples/relu into a temporary git repository (salted, so the first build really
compiles), builds its CPU variants through Nix, then runs the same command again. The
second run must build nothing (checked from kernel-builder's report of what Nix built);
both use the default pinned toolchains in the Nix sandbox;
its wall time divided by the first build's is the ratio. Goal: <= 0.02.

    .venv/bin/python benchmarks/noop_rebuild.py
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
# The kernel flake template and the builder snapshot are test helpers (tests/nix_support.py).
sys.path[:0] = [str(REPO / "tests")]
from nix_support import FLAKE, snapshot_builder  # noqa: E402



def run(kernel: Path, env: dict[str, str]) -> tuple[float, list[dict]]:
    start = time.perf_counter()
    done = subprocess.run(
        [str(Path(sys.executable).parent / "kernel-builder"), "build", str(kernel), "--backend", "cpu", "--json"],
        capture_output=True, text=True, env=env, check=False,
    )
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"build failed:\n{done.stderr[-4000:]}")
    return elapsed, json.loads(done.stdout)


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="kb-noop-") as tmp:
        kernel = Path(tmp) / "relu"
        shutil.copytree(REPO / "examples" / "relu", kernel, ignore=shutil.ignore_patterns("build", "__pycache__"))
        (kernel / "flake.nix").write_text(FLAKE)
        source = kernel / "relu_cpu" / "relu_cpu.cpp"
        source.write_text(source.read_text() + f"\n// benchmark salt {time.time_ns()}\n")
        git = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@b"}
        subprocess.run(["git", "init", "-q", str(kernel)], check=True)
        subprocess.run(["git", "-C", str(kernel), "add", "-A"], check=True)
        subprocess.run(["git", "-C", str(kernel), "commit", "-qm", "bench"], check=True, env=git)
        env = {**os.environ, "KERNEL_BUILDER_ROOT": str(snapshot_builder(Path(tmp) / "builder"))}
        first, rows = run(kernel, env)
        built = [r["variant"] for r in rows if r["status"] == "built"]
        print(f"first build: {first:.2f}s, built {len(built)} variant(s): {', '.join(built)}")
        noop, rows = run(kernel, env)
        statuses = {r["variant"]: r["status"] for r in rows}
        print(f"no-op build: {noop:.3f}s, statuses {statuses}")
        if any(s != "cached" for s in statuses.values()):
            sys.exit("the second build rebuilt something")
        print(f"ratio: {noop / first:.4f}")


if __name__ == "__main__":
    main()
