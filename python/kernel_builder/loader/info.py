"""What ``kernel-builder info`` and ``versions`` show, as plain data.

``kernel_info`` describes a kernel (Hub repo or local tree) from one variant's
metadata.json plus the backends of all variants; ``version_traces`` resolves every
``vN`` branch for this machine. The CLI only formats these values.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import attrs

from kernel_builder.errors import LoadError
from kernel_builder.hub.download import HubClient, is_offline
from kernel_builder.loader import cache
from kernel_builder.loader.fetch import Target, available_versions, select_revision, variant_names
from kernel_builder.loader.local import list_variant_dirs
from kernel_builder.loader.metadata import read_metadata
from kernel_builder.tree.metadata import Metadata
from kernel_builder.variants import names as vnames
from kernel_builder.variants.resolve import Resolution, resolve
from kernel_builder.variants.system import System

__all__ = ["KernelInfo", "kernel_info", "local_kernel_info", "hub_kernel_info", "version_traces", "INFO_KEYS"]

INFO_KEYS = ("name", "version", "kernels_minver", "license", "upstream", "source", "python_depends", "backends")


@attrs.frozen
class KernelInfo:
    """The facts ``info`` prints; ``repo_id``/``revision`` for the Hub, ``path`` for a local tree."""

    backends: tuple[str, ...]
    metadata: Metadata | None = None
    repo_id: str | None = None
    revision: str | None = None
    path: str | None = None

    def to_json(self) -> dict[str, Any]:
        head: dict[str, Any] = {"repo_id": self.repo_id, "revision": self.revision} if self.path is None else {"path": self.path}
        m = self.metadata
        return {
            **head,
            "name": m.name if m else None,
            "version": m.version if m else None,
            "kernels_minver": m.kernels_minver if m else None,
            "license": m.license if m else None,
            "upstream": m.upstream if m else None,
            "source": m.source if m else None,
            "python_depends": list(m.python_depends) if m else None,
            "backends": list(self.backends),
        }


def _backends(variant_names_: list[str]) -> tuple[str, ...]:
    found = set()
    for name in variant_names_:
        parsed = vnames.try_parse(name)
        if parsed is not None:
            found.add(parsed.backend)
    return tuple(sorted(found))


def _parsable(names_: list[str]) -> list[str]:
    return [n for n in names_ if vnames.try_parse(n) is not None]


def local_kernel_info(path: Path) -> KernelInfo:
    build = Path(path) / "build"
    found = _parsable(list_variant_dirs(build))
    if not found:
        raise LoadError(f"No build variants found in: {build}", hint="build the kernel first, or pass the directory that holds build/")
    metadata = None
    for name in found:
        if os.path.lexists(build / name / "metadata.json"):  # one that is not a file is an error
            metadata = read_metadata(build / name / "metadata.json")
            break
    return KernelInfo(backends=_backends(found), metadata=metadata, path=str(Path(path)))


def hub_kernel_info(repo_id: str, *, revision: str | None, version: int | None, client: HubClient | None = None) -> KernelInfo:
    """Info for a Hub repo: no version/revision means the highest ``vN`` branch, else ``main``."""
    offline = is_offline()
    client = None if offline else (client or HubClient())
    if revision is None and version is None:
        versions = available_versions(repo_id, offline=offline, client=client)
        if versions:
            version = max(versions)
        else:
            revision = "main"
    target = select_revision(repo_id, revision=revision, version=version, offline=offline, client=client)
    found = _parsable(variant_names(target, offline=offline, client=client))
    if not found:
        raise LoadError(f"No build variants found in {repo_id} (revision: {target.label})")
    metadata = None
    try:
        if offline:
            path = cache.snapshot_dir(cache.cache_root(), repo_id, target.commit) / "build" / found[0] / "metadata.json"
        else:
            assert client is not None
            path = client.download_file(repo_id, f"build/{found[0]}/metadata.json", target.commit, cache.cache_root())
        metadata = read_metadata(path)
    except Exception:  # noqa: BLE001 - info still lists what it knows; fields show as "-"
        metadata = None
    return KernelInfo(backends=_backends(found), metadata=metadata, repo_id=repo_id, revision=target.label)


def kernel_info(kernel: str, *, revision: str | None = None, version: int | None = None) -> KernelInfo:
    """A local directory if ``kernel`` is one, else a Hub repo id."""
    if Path(kernel).is_dir():
        if revision is not None or version is not None:
            raise LoadError("--revision and --version cannot be used with a local path")
        return local_kernel_info(Path(kernel))
    if revision is not None and version is not None:
        raise LoadError("Only one of --revision or --version can be specified")
    return hub_kernel_info(kernel, revision=revision, version=version)


def version_traces(repo_id: str, system: System) -> list[tuple[int, Target, Resolution]]:
    """Every ``vN`` (ascending) with the resolution of its variants for ``system``."""
    offline = is_offline()
    client = None if offline else HubClient()
    out = []
    for number, commit in sorted(available_versions(repo_id, offline=offline, client=client).items()):
        target = Target(repo_id, f"v{number}", commit, number)
        out.append((number, target, resolve(system, variant_names(target, offline=offline, client=client))))
    return out
