"""Create the Python environments this machine can build with (``toolchain setup``).

Each environment is a venv under ``<state>/envs/<name>`` holding one torch plus cmake
(>= 3.26, for abi3 modules) and ninja. Wheels come from pip's configured indexes and
find-links (local on these machines). An existing environment with the right torch is
kept; an environment elsewhere with that torch (for example the driver's own) can be
reused instead of installing another copy.

Two runs on one machine must not build one environment at once (pip in both leaves a
mix of files, and builds then miss ``cmake``), and a killed run must not leave half an
environment where builds look. So each environment is built under a file lock in a
temporary directory beside its final place, its scripts are pointed at the final path,
and it is renamed into place; a run that waited for the lock reuses what the other built.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

import attrs
from filelock import FileLock

from kernel_builder.errors import BuildError, ConfigError
from kernel_builder.toolchain.host.discover import Environment, probe_environment
from kernel_builder.toolchain.pinned.lockrequests import torch_environments
from kernel_builder.state import state_dir

__all__ = ["EnvSpec", "default_envs", "plan", "create_env"]


@attrs.frozen
class EnvSpec:
    """One environment to set up: its directory name and what pip installs into it."""

    name: str
    torch: str  # pip requirement pin, from the toolchain lock
    serves: tuple[str, ...]  # build-set keys it is meant for

    def requirements(self) -> list[str]:
        return [f"torch=={self.torch}", "cmake>=3.26", "ninja"]


def default_envs() -> tuple[EnvSpec, ...]:
    """One environment per torch environment of the toolchain lock, with the same torch:
    ``torch2.14`` pinned to ``2.14.1`` gives ``torch214``; a pin with a local label
    (``2.13.0+cpu``) would give ``torch213-cpu`` with torch 2.13.0."""
    specs = []
    for env, pin, serves in torch_environments():
        version, _, label = pin.partition("+")
        specs.append(EnvSpec(env.replace(".", "") + (f"-{label}" if label else ""), version, serves))
    return tuple(specs)


def _matches(env: Environment | None, spec: EnvSpec) -> bool:
    return env is not None and env.torch_version.split("+")[0] == spec.torch


def _ready(python: Path, spec: EnvSpec) -> bool:
    """Whether ``python`` is a working environment with the spec's torch."""
    if not python.exists():
        return False
    try:
        return _matches(probe_environment(str(python)), spec)
    except ConfigError:  # a broken interpreter: rebuild it
        return False


def plan(
    specs: Sequence[EnvSpec], *, reuse: Sequence[str] = (), state: Path | None = None
) -> list[tuple[EnvSpec, str, str]]:
    """``(spec, action, python)`` per spec: ``keep`` an env in place, ``reuse`` one of
    ``reuse`` (its torch matches), or ``create`` a new venv."""
    state = state or state_dir()
    steps = []
    probed = {p: probe_environment(p) for p in reuse if Path(p).exists()}
    for spec in specs:
        python = state / "envs" / spec.name / "bin" / "python"
        if _ready(python, spec):
            steps.append((spec, "keep", str(python)))
            continue
        reused = next((p for p, env in probed.items() if _matches(env, spec)), None)
        if reused is not None:
            steps.append((spec, "reuse", reused))
        else:
            steps.append((spec, "create", str(python)))
    return steps


def create_env(spec: EnvSpec, *, state: Path | None = None, base_python: str | None = None) -> str:
    """Create ``<state>/envs/<name>`` and pip-install the spec; returns its python.

    Locked per environment and built in a temporary directory that is renamed into place,
    so concurrent runs never share a half-built environment (see the module docstring).
    """
    state = state or state_dir()
    envs = state / "envs"
    envs.mkdir(parents=True, exist_ok=True)
    root = envs / spec.name
    python = root / "bin" / "python"
    base = base_python or getattr(sys, "_base_executable", sys.executable)
    with FileLock(str(envs / f".{spec.name}.lock")):
        if _ready(python, spec):  # built by the run we waited for
            return str(python)
        for stale in envs.glob(f".{spec.name}.*.tmp"):  # left by a killed run; we hold the lock
            shutil.rmtree(stale, ignore_errors=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{spec.name}.", suffix=".tmp", dir=envs))
        try:
            for argv in (
                [base, "-m", "venv", "--clear", str(tmp)],
                [str(tmp / "bin" / "python"), "-m", "pip", "install", "--disable-pip-version-check", *spec.requirements()],
            ):
                done = subprocess.run(argv, capture_output=True, text=True, check=False)
                if done.returncode != 0:
                    raise BuildError(
                        f"`{' '.join(argv)}` failed (exit {done.returncode}):\n{done.stderr.strip()[-3000:]}",
                        hint="check that pip can reach a wheel for this torch version (pip config list)",
                    )
            _relocate(tmp, root)
            _swap_in(tmp, root)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    return str(python)


def _relocate(built: Path, final: Path) -> None:
    """Point a venv built at ``built`` at ``final``: script shebangs, activate scripts, pyvenv.cfg."""
    old, new = str(built).encode(), str(final).encode()
    for path in [*(built / "bin").iterdir(), built / "pyvenv.cfg"]:
        if path.is_symlink() or not path.is_file():
            continue
        data = path.read_bytes()
        if old in data and b"\0" not in data[:4096]:  # text files only: never patch a binary
            mode = path.stat().st_mode
            path.write_bytes(data.replace(old, new))
            os.chmod(path, mode)


def _swap_in(built: Path, final: Path) -> None:
    """Rename ``built`` to ``final``; an old environment there is moved aside and removed."""
    old = None
    if final.exists() or final.is_symlink():
        old = final.with_name(f".{final.name}.old.tmp")
        shutil.rmtree(old, ignore_errors=True)
        os.rename(final, old)
    os.rename(built, final)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
