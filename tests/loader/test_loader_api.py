"""The public loader API: exact signatures from issue 7, and the runnable example in docs/loading.md."""

from __future__ import annotations

import inspect
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import kernel_builder

DOC = Path(__file__).resolve().parents[2] / "docs" / "loading.md"
CLI_DOC = DOC.with_name("cli-loader.md")

P = inspect.Parameter
POS, KW = P.POSITIONAL_OR_KEYWORD, P.KEYWORD_ONLY

# name -> the listed leading parameters as (name, kind, default); further keyword-only extras are allowed.
LISTED = {
    "get_kernel": [
        ("repo_id", POS, P.empty),
        ("revision", KW, None),
        ("version", KW, None),
        ("backend", KW, None),
        ("user_agent", KW, None),
        ("trust_remote_code", KW, False),
    ],
    "get_local_kernel": [("path", POS, P.empty), ("backend", KW, None)],
    "load_kernel": [("repo_id", POS, P.empty), ("lockfile", KW, None), ("backend", KW, None)],
    "get_loaded_kernels": [],
}


@pytest.mark.parametrize("name", sorted(LISTED))
def test_signature_as_listed(name: str) -> None:
    params = list(inspect.signature(getattr(kernel_builder, name)).parameters.values())
    listed = LISTED[name]
    assert [(p.name, p.kind, p.default) for p in params[: len(listed)]] == listed
    assert all(p.kind == KW for p in params[len(listed) :]), "extras must be keyword-only"


def test_positional_revision_refused() -> None:
    with pytest.raises(TypeError):
        kernel_builder.get_kernel("acme/x", "main")  # type: ignore[misc]
    with pytest.raises(TypeError):
        kernel_builder.get_local_kernel("/tmp", "cpu")  # type: ignore[misc]


@pytest.mark.parametrize(
    "name",
    ["get_kernel", "get_local_kernel", "has_kernel", "install_kernel", "load_kernel", "get_loaded_kernels", "get_kernel_variants"],
)
def test_importable_from_package(name: str) -> None:
    assert name in kernel_builder.__all__ and callable(getattr(kernel_builder, name))


def _console_blocks(text: str) -> list[str]:
    return re.findall(r"```console\n(.*?)```", text, flags=re.S)


def test_docs_runnable_example(tmp_path: Path) -> None:
    """Every ``$`` command of the 'no Hub needed' example runs and prints what the page shows,
    and so does cli-loader.md's ``info`` on the tree it made."""
    section = DOC.read_text().split("## A runnable example", 1)[1]
    info_block = _console_blocks(CLI_DOC.read_text())[0]
    assert info_block.startswith("$ kernel-builder info /tmp/demo")
    info_block = re.sub(r"^\$ kernel-builder (\S+ \S+)\s+#.*$", r"$ .venv/bin/kernel-builder \1", info_block, flags=re.M)
    block = _console_blocks(section)[0] + info_block
    bindir = str(Path(sys.executable).parent)
    demo = str(tmp_path / "demo")
    env = {**os.environ, "KERNELS_CACHE": str(tmp_path / "cache")}
    steps: list[tuple[str, list[str]]] = []
    for line in block.splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        else:
            steps[-1][1].append(line)
    assert len(steps) >= 6
    for command, expected in steps:
        command = command.replace("/tmp/demo", demo).replace(".venv/bin/", bindir + "/")
        out = subprocess.run(["bash", "-c", command], capture_output=True, text=True, env=env, timeout=120)
        assert out.returncode == 0, (command, out.stderr)
        shown = [e.replace("/tmp/demo", demo) for e in expected]
        # a console shows both streams; results go to stdout, progress to stderr
        assert out.stdout.splitlines() + out.stderr.splitlines() == shown, command
