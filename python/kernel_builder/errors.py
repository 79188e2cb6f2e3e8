"""One exception tree for the whole tool.

Every error a user can cause is a ``KernelBuilderError``: it carries an exit code and
an optional hint, and the Click entry point is the only place that catches it.
"""

from __future__ import annotations

__all__ = [
    "KernelBuilderError",
    "ConfigError",
    "BuildError",
    "NixError",
    "HubError",
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

    exit_code = 1


class CheckError(KernelBuilderError):
    """A built tree fails a layout, metadata, digest or ABI check."""

    exit_code = 1


class BuildError(KernelBuilderError):
    """Compiling or laying out a variant failed."""

    exit_code = 1


class NixError(KernelBuilderError):
    """A nix invocation failed; the message carries the command and the log tail."""

    exit_code = 1


class HubError(KernelBuilderError):
    """A Hub request failed; the message names the repo and branch."""

    exit_code = 1


class LoadError(KernelBuilderError):
    """A kernel could not be resolved, downloaded, verified or imported."""

    exit_code = 1
