"""A scratch directory at a path that depends only on what is built.

Compilers leak paths into binaries: gcc through ``__FILE__`` (mapped away with
``-ffile-prefix-map``), nvcc through internal symbol names hashed from the absolute source
path. So the kernel's compiled sources are copied into ``<tmp>/kernel-builder/<key>/src``
and built in ``<key>/project`` and ``<key>/cmake-build``, where ``key`` hashes the variant,
the ops identifier and the source files. The same variant of the same source then compiles
at the same paths whatever directory it came from, which makes the output reproducible.
A file lock keeps two concurrent builds of one key apart.

``build --local`` keeps a directory per variant instead (``build_dir``): the sources are
synced into its ``src`` file by file, rewriting only those whose bytes changed, so their
modification times say what changed and Ninja rebuilds only that (``compile.compile_module``
decides whether its CMake build directory can be reused).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from filelock import FileLock

from kernel_builder._files import write_atomic
from kernel_builder.config.model import Build, Torch, TvmFfi
from kernel_builder.errors import BuildError

__all__ = ["Scratch", "build_dir", "compiled_inputs", "scratch_dir"]

_SKIP = shutil.ignore_patterns("build", "result", ".git", "__pycache__", "*.pyc")


def compiled_inputs(build: Build) -> tuple[list[str], list[str]]:
    """(files, include directories) of the kernel that a compile reads, relative to its root."""
    files = ["build.toml"]
    includes: list[str] = []
    if isinstance(build.framework, (Torch, TvmFfi)):
        files += list(build.framework.src)
        includes += list(build.framework.include or ())
    for kernel in build.kernels.values():
        files += list(kernel.src)
        includes += list(kernel.include or ())
        if kernel.cargo_manifest:
            files.append(kernel.cargo_manifest)
    return sorted(set(files)), sorted(set(includes))


def _key(source: Path, files: list[str], includes: list[str], salt: str) -> str:
    hasher = hashlib.sha256(salt.encode() + b"\0")
    for rel in files:
        path = _within(source, rel)
        hasher.update(rel.encode() + b"\0")
        hasher.update(path.read_bytes() if path.is_file() else b"<directory>" if path.is_dir() else b"<missing>")
    for rel in [*includes, *(f for f in files if _within(source, f).is_dir())]:  # a Rust src entry may be a directory
        root = _within(source, rel)
        for path in sorted(root.rglob("*")) if root.is_dir() else []:
            if path.is_file() and "__pycache__" not in path.parts:
                hasher.update(path.relative_to(source).as_posix().encode() + b"\0" + path.read_bytes())
    return hasher.hexdigest()[:16]


def _within(root: Path, rel: str) -> Path:
    """``root / rel``, refusing any ``rel`` that lands outside ``root`` (``..``, absolute, symlinks).

    The config reader refuses such paths already; this guard holds for every caller.
    """
    target = Path(os.path.normpath(root / rel))
    real_root = os.path.realpath(root)
    if not target.is_relative_to(os.path.normpath(root)) or os.path.commonpath([real_root, os.path.realpath(target)]) != real_root:
        raise BuildError(
            f"refusing source path {rel!r}: it leads outside {root}",
            hint="list only paths inside the kernel directory in build.toml (`kernel-builder check-config` shows them)",
        )
    return target


def _copy_sources(source: Path, dest: Path, files: list[str], includes: list[str]) -> None:
    for rel, origin in _wanted(source, files, includes).items():
        target = _within(dest, rel)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(origin, target)


class Scratch:
    """The scratch directory of one build; set ``keep`` to leave it for inspection."""

    def __init__(self, path: Path, keep: bool) -> None:
        self.path = path
        self.keep = keep

    @property
    def src(self) -> Path:
        return self.path / "src"


@contextlib.contextmanager
def scratch_dir(build: Build, source: Path, variant: str, salt: str, *, keep: bool = False) -> Iterator[Scratch]:
    """Yield a locked, fresh ``<tmp>/kernel-builder/<variant>-<key>`` holding ``src/``.

    It is removed afterwards unless ``keep`` is set (before or during the build).
    """
    files, includes = compiled_inputs(build)
    root = Path(tempfile.gettempdir()) / "kernel-builder"
    root.mkdir(parents=True, exist_ok=True)
    path = root / f"{variant}-{_key(source, files, includes, f'{variant}:{salt}')}"
    with FileLock(str(path) + ".lock"):
        shutil.rmtree(path, ignore_errors=True)
        path.mkdir()
        scratch = Scratch(path, keep)
        try:
            _copy_sources(source, scratch.src, files, includes)
            yield scratch
        finally:
            if not scratch.keep:
                shutil.rmtree(path, ignore_errors=True)


def _wanted(source: Path, files: list[str], includes: list[str]) -> dict[str, Path]:
    """Every file a compile reads, relative path -> the file in ``source``; a listed file that is missing is an error."""
    wanted: dict[str, Path] = {}
    trees = list(includes)
    for rel in files:
        origin = _within(source, rel)
        if origin.is_dir():  # a Rust component's src may list a directory (its crate, vendor/): all of it
            trees.append(rel)
            continue
        if not origin.is_file():
            raise BuildError(
                f"{origin} is listed in build.toml but does not exist",
                hint="fix the src list in build.toml, or add the file",
            )
        wanted[Path(rel).as_posix()] = origin
    for rel in trees:
        root = _within(source, rel)
        if not root.is_dir():
            continue
        for dirpath, dirnames, filenames in os.walk(root):
            ignored = _SKIP(dirpath, dirnames + filenames)
            dirnames[:] = sorted(d for d in dirnames if d not in ignored)
            for name in sorted(filenames):
                if name not in ignored:
                    path = Path(dirpath) / name
                    wanted.setdefault(path.relative_to(source).as_posix(), path)
    return wanted


def _sync_sources(source: Path, dest: Path, files: list[str], includes: list[str]) -> None:
    """Make ``dest`` hold exactly the compiled inputs of ``source``: a file is rewritten
    (atomically) only when its bytes differ, so an unchanged file keeps its modification
    time; files no longer listed are removed, so a deleted header is not found there, and
    so are symlinks (kernel-builder makes none)."""
    wanted = _wanted(source, files, includes)  # every path checked to stay inside ``source``
    for dirpath, dirnames, filenames in os.walk(dest):
        for name in dirnames + filenames:  # none are ours: a write through one could land anywhere
            if os.path.islink(os.path.join(dirpath, name)):
                os.unlink(os.path.join(dirpath, name))
        dirnames[:] = [d for d in dirnames if os.path.isdir(os.path.join(dirpath, d))]
    for rel, origin in wanted.items():
        target = dest / rel
        data = origin.read_bytes()
        if target.is_file() and target.read_bytes() == data:
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.is_dir():
            shutil.rmtree(target)
        write_atomic(target, data)
    for dirpath, dirnames, filenames in os.walk(dest, topdown=False):
        for name in filenames:
            path = Path(dirpath) / name
            if path.relative_to(dest).as_posix() not in wanted:
                path.unlink()
        for name in dirnames:
            path = Path(dirpath) / name
            if path.is_dir() and not path.is_symlink() and not any(path.iterdir()):
                path.rmdir()


@contextlib.contextmanager
def build_dir(build: Build, source: Path, path: Path, *, clean: bool = False) -> Iterator[Scratch]:
    """Yield the kept, locked build directory ``path`` of one variant, its ``src/`` synced
    with ``source``; ``clean`` empties it first. It stays after the build: the next build
    of the variant reuses what still holds."""
    files, includes = compiled_inputs(build)
    path.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(path) + ".lock"):
        if clean:
            shutil.rmtree(path, ignore_errors=True)
        path.mkdir(exist_ok=True)
        _sync_sources(source, path / "src", files, includes)
        yield Scratch(path, keep=True)
