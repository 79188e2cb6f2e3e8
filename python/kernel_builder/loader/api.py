"""Load kernels: ``get_kernel`` and friends (the public loader API).

Semantics follow PyPI ``kernels`` (``runtime.md`` §1–3) so code written for it works
unchanged, with three additions: the digest in ``metadata.json`` is verified before any
import, names from the Hub are validated before they touch the disk, and concurrent
processes loading one kernel download it once (a file lock per variant).

``version=N`` loads branch ``vN``; ``revision=`` a branch, tag or commit; exactly one of
the two. ``LOCAL_KERNELS`` redirects repos to local paths, ``KERNELS_CACHE`` moves the
cache, and ``HF_HUB_OFFLINE=1`` makes every function work from the cache without a single
HTTP request.
"""

from __future__ import annotations

import logging
import warnings
from pathlib import Path
from types import ModuleType

from kernel_builder.hub.download import HubClient, is_offline, validate_repo_id
from kernel_builder.loader import cache
from kernel_builder.loader.deps import validate_python_depends
from kernel_builder.loader.errors import InvalidRequest, KernelNotFound
from kernel_builder.loader.fetch import check_choice, choose, install, select_revision
from kernel_builder.loader.importer import LoadedKernel, RepoInfo, import_variant, loaded_kernels
from kernel_builder.loader.local import local_overrides, local_variant_dir
from kernel_builder.loader.lockfile import LOCKFILE, Lock, find_lock, parse_lockfile, read_lockfile
from kernel_builder.metadata import Metadata
from kernel_builder.variants.resolve import VariantAccepted, VariantRejected
from kernel_builder.variants.system import System, detect_system, select_backend

__all__ = [
    "get_kernel",
    "get_local_kernel",
    "has_kernel",
    "install_kernel",
    "load_kernel",
    "get_loaded_kernels",
    "get_kernel_variants",
    "LoadedKernel",
    "RepoInfo",
]

log = logging.getLogger("kernel_builder.loader")


def _systems(backend: str | None, system: System | None) -> tuple[System, System]:
    """(detected system, system with the requested backend applied)."""
    detected = system if system is not None else detect_system()
    return detected, select_backend(detected, backend)


def _check_trust(repo_id: str, trust_remote_code: bool | list[str], offline: bool, client: HubClient | None) -> None:
    if trust_remote_code is True:
        return
    if isinstance(trust_remote_code, list):
        if repo_id in trust_remote_code:
            return
        warnings.warn("trust_remote_code as a list only allows the listed repos", UserWarning, stacklevel=3)
    if offline:
        warnings.warn(
            f"Skipping the publisher trust check for '{repo_id}': the Hub is in offline mode", UserWarning, stacklevel=3
        )
        return
    org = repo_id.split("/", 1)[0]
    assert client is not None
    if not client.is_trusted_publisher(org):
        raise InvalidRequest(
            f"Kernel repository '{repo_id}' is not from a trusted publisher.",
            hint="pass trust_remote_code=True to load kernels from publishers you trust yourself",
        )


def get_kernel(
    repo_id: str,
    *,
    revision: str | None = None,
    version: int | None = None,
    backend: str | None = None,
    user_agent: str | dict[str, str] | None = None,
    trust_remote_code: bool | list[str] = False,
    verify_digest: bool | None = None,
    system: System | None = None,
) -> ModuleType:
    """Download (if needed), verify and import the best variant of ``repo_id`` for this machine.

    Example::

        relu = get_kernel("kernels-community/relu", version=1)
    """
    override = local_overrides().get(repo_id)
    if override is not None:
        return get_local_kernel(override, verify_digest=verify_digest, system=system)
    validate_repo_id(repo_id)
    check_choice(revision, version)  # before any request (the reference asks the Hub first)
    detected, chosen = _systems(backend, system)
    offline = is_offline()
    client = None if offline else HubClient(user_agent=user_agent)
    _check_trust(repo_id, trust_remote_code, offline, client)
    target = select_revision(repo_id, revision=revision, version=version, offline=offline, client=client)

    def check_deps(metadata: Metadata) -> None:
        validate_python_depends(metadata, detected.backend.name.value)

    variant_dir, metadata = install(
        target, chosen, offline=offline, client=client, verify_digest=verify_digest, before_download=check_deps
    )
    check_deps(metadata)
    label = target.commit if version is not None else target.label
    return import_variant(
        variant_dir, repo_info=RepoInfo(repo_id, label), verify_digest=verify_digest, metadata=metadata
    )


def get_local_kernel(
    path: str | Path,
    *,
    backend: str | None = None,
    verify_digest: bool | None = None,
    system: System | None = None,
) -> ModuleType:
    """Import a kernel from a repo root, its ``build/`` directory or a variant directory."""
    detected, chosen = _systems(backend, system)
    variant_dir, _ = local_variant_dir(Path(path), chosen)
    metadata = Metadata.read(variant_dir / "metadata.json")
    validate_python_depends(metadata, detected.backend.name.value)
    return import_variant(variant_dir, verify_digest=verify_digest, metadata=metadata)


def install_kernel(
    repo_id: str,
    *,
    revision: str | None = None,
    version: int | None = None,
    backend: str | None = None,
    local_files_only: bool = False,
    user_agent: str | dict[str, str] | None = None,
    validate_dependencies: bool = False,
    verify_digest: bool | None = None,
    system: System | None = None,
) -> Path:
    """Download the best variant into the cache (no import); returns the variant directory."""
    detected, chosen = _systems(backend, system)
    offline = local_files_only or is_offline()
    client = None if offline else HubClient(user_agent=user_agent)
    target = select_revision(repo_id, revision=revision, version=version, offline=offline, client=client)

    def check_deps(metadata: Metadata) -> None:
        if validate_dependencies:
            validate_python_depends(metadata, detected.backend.name.value)

    variant_dir, metadata = install(
        target, chosen, offline=offline, client=client, verify_digest=verify_digest, before_download=check_deps
    )
    check_deps(metadata)
    return variant_dir


def has_kernel(
    repo_id: str,
    revision: str | None = None,
    version: int | None = None,
    backend: str | None = None,
    *,
    system: System | None = None,
) -> bool:
    """Whether ``repo_id`` has a variant this machine can load (no download)."""
    check_choice(revision, version)
    _, chosen = _systems(backend, system)
    offline = is_offline()
    client = None if offline else HubClient()
    target = select_revision(repo_id, revision=revision, version=version, offline=offline, client=client)
    try:
        variant, _ = choose(target, chosen, offline=offline, client=client)
    except KernelNotFound:
        return False
    path = f"build/{variant}/metadata.json"
    if offline:
        root = cache.cache_root()
        return (cache.snapshot_dir(root, repo_id, target.commit) / path).is_file()
    assert client is not None
    return client.file_exists(repo_id, path, target.commit)


def get_kernel_variants(
    repo_id: str,
    *,
    revision: str | None = None,
    version: int | None = None,
    backend: str | None = None,
    system: System | None = None,
) -> list[VariantAccepted | VariantRejected]:
    """Every variant of the revision with its decision: accepted first (best first), then rejected."""
    from kernel_builder.loader.fetch import variant_names
    from kernel_builder.variants.resolve import resolve

    _, chosen = _systems(backend, system)
    offline = is_offline()
    client = None if offline else HubClient()
    target = select_revision(repo_id, revision=revision, version=version, offline=offline, client=client)
    return list(resolve(chosen, variant_names(target, offline=offline, client=client)).decisions)


def load_kernel(
    repo_id: str,
    *,
    lockfile: str | Path | None = None,
    backend: str | None = None,
    verify_digest: bool | None = None,
    system: System | None = None,
) -> ModuleType:
    """Import a locked, already downloaded kernel; never touches the network.

    ``lockfile=None`` reads ``kernels.lock`` from the calling package's distribution metadata.
    """
    from kernel_builder.loader.fetch import Target

    validate_repo_id(repo_id)
    locks = read_lockfile(Path(lockfile)) if lockfile is not None else _caller_locks()
    lock = find_lock(locks, repo_id)
    _, chosen = _systems(backend, system)
    target = Target(repo_id, lock.commit, lock.commit)
    try:
        variant_dir, metadata = install(target, chosen, offline=True, client=None, verify_digest=verify_digest)
    except KernelNotFound as exc:
        raise KernelNotFound(
            f"Locked kernel {repo_id} (commit {lock.commit}) was not downloaded or has no variant for this system:\n{exc.message}",
            hint="run `kernel-builder download PROJECT` first",
        ) from exc
    return import_variant(variant_dir, verify_digest=verify_digest, metadata=metadata)


def _caller_locks() -> list[Lock]:
    """``kernels.lock`` from the distribution of the first caller outside kernel_builder."""
    import importlib.metadata
    import inspect

    for frame in inspect.stack()[1:]:
        module = frame.frame.f_globals.get("__name__", "")
        if module.split(".")[0] in ("kernel_builder", "importlib", "runpy"):
            continue
        package = module.split(".")[0]
        for dist_name in importlib.metadata.packages_distributions().get(package, []):
            text = importlib.metadata.distribution(dist_name).read_text(LOCKFILE)
            if text is not None:
                return parse_lockfile(text, f"{dist_name} metadata")
        break
    raise InvalidRequest(
        "Could not find a `kernels.lock` file in the caller's package metadata.",
        hint="pass lockfile=PATH, or lock with `kernel-builder lock PROJECT` and reinstall the project",
    )


def get_loaded_kernels() -> list[LoadedKernel]:
    """Every kernel imported into this process (a new list each call)."""
    return loaded_kernels()
