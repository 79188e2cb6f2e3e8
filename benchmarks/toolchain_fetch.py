"""Pinned toolchain: first fetch per build set, first realisation, and the cached fetch.

Uses a fresh chroot Nix store (`store = <tmp>/root`), so nothing is there yet:
1. `kernel-builder toolchain fetch --build-set KEY` for each pinned build set in lock
   order: what each set adds (artifacts, bytes, seconds) on top of the ones before it
   (the first pays for the common groups; a set served by an environment already
   fetched adds nothing: shared wheels are stored once);
2. `kernel-builder toolchain fetch`: the rest (the CLI environment), and the total;
3. `nix build` realises the toolchain derivations of every pinned build set (runtime,
   compiler, Python, the driver and torch environments, the CUDA homes) in the sandbox
   (skipped with `--fetch-only`);
4. `kernel-builder toolchain fetch` again: everything is present, nothing is added.
The ratio is cached fetch / first total fetch (it should be tiny). Downloads go through
pip's and apt's caches, as on any machine that fetched before.

What a torch release adds is its build sets' lines in step 1 (a set brings its cross-built
aarch64 environment and that environment's emulated check environment too). Measured when
torch 2.15 (CPU + CUDA 13.2) was pinned, with `kernel-builder toolchain fetch` on a store
holding torch 2.12-2.14: +32 artifacts, 5.14 GB, 159 s (x86_64 torch 2.15 environment with
the nvcc 13.2 wheels, the aarch64 torch 2.15 wheels, and the emulated check environment's
aarch64 CUDA libraries); the lock then holds 274 artifacts.

    .venv/bin/python benchmarks/toolchain_fetch.py [--fetch-only]
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
PARTS = """
let p = import {repo}/nix/toolchains/pinned/parts.nix {{ system = "x86_64-linux"; }};
in [ p.runtime p.cc p.python p.driver ] ++ builtins.attrValues p.envs
   ++ builtins.filter (x: x != null) (builtins.attrValues p.cudas)
"""


def main() -> None:
    tmp = Path(tempfile.mkdtemp(prefix="kb-fetch-bench-", dir="/var/tmp"))
    try:
        store = tmp / "root"
        env = {**os.environ, "KERNEL_BUILDER_STATE_DIR": str(tmp / "state")}
        env["PYTHONPATH"] = str(REPO / "python")  # this checkout's kernel_builder
        env["NIX_CONFIG"] = f"store = {store}\n" + env.get("NIX_CONFIG", "")
        kb = [sys.executable, "-m", "kernel_builder"]

        def fetch(*args: str) -> tuple[dict, float]:
            start = time.perf_counter()
            done = subprocess.run([*kb, "toolchain", "fetch", "--json", *args], env=env, capture_output=True, text=True)
            if done.returncode != 0:
                sys.exit(f"toolchain fetch {' '.join(args)} failed:\n{done.stderr[-3000:]}")
            return json.loads(done.stdout), time.perf_counter() - start

        lock = json.loads((REPO / "nix" / "toolchain-lock.json").read_text())
        fetch_s, total_bytes, total_added = 0.0, 0, 0
        for key, environment in lock["requests"]["buildSets"].items():
            report, seconds = fetch("--build-set", key)
            fetch_s, total_bytes, total_added = fetch_s + seconds, total_bytes + report["added_bytes"], total_added + len(report["added"])
            print(f"first fetch of {key} ({environment}): +{len(report['added'])} artifact(s), "
                  f"{report['added_bytes'] / 1e9:.2f} GB, {seconds:.1f}s")
        report, seconds = fetch()
        fetch_s, total_bytes, total_added = fetch_s + seconds, total_bytes + report["added_bytes"], total_added + len(report["added"])
        print(f"first fetch of the rest (CLI environment): +{len(report['added'])} artifact(s), {report['added_bytes'] / 1e9:.2f} GB, {seconds:.1f}s")
        print(f"first fetch, total: {total_added} artifact(s), {total_bytes / 1e9:.2f} GB, {fetch_s:.1f}s")
        expr = tmp / "parts.nix"
        expr.write_text(PARTS.format(repo=REPO))
        nix_env = {**env, "NIX_CONFIG": env["NIX_CONFIG"] + "\nexperimental-features = nix-command flakes\n"
                   "build-users-group =\nsubstituters =\nsandbox = true\n"}
        if "--fetch-only" not in sys.argv[1:]:
            start = time.perf_counter()
            subprocess.run(["nix-build", "--no-out-link", "-j", "2", "--cores", "1", str(expr)], env=nix_env,
                           capture_output=True, text=True, check=True)
            realise_s = time.perf_counter() - start
            print(f"first realisation of the toolchain derivations: {realise_s:.1f}s")
        again, cached_s = fetch()
        if again["added"]:
            sys.exit(f"the second fetch added {len(again['added'])} artifact(s)")
        print(f"cached fetch: {cached_s:.2f}s ({len(again['present'])} present)")
        print(f"ratio: {cached_s / fetch_s:.3f}")
    finally:
        subprocess.run(["chmod", "-R", "u+w", str(tmp)], check=False)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
