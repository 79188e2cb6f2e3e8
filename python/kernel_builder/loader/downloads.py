"""What the kernel cache holds: the downloaded Hub kernels, per version, with their variants.

``kernel-builder downloads ls`` shows it as PyPI ``kernels cache ls`` (0.19.1) does. The cache
is huggingface_hub's (``loader.cache``), scanned with huggingface_hub's own scanner, so sizes
and times are those ``hf cache ls`` reports: a repository counts when it is a kernel
repository; a revision counts when a ``vN`` ref names it (what ``get_kernel(version=N)``
records), and its variants are the ``build/<variant>`` directories that hold a downloaded
file and are variant names. The loaders' bookkeeping directories in the cache root
(kernel-builder's ``.kernel-builder``: completion marks, locks, receipts; PyPI ``kernels``'
``.verified-kernels``: its digest receipts) are not repositories and raise no warning here
(``kernels cache ls`` 0.19.1 counts each as an inconsistency).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import attrs

from kernel_builder.errors import LoadError
from kernel_builder.loader import cache

__all__ = ["CachedVersion", "CachedKernel", "Downloads", "scan_downloads"]

_VERSION_REF = re.compile(r"v(\d+)")
_BOOKKEEPING = (".kernel-builder", ".verified-kernels")


@attrs.frozen
class CachedVersion:
    """One cached ``vN`` of a kernel: the revision it names, its size and its variants."""

    version: str
    size_on_disk: int
    size_on_disk_str: str
    last_accessed: float
    last_modified: float
    last_modified_str: str
    variants: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "size_on_disk": self.size_on_disk,
            "last_accessed": self.last_accessed,
            "last_modified": self.last_modified,
            "variants": list(self.variants),
        }


@attrs.frozen
class CachedKernel:
    """A kernel repository in the cache with its cached versions (ascending)."""

    repo_id: str
    size_on_disk: int
    last_accessed: float
    last_modified: float
    versions: tuple[CachedVersion, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "repo_id": self.repo_id,
            "size_on_disk": self.size_on_disk,
            "last_accessed": self.last_accessed,
            "last_modified": self.last_modified,
            "versions": [v.to_json() for v in self.versions],
        }


@attrs.frozen
class Downloads:
    """The scan of one cache directory; ``warnings`` are the inconsistencies found (each a
    repository the scan left out)."""

    cache_dir: Path
    kernels: tuple[CachedKernel, ...]
    warnings: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"cache_dir": str(self.cache_dir), "repos": [k.to_json() for k in self.kernels]}


def _variants(revision: Any) -> tuple[str, ...]:
    """The variant directories of a cached revision that hold at least one downloaded file."""
    from kernel_builder.variants.names import try_parse  # lazy: only for a scan

    build = Path(revision.snapshot_path) / "build"
    present = {Path(f.file_path).relative_to(build).parts[0] for f in revision.files if build in Path(f.file_path).parents}
    return tuple(sorted(name for name in present if (build / name).is_dir() and try_parse(name) is not None))


def scan_downloads(cache_dir: str | Path | None = None) -> Downloads:
    """Scan ``cache_dir`` (default: the loader's cache root, ``KERNELS_CACHE`` or the Hub's).

    A directory that does not exist is an empty cache; one that cannot be read is a
    ``LoadError`` (``Cannot scan kernel cache: ...``)."""
    from huggingface_hub import scan_cache_dir  # lazy: huggingface_hub's scanner, only for this command
    from huggingface_hub.utils import CacheNotFound  # lazy: as above

    root = Path(cache_dir if cache_dir is not None else cache.cache_root()).expanduser().resolve()
    try:
        info = scan_cache_dir(root)
    except CacheNotFound:
        return Downloads(root, ())
    except (OSError, ValueError) as exc:
        raise LoadError(f"Cannot scan kernel cache: {exc}", hint="pass --cache-dir with a readable cache directory") from None
    kernels = []
    for repo in sorted(info.repos, key=lambda r: r.repo_id):
        if repo.repo_type != "kernel":
            continue
        refs = [(int(m.group(1)), ref, rev) for ref, rev in repo.refs.items() if (m := _VERSION_REF.fullmatch(ref))]
        if not refs:
            continue
        versions = []
        for _, ref, revision in sorted(refs, key=lambda entry: (entry[0], entry[1])):
            accessed = max((f.blob_last_accessed for f in revision.files),
                           default=Path(revision.snapshot_path).stat().st_atime)
            versions.append(CachedVersion(
                version=ref,
                size_on_disk=revision.size_on_disk,
                size_on_disk_str=revision.size_on_disk_str,
                last_accessed=accessed,
                last_modified=revision.last_modified,
                last_modified_str=revision.last_modified_str,
                variants=_variants(revision),
            ))
        kernels.append(CachedKernel(repo.repo_id, repo.size_on_disk, repo.last_accessed, repo.last_modified, tuple(versions)))
    ours = tuple(str(root / name) for name in _BOOKKEEPING)
    warnings = tuple(str(w) for w in info.warnings if not str(w).rstrip(".").endswith(ours))
    return Downloads(root, tuple(kernels), warnings)
