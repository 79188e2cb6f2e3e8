"""What ``kernel-builder info`` and ``versions`` show, as plain data.

``kernel_info`` describes a kernel (Hub repo or local tree) as PyPI ``kernels`` 0.19 does:
the variant this machine would load and its metadata.json, the backends of all variants,
and the kernels it depends on (``kernel-depends``, followed transitively; their Python
dependencies join the kernel's). ``version_traces`` resolves every ``vN`` branch for this
machine. The CLI only formats these values.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs

from kernel_builder.config.model import KernelDependency
from kernel_builder.errors import LoadError
from kernel_builder.hub.download import HubClient, is_offline
from kernel_builder.loader import cache
from kernel_builder.loader.errors import InvalidRequest
from kernel_builder.loader.fetch import Target, available_versions, choose, select_revision, variant_names
from kernel_builder.loader.local import list_variant_dirs, local_overrides, local_variant_dir
from kernel_builder.loader.metadata import read_metadata
from kernel_builder.tree.metadata import Metadata
from kernel_builder.variants import names as vnames
from kernel_builder.variants.resolve import Resolution, resolve
from kernel_builder.variants.system import System, detect_system

__all__ = ["KernelInfo", "kernel_info", "local_kernel_info", "hub_kernel_info", "version_traces", "INFO_KEYS"]

INFO_KEYS = (
    "name", "version", "kernels_minver", "license", "upstream", "source", "python_depends", "backends", "variant",
    "kernel_depends",
)

# {repo id: its own dependency tree}
DepTree = dict[str, "DepTree"]


@attrs.frozen
class KernelInfo:
    """The facts ``info`` prints; ``repo_id``/``revision`` for the Hub, ``path`` for a local tree."""

    backends: tuple[str, ...]
    variant: str
    metadata: Metadata
    dependencies: DepTree = attrs.field(factory=dict)
    python_depends: tuple[str, ...] = ()
    repo_id: str | None = None
    revision: str | None = None
    path: str | None = None

    @property
    def kernel_depends(self) -> list[str]:
        """Every kernel in the dependency tree, sorted."""
        found: set[str] = set()

        def walk(tree: DepTree) -> None:
            for repo_id, below in tree.items():
                found.add(repo_id)
                walk(below)

        walk(self.dependencies)
        return sorted(found)

    def to_json(self, *, dep_tree: bool = False) -> dict[str, Any]:
        m = self.metadata
        data: dict[str, Any] = {
            "name": m.name,
            "version": m.version,
            "kernels_minver": m.kernels_minver,
            "license": m.license,
            "upstream": m.upstream,
            "source": m.source,
            "python_depends": list(self.python_depends),
            "backends": list(self.backends),
            "variant": self.variant,
            "kernel_depends": self.kernel_depends,
        }
        if dep_tree:
            data["dependency_tree"] = self.dependencies
        if self.path is not None:
            data["path"] = self.path
        else:
            data.update({"repo_id": self.repo_id, "revision": self.revision})
        return data


def _backends(variant_names_: list[str]) -> tuple[str, ...]:
    found = set()
    for name in variant_names_:
        parsed = vnames.try_parse(name)
        if parsed is not None and parsed.backend is not None:  # a backend-agnostic SDK has none
            found.add(parsed.backend)
    return tuple(sorted(found))


def _parsable(names_: list[str]) -> list[str]:
    return [n for n in names_ if vnames.try_parse(n) is not None]


class _Deps:
    """Follows ``kernel-depends`` for ``info``: each dependency's variant for this machine,
    from ``LOCAL_KERNELS`` or the Hub (only its metadata.json is fetched)."""

    def __init__(self, system: System) -> None:
        self.system = system
        self.python_depends: set[str] = set()
        self._client: HubClient | None = None

    def tree(self, metadata: Metadata, chain: tuple[str, ...]) -> DepTree:
        self.python_depends.update(metadata.python_depends)
        out: DepTree = {}
        for dep in sorted(metadata.kernel_depends, key=lambda d: d.repo_id):
            if dep.repo_id in chain:
                raise InvalidRequest(
                    f"Cyclic kernel dependency detected: {dep.repo_id} ({' -> '.join((*chain, dep.repo_id))})",
                    hint="kernel-depends must not lead back to a kernel that depends on it",
                )
            out[dep.repo_id] = self.tree(self._metadata(dep), (*chain, dep.repo_id))
        return out

    def _metadata(self, dep: KernelDependency) -> Metadata:
        override = local_overrides().get(dep.repo_id)
        if override is not None:
            variant_dir, _ = local_variant_dir(override, self.system)
            return read_metadata(variant_dir / "metadata.json")
        offline = is_offline()
        if not offline and self._client is None:
            self._client = HubClient()
        client = None if offline else self._client
        target = select_revision(dep.repo_id, revision=dep.revision, version=dep.version, offline=offline, client=client)
        variant, _ = choose(target, self.system, offline=offline, client=client)
        return _hub_metadata(target, variant, offline=offline, client=client)


def _hub_metadata(target: Target, variant: str, *, offline: bool, client: HubClient | None) -> Metadata:
    path = f"build/{variant}/metadata.json"
    if offline:
        return read_metadata(cache.snapshot_dir(cache.cache_root(), target.repo_id, target.commit) / path)
    assert client is not None
    return read_metadata(client.download_file(target.repo_id, path, target.commit, cache.cache_root()))


def _with_deps(metadata: Metadata, name: str, system: System, **fields: Any) -> KernelInfo:
    deps = _Deps(system)
    tree = deps.tree(metadata, (name,))
    return KernelInfo(metadata=metadata, dependencies=tree, python_depends=tuple(sorted(deps.python_depends)), **fields)


def local_kernel_info(path: Path, system: System | None = None) -> KernelInfo:
    """Info for a local tree: the variant this machine would load from ``path`` (a repo
    root, its ``build/`` or a variant directory)."""
    system = system or detect_system()
    path = Path(path)
    if not any(_parsable(list_variant_dirs(base)) for base in (path, path / "build")) and not (path / "metadata.json").exists():
        raise LoadError(f"No build variants found in: {path / 'build'}", hint="build the kernel first, or pass the directory that holds build/")
    variant_dir, _ = local_variant_dir(path, system)
    metadata = read_metadata(variant_dir / "metadata.json")
    names = _parsable(list_variant_dirs(variant_dir.parent))
    return _with_deps(metadata, str(path), system, backends=_backends(names), variant=variant_dir.name, path=str(path))


def hub_kernel_info(
    repo_id: str, *, revision: str | None, version: int | None, client: HubClient | None = None, system: System | None = None
) -> KernelInfo:
    """Info for a Hub repo: no version/revision means the highest ``vN`` branch, else ``main``."""
    system = system or detect_system()
    offline = is_offline()
    client = None if offline else (client or HubClient())
    if revision is None and version is None:
        versions = available_versions(repo_id, offline=offline, client=client)
        if versions:
            version = max(versions)
        else:
            revision = "main"
    target = select_revision(repo_id, revision=revision, version=version, offline=offline, client=client)
    names = variant_names(target, offline=offline, client=client)
    if not _parsable(names):
        raise LoadError(f"No build variants found in {repo_id} (revision: {target.label})")
    variant, _ = choose(target, system, offline=offline, client=client)
    metadata = _hub_metadata(target, variant, offline=offline, client=client)
    label = revision if revision is not None else f"v{version}"
    return _with_deps(metadata, repo_id, system, backends=_backends(_parsable(names)), variant=variant,
                      repo_id=repo_id, revision=label)


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
