"""Exit codes per error class and the traceback switch (docs/cli.md, "Exit codes")."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from kernel_builder import errors


def test_each_error_class_has_its_own_exit_code() -> None:
    codes = {
        errors.KernelBuilderError: 1, errors.ConfigError: 3, errors.BuildError: 4, errors.NixError: 5,
        errors.HubError: 6, errors.LoadError: 7, errors.CheckError: 8,
    }
    assert {cls: cls.exit_code for cls in codes} == codes
    documented = (Path(__file__).resolve().parents[2] / "docs" / "cli.md").read_text()
    for cls, code in codes.items():
        assert f"| {code} |" in documented and f"`{cls.__name__}`" in documented


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
