"""The flake input `kernel-builder build` hands to a kernel flake.

A kernel flake's `kernel-builder` input is overridden (``--override-input``) with a
content-addressed copy of kernel-builder's Nix library and Python package (from the checkout
or from the copy an installed wheel carries, see ``kernel_builder._source``), plus
``state/toolchains.json`` (the recorded host toolchain) and ``state/kernel.json`` (the
kernel's unique id and commit, from ``kernel_builder.identity``). So every build uses the
current builder, never a stale locked one, and neither the builder checkout nor the
kernel's tracked files are touched: the copy lives in the state directory. The kernel
itself reaches Nix as a copy of the files its build reads (``flake.kernel_source``).
"""

from __future__ import annotations

import errno
import json
import os
import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs

from kernel_builder._source import BuilderSource, builder_source
from kernel_builder.tree.layout import refuse_linked_tree
from kernel_builder._files import content_dir, unwritable
from kernel_builder.errors import BuildError, KernelBuilderError, NixError
from kernel_builder.flake.kernel import Kernel, as_kernel
from kernel_builder.flake.kernel_source import prepare_kernel_source
from kernel_builder.nix import flake_path
from kernel_builder.identity import KernelIdentity
from kernel_builder.flake.kernel_deps import stage_for_build
from kernel_builder.toolchain.host.discover import discover, is_stale, load_toolchains, toolchains_path, write_toolchains
from kernel_builder.toolchain.host.record import ToolchainsRecord, to_json
from kernel_builder.toolchain.pinned.lockfile import load_lock
from kernel_builder.state import state_dir, writable_state_dir

__all__ = [
    "PreparedFlake",
    "builder_root",
    "check_output_writable",
    "kernel_flake_ref",
    "needed_files",
    "prepare_flake_input",
    "prepare_kernel_flake",
]

_KEEP = 24  # prepared inputs kept in the state directory


def builder_root() -> Path:
    """The directory holding kernel-builder's flake.nix and nix/: ``$KERNEL_BUILDER_ROOT``,
    the copy an installed wheel carries, or the checkout this package is imported from."""
    source = _checked_source()
    return source.flake_dir


def _checked_source() -> BuilderSource:
    source = builder_source()
    if not source.complete:
        raise NixError(
            f"kernel-builder's flake.nix was not found at {source.flake_dir}",
            hint="install kernel-builder from a wheel or a source checkout (pip install python/); use --local otherwise",
        )
    return source


def needed_files(kernel: Kernel | Path) -> list[str]:
    """Files and directories of the kernel that its variant derivations read
    (``Build.input_paths`` over every backend); just build.toml when it does not parse."""
    build = as_kernel(kernel).build_or_none
    return ["build.toml"] if build is None else list(build.input_paths())


def kernel_flake_ref(kernel: Kernel | Path, *, state: Path | None = None) -> str:
    """The flake reference for the kernel directory: ``path:`` of a copy of exactly the files
    the build reads (``flake.kernel_source``), never the directory itself, whose ``build/``,
    keys and untracked files Nix would copy into the world-readable store."""
    return f"path:{flake_path(prepare_kernel_source(as_kernel(kernel), state or state_dir()))}"


def prepare_flake_input(
    toolchains: ToolchainsRecord | None,
    identity: KernelIdentity,
    *,
    state: Path | None = None,
    options: dict[str, Any] | None = None,
    test_select: str | None = None,
    test_limits: dict[str, int] | None = None,
    kernel_deps: list[dict[str, str]] | None = None,
) -> Path:
    """Write (or reuse) the flake input directory and return its path. ``options`` (build
    options the variant derivations see, e.g. ``cudaCapabilities``) go to
    ``state/build-options.json`` when given; ``test_select`` is ``kernel-builder test -k``'s
    expression and ``test_limits`` its ``testTimeout``/``runTimeout``, read only by the
    kernel-test runs."""
    state = state or state_dir()
    files = [(rel, path.read_bytes()) for rel, path in _checked_source().files()]
    if toolchains is not None:
        files.append(("state/toolchains.json", (json.dumps(to_json(toolchains), indent=2, sort_keys=True) + "\n").encode()))
    files.append(("state/kernel.json", (json.dumps(identity.as_record(), sort_keys=True) + "\n").encode()))
    if options:
        files.append(("state/build-options.json", (json.dumps(options, sort_keys=True) + "\n").encode()))
    if kernel_deps:  # the locked kernel-depends trees, already in the store (flake.kernel_deps)
        files.append(("state/kernel-deps.json", (json.dumps(kernel_deps, sort_keys=True) + "\n").encode()))
    test_args = {**({"select": test_select} if test_select is not None else {}), **(test_limits or {})}
    if test_args:
        files.append(("state/test-args.json", (json.dumps(test_args, sort_keys=True) + "\n").encode()))
    return content_dir(state / "flake-inputs", files, keep=_KEEP)


def check_output_writable(kernel_dir: Path) -> None:
    """The build installs into ``kernel_dir/build``: refuse a read-only place before Nix spends
    minutes building what could not be installed, and a ``build`` link out of the kernel
    directory (``tree.layout.refuse_linked_tree``), which the install would write through."""
    if (kernel_dir / "build").is_symlink():
        refuse_linked_tree(kernel_dir / "build")
    target = kernel_dir / "build" if (kernel_dir / "build").is_dir() else kernel_dir
    reason = unwritable(target)
    if reason:
        raise BuildError(
            f"cannot write the built variants into {kernel_dir / 'build'}: {target} is not writable ({reason})",
            hint=f"build a writable copy of the kernel (cp -r {shlex.quote(str(kernel_dir))} /tmp/kernel), or make "
            f"{target} writable; `nix build .#bundle` builds into the Nix store without writing here",
        )


@attrs.frozen
class PreparedFlake:
    """How to call nix on a kernel directory: its flake ref and the override arguments."""

    ref: str
    flake_args: tuple[str, ...]
    identity: KernelIdentity
    toolchains: Path

    def installable(self, attr: str) -> str:
        return f"{self.ref}#{attr}"


def prepare_kernel_flake(
    kernel: Kernel | Path,
    extra_pythons: tuple[str, ...] | list[str] = (),
    *,
    state: Path | None = None,
    toolchain: str = "pinned",
    cuda_capabilities: Sequence[str] | None = None,
    test_select: str | None = None,
    test_limits: dict[str, int] | None = None,
    build_layout: str | None = None,
) -> PreparedFlake:
    """Write the flake input and return the kernel's flake ref and override args.

    ``kernel`` is the command's ``Kernel`` (build.toml read once, at the command line); a
    bare path is read here (``Kernel.lenient``: a build.toml that does not parse reaches
    Nix, which reports it).
    With ``toolchain="host"`` the host toolchain is recorded first (rediscovered when it
    changed on disk or new Pythons are given) and handed to the flake; with the default
    ``"pinned"`` nothing of this machine is recorded: the flake uses the pinned toolchains.
    ``cuda_capabilities`` (``build --cuda-capabilities``) narrows the CUDA variants' archs;
    ``build_layout`` (``build --layout``) sets the variants' build layout over build.toml's.
    """
    kernel = as_kernel(kernel)
    state = state or writable_state_dir()
    record = None
    kernel.refuse_host_specific_flags(toolchain)
    if toolchain == "pinned":
        load_lock(_checked_source().flake_dir / "nix" / "toolchain-lock.json")  # the lock Nix reads, validated first
    if toolchain == "host":
        record = load_toolchains(state=state)
        if record is None or is_stale(record) or extra_pythons:
            previous = [env.python for env in (record.environments if record else ()) if Path(env.python).exists()]
            record = discover([*extra_pythons, *previous], state=state)
            write_toolchains(record, state=state)
    identity = kernel.identity
    options = {
        **({"cudaCapabilities": list(cuda_capabilities)} if cuda_capabilities else {}),
        **({"buildLayout": build_layout} if build_layout else {}),
    } or None
    kernel_deps = stage_for_build(kernel, state / "kernel-deps")
    try:
        flake_input = prepare_flake_input(record, identity, state=state, options=options, test_select=test_select,
                                          test_limits=test_limits, kernel_deps=kernel_deps)
        args = ("--override-input", "kernel-builder", f"path:{flake_path(flake_input)}", "--no-write-lock-file")
        ref = kernel_flake_ref(kernel, state=state)
    except OSError as exc:
        if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
            raise
        raise state_full_error(state, exc) from None
    return PreparedFlake(ref, args, identity, toolchains_path(state))


def state_full_error(state: Path, exc: OSError) -> KernelBuilderError:
    """The state directory's file system is full: name it, and say what frees space there
    (``nix-store --gc`` only when the store shares that file system)."""
    try:
        shared = os.stat(state).st_dev == os.stat("/nix/store").st_dev
    except OSError:
        shared = False
    where = f"{exc.filename} in " if exc.filename else ""
    also = "; `nix-store --gc` frees space there too (the Nix store is on the same file system)" if shared else ""
    return KernelBuilderError(
        f"cannot write {where}the state directory {state}: {exc.strerror} (kernel-builder copies the kernel "
        "and its own flake there before every build)",
        hint=f"free space on the file system holding {state} (`df -h {shlex.quote(str(state))}`), or set "
        f"KERNEL_BUILDER_STATE_DIR to a directory on another file system{also}",
    )
