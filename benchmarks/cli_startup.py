"""CLI start-up cost: `kernel-builder list-variants --system all --json examples/relu`
against a bare `python -c pass`, both with this interpreter, median of 10 runs each (alternating).

The ratio shows what the CLI adds on top of starting Python; it stays small only while
the list-variants path imports neither torch nor huggingface_hub and each command
imports only what it needs. Goal: ratio <= 3.

Both commands run with bytecode caching on, as an installed CLI runs: the compiled
modules go to a temporary ``PYTHONPYCACHEPREFIX`` (never into the source tree), and a
``PYTHONDONTWRITEBYTECODE`` in the environment is dropped for the two children, since
with it set every run would compile the package's modules from source again. The first
run of each command (not counted) fills the cache.

Run: .venv/bin/python benchmarks/cli_startup.py (``PYTHONPATH`` is passed on, so
``PYTHONPATH=$PWD/python`` measures a checkout's code rather than the installed one).
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
RUNS = 10


def wall(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=REPO, env=env)
    return time.perf_counter() - start


def medians(base: list[str], ours: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Median wall time of each command; runs alternate, so that a burst of load on the
    machine slows both alike."""
    wall(base, env)  # fill the bytecode cache and warm the file cache once
    wall(ours, env)
    times: tuple[list[float], list[float]] = ([], [])
    for _ in range(RUNS):
        times[0].append(wall(base, env))
        times[1].append(wall(ours, env))
    return statistics.median(times[0]), statistics.median(times[1])


def main() -> None:
    script = Path(sys.executable).parent / "kernel-builder"
    cli = [str(script)] if script.exists() else [shutil.which("kernel-builder") or "kernel-builder"]
    cli += ["list-variants", "--system", "all", "--json", str(REPO / "examples" / "relu")]
    with tempfile.TemporaryDirectory(prefix="kb-pycache-") as cache:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = cache
        base, ours = medians([sys.executable, "-c", "pass"], cli, env)
    print(f"python -c pass:          {base * 1000:.1f} ms (median of {RUNS})")
    print(f"list-variants --system all --json: {ours * 1000:.1f} ms (median of {RUNS})")
    print(f"ratio: {ours / base:.2f}")


if __name__ == "__main__":
    main()
