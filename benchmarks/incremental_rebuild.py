"""One-source commit rebuild vs cold build, per-object, of a kernel in git (docs/nix.md "One
derivation per translation unit"; issue 46).

Generates the 16-source CPU kernel of tests/many_kernel.py (salted: nothing of it is in
the store) in its own git repository and commits it, builds its torch213 CPU variant through
Nix at -j 2, edits one source and commits, builds again. The ops identifier carries the
commit, so the rebuild must build exactly that source's measurement (its deps step and
their merge) and object, the binding's object (the ops identifier reaches it), the link and
the variant, checked from Nix's output; its wall time over the cold build's is the ratio.
Both times include evaluation, which builds the plan and the deps steps (import from
derivation). Goal: <= 0.15.

    .venv/bin/python benchmarks/incremental_rebuild.py [--no-git]

``--no-git``: the kernel outside git (its identity is build.toml's hash, which a source edit
does not change), as this benchmark measured before: then the binding is not rebuilt.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _per_object_bench import SYSTEM, _BUILDING, builder, many

from kernel_builder import nix
from many_kernel import CPU_VARIANT, source_name


def git(kernel: Path, *args: str) -> None:
    env = {"GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.invalid", "GIT_COMMITTER_NAME": "b",
           "GIT_COMMITTER_EMAIL": "b@example.invalid", "PATH": "/usr/bin:/bin", "HOME": str(kernel)}
    subprocess.run(["git", *args], cwd=kernel, env=env, check=True, capture_output=True)


def commit(kernel: Path, message: str) -> None:
    git(kernel, "add", "-A")
    git(kernel, "commit", "-q", "-m", message)


def timed(kernel: Path) -> tuple[float, list[str]]:
    attr = f".#legacyPackages.{SYSTEM}.redistributable.{CPU_VARIANT}"
    start = time.perf_counter()
    done = nix.run_nix(["build", "-L", "--no-link", "-j", "2", "--cores", "1", attr], cwd=kernel)
    return time.perf_counter() - start, _BUILDING.findall(done.stderr)


def main() -> None:
    in_git = "--no-git" not in sys.argv[1:]
    with tempfile.TemporaryDirectory(prefix="kb-incr-") as tmp:
        kernel = many(Path(tmp), builder(Path(tmp)))
        if in_git:
            git(kernel, "init", "-q")
            commit(kernel, "many")
        nix.run_nix(["flake", "lock"], cwd=kernel)  # the lock file outside the timing
        if in_git:
            commit(kernel, "lock")
        cold, built = timed(kernel)
        print(f"cold build: {cold:.1f}s, {len(built)} derivation(s)")
        edited = kernel / source_name(7)
        edited.write_text(edited.read_text() + "// an edit\n")
        if in_git:
            commit(kernel, "edit one source")
        warm, built = timed(kernel)
        print(f"one-source {'commit ' if in_git else ''}rebuild: {warm:.1f}s, built {', '.join(sorted(built))}")
        objects = sorted(n.removeprefix(f"0-obj-many-{CPU_VARIANT}-") for n in built if "-obj-" in n)
        mine = sorted(n.removeprefix(f"many-{CPU_VARIANT}") for n in built if n.startswith(f"many-{CPU_VARIANT}"))
        expected = [source_name(7).replace("/", "-"), *(["torch-ext-torch_binding.cpp"] if in_git else [])]
        if objects != expected or mine != ["", "-deps", f"-deps-{source_name(7).replace('/', '-')}", "-link"]:
            sys.exit(f"expected that source's deps and object, the binding's object, the link and the variant, got {built}")
    print(f"ratio: {warm / cold:.3f}")


if __name__ == "__main__":
    main()
