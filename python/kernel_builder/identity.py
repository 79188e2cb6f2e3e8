"""The kernel's identity: the unique id in the ops namespace and the commit it comes from.

One rule for every build of a kernel, so that a Nix build and a build
without Nix (``build --local``, ``run_variant`` without ``--unique-id``) of one tree give
one ops identifier:

* in git: the short commit (7 hex digits), plus ``_dirty`` when tracked files differ from
  HEAD (the id then stays the same while sources are edited);
* outside git (or before the first commit): the first 7 hex digits of the sha256 of
  build.toml, so a copied tree keeps its id, and an edit to one backend's sources changes
  no other backend's derivation (the id is an input of every one).

``kernel-builder build`` records this for Nix (``state/kernel.json``), because Nix 2.8 gives
a dirty tree no revision. ``nix/lib/pure/kernel-identity.nix`` applies the same rule when
nothing was recorded; tests/nix/test_nix_eval.py ties the two together.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import attrs

from kernel_builder._git import git_status

__all__ = ["KernelIdentity", "kernel_identity"]


@attrs.frozen
class KernelIdentity:
    """The ops-namespace id and provenance of the kernel source being built."""

    unique_id: str
    commit: str | None
    dirty: bool

    def as_record(self) -> dict[str, Any]:
        """The ``state/kernel.json`` record that kernel-identity.nix reads."""
        return {"unique-id": self.unique_id, "commit": self.commit, "dirty": self.dirty}


def kernel_identity(kernel_dir: str | os.PathLike[str]) -> KernelIdentity:
    """The identity of the kernel source in ``kernel_dir`` (see the module docstring)."""
    state = git_status(kernel_dir)
    if state is None:
        digest = hashlib.sha256((Path(kernel_dir) / "build.toml").read_bytes()).hexdigest()
        return KernelIdentity(digest[:7], None, False)
    return KernelIdentity(state.commit[:7] + ("_dirty" if state.dirty else ""), state.commit, state.dirty)
