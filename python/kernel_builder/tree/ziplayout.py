"""The ZIP build layout: a variant's Python package as one archive, ``<id>.zip``.

With ``build-layout = "zip"`` (edition 6 build.toml, or ``kernel-builder build --layout
zip``) metadata.json says ``"build-layout": "zip"`` and the variant directory holds:

- ``<id>.zip``: the kernel's Python package (``__init__.py`` at the archive's root, the
  generated ``_ops.py``, every other file of the package that ``pyext`` lets through);
- beside it, what an archive cannot or must not hold: ``metadata.json`` (and
  ``metadata.json.sigstore``), ``symbols.json``, and the compiled module
  (``<id>.abi3.so``, a tvm-ffi kernel's ``<id>.so``): the OS loads shared libraries from
  files only, and a loader that reads the layout (PyPI ``kernels`` 0.19) searches the
  variant directory before the archive for a package's submodules.

The archive is deterministic, so a build stays bit-reproducible and its digest (which
covers the archive like any file) is the same on every machine: entries sorted by path,
each dated 1980-01-01 00:00:00 (the earliest time a zip can record), mode 0644, made on
Unix, no directory entries and no extra fields, and *stored* (not compressed), so that the
bytes depend on no zlib version. ``zipimport`` reads stored entries as it reads deflated
ones.
"""

from __future__ import annotations

import io
import stat
import zipfile
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

from kernel_builder._files import write_atomic
from kernel_builder.errors import BuildError

__all__ = [
    "BESIDE",
    "EPOCH",
    "archive_name",
    "archive_problems",
    "entries",
    "file_names",
    "is_native_library",
    "pack",
    "write_archive",
]

# Files that stay in the variant directory beside the archive (besides native libraries).
BESIDE = frozenset({"metadata.json", "metadata.json.sigstore", "symbols.json"})
# The date of every entry: zip's epoch (a zip cannot record an earlier one).
EPOCH = (1980, 1, 1, 0, 0, 0)
_FILE_MODE = stat.S_IFREG | 0o644
_UNIX = 3  # ZipInfo.create_system: the external attributes are Unix mode bits


def archive_name(module_id: str) -> str:
    """The archive's file name in the variant directory: ``<metadata id>.zip``."""
    return f"{module_id}.zip"


def is_native_library(name: str) -> bool:
    """A shared library (``x.so``, ``x.abi3.so``, ``libx.so.1``): loadable from a file only."""
    base = PurePosixPath(name).name
    return base.endswith(".so") or ".so." in base


def write_archive(path: Path, files: dict[str, bytes]) -> None:
    """Write ``files`` (relative ``/`` paths → bytes) as a deterministic zip at ``path``
    (atomically: a temporary file renamed into place)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_STORED) as archive:
        for name in sorted(files):
            info = zipfile.ZipInfo(name, date_time=EPOCH)
            info.create_system = _UNIX
            info.external_attr = _FILE_MODE << 16
            info.compress_type = zipfile.ZIP_STORED
            archive.writestr(info, files[name])
    write_atomic(path, buffer.getvalue(), mode=0o644)


def _package_files(variant_dir: Path) -> list[Path]:
    """What goes into the archive: every file of the variant directory except those that
    stay beside it, ``__pycache__`` and bytecode (sorted)."""
    found = []
    for path in sorted(variant_dir.rglob("*")):
        rel = path.relative_to(variant_dir)
        if "__pycache__" in rel.parts or path.suffix == ".pyc" or not path.is_file():
            continue
        if len(rel.parts) == 1 and (rel.name in BESIDE or is_native_library(rel.name)):
            continue
        found.append(path)
    return found


def pack(variant_dir: Path, module_id: str) -> Path:
    """Move the package files of an assembled ``files``-layout variant into ``<id>.zip``.

    Native libraries at the top and the files of ``BESIDE`` stay; a native library
    anywhere else cannot be loaded from an archive and is a ``BuildError``. Emptied
    directories are removed. Returns the archive's path."""
    if not (variant_dir / "__init__.py").is_file():
        raise BuildError(f"{variant_dir}: no __init__.py to pack into {archive_name(module_id)}")
    files = _package_files(variant_dir)
    nested = [p.relative_to(variant_dir).as_posix() for p in files if is_native_library(p.name)]
    if nested:
        raise BuildError(
            f"the zip build layout cannot ship {', '.join(nested)}: a shared library inside {archive_name(module_id)} "
            "cannot be loaded, and only the variant directory's top level holds libraries",
            hint='build with build-layout = "files", or let the kernel\'s Python package hold no shared libraries',
        )
    archive = variant_dir / archive_name(module_id)
    write_archive(archive, {p.relative_to(variant_dir).as_posix(): p.read_bytes() for p in files})
    for path in files:
        path.unlink()
    for directory in sorted((p for p in variant_dir.rglob("*") if p.is_dir()), key=lambda p: len(p.parts), reverse=True):
        if not any(directory.iterdir()):
            directory.rmdir()
    return archive


def _name_problem(name: str) -> str | None:
    """Why an entry name may not be in a kernel archive (None: it may)."""
    if not name or name.startswith("/") or "\\" in name or "\0" in name:
        return "is not a relative /-separated path"
    parts = name.rstrip("/").split("/")
    if any(part in ("", ".", "..") for part in parts):
        return "has an empty, '.' or '..' component"
    return None


def archive_problems(archive: Path) -> list[str]:
    """What is wrong with ``archive`` as a kernel archive, each a sentence; [] when nothing.

    Unreadable or not a zip; entry names that are absolute, hold ``..`` or a backslash, or
    repeat; an entry that is not a regular file or directory (a symlink)."""
    try:
        with zipfile.ZipFile(archive) as z:
            infos = z.infolist()
    except (OSError, zipfile.BadZipFile, ValueError) as exc:
        return [f"{archive.name} is not a readable zip archive ({exc})"]
    problems = []
    seen: set[str] = set()
    for info in infos:
        why = _name_problem(info.filename)
        if why is not None:
            problems.append(f"{archive.name}: entry {info.filename!r} {why}")
            continue
        if info.filename in seen:
            problems.append(f"{archive.name}: entry {info.filename!r} appears more than once")
        seen.add(info.filename)
        mode = info.external_attr >> 16
        if info.create_system == _UNIX and mode and not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
            problems.append(f"{archive.name}: entry {info.filename!r} is not a regular file (mode {oct(mode)})")
    return problems


def entries(archive: Path) -> Iterator[tuple[str, bytes]]:
    """(name, bytes) of every file entry of a readable archive, in archive order
    (directory entries left out)."""
    with zipfile.ZipFile(archive) as z:
        for info in z.infolist():
            if not info.is_dir():
                yield info.filename, z.read(info)


def file_names(archive: Path) -> list[str]:
    """The names of the file entries of a readable archive."""
    with zipfile.ZipFile(archive) as z:
        return [info.filename for info in z.infolist() if not info.is_dir()]
