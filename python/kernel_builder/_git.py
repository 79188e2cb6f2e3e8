"""What git says about a directory: its HEAD commit and tree, whether tracked files differ
from HEAD, which paths are tracked or untracked.

This is the one module that asks git for facts (``cli/init.py`` runs ``git init`` and
``git add``, which are actions). Every function answers ``None``, ``False`` or an empty list
when git is missing or the directory is not in a work tree with a commit, so callers fall
back without catching anything.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import attrs

__all__ = ["GitStatus", "git", "git_status", "head", "oid", "tracks", "untracked"]

_OID = re.compile(r"^(?:[0-9a-fA-F]{40}|[0-9a-fA-F]{64})$")


def oid(value: object, where: str) -> str:
    """``value`` as a lowercase git object id; ``ValueError`` naming ``where`` otherwise."""
    if not isinstance(value, str) or not _OID.match(value):
        raise ValueError(f"`{where}` must be a git object id (40 or 64 hexadecimal digits), got {value!r}")
    return value.lower()


@attrs.frozen
class GitStatus:
    """A git commit and whether the work tree differed from it."""

    commit: str = attrs.field(converter=lambda v: oid(v, "commit"))
    dirty: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"commit": self.commit, "dirty": self.dirty}


def git(directory: str | os.PathLike[str], *args: str) -> str | None:
    """The output of ``git -C DIRECTORY ARGS``, stripped; ``None`` when git fails or is missing."""
    try:
        done = subprocess.run(["git", "-C", str(directory), *args], capture_output=True, text=True, check=False)
    except OSError:
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def head(directory: str | os.PathLike[str]) -> str | None:
    """The HEAD commit of the work tree holding ``directory``."""
    return git(directory, "rev-parse", "HEAD")


def git_status(directory: str | os.PathLike[str]) -> GitStatus | None:
    """HEAD commit of the git work tree holding ``directory`` and whether tracked files differ.

    ``None`` outside a git work tree (or without git). Untracked files do not count.
    """
    commit = head(directory)
    if commit is None:
        return None
    changes = git(directory, "status", "--porcelain", "--untracked-files=no", "--ignore-submodules")
    return GitStatus(commit, dirty=bool(changes))


def tracks(path: str | os.PathLike[str]) -> bool:
    """Whether the git work tree holding ``path`` tracks that file."""
    path = Path(path)
    return git(path.parent, "ls-files", "--error-unmatch", path.name) is not None


def untracked(directory: str | os.PathLike[str], paths: Iterable[str]) -> list[str]:
    """The files under ``paths`` (relative to ``directory``) that git neither tracks nor ignores."""
    listed = git(directory, "ls-files", "--others", "--exclude-standard", "--", *paths)
    return listed.splitlines() if listed else []
