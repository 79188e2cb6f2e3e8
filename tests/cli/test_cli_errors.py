"""Exit codes per error class and the traceback switch (docs/cli.md, "Exit codes")."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from kernel_builder import errors


CODES = {
    errors.KernelBuilderError: 1, errors.ConfigError: 3, errors.BuildError: 4, errors.NixError: 5,
    errors.HubError: 6, errors.LoadError: 7, errors.CheckError: 8,
}
CLI_MD = Path(__file__).resolve().parents[2] / "docs" / "cli.md"


def test_each_error_class_has_its_own_exit_code_as_documented() -> None:
    assert {cls: cls.exit_code for cls in CODES} == CODES
    assert _documented_codes(CLI_MD.read_text()) == {cls.__name__: code for cls, code in CODES.items()}


def _documented_codes(text: str) -> dict[str, int]:
    """``{class name: code}`` from the rows of docs/cli.md's "Exit codes" table, each row
    read as a whole, so that a class shown beside another class's code is caught."""
    section = text.split("## Exit codes", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ") and not line.startswith(("| code", "|---"))]
    found: dict[str, int] = {}
    for row in rows:
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        match = re.fullmatch(r"`(\w+)`", cells[-1])
        if match:
            assert match.group(1) not in found, f"{match.group(1)} has two rows"
            found[match.group(1)] = int(cells[0])
    return found


def test_rows_with_swapped_codes_would_fail() -> None:
    """The check above reads the pairing, not just that each code and name appear."""
    text = CLI_MD.read_text()
    three = next(line for line in text.splitlines() if line.startswith("| 3 |"))
    four = next(line for line in text.splitlines() if line.startswith("| 4 |"))
    swapped = text.replace(three, "\0").replace(four, three.replace("| 3 |", "| 4 |", 1)).replace("\0", four.replace("| 4 |", "| 3 |", 1))
    assert _documented_codes(swapped)["ConfigError"] == 4 != CODES[errors.ConfigError]


def _check_config(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    (tmp_path / "build.toml").write_text("[general]\nname = 1\n")
    run_env = {k: v for k, v in os.environ.items() if k != "KERNEL_BUILDER_TRACEBACK"} | (env or {})
    return subprocess.run(
        [sys.executable, "-m", "kernel_builder", *args, "check-config", str(tmp_path)],
        capture_output=True, text=True, env=run_env, check=False,
    )


def test_a_configuration_error_exits_3_without_a_traceback(tmp_path: Path) -> None:
    done = _check_config(tmp_path)
    assert done.returncode == 3 and done.stderr.startswith("error: ") and "Traceback" not in done.stderr


@pytest.mark.parametrize(("args", "env"), [(("--traceback",), {}), ((), {"KERNEL_BUILDER_TRACEBACK": "1"})])
def test_the_traceback_switch_works_as_flag_and_environment_variable(tmp_path: Path, args: tuple[str, ...], env: dict[str, str]) -> None:
    done = _check_config(tmp_path, *args, env=env)
    assert "Traceback (most recent call last)" in done.stderr, done.stderr
    assert done.returncode != 0


def test_a_false_environment_value_keeps_tracebacks_off(tmp_path: Path) -> None:
    done = _check_config(tmp_path, env={"KERNEL_BUILDER_TRACEBACK": "0"})
    assert done.returncode == 3 and "Traceback" not in done.stderr
