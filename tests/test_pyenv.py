"""The one toolchain-Python probe (``probe_python``) behind ``build``'s ``probe_toolchain``
and ``toolchain discover``'s ``probe_environment``: cached per interpreter, both views agree."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from kernel_builder.errors import BuildError, ConfigError
from kernel_builder.toolchain.host.discover import probe_environment
from kernel_builder.pyenv import PythonProbeError, probe_python, probe_toolchain


def _script(path: Path, body: str) -> str:
    """A stand-in interpreter: a shell script (replaced atomically, so it gets a new inode)."""
    tmp = path.with_suffix(".new")
    tmp.write_text(f"#!/bin/sh\n{body}\n")
    tmp.chmod(0o755)
    os.replace(tmp, path)
    return str(path)


def test_both_views_come_from_one_cached_probe() -> None:
    facts = probe_python(sys.executable)
    assert probe_python(sys.executable) is facts
    assert facts.torch is not None and facts.python_version[:2] == sys.version_info[:2]
    env = probe_environment(sys.executable)
    toolchain = probe_toolchain(sys.executable)
    assert env is not None
    assert env.torch_version.split("+")[0] == toolchain.torch_version
    assert env.torch_cuda == (toolchain.cuda or "")
    assert env.python_version.startswith("%d.%d." % toolchain.python_version)


def test_a_python_without_torch(tmp_path: Path) -> None:
    python = _script(tmp_path / "python", f'exec "{sys.executable}" -S "$@"')  # -S: no site-packages, no torch
    assert probe_python(python).torch is None
    assert probe_environment(python) is None
    with pytest.raises(BuildError, match="has no usable torch:\nNo module named 'torch'"):
        probe_toolchain(python)


def test_an_interpreter_replaced_in_place_is_probed_again(tmp_path: Path) -> None:
    python = _script(tmp_path / "python", f'exec "{sys.executable}" -S "$@"')
    assert probe_python(python).torch is None
    _script(tmp_path / "python", f'exec "{sys.executable}" "$@"')
    assert probe_python(python).torch is not None


def test_failures_keep_each_callers_error(tmp_path: Path) -> None:
    broken = _script(tmp_path / "python", 'echo "boom" >&2; exit 3')
    with pytest.raises(PythonProbeError) as caught:
        probe_python(broken)
    assert caught.value.started and caught.value.detail == "boom"
    with pytest.raises(ConfigError, match="failed to start:\nboom"):
        probe_environment(broken)
    with pytest.raises(BuildError, match="has no usable torch:\nboom"):
        probe_toolchain(broken)
    missing = str(tmp_path / "nothing")
    with pytest.raises(ConfigError, match="cannot run toolchain Python"):
        probe_environment(missing)
    with pytest.raises(BuildError, match="cannot run the toolchain Python"):
        probe_toolchain(missing)
