"""Incremental `build --local`: a one-source edit's rebuild vs the cold build.

Copies examples/relu into a temporary directory and adds 16 sources to its CPU kernel, each
including torch's headers (as a real kernel's sources do, which is what makes a compile
cost seconds). Builds the CPU variant of this Python's torch with `build --local` from an
empty build directory (`--clean`, a private state directory), edits one of the 16 sources,
and builds again: that must recompile exactly the edited source (counted from Ninja's
lines, `-L`). The ratio is the rebuild's wall time over the cold build's. Goal: <= 0.15.

    .venv/bin/python benchmarks/local_incremental.py [--cores N]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SOURCES = 16
_COMPILED = re.compile(r"Building CXX object \S+?/src/(\S+)\.o$")


def build(kernel: Path, env: dict[str, str], cores: int, *extra: str) -> tuple[float, list[str]]:
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "kernel_builder", "build", str(kernel), "--local", "--backend", "cpu",
         "--cores", str(cores), "-L", *extra],
        capture_output=True, text=True, env=env, check=False,
    )
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"build failed:\n{done.stderr[-4000:]}")
    return elapsed, sorted(m.group(1) for line in done.stderr.splitlines() if (m := _COMPILED.search(line)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cores", type=int, default=os.cpu_count() or 1, help="compile jobs (default: all CPUs)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="kb-local-incr-") as tmp:
        kernel = Path(tmp) / "relu"
        shutil.copytree(REPO / "examples" / "relu", kernel, ignore=shutil.ignore_patterns("build", "__pycache__", "tests"))
        names = [f"relu_cpu/part_{i:02d}.cpp" for i in range(SOURCES)]
        for i, name in enumerate(names):
            (kernel / name).write_text(
                f"#include <torch/all.h>\n\ntorch::Tensor relu_part_{i}(const torch::Tensor& x) {{ return x * {i + 1}; }}\n"
            )
        toml = kernel / "build.toml"
        listed = ", ".join(f'"{name}"' for name in ["relu_cpu/relu_cpu.cpp", *names])
        toml.write_text(toml.read_text().replace('src = ["relu_cpu/relu_cpu.cpp"]', f"src = [{listed}]"))
        env = {**os.environ, "KERNEL_BUILDER_STATE_DIR": str(Path(tmp) / "state")}
        cold, compiled = build(kernel, env, args.cores, "--clean")
        print(f"cold build: {cold:.1f}s, {len(compiled)} object(s) compiled")
        edited = kernel / names[SOURCES // 2]
        edited.write_text(edited.read_text() + "// an edit\n")
        rebuild, compiled = build(kernel, env, args.cores)
        print(f"rebuild after editing {names[SOURCES // 2]}: {rebuild:.1f}s, compiled {compiled}")
        if compiled != [names[SOURCES // 2]]:
            sys.exit("the rebuild did not compile exactly the edited source")
        print(f"ratio: {rebuild / cold:.4f}")


if __name__ == "__main__":
    main()
