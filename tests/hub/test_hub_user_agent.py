"""The user agent as the Hub receives it: the server records the ``User-Agent`` header of
every request, so these tests check what went over the wire, not what a client object
would build."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import hubserver
from hub_trees import make_kernel
from kernel_builder import __version__, get_kernel
from kernel_builder.variants.system import detect_system

REPO = "org/hub-relu"


@pytest.fixture
def agents(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str, str]]:
    """(method, path, User-Agent) of every request the test server receives."""
    seen: list[tuple[str, str, str]] = []
    lock = threading.Lock()
    handle = hubserver._Handler._handle

    def recording(self: hubserver._Handler) -> None:
        with lock:
            seen.append((self.command, self.path, self.headers.get("User-Agent", "")))
        handle(self)

    for method in ("do_GET", "do_POST", "do_PUT", "do_DELETE", "do_HEAD"):
        monkeypatch.setattr(hubserver._Handler, method, recording)
    return seen


def _ours(seen: list[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
    """The requests about repositories; huggingface_hub also asks /api/agent-harnesses for
    itself, with httpx's plain agent (not a kernel-builder request)."""
    return [r for r in seen if not r[1].startswith("/api/agent-harnesses")]


def test_an_upload_sends_kernel_builders_user_agent(hub_server, agents, tmp_path: Path) -> None:
    root = make_kernel(tmp_path / "relu")
    done = subprocess.run([sys.executable, "-m", "kernel_builder", "upload", str(root)], capture_output=True, text=True,
                          env={**os.environ, "HF_TOKEN": "hf_agent_test"}, timeout=120)
    assert done.returncode == 0, done.stderr
    assert any(method == "POST" and "/commit/" in path for method, path, _ in agents)  # the upload went through here
    assert all(agent.startswith(f"kernel-builder/{__version__};") for _, _, agent in _ours(agents)), agents


@pytest.mark.parametrize("agent", ["my-app/1.2", {"my-app": "1.2"}])
def test_get_kernels_user_agent_reaches_the_hub_on_every_request(hub_server, agents, tmp_path: Path, agent) -> None:
    root = make_kernel(tmp_path / "relu")
    hub_server.trust_org("org")
    done = subprocess.run([sys.executable, "-m", "kernel_builder", "upload", str(root)], capture_output=True, text=True,
                          env={**os.environ, "HF_TOKEN": "hf_agent_test"}, timeout=120)
    assert done.returncode == 0, done.stderr
    agents.clear()
    module = get_kernel(REPO, version=1, system=detect_system(backend="cpu"), user_agent=agent)
    assert module.relu is not None
    downloads = [path for method, path, _ in agents if method == "GET" and "/resolve/" in path]
    assert downloads  # the variant's files came from the server
    for method, path, received in _ours(agents):
        assert received.startswith(f"kernel-builder/{__version__};"), (method, path, received)
        assert "my-app/1.2" in received, (method, path, received)
