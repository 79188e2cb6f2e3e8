"""Reading small input files defensively and replacing files atomically.

Input files (build.toml, kernels.lock, pyproject.toml) are read by the CLI from paths a
user or an attacker chose. A FIFO would block forever, ``/dev/zero`` would read forever,
a symlink loop or a directory raises an ``OSError``, and bytes that are not UTF-8 raise
``UnicodeDecodeError``. ``read_text`` turns all of these into one ``OSError``-free
answer: the text, or an ``UnreadableFile`` saying what is wrong. ``write_atomic``
replaces a file through a temporary file in the same directory, so a reader or a crash
sees the old file or the new one, never half of either; every file kernel-builder replaces
(build.toml, locks, metadata.json, state records, cache stamps) goes through it.

``walk_inside`` is the one rule for the file sets a command copies, hashes or uploads (a
kernel's sources, tests and benchmarks; a built variant): a symlink may point only inside
the directory it belongs to (``boundary``), and everything read is a regular file. A link
out (``tests/hfcache -> ~/.cache/huggingface``, ``notes.txt -> /etc/passwd``) would carry a
host file into the Nix store, ``build/`` or the Hub; a FIFO or device would block or read
forever; a link to a directory above itself would be followed forever. Each is an
``UnsafeFile`` naming the path, and ``read_regular`` reads a file it found with a bound.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

__all__ = [
    "MAX_INPUT_BYTES",
    "UnreadableFile",
    "UnsafeFile",
    "check_inside",
    "content_dir",
    "is_temporary",
    "read_regular",
    "read_text",
    "temporary_owner",
    "unwritable",
    "walk_inside",
    "write_atomic",
]

MAX_INPUT_BYTES = 1 << 20  # 1 MiB: a build.toml or lock file is a few kB
# Patterns as text: re compiles one on first use (and caches it), not at every start-up.
# write_atomic's temporary files: `.NAME.pid<PID>.<12 hex>.tmp` (`.NAME.<12 hex>.tmp` before
# the owner was named). A process killed between write and rename leaves one behind.
_TEMPORARY = r"^\..+?\.(?:pid(\d+)\.)?[0-9a-f]{12}\.tmp$"


def is_temporary(name: str) -> bool:
    """Whether a file name is one of ``write_atomic``'s temporary files (never content)."""
    return re.match(_TEMPORARY, name) is not None


def temporary_owner(name: str) -> int | None:
    """The pid that made the temporary file ``name`` (``None``: unknown or not one)."""
    match = re.match(_TEMPORARY, name)
    return int(match[1]) if match and match[1] else None


class UnreadableFile(Exception):
    """The file cannot be read as text; ``reason`` says why, ``line``/``column`` where."""

    def __init__(self, reason: str, line: int | None = None, column: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.line = line
        self.column = column


class UnsafeFile(Exception):
    """``path`` may not be read as part of a file set: ``reason`` says why (see the module docstring)."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"{path} {reason}")
        self.path = path
        self.reason = reason


def _inside(real: str, boundary: str) -> bool:
    return real == boundary or real.startswith(boundary.rstrip(os.sep) + os.sep)


def check_inside(path: Path, boundary: Path, *, what: str = "the kernel directory") -> os.stat_result:
    """The ``stat`` of ``path`` (links followed) when ``walk_inside`` would read it (or walk
    it), else ``UnsafeFile``: for the single files of a file set."""
    return _judge(path, os.path.realpath(boundary), what)


def _judge(path: Path, boundary: str, what: str) -> os.stat_result:
    if os.path.islink(path):
        target = os.readlink(path)
        real = os.path.realpath(path)
        if not _inside(real, boundary):
            raise UnsafeFile(path, f"is a symlink to {target}, which resolves to {real}, outside {what} {boundary}")
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise UnsafeFile(path, f"is a symlink to {os.readlink(path)}, which does not exist (a dangling link)") from None
    except OSError as exc:  # ELOOP: a link to itself or a cycle of links
        raise UnsafeFile(path, f"cannot be read: {exc.strerror or exc}") from None
    if not (stat.S_ISREG(info.st_mode) or stat.S_ISDIR(info.st_mode)):
        raise UnsafeFile(path, f"is {_kind(info.st_mode)}, expected a regular file or a directory")
    return info


def walk_inside(
    top: Path,
    boundary: Path,
    *,
    what: str = "the kernel directory",
    skip_dir: Callable[[str], bool] = lambda name: False,
    follow_dir_links: bool = True,
) -> Iterator[tuple[str, Path, bool]]:
    """``(path relative to top, path, linked)`` of every regular file under ``top``, sorted.

    Every entry is judged first: a symlink whose target resolves outside ``boundary`` (the
    directory ``what`` names), a dangling link, a link cycle, a FIFO, socket or device, and
    a link to a directory above itself are each an ``UnsafeFile`` (no file is opened to
    tell). Links to files inside are files; links to directories inside are followed when
    ``follow_dir_links`` (what is found there is ``linked``), else left out. ``skip_dir``
    names directories to leave out (``__pycache__``).
    """
    real_boundary = os.path.realpath(boundary)
    if not stat.S_ISDIR(_judge(top, real_boundary, what).st_mode):
        raise UnsafeFile(top, "is not a directory")
    yield from _walk_inside(top, "", real_boundary, what, skip_dir, follow_dir_links, False, frozenset())


def _walk_inside(
    directory: Path,
    rel: str,
    boundary: str,
    what: str,
    skip_dir: Callable[[str], bool],
    follow: bool,
    linked: bool,
    above: frozenset[str],
) -> Iterator[tuple[str, Path, bool]]:
    above = above | {os.path.realpath(directory)}
    try:
        names = sorted(os.listdir(directory))
    except OSError as exc:
        raise UnsafeFile(directory, f"cannot be listed: {exc.strerror or exc}") from None
    for name in names:
        path = directory / name
        info = _judge(path, boundary, what)
        if stat.S_ISREG(info.st_mode):
            yield f"{rel}{name}", path, linked
            continue
        if skip_dir(name):
            continue
        is_link = os.path.islink(path)
        real = os.path.realpath(path) if is_link else ""
        if is_link and (real in above or _inside(os.path.realpath(directory), real)):
            raise UnsafeFile(path, f"is a symlink to {os.readlink(path)}, a directory above it (a symlink loop)")
        if is_link and not follow:
            continue
        yield from _walk_inside(path, f"{rel}{name}/", boundary, what, skip_dir, follow, linked or is_link, above)


def read_regular(path: Path) -> bytes:
    """The bytes of the regular file at ``path``: opened without blocking, checked to be a
    regular file once open, and read no further than the size it had (``UnsafeFile`` when it
    is not one, or grew while it was read)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise UnsafeFile(path, f"cannot be read: {exc.strerror or exc}") from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise UnsafeFile(path, f"is {_kind(info.st_mode)}, expected a regular file")
        data = handle.read(info.st_size + 1)
    if len(data) != info.st_size:
        raise UnsafeFile(path, f"changed while it was read ({info.st_size} bytes, then {len(data)})")
    return data


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def _position(data: bytes, offset: int) -> tuple[int, int]:
    """1-based line and column (in characters) of byte ``offset``."""
    before = data[:offset]
    line = before.count(b"\n") + 1
    start = before.rfind(b"\n") + 1
    column = len(before[start:].decode("utf-8", errors="replace")) + 1
    return line, column


def read_text(path: Path, *, limit: int = MAX_INPUT_BYTES) -> str:
    """The UTF-8 text of the regular file at ``path`` (symlinks followed), at most ``limit`` bytes.

    Raises ``FileNotFoundError`` when nothing is there, else ``UnreadableFile``.
    """
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise
    except OSError as exc:  # ELOOP, EACCES, ENAMETOOLONG, ENOTDIR...
        raise UnreadableFile(f"cannot read: {exc.strerror or exc}") from None
    if not stat.S_ISREG(info.st_mode):
        raise UnreadableFile(f"is {_kind(info.st_mode)}, expected a regular file")
    if info.st_size > limit:
        raise UnreadableFile(f"is {info.st_size} bytes; the limit is {limit} bytes")
    try:
        # O_NONBLOCK: if the path was swapped for a FIFO after the stat, open does not hang.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise UnreadableFile(f"cannot read: {exc.strerror or exc}") from None
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise UnreadableFile("is not a regular file")
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise UnreadableFile(f"is larger than the limit of {limit} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line, column = _position(data, exc.start)
        raise UnreadableFile(f"is not UTF-8 text: byte 0x{data[exc.start]:02x} cannot be decoded", line, column) from None


def write_atomic(path: Path, data: str | bytes, *, mode: int | None = None) -> None:
    """Replace ``path`` with ``data`` (text as UTF-8) through a temporary file in the same
    directory, fsync and ``os.replace``.

    The file gets ``mode`` when given, else the mode of the file it replaces, else what
    ``open`` gives a new file (0o666 less the umask). A symlink at ``path`` is followed: its
    target is replaced, the link stays a link.
    """
    import tempfile  # lazy: tempfile (with shutil and random) costs start-up time that read_text's callers never need

    path = Path(os.path.realpath(path)) if os.path.islink(path) else Path(path)
    if mode is None and path.exists():
        mode = path.stat().st_mode & 0o7777
    fd, tmp = _create_temporary(path)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data.encode("utf-8") if isinstance(data, str) else data)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def _create_temporary(path: Path) -> tuple[int, str]:
    """A new file beside ``path``, created like ``open`` creates one (so the umask applies;
    ``tempfile.mkstemp`` would make it 0o600)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    while True:
        tmp = str(path.parent / f".{path.name}.pid{os.getpid()}.{os.urandom(6).hex()}.tmp")
        try:
            return os.open(tmp, flags, 0o666), tmp
        except FileExistsError:
            continue


def unwritable(directory: Path) -> str | None:
    """Why files cannot be created in ``directory`` (made when missing), else ``None``.

    A real probe (create and remove a file), not ``os.access``: root passes ``access`` on a
    mode-555 directory, and only a write tells a read-only mount or a full disk.
    """
    try:
        os.makedirs(directory, exist_ok=True)
        fd, tmp = _create_temporary(Path(directory) / "probe")
        os.close(fd)
        os.unlink(tmp)
    except OSError as exc:
        return exc.strerror or str(exc)
    return None


def content_dir(base: Path, files: Sequence[tuple[str, bytes]], *, keep: int = 24) -> Path:
    """``base/<digest>`` holding ``files`` (relative path, bytes), named by their content:
    reused (and touched) when it exists, else written beside it and renamed into place, so
    a reader never sees half a directory. Only the ``keep`` most recently used stay."""
    import hashlib  # lazy: hashlib's OpenSSL start-up is paid only by the commands that write one
    import shutil  # lazy: as hashlib

    digest = hashlib.sha256()
    for rel, data in files:
        digest.update(rel.encode() + b"\0" + hashlib.sha256(data).digest())
    target = base / digest.hexdigest()[:20]
    if target.is_dir():
        os.utime(target)
        return target
    tmp = base / f".{target.name}.pid{os.getpid()}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    for rel, data in files:
        dest = tmp / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(data)
    try:
        os.rename(tmp, target)
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)  # another process won the race: same content
    entries = sorted((p for p in base.iterdir() if p.is_dir() and not p.name.startswith(".")), key=lambda p: p.stat().st_mtime)
    for old in entries[:-keep]:
        shutil.rmtree(old, ignore_errors=True)
    return target
