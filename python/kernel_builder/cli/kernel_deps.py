"""``kernel-builder lock-kernel-deps``: lock build.toml's ``kernel-depends`` for the build."""

from __future__ import annotations

from pathlib import Path

import click

from kernel_builder.cli import output

__all__ = ["lock_kernel_deps"]


@click.command("lock-kernel-deps")
@click.argument("directory", default=".", type=click.Path(exists=True, file_okay=False, path_type=Path))
def lock_kernel_deps(directory: Path) -> None:
    """Lock the kernel-depends of DIRECTORY/build.toml into DIRECTORY/kernels.lock.

    Each dependency (repo-id with a version or a revision) is resolved on the Hub
    (HF_ENDPOINT, HF_TOKEN apply) to the commit it names now; its build/ directory at that
    commit is downloaded and hashed as Nix hashes a fixed-output path (sha256 of the NAR,
    SRI form). The file has upstream's format (a list of {"dependency", "lock": {"commit",
    "hash"}}). `kernel-builder build` fetches exactly these trees into the Nix store; a
    dependency build.toml declares but the lock lacks stops the build with this command as
    the fix. Commit kernels.lock with build.toml.

    \b
    Example:
      kernel-builder lock-kernel-deps examples/kernel-deps
    """
    from kernel_builder.flake.kernel_deps import lock_kernel  # lazy: huggingface_hub and config are for locking, not --help

    def progress(n: int, total: int, dep: object) -> None:
        spec = f"version {dep.version}" if dep.version is not None else f"revision {dep.revision}"  # type: ignore[attr-defined]
        output.note(f"[{n}/{total}] locking {dep.repo_id} ({spec})")  # type: ignore[attr-defined]

    locks = lock_kernel(directory, progress=progress)
    for entry in locks:
        output.result(f"{entry.dependency.repo_id} {entry.commit} {entry.hash}")
    output.note(f"wrote {directory / 'kernels.lock'} ({len(locks)} dependenc{'y' if len(locks) == 1 else 'ies'})")
