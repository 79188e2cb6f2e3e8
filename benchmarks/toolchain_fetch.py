"""Pinned toolchain: first fetch, first realisation, and the cached fetch.

Uses a fresh chroot Nix store (`store = <tmp>/root`), so nothing is there yet:
1. `kernel-builder toolchain fetch` downloads and adds every artifact of the lock;
2. `nix build` realises the toolchain derivations of every pinned build set (runtime,
   compiler, Python, the driver and torch environments, the CUDA home) in the sandbox;
3. `kernel-builder toolchain fetch` again: everything is present, nothing is added.
Prints the three times; the ratio is cached fetch / first fetch (it should be tiny).

    .venv/bin/python benchmarks/toolchain_fetch.py
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
        env.pop("PYTHONPATH", None)
        env["NIX_CONFIG"] = f"store = {store}\n" + env.get("NIX_CONFIG", "")
        kb = str(Path(sys.executable).parent / "kernel-builder")
        start = time.perf_counter()
        first = json.loads(subprocess.run([kb, "toolchain", "fetch", "--json"], env=env, capture_output=True,
                                          text=True, check=True).stdout)
        fetch_s = time.perf_counter() - start
        print(f"first fetch: {fetch_s:.1f}s, {len(first['added'])} artifact(s) added")
        expr = tmp / "parts.nix"
        expr.write_text(PARTS.format(repo=REPO))
        nix_env = {**env, "NIX_CONFIG": env["NIX_CONFIG"] + "\nexperimental-features = nix-command flakes\n"
                   "build-users-group =\nsubstituters =\nsandbox = true\n"}
        start = time.perf_counter()
        subprocess.run(["nix-build", "--no-out-link", "-j", "2", "--cores", "1", str(expr)], env=nix_env,
                       capture_output=True, text=True, check=True)
        realise_s = time.perf_counter() - start
        print(f"first realisation of the toolchain derivations: {realise_s:.1f}s")
        start = time.perf_counter()
        again = json.loads(subprocess.run([kb, "toolchain", "fetch", "--json"], env=env, capture_output=True,
                                          text=True, check=True).stdout)
        cached_s = time.perf_counter() - start
        if again["added"]:
            sys.exit(f"the second fetch added {len(again['added'])} artifact(s)")
        print(f"cached fetch: {cached_s:.2f}s ({len(again['present'])} present)")
        print(f"ratio: {cached_s / fetch_s:.3f}")
    finally:
        subprocess.run(["chmod", "-R", "u+w", str(tmp)], check=False)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
