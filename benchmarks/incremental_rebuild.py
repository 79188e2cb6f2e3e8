"""One-source edit rebuild vs cold build, per-object (docs/nix.md "One derivation per
translation unit").

Generates the 16-source CPU kernel of tests/many_kernel.py (salted: nothing of it is in
the store), builds its torch213 CPU variant through Nix at -j 2, edits one source, builds
again. The rebuild must build exactly that source's object, the link and the variant (checked
from Nix's output); its wall time over the cold build's is the ratio. Goal: <= 0.15.

    .venv/bin/python benchmarks/incremental_rebuild.py
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from _per_object_bench import builder, many, timed_build

from many_kernel import source_name


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="kb-incr-") as tmp:
        kernel = many(Path(tmp), builder(Path(tmp)))
        cold, built = timed_build(kernel, "redistributable")
        print(f"cold build: {cold:.1f}s, {len(built)} derivation(s)")
        edited = kernel / source_name(7)
        edited.write_text(edited.read_text() + "// an edit\n")
        warm, built = timed_build(kernel, "redistributable")
        print(f"one-source rebuild: {warm:.1f}s, built {', '.join(sorted(built))}")
        objects = [n for n in built if "-obj-" in n]
        if len(objects) != 1 or len(built) != 3:
            sys.exit(f"expected one object, the link and the variant to be rebuilt, got {built}")
    print(f"ratio: {warm / cold:.3f}")


if __name__ == "__main__":
    main()
