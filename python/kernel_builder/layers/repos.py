"""Repositories a mapping points at: where a kernel layer (or function) comes from.

Each repository is a frozen value (equal repositories share one loaded layer) with a
``load()`` that returns an ``nn.Module`` subclass.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import attrs

from kernel_builder.layers import loading
from kernel_builder.layers.decorators import func_module
from kernel_builder.layers.errors import LayerError
from kernel_builder.layers.locks import locked_revision
from kernel_builder.loader.errors import check_choice

if TYPE_CHECKING:
    from torch import nn

__all__ = [
    "RepositoryProtocol",
    "LayerRepository",
    "LocalLayerRepository",
    "LockedLayerRepository",
    "FuncRepository",
    "LocalFuncRepository",
    "LockedFuncRepository",
]


@runtime_checkable
class RepositoryProtocol(Protocol):
    """Anything with ``load() -> type[nn.Module]`` can be a mapping target."""

    def load(self) -> type[nn.Module]: ...


def _trust(value: bool | list[str] | tuple[str, ...]) -> bool | tuple[str, ...]:
    return tuple(value) if isinstance(value, (list, tuple)) else value


def _trust_arg(value: bool | tuple[str, ...]) -> bool | list[str]:
    return list(value) if isinstance(value, tuple) else value


def _where(repo_id: str, revision: str | None, version: int | None) -> str:
    ref = f"revision: {revision}" if revision is not None else f"version: {version}"
    return f"`{repo_id}` ({ref})"


def layer_of(repo: Any, kernel: ModuleType) -> type[nn.Module]:
    """``kernel.layers.<repo.layer_name>``, or an error naming the repository."""
    layers = getattr(kernel, "layers", None)
    if layers is None:
        raise LayerError(
            f"Kernel repo {repo} does not define any layers.",
            hint="a kernel exposes layers in a `layers` submodule of its package",
        )
    layer = getattr(layers, repo.layer_name, None)
    if layer is None:
        raise LayerError(
            f"Layer `{repo.layer_name}` not found in kernel repo {repo}.",
            hint="check layer_name against the classes in the kernel's layers module",
        )
    return layer


def func_of(repo: Any, kernel: ModuleType) -> type[nn.Module]:
    """A module class wrapping ``kernel.<repo.func_name>``."""
    func = getattr(kernel, repo.func_name, None)
    if func is None:
        raise LayerError(
            f"Function `{repo.func_name}` not found in {repo}.",
            hint="check func_name against the kernel's top-level functions",
        )
    return func_module(func)


def _deprecated(name: str, replacement: str) -> None:
    warnings.warn(
        f"{name} is deprecated and will be removed in kernels 0.17; use {replacement} instead.",
        DeprecationWarning,
        stacklevel=4,
    )


@attrs.frozen
class LayerRepository:
    """A layer in a Hub kernel repository, pinned by ``version`` (or ``revision``)."""

    repo_id: str
    layer_name: str = attrs.field(kw_only=True)
    revision: str | None = attrs.field(default=None, kw_only=True)
    version: int | None = attrs.field(default=None, kw_only=True)
    trust_remote_code: bool | tuple[str, ...] = attrs.field(
        default=False, kw_only=True, converter=_trust
    )
    user_agent: Any = attrs.field(default=None, kw_only=True, eq=False, hash=False)
    check_arch: bool = attrs.field(default=True, kw_only=True)

    def __attrs_post_init__(self) -> None:
        check_choice(self.revision, self.version)

    def load(self) -> type[nn.Module]:
        kernel = loading.hub_kernel(
            self.repo_id,
            revision=self.revision,
            version=self.version,
            trust_remote_code=_trust_arg(self.trust_remote_code),
            user_agent=self.user_agent,
            check_arch=self.check_arch,
        )
        return layer_of(self, kernel)

    def __str__(self) -> str:
        return f"{_where(self.repo_id, self.revision, self.version)}, layer `{self.layer_name}`"


@attrs.frozen
class LocalLayerRepository:
    """A layer in a kernel on disk (a repo with ``build/``, a build dir, or one variant dir)."""

    repo_path: Path
    layer_name: str = attrs.field(kw_only=True)
    check_arch: bool = attrs.field(default=True, kw_only=True)

    def load(self) -> type[nn.Module]:
        return layer_of(self, loading.local_kernel(self.repo_path, check_arch=self.check_arch))

    def __str__(self) -> str:
        return f"`{self.repo_path}` (layer `{self.layer_name}`)"


@attrs.frozen
class LockedLayerRepository:
    """A layer in a Hub kernel at the commit recorded in a lock file (resolved eagerly)."""

    repo_id: str
    lockfile: Path | None = attrs.field(default=None, kw_only=True, eq=False)
    layer_name: str = attrs.field(kw_only=True)
    trust_remote_code: bool | tuple[str, ...] = attrs.field(
        default=False, kw_only=True, converter=_trust
    )
    check_arch: bool = attrs.field(default=True, kw_only=True)
    sha: str = attrs.field(init=False)

    @sha.default
    def _locked(self) -> str:
        return locked_revision(self.repo_id, self.lockfile)

    def load(self) -> type[nn.Module]:
        kernel = loading.hub_kernel(
            self.repo_id, revision=self.sha, trust_remote_code=_trust_arg(self.trust_remote_code),
            check_arch=self.check_arch,
        )
        return layer_of(self, kernel)

    def __str__(self) -> str:
        return f"`{self.repo_id}` (revision: {self.sha}), layer `{self.layer_name}`"


# The three *Func* repositories repeat the *Layer* ones field for field, with ``func_name``
# for ``layer_name``: they are the reference's deprecated public classes, kept as classes of
# their own so that isinstance checks, reprs and the deprecation warning match ``kernels``.
@attrs.frozen
class FuncRepository:
    """Deprecated: a function in a Hub kernel, wrapped into a layer."""

    repo_id: str
    func_name: str = attrs.field(kw_only=True)
    revision: str | None = attrs.field(default=None, kw_only=True)
    version: int | None = attrs.field(default=None, kw_only=True)
    trust_remote_code: bool | tuple[str, ...] = attrs.field(
        default=False, kw_only=True, converter=_trust
    )
    check_arch: bool = attrs.field(default=True, kw_only=True)

    def __attrs_post_init__(self) -> None:
        _deprecated("FuncRepository", "LayerRepository")
        check_choice(self.revision, self.version)

    def load(self) -> type[nn.Module]:
        kernel = loading.hub_kernel(
            self.repo_id,
            revision=self.revision,
            version=self.version,
            trust_remote_code=_trust_arg(self.trust_remote_code),
            check_arch=self.check_arch,
        )
        return func_of(self, kernel)

    def __str__(self) -> str:
        return f"{_where(self.repo_id, self.revision, self.version)}, function `{self.func_name}`"


@attrs.frozen
class LocalFuncRepository:
    """Deprecated: a function in a kernel on disk, wrapped into a layer."""

    repo_path: Path
    func_name: str = attrs.field(kw_only=True)
    check_arch: bool = attrs.field(default=True, kw_only=True)

    def __attrs_post_init__(self) -> None:
        _deprecated("LocalFuncRepository", "LocalLayerRepository")

    def load(self) -> type[nn.Module]:
        return func_of(self, loading.local_kernel(self.repo_path, check_arch=self.check_arch))

    def __str__(self) -> str:
        return f"`{self.repo_path}` (function `{self.func_name}`)"


@attrs.frozen
class LockedFuncRepository:
    """Deprecated: a function in a locked Hub kernel, wrapped into a layer."""

    repo_id: str
    lockfile: Path | None = attrs.field(default=None, kw_only=True, eq=False)
    func_name: str = attrs.field(kw_only=True)
    trust_remote_code: bool | tuple[str, ...] = attrs.field(
        default=False, kw_only=True, converter=_trust
    )
    check_arch: bool = attrs.field(default=True, kw_only=True)
    sha: str = attrs.field(init=False)

    @sha.default
    def _locked(self) -> str:
        _deprecated("LockedFuncRepository", "LockedLayerRepository")
        return locked_revision(self.repo_id, self.lockfile)

    def load(self) -> type[nn.Module]:
        kernel = loading.hub_kernel(
            self.repo_id, revision=self.sha, trust_remote_code=_trust_arg(self.trust_remote_code),
            check_arch=self.check_arch,
        )
        return func_of(self, kernel)

    def __str__(self) -> str:
        return f"`{self.repo_id}` (revision: {self.sha}), function `{self.func_name}`"
