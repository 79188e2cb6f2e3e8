"""CLI start-up cost: `kernel-builder list-variants --system all --json examples/relu`
against a bare `python -c pass`, both with this interpreter, median of 10 runs each.

The ratio shows what the CLI adds on top of starting Python; it stays small only while
the list-variants path imports neither torch nor huggingface_hub. Goal: ratio <= 8.
Run: .venv/bin/python benchmarks/cli_startup.py
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
RUNS = 10


def wall(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=REPO)
    return time.perf_counter() - start


def median(argv: list[str]) -> float:
    wall(argv)  # warm the file cache once
    return statistics.median(wall(argv) for _ in range(RUNS))


def main() -> None:
    script = Path(sys.executable).parent / "kernel-builder"
    cli = [str(script)] if script.exists() else [shutil.which("kernel-builder") or "kernel-builder"]
    cli += ["list-variants", "--system", "all", "--json", str(REPO / "examples" / "relu")]
    base = median([sys.executable, "-c", "pass"])
    ours = median(cli)
    print(f"python -c pass:          {base * 1000:.1f} ms (median of {RUNS})")
    print(f"list-variants --system all --json: {ours * 1000:.1f} ms (median of {RUNS})")
    print(f"ratio: {ours / base:.2f}")


if __name__ == "__main__":
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "0")
    main()
