"""Overhead of `kernel-builder build --local` over the bare compiler commands.

Builds the CPU variant of examples/relu (a copy, outside git) with
`kernel-builder build --local --backend cpu` and compares its wall time with running the
compiler and linker commands that produce the same .so (taken from the generated Ninja
file, compiled with the same parallelism). The difference is what the builder adds:
CMake configure, probing the toolchain, layout, digest, ABI and import checks.

    .venv/bin/python benchmarks/build_overhead.py [--repeat N]

Last line: `ratio: X` (builder time / bare compiler time, best of N each; goal X <= 1.3).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VARIANT = "torch213-cxx11-cpu-x86_64-linux"


def builder_run(source: Path, jobs: int) -> tuple[float, str]:
    shutil.rmtree(source / "build", ignore_errors=True)
    cmd = [sys.executable, "-m", "kernel_builder", "build", str(source), "--local", "--backend", "cpu", "--cores", str(jobs)]
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"builder failed:\n{done.stderr}")
    return elapsed, done.stderr


def bare_commands(source: Path, jobs: int) -> tuple[list[str], str, Path]:
    """Compile and link commands of one kept build (ninja -t commands), and their directory."""
    cmd = [
        sys.executable, "-m", "kernel_builder.driver.run_variant", "--source", str(source), "--variant", VARIANT,
        "--out", str(source / "build-keep"), "--toolchain-python", sys.executable, "--keep-scratch", "--jobs", str(jobs),
        # Its own ops id gives it its own scratch directory, which the builder runs leave alone.
        "--unique-id", "benchmark",
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, check=True)
    scratch = Path(re.search(r"scratch kept at (\S+)", done.stderr)[1])
    build_dir = scratch / "cmake-build"
    ninja = shutil.which("ninja", path=str(Path(sys.executable).parent)) or "ninja"
    commands = subprocess.run([ninja, "-C", str(build_dir), "-t", "commands"], capture_output=True, text=True, check=True)
    lines = [line for line in commands.stdout.splitlines() if line.strip()]
    return lines[:-1], lines[-1], build_dir


def bare_run(compiles: list[str], link: str, build_dir: Path, jobs: int) -> float:
    for obj in build_dir.rglob("*.o"):
        obj.unlink()
    start = time.perf_counter()
    pending = list(compiles)
    running: list[subprocess.Popen] = []
    while pending or running:
        while pending and len(running) < jobs:
            running.append(subprocess.Popen(pending.pop(0), shell=True, cwd=build_dir))
        running.pop(0).wait()
    subprocess.run(link, shell=True, cwd=build_dir, check=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    jobs = os.cpu_count() or 1
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "relu"
        shutil.copytree(ROOT / "examples" / "relu", source, ignore=shutil.ignore_patterns("build", "tests"))
        compiles, link, build_dir = bare_commands(source, jobs)  # also warms caches
        try:
            builder, bare = [], []
            for _ in range(args.repeat):
                builder.append(builder_run(source, jobs)[0])
                bare.append(bare_run(compiles, link, build_dir, jobs))
        finally:
            shutil.rmtree(build_dir.parent, ignore_errors=True)
    # Best of N on both sides: the machine is shared, and the minimum is the least disturbed run.
    b, c = min(builder), min(bare)
    print(f"kernel-builder build --local (cpu variant of relu): best {b:.2f}s, median {statistics.median(builder):.2f}s, runs {[round(x, 2) for x in builder]}")
    print(f"bare compiler + linker commands ({len(compiles)} compiles, {jobs} parallel): best {c:.2f}s, median {statistics.median(bare):.2f}s, runs {[round(x, 2) for x in bare]}")
    print(f"overhead: {b - c:.2f}s (median ratio {statistics.median(builder) / statistics.median(bare):.2f})")
    print(f"ratio: {b / c:.2f}")


if __name__ == "__main__":
    main()
