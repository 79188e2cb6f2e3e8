"""Kernels on the local disk: ``LOCAL_KERNELS`` overrides and local tree layouts."""

from __future__ import annotations

import functools
import os
from pathlib import Path

from kernel_builder.loader.errors import InvalidRequest, KernelNotFound
from kernel_builder.variants.resolve import Resolution, format_trace, resolve
from kernel_builder.variants.system import System

__all__ = ["local_overrides", "local_variant_dir", "list_variant_dirs"]


def local_overrides() -> dict[str, Path]:
    """``LOCAL_KERNELS="org/a=/path/a:org/b=/path/b"`` as a mapping (read on every call)."""
    return _parse(os.environ.get("LOCAL_KERNELS", ""))


@functools.lru_cache(maxsize=8)
def _parse(text: str) -> dict[str, Path]:
    out: dict[str, Path] = {}
    if not text:
        return out
    for entry in text.split(":"):
        if "=" not in entry:
            raise InvalidRequest(
                f"Invalid LOCAL_KERNELS entry: {entry!r}",
                hint="expected format: repo_id_1=path_1:repo_id_2=path_2",
            )
        repo_id, path = entry.split("=", 1)
        out[repo_id] = Path(path)
    return out


def list_variant_dirs(base: Path) -> list[str]:
    """Names of the immediate sub-directories of ``base`` (empty when it is not a directory)."""
    try:
        return sorted(e.name for e in os.scandir(base) if e.is_dir())
    except OSError:
        return []


def local_variant_dir(path: Path, system: System) -> tuple[Path, Resolution | None]:
    """The variant to load from a repo root, its ``build/`` dir, or a variant dir itself."""
    path = Path(path)
    traces: list[Resolution] = []
    for base in (path, path / "build"):
        res = resolve(system, list_variant_dirs(base))
        if res.best is not None:
            return base / res.best, res
        traces.append(res)
    if os.path.lexists(path / "metadata.json"):  # a variant dir; reading it names a bad metadata.json
        return path, None
    if not path.exists():
        raise KernelNotFound(f"Could not find kernel in {path}", hint="check the path (and LOCAL_KERNELS)")
    # Report the level that holds variants (``build/`` of a repo root, else the path itself).
    parsed = [r for r in traces if r.accepted or any(not x.reason.startswith("not a variant") for x in r.rejected)]
    trace = format_trace(parsed[-1]) if parsed else "(no variant directories)"
    raise KernelNotFound(
        f"Cannot find a build variant for this system in {path}:\n\n{trace}",
        hint=f"this system: {system.describe()}",
    )
