"""``kernel-builder toolchain fetch``: seed the Nix store with the pinned artifacts, offline.

Each artifact of the lock is downloaded with its ordinary client (``apt-get download``
for ``.deb`` files, ``pip download`` for wheels), checked against the lock's sha256, and
added with ``nix-store --add-fixed sha256``: the store path is then exactly the one the
fixed-output derivation in ``nix/toolchains/pinned.nix`` names, so Nix treats it as
already fetched. Artifacts already in the store are skipped (idempotent); a file whose
hash differs is refused before anything is added for it. One file lock per state
directory keeps concurrent runs from racing. Everything goes through Nix's own commands, so
the store seeded is the one Nix is pointed at (``NIX_CONFIG``'s ``store = local?root=DIR``,
``NIX_REMOTE``, a daemon), not necessarily ``/nix/store`` on this file system.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import attrs
from filelock import FileLock, Timeout

from kernel_builder import _children
from kernel_builder.errors import ConfigError, NixError
from kernel_builder.nix import invalid_paths, nix_argv, nix_env, run_nix, shell_command
from kernel_builder.toolchain.pinned.clients import apt_arch_args, extract_seed, nar_sha256, pip_env, pip_platform_args, run_tool, wheel_machine
from kernel_builder.toolchain.pinned.lockfile import Artifact, Seed, ToolchainLock
from kernel_builder.toolchain.pinned.roots import register_roots
from kernel_builder.state import clean_stale_scratch, scratch_dir, state_dir

__all__ = ["FetchReport", "download_debs", "fetch", "sha256_file"]

log = logging.getLogger(__name__)


@attrs.frozen
class FetchReport:
    """What one fetch did: store paths added (and their bytes), and those already there."""

    added: tuple[str, ...]
    present: tuple[str, ...]
    seconds: float
    added_bytes: int = 0


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _add_fixed(file: Path, expected: str, *, recursive: bool = False) -> None:
    args = ["--add-fixed", *(["--recursive"] if recursive else []), "sha256", str(file)]
    got = run_nix(args, program="nix-store").stdout.strip()
    if got != expected:  # cannot happen once the hash matched; guard the path formula anyway
        raise NixError(f"nix-store --add-fixed gave {got}, but the lock names {expected}")


def _verified(file: Path, artifact: Artifact) -> Path:
    """``file`` renamed to the artifact's store name, once its sha256 matches the lock."""
    got = sha256_file(file)
    if got != artifact.sha256:
        raise ConfigError(
            f"{artifact.kind} {artifact.name} {artifact.version} ({artifact.file}) has sha256 {got}, "
            f"but the toolchain lock pins {artifact.sha256}; nothing was added to the store for it",
            hint="the download is corrupt or the lock is stale: retry, or regenerate the lock with `kernel-builder toolchain lock`",
        )
    named = file.parent / "named" / artifact.key
    named.parent.mkdir(exist_ok=True)
    os.replace(file, named)
    return named


def _apt_hint(names: list[str]) -> str:
    """What to run when ``apt-get download`` finds no package: its package lists, for every
    architecture the lock names (``name:arm64`` needs arm64's lists)."""
    return ("check that this machine reaches its Debian mirror and that apt has package lists for these "
            f"architectures: run `apt-get {' '.join(apt_arch_args(names))} update` once")


_REACH = "check that this machine reaches its Debian mirror and pip index (run `apt-get update` once)"


def download_debs(artifacts: list[Artifact], into: Path) -> dict[str, Path]:
    """``apt-get download NAME=VERSION`` of each artifact into ``into``: key -> downloaded file."""
    if not artifacts:
        return {}
    into.mkdir(parents=True, exist_ok=True)
    names = [a.name for a in artifacts]
    run_tool(["apt-get", *apt_arch_args(names), "download", "-q", *[f"{a.name}={a.version}" for a in artifacts]],
             "apt-get download", cwd=into, hint=_apt_hint(names))
    files = {}
    for artifact in artifacts:
        package, _, arch = artifact.name.partition(":")  # libc6:arm64 -> libc6_*_arm64.deb
        ends = (f"_{arch}.deb",) if arch else ("_amd64.deb", "_all.deb")
        candidates = [p for p in into.glob(f"{package}_*.deb") if p.name.endswith(ends)]
        if len(candidates) != 1:
            raise ConfigError(f"apt-get download {artifact.name}={artifact.version} left {[p.name for p in candidates]}")
        files[artifact.key] = candidates[0]
    return files


def _download_wheels(artifacts: list[Artifact], into: Path, python: str) -> dict[str, Path]:
    if not artifacts:
        return {}
    into.mkdir(parents=True, exist_ok=True)
    # pip resolves even with --no-deps: two versions of one project need two calls.
    # `===` is string equality: `torch===2.13.0` is never answered with 2.13.0+cpu.
    batches: list[list[Artifact]] = []
    for artifact in artifacts:
        batch = next((b for b in batches if all(a.name != artifact.name for a in b)), None)
        if batch is None:
            batches.append(batch := [])
        batch.append(artifact)
    for batch in batches:
        for machine in sorted({wheel_machine(a.file) for a in batch}):  # an aarch64 wheel needs aarch64 tags
            run_tool(["python3", "-m", "pip", "download", "--no-deps", "--quiet", "--disable-pip-version-check", "-d", str(into),
                      *pip_platform_args(python, machine), *[f"{a.name}==={a.version}" for a in batch if wheel_machine(a.file) == machine]],
                     "pip download", cwd=into, hint=_REACH, env=pip_env())
    files = {}
    by_name = {p.name.replace("%2B", "+"): p for p in into.iterdir() if p.is_file()}
    for artifact in artifacts:
        path = by_name.get(artifact.file)
        if path is None:
            raise ConfigError(
                f"pip download {artifact.name}=={artifact.version} did not give {artifact.file} (got {sorted(by_name)[:8]})",
                hint="regenerate the lock with `kernel-builder toolchain lock`",
            )
        files[artifact.key] = path
    return files


def fetch(
    lock: ToolchainLock,
    build_sets: list[str] | None = None,
    *,
    state: Path | None = None,
    on_progress: Callable[[str, int, int], None] | None = None,
    system: str | None = None,
) -> FetchReport:
    """Make every artifact of ``build_sets`` (all pinned sets when ``None``) valid in the store,
    for the toolchains of ``system`` (the lock's own by default, or a native host's:
    ``aarch64-linux``)."""
    started = time.monotonic()
    artifacts = lock.artifacts_for(build_sets, system)
    seed = lock.seed_of(system)
    state = state or state_dir()
    lock_file = state / "locks" / "toolchain-fetch.lock"
    lock_file.parent.mkdir(parents=True, exist_ok=True)
    with _held(FileLock(str(lock_file))):
        for stale in clean_stale_scratch("fetch", state):
            log.info(f"removed {stale}, left by a toolchain fetch that was killed")
        wanted = [a.store_path for a in artifacts] + ([seed.store_path] if seed else [])
        missing = set(invalid_paths(wanted))
        todo = [a for a in artifacts if a.store_path in missing]
        total = len(todo) + (1 if seed and seed.store_path in missing else 0)
        step = 0
        added_bytes = 0

        def tick(label: str) -> None:
            nonlocal step
            step += 1
            if on_progress is not None:
                on_progress(label, step, total)

        if on_progress is not None:
            on_progress("", 0, total)
        work = scratch_dir("fetch", state)
        try:
            python = lock.requests.get("python", {}).get("version", "3.11")
            debs = download_debs([a for a in todo if a.kind == "deb"], work / "debs")
            wheels = _download_wheels([a for a in todo if a.kind == "wheel"], work / "wheels", python)
            downloaded = debs | wheels
            for artifact in todo:
                named = _verified(downloaded[artifact.key], artifact)
                added_bytes += named.stat().st_size
                _add_fixed(named, artifact.store_path)
                if seed is None or artifact.key != seed.deb:  # the seed is taken from this file below
                    named.unlink()
                tick(artifact.file)
            if seed is not None and seed.store_path in missing:
                _add_seed(seed, lock, work)
                tick(seed.name)
        finally:
            _remove(work)
        register_roots(lock.path, wanted, state=state)
    added = tuple(sorted(missing))
    present = tuple(sorted(set(wanted) - missing))
    return FetchReport(added, present, time.monotonic() - started, added_bytes)


@contextlib.contextmanager
def _held(lock: FileLock) -> Iterator[None]:
    """Hold the fetch lock; say so when another fetch (or build) holds it, instead of
    waiting silently."""
    try:
        lock.acquire(timeout=0)
    except Timeout:
        log.warning(f"waiting for another `kernel-builder toolchain fetch` to finish (it holds {lock.lock_file})")
        lock.acquire()
    try:
        yield
    finally:
        lock.release()


def _remove(work: Path) -> None:
    """The scratch directory, made writable first (the seed directory is read-only)."""
    for path in (work, *work.rglob("*")):
        if path.is_dir() and not path.is_symlink():
            path.chmod(0o755)
    shutil.rmtree(work, ignore_errors=True)


def _store_copy(store_path: str, into: Path) -> Path:
    """A copy of the store file ``store_path`` read through Nix (``nix store cat``), so it
    works for any store Nix is pointed at (``NIX_CONFIG``'s ``store = local?root=DIR``, a
    daemon), whose files need not be at ``store_path`` on this file system."""
    into.parent.mkdir(parents=True, exist_ok=True)
    argv = nix_argv("store", "cat", store_path)
    with open(into, "wb") as out, _children.supervised(argv, env=nix_env(), stdin=subprocess.DEVNULL, stdout=out,
                                                        stderr=subprocess.PIPE) as proc:
        _, stderr = proc.communicate()
    if proc.returncode != 0:
        raise NixError(f"`{shell_command(argv)}` failed (exit {proc.returncode}):\n{stderr.decode(errors='replace')[-2000:]}",
                       hint="check that the store Nix is pointed at holds it: rerun `kernel-builder toolchain fetch`")
    return into


def _add_seed(seed: Seed, lock: ToolchainLock, work: Path) -> None:
    """The seed directory out of its (now stored, verified) ``.deb``, checked by NAR hash:
    the file this fetch downloaded, else the store's copy read through Nix."""
    deb = work / "debs" / "named" / seed.deb  # where _verified put it
    if not deb.is_file():
        deb = _store_copy(lock.artifacts[seed.deb].store_path, work / "seed-deb" / lock.artifacts[seed.deb].file)
    seed_dir = extract_seed(deb, seed.member, seed.name, work / "seed")
    got = nar_sha256(seed_dir)
    if got != seed.nar_sha256:
        raise ConfigError(
            f"the seed {seed.name} taken from {lock.artifacts[seed.deb].file} hashes to {got}, "
            f"but the toolchain lock pins {seed.nar_sha256}; nothing was added",
            hint="regenerate the lock with `kernel-builder toolchain lock`",
        )
    _add_fixed(seed_dir, seed.store_path, recursive=True)
