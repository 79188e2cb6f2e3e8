"""One exception tree for the whole tool.

Every error a user can cause is a ``KernelBuilderError``: it carries an exit code and
an optional hint, and the Click entry point is the only place that catches it. Each class
has its own exit code (docs/cli.md, "Exit codes"): 1 other, 2 usage (Click), 3 configuration,
4 build, 5 nix, 6 hub, 7 load, 8 check.
"""

from __future__ import annotations

__all__ = [
    "KernelBuilderError",
    "ConfigError",
    "BuildError",
    "NixError",
    "HubError",
    "InvalidRequest",
    "LoadError",
    "CheckError",
]


class KernelBuilderError(Exception):
    """Base of all user-facing errors. ``exit_code`` is what the CLI exits with."""

    exit_code = 1

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        if self.hint:
            return f"{self.message}\nhint: {self.hint}"
        return self.message


class ConfigError(KernelBuilderError):
    """build.toml (or another input file) is invalid."""

    exit_code = 3


class CheckError(KernelBuilderError):
    """A built tree fails a layout, metadata, digest or ABI check."""

    exit_code = 8


class BuildError(KernelBuilderError):
    """Compiling or laying out a variant failed."""

    exit_code = 4


class NixError(KernelBuilderError):
    """A nix invocation failed; the message carries the command and the log tail."""

    exit_code = 5


class HubError(KernelBuilderError):
    """A Hub request failed; the message names the repo and branch."""

    exit_code = 6


class LoadError(KernelBuilderError):
    """A kernel could not be resolved, downloaded, verified or imported."""

    exit_code = 7


class InvalidRequest(LoadError, ValueError):
    """Arguments that cannot work: both version and revision, unknown version, bad backend,
    a malformed trusted-signer entry (here, not in ``loader/``, because publishing reads the
    signer rules too)."""
