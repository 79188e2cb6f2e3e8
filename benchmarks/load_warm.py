"""Warm get_kernel (cached, offline) vs a plain importlib import of the same variant.

Both run in fresh processes (median of several runs): ``get_kernel(repo, version=1)`` with
HF_HUB_OFFLINE=1 against a filled cache, and ``importlib`` loading the variant's
``__init__.py`` directly. The kernel imports torch, as real kernels do, and carries an
8 MiB binary the digest check must hash. Goal: ratio <= 1.5.
Run: .venv/bin/python benchmarks/load_warm.py
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _loader_bench import HubServer, publish, write_variant

RUNS = int(os.environ.get("BENCH_RUNS", "7"))

WARM = "from kernel_builder import get_kernel; get_kernel('acme/bench', version=1, backend='cpu')"
PLAIN = (
    "import importlib.util, sys; "
    "spec = importlib.util.spec_from_file_location('_bench_plain', sys.argv[1]); "
    "m = importlib.util.module_from_spec(spec); sys.modules['_bench_plain'] = m; spec.loader.exec_module(m)"
)


def timed(args: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(args, env=env, check=True, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp, HubServer() as hub:
        build = Path(tmp) / "kernel" / "build"
        write_variant(build, "torch-cpu", payload=8 << 20)
        publish(hub, "acme/bench", build)
        env = {**os.environ, "HF_ENDPOINT": hub.endpoint, "KERNELS_CACHE": str(Path(tmp) / "cache"), "HF_HOME": tmp}
        # Fill the cache online once.
        subprocess.run([sys.executable, "-c", WARM], env=env, check=True, stderr=subprocess.DEVNULL)
        hub.stop()
        variant = next((Path(tmp) / "cache").glob("kernels--acme--bench/snapshots/*/build/torch-cpu"))
        offline = {**env, "HF_HUB_OFFLINE": "1"}
        warm, plain = [], []
        for _ in range(RUNS):  # interleave so machine load affects both alike
            warm.append(timed([sys.executable, "-c", WARM], offline))
            plain.append(timed([sys.executable, "-c", PLAIN, str(variant / "__init__.py")], offline))
        w, p = statistics.median(warm), statistics.median(plain)
        print(f"warm get_kernel (offline, cached): median {w * 1000:.0f} ms over {RUNS} runs")
        print(f"plain importlib import:            median {p * 1000:.0f} ms over {RUNS} runs")
        print(f"ratio: {w / p:.3f}", flush=True)


if __name__ == "__main__":
    main()
