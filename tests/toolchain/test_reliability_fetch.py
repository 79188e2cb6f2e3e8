"""Issue 24, finding 8: disk leaks and unrooted artifacts.

Each SIGKILLed `toolchain fetch` left a `kb-fetch-XXXX` directory in /tmp, never cleaned;
the fetched artifacts were not GC roots, so `nix-store --gc` deleted them and plain offline
builds failed; a second fetch waited silently on the first one's lock. Now scratch space
lives under the state directory named after its owner and the next run removes it, every
fetched artifact is rooted per lock version (`toolchain gc` releases old versions), and a
waiting fetch says what it waits for. The toolchain of torch2.13-cpu is in the store
already, so these fetches download nothing (they run offline).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

from filelock import FileLock

from kernel_builder import nix
from kernel_builder.toolchain.pinned.lockfile import load_lock
from kernel_builder.toolchain.pinned.roots import lock_digest, register_roots
from nix_support import REPO

LOCK = REPO / "nix" / "toolchain-lock.json"
BUILD_SET = "torch2.13-cpu"


def _fetch(state: Path, *extra: str, **kwargs: object) -> subprocess.Popen[str]:
    env = {**os.environ, "KERNEL_BUILDER_STATE_DIR": str(state)}
    return subprocess.Popen([sys.executable, "-m", "kernel_builder", "toolchain", "fetch", "--build-set", BUILD_SET, *extra],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def test_a_killed_fetchs_scratch_is_removed_by_the_next_run_and_nothing_lands_in_tmp(tmp_path: Path) -> None:
    state = tmp_path / "state"
    leftover = state / "tmp" / f"fetch.pid{_dead_pid()}.0badc0de"
    (leftover / "wheels").mkdir(parents=True)
    (leftover / "wheels" / "torch.whl.part").write_bytes(b"\0" * (1 << 20))
    alive = state / "tmp" / f"fetch.pid{os.getpid()}.0000beef"  # a running owner's directory stays
    alive.mkdir()
    before = set(Path("/tmp").glob("kb-fetch-*"))
    proc = _fetch(state)
    _, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err
    assert not leftover.exists() and alive.exists()
    assert f"removed {leftover}" in err
    assert list((state / "tmp").iterdir()) == [alive]  # its own scratch is gone too
    assert set(Path("/tmp").glob("kb-fetch-*")) == before


def test_fetched_artifacts_are_gc_roots_and_gc_releases_old_lock_versions(tmp_path: Path) -> None:
    state = tmp_path / "state"
    proc = _fetch(state)
    _, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err
    lock = load_lock(LOCK)
    wanted = [a.store_path for a in lock.artifacts_for([BUILD_SET])] + [lock.seed.store_path]
    roots = list((state / "gcroots" / "toolchain").glob(f"{lock_digest(LOCK)}.*"))
    assert len(roots) == 1
    rooted = {str(link.readlink()) for link in roots[0].iterdir()}
    assert set(wanted) <= rooted
    # Nix itself sees them as roots (what keeps `nix-store --gc` from deleting them).
    for path in (wanted[0], wanted[-1]):
        done = nix.run_nix(["--query", "--roots", path], program="nix-store")
        assert str(roots[0]) in done.stdout, done.stdout
    # A formatting edit keeps the key (the artifacts, not the bytes): the same directory.
    edited = tmp_path / "edited-lock.json"
    edited.write_text(LOCK.read_text() + " ")
    assert register_roots(edited, [wanted[0]], state=state) == roots[0]
    # Another lock version (one artifact changed) that rooted an artifact the current lock
    # still uses: `toolchain gc` keeps that root and the current ones (releasing what no lock
    # references is tests/toolchain/test_reliability_gc.py).
    data = json.loads(LOCK.read_text())
    changed = next(iter(data["artifacts"]))
    data["artifacts"][changed]["sha256"] = "0" * 64
    old_lock = tmp_path / "old-lock.json"
    old_lock.write_text(json.dumps(data))
    old = register_roots(old_lock, [wanted[0]], state=state)
    assert old.parent == roots[0].parent and old != roots[0]
    env = {**os.environ, "KERNEL_BUILDER_STATE_DIR": str(state)}
    done = subprocess.run([sys.executable, "-m", "kernel_builder", "toolchain", "gc"], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "0 root(s) and 0 roots directories" in done.stderr, done.stderr
    assert old.exists() and roots[0].exists()


def test_a_waiting_fetch_says_what_it_waits_for(tmp_path: Path) -> None:
    state = tmp_path / "state"
    lock_file = state / "locks" / "toolchain-fetch.lock"
    lock_file.parent.mkdir(parents=True)
    held = FileLock(str(lock_file))
    held.acquire()
    said = f"waiting for another `kernel-builder toolchain fetch` to finish (it holds {lock_file})"
    lines: list[str] = []
    reached = threading.Event()

    def read(stream) -> None:  # noqa: ANN001 - the child's stderr
        for line in stream:
            lines.append(line)
            if said in line:
                reached.set()

    try:
        proc = _fetch(state)
        reader = threading.Thread(target=read, args=(proc.stderr,), daemon=True)
        reader.start()
        # the event, not a clock: the child says it reached the lock and waits there
        assert reached.wait(300), "".join(lines)
        assert proc.poll() is None  # ...and it is still waiting while the lock is held
    finally:
        held.release()
    proc.wait(timeout=600)
    reader.join(60)
    err = "".join(lines)
    assert proc.returncode == 0, err
    assert err.count(said) == 1
