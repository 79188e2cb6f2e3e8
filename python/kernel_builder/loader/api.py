"""Load kernels: ``get_kernel`` and friends (the public loader API).

Names, signatures and semantics follow PyPI ``kernels`` 0.19.1 (``compat.KERNELS_VERSION``)
so code written for it works unchanged, with these additions: the digest in
``metadata.json`` is verified before any import, names from the Hub are validated before
they touch the disk, concurrent processes loading one kernel download it once (a file
lock per variant), and a Hub variant's Sigstore signature (``loader.signature``) can be
required (``require_signature``) and its signers chosen (``trusted_signers``). Before a variant is downloaded or imported, its metadata is checked:
``python-depends``, ``kernels-minver`` and (``get_kernel``/``has_kernel``) the GPU archs.

``version=N`` loads branch ``vN``; ``revision=`` a branch, tag or commit; exactly one of
the two. ``LOCAL_KERNELS`` redirects repos to local paths, ``KERNELS_CACHE`` moves the
cache, and ``HF_HUB_OFFLINE=1`` makes every function work from the cache without a single
HTTP request. ``UNSTABLE_KERNELS_ALL_LATEST=1`` loads every Hub kernel (and dependency) at
its highest ``vN`` instead of the version, revision or lock asked for (``loader.latest``).
"""

from __future__ import annotations

import importlib.metadata
import inspect
import logging
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from kernel_builder.config.model import KernelDependency
from kernel_builder.hub.download import HubClient, is_offline, validate_repo_id
from kernel_builder.loader import cache, compat, latest
from kernel_builder.loader.deps import validate_python_depends
from kernel_builder.loader.errors import InvalidRequest, KernelNotFound, check_choice
from kernel_builder.loader.fetch import Target, choose, install, select_revision, variant_names
from kernel_builder.loader.importer import LoadedKernel, RepoInfo, import_variant, loaded_kernels
from kernel_builder.loader.kernel_deps import get_kernel_dep, load_dependencies
from kernel_builder.loader.local import local_overrides, local_variant_dir
from kernel_builder.loader.lockfile import LOCKFILE, Lock, find_lock, parse_lockfile, read_lockfile
from kernel_builder.loader.metadata import read_metadata
from kernel_builder.loader.signature import check_signature
from kernel_builder.tree.metadata import Metadata
from kernel_builder.variants.resolve import VariantAccepted, VariantRejected, resolve
from kernel_builder.variants.system import System, detect_system, select_backend

__all__ = [
    "get_kernel",
    "get_local_kernel",
    "get_locked_kernel",
    "get_kernel_dep",
    "has_kernel",
    "install_kernel",
    "load_kernel",
    "get_loaded_kernels",
    "get_kernel_variants",
    "LoadedKernel",
    "RepoInfo",
]

log = logging.getLogger("kernel_builder.loader")

#: A load check: ``check(metadata, variant name)`` raises when the variant must not be loaded.
Check = Callable[[Metadata, str], None]


def _systems(backend: str | None, system: System | None) -> tuple[System, System]:
    """(detected system, system with the requested backend applied)."""
    detected = system if system is not None else detect_system()
    return detected, select_backend(detected, backend)


def _check_trust(repo_id: str, trust_remote_code: bool | list[str], offline: bool, client: HubClient | None) -> None:
    """``True`` trusts every repo; a list trusts the repos it names, besides trusted publishers'."""
    if trust_remote_code is True:
        return
    if isinstance(trust_remote_code, list) and repo_id in trust_remote_code:
        return
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


def _checks(detected: System, *, check_arch: bool, dependencies: bool = True) -> Check:
    """What a load checks in a variant's metadata before downloading and importing it."""

    def check(metadata: Metadata, variant: str) -> None:
        if dependencies:
            validate_python_depends(metadata, detected.backend.name.value)
        compat.check_minver(metadata, variant)
        if check_arch:
            compat.check_arch(metadata, variant)

    return check


def _select(
    repo_id: str, revision: str | None, version: int | None, *, offline: bool, client: HubClient | None
) -> Target:
    """The commit to load: what was asked for, or with ``UNSTABLE_KERNELS_ALL_LATEST`` the
    highest ``vN`` (``loader.latest``)."""
    if latest.enabled():
        return latest.latest_target(repo_id, latest.requested(version, revision), offline=offline, client=client)
    return select_revision(repo_id, revision=revision, version=version, offline=offline, client=client)


def _fetch(
    target: Target,
    chosen: System,
    check: Check,
    *,
    require_signature: bool | None = None,
    trusted_signers: Sequence[str] | None = None,
    **options: Any,
) -> tuple[Path, Metadata]:
    """``install`` with ``check`` before the bulk download, and again for a cached variant;
    then the signature of the Hub variant (``loader.signature``: a warning, or refused when
    required)."""
    variant_dir, metadata = install(target, chosen, before_download=check, **options)
    check(metadata, variant_dir.name)
    check_signature(
        variant_dir, repo_id=target.repo_id, commit=target.commit, require_signature=require_signature,
        trusted_signers=trusted_signers, offline=bool(options.get("offline")),
    )
    return variant_dir, metadata


def get_kernel(
    repo_id: str,
    *,
    revision: str | None = None,
    version: int | None = None,
    backend: str | None = None,
    user_agent: str | dict[str, str] | None = None,
    trust_remote_code: bool | list[str] = False,
    check_arch: bool = True,
    verify_digest: bool | None = None,
    system: System | None = None,
    require_signature: bool | None = None,
    trusted_signers: Sequence[str] | None = None,
) -> ModuleType:
    """Download (if needed), verify and import the best variant of ``repo_id`` for this machine.

    ``check_arch=False`` loads a variant whose ``backend.archs`` leave out the current GPU
    (for kernels that support more than they declare, e.g. with a Triton fallback).

    The variant's ``metadata.json.sigstore`` is verified against its trusted signers
    (``trusted_signers`` adds ``[REPO_PATTERN=]IDENTITY`` entries, see docs/signatures.md):
    a warning when it is missing or wrong, a ``SignatureError`` instead with
    ``require_signature=True`` (or ``KERNEL_BUILDER_REQUIRE_SIGNATURE=1``).

    Example::

        relu = get_kernel("kernels-community/relu", version=1)
    """

    def load_dep(dep: KernelDependency) -> ModuleType:
        return get_kernel(
            dep.repo_id, revision=dep.revision, version=dep.version, backend=backend, user_agent=user_agent,
            trust_remote_code=trust_remote_code, check_arch=check_arch, verify_digest=verify_digest, system=system,
            require_signature=require_signature, trusted_signers=trusted_signers,
        )

    override = local_overrides().get(repo_id)
    if override is not None:
        # No trust check, as in the reference, and no version needed (the reference 0.17.2
        # still asks for one it then ignores); the load checks apply.
        return _import_local(
            override, repo_id, None, _checks(_systems(None, system)[0], check_arch=check_arch), load_dep,
            verify_digest=verify_digest, system=system,
        )
    validate_repo_id(repo_id)
    check_choice(revision, version)  # before any request (the reference asks the Hub first)
    detected, chosen = _systems(backend, system)
    offline = is_offline()
    client = None if offline else HubClient(user_agent=user_agent)
    _check_trust(repo_id, trust_remote_code, offline, client)
    target = _select(repo_id, revision, version, offline=offline, client=client)
    variant_dir, metadata = _fetch(
        target, chosen, _checks(detected, check_arch=check_arch), offline=offline, client=client, verify_digest=verify_digest,
        require_signature=require_signature, trusted_signers=trusted_signers,
    )
    deps = load_dependencies(repo_id, metadata, load_dep)
    label = target.commit if version is not None else target.label
    return import_variant(
        variant_dir, repo_info=RepoInfo(repo_id, label), verify_digest=verify_digest, metadata=metadata, deps=deps
    )


def _import_local(
    path: str | Path,
    name: str,
    backend: str | None,
    check: Check,
    load_dep: Callable[[KernelDependency], ModuleType],
    *,
    verify_digest: bool | None,
    system: System | None,
) -> ModuleType:
    """Check and import the best variant of a local tree (its dependencies loaded first)."""
    _, chosen = _systems(backend, system)
    variant_dir, _ = local_variant_dir(Path(path), chosen)
    metadata = read_metadata(variant_dir / "metadata.json")
    check(metadata, variant_dir.name)
    deps = load_dependencies(name, metadata, load_dep)
    return import_variant(variant_dir, verify_digest=verify_digest, metadata=metadata, deps=deps)


def get_local_kernel(
    repo_path: str | Path,
    *,
    backend: str | None = None,
    trust_remote_code: bool | list[str] = False,
    user_agent: str | dict[str, str] | None = None,
    check_arch: bool = True,
    verify_digest: bool | None = None,
    system: System | None = None,
) -> ModuleType:
    """Import a kernel from a repo root, its ``build/`` directory or a variant directory.

    ``trust_remote_code`` and ``user_agent`` apply to the kernel's ``kernel-depends``,
    which are loaded with ``get_kernel`` (the Hub, or ``LOCAL_KERNELS``). As in PyPI
    ``kernels`` 0.19, the variant's declared GPU archs are checked against the current GPU
    (``check_arch=False`` skips that, for the kernel and its dependencies).
    """

    def load_dep(dep: KernelDependency) -> ModuleType:
        return get_kernel(
            dep.repo_id, revision=dep.revision, version=dep.version, backend=backend, user_agent=user_agent,
            trust_remote_code=trust_remote_code, check_arch=check_arch, verify_digest=verify_digest, system=system,
        )

    detected, _ = _systems(backend, system)
    return _import_local(
        repo_path, str(repo_path), backend, _checks(detected, check_arch=check_arch), load_dep,
        verify_digest=verify_digest, system=system,
    )


def install_kernel(
    repo_id: str,
    *,
    revision: str | None = None,
    version: int | None = None,
    backend: str | None = None,
    local_files_only: bool = False,
    user_agent: str | dict[str, str] | None = None,
    trust_remote_code: bool | list[str] = False,
    validate_dependencies: bool = False,
    verify_digest: bool | None = None,
    system: System | None = None,
    require_signature: bool | None = None,
    trusted_signers: Sequence[str] | None = None,
) -> Path:
    """Download the best variant into the cache (no import); returns the variant directory.

    ``validate_dependencies=True`` also checks ``python-depends`` before downloading. The
    signature is checked as by ``get_kernel``.
    """
    detected, chosen = _systems(backend, system)
    offline = local_files_only or is_offline()
    client = None if offline else HubClient(user_agent=user_agent)
    _check_trust(repo_id, trust_remote_code, offline, client)
    target = select_revision(repo_id, revision=revision, version=version, offline=offline, client=client)
    check = _checks(detected, check_arch=False, dependencies=validate_dependencies)
    variant_dir, _ = _fetch(
        target, chosen, check, offline=offline, client=client, verify_digest=verify_digest,
        require_signature=require_signature, trusted_signers=trusted_signers,
    )
    return variant_dir


def has_kernel(
    repo_id: str,
    *,
    revision: str | None = None,
    version: int | None = None,
    backend: str | None = None,
    trust_remote_code: bool | list[str] = False,
    check_arch: bool = True,
    system: System | None = None,
) -> bool:
    """Whether ``repo_id`` has a variant this machine can load.

    Nothing is downloaded, except the chosen variant's metadata.json when its declared GPU
    archs must be checked against the current device (``check_arch``, on a CUDA or ROCm GPU).
    """
    check_choice(revision, version)
    _, chosen = _systems(backend, system)
    override = local_overrides().get(repo_id)
    if override is not None:
        try:
            variant_dir, _ = local_variant_dir(override, chosen)
        except KernelNotFound:
            return False
        return not check_arch or _arch_ok(variant_dir / "metadata.json", variant_dir.name)
    offline = is_offline()
    client = None if offline else HubClient()
    _check_trust(repo_id, trust_remote_code, offline, client)
    target = _select(repo_id, revision, version, offline=offline, client=client)
    try:
        variant, _ = choose(target, chosen, offline=offline, client=client)
    except KernelNotFound:
        return False
    path = f"build/{variant}/metadata.json"
    root = cache.cache_root()
    if offline:
        local = cache.snapshot_dir(root, repo_id, target.commit) / path
        if not local.is_file():
            return False
    else:
        assert client is not None
        if not client.file_exists(repo_id, path, target.commit):
            return False
    if not check_arch or compat.current_device_arch(chosen.backend.name.value) is None:
        return True
    if not offline:
        assert client is not None
        local = client.download_file(repo_id, path, target.commit, root)
    return _arch_ok(local, variant)


def _arch_ok(metadata_path: Path, variant: str) -> bool:
    try:
        compat.check_arch(read_metadata(metadata_path), variant)
    except compat.IncompatibleDevice:
        return False
    return True


def get_kernel_variants(
    repo_id: str,
    *,
    revision: str | None = None,
    version: int | None = None,
    backend: str | None = None,
    system: System | None = None,
) -> list[VariantAccepted | VariantRejected]:
    """Every variant of the revision with its decision: accepted first (best first), then rejected."""
    _, chosen = _systems(backend, system)
    offline = is_offline()
    client = None if offline else HubClient()
    target = select_revision(repo_id, revision=revision, version=version, offline=offline, client=client)
    return list(resolve(chosen, variant_names(target, offline=offline, client=client)).decisions)


def load_kernel(
    repo_id: str,
    *,
    lockfile: str | Path | None,
    backend: str | None = None,
    check_arch: bool = True,
    verify_digest: bool | None = None,
    system: System | None = None,
    require_signature: bool | None = None,
    trusted_signers: Sequence[str] | None = None,
) -> ModuleType:
    """Import a locked, already downloaded kernel; never touches the network.

    ``lockfile=None`` reads ``kernels.lock`` from the calling package's distribution
    metadata. The kernel's ``kernel-depends`` must be locked (and downloaded) too. The
    signature is checked as by ``get_kernel`` (from its receipt, or with the cached trust root).
    """
    validate_repo_id(repo_id)
    locks = read_lockfile(Path(lockfile)) if lockfile is not None else _caller_locks()
    return _load_locked(repo_id, locks, backend, offline=True, trust_remote_code=False, user_agent=None,
                        check_arch=check_arch, verify_digest=verify_digest, system=system,
                        require_signature=require_signature, trusted_signers=trusted_signers)


def get_locked_kernel(
    repo_id: str,
    *,
    lockfile: str | Path | None,
    trust_remote_code: bool | list[str] = False,
    user_agent: str | dict[str, str] | None = None,
    check_arch: bool = True,
    verify_digest: bool | None = None,
    system: System | None = None,
    require_signature: bool | None = None,
    trusted_signers: Sequence[str] | None = None,
) -> ModuleType:
    """Import the commit of ``repo_id`` pinned in a lock file, downloading it if needed.

    Like ``load_kernel``, but online unless ``HF_HUB_OFFLINE=1``; ``lockfile=None`` reads
    ``kernels.lock`` from the calling package's distribution metadata.
    """
    validate_repo_id(repo_id)
    locks = read_lockfile(Path(lockfile)) if lockfile is not None else _caller_locks()
    return _load_locked(repo_id, locks, None, offline=is_offline(), trust_remote_code=trust_remote_code,
                        user_agent=user_agent, check_arch=check_arch, verify_digest=verify_digest, system=system,
                        require_signature=require_signature, trusted_signers=trusted_signers)


def _load_locked(
    repo_id: str,
    locks: list[Lock],
    backend: str | None,
    *,
    offline: bool,
    trust_remote_code: bool | list[str],
    user_agent: str | dict[str, str] | None,
    check_arch: bool,
    verify_digest: bool | None,
    system: System | None,
    require_signature: bool | None = None,
    trusted_signers: Sequence[str] | None = None,
) -> ModuleType:
    """Fetch (or find, offline) and import the locked commit of ``repo_id`` and of its dependencies."""
    lock = find_lock(locks, repo_id)
    detected, chosen = _systems(backend, system)
    client = None if offline else HubClient(user_agent=user_agent)
    if not offline:
        _check_trust(repo_id, trust_remote_code, offline, client)
    if latest.enabled():
        target = latest.latest_target(repo_id, f"locked commit {lock.commit}", offline=offline, client=client)
    else:
        target = Target(repo_id, lock.commit, lock.commit)
    try:
        variant_dir, metadata = _fetch(
            target, chosen, _checks(detected, check_arch=check_arch),
            offline=offline, client=client, verify_digest=verify_digest,
            require_signature=require_signature, trusted_signers=trusted_signers,
        )
    except KernelNotFound as exc:
        if not offline:
            raise
        raise KernelNotFound(
            f"Locked kernel {repo_id} (commit {lock.commit}) was not downloaded or has no variant for this system:\n{exc.message}",
            hint="run `kernel-builder download PROJECT` first",
        ) from exc

    def load_dep(dep: KernelDependency) -> ModuleType:
        return _load_locked(dep.repo_id, locks, backend, offline=offline, trust_remote_code=trust_remote_code,
                            user_agent=user_agent, check_arch=check_arch, verify_digest=verify_digest, system=system,
                            require_signature=require_signature, trusted_signers=trusted_signers)

    deps = load_dependencies(repo_id, metadata, load_dep)
    return import_variant(variant_dir, verify_digest=verify_digest, metadata=metadata, deps=deps)


def _caller_locks() -> list[Lock]:
    """``kernels.lock`` from the distribution of the first caller outside kernel_builder."""
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
