"""The pinned toolchains from the front end's side: seed the store before a build, and
remember which store Python serves each build set (``kernel-builder check`` imports each
variant with it)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from kernel_builder.toolchain.state import state_dir

__all__ = ["ensure_fetched", "record_pythons", "pinned_pythons", "progress_printer"]


def progress_printer(console: Any, label: str = "fetch") -> Any:
    """An ``on_progress`` callback that draws a rich progress bar (or prints lines)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    bar = Progress(TextColumn(f"{label} [progress.description]{{task.description}}"), BarColumn(), MofNCompleteColumn(),
                   TimeElapsedColumn(), console=console, transient=True)
    state: dict[str, Any] = {}

    def on_progress(name: str, done: int, total: int) -> None:
        if "task" not in state:
            if total == 0:
                return
            bar.start()
            state["task"] = bar.add_task("", total=total)
        bar.update(state["task"], completed=done, description=name[:60])
        if done >= total:
            bar.stop()

    return on_progress


def ensure_fetched(build_sets: Iterable[str], console: Any) -> None:
    """Fetch the artifacts of ``build_sets`` that the store lacks (nothing when all are there)."""
    from kernel_builder.toolchain.fetch import fetch, missing_paths
    from kernel_builder.toolchain.lockfile import load_lock

    lock = load_lock()
    wanted = sorted({key for key in build_sets if key in lock.build_sets})
    if not wanted:
        return
    paths = [a.store_path for a in lock.artifacts_for(wanted)] + ([lock.seed.store_path] if lock.seed else [])
    if not missing_paths(paths):
        return
    console.print(f"fetching the pinned toolchain artifacts for {', '.join(wanted)} (once per machine)", highlight=False)
    report = fetch(lock, wanted, on_progress=progress_printer(console))
    console.print(f"fetched {len(report.added)} artifact(s) into the Nix store in {report.seconds:.0f}s", highlight=False)


def _path(state: Path | None) -> Path:
    return (state or state_dir()) / "pinned-toolchains.json"


def record_pythons(table: Sequence[dict[str, Any]], *, state: Path | None = None) -> None:
    """Remember the store Python of every pinned build set in the flake's variant table."""
    path = _path(state)
    try:
        record = json.loads(path.read_text())
    except (OSError, ValueError):
        record = {}
    sets = record.setdefault("build-sets", {})
    for row in table:
        if row.get("toolchainProvider") == "pinned" and row.get("toolchainPython"):
            sets[row["buildSet"]] = {"python": row["toolchainPython"]}
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(record, indent=2, sort_keys=True) + "\n")
    os.replace(tmp, path)


def pinned_pythons(*, state: Path | None = None) -> dict[str, Any] | None:
    """The recorded store Pythons (the same shape as the host record's ``build-sets``)."""
    try:
        record = json.loads(_path(state).read_text())
    except (OSError, ValueError):
        return None
    sets = {k: v for k, v in record.get("build-sets", {}).items() if Path(v.get("python", "")).exists()}
    return {"build-sets": sets}
