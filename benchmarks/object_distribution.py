"""One variant's objects spread over two remote builders vs one (docs/nix.md "One derivation
per translation unit").

The 16-source CPU kernel of tests/many_kernel.py, its torch213 CPU variant built with `nix
build -j 0 --builders ...` (nothing builds here) on loopback builders (tests/
remote_support.py: sshds over empty stores, one job each). A warm-up build on both copies
the toolchain closure to each, so the rounds time compiling, not that copy. Each round
salts every source and build.toml (plan, objects, link and variant are all new) and builds
on one builder, then salts again and builds on both; the objects of the second are checked
to have been built on both. Ratio: best two-builder / best one-builder wall time; goal
<= 0.65.

This machine has only 2 cores, shared by this process, the local Nix (which copies inputs
and outputs over ssh) and both builders: two builders can at best halve the compile part,
while the plan, the link, the variant and the copies stay serial.

    .venv/bin/python benchmarks/object_distribution.py [--rounds N]
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _per_object_bench import SYSTEM, builder, many, salt

from kernel_builder import nix
from many_kernel import CPU_VARIANT
from remote_support import LoopbackRemote, several, start_remote

_BUILT_ON = re.compile(r"building '/nix/store/[a-z0-9]{32}-([^']+)\.drv' on 'ssh://root@(kb-remote-\d+)'")


def timed(kernel: Path, remotes: list[LoopbackRemote], config: Path) -> tuple[float, dict[str, str]]:
    """Seconds of one -j 0 build on REMOTES, and where each derivation was built."""
    builders, env = several(remotes, config)
    attr = f".#legacyPackages.{SYSTEM}.redistributable.{CPU_VARIANT}"
    nix.run_nix(["eval", "--raw", attr + ".drvPath"], cwd=kernel)  # evaluate outside the timing
    start = time.perf_counter()
    done = subprocess.run(["nix", "build", "-L", "--no-link", "-j", "0", "--builders", builders, attr],
                          cwd=kernel, env=nix.nix_env(env), capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"build failed:\n{done.stderr[-4000:]}")
    return seconds, dict(_BUILT_ON.findall(done.stderr))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    rounds = parser.parse_args().rounds
    with tempfile.TemporaryDirectory(prefix="kb-distribution-") as tmp:
        root = Path(tmp)
        kernel = many(root, builder(root))
        remotes = [start_remote(root / f"remote{i}" / "machine") for i in range(2)]
        try:
            warm, _ = timed(kernel, remotes, root / "ssh_config")
            print(f"warm-up on both (toolchain copied to each): {warm:.1f}s")
            times: dict[int, list[float]] = {1: [], 2: []}
            for _ in range(rounds):
                for count in (1, 2):
                    salt(kernel)
                    seconds, where = timed(kernel, remotes[:count], root / "ssh_config")
                    hosts = sorted({host for name, host in where.items() if "-obj-" in name})
                    if count == 2 and len(hosts) != 2:
                        sys.exit(f"expected objects on both builders, got {hosts}")
                    times[count].append(seconds)
                    print(f"{count} builder(s): {seconds:.1f}s, objects on {', '.join(hosts)}")
        finally:
            for remote in remotes:
                remote.stop()
    print(f"one builder: best {min(times[1]):.1f}s; two builders: best {min(times[2]):.1f}s")
    print(f"ratio: {min(times[2]) / min(times[1]):.3f}")


if __name__ == "__main__":
    main()
