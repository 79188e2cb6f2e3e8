"""Hub reads for the loader: versions, variant listings, trust, and variant downloads.

This is the only loader module that talks to the Hub (and the only one importing
huggingface_hub). Every call takes a ``HubClient`` so tests can point it at a local
server; Hub HTTP errors come back as ``HubError`` naming the repo and revision, and
anything the Hub returns that will become a path on disk (variant names, commit ids) is
validated here before the caller sees it.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Any

import attrs

from kernel_builder.ids import REPO_ID_RULE, RepoId
from kernel_builder.errors import HubError
from kernel_builder.hub.client import make_api
from kernel_builder.hub.errors import describe, hub_error

__all__ = [
    "HubClient",
    "BYTECODE_IGNORE",
    "is_offline",
    "validate_repo_id",
    "validate_variant_name",
    "validate_commit",
]

# Bytecode is never part of a build; a stray one on the Hub must not reach the cache.
BYTECODE_IGNORE = ["*.pyc", "**/__pycache__/**"]
REPO_TYPE = "kernel"

_COMMIT = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_VARIANT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def is_offline() -> bool:
    """``HF_HUB_OFFLINE``, read at call time (also honours a patched huggingface_hub constant)."""
    value = os.environ.get("HF_HUB_OFFLINE", "")
    if value.strip().lower() in ("1", "true", "yes", "on"):
        return True
    constants = sys.modules.get("huggingface_hub.constants")
    return bool(getattr(constants, "HF_HUB_OFFLINE", False)) if constants is not None else False


def validate_repo_id(repo_id: str) -> str:
    """``org/name`` with the Hub's characters only; never ``..``, never a path."""
    try:
        RepoId.parse(repo_id)
    except ValueError:
        raise HubError(f"invalid Hub repository id {repo_id!r}", hint=f"use the form {REPO_ID_RULE}") from None
    return repo_id


def validate_variant_name(name: str, *, repo_id: str = "", revision: str = "") -> str:
    """A variant name from the Hub becomes a directory name: refuse anything path-like."""
    if (
        not isinstance(name, str)
        or not _VARIANT.fullmatch(name)
        or ".." in name
        or os.path.isabs(name)
        or "/" in name
        or "\\" in name
    ):
        where = f" in {repo_id} (revision {revision})" if repo_id else ""
        raise HubError(f"refusing unsafe variant name {name!r}{where}", hint="variant names are single path components")
    return name


def validate_commit(commit: Any, *, repo_id: str, revision: str) -> str:
    if not isinstance(commit, str) or not _COMMIT.fullmatch(commit):
        raise HubError(
            f"the Hub answered an invalid commit id {commit!r} for {repo_id} (revision {revision})",
            hint="check HF_ENDPOINT points at a Hugging Face Hub server",
        )
    return commit


def _failed(exc: Exception, action: str, repo_id: str, revision: str | None = None) -> HubError:
    """``hub_error`` with the repo and revision named the same way for every read."""
    rev = f" (revision {revision})" if revision else ""
    return hub_error(exc, f"{action} for {repo_id}{rev}", repo_id=repo_id, revision=revision)


@attrs.define
class HubClient:
    """A thin wrapper over ``HfApi`` for kernel repos (repo type ``kernel``)."""

    endpoint: str | None = None
    user_agent: str | dict[str, str] | None = None
    token: str | bool | None = None
    _api: Any = attrs.field(default=None, init=False, repr=False)

    @property
    def api(self) -> Any:
        if self._api is None:
            self._api = make_api(self.endpoint, self.token, user_agent=self.user_agent, implicit_token=True)
        return self._api

    def version_branches(self, repo_id: str) -> dict[int, str]:
        """``{N: commit}`` for every branch named ``vN`` (non-integer suffixes ignored)."""
        try:
            refs = self.api.list_repo_refs(repo_id, repo_type=REPO_TYPE)
        except Exception as exc:  # noqa: BLE001 - mapped to HubError
            raise _failed(exc, "listing versions", repo_id) from exc
        out: dict[int, str] = {}
        for branch in refs.branches:
            m = re.fullmatch(r"v(\d+)", branch.name)
            if m:
                out[int(m.group(1))] = validate_commit(branch.target_commit, repo_id=repo_id, revision=branch.name)
        return out

    def commit_of(self, repo_id: str, revision: str) -> str:
        """The commit a branch, tag or commit id points at."""
        try:
            info = self.api.repo_info(repo_id, repo_type=REPO_TYPE, revision=revision)
        except Exception as exc:  # noqa: BLE001
            raise _failed(exc, "resolving the revision", repo_id, revision) from exc
        return validate_commit(info.sha, repo_id=repo_id, revision=revision)

    def variant_names(self, repo_id: str, revision: str) -> list[str]:
        """Names of the folders under ``build/`` (sorted; validated as path components)."""
        from huggingface_hub import errors  # lazy: pulls in httpx; the loader imports this module at start-up
        from huggingface_hub.hf_api import RepoFolder  # lazy: as above

        try:
            tree = list(self.api.list_repo_tree(repo_id, path_in_repo="build", repo_type=REPO_TYPE, revision=revision))
        except Exception as exc:  # noqa: BLE001
            if isinstance(exc, errors.EntryNotFoundError):
                return []
            raise _failed(exc, "listing build variants", repo_id, revision) from exc
        names = sorted({item.path.rsplit("/", 1)[-1] for item in tree if isinstance(item, RepoFolder)})
        return [validate_variant_name(n, repo_id=repo_id, revision=revision) for n in names]

    def is_trusted_publisher(self, org: str) -> bool:
        try:
            info = self.api.get_organization_overview(org)
        except Exception as exc:  # noqa: BLE001
            raise HubError(
                describe(exc).after(f"could not verify whether {org!r} is a trusted kernel publisher"),
                hint="pass trust_remote_code=True to load kernels from publishers you trust yourself",
            ) from exc
        return bool(getattr(info, "trustedKernelPublisher", False) or getattr(info, "trusted_kernel_publisher", False))

    def file_exists(self, repo_id: str, path: str, revision: str) -> bool:
        try:
            return bool(self.api.file_exists(repo_id, path, repo_type=REPO_TYPE, revision=revision))
        except Exception as exc:  # noqa: BLE001
            raise _failed(exc, f"checking {path}", repo_id, revision) from exc

    def download_file(self, repo_id: str, path: str, commit: str, cache_dir: Path) -> Path:
        """One file (e.g. a variant's metadata.json) into the cache."""
        try:
            return Path(
                self.api.hf_hub_download(repo_id, path, repo_type=REPO_TYPE, revision=commit, cache_dir=str(cache_dir))
            )
        except Exception as exc:  # noqa: BLE001
            raise _failed(exc, f"downloading {path}", repo_id, commit) from exc

    def download_variants(self, repo_id: str, commit: str, variants: list[str] | None, cache_dir: Path) -> Path:
        """Snapshot only ``build/<variant>/`` (or all of ``build/`` when ``variants`` is None).

        Returns the snapshot root (``.../snapshots/<commit>``).
        """
        validate_commit(commit, repo_id=repo_id, revision=commit)
        if variants is None:
            allow = ["build/*"]
        else:
            allow = [f"build/{validate_variant_name(v, repo_id=repo_id, revision=commit)}/*" for v in variants]
        try:
            root = self.api.snapshot_download(
                repo_id,
                repo_type=REPO_TYPE,
                revision=commit,
                allow_patterns=allow,
                ignore_patterns=BYTECODE_IGNORE,
                cache_dir=str(cache_dir),
            )
        except Exception as exc:  # noqa: BLE001
            raise _failed(exc, "downloading the kernel", repo_id, commit) from exc
        return Path(str(root))
