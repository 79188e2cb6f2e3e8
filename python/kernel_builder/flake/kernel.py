"""The kernel a host command works on: build.toml read once, at the command line's edge.

Every host command that needs build.toml (``build``, ``build --local``, ``test``,
``devshell``/``testshell``, ``cache push``, ``list-variants``, ``check-config``,
``create-pyproject``) reads it exactly once, into a ``Kernel``, and hands that value to
everything after it: the variant selection, ``build --local``, the kernel flake
(``flake.kernel_flake``: the host-flag refusal, the identity, the ``kernel-depends`` trees)
and the copy of the files Nix reads (``flake.kernel_source``). Nothing below the command
line parses build.toml again (tests/cli/test_cli_parse_once.py counts the parses).

A ``Kernel`` holds the kernel directory, its build.toml as the user named it, the parsed
file (``config.loading.Parsed``: the ``Build``, its edition, its warnings, and the document
with positions that a located error needs), and, computed on first use and then kept,
its identity (``kernel_builder.identity``: it asks git) and the files a build reads
(``flake.kernel_source.kernel_files``: it walks the sources and refuses links out).

``Kernel.read`` raises every build.toml error (the command line reports it, exit 3).
``Kernel.lenient`` is for the Nix front end called with a bare path (library callers,
tests): a build.toml that does not parse is kept as ``error``, the flake then gets just
build.toml and the flake files, and Nix reports the problem.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

import attrs

from kernel_builder.config.loading import Parsed, build_toml_path, emit_warnings, read_file
from kernel_builder.config.model import Build
from kernel_builder.config.portability import refuse_host_specific_flags
from kernel_builder.errors import ConfigError
from kernel_builder.flake.kernel_source import kernel_files
from kernel_builder.identity import KernelIdentity, kernel_identity

__all__ = ["Kernel", "as_kernel"]


@attrs.frozen(eq=False, slots=False)
class Kernel:
    """One kernel directory and its parsed build.toml (see the module docstring)."""

    directory: Path
    file: Path  # build.toml, as named (messages say this path)
    parsed: Parsed | None  # None only from ``lenient``: ``error`` says why
    error: ConfigError | None = None

    @classmethod
    def read(cls, path: str | os.PathLike[str], *, check_sources: bool = False, warn: bool = True) -> Kernel:
        """Parse the build.toml of ``path`` (a kernel directory or the file itself); raise
        ``ConfigError`` listing every problem. ``check_sources``: every ``src`` and
        ``include`` must exist (``config.loading.read_file``). ``warn``: log the file's
        warnings (once per process); ``check-config`` prints them itself."""
        file = build_toml_path(path)
        parsed = read_file(path, check_sources=check_sources)  # not ``file``: a build.toml that is a directory is refused, not entered
        if warn:
            emit_warnings(parsed.warnings)
        return cls(file.parent, file, parsed)

    @classmethod
    def lenient(cls, path: str | os.PathLike[str]) -> Kernel:
        """As ``read``, but a build.toml that does not parse is kept as ``error`` (for the Nix
        front end called with a bare path: Nix reports the problem)."""
        try:
            return cls.read(path)
        except ConfigError as exc:
            file = build_toml_path(path)
            return cls(file.parent, file, None, exc)

    @property
    def build(self) -> Build:
        """The parsed build.toml; the parse error when it did not parse (``lenient``)."""
        if self.parsed is None:
            assert self.error is not None
            raise self.error
        return self.parsed.build

    @property
    def build_or_none(self) -> Build | None:
        return None if self.parsed is None else self.parsed.build

    @functools.cached_property
    def identity(self) -> KernelIdentity:
        """The unique id and commit of the kernel source (``identity.kernel_identity``)."""
        return kernel_identity(self.directory)

    @functools.cached_property
    def files(self) -> tuple[str, ...]:
        """The kernel files a build reads, relative to ``directory``, sorted
        (``flake.kernel_source.kernel_files``; ``ConfigError`` names a file it refuses)."""
        return tuple(kernel_files(self.directory.resolve(), self.build_or_none))

    def refuse_host_specific_flags(self, toolchain: str) -> None:
        """Pinned variants are redistributable: with ``toolchain == "pinned"`` no
        ``*-flags`` entry may build for this machine only (``-march=native``...), a located
        ``BuildTomlError`` otherwise. The one host-side rule: ``build``, ``test``, the shells,
        ``cache push`` (through ``prepare_kernel_flake``) and ``check-config``. A kernel whose
        build.toml did not parse (``lenient``) is left to Nix, which reports that."""
        if toolchain == "pinned" and self.parsed is not None:
            refuse_host_specific_flags(self.parsed, str(self.file))


def as_kernel(kernel: Kernel | str | os.PathLike[str]) -> Kernel:
    """``kernel`` itself, or the ``Kernel.lenient`` read of a path (library callers and tests
    of the Nix front end; the command line always hands a ``Kernel`` down)."""
    return kernel if isinstance(kernel, Kernel) else Kernel.lenient(kernel)
