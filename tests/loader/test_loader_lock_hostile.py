"""kernels.lock and pyproject.toml under attack, a lock write that fails half-way, and
slash revisions offline: the CLI in a subprocess, against the Hub test server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hub_fixture import publish
from loader_trees import write_variant

from kernel_builder.loader.errors import InvalidRequest
from kernel_builder.loader.lockfile import parse_lockfile, read_lockfile

COMMIT = "0123456789abcdef0123456789abcdef01234567"


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kernel_builder", *args],
        capture_output=True, text=True, timeout=120, env={**os.environ, **(env or {})},
    )


def entry(**dep: object) -> dict[str, object]:
    return {"dependency": dep, "lock": {"commit": COMMIT}}


def test_an_uppercase_commit_is_accepted_and_lowered() -> None:
    text = json.dumps([{"dependency": {"repo-id": "a/b", "version": 1}, "lock": {"commit": COMMIT.upper()}}])
    assert parse_lockfile(text, "kernels.lock")[0].commit == COMMIT


@pytest.mark.parametrize(
    "data",
    [
        [entry(**{"repo-id": 5, "version": 1})],
        [entry(**{"repo-id": "a/b", "version": True})],
        [entry(**{"repo-id": "a/b", "version": "1"})],
        [entry(**{"repo-id": "a/b", "revision": 3})],
        [{"dependency": {"repo-id": "a/b", "version": 1}, "lock": {"commit": 12}}],
        [{"dependency": "a/b", "lock": []}],
        [5],
    ],
)
def test_malformed_entries_name_the_entry(data: list[object]) -> None:
    with pytest.raises(InvalidRequest, match=r"kernels.lock: entry 0 is not"):
        parse_lockfile(json.dumps(data), "kernels.lock")


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
        (b'[{"dependency": \xff}]', "kernels.lock:1:17: is not UTF-8 text"),
        (b'[{"dependency": }]', "kernels.lock:1:17 is not valid JSON"),
    ],
)
def test_hostile_lock_files_give_one_error(tmp_path: Path, content: bytes, fragment: str) -> None:
    path = tmp_path / "kernels.lock"
    path.write_bytes(content)
    with pytest.raises(InvalidRequest, match="lock file") as info:
        read_lockfile(path)
    assert fragment in str(info.value)
    done = run("download", str(tmp_path))  # the CLI: exit 1, no traceback
    assert done.returncode == 7 and "Traceback" not in done.stderr and fragment in done.stderr, done.stderr


def test_a_fifo_lock_file_does_not_hang(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "kernels.lock")
    done = run("download", str(tmp_path))
    assert done.returncode == 7 and "is a FIFO" in done.stderr and "Traceback" not in done.stderr, done.stderr


@pytest.mark.parametrize(
    ("pyproject", "fragment"),
    [
        (b"[tool]\nkernels = 5\n", "has no [tool.kernels.dependencies] table"),
        (b"x = " + b"[" * 50_000 + b"]" * 50_000, "nested too deeply"),
        (b"[tool.kernels.dependencies]\n\"a/b\" = \xfe\n", "pyproject.toml:2:9: is not UTF-8 text"),
    ],
)
def test_hostile_pyproject_gives_one_error(tmp_path: Path, pyproject: bytes, fragment: str) -> None:
    (tmp_path / "pyproject.toml").write_bytes(pyproject)
    done = run("lock", str(tmp_path))
    assert done.returncode == 3 and "Traceback" not in done.stderr and fragment in done.stderr, done.stderr
    assert not (tmp_path / "kernels.lock").exists()


@pytest.fixture
def project(hub_server, tmp_path: Path) -> Path:
    build = tmp_path / "v1" / "build"
    write_variant(build, "torch-cpu", version=1)
    publish(hub_server, "acme/relu-lock", build, version=1)
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "pyproject.toml").write_text('[tool.kernels.dependencies]\n"acme/relu-lock" = 1\n')
    return proj


def test_a_lock_write_that_fails_leaves_the_old_lock(project: Path, hub_server) -> None:
    old = json.dumps([entry(**{"repo-id": "acme/relu-lock", "version": 1})], indent=2)
    (project / "kernels.lock").write_text(old)
    # A write that dies half-way: with a 40-byte file-size limit (and SIGXFSZ ignored) the
    # write fails with EFBIG after 40 bytes, so only the temporary file can be short.
    script = textwrap.dedent(
        f"""
        import resource, signal, sys
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (40, 40))
        from kernel_builder.cli import main
        main(["lock", {str(project)!r}])
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, env=os.environ)
    assert done.returncode == 7 and "Traceback" not in done.stderr, done.stderr
    assert "cannot write" in done.stderr and "the previous lock file is unchanged" in done.stderr
    assert (project / "kernels.lock").read_text() == old  # untouched, still valid
    assert sorted(p.name for p in project.iterdir()) == ["kernels.lock", "pyproject.toml"]  # no temporary left
    ok = run("lock", str(project))
    assert ok.returncode == 0, ok.stderr
    assert read_lockfile(project / "kernels.lock")[0].commit == hub_server.branches("acme/relu-lock")["v1"]


def test_a_symlinked_lock_is_written_through(project: Path, tmp_path: Path) -> None:
    shared = tmp_path / "shared.lock"
    shared.write_text("[]")
    (project / "kernels.lock").symlink_to(shared)
    assert run("lock", str(project)).returncode == 0
    assert (project / "kernels.lock").is_symlink() and "acme/relu-lock" in shared.read_text()


OFFLINE = textwrap.dedent(
    """
    import sys
    from kernel_builder import get_kernel
    from kernel_builder.variants.system import detect_system
    m = get_kernel(sys.argv[1], revision=sys.argv[2], system=detect_system(backend="cpu"))
    print(m.VERSION)
    """
)


def test_a_slash_revision_loads_offline_after_a_download(hub_server, tmp_path: Path) -> None:
    build = tmp_path / "build"
    write_variant(build, "torch-cpu", version=3)
    commit = publish(hub_server, "acme/slash", build, version=3)
    hub_server.create_branch("acme/slash", "feature/x", start=commit)
    online = subprocess.run([sys.executable, "-c", OFFLINE, "acme/slash", "feature/x"], capture_output=True, text=True, timeout=120)
    assert online.returncode == 0 and online.stdout.strip() == "3", online.stderr
    hub_server.stop()
    offline = subprocess.run(
        [sys.executable, "-c", OFFLINE, "acme/slash", "feature/x"],
        capture_output=True, text=True, timeout=120, env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    assert offline.returncode == 0 and offline.stdout.strip() == "3", offline.stderr
