"""The pinned toolchains from the front end's side: seed the store before a build, and
remember which store Python serves each build set (``kernel-builder check`` imports each
variant with it)."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from kernel_builder._files import write_atomic
from kernel_builder.nix import invalid_paths
from kernel_builder.toolchain.pinned.fetch import fetch
from kernel_builder.toolchain.pinned.lockfile import load_lock
from kernel_builder.state import state_dir

__all__ = ["ensure_fetched", "record_pythons", "pinned_pythons"]

log = logging.getLogger(__name__)


def ensure_fetched(build_sets: Iterable[str], on_progress: Callable[[str, int, int], None] | None = None) -> None:
    """Fetch the artifacts of ``build_sets`` that the store lacks (nothing when all are there):
    those of this machine's toolchains (a native aarch64-linux host's on such a machine)."""
    from kernel_builder.variants.buildsets import current_system  # lazy: as in flake_build

    lock = load_lock()
    system = lock.native_system(current_system())
    pinned = lock.build_sets if system == lock.system else lock.hosts[system].get("buildSets") or {}
    wanted = sorted({key for key in build_sets if key in pinned})
    if not wanted:
        return
    seed = lock.seed_of(system)
    paths = [a.store_path for a in lock.artifacts_for(wanted, system)] + ([seed.store_path] if seed else [])
    if not invalid_paths(paths):
        return
    log.info(f"fetching the pinned toolchain artifacts for {', '.join(wanted)} (once per machine)")
    report = fetch(lock, wanted, on_progress=on_progress, system=system)
    log.info(f"fetched {len(report.added)} artifact(s) ({report.added_bytes / 1e9:.2f} GB) into the Nix store in {report.seconds:.0f}s")


def _path(state: Path | None) -> Path:
    return (state or state_dir()) / "pinned-toolchains.json"


def record_pythons(pythons: Mapping[str, str], *, state: Path | None = None) -> None:
    """Remember the store Python of pinned build sets (build-set key -> Python)."""
    path = _path(state)
    try:
        record = json.loads(path.read_text())
    except (OSError, ValueError):
        record = {}
    sets = record.setdefault("build-sets", {})
    for key, python in pythons.items():
        sets[key] = {"python": python}
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, json.dumps(record, indent=2, sort_keys=True) + "\n")


def pinned_pythons(*, state: Path | None = None) -> dict[str, str] | None:
    """The recorded store Pythons that still exist: build-set key -> Python."""
    try:
        record = json.loads(_path(state).read_text())
    except (OSError, ValueError):
        return None
    sets = record.get("build-sets", {}) if isinstance(record, dict) else {}
    pythons = {k: v.get("python", "") for k, v in sets.items() if isinstance(v, dict)}
    return {k: p for k, p in pythons.items() if p and Path(p).exists()}
