"""From (repo, version or revision) to a verified variant directory in the cache.

Online, the Hub is asked for the versions and the variant names, the best variant is
chosen with ``resolve`` and only ``build/<variant>/`` is downloaded, under a per-variant
file lock so concurrent processes download once. Offline (``HF_HUB_OFFLINE=1``) nothing
touches the network: refs, snapshots and variants are read from the cache directory.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from pathlib import Path

import attrs

from kernel_builder.hub.download import HubClient, validate_repo_id
from kernel_builder.loader import cache
from kernel_builder.loader.errors import InvalidRequest, KernelNotFound, check_choice
from kernel_builder.loader.local import list_variant_dirs
from kernel_builder.loader.verify import skip_requested, verify_variant
from kernel_builder.loader.metadata import read_metadata
from kernel_builder.tree.metadata import Metadata
from kernel_builder.variants.resolve import Resolution, format_trace, resolve
from kernel_builder.variants.system import System

__all__ = ["Target", "select_revision", "available_versions", "variant_names", "choose", "install", "install_all"]

log = logging.getLogger("kernel_builder.loader")
_COMMIT = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


@attrs.frozen
class Target:
    """A repo at a resolved commit; ``label`` is what the user asked for (``v1``, ``main``, a commit)."""

    repo_id: str
    label: str
    commit: str
    version: int | None = None


def available_versions(repo_id: str, *, offline: bool, client: HubClient | None) -> dict[int, str]:
    """``{N: commit}`` of the ``vN`` branches (from the cache when offline)."""
    if offline:
        return cache.cached_versions(cache.cache_root(), repo_id)
    assert client is not None
    return client.version_branches(repo_id)


def select_revision(
    repo_id: str, *, revision: str | None, version: int | None, offline: bool, client: HubClient | None
) -> Target:
    """Resolve ``version``/``revision`` to a commit, with the reference's error texts."""
    validate_repo_id(repo_id)
    check_choice(revision, version)
    root = cache.cache_root()
    if version is not None:
        versions = available_versions(repo_id, offline=offline, client=client)
        commit = versions.get(int(version))
        if commit is None:
            if offline and not versions:
                raise InvalidRequest(
                    f"Version {version} of '{repo_id}' is not available in the local cache and the Hub is in "
                    "offline mode (HF_HUB_OFFLINE).",
                    hint="download the kernel while online first, or pass revision=<commit>",
                )
            listing = ", ".join(str(v) for v in sorted(versions))
            raise InvalidRequest(
                f"Version {version} not found, available versions: {listing}",
                hint=f"pick one of the vN branches of {repo_id}",
            )
        latest = max(versions)
        if int(version) < latest:
            log.warning("You are using version %d of '%s', but version %d is available.", version, repo_id, latest)
        return Target(repo_id, f"v{version}", commit, int(version))
    assert revision is not None
    if offline:
        commit = cache.local_commit(root, repo_id, revision)
        if commit is None:
            raise KernelNotFound(
                f"Cannot find a local snapshot for {repo_id} (revision: {revision}) and the Hub is in offline "
                "mode (HF_HUB_OFFLINE): the kernel must already be in the local cache.",
                hint="download it while online (or with `kernel-builder download`) first",
            )
        return Target(repo_id, revision, commit)
    assert client is not None
    commit = revision if _COMMIT.fullmatch(revision) else client.commit_of(repo_id, revision)
    return Target(repo_id, revision, commit)


def variant_names(target: Target, *, offline: bool, client: HubClient | None) -> list[str]:
    if offline:
        root = cache.cache_root()
        return list_variant_dirs(cache.snapshot_dir(root, target.repo_id, target.commit) / "build")
    assert client is not None
    return client.variant_names(target.repo_id, target.commit)


def _no_variant(target: Target, resolution: Resolution, system: System) -> KernelNotFound:
    return KernelNotFound(
        f"Cannot find a build variant for this system in {target.repo_id} (revision: {target.label}):\n\n"
        f"{format_trace(resolution)}",
        hint=f"this system: {system.describe()}",
    )


def choose(target: Target, system: System, *, offline: bool, client: HubClient | None) -> tuple[str, Resolution]:
    resolution = resolve(system, variant_names(target, offline=offline, client=client))
    if resolution.best is None:
        raise _no_variant(target, resolution, system)
    return resolution.best, resolution


def _record_refs(root: Path, target: Target) -> None:
    if target.label != target.commit:
        cache.write_ref(root, target.repo_id, target.label.removeprefix("refs/heads/"), target.commit)


def install(
    target: Target,
    system: System,
    *,
    offline: bool,
    client: HubClient | None,
    verify_digest: bool | None = None,
    before_download: Callable[[Metadata, str], None] | None = None,
) -> tuple[Path, Metadata]:
    """The verified variant directory for ``system`` (downloading it when online and missing).

    ``before_download(metadata, variant)`` runs after metadata.json arrived and before the
    bulk download (the load checks go there, so a kernel that cannot load is not fetched).
    """
    root = cache.cache_root()
    variant, resolution = choose(target, system, offline=offline, client=client)
    log.info(
        "%s (revision %s, commit %s): variant %s of %d for %s",
        target.repo_id, target.label, target.commit[:12], variant, len(resolution.decisions), system.describe(),
    )
    variant_dir = cache.snapshot_dir(root, target.repo_id, target.commit) / "build" / variant
    if offline:
        if not (variant_dir / "metadata.json").is_file():
            raise KernelNotFound(
                f"Variant {variant} of {target.repo_id} (revision: {target.label}) is not complete in the cache "
                f"({variant_dir})",
                hint="download it again while online",
            )
        return variant_dir, read_metadata(variant_dir / "metadata.json")
    assert client is not None
    with cache.download_lock(root, target.repo_id, target.commit, variant):
        if cache.is_complete(root, target.repo_id, target.commit, variant) and variant_dir.is_dir():
            _record_refs(root, target)
            return variant_dir, read_metadata(variant_dir / "metadata.json")
        meta_path = client.download_file(target.repo_id, f"build/{variant}/metadata.json", target.commit, root)
        metadata = read_metadata(meta_path)
        if before_download is not None:
            before_download(metadata, variant)
        snapshot = client.download_variants(target.repo_id, target.commit, [variant], root)
        variant_dir = snapshot / "build" / variant
        if not variant_dir.is_dir():
            raise KernelNotFound(f"Cannot install kernel from repo {target.repo_id} (revision: {target.label})")
        if not skip_requested(verify_digest):
            verify_variant(variant_dir, metadata)
            cache.mark_complete(root, target.repo_id, target.commit, variant)
        _record_refs(root, target)
        return variant_dir, metadata


def install_all(target: Target, *, client: HubClient, verify_digest: bool | None = None) -> Path:
    """Download and verify every variant of ``target`` (``download --all-variants``); returns ``.../build``.

    The variant names are listed (and validated) first so that only ``build/<variant>/``
    folders with safe names reach the disk; each downloaded variant is then checked
    against its digest like a single-variant download.
    """
    root = cache.cache_root()
    names = client.variant_names(target.repo_id, target.commit)
    if not names:
        raise KernelNotFound(f"No build variants found in {target.repo_id} (revision: {target.label})")
    snapshot = client.download_variants(target.repo_id, target.commit, names, root)
    build = snapshot / "build"
    skip = skip_requested(verify_digest)
    for name in names:
        meta = build / name / "metadata.json"
        if not meta.is_file():
            raise KernelNotFound(
                f"Variant {name} of {target.repo_id} (revision: {target.label}) has no metadata.json",
                hint="every variant under build/ needs its metadata.json (with a digest)",
            )
        verify_variant(build / name, read_metadata(meta), verify_digest=verify_digest)  # warns when skipped
        if not skip:
            cache.mark_complete(root, target.repo_id, target.commit, name)
    _record_refs(root, target)
    return build
