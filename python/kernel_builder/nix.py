"""The nix driver: the only module that builds nix command lines and runs nix.

Debian's nix 2.8 works offline here with flakes on, no substituters, no build users and an
empty flake registry; every invocation gets those settings through ``NIX_CONFIG`` so that
nothing depends on the user's nix.conf.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from kernel_builder.errors import NixError

__all__ = ["nix_env", "nix_executable", "empty_registry"]


def empty_registry() -> Path:
    """An empty flake registry file, so nix never tries to download the global one."""
    path = Path(tempfile.gettempdir()) / "kernel-builder-empty-registry.json"
    if not path.exists():
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text('{"flakes":[],"version":2}\n')
        os.replace(tmp, path)
    return path


def nix_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment for a nix subprocess: offline-safe settings in ``NIX_CONFIG``."""
    env = dict(os.environ if base is None else base)
    settings = [
        "experimental-features = nix-command flakes",
        "build-users-group =",
        "substituters =",
        "sandbox = false",
        f"flake-registry = {empty_registry()}",
        "warn-dirty = false",
    ]
    extra = env.get("NIX_CONFIG", "").strip()
    env["NIX_CONFIG"] = "\n".join(settings + ([extra] if extra else [])) + "\n"
    return env


def nix_executable() -> str:
    found = shutil.which("nix")
    if found is None:
        raise NixError(
            "nix is not installed",
            hint="install it with `apt-get install nix-bin` (Debian) or from nixos.org, or build with --local",
        )
    return found
