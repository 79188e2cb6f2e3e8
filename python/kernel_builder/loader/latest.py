"""``UNSTABLE_KERNELS_ALL_LATEST``: load every Hub kernel at its highest version.

A development switch of PyPI ``kernels`` 0.19.1, honoured the same way here: when the
variable is ``1``, ``ON``, ``YES`` or ``TRUE`` (any case), ``get_kernel``, ``has_kernel``,
``load_kernel``, ``get_locked_kernel``, the layer repositories and every kernel dependency
ignore the version, revision or lock-file commit asked for and take the highest ``vN``
branch of the repository (online: the Hub's branches, and the ref is recorded in the cache;
offline and ``load_kernel``: the cached ``refs/vN``), with a warning naming what was
overridden. ``LOCAL_KERNELS`` entries and local paths are not affected, nor are
``install_kernel`` and ``get_kernel_variants``. A repository without a ``vN`` branch cannot be
loaded this way: ``InvalidRequest`` (a ``ValueError``).
"""

from __future__ import annotations

import logging
import os

from kernel_builder.hub.download import HubClient
from kernel_builder.loader import cache
from kernel_builder.loader.errors import InvalidRequest
from kernel_builder.loader.fetch import Target, available_versions

__all__ = ["ENV", "enabled", "latest_target", "requested"]

ENV = "UNSTABLE_KERNELS_ALL_LATEST"
_ON = frozenset({"1", "ON", "YES", "TRUE"})

log = logging.getLogger("kernel_builder.loader")


def enabled() -> bool:
    """Whether ``UNSTABLE_KERNELS_ALL_LATEST`` is on (read on every call)."""
    return os.environ.get(ENV, "").upper() in _ON


def latest_target(repo_id: str, requested: str, *, offline: bool, client: HubClient | None) -> Target:
    """The highest ``vN`` of ``repo_id`` in place of ``requested`` (how the caller names what
    it asked for: ``version 1``, ``revision 'main'``, ``locked commit <sha>``)."""
    versions = available_versions(repo_id, offline=offline, client=client)
    if not versions:
        where = "in the local cache" if offline else "on the Hub"
        raise InvalidRequest(
            f"Cannot load the latest version of '{repo_id}': no numbered versions are available {where}. "
            f"{ENV} requires a numbered version.",
            hint=f"unset {ENV} to load what was asked for"
            + (", or download a vN branch of the kernel while online" if offline else ""),
        )
    number = max(versions)
    commit = versions[number]
    if not offline:
        cache.write_ref(cache.cache_root(), repo_id, f"v{number}", commit)  # so that offline loads find it
    log.warning(
        "%s is enabled: overriding requested %s and any lockfile pin for '%s' with v%d (%s). "
        "Kernel API changes may break your code.",
        ENV, requested, repo_id, number, commit,
    )
    return Target(repo_id, f"v{number}", commit, number)


def requested(version: int | None, revision: str | None) -> str:
    """How a load names what it asked for, for ``latest_target``'s warning."""
    return f"version {version}" if version is not None else f"revision {revision!r}"
