"""Kernels that kernels use: ``kernel-depends`` in metadata.json, and ``get_kernel_dep``.

A variant may list other Hub kernels it builds on (``{"repo-id": ..., "version": N}`` or a
``revision``). The loader loads those first, with the same loader function and options,
and makes them available to the kernel's own ``__init__`` while it is imported: inside the
kernel, ``get_kernel_dep("org/dep")`` returns the dependency's module (so does
``kernels.get_kernel_dep`` when PyPI ``kernels`` is installed, for kernels written against
it). Outside an import it raises, as in PyPI ``kernels``: the kernel must look its
dependencies up at import time.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
from collections.abc import Callable, Iterator, Mapping
from contextvars import ContextVar
from types import ModuleType

from kernel_builder.config.model import KernelDependency
from kernel_builder.loader.errors import InvalidRequest
from kernel_builder.tree.metadata import Metadata

__all__ = ["get_kernel_dep", "load_dependencies", "providing"]

# None: no kernel is being imported. A dict: the dependencies of the kernel being imported.
_PROVIDED: ContextVar[Mapping[str, ModuleType] | None] = ContextVar("kernel_builder_deps", default=None)
# Repos whose dependencies are being loaded, outermost first (to report cycles).
_CHAIN: ContextVar[tuple[str, ...]] = ContextVar("kernel_builder_dep_chain", default=())


class KernelDepError(InvalidRequest, RuntimeError):
    """``get_kernel_dep`` outside an import, or a dependency the kernel did not declare."""


def get_kernel_dep(repo_id: str) -> ModuleType:
    """The module of ``repo_id``, a ``kernel-depends`` entry of the kernel being imported.

    Call it from a kernel's ``__init__.py`` (or modules it imports), e.g.
    ``activation = get_kernel_dep("kernels-community/activation")``.
    """
    provided = _PROVIDED.get()
    if provided is None:
        raise KernelDepError(
            "`get_kernel_dep` only works during kernel loading.",
            hint="call it at import time, from the kernel's __init__.py or modules it imports",
        )
    module = provided.get(repo_id)
    if module is None:
        known = ", ".join(sorted(provided)) or "none"
        raise KernelDepError(
            f"Dependency '{repo_id}' not found in kernel dependencies (declared: {known}).",
            hint="add it to `kernel-depends` in build.toml and rebuild the kernel",
        )
    return module


def load_dependencies(
    repo_id: str, metadata: Metadata, load: Callable[[KernelDependency], ModuleType]
) -> dict[str, ModuleType]:
    """``{dep repo id: module}`` for ``metadata.kernel_depends``, each loaded with ``load``.

    ``repo_id`` names the kernel itself (a path for local kernels); a dependency that is
    already being loaded further up raises instead of recursing forever.
    """
    if not metadata.kernel_depends:
        return {}
    chain = (*_CHAIN.get(), repo_id)
    token = _CHAIN.set(chain)
    try:
        modules: dict[str, ModuleType] = {}
        for dep in metadata.kernel_depends:
            if dep.repo_id in chain:
                raise InvalidRequest(
                    f"Cyclic kernel dependency detected: {dep.repo_id} ({' -> '.join((*chain, dep.repo_id))})",
                    hint="kernel-depends must not lead back to a kernel that depends on it",
                )
            modules[dep.repo_id] = load(dep)
        return modules
    finally:
        _CHAIN.reset(token)


def _reference_context(deps: Mapping[str, ModuleType]) -> contextlib.AbstractContextManager[object]:
    """The same dependencies for ``kernels.get_kernel_dep``, when PyPI ``kernels`` is installed.

    Kernels published for the ``kernels`` ecosystem call ``from kernels import
    get_kernel_dep``; loaded by us, that function must see these modules too. Only for
    kernels that have dependencies (importing ``kernels`` costs time), and only while its
    ``use_kernel_deps`` exists (otherwise the kernel gets the reference's own error).
    """
    if not deps or importlib.util.find_spec("kernels") is None:
        return contextlib.nullcontext()
    # kernels 0.19 keeps it in kernels._internals.deps, 0.17 in kernels.deps.
    for where in ("kernels._internals.deps", "kernels.deps"):
        try:
            module = importlib.import_module(where)  # lazy: optional dependency: the kernels package
            return module.use_kernel_deps(dict(deps))  # type: ignore[no-any-return]
        except (ImportError, AttributeError, TypeError):
            continue
    return contextlib.nullcontext()  # pragma: no cover - a kernels without it


@contextlib.contextmanager
def providing(deps: Mapping[str, ModuleType]) -> Iterator[None]:
    """Make ``deps`` what ``get_kernel_dep`` answers for the duration of a kernel's import."""
    token = _PROVIDED.set(dict(deps))
    try:
        with _reference_context(deps):
            yield
    finally:
        _PROVIDED.reset(token)
