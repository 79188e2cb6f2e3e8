"""``kernel-builder downloads ls``: the downloaded kernels in the cache, as PyPI ``kernels cache
ls`` (0.19.1) lists them, on a cache filled for real from the local Hub server by both loaders."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hub_fixture import publish
from loader_trees import write_variant

REPO = "acme/cached-relu"
OTHER = "acme/by-revision"

LOAD = """
import sys
which, repo, how = sys.argv[1:4]
k = __import__("kernels" if which == "kernels" else "kernel_builder")
if how.startswith("v"):
    k.get_kernel(repo, version=int(how[1:]), backend="cpu")
else:
    k.get_kernel(repo, revision=how, backend="cpu")
"""


def _env(cache: Path) -> dict[str, str]:
    env = {**os.environ, "KERNELS_CACHE": str(cache)}
    env.pop("PYTHONPATH", None)
    return env


def _run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(args, capture_output=True, text=True, timeout=300, env=env, check=False)
    assert done.returncode == 0, done.stderr
    return done


@pytest.fixture
def filled(hub_server, tmp_path: Path) -> Path:
    """v1 loaded by our loader, v2 by kernels 0.19.1 (torch-cpu, then torch-universal too),
    and another kernel loaded only by branch name, all into one cache."""
    for version in (1, 2):
        build = tmp_path / f"v{version}" / "build"
        write_variant(build, "torch-cpu", name="cached-relu", version=version)
        write_variant(build, "torch-cuda", name="cached-relu", version=version, backend="cuda")
        publish(hub_server, REPO, build, version=version)
    build = tmp_path / "other" / "build"
    write_variant(build, "torch-cpu", name="by-revision")
    publish(hub_server, OTHER, build, version=1)
    cache = tmp_path / "cache"
    env = _env(cache)
    _run([sys.executable, "-c", LOAD, "ours", REPO, "v1"], env)
    _run([sys.executable, "-c", LOAD, "kernels", REPO, "v2"], env)
    _run([sys.executable, "-c", LOAD, "ours", OTHER, "main"], env)
    return cache


def _ours(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return _run([sys.executable, "-m", "kernel_builder", "downloads", "ls", *args], env)


def _theirs(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return _run([str(Path(sys.executable).parent / "kernels"), "cache", "ls", *args], env)


@pytest.mark.timeout(600)
def test_json_and_table_are_those_of_kernels_cache_ls(filled: Path) -> None:
    env = {**_env(filled), "COLUMNS": "200"}
    ours, theirs = _ours("--json", env=env), _theirs("--json", env=env)
    data = json.loads(ours.stdout)
    assert data == json.loads(theirs.stdout)
    assert data["cache_dir"] == str(filled.resolve())
    assert [r["repo_id"] for r in data["repos"]] == [REPO]  # the kernel loaded by branch name has no vN ref
    versions = data["repos"][0]["versions"]
    assert [(v["version"], v["variants"]) for v in versions] == [("v1", ["torch-cpu"]), ("v2", ["torch-cpu"])]
    assert all(v["size_on_disk"] > 0 for v in versions)
    text_ours, text_theirs = _ours(env=env), _theirs(env=env)
    assert text_ours.stdout == text_theirs.stdout
    lines = text_ours.stdout.splitlines()
    assert lines[0].split() == ["ID", "SIZE", "LAST_ACCESSED", "LAST_MODIFIED", "VERSION", "VARIANTS"]
    assert lines[2].startswith(f"kernel/{REPO} ") and lines[2].split()[-2:] == ["v1", "torch-cpu"]
    # the loaders' bookkeeping directories in the cache are no inconsistency for us (0.19.1 counts them)
    assert (filled / ".kernel-builder").is_dir() and (filled / ".verified-kernels").is_dir()
    assert "inconsistencies" not in text_ours.stderr and "Found 2 cache inconsistencies" in text_theirs.stderr


@pytest.mark.timeout(300)
def test_empty_missing_and_inconsistent_caches(tmp_path: Path) -> None:
    env = _env(tmp_path / "nowhere")
    for args in ((), ("--cache-dir", str(tmp_path / "nowhere"))):
        assert _ours(*args, env=env).stdout == f"No cached kernel versions found in {tmp_path / 'nowhere'}.\n"
    assert json.loads(_ours("--json", env=env).stdout) == {"cache_dir": str(tmp_path / "nowhere"), "repos": []}
    broken = tmp_path / "broken"
    (broken / "kernels--acme--x").mkdir(parents=True)  # no snapshots/: huggingface_hub's scan skips it
    (broken / "not-a-repo").mkdir()
    env = _env(broken)
    done = _ours(env=env)
    assert "Warning: Found 2 cache inconsistencies. Re-run with `--show-warnings` to display them." in done.stderr
    shown = _ours("--show-warnings", env=env).stderr
    assert f"Warning: Snapshots dir doesn't exist in cached repo: {broken / 'kernels--acme--x' / 'snapshots'}. Repo ignored." in shown
    assert shown == _theirs("--show-warnings", env=env).stderr


def test_help_says_which_cache_it_is() -> None:
    done = subprocess.run([sys.executable, "-m", "kernel_builder", "downloads", "--help"], capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0
    assert "PyPI `kernels cache`" in done.stdout and "Nix binary cache" in done.stdout
