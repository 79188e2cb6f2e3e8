"""Cold build per object vs the monolithic one-derivation build of the same variant.

For examples/relu and the 16-source kernel of tests/many_kernel.py (each salted twice, so
both builds are cold), builds the torch213 CPU variant through Nix at -j 2 per object
(`redistributable`) and as one derivation (`monolithic`). Prints both ratios; the last line
is the 16-source kernel's. Goals: relu <= 1.25, 16 sources <= 1.10.

    .venv/bin/python benchmarks/cold_overhead.py
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from _per_object_bench import builder, many, relu, timed_build


def main() -> None:
    ratios = {}
    with tempfile.TemporaryDirectory(prefix="kb-cold-") as tmp:
        base = Path(tmp)
        snapshot = builder(base)
        for name, make in (("relu", relu), ("many", many)):
            split, built = timed_build(make(base, snapshot, f"{name}-split"), "redistributable")
            whole, _ = timed_build(make(base, snapshot, f"{name}-whole"), "monolithic")
            ratios[name] = split / whole
            print(f"{name}: per object {split:.1f}s ({len(built)} derivations), monolithic {whole:.1f}s, "
                  f"ratio {ratios[name]:.3f}")
    print(f"ratio: {ratios['many']:.3f}")


if __name__ == "__main__":
    main()
