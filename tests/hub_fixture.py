"""The ``hub_server`` pytest fixture: a fresh local Hub per test, and ``publish`` to seed it
with a built kernel tree.

The server listens on 127.0.0.1 on a random port and is stopped at teardown. The fixture
also points this process's environment (and so every subprocess a test starts) at it:
``HF_ENDPOINT`` is the server and ``HF_HOME`` a private temporary directory, so no test
reads a real token or a real cache.

huggingface_hub reads ``HF_ENDPOINT`` once, at import, so in-process code must pass
``endpoint=hub_server.endpoint`` explicitly (``HfApi(endpoint=...)``); subprocesses pick up
the environment. ``HF_HUB_DISABLE_XET`` is not needed by default: the server answers
"regular" to every preupload, so clients never start an LFS or xet transfer. A test that
sets ``hub_server.lfs_threshold`` must disable xet in the client (in-process:
``monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_DISABLE_XET", True)``;
subprocess: ``HF_HUB_DISABLE_XET=1``). Never set ``HF_HUB_DISABLE_TELEMETRY`` (it breaks
``kernels``' Hub calls, see oracles.md §5).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from hubserver import HubServer

__all__ = ["hub_server", "publish", "tree_files"]


@pytest.fixture
def hub_server(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[HubServer]:
    """A running ``HubServer``; ``.endpoint``, ``.requests``, ``fail_next(...)``, seeding helpers."""
    home = tmp_path_factory.mktemp("hf_home")
    server = HubServer().start()
    monkeypatch.setenv("HF_ENDPOINT", server.endpoint)
    monkeypatch.setenv("HF_HOME", str(home))
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("KERNELS_CACHE", raising=False)
    try:
        yield server
    finally:
        server.stop()


def tree_files(root: Path, prefix: str = "") -> dict[str, bytes]:
    """Every file under ``root`` as ``{prefix + relpath: bytes}``."""
    return {prefix + p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def publish(hub: HubServer, repo_id: str, build_dir: Path, *, version: int, trusted: bool = True) -> str:
    """Commit ``build_dir`` as ``build/`` on ``main`` (replacing the old ``build/``) and point
    branch ``v<version>`` at it; trust the org unless ``trusted`` is false. Returns the commit."""
    if not hub.has_repo(repo_id):
        hub.create_repo(repo_id)
    old = [p for p in hub.files(repo_id, "main") if p.startswith("build/")]
    commit = hub.commit_files(repo_id, tree_files(build_dir, "build/"), deletes=tuple(old), title=f"v{version}")
    branch = f"v{version}"
    if branch in hub.branches(repo_id):
        with hub.state.lock:
            hub.state.repo("kernel", repo_id).branches[branch] = commit
    else:
        hub.create_branch(repo_id, branch, start=commit)
    if trusted:
        hub.trust_org(repo_id.split("/")[0])
    return commit
