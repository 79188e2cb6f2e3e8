"""The public loader API: keyword-only arguments, exports, and the runnable example in docs/loading.md."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import kernel_builder

DOC = Path(__file__).resolve().parents[2] / "docs" / "loading.md"
CLI_DOC = DOC.with_name("cli-loader.md")

# Signatures are compared with PyPI ``kernels`` in test_loader_parity.py.


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
