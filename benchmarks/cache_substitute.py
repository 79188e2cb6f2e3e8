"""Fetching a variant from a signed binary cache vs building it.

Builds examples/relu's torch 2.13 CPU variant once with `kernel-builder build` (that also
realises its toolchain), signs and pushes it with `kernel-builder cache push` to a
`file://` cache, then, best of three rounds each with the output deleted from the store
before every round:
- build: `nix-store --realise <drv>` in the sandbox, no substituters (Nix compiles it);
- substitute: `nix-store --realise <drv>` with the cache and its key (Nix copies it).
Evaluation is left out of both (it is the same for both). The ratio is substitute /
build; goal <= 0.05.

    .venv/bin/python benchmarks/cache_substitute.py
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
sys.path[:0] = [str(REPO / "tests"), str(REPO / "python")]
from nix_support import FLAKE, commit_all, salt_sources, snapshot_builder  # noqa: E402

from kernel_builder import nix  # noqa: E402

VARIANT = "torch213-cxx11-cpu-x86_64-linux"
ROUNDS = 3
CLI = str(Path(sys.executable).parent / "kernel-builder")


def run(argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(argv, capture_output=True, text=True, env=env, check=False)
    if done.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed:\n{done.stderr[-4000:]}")
    return done


def forget(output: str, gcroots: Path) -> None:
    for link in gcroots.glob("result*"):
        link.unlink()
    subprocess.run(["nix-store", "--delete", output], capture_output=True, env=nix.nix_env(), check=True)


def realise(drv: str, env: dict[str, str]) -> tuple[float, str]:
    start = time.perf_counter()
    done = run(["nix-store", "--realise", "--no-build-output", drv], env)
    return time.perf_counter() - start, done.stderr


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="kb-cache-bench-") as tmp:
        root = Path(tmp)
        kernel = root / "relu"
        shutil.copytree(REPO / "examples" / "relu", kernel, ignore=shutil.ignore_patterns("build", "__pycache__"))
        (kernel / "flake.nix").write_text(FLAKE)
        salt_sources(kernel)
        commit_all(kernel, init=True)
        env = {**os.environ, "KERNEL_BUILDER_ROOT": str(snapshot_builder(root / "builder"))}
        env.pop("PYTHONPATH", None)
        row = json.loads(run([CLI, "build", str(kernel), "--variant", VARIANT, "--json"], env).stdout)[0]
        drv, output = row["drv"], run(["nix-store", "-q", "--outputs", row["drv"]], env).stdout.strip()
        run([CLI, "cache", "key", "bench-1", "--out", str(root / "keys")], env)
        cache = f"file://{root / 'cache'}"
        run([CLI, "cache", "push", str(kernel), "--to", cache, "--secret-key", str(root / "keys" / "bench-1.sec"),
             "--variant", VARIANT], env)
        key = (root / "keys" / "bench-1.pub").read_text().strip()
        from kernel_builder.state import state_dir

        gcroots = state_dir() / "gcroots" / kernel.as_posix().strip("/").replace("/", "_")
        plain = nix.nix_env(env, sandbox=True)
        cached = nix.nix_env(env, sandbox=True, substituters=[cache], trusted_keys=[key])
        times: dict[str, list[float]] = {"build": [], "substitute": []}
        for _ in range(ROUNDS):
            forget(output, gcroots)
            seconds, log = realise(drv, plain)
            times["build"].append(seconds)
            forget(output, gcroots)
            seconds, log = realise(drv, cached)
            if f"copying path '{output}' from '{cache}'" not in log or "building" in log:
                sys.exit(f"the variant was not substituted:\n{log[-3000:]}")
            times["substitute"].append(seconds)
        for kind, values in times.items():
            print(f"{kind}: " + ", ".join(f"{v:.2f}s" for v in values))
        print(f"ratio: {min(times['substitute']) / min(times['build']):.3f}")


if __name__ == "__main__":
    main()
