"""Loader errors: ``LoadError`` subclasses that are also the builtin a caller may expect.

Code written for PyPI ``kernels`` catches ``FileNotFoundError`` (no variant),
``ValueError`` (bad arguments, unknown versions) and ``ImportError`` (missing Python
dependency); these classes satisfy both that code and our CLI, which catches
``KernelBuilderError``.
"""

from __future__ import annotations

from kernel_builder.errors import LoadError

__all__ = ["KernelNotFound", "InvalidRequest", "MissingDependency", "IntegrityError"]


class KernelNotFound(LoadError, FileNotFoundError):
    """No loadable variant, snapshot or path."""


class InvalidRequest(LoadError, ValueError):
    """Arguments that cannot work: both version and revision, unknown version, bad backend."""


class MissingDependency(LoadError, ImportError):
    """A Python package the kernel declares in ``python-depends`` is not installed."""


class IntegrityError(LoadError):
    """The files of a variant do not match the digest in its metadata.json."""
