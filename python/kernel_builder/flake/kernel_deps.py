"""Resolve a ``kernel-depends`` entry on the Hub, fetch its ``build/`` tree at the locked
commit and add it to the Nix store as a fixed-output path (the host downloads: no network
inside a build). Thin shells over the hub layer, ``nix-hash`` and ``nix-store``.
"""

from __future__ import annotations

import base64
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from kernel_builder._files import write_atomic
from kernel_builder.config import load
from kernel_builder.config.model import KernelDependency
from kernel_builder.errors import HubError, NixError
from kernel_builder.hub.download import HubClient
from kernel_builder.flake.kernel_deps_lock import FIX, LOCK_FILE, LockedDependency, all_kernel_depends, dumps, locked_for, read_lock

if TYPE_CHECKING:
    from kernel_builder.flake.kernel import Kernel

__all__ = ["add_to_store", "fetch_tree", "fetched_store_path", "lock_dependency", "lock_kernel", "nar_hash", "resolve_commit", "stage_for_build", "store_name", "stored_path"]

_COMMIT = re.compile(r"[0-9a-f]{40}")


def resolve_commit(client: HubClient, dep: KernelDependency) -> str:
    """The commit ``dep`` names now: branch ``v<version>``'s head, or its revision's commit."""
    if dep.version is not None:
        versions = client.version_branches(dep.repo_id)
        commit = versions.get(dep.version)
        if commit is None:
            listing = ", ".join(f"v{v}" for v in sorted(versions)) or "none"
            raise HubError(
                f"kernel-depends: {dep.repo_id} has no version {dep.version} (branches: {listing})",
                hint="pick a version the repository has in build.toml's kernel-depends",
            )
        return commit
    assert dep.revision is not None
    return dep.revision if _COMMIT.fullmatch(dep.revision) else client.commit_of(dep.repo_id, dep.revision)


def store_name(dep: KernelDependency, commit: str) -> str:
    """The store path's name: the same for the host's add and the build's fixed-output path."""
    return "kernel-dep-" + re.sub(r"[^A-Za-z0-9+._?=-]", "-", dep.repo_id.replace("/", "--")) + "-" + commit[:12]


def fetch_tree(client: HubClient, dep: KernelDependency, commit: str, dest_parent: Path) -> Path:
    """``dest_parent/<store_name>/build/...``: the dependency's variants at ``commit`` as plain
    files (the Hub cache holds links into its blob store, which would hash differently)."""
    dest = dest_parent / store_name(dep, commit)
    with tempfile.TemporaryDirectory(dir=dest_parent, prefix=".fetch-") as tmp:
        snapshot = client.download_variants(dep.repo_id, commit, None, Path(tmp) / "cache")
        if not (snapshot / "build").is_dir():
            raise HubError(
                f"kernel-depends: {dep.repo_id} at {commit} has no build/ directory (no built variants)",
                hint="depend on a version of a kernel that was built and uploaded",
            )
        staged = Path(tmp) / "tree"
        shutil.copytree(snapshot / "build", staged / "build", symlinks=False)
        if dest.exists():
            shutil.rmtree(dest)
        staged.rename(dest)
    return dest


def nar_hash(path: Path) -> str:
    """The SRI sha256 hash of ``path``'s NAR serialisation (what a recursive fixed-output
    path is named by)."""
    out = _run(["nix-hash", "--type", "sha256", str(path)])
    return "sha256-" + base64.b64encode(bytes.fromhex(out.strip())).decode()


def add_to_store(path: Path) -> str:
    """Add ``path`` to the store as a recursive sha256 fixed-output path; its store path."""
    return _run(["nix-store", "--add-fixed", "--recursive", "sha256", str(path)]).strip()


def lock_dependency(client: HubClient, dep: KernelDependency, work: Path) -> LockedDependency:
    """``dep`` resolved to a commit and the hash of its fetched ``build/`` tree."""
    commit = resolve_commit(client, dep)
    tree = fetch_tree(client, dep, commit, work)
    return LockedDependency(dep, commit, nar_hash(tree))


def lock_kernel(
    kernel_dir: Path, client: HubClient | None = None, progress: Callable[[int, int, KernelDependency], None] | None = None
) -> list[LockedDependency]:
    """Lock every ``kernel-depends`` entry of ``kernel_dir/build.toml`` into ``kernel_dir/kernels.lock``."""
    depends = all_kernel_depends(load(kernel_dir / "build.toml"))
    client = client or HubClient()
    locks = []
    with tempfile.TemporaryDirectory(prefix="kernel-deps-") as work:
        for n, dep in enumerate(depends, start=1):
            if progress is not None:
                progress(n, len(depends), dep)
            locks.append(lock_dependency(client, dep, Path(work)))
    write_atomic(kernel_dir / LOCK_FILE, dumps(locks))
    return locks


def fetched_store_path(client: HubClient, lock: LockedDependency, work: Path) -> str:
    """The store path of ``lock``'s tree: fetched from the Hub and added unless the store already
    has it. A tree whose hash is not the locked one is an error with the fix."""
    tree = fetch_tree(client, lock.dependency, lock.commit, work)
    actual = nar_hash(tree)
    if actual != lock.hash:
        raise HubError(
            f"kernels.lock: {lock.dependency.repo_id} at {lock.commit}: the fetched build/ has hash {actual}, "
            f"the lock says {lock.hash}",
            hint=f"the repository changed under that commit's content, or the lock was edited: {FIX}",
        )
    try:
        return add_to_store(tree)
    finally:
        shutil.rmtree(tree, ignore_errors=True)


def _run(argv: list[str]) -> str:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, check=False)
    except FileNotFoundError as exc:
        raise NixError(f"{argv[0]} not found", hint="install Nix (docs/nix.md)") from exc
    if done.returncode != 0:
        raise NixError(f"`{' '.join(argv)}` failed: {done.stderr.strip()[-1500:]}")
    return done.stdout


def _sri_hex(sri: str) -> str:
    return base64.b64decode(sri.removeprefix("sha256-")).hex()


def stored_path(lock: LockedDependency) -> str | None:
    """The store path of ``lock``'s tree when the store already has it (no download then)."""
    path = _run(["nix-store", "--print-fixed-path", "--recursive", "sha256", _sri_hex(lock.hash),
                 store_name(lock.dependency, lock.commit)]).strip()
    valid = subprocess.run(["nix-store", "--check-validity", path], capture_output=True, check=False)
    return path if valid.returncode == 0 else None


def stage_for_build(kernel: Kernel, work: Path, client: HubClient | None = None) -> list[dict[str, str]]:
    """Put every locked ``kernel-depends`` tree of ``kernel`` (``flake.kernel.Kernel``: its
    build.toml, read once) into the store (fetching only what is missing) and describe them
    for the flake (``state/kernel-deps.json``: repo id, store name, hash). ``ConfigError``
    with the fix when build.toml and kernels.lock disagree."""
    if kernel.build_or_none is None:
        return []  # the build reports an invalid build.toml itself, as it always did
    kernel_dir = kernel.directory
    depends = all_kernel_depends(kernel.build)
    locks = locked_for(depends, read_lock(kernel_dir) if depends else None, kernel_dir / LOCK_FILE,
                       kernel_dir / "build.toml")
    out = []
    for lock in locks:
        if stored_path(lock) is None:
            work.mkdir(parents=True, exist_ok=True)
            fetched_store_path(client or HubClient(), lock, work)
        out.append({"repo-id": lock.dependency.repo_id, "name": store_name(lock.dependency, lock.commit),
                    "hash": lock.hash})
    return out
