"""Helpers shared by the Nix build tests: kernel copies, the CLI, toolchain Pythons."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

import toolchains

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"
PYTHON = sys.executable
VENV_SITE = next(Path(p) for p in sys.path if p.endswith("site-packages"))

# examples/relu's x86_64-linux bundle variants the pinned toolchains build (nix/toolchain-lock.json),
# in matrix order: torch 2.13, 2.14 and 2.15, each cpu and PyPI's CUDA build (13.0, 13.0, 13.2).
# torch 2.12 is pinned too but not in the bundle: built only when asked for (PINNED_RELU_OLD).
PINNED_RELU_CPU = ["torch213-cxx11-cpu-x86_64-linux", "torch214-cxx11-cpu-x86_64-linux", "torch215-cxx11-cpu-x86_64-linux"]
PINNED_RELU_CUDA = ["torch213-cxx11-cu130-x86_64-linux", "torch214-cxx11-cu130-x86_64-linux", "torch215-cxx11-cu132-x86_64-linux"]
PINNED_RELU_OLD = ["torch212-cxx11-cpu-x86_64-linux", "torch212-cxx11-cu130-x86_64-linux"]
PINNED_RELU = sorted(PINNED_RELU_CPU + PINNED_RELU_CUDA)
# An absolute path outside the store in a derivation's builder, args or environment.
HOST_PATH = re.compile(r"(?:^|[\s:=\"'])(/(?:usr|bin|sbin|lib|lib64|root|home|tmp|opt|etc|var|work|srv|mnt|run)(?:/|$|[\s:]))")
# aarch64-linux variants the pinned toolchains cross-build on x86_64 (issue 26): built and
# import-checked under qemu, but their kernel tests do not run here (see docs/testing.md).
PINNED_RELU_CROSS_CPU = ["torch213-cxx11-cpu-aarch64-linux", "torch214-cxx11-cpu-aarch64-linux", "torch215-cxx11-cpu-aarch64-linux"]
PINNED_RELU_CROSS_CUDA = ["torch213-cxx11-cu130-aarch64-linux", "torch214-cxx11-cu130-aarch64-linux", "torch215-cxx11-cu132-aarch64-linux"]
PINNED_RELU_BUILT = sorted(PINNED_RELU + PINNED_RELU_CROSS_CPU + PINNED_RELU_CROSS_CUDA)
PINNED_RELU_OLD_CROSS = ["torch212-cxx11-cpu-aarch64-linux", "torch212-cxx11-cu130-aarch64-linux"]
# Every variant of relu a kernel flake can build (bundle or not): what its per-variant outputs list.
PINNED_RELU_BUILDABLE = sorted(PINNED_RELU_BUILT + PINNED_RELU_OLD + PINNED_RELU_OLD_CROSS)


def flake_variants(build, build_sets, system: str = "x86_64-linux") -> list:
    """The variants (``MatrixVariant``) a kernel flake lists on ``system``, in its order: the
    matrix of that system, then the arch variants of each system the lock cross-builds there
    (``requests.targets``; variant-set.nix lists those beside its own)."""
    from kernel_builder.toolchain.pinned.lockrequests import cross_build_sets
    from kernel_builder.variants.matrix import matrix

    variants = list(matrix(build, build_sets, system).variants)
    for target in sorted(cross_build_sets()):
        if target != system:
            variants += [v for v in matrix(build, build_sets, target).variants if not v.variant.is_noarch]
    return variants

FLAKE = """{
  inputs.kernel-builder.url = "path:%s";
  outputs = { self, kernel-builder }:
    kernel-builder.lib.genKernelFlakeOutputs { inherit self; path = ./.; };
}
""" % REPO


@contextlib.contextmanager
def environ_set(values: Mapping[str, str]) -> Iterator[None]:
    """``values`` in ``os.environ`` for the block, then the old values back (for module-scoped
    fixtures, which cannot use ``monkeypatch``; in-process flake preparation reads them)."""
    saved = {key: os.environ.get(key) for key in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def pinned_tvm_ffi_site(system: str = "x86_64-linux") -> Path:
    """The lock's apache-tvm-ffi (`check:tvm-ffi`) as a site-packages directory, built if
    needed; asked of the pinned provider (nix/toolchains/pinned.nix), as the flake does."""
    from kernel_builder import nix

    expr = f'(import {REPO}/nix/toolchains/pinned.nix {{ system = "{system}"; }}).importCheckPaths."tvm-ffi"'
    site = nix.run_nix(["eval", "--impure", "--raw", "--expr", expr]).stdout.strip()
    drv = nix.run_nix(["eval", "--impure", "--raw", "--expr", f"builtins.head (builtins.attrNames (builtins.getContext ({expr})))"]).stdout
    subprocess.run(["nix-store", "--realise", drv.strip()], env=nix.nix_env(), capture_output=True, check=True)
    return Path(site)


def snapshot_builder(dest: Path) -> Path:
    """A copy of this checkout's flake.nix, nix/ and python/kernel_builder: tests point
    KERNEL_BUILDER_ROOT at it so that edits made to the working tree while they run do not
    change the derivations they compare."""
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copy2(REPO / "flake.nix", dest / "flake.nix")
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(REPO / "nix", dest / "nix", ignore=ignore)
    shutil.copytree(REPO / "python" / "kernel_builder", dest / "python" / "kernel_builder", ignore=ignore)
    return dest


def snapshot_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The environment of a CLI run against a committed snapshot of this builder, with a
    state directory of its own (and no PYTHONPATH, so the CLI imports the snapshot's)."""
    builder = snapshot_builder(tmp_path_factory.mktemp("builder"))
    environ = {
        **os.environ,
        "KERNEL_BUILDER_STATE_DIR": str(tmp_path_factory.mktemp("kb-state")),
        "KERNEL_BUILDER_ROOT": str(builder),
    }
    environ.pop("PYTHONPATH", None)
    return environ


def salt_sources(kernel: Path) -> None:
    """Append a unique comment to every source, so its variants were never built before
    (tests that expect Nix to build must not find them in the store from an earlier run)."""
    salt = f"test salt {time.time_ns()}"
    for path in kernel.rglob("*"):
        if "tests" in path.relative_to(kernel).parts or not path.is_file():
            continue
        if path.suffix in (".cpp", ".cu", ".h", ".cuh"):
            path.write_text(path.read_text() + f"\n// {salt}\n")
        elif path.suffix == ".py":
            path.write_text(path.read_text() + f"\n# {salt}\n")


def copy_kernel(name: str, dest: Path, *, git: bool = True, salt: bool = False) -> Path:
    """A copy of examples/NAME with a flake.nix, committed in its own git repository."""
    shutil.copytree(EXAMPLES / name, dest, ignore=shutil.ignore_patterns("build", "__pycache__", "result*"))
    if not (dest / "flake.nix").exists():
        (dest / "flake.nix").write_text(FLAKE)
    if salt:
        salt_sources(dest)
    if git:
        commit_all(dest, init=True)
    return dest


_WILL_BUILD = re.compile(r"derivations? will be built:\n((?:  /nix/store/\S+\n?)+)")


def dry_run(installables: list[str], *, flake_args: tuple[str, ...] | list[str] = (), cwd: str | None = None) -> list[str]:
    """The derivations ``nix build --dry-run`` says it would build (empty: all up to date)."""
    from kernel_builder.nix import run_nix

    done = run_nix(["build", "--dry-run", "--no-link", *flake_args, *installables], cwd=cwd)
    match = _WILL_BUILD.search(done.stderr)
    return sorted(line.strip() for line in match.group(1).splitlines()) if match else []


def make_dirty(kernel: Path) -> None:
    """Edit a tracked file that no variant depends on: the unique id becomes the short commit +
    "_dirty" and then stays the same while sources are edited, as for an author at work."""
    with (kernel / "flake.nix").open("a") as f:
        f.write("# local edit\n")


def commit_all(directory: Path, *, init: bool = False) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    if init:
        subprocess.run(["git", "init", "-q", str(directory)], check=True)
    subprocess.run(["git", "-C", str(directory), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(directory), "commit", "-qm", "snapshot"], check=True, env=env)


def kernel_builder(*args: str, env: dict[str, str], cwd: Path | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [PYTHON, "-m", "kernel_builder", *args], capture_output=True, text=True, env=env, cwd=cwd, check=False
    )
    if check and done.returncode != 0:
        raise AssertionError(f"kernel-builder {' '.join(args)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr[-6000:]}")
    return done


def torch214_python(state: Path) -> str:
    """A Python with torch 2.14.1 (CUDA 13.0 wheel), as `.ci/setup` records it."""
    return toolchains.torch214_python()


def run_with_kernels(python: str, code: str) -> str:
    """Run CODE in PYTHON with PyPI `kernels` importable (appended after its own packages,
    so that Python's torch wins over the test venv's)."""
    prelude = f"import sys; sys.path.append({str(VENV_SITE)!r})\n"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    done = subprocess.run([python, "-c", prelude + code], capture_output=True, text=True, env=env, check=False)
    if done.returncode != 0:
        raise AssertionError(f"{python} failed:\n{done.stdout}\n{done.stderr[-4000:]}")
    return done.stdout
