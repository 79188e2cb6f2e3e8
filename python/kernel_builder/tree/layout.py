"""The build tree: where the built variants of a kernel are, how they get there, their digests.

Every command that works on a built tree (hash, check, upload) looks in the same places,
in order: ``DIR/result`` (a ``nix build`` link), ``DIR/build`` (a copied or local build),
then ``DIR`` itself. The first of those holding sub-directories with a ``metadata.json``
wins; those sub-directories, sorted by name, are the variants.

Builds stage each variant in a hidden ``.<variant>.pid<PID>.<random>.tmp`` beside it and
rename it into place. A build killed in between leaves the staging directory behind; the
next build removes those whose process is gone (``clean_stale_staging``), and until then
every command that reads the tree refuses it, naming them and the command that removes
them. Any other sub-directory without a ``metadata.json`` is refused too, rather than
being left out of an upload without a word.

Every way a variant enters a tree goes through ``staging_dir`` and ``publish``: the
one-variant build assembles it there, ``kernel-builder build`` copies a Nix output there
(``install_variant``). ``hash_variants`` writes digests, for ``build`` and ``hash`` alike.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import re
import shlex
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

from kernel_builder._files import UnsafeFile, check_inside, is_temporary, temporary_owner
from kernel_builder.tree.digest import compute_digest
from kernel_builder.errors import BuildError, CheckError
from kernel_builder.tree.metadata import Metadata, write_digest

__all__ = [
    "NOT_VARIANTS",
    "clean_stale_staging",
    "clean_stale_temporaries",
    "discover_variants",
    "hash_tree",
    "hash_variants",
    "install_variant",
    "no_room_hint",
    "publish",
    "refuse_linked_tree",
    "remove_own_staging",
    "remove_staging",
    "stale_staging",
    "stale_temporaries",
    "staging_dir",
    "staging_prefix",
    "tree_size",
    "variant_dirs",
]

log = logging.getLogger(__name__)

NOT_VARIANTS = frozenset({"benchmarks"})  # sub-directories of build/ that are not variants
_OWNER = re.compile(r"\.pid(\d+)\.")


def staging_prefix(variant: str) -> str:
    """The name prefix of this process's staging directories for ``variant``."""
    return f".{variant}.pid{os.getpid()}."


def _is_staging(name: str) -> bool:
    return name.startswith(".") and (name.endswith(".tmp") or ".old." in name)


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's live process
        return True
    return True


def _staging_dirs(build_dir: str | os.PathLike[str]) -> list[tuple[Path, int | None]]:
    """The staging directories under ``build_dir``, each with the pid of the build that made
    it (``None``: an older build's name, without one)."""
    root = Path(build_dir)
    if not root.is_dir():
        return []
    found = []
    for entry in sorted(root.iterdir()):
        if _is_staging(entry.name) and entry.is_dir() and not entry.is_symlink():
            owner = _OWNER.search(entry.name)
            found.append((entry, None if owner is None else int(owner[1])))
    return found


def stale_staging(build_dir: str | os.PathLike[str]) -> list[Path]:
    """Staging directories under ``build_dir`` whose build process no longer runs."""
    return [entry for entry, owner in _staging_dirs(build_dir) if owner is None or not _alive(owner)]


def clean_stale_staging(build_dir: str | os.PathLike[str]) -> list[Path]:
    """Remove the stale staging directories under ``build_dir``; returns what was removed."""
    removed = stale_staging(build_dir)
    for path in removed:
        shutil.rmtree(path, ignore_errors=True)
    return removed


def stale_temporaries(variant_dir: str | os.PathLike[str]) -> list[Path]:
    """``write_atomic`` temporary files inside a variant whose writer no longer runs (a build
    or ``hash`` killed between writing metadata.json and renaming it)."""
    stale = []
    for path in sorted(Path(variant_dir).rglob(".*.tmp")):
        if path.is_file() and is_temporary(path.name):
            owner = temporary_owner(path.name)
            if owner is None or not _alive(owner):
                stale.append(path)
    return stale


def remove_own_staging(build_dir: str | os.PathLike[str]) -> list[Path]:
    """Remove the staging directories this process made under ``build_dir``.

    A build that unwinds (SIGTERM, Ctrl-C) removes its staging directory itself, but a
    signal can land between ``mkdtemp`` and the code that would remember the path; this
    sweep by owner pid closes that window."""
    removed = [entry for entry, owner in _staging_dirs(build_dir) if owner == os.getpid()]
    for path in removed:
        shutil.rmtree(path, ignore_errors=True)
    return removed


def clean_stale_temporaries(variant_dir: str | os.PathLike[str]) -> list[Path]:
    """Remove the stale temporary files of a variant; returns what was removed."""
    removed = stale_temporaries(variant_dir)
    for path in removed:
        path.unlink(missing_ok=True)
    return removed


def _stale_note(stale: list[Path]) -> str:
    paths = " ".join(shlex.quote(str(p)) for p in stale)
    return (
        f"{len(stale)} staging director{'y' if len(stale) == 1 else 'ies'} left by an interrupted build: "
        f"{', '.join(p.name for p in stale)}; remove with `rm -rf {paths}` (a rebuild also removes them)"
    )


def _tree_problems(build_dir: Path) -> list[str]:
    problems = []
    stale = stale_staging(build_dir)
    if stale:
        problems.append(_stale_note(stale))
    for entry in sorted(build_dir.iterdir()):
        if entry.name in NOT_VARIANTS or entry.name.startswith(".") or not entry.is_dir():
            continue
        if not (entry / "metadata.json").exists():
            problems.append(f"{entry.name}/ has no metadata.json, so it is not a built variant; rebuild it or remove the directory")
            continue
        temporaries = stale_temporaries(entry)
        if temporaries:
            paths = " ".join(shlex.quote(str(p)) for p in temporaries)
            problems.append(
                f"{entry.name}/ holds {len(temporaries)} temporary file(s) left by an interrupted write: "
                f"{', '.join(str(p.relative_to(entry)) for p in temporaries)}; remove with `rm {paths}` "
                "(`kernel-builder hash` or a rebuild also removes them)"
            )
    return problems


def variant_dirs(build_dir: str | os.PathLike[str]) -> list[Path]:
    """The sub-directories of ``build_dir`` that hold a ``metadata.json``, sorted by name."""
    root = Path(build_dir)
    if not root.is_dir():
        return []
    return sorted(
        (p for p in root.iterdir() if not p.name.startswith(".") and p.is_dir() and (p / "metadata.json").is_file()),
        key=lambda p: p.name,
    )


def discover_variants(directory: str | os.PathLike[str]) -> tuple[Path, list[Path]]:
    """``(build_dir, variant dirs)`` for a kernel directory or a build tree.

    A tree with stale staging directories or sub-directories that are not variants is
    refused as a whole (``CheckError`` listing each).
    """
    base = Path(directory)
    candidates = [base / "result", base / "build", base]
    for candidate in candidates:
        found = variant_dirs(candidate)
        if found:
            if candidate.name == "build" and os.path.islink(candidate):
                refuse_linked_tree(candidate, CheckError)
            problems = _tree_problems(candidate)
            if problems:
                listing = "\n  ".join(problems)
                raise CheckError(
                    f"{candidate} is not a clean build tree:\n  {listing}",
                    hint="every sub-directory of a build tree is a variant with a metadata.json (benchmarks/ aside)",
                )
            return candidate, found
    looked = ", ".join(str(c) for c in candidates)
    stale = stale_staging(base / "build") or stale_staging(base)
    extra = f"; {_stale_note(stale)}" if stale else ""
    raise CheckError(
        f"no built variants found (looked in {looked} for sub-directories with a metadata.json){extra}",
        hint="build the kernel first (`kernel-builder build`) or pass the directory that holds build/",
    )


# -- putting variants into a tree -------------------------------------------------------


def refuse_linked_tree(build_dir: Path, error: type[BuildError] | type[CheckError] = BuildError) -> None:
    """The file-set rule for the tree itself: ``build_dir`` (``DIR/build``) may be a symlink
    only to a directory inside its parent (``build -> /home/ci/.ssh`` in a kernel repository
    would make ``build`` write there and ``upload`` read there). ``DIR/result`` is Nix's
    out-link into the store and is not judged here."""
    try:
        check_inside(build_dir, build_dir.parent)
    except UnsafeFile as exc:
        raise error(
            f"{exc.path} {exc.reason}",
            hint=f"remove the link (rm {shlex.quote(str(build_dir))}); a build writes its variants into a real build/ directory",
        ) from None


def staging_dir(out_dir: Path, variant: str) -> Path:
    """A fresh hidden directory beside ``out_dir/variant`` (same filesystem, so rename works);
    ``BuildError`` when ``out_dir`` is a link out of its parent directory."""
    if os.path.islink(out_dir):
        refuse_linked_tree(out_dir, BuildError)
    out_dir.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=staging_prefix(variant), suffix=".tmp", dir=out_dir))


def publish(staged: Path, final: Path) -> None:
    """Replace ``final`` with ``staged`` (rename; the old tree is removed afterwards)."""
    os.chmod(staged, 0o755)
    old = None
    if final.exists():
        old = final.with_name(f".{final.name}.pid{os.getpid()}.old.tmp")
        os.rename(final, old)
    os.rename(staged, final)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def install_variant(source: Path, build_dir: Path, name: str) -> Path:
    """Copy a built variant (a read-only Nix output) to ``build_dir/name``, writable, replacing
    only that directory; ``source`` is the variant or a tree holding ``name/``."""
    if not (source / "metadata.json").is_file():
        source = source / name
    clean_stale_staging(build_dir)  # left by a killed run
    staged = staging_dir(build_dir, name)
    first: list[OSError] = []

    def copy(src: str, dst: str) -> None:
        try:
            shutil.copy2(src, dst)
        except OSError as exc:
            first.append(exc)
            raise

    try:
        shutil.copytree(source, staged, symlinks=True, dirs_exist_ok=True, copy_function=copy)
        for path in [staged, *staged.rglob("*")]:
            if not path.is_symlink():
                path.chmod(path.stat().st_mode | 0o200)
    except OSError as exc:  # shutil.Error (every file that failed) is one too
        remove_staging(staged)
        cause = first[0] if first else exc
        written = getattr(cause, "filename2", None) or getattr(cause, "filename", None)  # sendfile names both
        where = f" (writing {written})" if written else ""
        raise BuildError(
            f"cannot install {name} into {build_dir}: {getattr(cause, 'strerror', None) or cause}{where}; "
            f"{build_dir / name} is unchanged",
            hint=(no_room_hint(cause, build_dir) or "check that the build directory is writable")
            + "; the variant stays built in the Nix store, so the rerun only copies it",
        ) from None
    target = build_dir / name
    publish(staged, target)
    return target


def remove_staging(staged: Path) -> None:
    """Remove a staging directory even where the copy left read-only directories in it."""
    for path in [staged, *staged.rglob("*")]:
        if path.is_dir() and not path.is_symlink():
            with contextlib.suppress(OSError):
                path.chmod(path.stat().st_mode | 0o700)
    shutil.rmtree(staged, ignore_errors=True)


def no_room_hint(exc: BaseException, place: Path) -> str | None:
    """What to do when ``exc`` says the file system holding ``place`` is full, else ``None``."""
    if getattr(exc, "errno", None) not in (errno.ENOSPC, errno.EDQUOT):
        return None
    return f"free space on the file system holding {place} (`df -h {shlex.quote(str(place))}`) and rerun"


def tree_size(path: Path) -> int:
    """Bytes in the regular files under ``path``."""
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def hash_variants(variants: Sequence[Path]) -> None:
    """Write a SHA-256 digest into each variant's ``metadata.json``; only the ``digest`` value changes."""
    for variant in variants:
        path = variant / "metadata.json"
        Metadata.read(path)
        try:
            write_digest(path, compute_digest(variant, contained=True))
        except OSError as exc:
            raise CheckError(
                f"cannot write {path}: {exc.strerror or exc}",
                hint=no_room_hint(exc, variant) or "hash a writable copy of the tree (e.g. build/, not a read-only nix result/)",
            ) from None


def hash_tree(build_dir: str | os.PathLike[str]) -> list[Path]:
    """``hash_variants`` over every variant of a tree (``DIR/result``, ``DIR/build`` or ``DIR``,
    found like every tree command does); returns the variant directories."""
    base = Path(build_dir)
    for candidate in (base / "result", base / "build", base):
        if candidate.name == "build" and os.path.islink(candidate) and variant_dirs(candidate):
            refuse_linked_tree(candidate, CheckError)  # before removing anything there
        for variant in variant_dirs(candidate):
            for path in clean_stale_temporaries(variant):
                log.info(f"removed {path}, left by an interrupted write")
    _, variants = discover_variants(build_dir)
    hash_variants(variants)
    return variants
