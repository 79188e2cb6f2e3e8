"""Issue 45, finding 17: an empty ``--cuda-capabilities`` is an error, not "no narrowing".

``--cuda-capabilities ""`` and ``","`` built every capability without a word. The value is
checked once (``backends.cuda_archs.checked_capabilities``) for ``build`` (Nix and ``--local``)
and ``list-variants``; each must exit 2 (a usage error) naming the option, before anything
is built.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kernel_builder.backends.cuda_archs import checked_capabilities

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.mark.parametrize(
    ("text", "fragment"),
    [("", "'' is empty"), ("  ", "'  ' is empty"), (",", "',' has only commas"), (" , ,", "has only commas"),
     ("9.0,,10.0", "has an empty entry (number 2)"), ("9.0,", "has an empty entry (number 2)")],
)
def test_checked_capabilities_refuses_empty_values_and_entries(text: str, fragment: str) -> None:
    with pytest.raises(ValueError, match="leave the option out") as caught:
        checked_capabilities(text)
    assert fragment in str(caught.value)


def test_checked_capabilities_accepts_lists() -> None:
    assert checked_capabilities(None) is None
    assert checked_capabilities("9.0,10.0") == ("9.0", "10.0")
    assert checked_capabilities("9.0 10.0a") == ("9.0", "10.0a")
    assert checked_capabilities(" 9.0 , 10.0 ") == ("9.0", "10.0")


@pytest.mark.parametrize("command", [["build"], ["build", "--local"], ["list-variants"]])
@pytest.mark.parametrize("value", ["", ","])
def test_the_cli_refuses_an_empty_narrowing_before_building(tmp_path: Path, command: list[str], value: str) -> None:
    kernel = tmp_path / "relu"
    shutil.copytree(EXAMPLES / "relu", kernel, ignore=shutil.ignore_patterns("build", "__pycache__", "result*"))
    done = subprocess.run(
        [sys.executable, "-m", "kernel_builder", *command, "--cuda-capabilities", value, str(kernel)],
        capture_output=True, text=True, timeout=120, env={"KERNEL_BUILDER_STATE_DIR": str(tmp_path / "state"), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 2, done.stderr
    assert "--cuda-capabilities" in done.stderr and "leave the option out" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    assert not (kernel / "build").exists()
