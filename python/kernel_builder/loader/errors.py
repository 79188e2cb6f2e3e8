"""Loader errors: ``LoadError`` subclasses that are also the builtin a caller may expect.

Code written for PyPI ``kernels`` catches ``FileNotFoundError`` (no variant),
``ValueError`` (bad arguments, unknown versions) and ``ImportError`` (missing Python
dependency); these classes satisfy both that code and our CLI, which catches
``KernelBuilderError``.

``check_choice`` is the one check that a Hub kernel is asked for by exactly one of
``version`` and ``revision``: ``get_kernel`` and the layer repositories (``layers.repos``)
both use it, so both say the same.
"""

from __future__ import annotations

from kernel_builder.errors import InvalidRequest, LoadError  # InvalidRequest: core's, named here too

__all__ = [
    "KernelNotFound", "InvalidRequest", "InvalidMetadata", "MissingDependency", "IntegrityError", "KernelConflict",
    "check_choice",
]


class KernelNotFound(LoadError, FileNotFoundError):
    """No loadable variant, snapshot or path."""


class InvalidMetadata(LoadError, ValueError):
    """A variant's metadata.json cannot be read or is malformed (``ValueError`` as in PyPI
    ``kernels``); a hostile Hub repository gets this, never a crash of the caller."""


class MissingDependency(LoadError, ImportError):
    """A Python package the kernel declares in ``python-depends`` is not installed."""


class IntegrityError(LoadError):
    """The files of a variant do not match the digest in its metadata.json."""


class KernelConflict(LoadError, RuntimeError):
    """A variant has the ``id`` of an imported kernel but is another build (a ``RuntimeError``
    as in PyPI ``kernels``)."""


def check_choice(revision: str | None, version: int | None) -> None:
    """``InvalidRequest`` unless exactly one of ``revision`` and ``version`` is given."""
    if revision is not None and version is not None:
        raise InvalidRequest(
            "Only one of `revision` or `version` must be specified.",
            hint="version=N loads branch vN (preferred); revision= takes a branch, tag or commit",
        )
    if revision is None and version is None:
        raise InvalidRequest(
            "A kernel version or revision must be specified: use `version=<major>` for a kernel API "
            "version or `revision=<branch/tag/commit>` for an explicit Hub revision.",
            hint="list the versions with `kernel-builder versions REPO`",
        )
