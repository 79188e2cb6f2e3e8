"""``kernel-builder build --local``: build with the torch you have, no Nix.

The variants are those ``list-variants`` lists for this machine that the toolchain
Python's torch can build: its torch version (or any for the kernel's stable ABI), CPU
always, CUDA when that torch is a CUDA build of the variant's CUDA version; noarch
variants always. The others are skipped with a note saying why. ``--variant NAME`` builds
a name anyway (a backend without a toolchain here then generates its build files and fails).

The build is incremental: each variant compiles in a directory kept under the state
directory (``local_build_root``), so the next build recompiles only what changed
(``driver.compile``); ``clean`` (``--clean``) starts each variant from an empty one.
"""

from __future__ import annotations

import hashlib
import logging  # noqa: F401  imported before our at-fork hooks are registered: see _terminate
import os
import signal
import sys
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path

from kernel_builder.config.model import Build
from kernel_builder.errors import BuildError
from kernel_builder.pyenv import Toolchain, probe_toolchain
from kernel_builder.driver.job import Options, VariantJob
from kernel_builder.driver.variant import VariantResult, build_variant
from kernel_builder.flake.kernel import Kernel
from kernel_builder.flake.selection import select_local_variants
from kernel_builder.state import writable_state_dir
from kernel_builder.tree.layout import refuse_linked_tree, remove_own_staging
from kernel_builder.variants.buildsets import load_build_sets
from kernel_builder.variants.host import Platform, host_platform
from kernel_builder.variants.matrix import matrix
from kernel_builder.variants.names import Kind, parse
from kernel_builder.variants.system import toolchain_system

__all__ = ["build_local", "local_build_root", "local_variants"]


def local_variants(
    build: Build, toolchain: Toolchain, backends: Iterable[str] | None = None, *, system: str | None = None
) -> tuple[list[str], list[str]]:
    """(variant names to build, skip notes) for this toolchain on this machine: the variants
    ``list-variants`` lists for ``system`` (default: this machine) that the toolchain torch
    can build (``flake.selection.select_local_variants``). This reads the machine and the
    build sets."""
    host = host_platform()
    if system is not None and system != host.system:
        cpu, _, os_name = system.partition("-")
        host = Platform(cpu, os_name)
    listed = matrix(build, load_build_sets(), host.system)
    return select_local_variants(build, listed, toolchain_system(toolchain, host), backends)


def local_build_root(kernel_dir: Path) -> Path:
    """Where ``build --local`` keeps the build directories of the kernel in ``kernel_dir``:
    ``<state>/local-builds/<name>-<hash of its path>/``, one ``<variant>/`` each (outside
    the kernel's files, so nothing there is ever committed or packaged)."""
    kernel_dir = Path(kernel_dir).resolve()
    key = hashlib.sha256(str(kernel_dir).encode()).hexdigest()[:16]
    return writable_state_dir() / "local-builds" / f"{kernel_dir.name}-{key}"


def build_local(
    kernel: Kernel | str | Path,
    *,
    variants: Iterable[str] | None = None,
    backends: Iterable[str] | None = None,
    out_dir: str | Path | None = None,
    toolchain: str | None = None,
    cores: int | None = None,
    verbose: bool = False,
    cuda_capabilities: Sequence[str] | None = None,
    clean: bool = False,
    build_layout: str | None = None,
) -> list[VariantResult]:
    """Build ``kernel`` into ``out_dir`` (default ``kernel_dir/build``): the command's
    ``flake.kernel.Kernel`` (build.toml read once), or a kernel directory, read here.

    ``variants`` builds exactly those names; otherwise the names come from the toolchain
    (see ``local_variants``), restricted to ``backends`` when given. ``toolchain`` is the
    Python with torch (default: this interpreter). ``cores``: compile jobs per variant
    (variants are built one after another). Each variant compiles in its kept build
    directory under ``local_build_root``; ``clean`` empties it first. ``build_layout``
    (``files``/``zip``) overrides build.toml's ``[general] build-layout``.
    """
    if not isinstance(kernel, Kernel):
        kernel = Kernel.read(kernel, check_sources=True)
    kernel_dir, build = kernel.directory, kernel.build
    kernel.files  # the file-set rule a Nix build applies (no link out, no FIFO), checked before anything is built
    python = toolchain or sys.executable
    out = Path(out_dir) if out_dir is not None else kernel_dir / "build"
    if out.is_symlink():
        refuse_linked_tree(out)  # the variants go into a real build/, never through a link out
    if variants is not None:
        names = list(variants)
        for name in names:  # every name checked before anything is announced or built
            try:
                parse(name)
            except ValueError as exc:
                raise BuildError(str(exc), hint="run `kernel-builder list-variants` to see valid names") from None
    else:
        toolchain_facts = probe_toolchain(python)
        names, skipped = local_variants(build, toolchain_facts, backends)
        if not names:
            raise BuildError(
                f"no variant of this kernel can be built with the torch {toolchain_facts.torch_version} of {python}"
                + "".join(f"\n  {note}" for note in skipped),
                hint="pass --toolchain-python with a torch that fits build.toml (`kernel-builder list-variants` "
                "lists the variants), or choose --backend",
            )
        if skipped:
            print(
                f"kernel-builder: skipping {len(skipped)} listed variant(s) or build set(s) the torch "
                f"{toolchain_facts.torch_version} of {python} cannot build: "
                + ", ".join(note.split(": ", 1)[0] for note in skipped),
                file=sys.stderr,
            )
    print(f"kernel-builder: {len(names)} variant(s) selected: {', '.join(names)}", file=sys.stderr)
    # Noarch variants compile nothing: only a compiling build needs (a writable) state directory.
    work_dir = local_build_root(kernel_dir) if any(parse(name).kind is not Kind.NOARCH for name in names) else None
    created = not out.exists()
    # SIGTERM unwinds like Ctrl-C, so the staging directory of the running variant is removed.
    in_main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _terminate) if in_main else None
    try:
        return [
            build_variant(VariantJob.from_environ(kernel_dir, name, out, toolchain_python=python, options=Options(
                jobs=cores, verbose=verbose, cuda_capabilities=tuple(cuda_capabilities) if cuda_capabilities else None,
                work_dir=work_dir, clean=clean, build_layout=build_layout)), build=build)
            for name in names
        ]
    except BaseException:
        remove_own_staging(out)
        if created and out.is_dir() and not any(out.iterdir()):  # a failed first build leaves no empty build/
            out.rmdir()
        raise
    finally:
        if in_main:
            signal.signal(signal.SIGTERM, previous)


def _terminate(signum: int, frame: object) -> None:
    """SIGTERM: unwind as SystemExit, so the running variant's staging directory is removed.

    Python runs a signal handler between any two bytecodes, also inside the at-fork callbacks
    every ``subprocess`` spawn runs (logging's lock release), where an exception is printed as
    "Exception ignored" and dropped: the build went on and exited 0. A signal that arrives
    during a fork is therefore sent again once the fork's callbacks are done."""
    if _fork.active:
        _fork.pending = signum
        return
    raise SystemExit(128 + signum)


class _ForkState:
    """Whether this process is inside its at-fork callbacks, and a signal held meanwhile."""

    active = False
    pending: int | None = None


_fork = _ForkState()


def _before_fork() -> None:
    _fork.active = True


def _after_fork_in_child() -> None:  # a child that does not exec handles its signals itself
    _fork.active, _fork.pending = False, None


def _after_fork_in_parent() -> None:
    _fork.active = False
    signum, _fork.pending = _fork.pending, None
    if signum is not None:  # delivered again from outside the callbacks
        threading.Timer(0.01, os.kill, (os.getpid(), signum)).start()


# Registered after logging's (imported above): "before" hooks run in reverse order of
# registration and "after" hooks in order, so ours enclose logging's lock handling.
os.register_at_fork(before=_before_fork, after_in_parent=_after_fork_in_parent, after_in_child=_after_fork_in_child)
