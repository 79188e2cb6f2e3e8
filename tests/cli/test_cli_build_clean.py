"""`build --clean` belongs to `--local`: without it the command says so before anything runs,
and `--help` documents it."""

from __future__ import annotations

import subprocess
import sys

from buildtest_helpers import EXAMPLES


def _kb(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kernel_builder", *args], capture_output=True, text=True, timeout=120)


def test_clean_without_local_is_a_usage_error() -> None:
    done = _kb("build", str(EXAMPLES / "relu"), "--clean")
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert "--clean applies to --local builds only" in done.stderr


def test_help_documents_clean() -> None:
    done = _kb("build", "--help")
    assert done.returncode == 0
    text = " ".join(done.stdout.split())
    assert "--clean With --local: start each variant from an empty build directory" in text
    assert "--local --clean" in text
