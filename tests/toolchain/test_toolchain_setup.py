"""``toolchain setup`` environments: one builder at a time, and never half an environment.

A small spec (ninja only) keeps pip quick; the code path is the one torch environments take.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(600)

SCRIPT = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from kernel_builder.toolchain.host.setup import EnvSpec, create_env

    class Small(EnvSpec):
        def requirements(self):
            return ["ninja"]

    print(create_env(Small("small", "0", ()), state=Path(sys.argv[1])))
    """
)


def create(state: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", SCRIPT, str(state)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True,  # its own process group, so a kill takes pip down with it
    )


def works(env: Path) -> None:
    ninja = subprocess.run([str(env / "bin" / "ninja"), "--version"], capture_output=True, text=True, timeout=60)
    assert ninja.returncode == 0, ninja.stderr  # the entry script's shebang points at the final path
    imported = subprocess.run([str(env / "bin" / "python"), "-c", "import ninja"], capture_output=True, text=True, timeout=60)
    assert imported.returncode == 0, imported.stderr


def _pip_in(group: int) -> bool:
    """Whether a pip process of process group ``group`` is running: the setup is mid-install."""
    for proc in Path("/proc").iterdir():
        try:
            fields = (proc / "stat").read_text().rsplit(")", 1)[1].split()
            if int(fields[2]) == group and b"pip" in (proc / "cmdline").read_bytes():
                return True
        except (OSError, ValueError, IndexError):
            continue
    return False


def leftovers(state: Path) -> list[str]:
    return sorted(p.name for p in (state / "envs").iterdir() if p.name.endswith(".tmp"))


def test_two_concurrent_setups_give_one_working_environment(tmp_path: Path) -> None:
    runs = [create(tmp_path), create(tmp_path)]
    most = 0  # environments being built at one time, seen from outside
    while any(run.poll() is None for run in runs):
        if (tmp_path / "envs").is_dir():
            most = max(most, len([p for p in (tmp_path / "envs").glob(".small.*.tmp")]))
        time.sleep(0.02)
    assert most == 1  # built aside, and never two at once
    outputs = [run.communicate(timeout=500) for run in runs]
    for run, (out, err) in zip(runs, outputs):
        assert run.returncode == 0, err
        assert out.strip() == str(tmp_path / "envs" / "small" / "bin" / "python")
    works(tmp_path / "envs" / "small")
    assert leftovers(tmp_path) == []
    assert "tmp" not in (tmp_path / "envs" / "small" / "bin" / "ninja").read_text(errors="replace").splitlines()[0]


def test_a_killed_setup_leaves_no_environment_and_a_rerun_builds_it(tmp_path: Path) -> None:
    run = create(tmp_path)
    deadline = time.monotonic() + 300  # a bound for failing, not a window: the kill waits on pip
    while not (list((tmp_path / "envs").glob(".small.*.tmp")) if (tmp_path / "envs").is_dir() else []) or not _pip_in(run.pid):
        assert time.monotonic() < deadline and run.poll() is None, run.communicate()
        time.sleep(0.02)
    os.killpg(run.pid, signal.SIGKILL)  # the run and its pip, like a killed terminal session
    run.communicate()
    assert not (tmp_path / "envs" / "small").exists()  # nothing half-built where builds look
    rerun = create(tmp_path)
    out, err = rerun.communicate(timeout=500)
    assert rerun.returncode == 0, err
    works(tmp_path / "envs" / "small")
    assert leftovers(tmp_path) == []
