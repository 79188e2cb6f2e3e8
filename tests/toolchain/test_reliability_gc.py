"""Issue 45, finding 6: `toolchain gc` never releases what the current lock references.

Roots were keyed on the lock file's bytes: after a comment-only edit (or with a lock never
fetched, invalid or missing) gc listed the current roots as stale, and the documented
`toolchain gc && nix-store --gc` would have deleted every artifact the lock still uses; a
missing lock was a FileNotFoundError traceback. The roots here are planted links (what
`nix-store --add-root --indirect` makes); gc only reads and removes links, so no store is needed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kernel_builder._source import nix_dir
from kernel_builder.toolchain.pinned.lockfile import load_lock
from kernel_builder.toolchain.pinned.roots import lock_digest, referenced_paths

LOCK = nix_dir() / "toolchain-lock.json"
UNUSED = "/nix/store/" + "z" * 32 + "-old-torch-2.9.0.whl"


def _gc(state: Path, lock: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "KERNEL_BUILDER_STATE_DIR": str(state), "KERNEL_BUILDER_TOOLCHAIN_LOCK": str(lock)}
    return subprocess.run([sys.executable, "-m", "kernel_builder", "toolchain", "gc", *args], env=env, capture_output=True, text=True, timeout=120)


def _roots(state: Path, name: str, paths: list[str]) -> Path:
    directory = state / "gcroots" / "toolchain" / name
    directory.mkdir(parents=True)
    for i, path in enumerate(paths):
        (directory / ("root" if i == 0 else f"root-{i + 1}")).symlink_to(path)
    return directory


@pytest.fixture
def edited_lock(tmp_path: Path) -> Path:
    """The current lock after a formatting-only edit: other bytes, the same artifacts."""
    edited = tmp_path / "toolchain-lock.json"
    edited.write_text(json.dumps(json.loads(LOCK.read_text()), indent=1, sort_keys=True) + "\n\n")
    assert edited.read_bytes() != LOCK.read_bytes()
    return edited


def test_a_formatting_edit_keeps_every_root_the_lock_references(tmp_path: Path, edited_lock: Path) -> None:
    state = tmp_path / "state"
    needed = sorted(referenced_paths(load_lock(edited_lock)))[:3]
    fetched = _roots(state, f"{lock_digest(LOCK)}.0000beef", needed)  # rooted by a fetch of the unedited lock
    assert lock_digest(edited_lock) == lock_digest(LOCK)  # the key is the artifacts, not the bytes
    mixed = _roots(state, "0123456789abcdef.0000cafe", [needed[0], UNUSED])  # an older lock: one artifact still used
    old = _roots(state, "fedcba9876543210.0000f00d", [UNUSED])  # an older lock: nothing still used

    dry = _gc(state, edited_lock, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert f"would remove {old}" in dry.stderr and f"would release {mixed / 'root-2'}" in dry.stderr
    assert str(fetched) not in dry.stderr and f"{mixed / 'root'}\n" not in dry.stderr
    assert old.exists() and (mixed / "root-2").is_symlink()  # a dry run removes nothing

    done = _gc(state, edited_lock)
    assert done.returncode == 0, done.stderr
    assert "4 root(s) of artifacts it references kept" in done.stderr, done.stderr
    assert sorted(os.readlink(p) for p in fetched.iterdir()) == needed
    assert [os.readlink(p) for p in mixed.iterdir()] == [needed[0]]
    assert not old.exists()


@pytest.mark.parametrize(
    ("lock", "fragment"),
    [
        ("/nonexistent.json", "the toolchain lock /nonexistent.json does not exist"),
        ("broken", "toolchain-lock.json:1:2: not valid JSON"),
        ("empty-object", "schema: expected"),
    ],
)
def test_a_missing_or_invalid_lock_is_a_located_error_and_removes_nothing(tmp_path: Path, lock: str, fragment: str) -> None:
    state = tmp_path / "state"
    old = _roots(state, "fedcba9876543210.0000f00d", [UNUSED])
    path = Path(lock)
    if lock == "broken":
        path = tmp_path / "toolchain-lock.json"
        path.write_text("{{")
    elif lock == "empty-object":
        path = tmp_path / "toolchain-lock.json"
        path.write_text("{}")
    for args in (["--dry-run"], []):
        done = _gc(state, path, *args)
        assert done.returncode == 3, done.stderr
        assert "Traceback" not in done.stderr and fragment in done.stderr, done.stderr
        assert old.exists()
