"""The flake input `kernel-builder build` hands to a kernel flake.

A kernel flake's `kernel-builder` input is overridden (``--override-input``) with a
content-addressed copy of kernel-builder's Nix library and Python package (from the checkout
or from the copy an installed wheel carries, see ``kernel_builder._source``), plus
``state/toolchains.json`` (the recorded host toolchain) and ``state/kernel.json`` (the
kernel's unique id and commit, from ``kernel_builder.identity``). So every build uses the
current builder, never a stale locked one, and neither the builder checkout nor the
kernel's tracked files are touched: the copy lives in the state directory.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs

from kernel_builder._git import head, untracked
from kernel_builder._source import BuilderSource, builder_source
from kernel_builder.config.loading import read_file
from kernel_builder.errors import ConfigError, NixError
from kernel_builder.identity import KernelIdentity, kernel_identity
from kernel_builder.toolchain.host.discover import discover, is_stale, load_toolchains, toolchains_path, write_toolchains
from kernel_builder.toolchain.state import state_dir

__all__ = [
    "PreparedFlake",
    "builder_root",
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


def needed_files(kernel_dir: Path) -> list[str]:
    """Files and directories of the kernel that its variant derivations read
    (``Build.input_paths`` over every backend); just build.toml when it does not parse."""
    try:
        return list(read_file(kernel_dir).build.input_paths())
    except ConfigError:
        return ["build.toml"]


def kernel_flake_ref(kernel_dir: Path, needed: list[str]) -> str:
    """The flake reference for the kernel directory.

    Nix reads a directory inside a git work tree through git: only tracked files exist for
    it. When a file the build needs is untracked (or the repository has no commit yet),
    use ``path:`` instead, which copies the whole directory.
    """
    kernel_dir = kernel_dir.resolve()
    if head(kernel_dir) is None or untracked(kernel_dir, [*needed, "flake.nix", "build.toml"]):
        return f"path:{kernel_dir}"
    return str(kernel_dir)


def prepare_flake_input(
    toolchains: dict[str, Any] | None,
    identity: KernelIdentity,
    *,
    state: Path | None = None,
    options: dict[str, Any] | None = None,
) -> Path:
    """Write (or reuse) the flake input directory and return its path. ``options`` (build
    options the variant derivations see, e.g. ``cudaCapabilities``) go to
    ``state/build-options.json`` when given."""
    state = state or state_dir()
    files = [(rel, path.read_bytes()) for rel, path in _checked_source().files()]
    if toolchains is not None:
        files.append(("state/toolchains.json", (json.dumps(toolchains, indent=2, sort_keys=True) + "\n").encode()))
    files.append(("state/kernel.json", (json.dumps(identity.as_record(), sort_keys=True) + "\n").encode()))
    if options:
        files.append(("state/build-options.json", (json.dumps(options, sort_keys=True) + "\n").encode()))
    digest = hashlib.sha256()
    for rel, data in files:
        digest.update(rel.encode() + b"\0" + hashlib.sha256(data).digest())
    base = state / "flake-inputs"
    target = base / digest.hexdigest()[:20]
    if target.is_dir():
        os.utime(target)
        return target
    tmp = base / f".{target.name}.{os.getpid()}.tmp"
    if tmp.exists():
        shutil.rmtree(tmp)
    for rel, data in files:
        dest = tmp / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(data)
    try:
        os.rename(tmp, target)
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)  # another process won the race: same content
    _prune(base)
    return target


def _prune(base: Path) -> None:
    entries = sorted((p for p in base.iterdir() if p.is_dir() and not p.name.startswith(".")), key=lambda p: p.stat().st_mtime)
    for old in entries[:-_KEEP]:
        shutil.rmtree(old, ignore_errors=True)


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
    kernel_dir: Path,
    extra_pythons: tuple[str, ...] | list[str] = (),
    *,
    state: Path | None = None,
    toolchain: str = "pinned",
    cuda_capabilities: Sequence[str] | None = None,
) -> PreparedFlake:
    """Write the flake input and return the kernel's flake ref and override args.

    With ``toolchain="host"`` the host toolchain is recorded first (rediscovered when it
    changed on disk or new Pythons are given) and handed to the flake; with the default
    ``"pinned"`` nothing of this machine is recorded: the flake uses the pinned toolchains.
    ``cuda_capabilities`` (``build --cuda-capabilities``) narrows the CUDA variants' archs.
    """
    record = None
    if toolchain == "host":
        record = load_toolchains(state=state)
        if record is None or is_stale(record) or extra_pythons:
            previous = [env["python"] for env in (record or {}).get("environments", []) if Path(env["python"]).exists()]
            record = discover([*extra_pythons, *previous], state=state)
            write_toolchains(record, state=state)
    identity = kernel_identity(kernel_dir)
    options = {"cudaCapabilities": list(cuda_capabilities)} if cuda_capabilities else None
    flake_input = prepare_flake_input(record, identity, state=state, options=options)
    args = ("--override-input", "kernel-builder", f"path:{flake_input}", "--no-write-lock-file")
    ref = kernel_flake_ref(kernel_dir, needed_files(kernel_dir))
    return PreparedFlake(ref, args, identity, toolchains_path(state))
